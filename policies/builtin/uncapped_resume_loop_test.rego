package trainlint.rules.uncapped_resume_loop

import rego.v1

_job := {"launcher": {"kind": "torchrun", "restart_loop": "uncapped"}}

test_uncapped_loop_without_a_time_limit if {
	result := findings with input as _job
	result == {{
		"message": "the launch is in a loop with no break, exit or retry cap: a run that crashes the same way every time is relaunched and burns its whole allocation, until someone cancels it (no time limit is set); cap the attempts (for attempt in 1 2 3; ... && break) or use torchrun --max-restarts",
		"pointer": "/launcher/restart_loop",
	}}
}

test_names_the_time_limit_it_can_burn if {
	job := object.union(_job, {"resources": {"time_limit_s": 172800}})
	some finding in findings with input as job
	contains(finding.message, "burns up to its whole 48 h time limit;")
}

test_quiet_without_a_loop if {
	count(findings) == 0 with input as {"launcher": {"kind": "torchrun"}}
}
