"""LLaMA-Factory YAML: HF keys through hf_trainer's table, its own keys, Megatron mode, v1."""

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
from trainlint.sources import llama_factory, read_document
from trainlint.sources.base import Document, Input


def test_lora_sft_facts_positions_reference_and_typo() -> None:
    doc = read_document(fixture("llama-factory/lora_sft.yaml"))
    assert isinstance(doc, Document) and doc.format == "llama-factory" and doc.role == "config"
    assert located(doc) == {
        "/model/name": ("Qwen/Qwen3-4B-Instruct-2507", 2, 1),
        "/model/quantization_bits": (4, 3, 1),
        "/model/peft/method": ("lora", 8, 1),
        "/model/peft/rank": (16, 9, 1),
        "/training/parallelism/strategy": ("deepspeed", 11, 1),
        "/model/seq_len": (4096, 16, 1),
        "/training/micro_batch_size": (2, 19, 1),
        "/training/grad_accum_steps": (8, 20, 1),
        "/training/epochs": (3.0, 21, 1),
        "/training/precision": ("fp8", 23, 1),
        "/features/fp8": ("precision", 23, 1),
        "/checkpoint/every_steps": (500.0, 24, 1),
        "/logging/every_steps": (10.0, 26, 1),
        "/logging/reporters": (["wandb"], 27, 1),
        "/training/activation_checkpointing": (False, 28, 1),
        "/resources/world_size": (4, 29, 1),
    }
    assert [(r.path, r.role, r.location.line) for r in doc.references] == [
        ("examples/deepspeed/ds_z3_config.json", "deepspeed", 11)
    ]
    assert near_misses(doc) == [("save_total_limt", "save_total_limit", 25)]


def test_megatron_mode() -> None:
    doc = read_document(fixture("llama-factory/megatron.yaml"))
    assert isinstance(doc, Document) and doc.format == "llama-factory"
    got = located(doc)
    assert got["/training/parallelism/tensor"] == (2, 6, 1)
    assert got["/training/parallelism/pipeline"] == (4, 7, 1)
    assert "/model/peft/method" not in got  # full fine-tuning
    assert doc.unknown_keys == []  # Megatron-Core keys are known


def test_v1_schema_and_its_references() -> None:
    doc = read_document(fixture("llama-factory/v1_fsdp2.yaml"))
    assert isinstance(doc, Document) and doc.format == "llama-factory"
    assert located(doc) == {
        "/model/name": ("Qwen/Qwen3-0.6B", 1, 1),
        "/training/parallelism/strategy": ("fsdp", 4, 3),
        "/training/micro_batch_size": (4, 8, 1),
        "/model/seq_len": (1024, 9, 1),
        "/training/max_steps": (100, 10, 1),
    }
    # an FSDP config_file is not a DeepSpeed JSON; a Hub dataset id is not a file
    assert [(r.path, r.role, r.location.line) for r in doc.references] == [
        ("configs/fsdp2.yaml", "config", 5),
        ("data/v1_sft_demo.yaml", "config", 6),
    ]


def test_v1_dataset_file_is_recognised_without_facts() -> None:
    text = "identity:\n  path: data/identity.json\n  source: local\n  converter: alpaca\n"
    doc = read_document(Input("data/v1_sft_demo.yaml", text))
    assert isinstance(doc, Document) and doc.format == "llama-factory" and doc.facts == []


def test_recognition() -> None:
    hf = "model_name_or_path: x\nper_device_train_batch_size: 2\nsave_steps: 10\n"
    assert llama_factory.recognise(Input("sft.yaml", hf)) == 0
    lf = hf + "stage: sft\n"
    doc = read_document(Input("sft.yaml", lf))
    assert isinstance(doc, Document) and doc.format == "llama-factory"
    assert llama_factory.recognise(Input("x.json", '{"stage": "sft", "cutoff_len": 1}')) == 0


def test_interpolation_and_auto_are_unknown() -> None:
    text = "stage: sft\ncutoff_len: ${oc.env:LEN}\nmodel_name_or_path: ${m}\nbf16: auto\n"
    doc = read_document(Input("x.yaml", text))
    assert isinstance(doc, Document) and doc.format == "llama-factory" and doc.facts == []


_KEYS = [*sorted(llama_factory.KNOWN_KEYS)[:500], "dist_config", "train_dataset"]


@settings(max_examples=examples(200), deadline=None)
@given(mappings(_KEYS))
def test_random_mappings_never_raise(data: dict[str, Any]) -> None:
    parse_never_raises(llama_factory, {"stage": "sft", "cutoff_len": 1, **data})
    parse_never_raises(llama_factory, {"model": "m", "dist_config": data, "train_dataset": "d"})
    parse_never_raises(llama_factory, {"a": {"path": "p", "source": data}})
