# METADATA
# title: log-every-step
# description: |
#   Logging metrics every optimizer step forces a host-device sync (loss.item()) and a
#   reporter write on every step. Each one is small, so the rule is info rather than warning:
#   its cost is an assumed per-log overhead (overhead_s_per_log), not an estimate from the
#   job, and per-step logging is often deliberate while debugging a short run. Fires when
#   logging.every_steps is between 1 and max_every_steps (values below 1 are a fraction of the
#   run, as in Hugging Face) and the run has at least min_run_steps steps. When the run length
#   is unknown it still fires, says so, and claims no cost.
# custom:
#   id: TL301
#   severity: info
#   category: logging
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
