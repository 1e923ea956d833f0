package trainlint.rules.impossible_parallelism

import rego.v1

_layout_job(parallelism, world) := {"training": {"parallelism": parallelism}, "resources": {"world_size": world}}

test_megatron_175b_on_one_node if {
	result := findings with input as _layout_job({"tensor": 8, "pipeline": 16}, 8)
	result == {{
		"message": "TP 8 x PP 16 needs 128 GPUs, but the launch starts 8: the job cannot start",
		"pointer": "/training/parallelism/tensor",
	}}
}

test_a_product_that_does_not_divide_the_world if {
	some f in findings with input as _layout_job({"tensor": 8, "pipeline": 3}, 32)
	f.message == "TP 8 x PP 3 needs a multiple of 24 GPUs, but the launch starts 32: the job cannot start"
}

test_context_parallel_counts if {
	some f in findings with input as _layout_job({"tensor": 2, "context": 4}, 4)
	startswith(f.message, "TP 2 x CP 4 needs 8 GPUs")
}

test_expert_layout if {
	some f in findings with input as _layout_job({"tensor": 1, "pipeline": 4, "expert": 8}, 8)
	f.pointer == "/training/parallelism/expert"
	startswith(f.message, "EP 8 x PP 4 needs 32 GPUs")
}

test_quiet_when_the_layout_fits if {
	count(findings) == 0 with input as _layout_job({"tensor": 8, "pipeline": 16}, 256)
	count(findings) == 0 with input as _layout_job({"tensor": 2, "pipeline": 2, "expert": 4}, 16)
}

test_quiet_without_a_world_size if {
	count(findings) == 0 with input as {"training": {"parallelism": {"tensor": 8, "pipeline": 16}}}
}

test_quiet_without_model_parallelism if {
	count(findings) == 0 with input as _layout_job({"tensor": 1}, 3)
	count(findings) == 0 with input as {}
}
