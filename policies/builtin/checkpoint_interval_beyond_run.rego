# METADATA
# title: checkpoint-interval-beyond-run
# description: |
#   Fires when the checkpoint interval (checkpoint.every_steps) is longer than the run, so no
#   checkpoint is saved before the run ends. The run length must be stated: training.max_steps
#   or training.total_steps, or a run length derived only from declared facts (epochs x a
#   declared dataset size over a declared global batch, estimates.sources["run.steps"] ==
#   "declared"); an estimated run length never fires it. A fractional interval (below 1, a
#   share of the run as in Hugging Face), a strategy other than steps and a run shorter than
#   min_run_steps (an example or smoke test, cheap to rerun) never fire. The message
#   gives both numbers and an interval that saves suggested_saves times per run.
# related_resources:
#   - ref: https://huggingface.co/docs/transformers/main/en/main_classes/trainer
#     description: Hugging Face TrainingArguments save_strategy, save_steps and max_steps
#   - ref: https://github.com/huggingface/nanotron/blob/main/docs/quickstart.md
#     description: nanotron checkpoints.checkpoint_interval and tokens.train_steps
# custom:
#   id: TL206
#   severity: warning
#   category: checkpointing
#   why: |
#     An interval copied from a longer run (LLaVA's save_steps 50000 on a ~5,200-step
#     fine-tune, nanotron's checkpoint_interval 100000 against 32,000 train_steps) means the
#     job keeps nothing on disk until its last step: a crash, a preemption or a time limit
#     reached at hour 20 of a 24-hour run loses all 20 hours, and there is no intermediate
#     checkpoint to evaluate or resume from.
#   example: |
#     # finetune.yaml
#     model_name_or_path: lmsys/vicuna-7b-v1.5
#     max_steps: 5200
#     save_strategy: steps
#     save_steps: 50000
#   fix: |
#     # finetune.yaml
#     model_name_or_path: lmsys/vicuna-7b-v1.5
#     max_steps: 5200
#     save_strategy: steps
#     save_steps: 500
#     save_total_limit: 1
#   remediation: |
#     Save at an interval shorter than the run (a few saves per run, each worth the GPU time
#     since the last), and cap how many are kept (save_total_limit, keep_last).
package trainlint.rules.checkpoint_interval_beyond_run

import rego.v1

import data.trainlint.lib.fmt

params := data.trainlint.params.checkpoint_interval_beyond_run

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": "/checkpoint/every_steps"}
}

_applies if {
	is_number(_every)
	_every >= 1
	_by_steps
	is_number(_steps)
	_steps >= params.min_run_steps
	_every > _steps
}

_every := input.checkpoint.every_steps

# The stated strategy, else the framework's default; without either a format saves at its interval.
_strategy := lower(input.checkpoint.strategy) if is_string(input.checkpoint.strategy)
else := input.defaults["/checkpoint/strategy"].value if is_string(input.defaults["/checkpoint/strategy"].value)

_by_steps if _strategy == "steps"

_by_steps if not _strategy

# Only a stated run length: the declared step limit, or one the estimator derived from
# declared facts alone (never an estimated dataset size or GPU count).
_steps := input.training.max_steps if is_number(input.training.max_steps)
else := input.training.total_steps if is_number(input.training.total_steps)
else := input.estimates.run.steps if {
	is_number(input.estimates.run.steps)
	input.estimates.sources["run.steps"] == "declared"
}

_suggested := max([1, floor(_steps / params.suggested_saves)]) if _applies

_message := concat("", [
	"checkpoint every ", fmt.steps(_every), " in a ", fmt.int(_steps),
	"-step run: nothing is saved before the run ends, so a crash or preemption loses all of it; save every ",
	fmt.steps(_suggested), " (", fmt.int(params.suggested_saves), " saves per run)",
]) if _applies
