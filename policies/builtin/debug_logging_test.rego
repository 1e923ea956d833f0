package trainlint.rules.debug_logging

import rego.v1

_job := {
	"env": {"NCCL_DEBUG": "INFO", "TORCH_DISTRIBUTED_DEBUG": "detail", "TORCH_CPP_LOG_LEVEL": "WARNING", "PATH": "/bin"},
	"logging": {"level": "Debug"},
	"estimates": {"run": {"gpu_hours": 310, "usd": 1240}},
}

test_one_finding_per_setting if {
	result := findings with input as _job
	{f.pointer | some f in result} == {"/env/NCCL_DEBUG", "/env/TORCH_DISTRIBUTED_DEBUG", "/logging/level"}
}

test_env_message_and_waste if {
	some f in findings with input as _job
	f.pointer == "/env/NCCL_DEBUG"
	f == {
		"message": "NCCL_DEBUG=INFO turns on debug logging: ~2.0% of the run (assumed); unset NCCL_DEBUG outside debugging",
		"pointer": "/env/NCCL_DEBUG",
		"waste": {"gpu_hours": 6.2, "usd": 24.8},
	}
}

test_log_level_message_without_cost if {
	result := findings with input as {"logging": {"level": "DETAIL"}}
	result == {{
		"message": "log level 'DETAIL' turns on debug logging: ~2.0% of the run (assumed); log at info level outside debugging",
		"pointer": "/logging/level",
	}}
}

test_trace_and_cpp_info if {
	result := findings with input as {"env": {"NCCL_DEBUG": "trace", "TORCH_CPP_LOG_LEVEL": "INFO"}}
	{f.pointer | some f in result} == {"/env/NCCL_DEBUG", "/env/TORCH_CPP_LOG_LEVEL"}
}

test_quiet_on_production_settings if {
	job := {"env": {"NCCL_DEBUG": "WARN", "TORCH_DISTRIBUTED_DEBUG": "OFF"}, "logging": {"level": "info"}}
	count(findings) == 0 with input as job
}

test_quiet_on_redacted_and_null if {
	job := {"env": {"NCCL_DEBUG": "<redacted>"}, "logging": {"level": null}}
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_levels_come_from_params if {
	env := {"NCCL_DEBUG": ["WARN"]}
	result := findings with input as {"env": {"NCCL_DEBUG": "WARN"}} with data.trainlint.params.debug_logging.env as env
	count(result) == 1
}

test_framework_debug_levels if {
	job := {"env": {"RAY_LOGGING_LEVEL": "debug", "TRANSFORMERS_VERBOSITY": "DEBUG", "RAY_BACKEND_LOG_LEVEL": "trace", "NCCL_DEBUG_SUBSYS": "ALL"}}
	result := findings with input as job
	{f.pointer | some f in result} == {"/env/RAY_LOGGING_LEVEL", "/env/TRANSFORMERS_VERBOSITY", "/env/RAY_BACKEND_LOG_LEVEL"}
}
