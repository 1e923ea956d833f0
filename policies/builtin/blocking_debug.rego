# METADATA
# title: blocking-debug
# description: |
#   Fires once per GPU-slowing debug switch left on in a training run: CUDA_LAUNCH_BLOCKING=1,
#   or autograd anomaly detection (torch.autograd.set_detect_anomaly, Lightning
#   detect_anomaly). The variables and values are pack parameters (env). The cost is an
#   assumed slowdown fraction of the run (env_slowdown_fraction, anomaly_slowdown_fraction),
#   labelled as assumed. Log verbosity (NCCL_DEBUG, TORCH_DISTRIBUTED_DEBUG, log levels) is
#   debug-logging's (TL302).
# related_resources:
#   - ref: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#concurrent-execution-between-host-and-device
#     description: CUDA programming guide, CUDA_LAUNCH_BLOCKING is for debugging purposes only
#   - ref: https://pytorch.org/docs/stable/autograd.html#anomaly-detection
#     description: PyTorch anomaly detection should be enabled only for debugging, it slows execution
#   - ref: https://lightning.ai/docs/pytorch/stable/common/trainer.html#detect-anomaly
#     description: Lightning Trainer detect_anomaly
# custom:
#   id: TL303
#   severity: warning
#   category: performance
#   autofix:
#     safe: true
#     description: CUDA_LAUNCH_BLOCKING's line or NAME=value word removed, as debug-logging's fix does; not anomaly detection.
#   why: |
#     GPUs are fast because the CPU queues kernels ahead of them. CUDA_LAUNCH_BLOCKING=1 makes
#     every kernel launch wait for the kernel to finish, a round trip that leaves the GPU idle
#     while Python prepares the next kernel; anomaly detection records a Python traceback for
#     every forward op and checks every backward result for NaN. Both exist to locate a crash;
#     left on, they slow every step of the run and every GPU-hour costs more for no benefit.
#   example: |
#     # run.sh
#     export CUDA_LAUNCH_BLOCKING=1
#     torchrun --nproc_per_node 8 train.py --config train.yaml
#   fix: |
#     # run.sh
#     torchrun --nproc_per_node 8 train.py --config train.yaml
#   remediation: |
#     Remove CUDA_LAUNCH_BLOCKING and anomaly detection from production runs; turn them on
#     only in a short run that reproduces the error (for NaNs, log the loss and gradient
#     norm and stop on the first non-finite value instead).
package trainlint.rules.blocking_debug

import rego.v1

import data.trainlint.lib.fmt

params := data.trainlint.params.blocking_debug

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).

findings contains finding if {
	some name, values in params.env
	value := input.env[name]
	is_string(value)
	some bad in values
	trim_space(value) == bad
	what := concat("", [name, "=", value, " serializes every kernel launch with the GPU"])
	fix := concat("", ["unset ", name])
	finding := object.union(
		{"message": _blocking_message(what, params.env_slowdown_fraction, fix), "pointer": concat("", ["/env/", name])},
		_blocking_waste(params.env_slowdown_fraction),
	)
}

findings contains finding if {
	input.logging.anomaly_detection == true
	what := "autograd anomaly detection records a traceback for every op and checks every backward for NaN"
	fix := "turn it off (set_detect_anomaly(False), detect_anomaly: false)"
	finding := object.union(
		{"message": _blocking_message(what, params.anomaly_slowdown_fraction, fix), "pointer": "/logging/anomaly_detection"},
		_blocking_waste(params.anomaly_slowdown_fraction),
	)
}

# Function names are unique in the pack (regopy): prefixed with the rule's name.
_blocking_message(what, fraction, fix) := concat("", [
	what, ": ~", fmt.pct(fraction), " slower (assumed)", _blocking_cost(fraction), "; ", fix,
	" outside debugging",
])

# Spelled out only when the price is unknown: the waste object carries the cost otherwise.
_blocking_cost(fraction) := "" if {
	is_number(input.estimates.run.usd)
	is_number(input.estimates.run.gpu_hours)
} else := concat("", [", ~", fmt.gpu_hours(fraction * input.estimates.run.gpu_hours), " per run"]) if {
	is_number(input.estimates.run.gpu_hours)
} else := ""

_blocking_waste(fraction) := {"waste": {
	"gpu_hours": fraction * input.estimates.run.gpu_hours,
	"usd": fraction * input.estimates.run.usd,
}} if {
	is_number(input.estimates.run.usd)
	is_number(input.estimates.run.gpu_hours)
} else := {}
