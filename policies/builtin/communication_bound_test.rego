package trainlint.rules.communication_bound

import rego.v1

_t_job := {
	"resources": {"world_size": 16},
	"estimates": {
		"gpu": "A100-80GB",
		"gpus": 16,
		"step_time_s": 0.04,
		"comm": {"allreduce_s": 0.03, "exposed_s": 0.02, "fraction": 0.5},
		"run": {"gpu_hours": 200, "usd": 350},
		"alternatives": [
			{"gpu": "A10G", "gpus": 16, "usd": 300, "memory_utilization": 0.5},
			{"gpu": "A100-80GB", "gpus": 8, "usd": 230, "memory_utilization": 0.1},
		],
		"sources": {"comm.fraction": "default"},
	},
}

test_states_share_times_waste_and_fewer_gpus if {
	result := findings with input as _t_job
	result == {{
		"message": "16 GPUs spend ~50% of each step waiting on gradient all-reduce that backward does not hide (~20 ms of ~40 ms steps) (estimated); 8 GPUs would cost ~$230 per run instead of ~$350; or accumulate more gradients per step",
		"pointer": "/resources/world_size",
		"waste": {"gpu_hours": 100, "usd": 175},
	}}
}

test_generic_fix_without_a_smaller_alternative if {
	job := json.patch(_t_job, [{"op": "replace", "path": "/estimates/alternatives", "value": []}])
	some f in findings with input as job
	endswith(f.message, "(estimated); use fewer GPUs (one node), a larger micro-batch or more gradient accumulation per sync, or no data parallelism for a model this small")
}

test_no_price_states_gpu_hours if {
	job := json.patch(_t_job, [{"op": "replace", "path": "/estimates/run", "value": {"gpu_hours": 200}}])
	some f in findings with input as job
	contains(f.message, "(estimated); ~100 GPU-h per run; use fewer GPUs")
	not f.waste
}

test_quiet_below_threshold if {
	job := object.union(_t_job, {"estimates": {"comm": {"fraction": 0.1}}})
	count(findings) == 0 with input as job
}

test_quiet_on_one_gpu_or_unknown if {
	one := object.union(_t_job, {"estimates": {"gpus": 1}, "resources": {"world_size": 1}})
	count(findings) == 0 with input as one
	unknown := object.union(_t_job, {"estimates": {"comm": {"fraction": null}}})
	count(findings) == 0 with input as unknown
	count(findings) == 0 with input as {}
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _t_job with data.trainlint.params.communication_bound.max_comm_fraction as 0.6
}

# At the longest plausible sequences the all-reduce hides behind compute.
test_quiet_when_the_lowest_plausible_share_is_under_the_threshold if {
	job := object.union(_t_job, {"estimates": {"ranges": {"/comm/fraction": [0.1, 0.6]}}})
	count(findings) == 0 with input as job
}

test_fires_when_even_the_lowest_share_is_over if {
	job := object.union(_t_job, {"estimates": {"ranges": {"/comm/fraction": [0.35, 0.6]}}})
	count(findings) == 1 with input as job
}
