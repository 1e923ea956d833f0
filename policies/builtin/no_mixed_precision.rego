# METADATA
# title: no-mixed-precision
# description: |
#   Fires when the job trains in fp32 on a GPU whose 16-bit peak is at least min_peak_ratio
#   times its fp32 peak (estimates.mixed_precision.peak_ratio). The precision is fp32 when
#   declared (`precision: 32`) or when mixed precision is switched off (accelerate's
#   `mixed_precision: no`); the peaks are the catalog's dense bf16 (else fp16) and fp32
#   figures, and a job whose precision is unknown never fires. A framework whose own default
#   is fp32 (accelerate's `mixed_precision: no` under diffusers' and kohya's scripts) states
#   it as a default (input.defaults), which fires as a declared fp32 does when no file says
#   otherwise, located at the launch of the program. The message gives the ratio,
#   the step time re-estimated at 16-bit with the same MFU, and the GPU-hours and dollars the
#   difference costs over the run.
# related_resources:
#   - ref: https://arxiv.org/abs/1710.03740
#     description: Micikevicius et al. 2018, Mixed Precision Training (fp16 with fp32 master weights)
#   - ref: https://pytorch.org/docs/stable/amp.html
#     description: PyTorch automatic mixed precision (torch.autocast, bf16 and fp16)
#   - ref: https://www.nvidia.com/en-us/data-center/h100/
#     description: NVIDIA H100 datasheet, dense FP32 vs BF16 tensor-core TFLOP/s
# custom:
#   id: TL105
#   severity: warning
#   category: performance
#   autofix:
#     safe: false
#     description: a bf16 (or fp16) switch stated false set to true, when it is the precision the estimate names (numerics change, so unsafe); a precision stated any other way is left alone.
#   why: |
#     Plain fp32 matrix multiplies run on the GPU's CUDA cores, not its tensor cores:
#     an A100 peaks at 19.5 TFLOP/s in fp32 and 312 in bf16, an H100 SXM at 67 against 989.
#     Training in fp32 leaves most of the hardware idle, doubles the bytes of weights,
#     gradients and activations, and multiplies the run's GPU-hours; bf16 mixed precision
#     keeps an fp32 master copy, so quality matches fp32 for standard transformer training.
#   example: |
#     # train.sh
#     # trainlint: gpu=A100-80GB
#     accelerate launch --config_file accelerate_config.yaml train.py --max_steps 10000
#     # accelerate_config.yaml
#     distributed_type: MULTI_GPU
#     num_processes: 8
#     mixed_precision: 'no'
#   fix: |
#     # train.sh
#     # trainlint: gpu=A100-80GB
#     accelerate launch --config_file accelerate_config.yaml train.py --max_steps 10000
#     # accelerate_config.yaml
#     distributed_type: MULTI_GPU
#     num_processes: 8
#     mixed_precision: bf16
#   remediation: |
#     Train in bf16 mixed precision (HF `bf16: true`, accelerate `mixed_precision: bf16`,
#     Lightning `precision: bf16-mixed`, torch.autocast(dtype=torch.bfloat16)); on GPUs
#     without bf16 (V100, T4) use fp16 with loss scaling. If fp32 numerics are required,
#     at least enable TF32 matmuls (torch.backends.cuda.matmul.allow_tf32 = True).
package trainlint.rules.no_mixed_precision

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.job

params := data.trainlint.params.no_mixed_precision

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": _pointer}, _waste)
}

_mp := input.estimates.mixed_precision

# Declared fp32, or no precision stated where the framework's own default is fp32
# (accelerate's `mixed_precision: no`); an unknown precision never fires.
_fp32 if input.training.precision == "fp32"

_fp32 if {
	is_null(object.get(input.training, "precision", null))
	input.defaults["/training/precision"].value == "fp32"
}

_declared if input.training.precision == "fp32"

# A default is located where the program is launched, where a user adds the setting.
_pointer := "/training/precision" if _declared
else := "/launcher/entrypoint" if input.provenance["/launcher/entrypoint"]
else := "/training/precision"

_applies if {
	_fp32
	is_number(_mp.peak_ratio)
	_mp.peak_ratio >= params.min_peak_ratio
	is_string(_mp.precision)
}

_message := concat("", [
	"fp32 training", _unset, " on ", _gpu, ", whose ", _mp.precision, " tensor cores peak ~",
	fmt.num(_mp.peak_ratio), "× higher (catalog)", _steps, "; train in ", _mp.precision,
	" mixed precision",
]) if _applies

_unset := "" if _declared
else := concat("", [" (`", input.defaults["/training/precision"].key, "` not set: its default)"])

_gpu := concat("", ["the ", job.gpu]) if is_string(job.gpu)
else := "a GPU"

_steps := concat("", [
	": ~", fmt.duration(input.estimates.step_time_s), " steps would take ~",
	fmt.duration(_mp.step_time_s), " (", fmt.basis(["mixed_precision.step_time_s"]),
	", same MFU; memory-bound kernels gain less)", _cost,
]) if {
	is_number(input.estimates.step_time_s)
	is_number(_mp.step_time_s)
} else := ""

_waste := {"waste": {"gpu_hours": _mp.saved_gpu_hours, "usd": _mp.saved_usd}} if {
	is_number(_mp.saved_gpu_hours)
	is_number(_mp.saved_usd)
} else := {}

_cost := "" if {
	is_object(_waste.waste)
} else := concat("", [", ~", fmt.gpu_hours(_mp.saved_gpu_hours), " per run"]) if {
	is_number(_mp.saved_gpu_hours)
} else := ""
