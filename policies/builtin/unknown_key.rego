# METADATA
# title: unknown-key
# description: |
#   Fires on a key its format does not know that is one or two edits from one it does
#   (save_step, loging_steps, saves_per_epok); the message suggests the intended key. The
#   formats are Hugging Face TrainingArguments YAML, DeepSpeed JSON, Axolotl, LLaMA-Factory,
#   nanoGPT config modules and the others with a key table. A key far from every known one is
#   left alone (recipes carry their own keys), and a mistake in trainlint's own annotations is
#   a TL901 error instead.
# related_resources:
#   - ref: https://huggingface.co/docs/transformers/main/en/main_classes/trainer
#     description: Hugging Face TrainingArguments, the keys a Trainer YAML may set
#   - ref: https://www.deepspeed.ai/docs/config-json/
#     description: DeepSpeed configuration JSON reference
#   - ref: https://docs.axolotl.ai/docs/config-reference.html
#     description: Axolotl config reference
# custom:
#   id: TL903
#   severity: warning
#   category: input
#   why: |
#     Many configs are loaded leniently: recipe parsers keep only the keys their dataclasses
#     declare, DeepSpeed reads the top-level keys it knows and ignores the rest, and nanoGPT's
#     configurator executes the config module, so a misspelled name is just an unused global.
#     The framework then runs with its default for the setting the author meant to change,
#     with no error: save_step: 500 keeps saving at
#     the default interval, saves_per_epok never limits saves, n_layers never changes the model.
#     The mistake surfaces hours later as an unexpected checkpoint, log volume or model, paid
#     for in GPU time.
#   example: |
#     # sft.yaml
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_steps: 2000
#     save_strategy: steps
#     save_step: 500
#   fix: |
#     # sft.yaml
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_steps: 2000
#     save_strategy: steps
#     save_steps: 500
#   remediation: |
#     Rename the key to the one suggested, or remove it.
package trainlint.rules.unknown_key

import rego.v1

findings contains finding if {
	some i, item in input.unknown_keys
	is_string(item.key)
	is_string(item.format)
	finding := {
		"message": concat("", [
			"unknown ", item.format, " key '", item.key, "'", _hint(item),
			"; it is ignored, so its default applies",
		]),
		"pointer": sprintf("/unknown_keys/%d", [i]),
	}
}

# Function names are unique in the pack (regopy 1.5: see trainlint/engine/regopy_backend.py).
_hint(item) := concat("", [": did you mean '", item.suggestion, "'?"]) if {
	is_string(item.suggestion)
} else := ""
