# METADATA
# title: oversized-gpu
# description: |
#   Fires when the job uses less than min_utilization of each GPU's memory and a smaller
#   catalog GPU fits it for at least min_savings_usd less per run. Memory use is
#   estimates.memory.utilization, estimated or measured; the savings floor keeps tiny runs
#   from being told to move for cents. The message names the cheapest such GPU type and count,
#   its memory use and both run prices; the waste is the saving.
#   With an uncertain input (an unstated sequence length or GPU count) it fires only when even
#   the highest plausible utilization (estimates.ranges) is under min_utilization.
# related_resources:
#   - ref: https://huggingface.co/docs/transformers/model_memory_anatomy
#     description: Hugging Face, model training anatomy - what occupies GPU memory during training
#   - ref: https://arxiv.org/abs/1910.02054
#     description: Rajbhandari et al., ZeRO - 16 bytes per parameter for mixed-precision Adam and how sharding divides it
# custom:
#   id: TL101
#   severity: warning
#   category: hardware
#   why: |
#     Cloud and cluster GPUs are billed per GPU-hour whether their memory is used or not, and
#     the price of a GPU type tracks its memory: in the built-in catalog an A100-80GB costs
#     ~35% more per hour than an A100-40GB, an H200 ~55% more than an H100. Memory per GPU,
#     not compute, is usually what forces a GPU choice, so a job that fills a fifth of an 80 GB
#     card pays the large-card premium on every hour of the run for nothing. A smaller card
#     that holds the same job with headroom does the same work for less.
#   example: |
#     # run.sh
#     #SBATCH --gres=gpu:8
#     #SBATCH --constraint=a100-80gb
#     srun torchrun --nproc-per-node 8 finetune.py \
#         --model_name_or_path openai-community/gpt2 \
#         --per_device_train_batch_size 8 --max_seq_length 1024 \
#         --max_steps 40000 --bf16
#   fix: |
#     # run.sh
#     #SBATCH --gres=gpu:8
#     #SBATCH --constraint=a100-40gb
#     srun torchrun --nproc-per-node 8 finetune.py \
#         --model_name_or_path openai-community/gpt2 \
#         --per_device_train_batch_size 8 --max_seq_length 1024 \
#         --max_steps 40000 --bf16
#   remediation: |
#     Request the suggested GPU type and count (cluster manifest, SkyPilot accelerators,
#     launcher --nproc_per_node), or grow the micro-batch to use the memory you pay for.
package trainlint.rules.oversized_gpu

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.ranges
import data.trainlint.lib.job

params := data.trainlint.params.oversized_gpu

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": "/resources/gpu/model"}, _waste)
}

_applies if {
	is_number(_utilization)
	ranges.highest("/memory/utilization", _utilization) < params.min_utilization
	is_object(_alternative)
}

_utilization := input.estimates.memory.utilization

_run_usd := input.estimates.run.usd if is_number(input.estimates.run.usd)

# The cheapest alternative that saves at least min_savings_usd (ties: catalog order).
_alternative := [a | some a in _cheaper; a.usd == min([b.usd | some b in _cheaper])][0]

_cheaper := [a |
	some a in input.estimates.alternatives
	is_number(a.usd)
	a.usd <= _run_usd - params.min_savings_usd
	is_string(a.gpu)
	is_number(a.gpus)
	is_number(a.memory_utilization)
	not _not_smaller[a.gpu]
]

# "Oversized" means a card with less memory would do: an alternative whose memory per GPU is
# known to be at least the job's GPU's is faster hardware, not a smaller size.
_not_smaller contains a.gpu if {
	some a in input.estimates.alternatives
	is_number(a.memory_bytes)
	is_number(input.estimates.memory.gpu_bytes)
	a.memory_bytes >= input.estimates.memory.gpu_bytes
}

_message := concat("", [
	_current, " uses ~", ranges.pct_text("/memory/utilization", _utilization), " of GPU memory (",
	fmt.basis(["memory.utilization"]), "); ",
	fmt.int(_alternative.gpus), "× ", _alternative.gpu, " fits (~",
	fmt.pct(_alternative.memory_utilization), " used) for ~", fmt.usd(_alternative.usd),
	" per run instead of ~", fmt.usd(_run_usd),
]) if _applies

_current := concat("", [fmt.int(job.world_size), "× ", _gpu]) if {
	is_number(job.world_size)
} else := _gpu

_gpu := job.gpu if is_string(job.gpu)
else := "the GPU"

# GPU-hours saved; zero when the cheaper option runs longer on more, cheaper GPUs.
_hours_saved := max([input.estimates.run.gpu_hours - _alternative.gpu_hours, 0]) if {
	is_number(input.estimates.run.gpu_hours)
	is_number(_alternative.gpu_hours)
}

_waste := {"waste": {"gpu_hours": _hours_saved, "usd": _run_usd - _alternative.usd}} if {
	is_number(_hours_saved)
} else := {}
