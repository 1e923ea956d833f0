# METADATA
# title: does-not-fit
# description: |
#   Fires when the job's memory per GPU (estimates.memory.utilization) is above
#   max_utilization of the GPU's memory, or when a fresh probe measurement ran out of memory
#   at the job's world size. The estimate sums weights, gradients, optimizer states,
#   activations and overhead. The message gives that breakdown, the GPU and the cheapest fixes
#   the estimates know: a configuration change that fits (estimates.memory_fixes: ZeRO-3/FSDP,
#   activation checkpointing, a smaller micro-batch) and a catalog GPU that fits.
#   With an uncertain input it fires only when even the lowest plausible utilization
#   (estimates.ranges) is above max_utilization; the message gives the range when it is wide.
# related_resources:
#   - ref: https://arxiv.org/abs/1910.02054
#     description: ZeRO (Rajbhandari et al. 2020), memory of model states per GPU by stage
#   - ref: https://arxiv.org/abs/2205.05198
#     description: Korthikanti et al. 2022, activation memory per layer and recomputation
#   - ref: https://huggingface.co/docs/transformers/perf_train_gpu_one
#     description: Hugging Face, methods to fit training on one GPU (batch size, checkpointing)
# custom:
#   id: TL102
#   severity: error
#   category: resources
#   why: |
#     A job that needs more memory per GPU than the GPU has ends with a CUDA out-of-memory
#     error at its first forward or backward pass, before a single optimizer step. The
#     allocation, queue wait and startup (loading weights, compiling, NCCL setup) are paid for
#     and produce nothing, and on a shared cluster the resubmission waits in the queue again.
#     Mixed-precision Adam alone needs 16 bytes per parameter: a 7B model's 112 GB of model
#     states do not fit one 80 GB GPU before a single activation is stored.
#   example: |
#     # train.yaml (Hugging Face Trainer on one A100-80GB)
#     # trainlint: gpu=A100-80GB gpus=1
#     model_name_or_path: meta-llama/Llama-2-7b-hf
#     max_seq_length: 2048
#     per_device_train_batch_size: 8
#     bf16: true
#   fix: |
#     # train.yaml (8x A100-80GB, model states sharded with FSDP)
#     # trainlint: gpu=A100-80GB gpus=8
#     model_name_or_path: meta-llama/Llama-2-7b-hf
#     max_seq_length: 2048
#     per_device_train_batch_size: 2
#     gradient_checkpointing: true
#     bf16: true
#     fsdp: full_shard auto_wrap
#   remediation: |
#     Shard model states over the data-parallel GPUs (DeepSpeed ZeRO-3, FSDP FULL_SHARD),
#     recompute activations (gradient_checkpointing), lower the micro-batch and accumulate
#     more gradients to keep the global batch, offload optimizer states to the CPU, train an
#     adapter (LoRA/QLoRA) instead of every weight, or move to a GPU with more memory.
package trainlint.rules.does_not_fit

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.ranges
import data.trainlint.lib.job

# max_utilization also bounds what the estimator suggests (estimate.RuleLimits reads it): the
# memory fixes shown here and TL101's cheaper GPUs use at most min(1 - params.estimate.headroom,
# max_utilization) of each GPU, so a suggestion never trips this rule.
params := data.trainlint.params.does_not_fit

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

# No waste: the run never starts; what a failed launch burns (queue, startup) is unknown.
findings contains {"message": _message, "pointer": _pointer} if _applies

_applies if _estimated

_applies if _measured

_mem := input.estimates.memory

# Even the lowest plausible memory (shortest sequences, most GPUs to shard over) does not fit.
_estimated if {
	is_number(_mem.utilization)
	ranges.lowest("/memory/utilization", _mem.utilization) > params.max_utilization
}

# A fresh probe at the job's world size ran out of memory.
_measured if {
	input.measurements.fresh == true
	is_number(job.world_size)
	input.measurements.world_sizes[format_int(job.world_size, 10)].oom == true
}

_message := concat("", [_what, "; ", _fix, _alternative, _launch]) if _applies

