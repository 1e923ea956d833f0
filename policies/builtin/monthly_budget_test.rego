package trainlint.rules.monthly_budget

import rego.v1

_run := {"run": {"usd": 12000, "gpu_hours": 3000}}

_status := {
	"group": "team", "key": "nlp", "month": "2026-12", "budget_usd": 40000, "budget_gpu_hours": null,
	"before_usd": 36000, "before_gpu_hours": 4000, "after_usd": 48000, "after_gpu_hours": 5300,
}

test_crossing_the_budget_names_before_after_and_budget if {
	result := findings with input as {"platform": {"budgets": [_status]}, "estimates": _run}
	result == {{
		"message": "this job takes team nlp to $48,000 of its $40,000 budget for 2026-12 ($36,000 planned before it)",
		"pointer": "/tags",
		"waste": {"usd": 8000, "gpu_hours": 2000},
	}}
}

test_already_over_counts_only_this_jobs_share if {
	over := object.union(_status, {"before_usd": 42000})
	some f in findings with input as {"platform": {"budgets": [over]}, "estimates": _run}
	f.waste.usd == 6000
}

test_within_the_budget_is_quiet if {
	within := object.union(_status, {"after_usd": 39000})
	count(findings) == 0 with input as {"platform": {"budgets": [within]}}
}

test_gpu_hour_budgets if {
	hours := object.union(_status, {"budget_usd": null, "budget_gpu_hours": 5000})
	some f in findings with input as {"platform": {"budgets": [hours]}}
	f.message == "this job takes team nlp to 5,300 GPU-hours of its 5,000 GPU-hours budget for 2026-12 (4,000 GPU-hours planned before it)"
}

test_no_waste_without_the_jobs_price if {
	some f in findings with input as {"platform": {"budgets": [_status]}}
	not f.waste
}

test_unknown_cost_is_quiet if {
	unknown := object.union(_status, {"after_usd": null})
	count(findings) == 0 with input as {"platform": {"budgets": [unknown]}}
}

test_quiet_without_a_database if {
	count(findings) == 0 with input as {}
}
