package trainlint.rules.blocking_debug

import rego.v1

_job := {
	"env": {"CUDA_LAUNCH_BLOCKING": "1", "NCCL_DEBUG": "INFO"},
	"logging": {"anomaly_detection": null},
	"estimates": {"run": {"gpu_hours": 200, "usd": 700}},
}

test_cuda_launch_blocking if {
	result := findings with input as _job
	result == {{
		"message": "CUDA_LAUNCH_BLOCKING=1 serializes every kernel launch with the GPU: ~20% slower (assumed); unset CUDA_LAUNCH_BLOCKING outside debugging",
		"pointer": "/env/CUDA_LAUNCH_BLOCKING",
		"waste": {"gpu_hours": 40, "usd": 140},
	}}
}

test_anomaly_detection if {
	job := {"logging": {"anomaly_detection": true}, "estimates": {"run": {"gpu_hours": 10}}}
	result := findings with input as job
	result == {{
		"message": "autograd anomaly detection records a traceback for every op and checks every backward for NaN: ~50% slower (assumed), ~5.0 GPU-h per run; turn it off (set_detect_anomaly(False), detect_anomaly: false) outside debugging",
		"pointer": "/logging/anomaly_detection",
	}}
}

test_both_give_two_findings if {
	job := object.union(_job, {"logging": {"anomaly_detection": true}})
	count(findings) == 2 with input as job
}

test_quiet_when_blocking_is_zero if {
	job := object.union(_job, {"env": {"CUDA_LAUNCH_BLOCKING": "0"}})
	count(findings) == 0 with input as job
}

test_quiet_on_debug_logging_alone if {
	count(findings) == 0 with input as {"env": {"NCCL_DEBUG": "INFO", "TORCH_DISTRIBUTED_DEBUG": "DETAIL"}}
}

test_quiet_when_anomaly_detection_off if {
	count(findings) == 0 with input as {"logging": {"anomaly_detection": false}}
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_fraction_comes_from_params if {
	some f in findings with input as _job with data.trainlint.params.blocking_debug.env_slowdown_fraction as 0.5
	f.waste == {"gpu_hours": 100, "usd": 350}
}
