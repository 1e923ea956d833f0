package trainlint.lib.job

import rego.v1

test_estimates_win if {
	job := {"estimates": {"gpus": 16, "gpu": "H100-SXM-80GB"}, "resources": {"world_size": 8, "gpu": {"model": "h100"}}}
	world_size == 16 with input as job
	gpu == "H100-SXM-80GB" with input as job
}

test_declared_values_when_not_estimated if {
	job := {"estimates": {"gpus": null, "gpu": null}, "resources": {"world_size": 8, "gpu": {"model": "h100"}}}
	world_size == 8 with input as job
	gpu == "h100" with input as job
}

test_undefined_when_unknown if {
	not world_size with input as {"resources": {"world_size": null}}
	not gpu with input as {}
}

test_a_tpu_job_counts_tpu_chips if {
	unit == "TPU chip" with input as {"resources": {"accelerator": "tpu"}}
	family == "TPU" with input as {"resources": {"accelerator": "tpu"}}
	unit == "GPU" with input as {"resources": {"accelerator": "gpu"}}
	family == "GPU" with input as {}
}
