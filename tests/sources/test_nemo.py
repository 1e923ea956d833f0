"""NeMo 1.x Hydra YAML: exact facts and places, ``${}`` resolution within the file (and what
stays unknown), recognition against Lightning-like files, typos, the corpus, arbitrary input."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS
from tests.fast_loop import examples
from trainlint.errors import SourceError
from trainlint.sources import nemo, read_document
from trainlint.sources.base import Document, Input

CONFIG = """\
name: megatron_llama
trainer:
  devices: 8
  num_nodes: 2
  precision: bf16-mixed
  max_steps: 20000
  max_epochs: -1
  max_time: "00:12:00:00"
  log_every_n_steps: 1
  val_check_interval: 0.5
  accumulate_grad_batches: 1
  log_every_n_step: 5
exp_manager:
  create_wandb_logger: true
  create_tensorboard_logger: false
  checkpoint_callback_params:
    every_n_train_steps: 500
    save_top_k: -1
    async_save: true
    model_parallel_size: ${multiply:${model.tensor_model_parallel_size}, 2}
model:
  micro_batch_size: 2
  global_batch_size: ${oc.env:GBS}
  tensor_model_parallel_size: 4
  pipeline_model_parallel_size: ${.tensor_model_parallel_size}
  encoder_seq_length: 8192
  num_layers: ???
  hidden_size: 4096
  ffn_hidden_size: 14336
  num_attention_heads: 32
  num_query_groups: 8
  activations_checkpoint_granularity: selective
  optim:
    name: distributed_fused_adam
  data:
    seq_length: ${model.encoder_seq_length}
    num_workers: ${model.missing}
