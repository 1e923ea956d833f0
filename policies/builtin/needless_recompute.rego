# METADATA
# title: needless-recompute
# description: |
#   Fires when the job uses full activation checkpointing (recomputation) although it would
#   fit in at most max_utilization_without_recompute of the GPU's memory without it. The
#   memory figure is estimates.memory.utilization_without_recompute: the job would fit with
#   headroom without recomputing. The message gives both memory figures, the share of the step
#   the second forward pass costs and, as waste, that share of the run's GPU-hours and
#   dollars.
#   With an uncertain input it fires only when even the highest plausible memory without
#   recompute (estimates.ranges) is within max_utilization_without_recompute.
# related_resources:
#   - ref: https://arxiv.org/abs/1604.06174
#     description: Chen et al. 2016, Training Deep Nets with Sublinear Memory Cost (gradient checkpointing)
#   - ref: https://arxiv.org/abs/2205.05198
#     description: Korthikanti et al. 2022, full recomputation adds a forward pass (8N vs 6N FLOPs per token)
#   - ref: https://huggingface.co/docs/transformers/perf_train_gpu_one#gradient-checkpointing
#     description: Hugging Face, gradient checkpointing slows training by about 20%
# custom:
#   id: TL107
#   severity: warning
#   category: performance
#   autofix:
#     safe: false
#     description: activation checkpointing (gradient_checkpointing) set to false (memory per GPU grows to the estimate the message states).
#   why: |
#     Full activation checkpointing trades compute for memory: it drops activations in the
#     forward pass and re-runs each layer's forward during backward. Each step then runs the
#     forward pass twice: about 8·N instead of 6·N FLOPs per token, a third more compute,
#     roughly a quarter of every compute-bound step. That is worth it only when the
#     activations would not fit otherwise; when the job fits comfortably without it, the extra
#     forward is a quarter of the run's GPU-hours spent for nothing.
#   example: |
#     # train.yaml (Hugging Face Trainer; GPT-2 124M on 8x A100-80GB)
#     # trainlint: gpu=A100-80GB gpus=8
#     model_name_or_path: gpt2
#     max_seq_length: 1024
#     per_device_train_batch_size: 8
#     gradient_checkpointing: true
#   fix: |
#     # train.yaml
#     # trainlint: gpu=A100-80GB gpus=8
#     model_name_or_path: gpt2
#     max_seq_length: 1024
#     per_device_train_batch_size: 8
#     gradient_checkpointing: false
#   remediation: |
#     Turn activation checkpointing off (gradient_checkpointing: false,
#     fsdp_activation_checkpointing: false, activation_checkpointing: false), or spend the
#     freed memory on a larger micro-batch; selective recomputation (attention only) is the
#     middle ground when memory is tight.
package trainlint.rules.needless_recompute

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.ranges
import data.trainlint.lib.job

# max_utilization_without_recompute is this rule's own margin, not the estimator's headroom
# (a suggested GPU or memory fix may use up to 1 - params.estimate.headroom, 90%): turning
# recomputation off is advised only when the job would keep a wider margin.
params := data.trainlint.params.needless_recompute

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": _pointer}, _waste)
}

_mem := input.estimates.memory

_rc := input.estimates.recompute

_applies if {
	_rc.mode == "full"
	is_number(_mem.utilization_without_recompute)
	ranges.highest("/memory/utilization_without_recompute", _mem.utilization_without_recompute) <= params.max_utilization_without_recompute
}

_message := concat("", [
	"full activation recomputation is on, but the job fits without it: ", _fit, " without recompute (",
	fmt.basis(["memory.utilization_without_recompute"]), ")", _overhead,
	"; turn activation checkpointing off or spend the memory on a larger micro-batch",
]) if _applies

_fit := concat("", [
	"~", fmt.gpu_memory(_mem.total_bytes), " per GPU becomes ~",
	fmt.gpu_memory(_mem.total_without_recompute_bytes), " (~",
	fmt.pct(_mem.utilization_without_recompute), " of the ", fmt.gpu_memory(_mem.gpu_bytes), " of each ",
	_gpu, ")",
]) if {
	is_number(_mem.total_without_recompute_bytes)
	is_number(_mem.gpu_bytes)
	is_number(_mem.total_bytes)
} else := concat("", ["~", fmt.pct(_mem.utilization_without_recompute), " of GPU memory"]) if {
	is_number(_mem.utilization_without_recompute)
}

_gpu := job.gpu if is_string(job.gpu)
else := "GPU"

_overhead := concat("", [
	"; the second forward pass is ~", fmt.pct(_rc.overhead_fraction), " of each step", _cost,
]) if {
	is_number(_rc.overhead_fraction)
} else := ""

_waste := {"waste": {"gpu_hours": _rc.overhead_gpu_hours, "usd": _rc.overhead_usd}} if {
	is_number(_rc.overhead_gpu_hours)
	is_number(_rc.overhead_usd)
} else := {}

_cost := "" if {
	is_object(_waste.waste)
} else := concat("", [", ~", fmt.gpu_hours(_rc.overhead_gpu_hours), " per run"]) if {
	is_number(_rc.overhead_gpu_hours)
} else := ""

_pointer := "/training/recompute" if {
	is_object(input.provenance["/training/recompute"])
} else := "/training/activation_checkpointing"
