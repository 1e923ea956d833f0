# METADATA
# title: no-checkpoint-long-run
# description: |
#   Fires when a run estimated to take longer than max_hours_without_checkpoint saves no
#   checkpoint before it ends. That is when checkpointing is off (strategy in
#   no_checkpoint_strategies), no save is planned, the save interval is at least the run's
#   length, or the job saves per epoch on a single-epoch run. The waste is the expected loss,
#   kept simple: the run's GPU-hours x the chance of an interruption during the run (run hours
#   x GPUs / gpu_mtbf_hours, the per-GPU MTBF of the estimate parameters, capped at 1) x one
#   half, since on average a failure comes half-way through.
#   With an uncertain input it fires only when even the shortest plausible run
#   (estimates.ranges) is longer than max_hours_without_checkpoint; the suggested interval uses
#   the slowest plausible step.
# related_resources:
#   - ref: https://doi.org/10.1016/j.future.2004.11.016
#     description: Daly (2006), a higher order estimate of the optimum checkpoint interval for restart dumps
#   - ref: https://arxiv.org/abs/2407.21783
#     description: The Llama 3 Herd of Models, section 3.3.4 (466 job interruptions in 54 days of pre-training)
# custom:
#   id: TL203
#   severity: warning
#   category: reliability
#   why: |
#     A run that saves nothing until it ends loses all of its progress to any failure: a GPU,
#     node or network fault restarts it from step 0, and the restart pays again for every
#     GPU-hour spent so far. Failures grow with the GPU count: a job's mean time between
#     failures is the per-GPU figure divided by its GPUs (Llama 3 pre-training saw an
#     interruption every ~3 hours on 16,384 GPUs), so the longer and wider the run, the
#     likelier it loses hours of work.
#   example: |
#     # train.yaml (Hugging Face Trainer, Llama 3 8B on 64 H100s)
#     # trainlint: gpu=H100 gpus=64
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_seq_length: 8192
#     per_device_train_batch_size: 4
#     max_steps: 50000
#     save_strategy: "no"
#   fix: |
#     # train.yaml
#     # trainlint: gpu=H100 gpus=64
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_seq_length: 8192
#     per_device_train_batch_size: 4
#     max_steps: 50000
#     save_strategy: steps
#     save_steps: 2000
#     save_total_limit: 3
#   remediation: |
#     Save a resumable checkpoint periodically (save_steps, save_interval, every_n_train_steps,
#     checkpoint.interval) at least every few hours (the message suggests an interval), keep
#     the last few, and make the job resume from the latest one on restart.
package trainlint.rules.no_checkpoint_long_run

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.ranges
import data.trainlint.lib.job

params := data.trainlint.params.no_checkpoint_long_run

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": _pointer}, _waste)
}

_applies if {
	is_number(_run.hours)
	ranges.lowest("/run/hours", _run.hours) > params.max_hours_without_checkpoint
	_no_periodic
}

_run := input.estimates.run

_ckpt := input.estimates.checkpoint

_strategy := lower(input.checkpoint.strategy) if is_string(input.checkpoint.strategy)

# Why nothing is saved during the run, with the setting that says so; the first that holds.
_no_periodic if _why

_why := concat("", ["checkpointing off (strategy \"", input.checkpoint.strategy, "\")"]) if {
	_strategy in params.no_checkpoint_strategies
} else := concat("", [
	"checkpoint every ", fmt.steps(_ckpt.every_steps), " on a ", fmt.int(_run.steps),
	"-step run",
]) if {
	is_number(_ckpt.every_steps)
	is_number(_run.steps)
	_ckpt.every_steps >= _run.steps
} else := "checkpoint per epoch on a single-epoch run" if {
	_strategy == "epoch"
	is_number(input.training.epochs)
	input.training.epochs <= 1
} else := "no checkpoint planned" if {
	is_number(_ckpt.saves)
	_ckpt.saves == 0
}

_pointer := "/checkpoint/strategy" if {
	_strategy in params.no_checkpoint_strategies
} else := "/checkpoint/every_steps" if {
	is_number(_ckpt.every_steps)
} else := "/checkpoint/strategy" if {
	is_string(_strategy)
} else := "/checkpoint"

_message := concat("", [
	_why, ": nothing is saved before the end of a ~", ranges.hours_text("/run/hours", _run.hours),
	" run (", fmt.basis(["run.hours"]), ")", _gpus, ", so a failure restarts it from step 0",
	_risk, "; ", _fix,
]) if _applies

_gpus := concat("", [" on ", fmt.plural(job.world_size, "GPU")]) if is_number(job.world_size)
else := ""

_mtbf := data.trainlint.params.estimate.gpu_mtbf_hours

# Chance of an interruption during the run: run hours x GPUs / per-GPU MTBF, at most 1.
_p_fail := min([1, (_run.hours * job.world_size) / _mtbf]) if {
	_applies
	is_number(job.world_size)
	is_number(_mtbf)
	_mtbf > 0
}

_risk := concat("", [
	" (~", fmt.pct(_p_fail), " chance of an interruption at an assumed ",
	fmt.int(_mtbf), " h MTBF per GPU; expected loss half the run)",
]) if is_number(_p_fail)
else := ""

_fix := concat("", ["save at least every ", fmt.steps(_window_steps), " (~", fmt.duration(params.max_hours_without_checkpoint * 3600), ")"]) if {
	is_number(_window_steps)
} else := concat("", ["save at least every ", fmt.duration(params.max_hours_without_checkpoint * 3600)])

# Steps in the window at the slowest plausible step time, so the interval keeps within it.
_window_steps := max([1, floor((params.max_hours_without_checkpoint * 3600) / _slowest_step_s)]) if {
	is_number(input.estimates.step_time_s)
	input.estimates.step_time_s > 0
}

_slowest_step_s := ranges.highest("/step_time_s", input.estimates.step_time_s)

_gpu_hours := (_run.gpu_hours * _p_fail) / 2 if {
	is_number(_p_fail)
	is_number(_run.gpu_hours)
}

_usd := (_run.usd * _p_fail) / 2 if {
	is_number(_gpu_hours)
	is_number(_run.usd)
}

_waste := {"waste": {"gpu_hours": _gpu_hours, "usd": _usd}} if is_number(_usd)
else := {}
