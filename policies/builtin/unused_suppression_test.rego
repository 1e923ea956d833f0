package trainlint.rules.unused_suppression

import rego.v1

_problem(problem, kind) := {"kind": kind, "problem": problem, "detail": "d"}

test_each_problem_is_reported_at_its_index if {
	result := findings with input as {"suppression_problems": [
		_problem("unused", "inline"),
		_problem("expired", "waiver"),
	]}
	result == {
		{"message": "unused inline ignore: d", "pointer": "/suppression_problems/0"},
		{"message": "expired waiver: d", "pointer": "/suppression_problems/1"},
	}
}

test_report_param_chooses_the_problems if {
	result := findings with input as {"suppression_problems": [_problem("unused", "baseline")]}
		with data.trainlint.params.unused_suppression.report as ["malformed"]
	count(result) == 0
}

test_quiet_without_problems if {
	count(findings) == 0 with input as {}
}
