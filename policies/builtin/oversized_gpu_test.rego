package trainlint.rules.oversized_gpu

import rego.v1

_job := {
	"resources": {"gpu": {"model": "H100-80GB"}, "world_size": 8},
	"estimates": {
		"memory": {"utilization": 0.23},
		"run": {"gpu_hours": 310, "usd": 1240},
		"alternatives": [
			{"gpu": "A100-40GB", "gpus": 8, "memory_utilization": 0.6, "usd": 900, "gpu_hours": 300},
			{"gpu": "L40S", "gpus": 4, "memory_utilization": 0.71, "usd": 450, "gpu_hours": 200},
			{"gpu": "H200", "gpus": 8, "memory_utilization": 0.2, "usd": 2000, "gpu_hours": 250},
		],
		"sources": {},
	},
}

test_names_the_cheapest_alternative if {
	result := findings with input as _job
	result == {{
		"message": "8× H100-80GB uses ~23% of GPU memory (estimated); 4× L40S fits (~71% used) for ~$450 per run instead of ~$1,240",
		"pointer": "/resources/gpu/model",
		"waste": {"gpu_hours": 110, "usd": 790},
	}}
}

test_measured_utilization_says_so if {
	job := object.union(_job, {"estimates": {"sources": {"memory.utilization": "measured"}}})
	some f in findings with input as job
	contains(f.message, "of GPU memory (measured)")
}

test_no_gpu_hours_saved_when_cheaper_runs_longer if {
	job := object.union(_job, {"estimates": {"alternatives": [
		{"gpu": "L4", "gpus": 8, "memory_utilization": 0.9, "usd": 600, "gpu_hours": 900},
	]}})
	result := findings with input as job
	result == {{
		"message": "8× H100-80GB uses ~23% of GPU memory (estimated); 8× L4 fits (~90% used) for ~$600 per run instead of ~$1,240",
		"pointer": "/resources/gpu/model",
		"waste": {"gpu_hours": 0, "usd": 640},
	}}
}

test_unknown_gpu_and_hours_still_fires_without_waste if {
	job := {"estimates": {
		"memory": {"utilization": 0.1},
		"run": {"usd": 100, "gpu_hours": null},
		"alternatives": [{"gpu": "T4", "gpus": 1, "memory_utilization": 0.4, "usd": 20, "gpu_hours": null}],
	}}
	result := findings with input as job
	result == {{
		"message": "the GPU uses ~10% of GPU memory (estimated); 1× T4 fits (~40% used) for ~$20 per run instead of ~$100",
		"pointer": "/resources/gpu/model",
	}}
}

test_quiet_when_memory_is_well_used if {
	job := object.union(_job, {"estimates": {"memory": {"utilization": 0.8}}})
	count(findings) == 0 with input as job
}

test_quiet_when_nothing_is_cheaper if {
	job := object.union(_job, {"estimates": {"alternatives": [
		{"gpu": "H200", "gpus": 8, "memory_utilization": 0.2, "usd": 2000, "gpu_hours": 250},
		{"gpu": "B200", "gpus": 8, "memory_utilization": 0.1, "usd": null, "gpu_hours": null},
	]}})
	count(findings) == 0 with input as job
}

test_quiet_when_utilization_unknown if {
	job := object.union(_job, {"estimates": {"memory": {"utilization": null}}})
	count(findings) == 0 with input as job
}

test_quiet_when_run_cost_unknown if {
	job := object.union(_job, {"estimates": {"run": {"usd": null}}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _job with data.trainlint.params.oversized_gpu.min_utilization as 0.2
}

test_quiet_when_the_saving_is_below_min_savings if {
	job := {"estimates": {
		"memory": {"utilization": 0.1},
		"run": {"usd": 1.2},
		"alternatives": [{"gpu": "T4", "gpus": 1, "memory_utilization": 0.4, "usd": 0.7}],
	}}
	count(findings) == 0 with input as job
	count(findings) == 1 with input as job with data.trainlint.params.oversized_gpu.min_savings_usd as 0.5
}

test_incomplete_alternatives_are_ignored if {
	job := object.union(_job, {"estimates": {"alternatives": [{"gpu": "L4", "gpus": null, "usd": 10}]}})
	count(findings) == 0 with input as job
}

test_same_size_faster_hardware_is_not_a_smaller_gpu if {
	job := object.union(_job, {"estimates": {
		"memory": {"utilization": 0.23, "gpu_bytes": 85899345920},
		"alternatives": [{"gpu": "H100-PCIe", "gpus": 8, "memory_bytes": 85899345920, "memory_utilization": 0.23, "usd": 900, "gpu_hours": 200}],
	}})
	count(findings) == 0 with input as job
}

test_smaller_gpu_with_known_memory_fires if {
	job := object.union(_job, {"estimates": {
		"memory": {"utilization": 0.23, "gpu_bytes": 85899345920},
		"alternatives": [{"gpu": "A100-40GB", "gpus": 8, "memory_bytes": 42949672960, "memory_utilization": 0.46, "usd": 900, "gpu_hours": 300}],
	}})
	count(findings) == 1 with input as job
}

# Unstated GPUs per node: on one GPU the job would use 80% of its memory.
test_quiet_when_the_highest_plausible_utilization_is_not_low if {
	job := object.union(_job, {"estimates": {"ranges": {"/memory/utilization": [0.1, 0.8]}}})
	count(findings) == 0 with input as job
}

test_fires_when_even_the_highest_utilization_is_low_and_gives_the_range if {
	job := object.union(_job, {"estimates": {"ranges": {"/memory/utilization": [0.15, 0.3]}}})
	some f in findings with input as job
	contains(f.message, "uses ~15–30% of GPU memory")
}