"""


def rows(doc: Document) -> list[tuple[str, Any, int, int]]:
    return [(f.pointer, f.value, f.location.line, f.location.column) for f in doc.facts]


def test_facts_with_places_and_interpolations() -> None:
    doc = nemo.parse(Input("megatron_llama.yaml", CONFIG))
    assert rows(doc) == [
        ("/name", "megatron_llama", 1, 1),
        ("/resources/gpus_per_node", 8, 3, 3),
        ("/resources/nodes", 2, 4, 3),
        ("/training/precision", "bf16", 5, 3),
        ("/training/max_steps", 20000, 6, 3),
        ("/resources/time_limit_s", 43200.0, 8, 3),
        ("/logging/every_steps", 1, 9, 3),
        # trainer.accumulate_grad_batches: 1 is dropped: Megatron derives it from the batches
        ("/checkpoint/every_steps", 500, 17, 5),
        ("/checkpoint/async", True, 19, 5),
        ("/training/micro_batch_size", 2, 22, 3),
        ("/training/parallelism/tensor", 4, 24, 3),
        ("/training/parallelism/pipeline", 4, 25, 3),  # ${.tensor_model_parallel_size}
        ("/model/seq_len", 8192, 26, 3),
        ("/model/hidden", 4096, 28, 3),
        ("/model/ffn_hidden", 14336, 29, 3),
        ("/model/heads", 32, 30, 3),
        ("/model/kv_heads", 8, 31, 3),
        ("/training/activation_checkpointing", True, 32, 3),
        ("/training/recompute", "selective", 32, 3),
        ("/training/optimizer/name", "distributed_fused_adam", 34, 5),  # family unknown
        ("/logging/reporters", ["wandb"], 14, 3),
    ]


def test_unknowns_stay_unknown() -> None:
    values = {f.pointer: f.value for f in nemo.parse(Input("c.yaml", CONFIG)).facts}
    assert "/training/global_batch_size" not in values  # ${oc.env:GBS}: a resolver
    assert "/model/layers" not in values  # ???: mandatory, not given
    assert "/data/num_workers" not in values  # ${model.missing}: does not resolve
    assert "/eval/every_steps" not in values  # 0.5 is a fraction of an epoch
    assert "/checkpoint/keep_last" not in values  # -1 keeps all
    assert "/training/epochs" not in values  # -1: no limit


def test_typos_in_trainer_exp_manager_and_checkpoint_params() -> None:
    text = CONFIG.replace("save_top_k", "save_top_kk")
    text = text.replace("create_wandb_logger", "create_wandb_loger")
    unknown = nemo.parse(Input("c.yaml", text)).unknown_keys
    assert [(u.key, u.suggestion, u.line) for u in unknown] == [
        ("log_every_n_step", "log_every_n_steps", 12),
        ("create_wandb_loger", "create_wandb_logger", 14),
        ("save_top_kk", "save_top_k", 18),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("trainer: {devices: 1}\nexp_manager: {name: x}\n", 0.96),
        ("trainer: {devices: 1}\nmodel: {micro_batch_size: 1, global_batch_size: 8}\n", 0.9),
        ("qkv_dgrad: {method: bulk}\nfc1_fprop: {method: ring_exchange}\nfc2_dgrad: {}\n", 0.9),
        ("trainer: {devices: 1, max_epochs: 3}\nmodel: {class_path: x.Y}\n", 0.0),  # Lightning
        ("per_device_train_batch_size: 1\nsave_steps: 10\n", 0.0),
        ("[1, 2]\n", 0.0),
    ],
)
def test_recognition(text: str, expected: float) -> None:
    assert nemo.recognise(Input("c.yaml", text)) == expected


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
def test_corpus_files_have_no_near_miss_keys() -> None:
    for path in sorted((CORPUS / "nemo").iterdir()):
        doc = read_document(Input(str(path), path.read_text()))
        assert isinstance(doc, Document) and doc.format == "nemo", path.name
        assert doc.unknown_keys == [], path.name


SECTIONS = st.sampled_from(["trainer", "exp_manager", "model", "checkpoint_callback_params",
                            "optim", "data", "train_ds"])  # fmt: skip
KEYS = st.sampled_from(
    [
        "devices",
        "precision",
        "max_steps",
        "max_time",
        "save_top_k",
        "name",
        "micro_batch_size",
        "num_workers",
        "val_check_interval",
        "seq_length",
    ]
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**9), st.floats(allow_nan=False),
    st.sampled_from(["${model.x}", "${.y}", "${..z}", "${oc.env:A}", "???", "bf16", "1:00:00"]),
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.dictionaries(KEYS | SECTIONS, inner, max_size=4) | st.lists(inner, max_size=3),
)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(SECTIONS, VALUES, max_size=4))
def test_random_nemo_mappings_never_raise(data: dict[str, Any]) -> None:
    file = Input("c.yaml", yaml.safe_dump(data))
    nemo.recognise(file)
    nemo.parse(file)


@settings(max_examples=examples(100))
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_source_error(text: str) -> None:
    file = Input("c.yaml", text)
    try:
        nemo.recognise(file)
        nemo.parse(file)
    except SourceError:
        pass


# The Megatron block of NeMo's examples/nlp/language_modeling/conf/megatron_gpt_config.yaml
# (NVIDIA/NeMo 8cfedd72, Apache-2.0), with the recompute and sequence-parallel settings its
# comments offer.
MEGATRON_GPT = """\
trainer:
  devices: 8
  max_steps: 300000
model:
  micro_batch_size: 4
  global_batch_size: 8
  encoder_seq_length: 512
  num_layers: 12
  hidden_size: 768
  ffn_hidden_size: 3072
  num_attention_heads: 12
  tokenizer:
    library: 'megatron'
    type: 'GPT2BPETokenizer'
  activations_checkpoint_granularity: selective # 'selective' or 'full'
  sequence_parallel: True
"""


@pytest.mark.parametrize(
    ("granularity", "mode"), [("selective", "selective"), ("full", "full"), ("null", None)]
)
def test_recompute_granularity_sequence_parallel_and_tokenizer_vocabulary(
    granularity: str, mode: str | None
) -> None:
    """``selective`` recomputes only attention (not a second forward: Korthikanti et al.), and
    the tokenizer's vocabulary makes the parameter count known from the dimensions."""
    text = MEGATRON_GPT.replace("granularity: selective", f"granularity: {granularity}")
    facts = {f.pointer: f.value for f in nemo.parse(Input("megatron_gpt_config.yaml", text)).facts}
    assert facts.get("/training/recompute") == mode
    assert facts["/training/parallelism/sequence_parallel"] is True
    assert facts["/model/vocab"] == 50257
