package trainlint.rules.profiler_always_on

import rego.v1

_job := {
	"logging": {"profiler": {"enabled": true, "scheduled": false}},
	"estimates": {"run": {"gpu_hours": 120, "usd": 420}},
}

test_whole_run_profiler if {
	result := findings with input as _job
	result == {{
		"message": "profiler on for the whole run, with no schedule: every step is traced or timed, ~10% of the run (assumed); profile a few steps with a schedule (torch.profiler.schedule) or turn it off (wall_clock_breakdown: false, profiler: null)",
		"pointer": "/logging/profiler/enabled",
		"waste": {"gpu_hours": 12, "usd": 42},
	}}
}

test_schedule_unknown_counts_as_whole_run if {
	job := {"logging": {"profiler": {"enabled": true, "scheduled": null}}, "estimates": {"run": {"gpu_hours": 30}}}
	some f in findings with input as job
	contains(f.message, "~10% of the run (assumed), ~3.0 GPU-h per run;")
	not f.waste
}

test_quiet_when_scheduled if {
	job := object.union(_job, {"logging": {"profiler": {"scheduled": true}}})
	count(findings) == 0 with input as job
}

test_quiet_when_off if {
	job := object.union(_job, {"logging": {"profiler": {"enabled": false}}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_overhead_comes_from_params if {
	some f in findings with input as _job with data.trainlint.params.profiler_always_on.overhead_fraction as 0.5
	f.waste == {"gpu_hours": 60, "usd": 210}
}
