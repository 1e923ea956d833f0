package trainlint.rules.checkpoint_interval_beyond_run

import rego.v1

_job := {
	"checkpoint": {"strategy": "steps", "every_steps": 50000},
	"training": {"max_steps": 5200},
	"estimates": {"run": {"steps": 5200}, "sources": {"run.steps": "declared"}},
}

test_interval_longer_than_declared_steps if {
	result := findings with input as _job
	result == {{
		"message": "checkpoint every 50,000 steps in a 5,200-step run: nothing is saved before the run ends, so a crash or preemption loses all of it; save every 520 steps (10 saves per run)",
		"pointer": "/checkpoint/every_steps",
	}}
}

test_run_length_derived_from_declared_facts if {
	job := {"checkpoint": {"every_steps": 100000}, "estimates": {"run": {"steps": 32000}, "sources": {"run.steps": "declared"}}}
	count(findings) == 1 with input as job
}

test_quiet_on_an_estimated_run_length if {
	job := {"checkpoint": {"every_steps": 100000}, "estimates": {"run": {"steps": 32000}, "sources": {"run.steps": "estimated"}}}
	count(findings) == 0 with input as job
}

test_quiet_when_the_interval_fits_the_run if {
	job := object.union(_job, {"checkpoint": {"every_steps": 500}})
	count(findings) == 0 with input as job
}

test_quiet_when_saving_exactly_at_the_end if {
	job := object.union(_job, {"checkpoint": {"every_steps": 5200}})
	count(findings) == 0 with input as job
}

test_quiet_on_epoch_strategy if {
	job := object.union(_job, {"checkpoint": {"strategy": "epoch"}})
	count(findings) == 0 with input as job
}

test_quiet_on_a_fraction_of_the_run if {
	job := object.union(_job, {"checkpoint": {"every_steps": 0.5}})
	count(findings) == 0 with input as job
}

test_quiet_without_a_run_length if {
	count(findings) == 0 with input as {"checkpoint": {"every_steps": 50000}}
}

test_quiet_on_a_short_example_run if {
	job := {"checkpoint": {"every_steps": 1000}, "training": {"max_steps": 200}}
	count(findings) == 0 with input as job
}
