# METADATA
# title: unknown-hardware
# description: |
#   Fires on a training job (one with a launch command, or steps, epochs or a batch size) when
#   trainlint cannot tell its GPU type, its GPU count or both. The message says which is
#   missing and how to declare it. Every cost estimate needs both, so without them the cost,
#   memory and budget rules (TL101, TL102, TL104, TL201, TL402, ...) stay silent on the job.
#   A job whose files state that it requests no accelerator (Kubernetes pods without a GPU or
#   TPU resource, Ray Train's use_gpu=False) is a CPU job: it is never told "GPU type unknown".
# related_resources:
#   - ref: https://slurm.schedmd.com/sbatch.html#OPT_gres
#     description: sbatch --gres=gpu:<type>:<count> states both in a SLURM script.
# custom:
#   id: TL404
#   severity: info
#   category: governance
#   why: |
#     A linter that cannot see the hardware cannot price the run: memory per GPU, step time,
#     GPU-hours and dollars all start from the GPU's memory, peak FLOP/s and price and from
#     how many of them run. A job that hides them (a bare `python train.py`, a config without
#     its launch script) passes every cost check silently, which reads like a clean bill.
#   example: |
#     # run.sh
#     torchrun --nproc_per_node=8 train.py --config sft.yaml
#   fix: |
#     # run.sh
#     # trainlint: gpu=H100
#     torchrun --nproc_per_node=8 train.py --config sft.yaml
#   remediation: |
#     Declare the hardware where the job states it (#SBATCH --gres=gpu:h100:8, a Kubernetes
#     GPU product node selector, SkyPilot accelerators: H100:8) or with trainlint's annotation
#     comment `# trainlint: gpu=H100 gpus=8` in the launch script or config.
package trainlint.rules.unknown_hardware

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.job

params := data.trainlint.params.unknown_hardware

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": _pointer}
}

_applies if {
	_trains
	not _no_accelerator
	count(_missing) > 0
}

# The job's files state every pod's resources and none requests a GPU or TPU: a CPU job has
# no GPU type to declare.
_no_accelerator if input.resources.accelerator == "none"

_trains if is_string(input.launcher.kind)

# A DeepSpeed JSON alone is a fragment of some launch, not a job of its own.
_trains if {
	some field in ["max_steps", "epochs", "micro_batch_size", "global_batch_size"]
	is_number(input.training[field])
	some source in input.sources
	source.role in {"entrypoint", "config"}
}

_type_known if is_string(job.gpu)

_count_known if is_number(job.world_size)

_missing := [name | some name in ["type", "count"]; not _known[name]]

_known contains "type" if _type_known

_known contains "count" if _count_known

_pointer := "/resources/world_size" if {
	_count_known
} else := "/launcher/kind" if {
	input.provenance["/launcher/kind"]
} else := "/resources"

_what := "GPU type and count unknown" if count(_missing) == 2
else := "GPU type unknown" if not _type_known
else := "GPU count unknown"

_declare := concat("", ["gpu=", params.example_gpu, " gpus=", format_int(params.example_gpus, 10)]) if count(_missing) == 2
else := concat("", ["gpu=", params.example_gpu]) if not _type_known
else := concat("", ["gpus=", format_int(params.example_gpus, 10)])

_gres := concat("", ["#SBATCH --gres=gpu:", lower(params.example_gpu), ":", format_int(params.example_gpus, 10)])

_message := concat("", [
	_what, _known_part, ": ", _effect, "; ",
	"declare it with `# trainlint: ", _declare, "` (or ", _gres, ", a GPU node selector)",
]) if _applies

# Only the count unknown: the estimates span every plausible count (estimates.ranges).
_effect := concat("", [
	"memory, step-time and cost are estimated over ", fmt.int(_range_low), "–",
	fmt.int(_range_high), " GPUs and their checks fire only when all of them agree",
]) if {
	_type_known
	input.estimates.sources.gpus == "default"
} else := "memory, step-time, cost and budget checks stay silent on this job"

_gpus_range := input.estimates.ranges["/gpus"]

_range_low := _gpus_range[0] if is_number(_gpus_range[0])
else := input.estimates.gpus

_range_high := _gpus_range[1] if is_number(_gpus_range[1])
else := input.estimates.gpus

_known_part := concat("", [" (", job.gpu, ")"]) if _type_known
else := concat("", [" (", fmt.int(job.world_size), " GPUs)"]) if _count_known
else := ""
