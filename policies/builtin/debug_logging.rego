# METADATA
# title: debug-logging
# description: |
#   Fires once per debug setting left on in a training job: an environment variable set to a
#   debug level, or a framework log level of debug, detail or trace. The variables, their
#   values and the levels are pack parameters (by default NCCL_DEBUG=INFO/TRACE,
#   TORCH_DISTRIBUTED_DEBUG=DETAIL/INFO, TORCH_CPP_LOG_LEVEL=INFO, TRANSFORMERS_VERBOSITY=debug,
#   RAY_LOGGING_LEVEL=DEBUG, RAY_BACKEND_LOG_LEVEL=debug/trace), read from launch scripts,
#   manifests, SkyPilot envs or os.environ. NCCL_DEBUG_SUBSYS is not one: it only filters
#   what NCCL_DEBUG=INFO prints. The message names the setting and the fix; the cost is an
#   assumed share of the run (overhead_fraction), labelled as assumed.
# related_resources:
#   - ref: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/logging.html
#     description: NCCL logging - VERSION, WARN (production minimum), INFO, TRACE
#   - ref: https://pytorch.org/docs/stable/distributed.html#debugging-torch-distributed-applications
#     description: PyTorch, debugging torch.distributed applications (TORCH_DISTRIBUTED_DEBUG)
#   - ref: https://docs.pytorch.org/docs/stable/debugging_environment_variables.html
#     description: PyTorch debugging environment variables (TORCH_CPP_LOG_LEVEL)
#   - ref: https://huggingface.co/docs/transformers/main_classes/logging
#     description: Transformers logging (TRANSFORMERS_VERBOSITY)
#   - ref: https://docs.ray.io/en/latest/ray-observability/user-guides/configure-logging.html
#     description: Ray logging (RAY_LOGGING_LEVEL, RAY_BACKEND_LOG_LEVEL)
# custom:
#   id: TL302
#   severity: warning
#   category: logging
#   autofix:
#     safe: true
#     description: the debug variable's line removed (export NAME=value, os.environ[NAME] = value, an envs mapping entry), or its NAME=value word of a longer command; not a framework log level, nor a line that is the only statement of its block.
#   why: |
#     NCCL_DEBUG=INFO makes every rank write its topology, channel and transport setup and
#     TRACE logs calls as they happen; TORCH_DISTRIBUTED_DEBUG=DETAIL wraps every collective in
#     extra consistency checks and logging; TORCH_CPP_LOG_LEVEL=INFO floods the c10 log;
#     TRANSFORMERS_VERBOSITY=debug and Ray's DEBUG levels log every step's internals. On a
#     multi-node job that is megabytes of log per rank, extra synchronisation on the hot path
#     and log volume that buries the one warning that matters. These switches are meant for
#     reproducing a hang, not for a production run that is billed by the GPU-hour.
#   example: |
#     # train.slurm
#     #SBATCH --gres=gpu:h100:8
#     # Left over from debugging a hang last week.
#     export NCCL_DEBUG=INFO
#     srun torchrun --nproc_per_node=8 train.py --config sft.yaml
#   fix: |
#     # train.slurm
#     #SBATCH --gres=gpu:h100:8
#     export NCCL_DEBUG=WARN
#     srun torchrun --nproc_per_node=8 train.py --config sft.yaml
#   remediation: |
#     Unset the debug variables (or use NCCL_DEBUG=WARN, TORCH_DISTRIBUTED_DEBUG=OFF) and log
#     at info level; turn debug output on only while reproducing a problem.
package trainlint.rules.debug_logging

import rego.v1

import data.trainlint.lib.fmt

params := data.trainlint.params.debug_logging

# Function names are unique in the pack: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).

findings contains finding if {
	some name, levels in params.env
	value := input.env[name]
	is_string(value)
	some level in levels
	upper(value) == upper(level)
	setting := concat("", [name, "=", value])
	finding := object.union(
		{"message": _debug_message(setting, concat("", ["unset ", name])), "pointer": concat("", ["/env/", name])},
		_waste,
	)
}

findings contains finding if {
	value := input.logging.level
	is_string(value)
	some level in params.log_levels
	lower(value) == lower(level)
	setting := concat("", ["log level '", value, "'"])
	finding := object.union({"message": _debug_message(setting, "log at info level"), "pointer": "/logging/level"}, _waste)
}

_debug_message(setting, fix) := concat("", [
	setting, " turns on debug logging: ~", fmt.pct(params.overhead_fraction),
	" of the run (assumed); ", fix, " outside debugging",
])


_gpu_hours := params.overhead_fraction * input.estimates.run.gpu_hours if {
	is_number(input.estimates.run.gpu_hours)
}

_usd := params.overhead_fraction * input.estimates.run.usd if {
	is_number(input.estimates.run.usd)
	is_number(_gpu_hours)
}

_waste := {"waste": {"gpu_hours": _gpu_hours, "usd": _usd}} if is_number(_usd)
else := {}
