# METADATA
# title: profiler-always-on
# description: |
#   Fires when a profiler or per-step timer is on for the whole run: logging.profiler.enabled
#   is true and logging.profiler.scheduled is not. That covers torch.profiler without a
#   schedule, Lightning's profiler="simple"/"advanced"/"pytorch", DeepSpeed
#   wall_clock_breakdown and GPT-NeoX wall-clock timers; a profiler scheduled to a few steps
#   (DeepSpeed's flops profiler at one step, torchtune and torchtitan schedules,
#   torch.profiler.schedule) is fine. The cost is an assumed overhead fraction of the run
#   (overhead_fraction), labelled as assumed.
# related_resources:
#   - ref: https://pytorch.org/docs/stable/profiler.html#torch.profiler.schedule
#     description: torch.profiler schedule (wait, warmup, active, repeat) to profile a few steps
#   - ref: https://www.deepspeed.ai/docs/config-json/#logging
#     description: DeepSpeed wall_clock_breakdown, default false
#   - ref: https://lightning.ai/docs/pytorch/stable/tuning/profiler_basic.html
#     description: Lightning profilers
# custom:
#   id: TL304
#   severity: warning
#   category: performance
#   autofix:
#     safe: true
#     description: the profiler's switch stated true, set to false.
#   why: |
#     Profilers record every op, kernel and memory event, and step timers insert device
#     synchronizations that stop the CPU from queuing work ahead of the GPU: DeepSpeed's
#     wall_clock_breakdown synchronizes around forward, backward and step on every step. A
#     trace of a few steps shows everything a profile is for; on every step of a long run it
#     only slows the run and fills the disk with traces nobody reads.
#   example: |
#     # ds_config.json
#     {
#       "train_micro_batch_size_per_gpu": 4,
#       "wall_clock_breakdown": true
#     }
#   fix: |
#     # ds_config.json
#     {
#       "train_micro_batch_size_per_gpu": 4,
#       "wall_clock_breakdown": false
#     }
#   remediation: |
#     Profile a few steps with a schedule (torch.profiler.schedule(wait=1, warmup=1,
#     active=3, repeat=1), torchtune/torchtitan profiler settings) or in a short separate
#     run, and turn per-step timers off (wall_clock_breakdown: false, profiler: null).
package trainlint.rules.profiler_always_on

import rego.v1

import data.trainlint.lib.fmt

params := data.trainlint.params.profiler_always_on

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": "/logging/profiler/enabled"}, _waste)
}

_applies if {
	input.logging.profiler.enabled == true
	not input.logging.profiler.scheduled == true
}

_message := concat("", [
	"profiler on for the whole run, with no schedule: every step is traced or timed, ~",
	fmt.pct(params.overhead_fraction), " of the run (assumed)", _cost,
	"; profile a few steps with a schedule (torch.profiler.schedule) or turn it off ",
	"(wall_clock_breakdown: false, profiler: null)",
]) if _applies

_gpu_hours := params.overhead_fraction * input.estimates.run.gpu_hours if {
	is_number(input.estimates.run.gpu_hours)
}

_usd := params.overhead_fraction * input.estimates.run.usd if {
	is_number(_gpu_hours)
	is_number(input.estimates.run.usd)
}

# Spelled out only when the price is unknown: the waste object carries the cost otherwise.
_cost := "" if is_number(_usd)
else := concat("", [", ~", fmt.gpu_hours(_gpu_hours), " per run"]) if is_number(_gpu_hours)
else := ""

_waste := {"waste": {"gpu_hours": _gpu_hours, "usd": _usd}} if is_number(_usd)
else := {}
