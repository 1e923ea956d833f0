package trainlint.rules.no_seed

import rego.v1

_job := {
	"sources": [{"path": "configs/lora.yaml", "format": "torchtune", "role": "config"}],
	"training": {"seed": null},
}

test_torchtune_without_seed if {
	result := findings with input as _job
	result == {{
		"message": "no random seed set: torchtune draws a new random seed on every run when `seed` is not set, so two runs of configs/lora.yaml differ (initialisation, data order, dropout); set `seed` in configs/lora.yaml",
		"pointer": "/training/seed",
	}}
}

test_quiet_with_a_seed if {
	count(findings) == 0 with input as object.union(_job, {"training": {"seed": 0}})
}

test_quiet_for_hf_trainer_whose_default_is_42 if {
	job := {"sources": [{"path": "sft.yaml", "format": "hf-trainer"}], "training": {}}
	count(findings) == 0 with input as job
}

test_quiet_when_a_fixed_default_format_is_in_the_job if {
	sources := array.concat(_job.sources, [{"path": "sft.yaml", "format": "llama-factory"}])
	count(findings) == 0 with input as object.union(_job, {"sources": sources})
}

test_quiet_for_formats_without_a_seed_key if {
	job := {"sources": [{"path": "run.sh", "format": "launch-script"}]}
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_lightning_names_seed_everything if {
	job := {"sources": [{"path": "cli.yaml", "format": "lightning"}]}
	some f in findings with input as job
	contains(f.message, "set `seed_everything` in cli.yaml")
}
