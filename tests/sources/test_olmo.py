"""OLMo YAML: ``max_duration`` in all its spellings, the most frequent checkpoint series,
precision names, in-file ``${}`` copies, recognition, typos, the corpus, and arbitrary input."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS
from tests.fast_loop import examples
from trainlint.errors import SourceError
from trainlint.sources import olmo, read_document
from trainlint.sources.base import Document, Input

CONFIG = """\
run_name: OLMo-tiny
seed: 6198
wandb:
  name: ${run_name}
  project: olmo-tiny
model:
  d_model: 2048
  n_heads: 16
  n_kv_heads: 4
  n_layers: 16
  mlp_hidden_size: 16384
  max_sequence_length: 4096
  vocab_size: 100278
  n_layerz: 3
compile:
  fullgraph: false
activation_checkpointing: one_in_four
optimizer:
  name: adamw
save_interval: 1000
save_interval_unsharded: 10000
save_interval_ephemeral: 250
save_num_checkpoints_to_keep: -1
max_duration: 2e12T
global_train_batch_size: 1024
device_train_microbatch_size: 4
precision: amp_bf16
console_log_interval: 10
fsdp:
  sharding_strategy: HYBRID_SHARD
  precision: mixed
eval_interval: ${save_interval}
time_limit: 171000
data:
  num_workers: 16
"""


def rows(doc: Document) -> list[tuple[str, Any, int, int]]:
    return [(f.pointer, f.value, f.location.line, f.location.column) for f in doc.facts]


def test_facts_with_places() -> None:
    doc = olmo.parse(Input("OLMo-tiny.yaml", CONFIG))
    assert rows(doc) == [
        ("/name", "OLMo-tiny", 1, 1),
        ("/training/seed", 6198, 2, 1),
        ("/model/hidden", 2048, 7, 3),
        ("/model/heads", 16, 8, 3),
        ("/model/kv_heads", 4, 9, 3),
        ("/model/layers", 16, 10, 3),
        ("/model/seq_len", 4096, 12, 3),
        ("/model/vocab", 100278, 13, 3),
        ("/training/global_batch_size", 1024, 25, 1),
        ("/training/micro_batch_size", 4, 26, 1),
        ("/training/dataset_tokens", 2_000_000_000_000, 24, 1),
        ("/training/precision", "bf16", 27, 1),
        ("/training/parallelism/strategy", "fsdp", 30, 3),
        ("/training/parallelism/zero_stage", 3, 30, 3),
        ("/training/optimizer/name", "adamw", 19, 3),
        ("/training/optimizer/family", "adamw", 19, 3),
        ("/training/optimizer/eight_bit", False, 19, 3),
        ("/training/optimizer/experimental", False, 19, 3),
        ("/training/activation_checkpointing", True, 17, 1),
        ("/training/compile", True, 15, 1),
        ("/logging/every_steps", 10, 28, 1),
        ("/eval/every_steps", 1000, 32, 1),  # ${save_interval}
        ("/resources/time_limit_s", 171000.0, 33, 1),
        ("/data/num_workers", 16, 35, 3),
        ("/checkpoint/every_steps", 250, 22, 1),  # the ephemeral series is the most frequent
        ("/model/ffn_hidden", 8192, 11, 3),  # SwiGLU halves the fused projection
        ("/logging/reporters", ["wandb"], 3, 1),
    ]
    assert [(u.key, u.suggestion, u.line) for u in doc.unknown_keys] == [
        ("n_layerz", "n_layers", 14)
    ]


@pytest.mark.parametrize(
    ("duration", "pointer", "value"),
    [
        ("1ep", "/training/epochs", 1.0),
        ("2e12T", "/training/dataset_tokens", 2_000_000_000_000),
        ("50e9T", "/training/dataset_tokens", 50_000_000_000),
        ("739_328", "/training/max_steps", 739_328),
        ("5000", "/training/max_steps", 5000),
        ("'5000st'", "/training/max_steps", 5000),
        ("${oc.env:STEPS}", None, None),
        ("soon", None, None),
    ],
)
def test_max_duration(duration: str, pointer: str | None, value: Any) -> None:
    text = f"max_duration: {duration}\nglobal_train_batch_size: 8\n"
    found = {f.pointer: f.value for f in olmo.parse(Input("c.yaml", text)).facts}
    lengths = {p: v for p, v in found.items() if p.startswith("/training/")}
    lengths.pop("/training/global_batch_size")
    assert lengths == ({pointer: value} if pointer else {})


def test_stop_at_is_a_hard_stop() -> None:
    text = "max_duration: 50e9T\nstop_at: 11931\nglobal_train_batch_size: 8\n"
    found = {f.pointer: f.value for f in olmo.parse(Input("c.yaml", text)).facts}
    assert found["/training/max_steps"] == 11931
    assert found["/training/dataset_tokens"] == 50_000_000_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("global_train_batch_size: 8\nmax_duration: 1ep\n", 0.95),
        ("max_duration: 10\nmodel: {d_model: 1, n_heads: 1, n_layers: 1}\n", 0.95),
        ("max_duration: 10\n", 0.0),
        ("model: {d_model: 1, n_heads: 1, n_layers: 1}\n", 0.0),
        ("per_device_train_batch_size: 1\nsave_steps: 10\n", 0.0),
    ],
)
def test_recognition(text: str, expected: float) -> None:
    assert olmo.recognise(Input("c.yaml", text)) == expected


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
def test_corpus_files_have_no_near_miss_keys() -> None:
    for path in sorted((CORPUS / "olmo").iterdir()):
        doc = read_document(Input(str(path), path.read_text()))
        assert isinstance(doc, Document) and doc.format == "olmo", path.name
        assert doc.unknown_keys == [], path.name


KEYS = st.sampled_from(
    [
        "max_duration",
        "save_interval",
        "save_interval_ephemeral",
        "model",
        "mlp_hidden_size",
        "mlp_ratio",
        "d_model",
        "activation_type",
        "wandb",
        "precision",
        "fsdp",
        "sharding_strategy",
        "compile",
        "stop_at",
    ]
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**9), st.floats(allow_nan=False),
    st.sampled_from(["1ep", "2e12T", "1_000", "amp_bf16", "FULL_SHARD", "${save_interval}",
                     "swiglu", "???", "e", "1e400T"]),
)  # fmt: skip
VALUES = st.recursive(
    SCALARS, lambda inner: st.dictionaries(KEYS, inner, max_size=4) | st.lists(inner, max_size=3)
)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, VALUES, max_size=8))
def test_random_olmo_mappings_never_raise(data: dict[str, Any]) -> None:
    file = Input("c.yaml", yaml.safe_dump(data))
    olmo.recognise(file)
    olmo.parse(file)


@settings(max_examples=examples(100))
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_source_error(text: str) -> None:
    file = Input("c.yaml", text)
    try:
        olmo.recognise(file)
        olmo.parse(file)
    except SourceError:
        pass
