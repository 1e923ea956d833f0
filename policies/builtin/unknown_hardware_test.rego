package trainlint.rules.unknown_hardware

import rego.v1

_job := {
	"launcher": {"kind": "torchrun"},
	"resources": {"gpu": {"model": null}, "world_size": 8},
	"provenance": {"/launcher/kind": {"file": "run.sh", "line": 2, "column": 1}},
	"estimates": {"gpu": null, "gpus": 8},
}

test_type_unknown if {
	result := findings with input as _job
	result == {{
		"message": "GPU type unknown (8 GPUs): memory, step-time, cost and budget checks stay silent on this job; declare it with `# trainlint: gpu=H100` (or #SBATCH --gres=gpu:h100:8, a GPU node selector)",
		"pointer": "/resources/world_size",
	}}
}

test_both_unknown if {
	job := {"launcher": {"kind": "python"}, "provenance": {"/launcher/kind": {}}}
	result := findings with input as job
	result == {{
		"message": "GPU type and count unknown: memory, step-time, cost and budget checks stay silent on this job; declare it with `# trainlint: gpu=H100 gpus=8` (or #SBATCH --gres=gpu:h100:8, a GPU node selector)",
		"pointer": "/launcher/kind",
	}}
}

test_count_unknown if {
	job := {
		"sources": [{"path": "sft.yaml", "format": "hf-trainer", "role": "config"}],
		"training": {"max_steps": 100},
		"resources": {"gpu": {"model": "A100-80GB"}},
	}
	some f in findings with input as job
	startswith(f.message, "GPU count unknown (A100-80GB):")
	contains(f.message, "`# trainlint: gpus=8`")
	f.pointer == "/resources"
}

test_quiet_when_both_known if {
	job := object.union(_job, {"estimates": {"gpu": "H100-SXM"}})
	count(findings) == 0 with input as job
}

test_quiet_for_a_job_that_does_not_train if {
	count(findings) == 0 with input as {"resources": {}, "estimates": {}}
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_quiet_for_a_lone_deepspeed_json if {
	job := {
		"sources": [{"path": "ds.json", "format": "deepspeed", "role": "deepspeed"}],
		"training": {"micro_batch_size": 4},
	}
	count(findings) == 0 with input as job
}

test_count_guessed_says_the_estimates_span_the_plausible_counts if {
	job := {
		"launcher": {"kind": "deepspeed"},
		"resources": {"gpu": {"model": "A100-80GB"}},
		"estimates": {"gpu": "A100-80GB", "gpus": 8, "sources": {"gpus": "default"}, "ranges": {"/gpus": [1, 8]}},
	}
	some f in findings with input as job
	contains(f.message, "GPU count unknown (A100-80GB): memory, step-time and cost are estimated over 1–8 GPUs and their checks fire only when all of them agree; declare it")
}

test_a_tpu_job_is_told_its_tpu_type_is_unknown if {
	job := object.union(_job, {"resources": {"accelerator": "tpu", "world_size": 32}, "estimates": {"gpus": 32}})
	result := findings with input as job
	result == {{
		"message": "TPU type unknown (32 TPU chips): memory, step-time, cost and budget checks stay silent on this job; declare it with `# trainlint: gpu=TPU-v5e` (or a cloud.google.com/gke-tpu-accelerator node selector)",
		"pointer": "/resources/world_size",
	}}
}
