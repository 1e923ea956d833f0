"""GPT-NeoX: exact facts and places for snake and kebab keys, a two-file job named by a launch
script, recognition against DeepSpeed/HF files, typos, the corpus, and arbitrary input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS
from tests.fast_loop import examples
from trainlint.errors import SourceError
from trainlint.sources import deepspeed, gpt_neox, hf_trainer, launch_script, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures" / "gpt-neox"


def read(name: str) -> Document:
    path = FIXTURES / name
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document) and not doc.errors
    return doc


def rows(doc: Document) -> list[tuple[str, Any, int, int]]:
    return [(f.pointer, f.value, f.location.line, f.location.column) for f in doc.facts]


def test_model_file_facts_with_the_place_of_each_key_as_written() -> None:
    doc = read("small.yml")
    assert doc.format == "gpt-neox"
    assert rows(doc) == [
        ("/training/parallelism/strategy", "deepspeed", 2, 1),
        ("/model/layers", 24, 7, 3),
        ("/model/hidden", 2048, 8, 3),  # "hidden-size"
        ("/model/heads", 16, 9, 3),
        ("/model/seq_len", 4096, 10, 3),
        ("/training/micro_batch_size", 8, 15, 3),
        ("/training/grad_accum_steps", 4, 16, 3),
        ("/training/max_steps", 60000, 21, 3),  # "train_iters" after "train-iters": later wins
        ("/training/precision", "bf16", 17, 3),
        ("/training/optimizer/name", "Adam", 12, 17),
        ("/training/optimizer/family", "adamw", 12, 17),
        ("/training/optimizer/eight_bit", False, 12, 17),
        ("/training/optimizer/experimental", False, 12, 17),
        ("/training/parallelism/zero_stage", 1, 13, 25),
        ("/training/parallelism/tensor", 4, 4, 3),
        ("/training/parallelism/pipeline", 2, 3, 3),  # "pipe-parallel-size"
        ("/training/activation_checkpointing", True, 18, 3),
        ("/checkpoint/every_steps", 1000, 22, 3),
        ("/checkpoint/keep_last", 3, 23, 3),
        ("/eval/every_steps", 500, 24, 3),
        ("/logging/every_steps", 10, 25, 3),
        ("/launcher/kind", "mpirun", 27, 3),
    ]


def test_a_typo_is_reported_as_written_with_its_suggestion() -> None:
    [unknown] = read("small.yml").unknown_keys
    assert (unknown.key, unknown.suggestion, unknown.line, unknown.column) == (
        "chekpoint_factor", "checkpoint_factor", 28, 3)  # fmt: skip


def test_kebab_typo_is_matched_in_snake_form_and_reported_in_kebab() -> None:
    doc = gpt_neox.parse(Input("x.yml", '{"train-iters": 5, "checkpoint-factr": 10, "pos-emb": 1}'))
    assert [(u.key, u.suggestion) for u in doc.unknown_keys] == [
        ("checkpoint-factr", "checkpoint_factor")
    ]


def test_setup_file_sets_reporters_and_wandb_off_is_respected() -> None:
    assert rows(read("setup.yml")) == [
        ("/training/parallelism/strategy", "deepspeed", 2, 1),
        ("/model/vocab", 50257, 4, 3),  # GPT-2's vocab file, NeoX's default GPT2BPETokenizer
        ("/logging/reporters", ["tensorboard"], 8, 3),
    ]


def test_launch_script_joins_both_files_into_one_job() -> None:
    doc = read("train.sh")
    assert doc.format == "launch-script"
    assert [(r.path, r.role, r.location.line, r.location.column) for r in doc.references] == [
        ("configs/small.yml", "config", 3, 27),
        ("configs/setup.yml", "config", 3, 45),
    ]


def test_checkpoint_scale_log_is_not_a_fixed_interval() -> None:
    text = '{"train_iters": 9, "checkpoint_factor": 2, "checkpoint_scale": "log"}'
    doc = gpt_neox.parse(Input("x.yml", text))
    assert "/checkpoint/every_steps" not in {f.pointer for f in doc.facts}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"use_wandb": true}', ["wandb"]),
        ('{"wandb_project": "neox", "wandb_team": "x"}', ["wandb"]),
        ('{"wandb_project": "neox", "use_wandb": false}', None),
        ('{"tensorboard-dir": "tb", "use_wandb": true}', ["tensorboard", "wandb"]),
    ],
)
def test_reporters(text: str, expected: list[str] | None) -> None:
    doc = gpt_neox.parse(Input("x.yml", text))
    values = {f.pointer: f.value for f in doc.facts}
    assert values.get("/logging/reporters") == expected


def test_recognition_beats_deepspeed_on_neox_json_and_leaves_plain_files_alone() -> None:
    neox_json = Input("tune.json", json.dumps({
        "pipe-parallel-size": 1, "model-parallel-size": 1, "train_micro_batch_size_per_gpu": 1,
        "zero_optimization": {"stage": 1}, "train-iters": 10}))  # fmt: skip
    assert gpt_neox.recognise(neox_json) > deepspeed.recognise(neox_json) >= 0.95
    plain_ds = Input("ds.json", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {}}')
    hf = Input("sft.yaml", "per_device_train_batch_size: 1\nsave_steps: 10\nlearning_rate: 1\n")
    assert gpt_neox.recognise(plain_ds) == 0.0
    assert gpt_neox.recognise(hf) == 0.0 < hf_trainer.recognise(hf)
    assert gpt_neox.recognise(Input("run.sh", "python3 deepy.py train.py a.yml\n")) == 0.0
    assert launch_script.recognise(Input("run.sh", "python3 deepy.py train.py a.yml\n")) > 0


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
def test_corpus_files_have_no_near_miss_keys() -> None:
    for path in sorted((CORPUS / "gpt-neox").iterdir()):
        doc = read_document(Input(str(path), path.read_text()))
        assert isinstance(doc, Document) and doc.format == "gpt-neox", path.name
        assert doc.unknown_keys == [], path.name


KEYS = st.sampled_from(
    ["num_layers", "num-layers", "hidden_size", "train_iters", "train-iters", "fp16", "bf16",
     "zero_optimization", "stage", "checkpoint_factor", "precision", "optimizer", "type",
     "log_interval", "use_wandb", "wandb_project", "tensorboard-dir", "launcher", "pos_emb"]
)  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**12), st.floats(allow_nan=False),
    st.sampled_from(["auto", "bfloat16", "fp16", "Adam", "slurm", "log", "${x}", "1e9", ""]),
)  # fmt: skip
VALUES = st.recursive(
    SCALARS, lambda inner: st.dictionaries(KEYS, inner, max_size=4) | st.lists(inner, max_size=3)
)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, VALUES, max_size=8), st.booleans())
def test_random_neox_mappings_never_raise(data: dict[str, Any], as_json: bool) -> None:
    text = json.dumps(data) if as_json else "# c\n" + json.dumps(data).replace("true", "True")
    file = Input("x.json" if as_json else "x.yml", text)
    gpt_neox.recognise(file)
    gpt_neox.parse(file)


@settings(max_examples=examples(100))
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_source_error(text: str) -> None:
    file = Input("x.yml", text)
    try:
        gpt_neox.recognise(file)
        gpt_neox.parse(file)
    except SourceError:
        pass


@pytest.mark.parametrize(
    ("text", "vocab"),
    [
        ('{"tokenizer_type": "GPT2BPETokenizer"}', 50257),
        ('{"tokenizer_type": "HFTokenizer", "vocab_file": "data/20B_tokenizer.json"}', None),
        ('{"vocab_file": "/mnt/ssd-1/data/gpt2-vocab.json"}', 50257),
    ],
)
def test_vocabulary_from_the_tokenizer(text: str, vocab: int | None) -> None:
    """The tokenizer fixes the vocabulary, so the parameter count follows from the dims."""
    facts = {f.pointer: f.value for f in gpt_neox.parse(Input("x.yml", text)).facts}
    assert facts.get("/model/vocab") == vocab


def test_sequence_parallel_is_read() -> None:
    doc = gpt_neox.parse(Input("x.yml", '{"model_parallel_size": 2, "sequence_parallel": true}'))
    assert {f.pointer: f.value for f in doc.facts}["/training/parallelism/sequence_parallel"]
