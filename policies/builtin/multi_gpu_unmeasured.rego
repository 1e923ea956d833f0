# METADATA
# title: multi-gpu-unmeasured
# description: |
#   Fires on a multi-GPU job that has no fresh probe measurement at its world size, or whose
#   measured scaling efficiency there is below min_scaling_efficiency. Without a measurement
#   the message says how to measure the job. With one, it gives the measured efficiency
#   (throughput(N) / (N x throughput(1))), the GPU-hours and dollars the lost share costs, and
#   the measured world size with the best cost per token.
# related_resources:
#   - ref: https://pytorch.org/docs/stable/notes/ddp.html
#     description: PyTorch DDP internals, gradient all-reduce overlapped with backward
#   - ref: https://arxiv.org/abs/2006.15704
#     description: Li et al. 2020, PyTorch Distributed, measured scaling of DDP
#   - ref: https://github.com/stas00/ml-engineering/tree/master/network
#     description: ml-engineering, network bandwidth and why multi-node scaling falls short
# custom:
#   id: TL103
#   severity: info
#   category: performance
#   why: |
#     N GPUs cost N times one GPU per hour whether or not they make the run faster; they only
#     pay for themselves if the job runs nearly N times faster. At 50% scaling efficiency half
#     of every GPU-hour buys waiting on gradient all-reduce or data, and the same run on fewer
#     GPUs would cost less for the same tokens. The estimates assume near-linear scaling,
#     which small models, slow links and small micro-batches break; nobody knows the
#     efficiency of a configuration until it is measured.
#   example: |
#     # train.sh
#     torchrun --nproc_per_node=8 train.py --config train.yaml
#   fix: |
#     # measure it once (writes .trainlint/measurements/train.sh.json):
#     #   trainlint probe train.sh --world-sizes 1,8
#     # then keep the world size whose measured efficiency meets the threshold
#     torchrun --nproc_per_node=8 train.py --config train.yaml
#   remediation: |
#     Run `trainlint probe <entry file> --world-sizes 1,<N>` to measure step time and
#     throughput at 1 and N GPUs. When the efficiency is low, use the measured world size with
#     the best cost per token, raise the micro-batch or accumulate gradients to sync less
#     often, or shard (ZeRO/FSDP) instead of replicating a model that is communication-bound.
package trainlint.rules.multi_gpu_unmeasured

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.job

params := data.trainlint.params.multi_gpu_unmeasured

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains {"message": _unmeasured_message, "pointer": "/resources/world_size"} if _unmeasured

findings contains finding if {
	_inefficient
	finding := object.union({"message": _inefficient_message, "pointer": "/resources/world_size"}, _waste)
}

_multi if {
	is_number(job.world_size)
	job.world_size > 1
}

_key := format_int(job.world_size, 10) if _multi

_sizes := input.measurements.world_sizes if {
	input.measurements.fresh == true
	is_object(input.measurements.world_sizes)
}

_here := _sizes[_key] if is_object(_sizes[_key])

_unmeasured if {
	_multi
	not _here
}

_efficiency := _here.scaling_efficiency if is_number(_here.scaling_efficiency)

_inefficient if {
	_multi
	is_number(_efficiency)
	_efficiency < params.min_scaling_efficiency
}

_entry := input.id if is_string(input.id)
else := "<entry file>"

_unmeasured_message := concat("", [
	fmt.plural(job.world_size, job.unit), " and no measurement at that size",
	_why_none, ": the speedup over one ", job.unit, " is assumed, not known; ", _measure_it,
]) if _unmeasured

# The probe runs PyTorch on GPUs: a TPU job is measured with its own runs.
_measure_it := concat("", ["measure it with `trainlint probe ", _entry, " --world-sizes 1,", _key, "`"]) if {
	not job.tpu
} else := "time a few steps at 1 and at this size yourself (`trainlint probe` runs PyTorch on GPUs only)"

_why_none := concat("", [" (", input.measurements.path, " is stale)"]) if {
	input.measurements.fresh == false
	is_string(input.measurements.path)
} else := concat("", [" (measured at ", concat(", ", _measured_keys), " only)"]) if {
	count(_measured_keys) > 0
} else := ""

_measured_numbers := sort([to_number(k) |
	m := _sizes[k]
	is_object(m)
])

