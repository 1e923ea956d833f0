# METADATA
# title: communication-bound
# description: |
#   Fires when a data-parallel job on more than one GPU spends more than max_comm_fraction of
#   each step on gradient synchronisation (estimates.comm.fraction). That fraction is the
#   all-reduce time the backward pass does not hide, over the step time. The message gives the
#   exposed and total step time, the share of the run's GPU-hours and dollars it costs, and a
#   cheaper configuration with fewer GPUs when the estimates know one.
#   With an uncertain input it fires only when even the lowest plausible share
#   (estimates.ranges) is above max_comm_fraction.
# related_resources:
#   - ref: https://arxiv.org/abs/2006.15704
#     description: Li et al. 2020, PyTorch Distributed, bucketed all-reduce overlapped with backward
#   - ref: https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
#     description: nccl-tests, ring all-reduce moves 2(n-1)/n of the data per GPU (bus bandwidth)
#   - ref: https://arxiv.org/abs/1910.02054
#     description: ZeRO (Rajbhandari et al. 2020), communication volume per stage (§7)
# custom:
#   id: TL104
#   severity: warning
#   category: performance
#   why: |
#     Each optimizer step all-reduces every gradient: 2(n-1)/n times the gradient bytes per
#     GPU, at link speed, whatever the model's compute. DDP hides it behind the backward pass
#     only while backward takes longer than the transfer; for a small model (little compute
#     per step) spread over many GPUs or across nodes, a small micro-batch or a slow
#     inter-node link, the GPUs sit idle waiting for the network, and that idle share of every
#     step is paid for at the full GPU price.
#   example: |
#     # launch.slurm (GPT-2 124M, micro-batch 1, two nodes)
#     #SBATCH --nodes=2
#     #SBATCH --gres=gpu:a100:8
#     #SBATCH --time=2:00:00
#     srun torchrun --nnodes=2 --nproc_per_node=8 train.py --model_name_or_path gpt2 \
#         --max_seq_length 1024 --per_device_train_batch_size 1 --max_steps 5000
#   fix: |
#     # launch.slurm (one node, more work per sync)
#     #SBATCH --nodes=1
#     #SBATCH --gres=gpu:a100:8
#     #SBATCH --time=2:00:00
#     srun torchrun --nproc_per_node=8 train.py --model_name_or_path gpt2 \
#         --max_seq_length 1024 --per_device_train_batch_size 8 --max_steps 5000
#   remediation: |
#     Use fewer GPUs (stay within one NVLink node), raise the micro-batch or accumulate
#     gradients over more micro-batches so each sync carries more compute, or, for a model
#     that fits one GPU, run independent single-GPU jobs instead of data parallelism.
package trainlint.rules.communication_bound

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.ranges
import data.trainlint.lib.job

params := data.trainlint.params.communication_bound

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": "/resources/world_size"}, _waste)
}

_comm := input.estimates.comm

_applies if {
	is_number(job.world_size)
	job.world_size > 1
	is_number(_comm.fraction)
	ranges.lowest("/comm/fraction", _comm.fraction) > params.max_comm_fraction
}

_message := concat("", [
	fmt.plural(job.world_size, "GPU"), " spend ~", fmt.pct(_comm.fraction),
	" of each step waiting on gradient all-reduce", _times, " (", fmt.basis(["comm.fraction"]), ")",
	_cost, "; ", _fix,
]) if _applies

_times := concat("", [
	" that backward does not hide (~", fmt.duration(_comm.exposed_s), " of ~",
	fmt.duration(input.estimates.step_time_s), " steps)",
]) if {
	is_number(_comm.exposed_s)
	is_number(input.estimates.step_time_s)
} else := ""

_run := input.estimates.run

_waste := {"waste": {"gpu_hours": _comm.fraction * _run.gpu_hours, "usd": _comm.fraction * _run.usd}} if {
	_applies
	is_number(_run.gpu_hours)
	is_number(_run.usd)
} else := {}

_cost := "" if {
	is_object(_waste.waste)
} else := concat("", ["; ~", fmt.gpu_hours(_comm.fraction * _run.gpu_hours), " per run"]) if {
	_applies
	is_number(_run.gpu_hours)
} else := ""

# The cheapest estimated alternative on the same GPU type with fewer GPUs.
_fewer := [a |
	some a in input.estimates.alternatives
	a.gpu == job.gpu
	is_number(a.gpus)
	a.gpus < job.world_size
	is_number(a.usd)
]

_fix := concat("", [
	fmt.plural(_fewer[0].gpus, "GPU"), " would cost ~", fmt.usd(_fewer[0].usd), " per run instead of ~",
	fmt.usd(_run.usd), "; or accumulate more gradients per step",
]) if {
	count(_fewer) > 0
	is_number(_run.usd)
} else := "use fewer GPUs (one node), a larger micro-batch or more gradient accumulation per sync, or no data parallelism for a model this small"
