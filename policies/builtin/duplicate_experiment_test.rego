package trainlint.rules.duplicate_experiment

import rego.v1

_job := {"platform": {"duplicates": [
	{"repo": "org/research", "path": "sft/train.yaml", "tags": {"team": "research"}},
	{"repo": "org/nlp-2", "path": "train.sh", "tags": {}},
]}}

test_names_the_other_places_and_their_teams if {
	result := findings with input as _job
	result == {{
		"message": "the same experiment (model, data, hyper-parameters and GPUs; tags, outputs and seeds aside) is also in org/research:sft/train.yaml (team research), org/nlp-2:train.sh (team untagged): reuse its results or say what this run changes",
		"pointer": "/model",
	}}
}

test_counts_the_places_beyond_those_named if {
	many := {"platform": {"duplicates": [{"repo": sprintf("org/r%d", [i]), "path": "t.yaml", "tags": {}} | some i in numbers.range(1, 5)]}}
	some f in findings with input as many
	endswith(f.message, " and 2 more: reuse its results or say what this run changes")
}

test_quiet_without_duplicates if {
	count(findings) == 0 with input as {"platform": {"duplicates": []}}
}

test_quiet_without_a_database if {
	count(findings) == 0 with input as {}
}
