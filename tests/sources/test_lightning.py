"""LightningCLI YAML: Trainer kwargs, ModelCheckpoint callbacks, strategies, recognition."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings

from tests.fast_loop import examples
from tests.sources.helpers import located, mappings, near_misses, parse_never_raises
from trainlint.sources import hf_trainer, lightning, read_document
from trainlint.sources.base import Document, Input

CLI = """\
seed_everything: 1234
trainer:
  accelerator: gpu
  devices: 8
  num_nodes: 2
  precision: 16-mixed
  strategy: deepspeed_stage_3_offload
  max_steps: 10000
  max_epochs: -1
  max_time: "00:12:00:00"
  log_every_n_steps: 5
  accumulate_grad_batches: 4
  val_check_interval: 500
  profiler: simple
  detect_anomaly: true
  logger:
    class_path: lightning.pytorch.loggers.WandbLogger
    init_args:
      project: demo
  callbacks:
    - class_path: lightning.pytorch.callbacks.LearningRateMonitor
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args:
        every_n_train_steps: 1000
        save_top_k: -1
        save_weights_only: true
  log_every_n_step: 1
model:
  class_path: my.Module
  init_args:
    compile: true
data:
  class_path: my.Data
  init_args:
    batch_size: 16
    num_workers: 8
    pin_memory: true
optimizer:
  class_path: torch.optim.AdamW
"""


def test_cli_facts_with_positions() -> None:
    doc = read_document(Input("fit.yaml", CLI))
    assert isinstance(doc, Document) and doc.format == "lightning"
    assert located(doc) == {
        "/training/seed": (1234, 1, 1),
        "/resources/gpus_per_node": (8, 4, 3),
        "/resources/nodes": (2, 5, 3),
        "/training/precision": ("fp16", 6, 3),
        "/training/parallelism/strategy": ("deepspeed", 7, 3),
        "/training/parallelism/zero_stage": (3, 7, 3),
        "/training/parallelism/offload_optimizer": (True, 7, 3),
        "/training/max_steps": (10000, 8, 3),
        "/resources/time_limit_s": (43200.0, 10, 3),
        "/logging/every_steps": (5, 11, 3),
        "/training/grad_accum_steps": (4, 12, 3),
        "/eval/every_steps": (500, 13, 3),
        "/eval/strategy": ("steps", 13, 3),
        "/logging/profiler/enabled": (True, 14, 3),
        "/logging/anomaly_detection": (True, 15, 3),
        "/logging/reporters": (["wandb"], 16, 3),
        "/checkpoint/every_steps": (1000, 24, 9),
        "/checkpoint/strategy": ("steps", 24, 9),
        "/checkpoint/save_optimizer": (False, 26, 9),
        "/training/compile": (True, 31, 5),
        "/training/micro_batch_size": (16, 35, 5),
        "/data/num_workers": (8, 36, 5),
        "/data/pin_memory": (True, 37, 5),
        "/training/optimizer/name": ("AdamW", 38, 1),
        "/training/optimizer/family": ("adamw", 38, 1),
        "/training/optimizer/eight_bit": (False, 38, 1),
        "/training/optimizer/experimental": (False, 38, 1),
    }


def test_save_top_k_minus_one_keeps_all_so_no_limit() -> None:
    assert "/checkpoint/keep_last" not in located(lightning.parse(Input("fit.yaml", CLI)))


def test_checkpoint_without_interval_saves_every_epoch() -> None:
    text = (
        "trainer:\n  max_epochs: 3\n  callbacks:\n    - class_path: ModelCheckpoint\n"
        "      init_args:\n        save_top_k: 2\n"
    )
    facts = located(lightning.parse(Input("c.yaml", text)))
    assert facts["/checkpoint/every_epochs"] == (1.0, 5, 7)
    assert facts["/checkpoint/keep_last"] == (2, 6, 9)


def test_cpu_devices_are_not_gpus_and_strategy_objects_read() -> None:
    text = (
        "trainer:\n  accelerator: cpu\n  devices: 4\n"
        "  strategy:\n    class_path: lightning.pytorch.strategies.FSDPStrategy\n"
    )
    facts = located(lightning.parse(Input("c.yaml", text)))
    assert "/resources/gpus_per_node" not in facts
    assert facts["/training/parallelism/strategy"] == ("fsdp", 4, 3)
    listed = "trainer:\n  devices: [0, 1, 2]\n  enable_checkpointing: false\n"
    facts = located(lightning.parse(Input("c.yaml", listed)))
    assert facts["/resources/gpus_per_node"] == (3, 2, 3)
    assert facts["/checkpoint/strategy"] == ("no", 3, 3)


def test_typo_in_trainer_block() -> None:
    assert near_misses(lightning.parse(Input("fit.yaml", CLI))) == [
        ("log_every_n_step", "log_every_n_steps", 27)
    ]


def test_recognition_leaves_nemo_and_hf_alone() -> None:
    assert lightning.recognise(Input("fit.yaml", CLI)) == 0.8
    trainer = "trainer:\n  max_epochs: 3\n  devices: 8\n"
    assert lightning.recognise(Input("t.yaml", trainer)) == 0.6
    # verl's trainer block shares a word with Lightning's, no more: not Lightning's
    verl = "trainer:\n  device: cuda\n  nnodes: 1\n  n_gpus_per_node: 8\n  logger: [console]\n"
    assert lightning.recognise(Input("ppo_trainer.yaml", verl)) == 0.0
    nemo = "trainer:\n  devices: 8\n  max_steps: 10\nexp_manager:\n  name: x\nmodel: {}\n"
    assert lightning.recognise(Input("megatron_gpt_config.yaml", nemo)) == 0.3
    assert lightning.recognise(Input("a.yaml", "save_steps: 10\nlogging_steps: 1\n")) == 0.0
    assert hf_trainer.recognise(Input("fit.yaml", CLI)) == 0.0


@settings(max_examples=examples(150), deadline=None)
@given(mappings(sorted(lightning.TRAINER_KEYS)), mappings(["data", "model", "callbacks"]))
def test_random_mappings_never_raise(trainer: dict[str, Any], top: dict[str, Any]) -> None:
    parse_never_raises(lightning, {**top, "trainer": trainer})


def test_save_top_k_defaults_to_one_and_zero_saves_nothing() -> None:
    callback = "trainer:\n  max_epochs: 3\n  callbacks:\n    - class_path: ModelCheckpoint\n"
    default = located(lightning.parse(Input("c.yaml", callback + "      init_args: {}\n")))
    assert default["/checkpoint/keep_last"][0] == 1  # Lightning's default save_top_k
    zero = callback + "      init_args:\n        save_top_k: 0\n"
    assert located(lightning.parse(Input("c.yaml", zero)))["/checkpoint/strategy"] == ("no", 6, 9)