_measured_keys := [format_int(n, 10) | some n in _measured_numbers]

_inefficient_message := concat("", [
	"measured scaling efficiency at ", fmt.plural(job.world_size, "GPU"), " is ", fmt.pct(_efficiency),
	_throughputs, " (measured), below ", fmt.pct(params.min_scaling_efficiency), ": ~",
	fmt.pct(1 - _efficiency), " of the GPU-hours buy no throughput", _cost, "; ", _best_text,
]) if _inefficient

_throughputs := concat("", [
	" (", fmt.int(_here.tokens_per_s), " tokens/s against ", fmt.int(_sizes["1"].tokens_per_s),
	" on 1 GPU)",
]) if {
	is_number(_here.tokens_per_s)
	is_number(_sizes["1"].tokens_per_s)
} else := concat("", [
	" (", fmt.duration(_here.step_time_s.median), " per step against ",
	fmt.duration(_sizes["1"].step_time_s.median), " on 1 GPU, the same per-rank batch)",
]) if {
	_here.scaling_basis == "step_time"
	is_number(_here.step_time_s.median)
	is_number(_sizes["1"].step_time_s.median)
} else := ""

_cost := "" if {
	is_object(_waste.waste)
} else := concat("", [" (~", fmt.gpu_hours(_lost_gpu_hours), " per run)"]) if {
	is_number(_lost_gpu_hours)
} else := ""

_lost_gpu_hours := (1 - _efficiency) * input.estimates.run.gpu_hours if {
	_inefficient
	is_number(input.estimates.run.gpu_hours)
}

_waste := {"waste": {
	"gpu_hours": _lost_gpu_hours,
	"usd": (1 - _efficiency) * input.estimates.run.usd,
}} if {
	is_number(_lost_gpu_hours)
	is_number(input.estimates.run.usd)
} else := {}

# Tokens per GPU-second at each measured size: same GPU and price, so the highest is the
# cheapest per token.
_per_gpu := {n: rate |
	m := _sizes[n]
	is_number(m.tokens_per_s)
	m.tokens_per_s > 0
	not _oom[n]
	rate := m.tokens_per_s / to_number(n)
}

# The size no other beats; by comparison, not max(): regopy's max() misorders ints and floats.
_beaten contains n if {
	rate := _per_gpu[n]
	other := _per_gpu[_]
	other > rate
}

_best_sizes := sort([n |
	_per_gpu[n]
	not _beaten[n]
])

_best := _best_sizes[0] if {
	_inefficient
	count(_best_sizes) > 0
}

_oom contains n if {
	m := _sizes[n]
	m.oom == true
}

# Without tokens (an entrypoint probe that counted samples): per-GPU throughput relative to
# one GPU is the scaling efficiency itself, so the most efficient size is the cheapest.
_relative := {n: e |
	m := _sizes[n]
	is_number(m.scaling_efficiency)
	m.scaling_efficiency > 0
	not _oom[n]
	e := m.scaling_efficiency
}

_beaten_relative contains n if {
	rate := _relative[n]
	other := _relative[_]
	other > rate
}

_best_relative_sizes := sort([n |
	_relative[n]
	not _beaten_relative[n]
])

_best_relative := _best_relative_sizes[0] if {
	_inefficient
	count(_best_relative_sizes) > 0
}

_best_text := concat("", [
	fmt.plural(to_number(_best), "GPU"), " gave the best measured cost per token (~",
	fmt.int(_sizes[_best].tokens_per_s / to_number(_best)), " tokens/s per GPU against ~",
	fmt.int(_here.tokens_per_s / job.world_size), " at ", _key, ")",
]) if {
	is_string(_best)
	_best != _key
	is_number(_here.tokens_per_s)
} else := concat("", [
	fmt.plural(to_number(_best_relative), "GPU"), " gave the best measured cost per unit of work (",
	fmt.pct(_relative[_best_relative]), " scaling efficiency against ", fmt.pct(_efficiency), " at ", _key, ")",
]) if {
	not is_number(_here.tokens_per_s)
	is_string(_best_relative)
	_best_relative != _key
} else := concat("", [
	"no measured size is cheaper per token; raise the micro-batch or accumulate gradients to sync less often, or probe more sizes (--world-sizes 1,2,4,",
	_key, ")",
])
