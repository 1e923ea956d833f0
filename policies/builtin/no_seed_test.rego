package trainlint.rules.no_seed

import rego.v1

_seedless := {"value": null, "format": "torchtune", "key": "seed", "file": "configs/lora.yaml", "line": 1, "column": 1}

_job := {
	"sources": [{"path": "configs/lora.yaml", "format": "torchtune", "role": "config"}],
	"training": {"seed": null},
	"defaults": {"/training/seed": _seedless},
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

test_quiet_for_a_fixed_default_seed if {
	fixed := object.union(_seedless, {"value": 42, "format": "hf-trainer", "file": "sft.yaml"})
	count(findings) == 0 with input as object.union(_job, {"defaults": {"/training/seed": fixed}})
}

test_quiet_without_a_framework_default if {
	job := {"sources": [{"path": "run.sh", "format": "launch-script"}]}
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_lightning_names_seed_everything if {
	lightning := object.union(_seedless, {"format": "lightning", "key": "seed_everything", "file": "cli.yaml"})
	some f in findings with input as {"defaults": {"/training/seed": lightning}}
	contains(f.message, "set `seed_everything` in cli.yaml")
}
