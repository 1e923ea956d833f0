package trainlint.rules.over_budget

import rego.v1

_job := {
	"budget": {"usd": 500, "gpu_hours": null},
	"provenance": {"/budget/usd": {"file": "train.slurm", "line": 2, "column": 14}},
	"estimates": {
		"gpu": "H100-SXM",
		"gpus": 8,
		"run": {"steps": 20000, "hours": 40, "gpu_hours": 320, "usd": 1200},
		"sources": {},
	},
}

test_per_job_usd_budget_states_estimate_budget_and_excess if {
	result := findings with input as _job
	result == {{
		"message": "estimated ~$1,200 per run (320 GPU-h on 8× H100-SXM, estimated) is over the $500 per-job budget (budget_usd annotation) by ~$700 (+140%); shorten the run, use fewer or cheaper GPUs, or raise the budget",
		"pointer": "/budget/usd",
		"waste": {"usd": 700, "gpu_hours": 320 * 700 / 1200},
	}}
}

test_quiet_within_budget if {
	job := object.union(_job, {"budget": {"usd": 2000}})
	count(findings) == 0 with input as job
}

test_quiet_without_any_budget if {
	job := object.union(_job, {"budget": {"usd": null}})
	count(findings) == 0 with input as job
}

test_quiet_when_cost_unknown if {
	job := object.union(_job, {"estimates": {"run": {"usd": null, "gpu_hours": null}}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_pack_budget_points_at_max_steps if {
	job := {
		"provenance": {"/training/max_steps": {"file": "sft.yaml", "line": 9, "column": 1}},
		"estimates": {"run": {"gpu_hours": 320, "usd": 1200}, "sources": {"run.usd": "default"}},
	}
	result := findings with input as job with data.trainlint.params.over_budget.max_usd_per_job as 1000
	some f in result
	f.pointer == "/training/max_steps"
	contains(f.message, "over the $1,000 pack budget (max_usd_per_job) by ~$200 (+20%)")
	f.waste.usd == 200
}

test_pack_budget_without_max_steps_points_at_world_size if {
	job := {"estimates": {"run": {"usd": 1200}}, "provenance": {"/resources/world_size": {}}}
	some f in findings with input as job with data.trainlint.params.over_budget.max_usd_per_job as 1000
	f.pointer == "/resources/world_size"
	not f.waste
}

test_per_job_budget_beats_the_pack_default if {
	count(findings) == 0 with input as object.union(_job, {"budget": {"usd": 5000}})
		with data.trainlint.params.over_budget.max_usd_per_job as 100
}

test_gpu_hours_budget if {
	job := object.union(_job, {"budget": {"usd": null, "gpu_hours": 200}})
	result := findings with input as job
	result == {{
		"message": "estimated ~320 GPU-h per run (8× H100-SXM, estimated) is over the 200 GPU-h per-job budget (budget_gpu_hours annotation) by ~120 GPU-h (+60%); shorten the run, use fewer or cheaper GPUs, or raise the budget",
		"pointer": "/budget/gpu_hours",
		"waste": {"gpu_hours": 120, "usd": 1200 * 120 / 320},
	}}
}

test_both_budgets_exceeded_fire_twice if {
	job := object.union(_job, {"budget": {"gpu_hours": 100}})
	count(findings) == 2 with input as job
}

# The cheapest plausible run is within the budget: not known to be over it.
test_quiet_when_the_cheapest_plausible_run_is_within_budget if {
	job := object.union(_job, {"estimates": {"ranges": {"/run/usd": [400, 1600]}}})
	count(findings) == 0 with input as job
}

test_fires_when_even_the_cheapest_run_is_over_and_gives_the_range if {
	job := object.union(_job, {"estimates": {"ranges": {"/run/usd": [800, 1600]}}})
	some f in findings with input as job
	startswith(f.message, "estimated ~$800–1,600 per run")
}

test_gpu_hours_budget_quiet_when_the_least_plausible_use_is_within_it if {
	job := object.union(_job, {"budget": {"usd": null, "gpu_hours": 200}, "estimates": {"ranges": {"/run/gpu_hours": [150, 400]}}})
	count(findings) == 0 with input as job
}
