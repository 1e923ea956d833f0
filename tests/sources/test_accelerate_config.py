"""Accelerate config YAML: GPUs and nodes, precision, FSDP/DeepSpeed plugins, references."""

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
from trainlint.sources import accelerate_config, read_document
from trainlint.sources.accelerate_config import sharding_stage
from trainlint.sources.base import Document, Input


def test_fsdp_two_nodes_facts_positions_and_typos() -> None:
    doc = read_document(fixture("accelerate/fsdp_two_nodes.yaml"))
    assert isinstance(doc, Document) and doc.format == "accelerate" and doc.role == "config"
    assert located(doc) == {
        "/training/parallelism/strategy": ("fsdp", 2, 1),
        "/training/activation_checkpointing": (True, 4, 3),
        "/training/parallelism/offload_params": (True, 5, 3),
        "/training/parallelism/zero_stage": (2, 6, 3),  # SHARD_GRAD_OP shards like ZeRO-2
        "/training/precision": ("fp16", 9, 1),
        "/resources/nodes": (2, 10, 1),
        "/resources/world_size": (16, 11, 1),  # num_processes is the total across machines
        "/training/parallelism/tensor": (2, 14, 3),
    }
    assert sorted(near_misses(doc)) == [
        ("fsdp_sharding_stratgy", "fsdp_sharding_strategy", 7),
        ("num_proceses", "num_processes", 12),
    ]


def test_deepspeed_plugin_and_reference() -> None:
    doc = read_document(fixture("accelerate/deepspeed_ref.yaml"))
    assert isinstance(doc, Document) and doc.format == "accelerate"
    got = located(doc)
    assert got["/training/parallelism/strategy"] == ("deepspeed", 8, 1)
    assert got["/training/parallelism/zero_stage"] == (3, 7, 3)
    assert got["/training/parallelism/offload_optimizer"] == (True, 5, 3)  # nvme
    assert got["/training/parallelism/offload_params"] == (False, 6, 3)  # none
    assert got["/training/grad_accum_steps"] == (4, 4, 3)
    assert got["/training/precision"] == ("fp32", 9, 1)  # mixed_precision: 'no'
    assert "/resources/gpus_per_node" not in got  # per node is derived once the job is merged
    assert [(r.path, r.role, r.location.line) for r in doc.references] == [
        ("ds/zero3.json", "deepspeed", 3)
    ]
    assert doc.unknown_keys == []


def test_single_gpu_and_unstated_machines() -> None:
    doc = read_document(Input("default_config.yaml", 'distributed_type: "NO"\nnum_processes: 1\n'))
    assert isinstance(doc, Document) and doc.format == "accelerate"
    assert located(doc) == {"/resources/world_size": (1, 2, 1)}  # NO: no strategy, no node count


def test_sharding_names_numbers_and_fsdp2_flag() -> None:
    assert [sharding_stage(v) for v in ("FULL_SHARD", "shard_grad_op", "NO_SHARD")] == [3, 2, 0]
    assert [sharding_stage(v) for v in ("HYBRID_SHARD", "HYBRID_SHARD_ZERO2", 1, 3)] == [3, 2, 3, 0]
    assert [sharding_stage(v) for v in (True, False, "true", "maybe")] == [3, 2, 3, None]


def test_interpolation_is_unknown() -> None:
    text = "distributed_type: MULTI_GPU\nnum_processes: ${oc.env:NPROC}\nnum_machines: 1\n"
    doc = read_document(Input("acc.yaml", text))
    assert isinstance(doc, Document) and "/resources/world_size" not in located(doc)


def test_recognition_by_content_only() -> None:
    assert (
        accelerate_config.recognise(Input("x.yaml", "compute_environment: LOCAL_MACHINE\n")) > 0.9
    )
    assert accelerate_config.recognise(Input("x.yaml", "per_device_train_batch_size: 2\n")) == 0
    assert accelerate_config.recognise(Input("x.json", '{"distributed_type": "FSDP"}')) == 0
    hf = "per_device_train_batch_size: 2\nsave_steps: 10\nlogging_steps: 1\n"
    doc = read_document(Input("sft.yaml", hf))
    assert isinstance(doc, Document) and doc.format == "hf-trainer"


_KEYS = [*sorted(accelerate_config.TOP_KEYS), "fsdp_config", "deepspeed_config"]


@settings(max_examples=examples(200), deadline=None)
@given(mappings(_KEYS))
def test_random_mappings_never_raise(data: dict[str, Any]) -> None:
    data.setdefault("distributed_type", "FSDP")
    parse_never_raises(accelerate_config, data)
    parse_never_raises(accelerate_config, {"fsdp_config": data, "deepspeed_config": data})
    parse_never_raises(accelerate_config, [data])
