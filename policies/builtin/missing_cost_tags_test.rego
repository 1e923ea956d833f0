package trainlint.rules.missing_cost_tags

import rego.v1

test_lists_every_missing_tag if {
	result := findings with input as {"launcher": {"kind": "torchrun"}, "tags": {}}
	result == {{
		"message": "missing cost tags: team, project; GPU spend of this torchrun job cannot be attributed",
		"pointer": "/tags",
	}}
}

test_empty_value_counts_as_missing if {
	job := {"launcher": {"kind": "deepspeed"}, "tags": {"team": "ml", "project": " "}}
	result := findings with input as job
	result == {{
		"message": "missing cost tag: project; GPU spend of this deepspeed job cannot be attributed",
		"pointer": "/tags",
	}}
}

test_quiet_when_tagged if {
	job := {"launcher": {"kind": "torchrun"}, "tags": {"team": "ml", "project": "llm", "extra": "x"}}
	count(findings) == 0 with input as job
}

test_quiet_when_the_job_does_not_launch if {
	count(findings) == 0 with input as {"launcher": {"kind": null}, "tags": {}}
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_required_tags_come_from_params if {
	job := {"launcher": {"kind": "srun"}, "resources": {"gpus_per_node": 8}, "tags": {"team": "ml", "project": "llm"}}
	some f in findings with input as job with data.trainlint.params.missing_cost_tags.required_tags as ["cost_center"]
	startswith(f.message, "missing cost tag: cost_center;")
}

test_quiet_when_nothing_says_the_job_uses_gpus if {
	job := {"launcher": {"kind": "python"}, "resources": {"gpu": {"model": null}, "gpus_per_node": null}, "tags": {}}
	count(findings) == 0 with input as job
}

test_plain_python_on_a_known_gpu_fires if {
	job := {"launcher": {"kind": "python"}, "resources": {"gpu": {"model": "A100-80GB"}}, "tags": {}}
	count(findings) == 1 with input as job
}

test_hyphenated_required_tag_matches_the_normalised_key if {
	count(findings) == 0 with input as {
		"launcher": {"kind": "torchrun"},
		"tags": {"team": "a", "project": "b", "cost_center": "4711"},
	}
		with data.trainlint.params.missing_cost_tags.required_tags as ["team", "project", "cost-center"]
}

test_a_manifest_without_a_command_still_holds_gpus if {
	result := findings with input as {"resources": {"gpus_per_node": 8, "scheduler": "kubernetes"}}
	some f in result
	f.message == "missing cost tags: team, project; GPU spend of this kubernetes job cannot be attributed"
}

test_gpus_held_however_launched if {
	result := findings with input as {"resources": {"gpu": {"model": "A100-40GB"}, "gpus_per_node": 1}}
	some f in result
	f.message == "missing cost tags: team, project; GPU spend of this job cannot be attributed"
}

test_a_tpu_job_s_spend_is_tpu_spend if {
	job := {"launcher": {"kind": "python"}, "resources": {"accelerator": "tpu", "world_size": 32}, "tags": {}}
	some f in findings with input as job
	f.message == "missing cost tags: team, project; TPU spend of this python job cannot be attributed"
}
