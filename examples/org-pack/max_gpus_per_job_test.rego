package trainlint.rules.max_gpus_per_job

import rego.v1

_job(gpus) := {"resources": {"world_size": gpus}}

_low := {"max_gpus": 32}

test_fires_over_the_limit if {
	count(findings) == 1 with input as _job(128)
}

test_quiet_at_the_limit if {
	count(findings) == 0 with input as _job(64)
}

test_quiet_when_the_gpu_count_is_unknown if {
	count(findings) == 0 with input as _job(null)
}

test_message_states_both_numbers if {
	job := _job(96)
	some finding in findings with input as job with data.trainlint.params.max_gpus_per_job as _low
	finding.message == "job runs on 96 GPUs, over the 32 one job may use without a capacity review"
	finding.pointer == "/resources/world_size"
}
