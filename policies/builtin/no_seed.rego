# METADATA
# title: no-seed
# description: |
#   Fires when a job sets no random seed (training.seed unknown) and its framework then
#   draws a fresh random seed (its default seed in input.defaults has no value).
#   Those are torchtune `seed: null`, torchtitan's seed and LightningCLI `seed_everything:
#   true`; frameworks that fall back to a fixed seed (HF Trainer, TRL, LLaMA-Factory and
#   axolotl through TrainingArguments' 42, LitGPT 1337, OLMo 6198, GPT-NeoX and NeMo 1234)
#   never fire: their default is a seed. The message names the file and the key to set.
# related_resources:
#   - ref: https://pytorch.org/docs/stable/notes/randomness.html
#     description: PyTorch reproducibility notes; seeding is the first requirement.
#   - ref: https://pytorch.org/torchtune/stable/generated/torchtune.training.set_seed.html
#     description: torchtune set_seed picks a random seed when seed is None.
# custom:
#   id: TL502
#   severity: info
#   category: reproducibility
#   why: |
#     Weight initialisation of new layers (LoRA adapters, heads), data shuffling and dropout
#     all draw from the random generators. Without a fixed seed two runs of the same config
#     differ, so a regression cannot be told from noise and a promising run cannot be
#     reproduced without paying for it again.
#   example: |
#     # lora_finetune.yaml (torchtune)
#     model:
#       _component_: torchtune.models.llama3_1.lora_llama3_1_8b
#     seed: null
#     shuffle: True
#     batch_size: 2
#     epochs: 1
#   fix: |
#     # lora_finetune.yaml (torchtune)
#     model:
#       _component_: torchtune.models.llama3_1.lora_llama3_1_8b
#     seed: 42
#     shuffle: True
#     batch_size: 2
#     epochs: 1
#   remediation: |
#     Set the seed key of the format (torchtune `seed`, torchtitan `[training] seed`,
#     LightningCLI `seed_everything: 42`) and log it with the run; for bit-exact runs also
#     enable deterministic algorithms.
package trainlint.rules.no_seed

import rego.v1

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": "/training/seed"}
}

_applies if {
	not is_number(input.training.seed)
	_random
}

# The framework's default seed when no file sets one: none (null) means a new random seed on
# every run; a fixed default (HF Trainer's 42) is a seed.
_random := input.defaults["/training/seed"] if is_null(input.defaults["/training/seed"].value)

_message := concat("", [
	"no random seed set: ", _random.format, " draws a new random seed on every run when ",
	_key, " is not set, so two runs of ", _random.file, " differ (initialisation, data order, dropout); set ",
	_key, " in ", _random.file,
]) if _applies

_key := concat("", ["`", _random.key, "`"]) if _applies
