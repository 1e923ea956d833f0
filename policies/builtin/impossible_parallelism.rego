# METADATA
# title: impossible-parallelism
# description: |
#   Fires when the job's stated model-parallel sizes cannot be laid out on the GPUs its launch
#   starts (resources.world_size, as stated or computed from GPUs per node x nodes): tensor x
#   pipeline x context parallel sizes more than the world size or not dividing it, or expert
#   x pipeline parallel sizes not dividing it. The framework (Megatron-LM, NeMo, torchtitan)
#   refuses such a layout at start-up, after the allocation is granted. Every number in the
#   message is one the job's files state; trainlint estimates nothing for such a job.
# related_resources:
#   - ref: https://docs.nvidia.com/megatron-core/developer-guide/latest/user-guide/index.html
#     description: Megatron Core, the data-parallel size is world size / (TP x PP x CP)
# custom:
#   id: TL108
#   severity: error
#   category: resources
#   why: |
#     Megatron-style training splits each model replica over tensor x pipeline x context
#     parallel ranks and replicates it over the rest: the world size must be a multiple of
#     that product. A launch with fewer GPUs, or a count the product does not divide, fails
#     during initialisation on every rank; the queue wait, the container start and the
#     allocation are paid for and nothing trains. A linter that divided the model over ranks
#     that do not exist would instead report the job as fitting.
#   example: |
#     # train.sh
#     torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py \
#         --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 \
#         --micro-batch-size 1 --global-batch-size 1536 --train-iters 500000
#   fix: |
#     # train.sh (16 nodes of 8 GPUs: one replica of TP 8 x PP 16)
#     torchrun --nproc_per_node 8 --nnodes 16 pretrain_gpt.py \
#         --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 \
#         --micro-batch-size 1 --global-batch-size 1536 --train-iters 500000
#   remediation: |
#     Launch a multiple of tensor x pipeline x context parallel GPUs (more nodes), or lower the
#     parallel sizes so that their product divides the GPUs you have.
package trainlint.rules.impossible_parallelism

import rego.v1

import data.trainlint.lib.fmt

findings contains finding if {
	is_number(_world)
	_world > 0
	some layout in _layouts
	layout.needed > 1
	_wrong(layout.needed)
	finding := {
		"message": concat("", [
			concat(" x ", layout.parts), " needs ", _multiple(layout.needed), " GPUs, but the launch starts ",
			fmt.int(_world), ": the job cannot start",
		]),
		"pointer": layout.pointer,
	}
}

_world := input.resources.world_size

_wrong(needed) if _world < needed

_wrong(needed) if _world % needed != 0

_multiple(needed) := fmt.int(needed) if _world < needed
else := concat("", ["a multiple of ", fmt.int(needed)])

_sizes := {name: value |
	some name, field in _field
	value := input.training.parallelism[field]
	is_number(value)
	value > 1
}

# The replica layout (every rank), and the expert layout (expert x pipeline ranks, a lower
# bound on what the expert tensor size needs).
_layouts contains _layout(["TP", "PP", "CP"])

_layouts contains _layout(["EP", "PP"]) if _sizes.EP

_layout(names) := {
	"parts": [concat(" ", [name, fmt.int(_sizes[name])]) | some name in names; _sizes[name]],
	"needed": product([_sizes[name] | some name in names; _sizes[name]]),
	"pointer": concat("", ["/training/parallelism/", _field[[name | some name in names; _sizes[name]][0]]]),
}

_field := {"TP": "tensor", "PP": "pipeline", "CP": "context", "EP": "expert"}
