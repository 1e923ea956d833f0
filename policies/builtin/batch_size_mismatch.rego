# METADATA
# title: batch-size-mismatch
# description: |
#   Fires when the job's files state a global batch, a micro-batch per GPU, the gradient
#   accumulation steps and the GPUs it launches on, and the global batch is not micro-batch x
#   accumulation x data-parallel ranks (world size / (tensor x pipeline x context parallel
#   sizes)). A batch value trainlint computed itself (job.derived) never counts: only stated
#   batches can disagree (the world size may be the launch's GPUs per node x nodes). A layout
#   that does not divide the world size is TL108's.
# related_resources:
#   - ref: https://www.deepspeed.ai/docs/config-json/#batch-size-related-parameters
#     description: DeepSpeed, train_batch_size = micro batch per GPU x accumulation x GPUs
# custom:
#   id: TL109
#   severity: warning
#   category: resources
#   why: |
#     The three numbers are tied: DeepSpeed checks train_batch_size against the others at
#     start-up and stops the job, other frameworks silently train with a batch (and so a
#     learning-rate schedule and a step count) other than the one written. Either way the
#     configuration does not say what the run does, and every estimate built on the batch is
#     off by the same factor.
#   example: |
#     # train.sh
#     deepspeed --num_gpus 8 train.py --deepspeed ds.json
#     # ds.json
#     {"train_batch_size": 512, "train_micro_batch_size_per_gpu": 4,
#      "gradient_accumulation_steps": 8}
#   fix: |
#     # train.sh
#     deepspeed --num_gpus 8 train.py --deepspeed ds.json
#     # ds.json
#     {"train_batch_size": 256, "train_micro_batch_size_per_gpu": 4,
#      "gradient_accumulation_steps": 8}
#   remediation: |
#     State two of the three and let the framework derive the third (DeepSpeed: "auto"), or
#     make global = micro x accumulation x data-parallel GPUs hold for the GPUs launched.
package trainlint.rules.batch_size_mismatch

import rego.v1

import data.trainlint.lib.fmt

findings contains finding if {
	_stated
	_world % _spans == 0
	_expected != _global
	finding := {
		"message": concat("", [
			"global batch ", fmt.int(_global), " is not micro-batch ", fmt.int(_micro),
			" x accumulation ", fmt.int(_accum), " x ", fmt.plural(_replicas, "data-parallel rank"),
			" (", fmt.int(_expected), "): the framework stops at start-up or trains with another batch than the one written",
		]),
		"pointer": "/training/global_batch_size",
	}
}

_global := input.training.global_batch_size

_micro := input.training.micro_batch_size

_accum := input.training.grad_accum_steps

_world := input.resources.world_size

_stated if {
	count([value | some value in [_global, _micro, _accum, _world]; is_number(value); value > 0]) == 4
	count([pointer | some pointer in _inputs; pointer in _derived]) == 0
}

_derived := object.get(input, "derived", [])

# The batch values must be stated; the world size may be the launch's GPUs per node x nodes.
_inputs := ["/training/global_batch_size", "/training/micro_batch_size", "/training/grad_accum_steps"]

_spans := product([_size(field) | some field in ["tensor", "pipeline", "context"]])

_size(field) := input.training.parallelism[field] if {
	is_number(input.training.parallelism[field])
	input.training.parallelism[field] >= 1
} else := 1

# Evaluated only for a job that states all four (an OPA server evaluates every rule).
_replicas := _world / _spans if _stated

_expected := (_micro * _accum) * _replicas if _stated
