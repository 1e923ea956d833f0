# METADATA
# title: no-fallback
# description: |
#   Fires once per experimental kernel, optimizer or precision the job turns on
#   (input.features named in params.experimental) that has no declared fallback. Experimental
#   means flash-attn, xformers, liger, fp8 / transformer-engine, custom CUDA extensions, unsloth, Muon,
#   Sophia and the like; switches that select the framework's own implementation
#   (attn_implementation: sdpa, LLaMA-Factory flash_attn: auto) never fire. A fallback is a `#
#   trainlint: fallback.<feature>=<alternative>` annotation (or an x-trainlint fallback block)
#   or one in the code itself (an import guarded by `except ImportError`). The finding points
#   at the key that turns the feature on.
# related_resources:
#   - ref: https://huggingface.co/docs/transformers/main/en/attention_interface
#     description: Transformers attention backends; sdpa is PyTorch's built-in, flash_attention_2 needs the flash-attn wheel.
#   - ref: https://github.com/Dao-AILab/flash-attention#installation-and-features
#     description: flash-attn builds against specific CUDA, PyTorch and GPU architectures.
#   - ref: https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html
#     description: FP8 needs Hopper/Ada GPUs and per-tensor scaling recipes.
# custom:
#   id: TL501
#   severity: warning
#   category: reliability
#   why: |
#     Experimental kernels are compiled for particular CUDA, PyTorch and GPU generations, and
#     new optimizers and fp8 recipes have short track records. When the cluster hands the job
#     another GPU type, a driver update lands, or a loss spike appears, a job with no tested
#     fallback either fails at start (after queueing and loading the model, GPUs held) or
#     needs a code change under pressure. Declaring the fallback records that the plain path
#     exists and has been tried.
#   example: |
#     # sft.yaml
#     model_name_or_path: Qwen/Qwen2.5-7B
#     per_device_train_batch_size: 4
#     max_steps: 1000
#     attn_implementation: flash_attention_2
#     use_liger_kernel: true
#   fix: |
#     # sft.yaml
#     # trainlint: fallback.flash-attn=sdpa fallback.liger=off
#     model_name_or_path: Qwen/Qwen2.5-7B
#     per_device_train_batch_size: 4
#     max_steps: 1000
#     attn_implementation: flash_attention_2
#     use_liger_kernel: true
#   remediation: |
#     Test the job once with the plain implementation (attn_implementation: sdpa, the stock
#     modules instead of Liger/Unsloth, bf16 instead of fp8, AdamW instead of Muon/Sophia) and
#     declare it with `# trainlint: fallback.<feature>=<alternative>`, or guard the import in
#     code with `try: ... except ImportError:`. Remove the name from params.experimental when
#     the organisation considers a feature mature.
package trainlint.rules.no_fallback

import rego.v1

params := data.trainlint.params.no_fallback

findings contains finding if {
	some index, feature in input.features
	feature.name in params.experimental
	not _has_fallback[index]
	value := object.get(params.fallbacks, feature.name, "off")
	finding := {
		"message": concat("", [
			feature.name, " (", object.get(_kind, feature.kind, feature.kind), ") has no declared ",
			"fallback: if it fails to build, import or run on the GPUs the job gets, the run stops ",
			"with them allocated; test the job ", _instead[value == "off"], value, " and declare ",
			"it with `# trainlint: fallback.", feature.name, "=", value, "`",
		]),
		"pointer": concat("/", ["", "features", format_int(index, 10)]),
	}
}

# A fallback annotation, or one the code states (an import guarded by except ImportError).
_has_fallback contains index if {
	some index, feature in input.features
	is_string(feature.fallback)
	trim_space(feature.fallback) != ""
}

_instead := {true: "with it ", false: "with "}

_kind := {
	"kernel": "experimental kernel",
	"extension": "custom CUDA extension built at run time",
	"precision": "experimental precision",
	"optimizer": "experimental optimizer",
}
