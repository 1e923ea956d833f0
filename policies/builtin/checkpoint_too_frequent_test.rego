package trainlint.rules.checkpoint_too_frequent

import rego.v1

_job := {
	"checkpoint": {"every_steps": 10},
	"estimates": {
		"step_time_s": 1.2,
		"checkpoint": {
			"size_bytes": 112e9,
			"save_s": 19,
			"every_steps": 10,
			"overhead_fraction": 0.613,
			"overhead_gpu_hours": 310.4,
			"overhead_usd": 1240.3,
			"suggested_every_steps": 160,
		},
		"sources": {},
	},
}

test_states_numbers_cost_and_fix if {
	result := findings with input as _job
	result == {{
		"message": "checkpoint every 10 steps: ~19 s to save 112 GB against ~1.2 s steps is ~61% of the run (estimated); save every ≥ 160 steps",
		"pointer": "/checkpoint/every_steps",
		"waste": {"gpu_hours": 310.4, "usd": 1240.3},
	}}
}

test_measured_when_save_and_step_are_measured if {
	sources := {"checkpoint.save_s": "measured", "step_time_s": "measured"}
	job := object.union(_job, {"estimates": {"sources": sources}})
	some f in findings with input as job
	contains(f.message, "of the run (measured)")
}

test_partly_known_job_fires_without_waste if {
	job := {
		"checkpoint": {"every_steps": 50},
		"estimates": {"checkpoint": {"save_s": 30, "overhead_fraction": 0.2}},
	}
	result := findings with input as job
	result == {{
		"message": "checkpoint every 50 steps: ~30 s per save is ~20% of the run (estimated); save less often or asynchronously",
		"pointer": "/checkpoint/every_steps",
	}}
}

test_only_the_fraction_known if {
	job := {"estimates": {"checkpoint": {"overhead_fraction": 0.5, "overhead_gpu_hours": 12}}}
	result := findings with input as job
	result == {{
		"message": "checkpointing: saving is ~50% of the run (estimated); ~12 GPU-h per run; save less often or asynchronously",
		"pointer": "/checkpoint/every_steps",
	}}
}

test_quiet_below_threshold if {
	job := object.union(_job, {"estimates": {"checkpoint": {"overhead_fraction": 0.04}}})
	count(findings) == 0 with input as job
}

test_quiet_when_overhead_unknown if {
	job := object.union(_job, {"estimates": {"checkpoint": {"overhead_fraction": null}}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _job with data.trainlint.params.checkpoint_too_frequent.max_overhead_fraction as 0.7
}

test_every_single_step if {
	job := {"checkpoint": {"every_steps": 1}, "estimates": {"checkpoint": {"overhead_fraction": 0.9}}}
	some f in findings with input as job
	startswith(f.message, "checkpoint every step: saving is ~90% of the run")
}

test_a_suggestion_as_long_as_the_run_means_save_at_the_end if {
	job := {"estimates": {
		"checkpoint": {"overhead_fraction": 0.66, "save_s": 114, "size_bytes": 112e9, "every_steps": 10, "suggested_every_steps": 2000},
		"run": {"steps": 2000},
		"step_time_s": 5.7,
		"sources": {},
	}}
	some f in findings with input as job
	endswith(f.message, "; save only at the end of the run, or asynchronously")
}

test_async_job_is_told_the_write_outlasts_the_interval if {
	job := object.union(_job, {"checkpoint": {"every_steps": 10, "async": true}})
	some f in findings with input as job
	endswith(f.message, "the background write outlasts the interval: save every ≥ 160 steps")
}

# The sequence length is unstated: at the shortest plausible one the overhead is under 5%.
test_quiet_when_the_lowest_plausible_overhead_is_under_the_threshold if {
	job := object.union(_job, {"estimates": {"ranges": {"/checkpoint/overhead_fraction": [0.03, 0.7]}}})
	count(findings) == 0 with input as job
}

test_fires_when_even_the_lowest_overhead_is_over_and_gives_the_range if {
	ranges := {"/checkpoint/overhead_fraction": [0.236, 0.524], "/step_time_s": [0.8, 1.6]}
	job := object.union(_job, {"estimates": {"ranges": ranges}})
	some f in findings with input as job
	contains(f.message, "against ~800 ms–1.6 s steps is ~24–52% of the run")
}
