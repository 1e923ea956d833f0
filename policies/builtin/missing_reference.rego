# METADATA
# title: missing-reference
# description: |
#   Fires when a file the job references does not exist: a --deepspeed or --config file on a
#   launch line, accelerate's --config_file, a deepspeed: key in a config. The references are
#   those of docs/formats.md (Trainer, Axolotl, LLaMA-Factory and the other formats). The
#   finding points at the referencing line and names both files; a path is tried from the
#   referring file's folder up to the checked root, and a path built from an unset variable is
#   unknown, not missing.
# related_resources:
#   - ref: https://huggingface.co/docs/transformers/main_classes/deepspeed
#     description: Hugging Face Transformers DeepSpeed integration (the deepspeed argument takes a config file path)
#   - ref: https://huggingface.co/docs/accelerate/package_reference/cli
#     description: Accelerate CLI, accelerate launch --config_file
# custom:
#   id: TL904
#   severity: error
#   category: input
#   why: |
#     A missing config file fails the launch only once the job has been scheduled and every
#     node has started its containers, loaded the model and initialised the process group, so
#     the allocation is paid for and the queue slot is lost; on a multi-node job the failure
#     can also surface as a hang while the other ranks wait. trainlint cannot see the ZeRO,
#     FSDP or precision settings the file was meant to bring either, so its estimates for the
#     job are incomplete.
#   example: |
#     # train.slurm
#     #SBATCH --gres=gpu:h100:8
#     torchrun --nproc_per_node=8 train.py --config configs/sft.yaml \
#         --deepspeed configs/ds_zero3.json
#     # (configs/ds_zero3.json is not in the repository)
#   fix: |
#     # train.slurm
#     #SBATCH --gres=gpu:h100:8
#     torchrun --nproc_per_node=8 train.py --config configs/sft.yaml \
#         --deepspeed configs/ds_zero3.json
#     # configs/sft.yaml
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_steps: 2000
#     # configs/ds_zero3.json
#     {"zero_optimization": {"stage": 3}}
#   remediation: |
#     Fix the path, or add the missing file to the repository.
package trainlint.rules.missing_reference

import rego.v1

findings contains finding if {
	some i, item in input.missing_references
	is_string(item.path)
	is_string(item.file)
	finding := {
		"message": concat("", ["referenced file '", item.path, "' does not exist (referenced from ", item.file, ")"]),
		"pointer": sprintf("/missing_references/%d", [i]),
	}
}
