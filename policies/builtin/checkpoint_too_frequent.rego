# METADATA
# title: checkpoint-too-frequent
# description: |
#   Fires when saving checkpoints takes more than max_overhead_fraction of the run
#   (estimates.checkpoint.overhead_fraction). That fraction is save time / (interval x step
#   time + save time). The message gives the interval, the save time and checkpoint size, the
#   step time, the share of the run spent saving and an interval that meets the threshold;
#   waste is the GPU time spent saving.
#   With an uncertain input (an unstated sequence length or GPU count, the MFU band) it fires
#   only when even the lowest plausible overhead (estimates.ranges) is above the threshold; the
#   message gives the range when it is wide.
# related_resources:
#   - ref: https://doi.org/10.1145/361147.361115
#     description: Young (1974), a first order approximation to the optimum checkpoint interval, sqrt(2 x save time x MTBF)
#   - ref: https://doi.org/10.1016/j.future.2004.11.016
#     description: Daly (2006), a higher order estimate of the optimum checkpoint interval for restart dumps
#   - ref: https://docs.pytorch.org/tutorials/recipes/distributed_async_checkpoint_recipe.html
#     description: PyTorch, asynchronous saving with torch.distributed.checkpoint (async_save)
#   - ref: https://huggingface.co/docs/transformers/main/en/main_classes/trainer
#     description: Hugging Face Trainer and TrainingArguments (save_strategy, save_steps, save_only_model)
# custom:
#   id: TL201
#   severity: warning
#   category: checkpointing
#   autofix:
#     safe: false
#     description: the checkpoint interval set to the estimate's suggested interval (a crash loses more steps).
#   why: |
#     A synchronous save stops every GPU of the job while the weights, the optimizer state and
#     the fp32 master weights (~14 bytes per parameter with mixed-precision Adam, ~112 GB for
#     an 8B model) are written to storage; at 1 GB/s that is ~2 minutes of idle GPUs per save.
#     Saving every few steps of a few seconds each turns most of the run into waiting on the
#     filesystem, and every idle GPU-hour is billed. Young and Daly show the interval that
#     minimises lost time grows with the square root of the save time times the mean time
#     between failures, which for a single-node job is hours, not steps.
#   example: |
#     # sft.yaml
#     # trainlint: gpu=H100 gpus=8
#     model_name_or_path: Qwen/Qwen2.5-7B
#     max_seq_length: 4096
#     per_device_train_batch_size: 2
#     gradient_accumulation_steps: 8
#     max_steps: 3000
#     save_strategy: steps
#     save_steps: 20
#   fix: |
#     # sft.yaml
#     # trainlint: gpu=H100 gpus=8
#     model_name_or_path: Qwen/Qwen2.5-7B
#     max_seq_length: 4096
#     per_device_train_batch_size: 2
#     gradient_accumulation_steps: 8
#     max_steps: 3000
#     save_strategy: steps
#     save_steps: 1000
#     save_total_limit: 2
#   remediation: |
#     Save less often (the suggested interval keeps the overhead under the threshold), save
#     asynchronously (torch.distributed.checkpoint async_save, DeepSpeed/Lightning async
#     checkpoint IO), or skip the optimizer state on intermediate saves.
package trainlint.rules.checkpoint_too_frequent

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.ranges

# max_overhead_fraction also caps the overhead the suggested interval aims for (the
# estimator's params.estimate.target_checkpoint_overhead, 0.02; estimate.RuleLimits reads this
# param): an org that lowers it lowers the suggestion's target too, so the suggestion meets it.
params := data.trainlint.params.checkpoint_too_frequent

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": "/checkpoint/every_steps"}, _waste)
}

# Even the lowest plausible overhead (the longest steps: longest sequences, lowest MFU) is over.
_applies if {
	is_number(_ckpt.overhead_fraction)
	ranges.lowest("/checkpoint/overhead_fraction", _ckpt.overhead_fraction) > params.max_overhead_fraction
}

_ckpt := input.estimates.checkpoint

_message := concat("", [
	_interval, ": ", _saving, " is ~", ranges.pct_text("/checkpoint/overhead_fraction", _ckpt.overhead_fraction), " of the run (",
	fmt.basis(["checkpoint.save_s", "step_time_s"]), ")", _cost, "; ", _fix,
]) if _applies

_interval := concat("", ["checkpoint every ", fmt.steps(_ckpt.every_steps)]) if {
	is_number(_ckpt.every_steps)
} else := concat("", ["checkpoint every ", fmt.steps(input.checkpoint.every_steps)]) if {
	is_number(input.checkpoint.every_steps)
	input.checkpoint.every_steps >= 1
} else := "checkpointing"

_saving := concat("", [_save, " against ~", ranges.duration_text("/step_time_s", input.estimates.step_time_s), " steps"]) if {
	is_number(_ckpt.save_s)
	is_number(input.estimates.step_time_s)
} else := _save

_save := concat("", ["~", fmt.duration(_ckpt.save_s), " to save ", fmt.bytes(_ckpt.size_bytes)]) if {
	is_number(_ckpt.save_s)
	is_number(_ckpt.size_bytes)
} else := concat("", ["~", fmt.duration(_ckpt.save_s), " per save"]) if {
	is_number(_ckpt.save_s)
} else := "saving"

# The cost itself travels in `waste` (reports print it); it is spelled out here only when
# the price is unknown, so there is no waste object to carry the GPU-hours.
_cost := "" if {
	is_number(_ckpt.overhead_gpu_hours)
	is_number(_ckpt.overhead_usd)
} else := concat("", ["; ~", fmt.gpu_hours(_ckpt.overhead_gpu_hours), " per run"]) if {
	is_number(_ckpt.overhead_gpu_hours)
} else := ""

# A suggestion as long as the run means periodic saves do not pay for themselves here.
_fix := "save only at the end of the run" if {
	input.checkpoint.async == true
	is_number(_ckpt.suggested_every_steps)
	is_number(input.estimates.run.steps)
	_ckpt.suggested_every_steps >= input.estimates.run.steps
} else := "save only at the end of the run, or asynchronously" if {
	is_number(_ckpt.suggested_every_steps)
	is_number(input.estimates.run.steps)
	_ckpt.suggested_every_steps >= input.estimates.run.steps
} else := concat("", [
	"the background write outlasts the interval: save every ≥ ",
	fmt.steps(_ckpt.suggested_every_steps),
]) if {
	input.checkpoint.async == true
	is_number(_ckpt.suggested_every_steps)
} else := concat("", ["save every ≥ ", fmt.steps(_ckpt.suggested_every_steps)]) if {
	is_number(_ckpt.suggested_every_steps)
} else := "save less often" if {
	input.checkpoint.async == true
} else := "save less often or asynchronously"

_waste := {"waste": {"gpu_hours": _ckpt.overhead_gpu_hours, "usd": _ckpt.overhead_usd}} if {
	is_number(_ckpt.overhead_gpu_hours)
	is_number(_ckpt.overhead_usd)
} else := {}
