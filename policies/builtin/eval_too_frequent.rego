# METADATA
# title: eval-too-frequent
# description: |
#   Fires when evaluation runs every 1 to min_eval_every_steps - 1 steps on a run of at least
#   min_run_steps steps, or when Megatron's stated --eval-iters make evaluation cost at least
#   max_overhead_fraction of the training time (eval_iters forward-only batches, a third of a
#   training step each); the message gives the number of evaluations per run. Where no file
#   states the strategy or the interval, the framework's default counts (input.defaults):
#   Hugging Face TrainingArguments evaluate by steps only with eval_strategy "steps" (the
#   default is "no"), and there eval_steps defaults to logging_steps. The cost of one
#   evaluation is not known from the configuration: it is assumed to be eval_cost_steps
#   training steps (the message says "assumed") unless --eval-iters states it, and the waste
#   is the evaluations beyond one every suggested interval.
# related_resources:
#   - ref: https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.eval_steps
#     description: TrainingArguments eval_strategy and eval_steps (defaults to logging_steps)
#   - ref: https://lightning.ai/docs/pytorch/stable/common/trainer.html#val-check-interval
#     description: Lightning Trainer val_check_interval
# custom:
#   id: TL305
#   severity: warning
#   category: performance
#   why: |
#     An evaluation pass costs about as much as several training steps: the whole evaluation
#     set runs through the model, often on fewer GPUs and with generation, metrics and
#     logging, while the training GPUs wait. Every 10 steps on a 20,000-step run is 2,000
#     evaluations; if each costs 10 training steps, evaluation doubles the run's GPU time,
#     when a loss curve sampled every few hundred steps shows the same trend.
#   example: |
#     # train.yaml
#     # Hugging Face Trainer
#     max_steps: 20000
#     eval_strategy: steps
#     eval_steps: 10
#   fix: |
#     # train.yaml
#     max_steps: 20000
#     eval_strategy: steps
#     eval_steps: 500
#   remediation: |
#     Evaluate every few hundred steps (eval_steps, val_check_interval, eval_interval), or on
#     a smaller evaluation subset (max_eval_samples, limit_val_batches, eval_iters); watch
#     the training loss in between.
package trainlint.rules.eval_too_frequent

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.job

params := data.trainlint.params.eval_too_frequent

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": _pointer}, _waste)
}

_applies if {
	is_number(_every)
	_every >= 1
	_too_often
	is_number(_steps)
	_steps >= params.min_run_steps
}

_too_often if _every < params.min_eval_every_steps

# Megatron's --eval-iters states the cost: that many forward-only batches per evaluation.
_too_often if {
	is_number(_iters)
	_cost / _every >= params.max_overhead_fraction
}

# Forward only is about a third of a training step (2 of the 6 FLOPs per parameter and
# token: Kaplan et al. 2020, Narayanan et al. 2021); without --eval-iters, the assumption.
_iters := input.eval.iters if {
	is_number(input.eval.iters)
	input.eval.iters > 0
}

_cost := _iters / 3 if is_number(_iters)
else := params.eval_cost_steps

# The interval to suggest: min_eval_every_steps, or wider where the stated cost needs it.
_target := wider if {
	is_number(_iters)
	wider := ceil(_cost / params.max_overhead_fraction)
	wider > params.min_eval_every_steps
} else := params.min_eval_every_steps

# The stated strategy, else the framework's default (HF TrainingArguments: "no").
_strategy := lower(input.eval.strategy) if is_string(input.eval.strategy)
else := input.defaults["/eval/strategy"].value if is_string(input.defaults["/eval/strategy"].value)

_by_steps if _strategy == "steps"

# Without a strategy, stated or default, a format evaluates at its interval.
_by_steps if not _strategy

_declared := input.eval.every_steps if {
	is_number(input.eval.every_steps)
	_by_steps
}

# The framework's default interval is the logging interval (HF: eval_steps is logging_steps).
_from_logging if {
	not is_number(input.eval.every_steps)
	_strategy == "steps"
	input.defaults["/eval/every_steps"].same_as == "/logging/every_steps"
	is_number(input.logging.every_steps)
}

_raw := _declared if is_number(_declared)
else := input.logging.every_steps if _from_logging

# Below 1 it is a share of the run (Hugging Face): ceil(share x steps).
_every := _raw if {
	is_number(_raw)
	_raw >= 1
} else := max([1, ceil(_raw * _steps)]) if {
	is_number(_raw)
	_raw > 0
	is_number(_steps)
}

_steps := input.estimates.run.steps if is_number(input.estimates.run.steps)
else := input.training.max_steps if is_number(input.training.max_steps)
else := input.training.total_steps if is_number(input.training.total_steps)

_evals := floor(_steps / _every) if _applies

_suggested_evals := floor(_steps / _target) if _applies

_message := concat("", [
	"evaluation every ", fmt.steps(_every), _origin, ": ", fmt.int(_evals), " evaluations in a ",
	fmt.int(_steps), "-step run; at ", _each, ", evaluation adds ~", fmt.pct(_cost / _every),
	" to the training time", _time, "; evaluate every ≥ ",
	fmt.steps(_target), " (", fmt.int(_suggested_evals), " evaluations)",
]) if _applies

_each := concat("", [
	"~", fmt.int(_cost), " training steps each (", fmt.int(_iters),
	" forward-only eval iterations)",
]) if is_number(_iters)
else := concat("", ["an assumed ~", fmt.int(params.eval_cost_steps), " training steps each"])

_origin := " (eval_steps unset: logging_steps)" if _from_logging
else := ""

_eval_s := _cost * input.estimates.step_time_s if {
	is_number(input.estimates.step_time_s)
}

_time := concat("", [" (~", fmt.duration(_evals * _eval_s), ")"]) if {
	_applies
	is_number(_eval_s)
} else := ""

# Waste: the evaluations beyond one every min_eval_every_steps steps.
_gpu_hours := (((_evals - _suggested_evals) * _eval_s) * job.world_size) / 3600 if {
	_applies
	is_number(_eval_s)
	is_number(job.world_size)
}

_usd := _gpu_hours * input.estimates.price_per_gpu_hour if {
	is_number(_gpu_hours)
	is_number(input.estimates.price_per_gpu_hour)
}

_waste := {"waste": {"gpu_hours": _gpu_hours, "usd": _usd}} if is_number(_usd)
else := {}

_pointer := "/eval/every_steps" if is_number(_declared)
else := "/logging/every_steps" if _from_logging
else := "/eval"
