package trainlint.rules.log_every_step

import rego.v1

_job := {
	"logging": {"every_steps": 1},
	"resources": {"world_size": 8},
	"training": {"max_steps": 50000},
	"estimates": {"run": {"steps": 100000}, "price_per_gpu_hour": 4, "sources": {}},
}

test_long_run_with_cost if {
	result := findings with input as _job
	result == {{
		"message": "logging every step over 100,000 steps (estimated): ~10 ms per log (assumed) adds ~17 min to the run on 8 GPUs; log every 10 steps or more",
		"pointer": "/logging/every_steps",
		"waste": {"gpu_hours": 2.2222222222222223, "usd": 8.88888888888889},
	}}
}

test_declared_steps_without_price if {
	job := {"logging": {"every_steps": 1.0}, "training": {"max_steps": 5000}, "estimates": {"run": {"steps": null}}}
	result := findings with input as job
	result == {{
		"message": "logging every step over 5,000 steps (declared): ~10 ms per log (assumed) adds ~50 s to the run; log every 10 steps or more",
		"pointer": "/logging/every_steps",
	}}
}

test_unknown_run_length_still_fires if {
	result := findings with input as {"logging": {"every_steps": 1}}
	result == {{
		"message": "logging every step; run length unknown, so its cost is not estimated (~10 ms per log, assumed); log every 10 steps or more",
		"pointer": "/logging/every_steps",
	}}
}

test_quiet_on_a_short_run if {
	job := object.union(_job, {"estimates": {"run": {"steps": 200}}})
	count(findings) == 0 with input as job
}

test_quiet_when_logging_every_ten_steps if {
	job := object.union(_job, {"logging": {"every_steps": 10}})
	count(findings) == 0 with input as job
}

test_fraction_of_the_run_is_not_every_step if {
	job := object.union(_job, {"logging": {"every_steps": 0.01}})
	count(findings) == 0 with input as job
}

test_quiet_when_interval_unknown if {
	job := object.union(_job, {"logging": {"every_steps": null}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_interval_limit_comes_from_params if {
	job := object.union(_job, {"logging": {"every_steps": 5}})
	some f in findings with input as job with data.trainlint.params.log_every_step.max_every_steps as 5
	startswith(f.message, "logging every 5 steps over 100,000 steps")
}

test_epoch_or_no_logging_strategy_is_silent if {
	every_step := object.union(_job, {"logging": {"every_steps": 1, "strategy": "epoch"}})
	count(findings) == 0 with input as every_step
	never := object.union(_job, {"logging": {"every_steps": 1, "strategy": "no"}})
	count(findings) == 0 with input as never
}

test_steps_logging_strategy_fires if {
	job := object.union(_job, {"logging": {"every_steps": 1, "strategy": "steps"}})
	count(findings) == 1 with input as job
}
