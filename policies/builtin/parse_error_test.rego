package trainlint.rules.parse_error

import rego.v1

test_one_finding_per_error if {
	errors := [
		{"file": "a.yaml", "line": 3, "column": 5, "message": "mapping values are not allowed here"},
		{"file": "b.json", "line": 1, "column": 1, "message": "Expecting value"},
	]
	result := findings with input as {"parse_errors": errors}
	result == {
		{"message": "mapping values are not allowed here", "pointer": "/parse_errors/0"},
		{"message": "Expecting value", "pointer": "/parse_errors/1"},
	}
}

test_quiet_without_errors if {
	count(findings) == 0 with input as {"parse_errors": []}
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}
