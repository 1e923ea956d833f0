package trainlint.rules.no_checkpoint_long_run

import rego.v1

_job := {
	"checkpoint": {"strategy": "no"},
	"training": {"epochs": null},
	"estimates": {
		"gpus": 64,
		"step_time_s": 2,
		"run": {"steps": 50000, "hours": 30, "gpu_hours": 1920, "usd": 6720},
		"checkpoint": {"saves": 0, "every_steps": null},
		"sources": {"run.hours": "estimated"},
	},
}

test_states_run_risk_and_interval if {
	result := findings with input as _job
	result == {{
		"message": "checkpointing off (strategy \"no\"): nothing is saved before the end of a ~30 h run (estimated) on 64 GPUs, so a failure restarts it from step 0 (~3.8% chance of an interruption at an assumed 50,700 h MTBF per GPU; expected loss half the run); save at least every 7,200 steps (~4.0 h)",
		"pointer": "/checkpoint/strategy",
		"waste": {"gpu_hours": (1920 * ((30 * 64) / 50700)) / 2, "usd": (6720 * ((30 * 64) / 50700)) / 2},
	}}
}

test_interval_as_long_as_the_run if {
	job := object.union(_job, {
		"checkpoint": {"strategy": null, "every_steps": 50000},
		"estimates": {"checkpoint": {"saves": 1, "every_steps": 50000}},
	})
	some f in findings with input as job
	startswith(f.message, "checkpoint every 50,000 steps on a 50,000-step run: nothing is saved")
	f.pointer == "/checkpoint/every_steps"
}

test_epoch_saves_on_a_single_epoch_run if {
	job := object.union(_job, {
		"checkpoint": {"strategy": "epoch"},
		"training": {"epochs": 1},
		"estimates": {"checkpoint": {"saves": null}},
	})
	some f in findings with input as job
	startswith(f.message, "checkpoint per epoch on a single-epoch run")
}

test_quiet_with_periodic_saves if {
	job := object.union(_job, {
		"checkpoint": {"strategy": "steps", "every_steps": 1000},
		"estimates": {"checkpoint": {"saves": 50, "every_steps": 1000}},
	})
	count(findings) == 0 with input as job
}

test_quiet_on_a_short_run if {
	job := object.union(_job, {"estimates": {"run": {"hours": 3}}})
	count(findings) == 0 with input as job
}

test_quiet_when_checkpointing_unknown if {
	job := object.union(_job, {"checkpoint": {"strategy": null}, "estimates": {"checkpoint": {"saves": null}}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_no_waste_without_gpu_count if {
	job := object.union(_job, {"estimates": {"gpus": null, "step_time_s": null}})
	result := findings with input as job
	result == {{
		"message": "checkpointing off (strategy \"no\"): nothing is saved before the end of a ~30 h run (estimated), so a failure restarts it from step 0; save at least every 4.0 h",
		"pointer": "/checkpoint/strategy",
	}}
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _job with data.trainlint.params.no_checkpoint_long_run.max_hours_without_checkpoint as 48
}

# At the highest plausible MFU and shortest sequences the run ends within the window.
test_quiet_when_the_shortest_plausible_run_is_short if {
	job := object.union(_job, {"estimates": {"ranges": {"/run/hours": [3, 60]}}})
	count(findings) == 0 with input as job
}

test_fires_when_even_the_shortest_run_is_long if {
	job := object.union(_job, {"estimates": {"ranges": {"/run/hours": [18, 45]}}})
	count(findings) == 1 with input as job
}
