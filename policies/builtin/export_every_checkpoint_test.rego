package trainlint.rules.export_every_checkpoint

import rego.v1

_job := {"checkpoint": {"export_hf": true, "every_steps": 5}}

test_export_every_five_steps if {
	result := findings with input as _job
	result == {{
		"message": "a Hugging Face weight export at every checkpoint, every 5 steps; export only the final model (drop the export from periodic saves) or save every ≥ 500 steps",
		"pointer": "/checkpoint/export_hf",
	}}
}

test_counts_exports_on_a_run_of_known_length if {
	job := object.union(_job, {"training": {"max_steps": 1000}})
	some finding in findings with input as job
	contains(finding.message, ": ~200 exports in a 1,000-step run;")
}

test_quiet_without_the_export if {
	job := {"checkpoint": {"export_hf": false, "every_steps": 5}}
	count(findings) == 0 with input as job
}

test_quiet_on_a_long_interval if {
	job := object.union(_job, {"checkpoint": {"every_steps": 500}})
	count(findings) == 0 with input as job
}

test_quiet_when_only_the_final_model_is_saved if {
	count(findings) == 0 with input as {"checkpoint": {"export_hf": true}}
}
