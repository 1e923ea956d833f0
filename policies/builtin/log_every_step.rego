# METADATA
# title: log-every-step
# description: |
#   Fires when logging.every_steps is between 1 and max_every_steps on a run of at least
#   min_run_steps steps, or of unknown length. Values below 1 are a fraction of the run, as in
#   Hugging Face, and never fire; on a run of unknown length the message says so and claims no
#   cost. Severity is info: the cost is an assumed per-log overhead (overhead_s_per_log) times
#   the number of logs, not an estimate from the job, and per-step logging is often deliberate
#   on a short debug run.
# related_resources:
#   - ref: https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide
#     description: PyTorch performance tuning guide - avoid unnecessary CPU-GPU synchronization (.item(), .cpu(), print of CUDA tensors)
#   - ref: https://docs.pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
#     description: torch.cuda.set_sync_debug_mode, to find the synchronizing calls a logging step makes
#   - ref: https://huggingface.co/docs/transformers/main/en/main_classes/trainer
#     description: Hugging Face TrainingArguments logging_strategy and logging_steps
# custom:
#   id: TL301
#   severity: info
#   category: logging
#   autofix:
#     safe: true
#     description: logging every step (HF logging_steps, log_interval, a --flag) set to the rule's suggested_every_steps, where the file states the interval as a literal on one line.
#   why: |
#     Logging a metric reads it back to the host: loss.item() blocks the CPU until the GPU has
#     finished the work queued before it, so the CPU can no longer run ahead and queue the next
#     step, and the GPU idles while the host formats the record and hands it to each reporter
#     (W&B, TensorBoard, MLflow). Once per step, that stall is paid thousands of times per run
#     on every rank, and the per-step curve it buys is noise that a 10-step average shows
#     better.
#   example: |
#     # configs/sft.yaml
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_steps: 2000
#     logging_steps: 1
#     report_to: [wandb]
#   fix: |
#     # configs/sft.yaml
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_steps: 2000
#     logging_steps: 10
#     report_to: [wandb]
#   remediation: |
#     Log every 10-100 steps (Hugging Face logging_steps, Lightning log_every_n_steps,
#     log_interval), and keep per-step metrics on the device until they are logged.
package trainlint.rules.log_every_step

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.job

params := data.trainlint.params.log_every_step

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": "/logging/every_steps"}, _waste)
}

_applies if {
	is_number(_every)
	_every >= 1
	_every <= params.max_every_steps
	_long_or_unknown
	_logs_by_steps
}

# HF logging_strategy "epoch" or "no" makes logging_steps irrelevant.
_logs_by_steps if is_null(object.get(input.logging, "strategy", null))

_logs_by_steps if input.logging.strategy == "steps"

_every := input.logging.every_steps

# Run length: the estimate, else the declared step limit.
_steps := input.estimates.run.steps if is_number(input.estimates.run.steps)
else := input.training.max_steps if is_number(input.training.max_steps)
else := input.training.total_steps if is_number(input.training.total_steps)

_steps_basis := fmt.basis(["run.steps"]) if is_number(input.estimates.run.steps)
else := "declared"

_long_or_unknown if _steps >= params.min_run_steps

_long_or_unknown if not _steps

_message := concat("", [
	_logging, " over ", fmt.int(_steps), " steps (", _steps_basis, "): ~",
	fmt.duration(params.overhead_s_per_log), " per log (assumed) adds ~", fmt.duration(_wall_s),
	" to the run", _cost, "; ", _fix,
]) if {
	_applies
	is_number(_steps)
} else := concat("", [
	_logging, "; run length unknown, so its cost is not estimated (~",
	fmt.duration(params.overhead_s_per_log), " per log, assumed); ", _fix,
]) if _applies

_logging := concat("", ["logging every ", fmt.steps(_every)]) if _applies

_fix := concat("", ["log every ", fmt.steps(params.suggested_every_steps), " or more"])

_wall_s := (params.overhead_s_per_log * _steps) / _every if {
	is_number(_every)
	_every > 0
}

_gpu_hours := (_wall_s * job.world_size) / 3600 if is_number(job.world_size)

_usd := _gpu_hours * input.estimates.price_per_gpu_hour if {
	is_number(input.estimates.price_per_gpu_hour)
}

# GPU-hours and dollars travel in `waste` (reports print them); the message names the GPUs.
_cost := concat("", [" on ", fmt.plural(job.world_size, "GPU")]) if {
	is_number(job.world_size)
} else := ""

_waste := {"waste": {"gpu_hours": _gpu_hours, "usd": _usd}} if is_number(_usd)
else := {}
