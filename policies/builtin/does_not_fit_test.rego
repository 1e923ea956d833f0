package trainlint.rules.does_not_fit

import rego.v1

_job := {
	"resources": {"world_size": 1},
	"estimates": {
		"gpu": "A100-80GB",
		"gpus": 1,
		"memory": {
			"weights_bytes": 13.5e9,
			"gradients_bytes": 13.5e9,
			"optimizer_bytes": 81e9,
			"activations_bytes": 9e9,
			"overhead_bytes": 1073741824,
			"total_bytes": 118e9,
			"gpu_bytes": 85899345920,
			"utilization": 1.374,
		},
		"memory_fixes": [{"change": "micro_batch", "total_bytes": 110e9, "utilization": 1.28, "micro_batch_size": 1}],
		"alternatives": [],
		"sources": {"memory.total_bytes": "default"},
	},
}

test_states_breakdown_gpu_and_fix if {
	result := findings with input as _job
	result == {{
		"message": "~110 GB per GPU (estimated: weights 13 GB, gradients 13 GB, optimizer 75 GB, activations 8.4 GB, overhead 1.0 GB) is ~137% of the 80 GB of each A100-80GB: out of memory before the first step; micro-batch 1 (accumulating more gradients keeps the global batch) brings it to ~102 GB (~128%); the GPU-hours a failed launch burns (queue, startup) are unknown",
		"pointer": "/training/micro_batch_size",
	}}
}

test_zero3_fix_and_an_alternative_point_at_the_gpu if {
	fixes := [{"change": "zero3", "total_bytes": 30e9, "utilization": 0.35}]
	alts := [{"gpu": "H200", "gpus": 1, "memory_utilization": 0.78, "usd": 412.5}]
	job := object.union(_job, {"estimates": {"memory_fixes": fixes, "alternatives": alts}})
	some f in findings with input as job
	f.pointer == "/resources/gpu/model"
	contains(f.message, "; ZeRO-3 / FSDP full sharding brings it to ~28 GB (~35%); or 1× H200 fits (~78%) for ~$413 per run;")
	not f.waste
}

test_generic_fix_without_estimates_of_fixes if {
	job := object.union(_job, {"estimates": {"memory_fixes": []}})
	some f in findings with input as job
	contains(f.message, "; shard model states (ZeRO-3 / FSDP), recompute activations, lower the micro-batch or offload the optimizer;")
}

test_quiet_when_it_fits if {
	job := object.union(_job, {"estimates": {"memory": {"utilization": 0.93}}})
	count(findings) == 0 with input as job
}

test_quiet_when_unknown if {
	job := object.union(_job, {"estimates": {"memory": {"utilization": null}}})
	count(findings) == 0 with input as job
	count(findings) == 0 with input as {}
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _job with data.trainlint.params.does_not_fit.max_utilization as 1.5
}

test_measured_oom_fires if {
	fits := object.union(_job, {"estimates": {"gpus": 8, "memory": {"utilization": 0.6}}})
	job := object.union(fits, {"measurements": {"fresh": true, "world_sizes": {"8": {"oom": true}}}})
	some f in findings with input as job
	startswith(f.message, "out of memory in the probe at 8 GPUs (measured); estimated ~110 GB per GPU")
}

test_stale_or_other_size_oom_is_quiet if {
	fits := object.union(_job, {"estimates": {"gpus": 8, "memory": {"utilization": 0.6}}})
	stale := object.union(fits, {"measurements": {"fresh": false, "world_sizes": {"8": {"oom": true}}}})
	count(findings) == 0 with input as stale
	other := object.union(fits, {"measurements": {"fresh": true, "world_sizes": {"1": {"oom": true}}}})
	count(findings) == 0 with input as other
}

# Unstated GPUs per node: sharded over 8 GPUs the job would fit.
test_quiet_when_the_lowest_plausible_utilization_fits if {
	job := object.union(_job, {"estimates": {"ranges": {"/memory/utilization": [0.4, 1.374]}}})
	count(findings) == 0 with input as job
}

test_fires_when_even_the_lowest_utilization_does_not_fit_and_gives_the_range if {
	job := object.union(_job, {"estimates": {"ranges": {"/memory/utilization": [1.1, 2.2]}}})
	some f in findings with input as job
	contains(f.message, "is ~110–220% of the 80 GB")
}