_what := concat("", [
	"out of memory in the probe at ", fmt.plural(job.world_size, "GPU"), " (measured)", _estimate_too,
]) if {
	_measured
} else := concat("", [
	"~", ranges.gpu_memory_text("/memory/total_bytes", _mem.total_bytes), " per GPU (", fmt.basis(["memory.total_bytes"]), _breakdown,
	") is ~", ranges.pct_text("/memory/utilization", _mem.utilization), " of the ", fmt.gpu_memory(_mem.gpu_bytes), " of each ", _gpu,
	": out of memory before the first step",
]) if {
	is_number(_mem.total_bytes)
	is_number(_mem.gpu_bytes)
} else := concat("", [
	"memory per GPU is ~", fmt.pct(_mem.utilization), " of each ", _gpu, " (",
	fmt.basis(["memory.utilization"]), "): out of memory before the first step",
]) if {
	is_number(_mem.utilization)
}

_estimate_too := concat("", [
	"; estimated ~", fmt.gpu_memory(_mem.total_bytes), " per GPU (", _breakdown_only, ") against ",
	fmt.gpu_memory(_mem.gpu_bytes), " of each ", _gpu,
]) if {
	is_number(_mem.total_bytes)
	is_number(_mem.gpu_bytes)
} else := ""

_gpu := job.gpu if is_string(job.gpu)
else := "GPU"

_parts := [concat(" ", [name, fmt.gpu_memory(_mem[key])]) |
	some part in [
		{"name": "weights", "key": "weights_bytes"},
		{"name": "gradients", "key": "gradients_bytes"},
		{"name": "optimizer", "key": "optimizer_bytes"},
		{"name": "activations", "key": "activations_bytes"},
		{"name": "overhead", "key": "overhead_bytes"},
	]
	is_number(_mem[part.key])
	name := part.name
	key := part.key
]

_breakdown := concat("", [": ", concat(", ", _parts)]) if {
	count(_parts) > 0
} else := ""

_breakdown_only := concat(", ", _parts) if {
	count(_parts) > 0
} else := "breakdown unknown"

_fixes := [f |
	some f in input.estimates.memory_fixes
	is_string(f.change)
	is_number(f.total_bytes)
	is_number(f.utilization)
]

_first_fix := _fixes[0] if count(_fixes) > 0

_change_names := {
	"zero3": "ZeRO-3 / FSDP full sharding",
	"recompute": "activation checkpointing",
	"zero3+recompute": "ZeRO-3 / FSDP full sharding with activation checkpointing",
}

_change := concat("", [
	"micro-batch ", fmt.int(_first_fix.micro_batch_size),
	" (accumulating more gradients keeps the global batch)",
]) if {
	_first_fix.change == "micro_batch"
	is_number(_first_fix.micro_batch_size)
} else := _change_names[_first_fix.change]

_fix := concat("", [
	_change, " brings it to ~", fmt.gpu_memory(_first_fix.total_bytes), " (~",
	fmt.pct(_first_fix.utilization), ")",
]) if {
	is_string(_change)
} else := "shard model states (ZeRO-3 / FSDP), recompute activations, lower the micro-batch or offload the optimizer"

_alternatives := [a |
	some a in input.estimates.alternatives
	is_string(a.gpu)
	is_number(a.gpus)
	is_number(a.memory_utilization)
]

_alternative := concat("", [
	"; or ", fmt.int(_alternatives[0].gpus), "× ", _alternatives[0].gpu, " fits (~",
	fmt.pct(_alternatives[0].memory_utilization), ")", _alt_cost,
]) if {
	count(_alternatives) > 0
} else := ""

_alt_cost := concat("", [" for ~", fmt.usd(_alternatives[0].usd), " per run"]) if {
	is_number(_alternatives[0].usd)
} else := ""

_launch := "; the GPU-hours a failed launch burns (queue, startup) are unknown"

_pointer := "/training/micro_batch_size" if {
	_first_fix.change == "micro_batch"
} else := "/resources/gpu/model"
