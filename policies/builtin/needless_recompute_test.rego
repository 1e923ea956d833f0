package trainlint.rules.needless_recompute

import rego.v1

_t_job := {
	"training": {"activation_checkpointing": true},
	"estimates": {
		"gpu": "H100-SXM",
		"memory": {
			"total_bytes": 22e9,
			"gpu_bytes": 85899345920,
			"utilization": 0.256,
			"total_without_recompute_bytes": 38e9,
			"utilization_without_recompute": 0.442,
		},
		"recompute": {"mode": "full", "overhead_fraction": 0.25, "overhead_gpu_hours": 120, "overhead_usd": 420},
		"sources": {"memory.utilization_without_recompute": "default"},
	},
}

test_states_memory_share_and_waste if {
	result := findings with input as _t_job
	result == {{
		"message": "full activation recomputation is on, but the job fits without it: ~20 GB per GPU becomes ~35 GB (~44% of the 80 GB of each H100-SXM) without recompute (estimated); the second forward pass is ~25% of each step; turn activation checkpointing off or spend the memory on a larger micro-batch",
		"pointer": "/training/activation_checkpointing",
		"waste": {"gpu_hours": 120, "usd": 420},
	}}
}

test_points_at_recompute_when_it_is_set if {
	job := object.union(_t_job, {"provenance": {"/training/recompute": {"file": "a.yaml", "line": 3, "column": 1}}})
	some f in findings with input as job
	f.pointer == "/training/recompute"
}

test_no_price_states_gpu_hours if {
	job := object.union(_t_job, {"estimates": {"recompute": {"overhead_usd": null}}})
	some f in findings with input as job
	contains(f.message, "~25% of each step, ~120 GPU-h per run;")
	not f.waste
}

test_quiet_when_it_needs_the_memory if {
	job := object.union(_t_job, {"estimates": {"memory": {"utilization_without_recompute": 0.93}}})
	count(findings) == 0 with input as job
}

test_quiet_without_full_recompute_or_estimate if {
	selective := object.union(_t_job, {"estimates": {"recompute": {"mode": null}}})
	count(findings) == 0 with input as selective
	unknown := object.union(_t_job, {"estimates": {"memory": {"utilization_without_recompute": null}}})
	count(findings) == 0 with input as unknown
	count(findings) == 0 with input as {}
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _t_job with data.trainlint.params.needless_recompute.max_utilization_without_recompute as 0.4
}

# At the longest plausible sequences the job needs the memory recompute saves.
test_quiet_when_the_highest_plausible_memory_without_recompute_is_high if {
	ranges := {"/memory/utilization_without_recompute": [0.3, 0.95]}
	job := object.union(_t_job, {"estimates": {"ranges": ranges}})
	count(findings) == 0 with input as job
}

test_fires_when_even_the_highest_memory_without_recompute_fits if {
	ranges := {"/memory/utilization_without_recompute": [0.3, 0.7]}
	job := object.union(_t_job, {"estimates": {"ranges": ranges}})
	count(findings) == 1 with input as job
}
