package trainlint.rules.time_limit_far_beyond_run

import rego.v1

_job := {
	"resources": {"time_limit_s": 1800000},
	"estimates": {"run": {"hours": 0.07}, "ranges": {"/run/hours": [0.043, 0.09]}},
}

test_limit_far_beyond_the_high_end if {
	result := findings with input as _job
	result == {{
		"message": "time limit 500 h is 5,556x the estimated ~2.6–5.4 min run: a hung run holds its GPUs that long; set it a little above the estimate",
		"pointer": "/resources/time_limit_s",
	}}
}

test_point_estimate_without_a_range if {
	job := {"resources": {"time_limit_s": 360000}, "estimates": {"run": {"hours": 5}}}
	count(findings) == 1 with input as job
}

test_quiet_under_a_day_whatever_the_ratio if {
	# 12 h against a 23-minute run: 31x, but a hang is already bounded to half a day.
	job := {"resources": {"time_limit_s": 43200}, "estimates": {"run": {"hours": 0.2}, "ranges": {"/run/hours": [0.17, 0.38]}}}
	count(findings) == 0 with input as job
}

test_quiet_within_ratio_of_the_high_end if {
	# 10 h against a 0.5-1.2 h range: under 10x the high end, though 20x the low end.
	job := {"resources": {"time_limit_s": 36000}, "estimates": {"run": {"hours": 0.8}, "ranges": {"/run/hours": [0.5, 1.2]}}}
	count(findings) == 0 with input as job
}

test_quiet_without_an_estimate if {
	count(findings) == 0 with input as {"resources": {"time_limit_s": 1800000}, "estimates": {"run": {"hours": null}}}
}

test_quiet_without_a_limit if {
	count(findings) == 0 with input as {"estimates": {"run": {"hours": 0.1}}}
}
