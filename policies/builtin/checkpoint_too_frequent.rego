# METADATA
# title: checkpoint-too-frequent
# description: |
#   Saving a checkpoint stalls training while weights and optimizer state are written. When
#   the save time is a large share of each checkpoint interval, the GPUs spend that share of
#   the run idle. Fires when estimates.checkpoint.overhead_fraction (save time / (interval x
#   step time + save time)) is above max_overhead_fraction; the message gives the save time,
#   checkpoint size, step time, cost per run and an interval that meets the threshold.
# custom:
#   id: TL201
#   severity: warning
#   category: checkpointing
#   remediation: |
#     Save less often (the suggested interval keeps the overhead under the threshold), save
#     asynchronously (torch.distributed.checkpoint async_save, DeepSpeed/Lightning async
#     checkpoint IO), or skip the optimizer state on intermediate saves.
package trainlint.rules.checkpoint_too_frequent

import rego.v1

import data.trainlint.lib.fmt

params := data.trainlint.params.checkpoint_too_frequent

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": "/checkpoint/every_steps"}, _waste)
}

_applies if {
	is_number(_ckpt.overhead_fraction)
	_ckpt.overhead_fraction > params.max_overhead_fraction
}

_ckpt := input.estimates.checkpoint

_message := concat("", [
	_interval, ": ", _saving, " is ~", fmt.pct(_ckpt.overhead_fraction), " of the run (",
	fmt.basis(["checkpoint.save_s", "step_time_s"]), ")", _cost, "; ", _fix,
]) if _applies

_interval := concat("", ["checkpoint every ", fmt.steps(_ckpt.every_steps)]) if {
	is_number(_ckpt.every_steps)
} else := concat("", ["checkpoint every ", fmt.steps(input.checkpoint.every_steps)]) if {
	is_number(input.checkpoint.every_steps)
	input.checkpoint.every_steps >= 1
} else := "checkpointing"

_saving := concat("", [_save, " against ~", fmt.duration(input.estimates.step_time_s), " steps"]) if {
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
_fix := "save only at the end of the run, or asynchronously" if {
	is_number(_ckpt.suggested_every_steps)
	is_number(input.estimates.run.steps)
	_ckpt.suggested_every_steps >= input.estimates.run.steps
} else := concat("", ["save every ≥ ", fmt.steps(_ckpt.suggested_every_steps)]) if {
	is_number(_ckpt.suggested_every_steps)
} else := "save less often or asynchronously"

_waste := {"waste": {"gpu_hours": _ckpt.overhead_gpu_hours, "usd": _ckpt.overhead_usd}} if {
	is_number(_ckpt.overhead_gpu_hours)
	is_number(_ckpt.overhead_usd)
} else := {}
