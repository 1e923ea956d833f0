# METADATA
# title: export-every-checkpoint
# description: |
#   Fires when every checkpoint also writes a Hugging Face weight export
#   (checkpoint.export_hf, OpenRLHF --ckpt.save_hf) and checkpoints come every 1 to
#   max_every_steps - 1 steps (checkpoint.every_steps). The message gives the interval and,
#   on a run of stated length, the number of exports. Severity is info: the cost of an export
#   (gathering the sharded weights to one rank and writing them again) is not estimated.
# related_resources:
#   - ref: https://github.com/OpenRLHF/OpenRLHF/blob/main/openrlhf/cli/train_ppo_ray.py
#     description: OpenRLHF trainer flags (--ckpt.save_steps, --ckpt.save_hf, --ckpt.max_num)
#   - ref: https://huggingface.co/docs/transformers/main/en/main_classes/model#transformers.PreTrainedModel.save_pretrained
#     description: Hugging Face save_pretrained, the weight export each save repeats
# custom:
#   id: TL207
#   severity: info
#   category: checkpointing
#   why: |
#     A Hugging Face export is a second copy of the weights beside the training checkpoint:
#     under ZeRO-3 or FSDP the shards are gathered onto one rank and written as safetensors
#     while every other GPU waits. Once at the end it is what the run is for; at every
#     checkpoint of a short interval it repeats that stall and fills the disk with full copies
#     of a model that a later step replaces.
#   example: |
#     # train_ppo.sh
#     python3 -m openrlhf.cli.train_ppo_ray \
#        --actor.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \
#        --ckpt.save_steps 5 \
#        --ckpt.save_hf \
#        --train.batch_size 128
#   fix: |
#     # train_ppo.sh
#     python3 -m openrlhf.cli.train_ppo_ray \
#        --actor.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \
#        --ckpt.save_steps 500 \
#        --train.batch_size 128
#   remediation: |
#     Drop the export from periodic saves (the final model is written at the end anyway) and
#     convert a chosen checkpoint when you need it, or save less often.
package trainlint.rules.export_every_checkpoint

import rego.v1

import data.trainlint.lib.fmt

params := data.trainlint.params.export_every_checkpoint

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": "/checkpoint/export_hf"}
}

_applies if {
	input.checkpoint.export_hf == true
	is_number(input.checkpoint.every_steps)
	input.checkpoint.every_steps >= 1
	input.checkpoint.every_steps < params.max_every_steps
}

_every := input.checkpoint.every_steps

_steps := input.training.max_steps if is_number(input.training.max_steps)
else := input.training.total_steps if is_number(input.training.total_steps)
else := input.estimates.run.steps if is_number(input.estimates.run.steps)

_count := concat("", [": ~", fmt.int(floor(_steps / _every)), " exports in a ", fmt.int(_steps), "-step run"]) if {
	_applies
	is_number(_steps)
} else := ""

_message := concat("", [
	"a Hugging Face weight export at every checkpoint, every ", fmt.steps(_every), _count,
	"; export only the final model (drop the export from periodic saves) or save every ≥ ",
	fmt.steps(params.max_every_steps),
]) if _applies
