"""Axolotl YAML and its --cloud YAML: facts with positions, references, trackers, typos."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings

from tests.fast_loop import examples
from tests.sources.test_hf_and_deepspeed import (
    fixture,
    located,
    mappings,
    near_misses,
    parse_never_raises,
)
from trainlint.sources import axolotl, read_document
from trainlint.sources.base import Document, Input


def test_lora_fsdp_facts_and_positions() -> None:
    doc = read_document(fixture("axolotl/lora_fsdp.yaml"))
    assert isinstance(doc, Document) and doc.format == "axolotl" and doc.role == "config"
    got = located(doc)
    assert {p: got[p] for p in got if not p.startswith("/training/optimizer/")} == {
        "/model/name": ("meta-llama/Llama-3.1-8B", 1, 1),
        "/model/quantization_bits": (4, 2, 1),
        "/model/peft/method": ("qlora", 3, 1),
        "/model/peft/rank": (16, 4, 1),
        "/model/seq_len": (4096, 8, 1),
        "/training/micro_batch_size": (2, 9, 1),
        "/training/grad_accum_steps": (4, 10, 1),
        "/training/epochs": (3.0, 11, 1),
        "/training/precision": ("fp8", 14, 1),  # fp8 with bf16: fp8 matmuls win
        "/features/fp8": ("precision", 14, 1),
        "/training/activation_checkpointing": (True, 15, 1),
        "/checkpoint/every_epochs": (0.25, 16, 1),  # saves_per_epoch: 4
        "/checkpoint/keep_last": (2, 17, 1),
        "/checkpoint/save_optimizer": (False, 18, 1),
        "/eval/every_steps": (50.0, 19, 1),
        "/logging/every_steps": (5.0, 20, 1),
        "/logging/reporters": (["wandb", "tensorboard"], 21, 1),
        "/name": ("run-7", 22, 1),
        "/training/seed": (7, 24, 1),
        "/training/parallelism/strategy": ("fsdp", 25, 1),
        "/training/parallelism/zero_stage": (2, 30, 3),  # fsdp_config beats the fsdp list
        "/training/parallelism/offload_params": (True, 29, 3),
        "/training/parallelism/tensor": (2, 31, 1),
    }
    assert got["/training/optimizer/eight_bit"] == (True, 12, 1)
    assert near_misses(doc) == [("saves_per_epok", "saves_per_epoch", 32)]


def test_deepspeed_reference_auto_and_interpolation_are_unknown() -> None:
    doc = read_document(fixture("axolotl/deepspeed_auto.yaml"))
    assert isinstance(doc, Document) and doc.format == "axolotl"
    got = located(doc)
    assert "/model/name" not in got  # ${oc.env:BASE_MODEL}
    assert "/training/precision" not in got  # bf16: auto
    assert got["/checkpoint/every_steps"] == (0.1, 9, 1)  # a fraction of the run
    assert got["/resources/world_size"] == (8, 7, 1)
    assert got["/training/parallelism/strategy"] == ("deepspeed", 5, 1)
    assert [(r.path, r.role, r.location.line) for r in doc.references] == [
        ("deepspeed_configs/zero3_bf16.json", "deepspeed", 5)
    ]


def test_cloud_yaml() -> None:
    text = "provider: baseten\ngpu: h100\ngpu_count: 8\nnode_count: 2\ntimeout: 7200\n"
    doc = read_document(Input("cloud.yaml", text))
    assert isinstance(doc, Document) and doc.format == "axolotl"
    assert {k: v for k, v in located(doc).items() if k != "/resources/scheduler"} == {
        "/resources/gpu/model": ("H100-SXM", 2, 1),
        "/resources/gpus_per_node": (8, 3, 1),
        "/resources/nodes": (2, 4, 1),
        "/resources/time_limit_s": (7200.0, 5, 1),
    }
    assert ("/resources/scheduler", "axolotl-cloud") in [(f.pointer, f.value) for f in doc.facts]
    typo = read_document(Input("c.yaml", text + "gpu_cont: 2\n"))
    assert isinstance(typo, Document) and near_misses(typo) == [("gpu_cont", "gpu_count", 6)]


def test_use_wandb_false_turns_wandb_off() -> None:
    text = "base_model: x\nmicro_batch_size: 1\nwandb_project: p\nuse_wandb: false\n"
    doc = read_document(Input("a.yaml", text))
    assert isinstance(doc, Document) and "/logging/reporters" not in located(doc)


def test_recognition_beats_hf_and_spares_others() -> None:
    many_hf = (
        "base_model: x\nsequence_len: 512\nlogging_steps: 1\nsave_steps: 10\nsave_strategy: steps\n"
        "save_total_limit: 2\nwarmup_ratio: 0.1\nlearning_rate: 1e-4\noutput_dir: out\n"
    )
    doc = read_document(Input("a.yaml", many_hf))
    assert isinstance(doc, Document) and doc.format == "axolotl"
    hf = "model_name_or_path: x\nper_device_train_batch_size: 2\nsave_steps: 10\n"
    assert axolotl.recognise(Input("sft.yaml", hf)) == 0
    assert axolotl.recognise(Input("z.json", '{"base_model": "x", "micro_batch_size": 1}')) == 0


@settings(max_examples=examples(200), deadline=None)
@given(mappings([*sorted(axolotl.KNOWN_KEYS)[:400], "fsdp_config", "fsdp", "gpu", "gpu_count"]))
def test_random_mappings_never_raise(data: dict[str, Any]) -> None:
    parse_never_raises(axolotl, {"base_model": "x", "micro_batch_size": 1, **data})
    parse_never_raises(axolotl, {"gpu": "h100", "gpu_count": 1, "secrets": [], **data})
    parse_never_raises(axolotl, {"fsdp_config": data, "fsdp": list(data)})
