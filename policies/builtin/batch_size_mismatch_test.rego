package trainlint.rules.batch_size_mismatch

import rego.v1

_batch_job(glob, micro, accum, world) := {
	"training": {"global_batch_size": glob, "micro_batch_size": micro, "grad_accum_steps": accum},
	"resources": {"world_size": world},
}

test_deepspeed_batch_that_does_not_add_up if {
	result := findings with input as _batch_job(512, 4, 8, 8)
	result == {{
		"message": "global batch 512 is not micro-batch 4 x accumulation 8 x 8 data-parallel ranks (256): the framework stops at start-up or trains with another batch than the one written",
		"pointer": "/training/global_batch_size",
	}}
}

test_model_parallel_ranks_are_not_replicas if {
	job := object.union(_batch_job(64, 1, 8, 32), {"training": {"parallelism": {"tensor": 4}}})
	count(findings) == 0 with input as job
	wrong := object.union(_batch_job(64, 1, 8, 32), {"training": {"parallelism": {"tensor": 2}}})
	count(findings) == 1 with input as wrong
}

test_quiet_when_it_adds_up if {
	count(findings) == 0 with input as _batch_job(256, 4, 8, 8)
}

test_a_derived_value_never_disagrees if {
	job := object.union(_batch_job(512, 4, 8, 8), {"derived": ["/training/grad_accum_steps"]})
	count(findings) == 0 with input as job
}

test_quiet_when_one_is_unknown if {
	count(findings) == 0 with input as {"training": {"global_batch_size": 512, "micro_batch_size": 4}, "resources": {"world_size": 8}}
	count(findings) == 0 with input as {}
}

test_an_impossible_layout_is_left_to_tl108 if {
	job := object.union(_batch_job(512, 4, 8, 8), {"training": {"parallelism": {"tensor": 3}}})
	count(findings) == 0 with input as job
}
