# METADATA
# title: unbounded-checkpoints
# description: |
#   Fires when no checkpoint retention limit is set (checkpoint.keep_last) and the checkpoints
#   the run keeps (saves x checkpoint size) need more than max_storage_bytes. It also needs
#   more of them kept than suggested_keep_last; the limit is Hugging Face save_total_limit,
#   torchtune/GPT-NeoX keep_last_n_checkpoints, Lightning save_top_k or torchtitan
#   keep_latest_k. The message gives the saves, the size, the total, its monthly cost at
#   usd_per_gb_month (an assumed object-storage price; the org fleet's storage-price,
#   data.trainlint.fleet, replaces it) and a keep-last suggestion; the cost is storage per
#   month, not GPU time, so the finding carries no per-run waste.
# related_resources:
#   - ref: https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.save_total_limit
#     description: TrainingArguments.save_total_limit (default None keeps every checkpoint)
#   - ref: https://aws.amazon.com/s3/pricing/
#     description: Amazon S3 Standard storage price, the source of the default usd_per_gb_month
# custom:
#   id: TL202
#   severity: warning
#   category: checkpointing
#   autofix:
#     safe: true
#     description: adds Hugging Face save_total_limit (the suggested_keep_last parameter) on a line after save_steps, in YAML, JSON or a continued command line; not in formats without that key.
#   why: |
#     Without a retention limit every checkpoint a run saves stays on disk. A resumable
#     checkpoint holds weights, fp32 master weights and optimizer moments: about 14 bytes per
#     parameter, 112 GB for an 8B model. Saving every 500 of 20,000 steps with nothing deleted
#     leaves 40 of them, 4.5 TB, on (often network or premium) storage that is billed every
#     month until someone cleans it up, and a full volume kills the run at its next save.
#   example: |
#     # train.yaml (Hugging Face Trainer, Llama 3.1 8B)
#     # trainlint: gpu=H100 gpus=8
#     model_name_or_path: meta-llama/Llama-3.1-8B
#     per_device_train_batch_size: 4
#     max_steps: 20000
#     save_steps: 500
#   fix: |
#     # train.yaml
#     # trainlint: gpu=H100 gpus=8
#     model_name_or_path: meta-llama/Llama-3.1-8B
#     per_device_train_batch_size: 4
#     max_steps: 20000
#     save_steps: 500
#     save_total_limit: 3
#   remediation: |
#     Keep only the last few checkpoints (save_total_limit, keep_last_n_checkpoints,
#     save_top_k, keep_latest_k), save optimizer state only on the checkpoints you resume
#     from (save_only_model for the others), or copy chosen checkpoints to cheaper storage.
package trainlint.rules.unbounded_checkpoints

import rego.v1

import data.trainlint.lib.fmt

params := data.trainlint.params.unbounded_checkpoints

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": _pointer}
}

_applies if {
	is_null(object.get(input.checkpoint, "keep_last", null))
	is_number(_ckpt.storage_bytes)
	_ckpt.storage_bytes > params.max_storage_bytes
	_more_than_suggested
}

# A limit only helps when more checkpoints than the suggested number are kept.
_more_than_suggested if not is_number(_ckpt.kept)

_more_than_suggested if _ckpt.kept > params.suggested_keep_last

_ckpt := input.estimates.checkpoint

_message := concat("", [
	"no checkpoint retention limit: ", _kept, " is ~", fmt.bytes(_ckpt.storage_bytes), " (",
	fmt.basis(["checkpoint.kept", "checkpoint.storage_bytes"]), "), ~",
	fmt.usd((_ckpt.storage_bytes / 1e9) * _price), " per month at $",
	fmt.num(_price), "/GB-month (", _price_source, "); ", _fix,
]) if _applies

# The org fleet's storage price (data.trainlint.fleet) where it states one: a known price.
# (data.trainlint as a whole holds the rules themselves: read the fleet's path only.)
_fleet_price := data.trainlint.fleet["storage-price"]

_price := _fleet_price if is_number(_fleet_price) else := params.usd_per_gb_month

_price_source := "the fleet's price" if is_number(_fleet_price) else := "assumed price"

_kept := concat("", [fmt.plural(_ckpt.kept, "save"), " × ", fmt.bytes(_ckpt.size_bytes)]) if {
	is_number(_ckpt.kept)
	is_number(_ckpt.size_bytes)
} else := "every save kept"

_fix := concat("", [
	"keep the last ", fmt.int(params.suggested_keep_last), " (save_total_limit / ",
	"keep_last_n_checkpoints / save_top_k / keep_latest_k): ~",
	fmt.bytes(params.suggested_keep_last * _ckpt.size_bytes),
]) if {
	is_number(_ckpt.size_bytes)
} else := concat("", [
	"keep the last ", fmt.int(params.suggested_keep_last),
	" (save_total_limit / keep_last_n_checkpoints / save_top_k / keep_latest_k)",
])

# The save interval, where the retention limit belongs; else the checkpoint settings.
_pointer := "/checkpoint/every_steps" if input.provenance["/checkpoint/every_steps"]
else := "/checkpoint"
