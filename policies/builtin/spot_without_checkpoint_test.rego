package trainlint.rules.spot_without_checkpoint

import rego.v1

_job := {
	"resources": {"spot": true},
	"checkpoint": {"strategy": "no"},
	"estimates": {
		"gpus": 8,
		"run": {"steps": 20000, "hours": 12.5, "gpu_hours": 100, "usd": 350},
		"checkpoint": {"saves": 0},
		"sources": {"run.hours": "estimated"},
	},
}

test_states_what_is_at_risk if {
	result := findings with input as _job
	result == {{
		"message": "spot capacity with checkpointing off (strategy \"no\"): a preemption restarts the run from step 0, losing up to the whole ~13 h run (estimated) on 8 GPUs, ~100 GPU-h / $350 each time; save a resumable checkpoint periodically to storage that outlives the node and resume from it, or use on-demand capacity",
		"pointer": "/resources/spot",
	}}
}

test_interval_as_long_as_the_run if {
	job := object.union(_job, {
		"checkpoint": {"strategy": null},
		"estimates": {"checkpoint": {"saves": 1, "every_steps": 20000}},
	})
	some f in findings with input as job
	startswith(f.message, "spot capacity with checkpoint every 20,000 steps on a 20,000-step run:")
}

test_run_length_unknown if {
	job := {"resources": {"spot": true}, "checkpoint": {"strategy": "NO"}}
	result := findings with input as job
	result == {{
		"message": "spot capacity with checkpointing off (strategy \"NO\"): a preemption restarts the run from step 0; save a resumable checkpoint periodically to storage that outlives the node and resume from it, or use on-demand capacity",
		"pointer": "/resources/spot",
	}}
}

test_quiet_on_demand if {
	job := object.union(_job, {"resources": {"spot": false}})
	count(findings) == 0 with input as job
}

test_quiet_when_spot_unknown if {
	job := object.union(_job, {"resources": {"spot": null}})
	count(findings) == 0 with input as job
}

test_quiet_with_periodic_saves if {
	job := object.union(_job, {
		"checkpoint": {"strategy": "steps", "every_steps": 500},
		"estimates": {"checkpoint": {"saves": 40, "every_steps": 500}},
	})
	count(findings) == 0 with input as job
}

test_quiet_when_checkpointing_unknown if {
	job := {"resources": {"spot": true}, "checkpoint": {"strategy": null}, "estimates": {"checkpoint": {"saves": null}}}
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}
