"""litgpt config_hub YAML: facts with exact positions, derived accumulation, recognition."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from tests.fast_loop import examples
from tests.sources.helpers import located, mappings, near_misses, parse_never_raises
from trainlint.lint import load_jobs
from trainlint.sources import hf_trainer, litgpt, read_document
from trainlint.sources.base import Document, Input

CONFIG = """\
checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3.1-8B
out_dir: out/finetune/qlora
precision: bf16-true
quantize: bnb.nf4-dq
devices: 2
num_nodes: 1
lora_r: 16
data:
  class_path: litgpt.data.Alpaca
  init_args:
    num_workers: 4
train:
  save_interval: 200
  log_interval: 10
  global_batch_size: 32
  micro_batch_size: 4
  epochs: 3
  max_tokens: ${tokens}
  max_seq_length: 1024
  save_intervall: 5
eval:
  interval: 100
optimizer:
  class_path: torch.optim.AdamW
  init_args:
    lr: 2e-4
logger_name: wandb
seed: 1337
"""


def test_finetune_facts_with_positions() -> None:
    doc = read_document(Input("qlora.yaml", CONFIG))
    assert isinstance(doc, Document) and doc.format == "litgpt"
    assert located(doc) == {
        "/model/name": ("meta-llama/Meta-Llama-3.1-8B", 1, 1),
        "/training/precision": ("bf16-true", 3, 1),
        "/model/quantization_bits": (4, 4, 1),
        "/resources/gpus_per_node": (2, 5, 1),
        "/resources/nodes": (1, 6, 1),
        "/model/peft/method": ("lora", 7, 1),
        "/model/peft/rank": (16, 7, 1),
        "/data/num_workers": (4, 11, 5),
        "/checkpoint/every_steps": (200, 13, 3),
        "/checkpoint/strategy": ("steps", 13, 3),
        "/logging/every_steps": (10, 14, 3),
        "/training/global_batch_size": (32, 15, 3),
        "/training/grad_accum_steps": (4, 15, 3),
        "/training/micro_batch_size": (4, 16, 3),
        "/training/epochs": (3.0, 17, 3),
        "/model/seq_len": (1024, 19, 3),
        "/eval/every_steps": (100, 22, 3),
        "/eval/strategy": ("steps", 22, 3),
        "/training/optimizer/name": ("torch.optim.AdamW", 23, 1),
        "/training/optimizer/family": ("adamw", 23, 1),
        "/training/optimizer/eight_bit": (False, 23, 1),
        "/training/optimizer/experimental": (False, 23, 1),
        "/logging/reporters": (["wandb"], 27, 1),
        "/training/seed": (1337, 28, 1),
    }


def test_devices_auto_and_interpolation_are_unknown() -> None:
    text = (
        "model_name: pythia-14m\ndevices: auto\ntrain:\n"
        "  global_batch_size: 8\n  micro_batch_size: 2\n  max_tokens: ${x}\n"
    )
    facts = located(litgpt.parse(Input("p.yaml", text)))
    assert "/resources/gpus_per_node" not in facts
    assert "/training/grad_accum_steps" not in facts
    assert "/training/dataset_tokens" not in facts


def test_typo_in_train_block() -> None:
    assert near_misses(litgpt.parse(Input("q.yaml", CONFIG))) == [
        ("save_intervall", "save_interval", 20)
    ]


def test_recognition() -> None:
    assert litgpt.recognise(Input("q.yaml", CONFIG)) == 0.9
    assert litgpt.recognise(Input("h.yaml", "train: true\ntest: true\n")) == 0.0
    assert hf_trainer.recognise(Input("q.yaml", CONFIG)) == 0.0


@settings(max_examples=examples(150), deadline=None)
@given(mappings(sorted(litgpt.KNOWN_KEYS)), mappings(sorted(litgpt.TRAIN_KEYS)))
def test_random_mappings_never_raise(data: dict[str, Any], train: dict[str, Any]) -> None:
    parse_never_raises(litgpt, {**data, "train": train})


# litgpt's config_hub (fixtures/litgpt/MANIFEST.tsv).
FIXTURES = Path(__file__).parent / "fixtures" / "litgpt"


def test_pretrain_on_several_devices_is_fsdp_hybrid_shard() -> None:
    """``devices: auto`` in a pretrain config: litgpt's pretrain.py shards with HYBRID_SHARD."""
    path = FIXTURES / "pretrain_tinyllama.yaml"
    facts = located(litgpt.parse(Input(str(path), path.read_text())))
    assert facts["/training/parallelism/strategy"] == ("fsdp:hybrid_shard", 101, 1)
    assert facts["/training/parallelism/zero_stage"] == (3, 101, 1)
    assert "/training/activation_checkpointing" not in facts


def test_full_finetune_on_four_devices_is_sharded_per_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """finetune/full.py on 4 devices: FSDP FULL_SHARD recomputing each Block, so model states
    are per shard (not DDP's full copy on every GPU)."""
    shutil.copy(FIXTURES / "finetune_llama-3.1-8b_full.yaml", tmp_path / "full.yaml")
    monkeypatch.chdir(tmp_path)  # a path under a test_* folder reads as an evaluation file
    (job,) = load_jobs([Path(".")])
    par = job.training.parallelism
    assert (par.strategy, par.zero_stage, job.training.activation_checkpointing) == (
        "fsdp",
        3,
        True,
    )
    memory, params = job.estimates.memory, job.estimates.params
    assert params is not None and memory.optimizer_bytes is not None
    assert memory.optimizer_bytes < params * 8 / 2  # AdamW's two fp32 moments, over 4 ranks


@pytest.mark.parametrize(
    ("text", "strategy"),
    [
        ("checkpoint_dir: checkpoints/x\ndevices: 1\n", None),  # one device: strategy "auto"
        ("checkpoint_dir: checkpoints/x\n", None),  # finetune's default devices is 1
        ("checkpoint_dir: checkpoints/x\ndevices: 1\nnum_nodes: 2\n", "fsdp"),
        ("model_name: pythia-14m\n", "fsdp:hybrid_shard"),  # pretrain's default is auto
        ("model_name: pythia-14m\ndevices: ${oc.env:GPUS}\n", None),
        ("checkpoint_dir: checkpoints/x\ndevices: 2\nquantize: bnb.nf4\n", None),  # refused
    ],
)
def test_strategy_follows_the_device_count(text: str, strategy: str | None) -> None:
    full = text + "train:\n  micro_batch_size: 1\n  save_interval: 10\n"
    facts = located(litgpt.parse(Input("c.yaml", full)))
    assert facts.get("/training/parallelism/strategy", (None,))[0] == strategy
