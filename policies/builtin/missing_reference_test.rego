package trainlint.rules.missing_reference

import rego.v1

test_one_finding_per_missing_file if {
	missing := [
		{"file": "run.sh", "line": 3, "column": 17, "path": "configs/ds.json"},
		{"file": "sft.yaml", "line": 9, "column": 1, "path": "zero3.json"},
	]
	findings == {
		{"message": "referenced file 'configs/ds.json' does not exist (referenced from run.sh)", "pointer": "/missing_references/0"},
		{"message": "referenced file 'zero3.json' does not exist (referenced from sft.yaml)", "pointer": "/missing_references/1"},
	} with input as {"missing_references": missing}
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_quiet_without_missing_files if {
	count(findings) == 0 with input as {"missing_references": []}
}

test_incomplete_items_are_ignored if {
	count(findings) == 0 with input as {"missing_references": [{"file": "run.sh", "path": null}]}
}
