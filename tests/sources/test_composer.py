"""Composer / llm-foundry training YAML: a real fixture's facts with their places, Composer's
time units, ``auto`` micro-batches, checkpoints only with a save folder, recognition against
OLMo (which shares the batch and duration keys), typos, and ``composer`` as a launcher."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sources.helpers import near_misses, rows
from trainlint.assemble import assemble
from trainlint.job import Location
from trainlint.sources import composer, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures"


def read(path: Path) -> Document:
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document)
    return doc


def parsed(text: str) -> dict[str, Any]:
    """pointer → value of a Composer YAML given as text."""
    return {fact.pointer: fact.value for fact in composer.parse(Input("train.yaml", text)).facts}


BASE = "train_loader: {name: text}\nglobal_train_batch_size: 512\nmax_seq_len: 2048\n"


def test_llm_foundry_finetuning_yaml_is_read_with_every_fact_located() -> None:
    doc = read(FIXTURES / "composer" / "llama-3-8b_dolly_sft.yaml")
    assert doc.format == "composer"
    assert rows(doc) == [
        ("/training/seed", 17, 101, 1),  # ${variables.global_seed}
        ("/model/seq_len", 2048, 9, 1),  # ${variables.max_seq_len}
        ("/training/global_batch_size", 48, 98, 1),
        ("/training/micro_batch_size", 8, 103, 1),
        ("/training/epochs", 2.0, 94, 1),
        ("/training/precision", "bf16", 105, 1),
        ("/training/parallelism/strategy", "fsdp", 108, 1),
        ("/training/parallelism/zero_stage", 3, 108, 1),
        ("/training/activation_checkpointing", True, 111, 3),
        ("/logging/every_steps", 1, 119, 1),
        ("/model/name", "meta-llama/Meta-Llama-3-8B", 15, 3),
        ("/data/num_workers", 8, 50, 3),
        ("/data/pin_memory", False, 51, 3),
        ("/data/prefetch_factor", 2, 52, 3),
        ("/data/persistent_workers", True, 53, 3),
        ("/training/optimizer/name", "decoupled_adamw", 81, 3),
        ("/eval/strategy", "epoch", 95, 1),
        ("/checkpoint/strategy", "no", 94, 1),  # no save_folder: nothing is saved
    ]
    assert doc.unknown_keys == []


@pytest.mark.parametrize(
    ("duration", "expected"),
    [
        ("max_duration: 24800ba", {"/training/max_steps": 24800}),
        ("max_duration: 2ep", {"/training/epochs": 2.0}),
        ("max_duration: 3", {"/training/epochs": 3.0}),  # a bare integer is epochs
        # tokens / (global batch x sequence length): 26e9 / (512 x 2048) steps
        ("max_duration: 26000000000tok", {"/training/max_steps": 24795}),
        ("max_duration: 1024000sp", {"/training/max_steps": 2000}),
        ("max_duration: 10dur", {}),  # a fraction of itself: nothing
    ],
)
def test_max_duration_in_every_composer_unit(duration: str, expected: dict[str, Any]) -> None:
    facts = parsed(f"{BASE}{duration}\n")
    run = {k: v for k, v in facts.items() if k in ("/training/max_steps", "/training/epochs")}
    assert run == expected


def test_intervals_in_tokens_and_fractions_become_steps() -> None:
    text = (
        f"{BASE}max_duration: 10000ba\neval_loader: {{name: text}}\neval_interval: 0.1dur\n"
        "save_folder: ./ckpt\nsave_interval: 1048576000tok\nsave_num_checkpoints_to_keep: 2\n"
    )
    facts = parsed(text)
    assert facts["/eval/every_steps"] == 1000
    assert facts["/checkpoint/every_steps"] == 1000
    assert facts["/checkpoint/strategy"] == "steps"
    assert facts["/checkpoint/keep_last"] == 2


def test_evaluation_and_checkpoints_only_where_composer_runs_them() -> None:
    facts = parsed(f"{BASE}max_duration: 100ba\neval_interval: 10ba\nsave_interval: 10ba\n")
    assert "/eval/every_steps" not in facts  # no eval_loader: nothing is evaluated
    assert facts["/checkpoint/strategy"] == "no"  # no save_folder: nothing is saved
    unset = composer.parse(Input("t.yaml", f"{BASE}max_duration: 1ba\nsave_folder: s3://b/x\n"))
    assert [(d.pointer, d.value) for d in unset.defaults] == [
        ("/training/precision", "bf16"),
        ("/checkpoint/every_steps", 1000),  # TrainConfig's save_interval 1000ba
    ]


def test_auto_micro_batch_is_stated_unknown_never_guessed() -> None:
    doc = composer.parse(Input("t.yaml", f"{BASE}device_train_microbatch_size: auto\n"))
    micro = [f for f in doc.facts if f.pointer == "/training/micro_batch_size"]
    assert [(f.value, f.location.line) for f in micro] == [(None, 4)]


@pytest.mark.parametrize(
    ("written", "expected"),
    [("amp_bf16", "bf16"), ("amp_fp16", "fp16"), ("amp_fp8", "fp8"), ("fp32", "fp32")],
)
def test_precision(written: str, expected: str) -> None:
    assert parsed(f"{BASE}precision: {written}\n")["/training/precision"] == expected


def test_sharding_strategies_in_zero_terms() -> None:
    assert parsed(f"{BASE}fsdp_config: {{}}\n")["/training/parallelism/zero_stage"] == 3
    grad_op = parsed(f"{BASE}fsdp_config: {{sharding_strategy: SHARD_GRAD_OP}}\n")
    assert grad_op["/training/parallelism/zero_stage"] == 2


def test_builder_names_are_not_models_and_mpt_dimensions_are() -> None:
    facts = parsed(
        f"{BASE}model:\n  name: mpt_causal_lm\n  d_model: 2048\n  n_heads: 16\n  n_layers: 24\n"
        "  expansion_ratio: 4\n  vocab_size: 50368\n"
    )
    assert "/model/name" not in facts
    assert (facts["/model/hidden"], facts["/model/ffn_hidden"], facts["/model/layers"]) == (
        2048, 8192, 24)  # fmt: skip


def test_composer_yaml_is_never_read_as_olmo() -> None:
    """llm-foundry's YAML shares OLMo's max_duration, global_train_batch_size and
    device_train_microbatch_size: its train_loader (claimed by the composer format) decides."""
    path = (
        FIXTURES.parent.parent / "fresh/repos/llm-foundry/scripts/train/yamls/pretrain/mpt-7b.yaml"
    )
    assert read(path).format == "composer"
    olmo = "max_duration: 1ep\nglobal_train_batch_size: 8\ndevice_train_microbatch_size: 2\n"
    doc = read_document(Input("olmo.yaml", f"{olmo}data: {{num_workers: 2}}\n"))
    assert isinstance(doc, Document) and doc.format == "olmo"


def test_top_level_typos_are_reported() -> None:
    doc = composer.parse(Input("t.yaml", f"{BASE}max_duraton: 10ba\nsave_intervel: 5ba\n"))
    assert near_misses(doc) == [
        ("max_duraton", "max_duration", 4), ("save_intervel", "save_interval", 5)]  # fmt: skip


def test_composer_launcher_gives_gpus_and_overrides_reach_the_config(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(
        f"{BASE}device_train_microbatch_size: 4\nmax_duration: 2ep\n"
    )
    (tmp_path / "run.sh").write_text("composer -n 4 train.py train.yaml max_duration=100ba\n")
    script = tmp_path / "run.sh"
    launch = read(script)
    facts = {f.pointer: f.value for f in launch.facts}
    assert facts["/launcher/kind"] == "composer"
    assert facts["/resources/gpus_per_node"] == 4
    assert [r.path for r in launch.references] == ["train.yaml"]
    overrides = [o for o in launch.overrides if o.key == "max_duration"]
    assert [
        f.value for o in overrides for f in composer.override_facts(o.key, o.value, o.location)
    ] == [100]


def test_a_launched_composer_job_derives_its_accumulation(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(
        f"{BASE}device_train_microbatch_size: 4\nmax_duration: 2ep\n"
    )
    (tmp_path / "run.sh").write_text("composer -n 4 train.py train.yaml max_duration=100ba\n")
    jobs = assemble([tmp_path / "run.sh", tmp_path / "train.yaml"])
    job = next(j for j in jobs if j.id.endswith("run.sh"))
    assert (job.training.max_steps, job.training.grad_accum_steps) == (100, 32)


def test_a_save_folder_from_the_environment_still_saves() -> None:
    """``save_folder: ${oc.env:SAVE_DIR}`` names a folder this file cannot know: checkpoints
    are saved there, never 'no checkpoints'."""
    text = f"{BASE}max_duration: 100ba\nsave_folder: ${{oc.env:SAVE_DIR}}\nsave_interval: 10ba\n"
    facts = parsed(text)
    assert (facts["/checkpoint/strategy"], facts["/checkpoint/every_steps"]) == ("steps", 10)


@pytest.mark.parametrize("interval", ["0", "0ba", "-1"])
def test_a_zero_interval_is_no_interval(interval: str) -> None:
    text = f"{BASE}max_duration: 100ba\neval_loader: {{name: text}}\neval_interval: {interval}\n"
    facts = parsed(text)
    assert "/eval/strategy" not in facts and "/eval/every_steps" not in facts


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("0", {"/eval/strategy": "no"}),
        ("0ba", {"/eval/strategy": "no"}),
        ("500ba", {"/eval/every_steps": 500, "/eval/strategy": "steps"}),
        ("1ep", {"/eval/strategy": "epoch"}),
        ("0.1dur", {}),
    ],
)
def test_an_eval_interval_override_turns_evaluation_off_or_sets_its_interval(
    written: str, expected: dict[str, object]
) -> None:
    """llm-foundry's quick start runs ``eval_interval=0``: the config's interval no longer
    holds, and TL305 must not count evaluations that never run."""
    where = Location(file="run.yaml", line=3, column=5)
    facts = composer.override_facts("eval_interval", written, where)
    assert {f.pointer: f.value for f in facts} == expected
