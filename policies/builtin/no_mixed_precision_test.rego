package trainlint.rules.no_mixed_precision

import rego.v1

_t_job := {
	"training": {"precision": "fp32"},
	"estimates": {
		"gpu": "A100-80GB",
		"step_time_s": 1.6,
		"mixed_precision": {
			"precision": "bf16",
			"peak_ratio": 16,
			"step_time_s": 0.1,
			"speedup": 16,
			"saved_gpu_hours": 750,
			"saved_usd": 1312.5,
		},
		"sources": {"mixed_precision.step_time_s": "default"},
	},
}

test_states_ratio_steps_and_waste if {
	result := findings with input as _t_job
	result == {{
		"message": "fp32 training on the A100-80GB, whose bf16 tensor cores peak ~16× higher (catalog): ~1.6 s steps would take ~100 ms (estimated, same MFU; memory-bound kernels gain less); train in bf16 mixed precision",
		"pointer": "/training/precision",
		"waste": {"gpu_hours": 750, "usd": 1312.5},
	}}
}

test_fp16_on_a_gpu_without_bf16_and_no_step_time if {
	job := {"training": {"precision": "fp32"}, "estimates": {"gpu": "V100-32GB", "mixed_precision": {"precision": "fp16", "peak_ratio": 7.96}}}
	result := findings with input as job
	result == {{
		"message": "fp32 training on the V100-32GB, whose fp16 tensor cores peak ~8.0× higher (catalog); train in fp16 mixed precision",
		"pointer": "/training/precision",
	}}
}

test_quiet_for_other_or_unknown_precision if {
	bf16 := object.union(_t_job, {"training": {"precision": "bf16"}})
	count(findings) == 0 with input as bf16
	unknown := object.union(_t_job, {"training": {"precision": null}})
	count(findings) == 0 with input as unknown
	count(findings) == 0 with input as {}
}

test_quiet_without_tensor_cores if {
	job := object.union(_t_job, {"estimates": {"mixed_precision": {"peak_ratio": 1.5}}})
	count(findings) == 0 with input as job
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _t_job with data.trainlint.params.no_mixed_precision.min_peak_ratio as 20
}

test_fires_on_a_framework_default_of_fp32 if {
	job := object.union(_t_job, {
		"training": {"precision": null},
		"defaults": {"/training/precision": {"value": "fp32", "key": "mixed_precision", "format": "diffusers", "file": "train.sh", "line": 3, "column": 2}},
		"provenance": {"/launcher/entrypoint": {"file": "train.sh", "line": 2, "column": 19}},
	})
	some finding in findings with input as job
	finding.pointer == "/launcher/entrypoint"
	startswith(finding.message, "fp32 training (`mixed_precision` not set: its default) on the A100-80GB")
}

test_a_stated_precision_beats_the_default if {
	job := object.union(_t_job, {
		"training": {"precision": "bf16"},
		"defaults": {"/training/precision": {"value": "fp32", "key": "mixed_precision", "format": "diffusers", "file": "train.sh", "line": 3, "column": 2}},
	})
	count(findings) == 0 with input as job
}
