"""torchtune recipe configs: facts with exact positions, interpolation unknown, recognition."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings

from tests.fast_loop import examples
from tests.sources.helpers import located, mappings, near_misses, parse_never_raises
from trainlint.sources import hf_trainer, read_document, torchtune
from trainlint.sources.base import Document, Input

RECIPE = """\
output_dir: /tmp/out
model:
  _component_: torchtune.models.llama3_1.qlora_llama3_1_70b
  lora_rank: 16
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  max_seq_len: 4096
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  output_dir: ${output_dir}
batch_size: ${eval:'2 * 2'}
gradient_accumulation_steps: 8
epochs: 2
max_steps_per_epoch: 100
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 3e-4
dtype: bf16
enable_activation_checkpointing: True
compile: False
metric_logger:
  _component_: torchtune.training.metric_logging.WandBLogger
log_every_n_steps: 1
log_level: DEBUG
profiler:
  _component_: torchtune.training.setup_torch_profiler
  enabled: True
fsdp_cpu_offload: True
tensor_parallel_dim: 2
seed: 42
dataloader:
  num_workers: 2
gradient_acumulation_steps: 4
"""


def test_recipe_facts_with_positions() -> None:
    doc = read_document(Input("70B_qlora.yaml", RECIPE))
    assert isinstance(doc, Document) and doc.format == "torchtune"
    assert located(doc) == {
        "/model/name": ("llama3.1-70b", 3, 3),
        "/model/peft/method": ("lora", 3, 3),
        "/model/quantization_bits": (4, 3, 3),
        "/model/peft/rank": (16, 4, 3),
        "/model/seq_len": (4096, 7, 3),
        "/training/grad_accum_steps": (8, 12, 1),
        "/training/epochs": (2.0, 13, 1),
        "/training/max_steps": (200, 14, 1),
        "/training/optimizer/name": ("bitsandbytes.optim.PagedAdamW8bit", 16, 3),
        "/training/optimizer/family": ("adamw", 16, 3),
        "/training/optimizer/eight_bit": (True, 16, 3),
        "/training/optimizer/experimental": (False, 16, 3),
        "/training/precision": ("bf16", 18, 1),
        "/training/activation_checkpointing": (True, 19, 1),
        "/training/compile": (False, 20, 1),
        "/logging/reporters": (["wandb"], 22, 3),
        "/logging/every_steps": (1, 23, 1),
        "/logging/level": ("debug", 24, 1),
        "/logging/profiler/enabled": (True, 27, 3),
        "/logging/profiler/scheduled": (True, 27, 3),
        "/training/parallelism/strategy": ("fsdp", 28, 1),
        "/training/parallelism/offload_params": (True, 28, 1),
        "/training/parallelism/offload_optimizer": (True, 28, 1),
        "/training/parallelism/tensor": (2, 29, 1),
        "/training/seed": (42, 30, 1),
        "/data/num_workers": (2, 32, 3),
        "/checkpoint/every_epochs": (1.0, 8, 1),
        "/checkpoint/strategy": ("epoch", 8, 1),
    }


def test_interpolation_is_unknown_never_literal() -> None:
    doc = torchtune.parse(Input("r.yaml", RECIPE))
    assert "/training/micro_batch_size" not in located(doc)


def test_step_interval_replaces_the_per_epoch_default() -> None:
    text = (
        "model:\n  _component_: torchtune.models.qwen2_5.qwen2_5_3b\ncheckpointer:\n"
        "  _component_: torchtune.training.FullModelHFCheckpointer\n"
        "save_every_n_steps: 250\nkeep_last_n_checkpoints: 2\n"
    )
    facts = located(torchtune.parse(Input("r.yaml", text)))
    assert facts["/checkpoint/every_steps"] == (250, 5, 1)
    assert facts["/checkpoint/keep_last"] == (2, 6, 1)
    assert "/checkpoint/every_epochs" not in facts
    assert facts["/model/name"] == ("qwen2.5-3b", 2, 3)


def test_typo_is_a_near_miss() -> None:
    doc = torchtune.parse(Input("r.yaml", RECIPE))
    assert near_misses(doc) == [("gradient_acumulation_steps", "gradient_accumulation_steps", 33)]


def test_recognition() -> None:
    assert torchtune.recognise(Input("r.yaml", RECIPE)) == 0.95
    custom = "model:\n  _component_: mypkg.build\nbatch_size: 2\n"
    assert torchtune.recognise(Input("r.yaml", custom)) == 0.6
    hf = "per_device_train_batch_size: 4\nsave_steps: 10\n"
    assert torchtune.recognise(Input("a.yaml", hf)) == 0.0
    assert hf_trainer.recognise(Input("r.yaml", RECIPE)) == 0.0


def test_builder_names_match_the_catalog_spelling() -> None:
    assert torchtune.builder("torchtune.models.qwen2_5.lora_qwen2_5_72b_instruct") == (
        "qwen2.5-72b-instruct"
    )
    assert torchtune.builder("torchtune.models.llama4.llama4_scout_17b_16e") == (
        "llama4-scout-17b-16e"
    )


@settings(max_examples=examples(150), deadline=None)
@given(mappings([*torchtune.KNOWN_KEYS, "_component_"]))
def test_random_mappings_never_raise(data: dict[str, Any]) -> None:
    data.setdefault("model", {"_component_": "torchtune.models.llama2.llama2_7b"})
    parse_never_raises(torchtune, data)
