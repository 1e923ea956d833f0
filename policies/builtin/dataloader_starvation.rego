# METADATA
# title: dataloader-starvation
# description: |
#   Fires on a GPU job whose data loader has fewer than min_workers worker processes or, when
#   a probe measured it, whose data wait is above max_data_wait_fraction of the step time. The
#   worker count is the declared one (dataloader_num_workers, num_workers) or the framework's
#   documented default (input.defaults: Hugging Face TrainingArguments defaults to 0). A
#   measurement (measurements.data_wait_fraction) decides instead of the worker count, and
#   only then does the message claim a cost: the measured wait x the run's cost.
# related_resources:
#   - ref: https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments
#     description: TrainingArguments.dataloader_num_workers defaults to 0 (load in the main process)
#   - ref: https://pytorch.org/docs/stable/data.html#multi-process-data-loading
#     description: PyTorch DataLoader num_workers (default 0) and multi-process data loading
#   - ref: https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-async-data-loading-and-augmentation
#     description: PyTorch performance tuning guide, async data loading with num_workers > 0
# custom:
#   id: TL106
#   severity: warning
#   category: performance
#   why: |
#     With num_workers=0 the training process itself reads, decodes and collates every batch,
#     and only after the optimizer step returns: tokenization, decoding and collation run
#     between steps while every GPU of the job waits, and too few workers fall behind the same
#     way whenever preparing a batch takes longer than a step. On a multi-GPU job the slowest
#     rank sets the pace for all. The idle share is paid for at the full GPU price for the
#     whole run; a measured 20% data wait on a $10,000 run is $2,000 of idle GPUs.
#   example: |
#     # train.yaml
#     # trainlint: gpus=8
#     per_device_train_batch_size: 8
#     dataloader_num_workers: 0
#   fix: |
#     # train.yaml
#     # trainlint: gpus=8
#     per_device_train_batch_size: 8
#     dataloader_num_workers: 4
#     dataloader_pin_memory: true
#     dataloader_persistent_workers: true
#   remediation: |
#     Give the data loader worker processes (dataloader_num_workers / num_workers: 2-8 per
#     GPU, within the CPU cores of the node), pin memory and keep workers persistent; or
#     pre-tokenize the dataset so loading is cheap. If the data wait stays high, measure
#     it and look at storage throughput.
package trainlint.rules.dataloader_starvation

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.job

params := data.trainlint.params.dataloader_starvation

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := object.union({"message": _message, "pointer": _pointer}, _waste)
}

# Measured: the measurement decides, whatever the worker count.
_applies if {
	_gpu_job
	is_number(_wait)
	_wait > params.max_data_wait_fraction
}

# Not measured: too few workers, declared or the format's documented default.
_applies if {
	_gpu_job
	not is_number(_wait)
	is_number(_workers)
	_workers < params.min_workers
}

_gpu_job if is_number(job.world_size)

_gpu_job if is_string(job.gpu)

_wait := input.measurements.data_wait_fraction if is_number(input.measurements.data_wait_fraction)

_declared if is_number(input.data.num_workers)

# The framework's documented default, when no file states a worker count (HF Trainer: 0).
_framework := input.defaults["/data/num_workers"] if {
	not _declared
	is_number(input.defaults["/data/num_workers"].value)
}

_workers := input.data.num_workers if _declared
else := _framework.value if _framework

_workers_text := concat("", [fmt.plural(_workers, "data loader worker"), " (declared)"]) if {
	_declared
} else := concat("", [
	fmt.plural(_workers, "data loader worker"), " (not set: the ", _framework.format,
	" default)",
]) if {
	is_number(_workers)
} else := "data loader workers unknown"

_gpus := concat("", [" on ", fmt.plural(job.world_size, "GPU")]) if is_number(job.world_size)
else := ""

_message := concat("", [
	"data wait ~", fmt.pct(_wait), " of the run (measured) with ", _workers_text, _gpus,
	": the GPUs idle while batches load", _cost, "; ", _fix,
]) if {
	_applies
	is_number(_wait)
} else := concat("", [
	_workers_text, _gpus, ": ", _mechanism,
	"; data wait is not measured, so no cost is estimated; ", _fix,
]) if _applies

_mechanism := "batches are loaded in the training process between steps while the GPUs wait" if {
	_workers < 1
} else := concat("", [
	"batches are prepared by only ", fmt.plural(_workers, "worker"),
	" and the GPUs wait whenever loading falls behind",
])

_fix := concat("", [
	"use ≥ ", fmt.int(params.min_workers),
	" workers (dataloader_num_workers / num_workers) with pinned memory",
])

# The cost itself travels in `waste`; spelled out only when the price is unknown.
_cost := "" if is_number(_usd)
else := concat("", ["; ~", fmt.gpu_hours(_gpu_hours), " per run"]) if is_number(_gpu_hours)
else := ""

_gpu_hours := _wait * input.estimates.run.gpu_hours if {
	is_number(_wait)
	is_number(input.estimates.run.gpu_hours)
}

_usd := _wait * input.estimates.run.usd if {
	is_number(_gpu_hours)
	is_number(input.estimates.run.usd)
}

_waste := {"waste": {"gpu_hours": _gpu_hours, "usd": _usd}} if is_number(_usd)
else := {}

# The declared count, else the batch size (where loader settings belong) or the top of the
# file whose framework leaves the count at its default.
_pointer := "/data/num_workers" if _declared
else := "/training/micro_batch_size" if {
	_framework
	input.provenance["/training/micro_batch_size"].file == _framework.file
} else := _top_of_default_file if {
	_framework
	_top_of_default_file
} else := "/data/num_workers"

_top_of_default_file := _in_default_file[0][2] if count(_in_default_file) > 0

_in_default_file := sort([[loc.line, loc.column, p] |
	some p
	loc := input.provenance[p]
	loc.file == _framework.file
])
