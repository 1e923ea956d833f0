"""HF TrainingArguments and DeepSpeed JSON sources: exact facts with exact positions.

Also the helpers the other flat-YAML format tests share (accelerate, axolotl, LLaMA-Factory):
facts as a comparable dict, fixtures, near-misses, and random mappings for hypothesis.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS
from tests.fast_loop import examples
from trainlint.errors import SourceError
from trainlint.job import Location
from trainlint.lint import load_jobs
from trainlint.sources import deepspeed, hf_trainer, read_document
from trainlint.sources.base import Document, Input, Skipped
from trainlint.sources.hf_trainer import cli_facts

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(relative: str) -> Input:
    path = FIXTURES / relative
    return Input(str(path), path.read_text())


def located(doc: Document) -> dict[str, tuple[Any, int, int]]:
    """pointer → (value, line, column), the later fact winning as in assembly."""
    return {f.pointer: (f.value, f.location.line, f.location.column) for f in doc.facts}


def near_misses(doc: Document) -> list[tuple[str, str | None, int]]:
    return [(u.key, u.suggestion, u.line) for u in doc.unknown_keys]


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["auto", "${x.y}", "2e-5", "none", "FULL_SHARD", "cpu"]),
)  # fmt: skip


def mappings(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Random mappings whose keys are mostly the format's own, values nested a little."""
    values = st.recursive(
        _SCALARS,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=8,
    )
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=10), values, max_size=12)


def parse_never_raises(module: ModuleType, data: Any, suffix: str = "yaml") -> None:
    """``recognise`` and ``parse`` give a result or a SourceError, nothing else."""
    text = json.dumps(data) if suffix == "json" else yaml.safe_dump(data)
    file = Input(f"random.{suffix}", text)
    try:
        module.recognise(file)
        module.parse(file)
    except SourceError:
        pass


HF_YAML = """\
model_name_or_path: meta-llama/Meta-Llama-3-8B
bf16: true
per_device_train_batch_size: 4
gradient_accumulation_steps: 8
max_steps: -1
num_train_epochs: 3
save_strategy: steps
save_steps: 0.05
save_total_limit: 2
logging_steps: 1
log_level: DEBUG
report_to: wandb,tensorboard
deepspeed: configs/ds.json
learning_rate: 2e-5
"""

DS_JSON = """\
{
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": 4,
  "bf16": {"enabled": true},
  "zero_optimization": {
    "stage": 2,
    "offload_optimizer": {"device": "cpu"}
  },
  "steps_per_print": 1,
  "wall_clock_breakdown": true
}
"""


def facts(doc: Document) -> dict[str, tuple[object, int, int]]:
    return {f.pointer: (f.value, f.location.line, f.location.column) for f in doc.facts}


def test_hf_yaml_facts_and_reference() -> None:
    doc = read_document(Input("sft.yaml", HF_YAML))
    assert isinstance(doc, Document) and doc.format == "hf-trainer" and doc.role == "config"
    assert facts(doc) == {
        "/model/name": ("meta-llama/Meta-Llama-3-8B", 1, 1),
        "/training/precision": ("bf16", 2, 1),
        "/training/micro_batch_size": (4, 3, 1),
        "/training/grad_accum_steps": (8, 4, 1),
        "/training/epochs": (3.0, 6, 1),
        "/checkpoint/strategy": ("steps", 7, 1),
        "/checkpoint/every_steps": (0.05, 8, 1),
        "/checkpoint/keep_last": (2, 9, 1),
        "/logging/every_steps": (1.0, 10, 1),
        "/logging/level": ("debug", 11, 1),
        "/logging/reporters": (["wandb", "tensorboard"], 12, 1),
        "/training/parallelism/strategy": ("deepspeed", 13, 1),
    }
    assert [(r.path, r.role, r.location.line) for r in doc.references] == [
        ("configs/ds.json", "deepspeed", 13)
    ]


def test_hf_json_has_json_positions() -> None:
    doc = read_document(Input("args.json", '{\n  "output_dir": "out",\n  "save_steps": 10\n}'))
    assert isinstance(doc, Document) and facts(doc)["/checkpoint/every_steps"] == (10.0, 3, 3)


_HF = "output_dir: out\nper_device_train_batch_size: 4\nsave_steps: 500\n"


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("bf16: false\nfp16: false\n", ("fp32", 5, 1)),  # at the later of the two
        ("fp16: false\nbf16: false\n", ("fp32", 5, 1)),
        ("bf16: false\nfp16: false\ntf32: true\n", None),  # TF32 matmuls: not fp32 speed
        ("bf16: false\n", None),  # fp32 is the default, but absence declares nothing
        ("", None),
        ("bf16: false\nfp16: true\n", ("fp16", 5, 1)),
    ],
)
def test_hf_fp32_only_when_both_half_precisions_are_written_false(
    extra: str, expected: tuple[object, int, int] | None
) -> None:
    doc = read_document(Input("sft.yaml", _HF + extra))
    assert isinstance(doc, Document) and doc.format == "hf-trainer"
    assert facts(doc).get("/training/precision") == expected


def test_hf_fp32_in_json() -> None:
    text = '{"output_dir": "o", "save_steps": 10, "bf16": false, "fp16": false}'
    doc = read_document(Input("args.json", text))
    assert isinstance(doc, Document) and facts(doc)["/training/precision"] == ("fp32", 1, 54)


def test_deepspeed_facts_auto_is_unknown() -> None:
    doc = read_document(Input("ds.json", DS_JSON))
    assert isinstance(doc, Document) and doc.format == "deepspeed" and doc.role == "deepspeed"
    got = facts(doc)
    assert "/training/micro_batch_size" not in got  # "auto": the trainer config decides
    assert got["/training/grad_accum_steps"] == (4, 3, 3)
    assert got["/training/precision"] == ("bf16", 4, 12)
    assert got["/training/parallelism/zero_stage"] == (2, 6, 5)
    assert got["/training/parallelism/offload_optimizer"] == (True, 7, 27)
    assert got["/logging/every_steps"] == (1, 9, 3)
    assert got["/logging/profiler/enabled"] == (True, 10, 3)
    assert got["/logging/profiler/scheduled"] == (False, 10, 3)


def test_cli_flags_use_the_same_table() -> None:
    here = Location(file="run.sh", line=7, column=5)
    assert [(f.pointer, f.value) for f in cli_facts("--save-steps", "10", here)] == [
        ("/checkpoint/every_steps", 10.0)
    ]
    assert [(f.pointer, f.value) for f in cli_facts("--bf16", True, here)] == [
        ("/training/precision", "bf16")
    ]
    assert cli_facts("--learning_rate", "1e-4", here) == []


def test_unrelated_files_are_not_claimed() -> None:
    values = Input("values.yaml", "replicaCount: 2\nimage: nginx\n")
    assert isinstance(read_document(values), Skipped)
    assert isinstance(read_document(Input("notes.json", '{"a": [1, 2]}')), Skipped)


def test_broken_file_is_a_located_error() -> None:
    doc = read_document(Input("ds.json", '{\n  "train_batch_size": GB_SIZE\n}'))
    assert isinstance(doc, Document) and doc.errors
    assert (doc.errors[0].line, doc.errors[0].column) == (2, 23)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".devcontainer/devcontainer.json", '{\n  // a comment\n  "name": "dev"\n}'),
        ("golden_values.json", '{"lm loss": {"values": [10.8, NaN'),
        ("vis_data.json", '{"a": 1}\n{"a": 2}\n'),
        ("notes.yaml", "a: [1, 2\nb: 3\n"),
    ],
)
def test_a_broken_file_that_is_no_training_config_is_skipped_not_an_error(
    name: str, text: str
) -> None:
    """Another tool's JSON with comments, a data file, JSON lines: never TL901 on their own;
    the error is kept for a job that would reference the file."""
    doc = read_document(Input(name, text))
    assert isinstance(doc, Skipped) and doc.error is not None
    assert "not valid in its syntax" in doc.reason


def test_hf_near_misses_name_the_key_meant() -> None:
    text = "per_device_train_batch_size: 2\nsave_step: 10\nloging_steps: 1\nlora_rr: 8\n"
    doc = read_document(Input("sft.yaml", text))
    assert isinstance(doc, Document) and doc.format == "hf-trainer"
    assert near_misses(doc) == [
        ("save_step", "save_steps", 2),
        ("loging_steps", "logging_steps", 3),
        ("lora_rr", "lora_r", 4),
    ]
    assert "/checkpoint/every_steps" not in {f.pointer for f in doc.facts}


def test_hf_known_keys_cover_trl_and_handbook_recipes() -> None:
    keys = hf_trainer.KNOWN_KEYS
    for key in (
        "eval_strategy",
        "evaluation_strategy",
        "max_seq_length",
        "max_length",
        "beta",
        "num_generations",
        "dataset_mixture",
        "use_peft",
        "bnb_4bit_quant_type",
        "torch_dtype",
        "attn_implementation",
        "use_liger_kernel",
        "packing",
        "model_revision",
        "dataset_name",
        "dataset_num_proc",
        "hub_model_revision",
    ):
        assert key in keys, key


def test_hf_yields_to_formats_with_their_own_marks() -> None:
    shared = "save_steps: 10\nlogging_steps: 1\nsave_strategy: steps\nsave_total_limit: 2\n"
    assert hf_trainer.recognise(Input("a.yaml", shared)) == 0.9
    assert hf_trainer.recognise(Input("a.yaml", shared + "base_model: x\n")) <= 0.3
    assert hf_trainer.recognise(Input("a.yaml", shared + "stage: sft\n")) <= 0.3


def test_hf_interpolation_is_unknown() -> None:
    doc = read_document(Input("a.yaml", "save_steps: ${oc.env:EVERY}\nmodel_name_or_path: ${m}\n"))
    assert isinstance(doc, Document) and doc.facts == []


def test_deepspeed_near_misses_top_level_and_zero() -> None:
    text = (
        '{\n  "train_micro_batch_size_per_gpu": 1,\n  "gradient_acumulation_steps": 4,\n'
        '  "zero_optimization": {\n    "stage": 3,\n    "overlap_com": true,\n'
        '    "stage3_prefetch_bucket_sze": 5e7\n  }\n}'
    )
    doc = read_document(Input("ds.json", text))
    assert isinstance(doc, Document) and doc.format == "deepspeed"
    assert near_misses(doc) == [
        ("gradient_acumulation_steps", "gradient_accumulation_steps", 3),
        ("overlap_com", "overlap_comm", 6),
        ("stage3_prefetch_bucket_sze", "stage3_prefetch_bucket_size", 7),
    ]


def test_bing_bert_schedule_json_gives_model_dimensions() -> None:
    text = (
        '{"name": "bert", "bert_model_config": {"hidden_size": 1024, "num_hidden_layers": 24,'
        ' "num_attention_heads": 16}, "mixed_seq_training": {"128": {"num_epochs": 1}}}'
    )
    doc = read_document(Input("bert_large.json", text))
    assert isinstance(doc, Document) and doc.format == "deepspeed" and doc.role == "config"
    assert {f.pointer: f.value for f in doc.facts} == {
        "/name": "bert", "/model/hidden": 1024, "/model/layers": 24, "/model/heads": 16,
    }  # fmt: skip


# Corpus folders whose files are read as these formats (HF, DeepSpeed, accelerate, axolotl,
# LLaMA-Factory): not one key of them is a near-miss of a known key.
_FOLDERS = ("accelerate", "axolotl", "llama-factory", "alignment-handbook", "trl",
            "transformers", "deepspeed")  # fmt: skip


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(path for folder in _FOLDERS for path in (CORPUS / folder).glob("*.*"))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_files_have_no_near_misses(path: Path) -> None:
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Skipped) or near_misses(doc) == []


@settings(max_examples=examples(200), deadline=None)
@given(mappings([*sorted(hf_trainer.KNOWN_KEYS)[:400], "deepspeed", "fsdp"]))
def test_hf_random_mappings_never_raise(data: dict[str, Any]) -> None:
    parse_never_raises(hf_trainer, {"save_steps": 1, **data})
    parse_never_raises(hf_trainer, {"save_steps": 1, **data}, suffix="json")


@settings(max_examples=examples(200), deadline=None)
@given(mappings([*sorted(deepspeed.KNOWN_KEYS)[:400], "zero_optimization", "bert_model_config"]))
def test_deepspeed_random_mappings_never_raise(data: dict[str, Any]) -> None:
    parse_never_raises(deepspeed, {"zero_optimization": data, **data}, suffix="json")
    parse_never_raises(deepspeed, {"bert_model_config": data, "mixed_seq_training": 1}, "json")


def test_a_trainer_state_artifact_is_not_a_config() -> None:
    state = '{"global_step": 500, "logging_steps": 10, "save_steps": 500, "log_history": []}'
    assert isinstance(read_document(Input("checkpoint-500/trainer_state.json", state)), Skipped)


# DeepSpeedExamples configs (fixtures/deepspeed/MANIFEST.tsv): fp16 off, and no precision block.
@pytest.mark.parametrize(
    ("name", "line"), [("ds_config_gpt_base_random_ltd.json", 18), ("pipeline_ds_config.json", 1)]
)
def test_deepspeed_without_fp16_or_bf16_trains_fp32(name: str, line: int) -> None:
    """DeepSpeed keeps fp32 weights and compute unless a precision block is enabled."""
    doc = deepspeed.parse(fixture(f"deepspeed/{name}"))
    assert located(doc)["/training/precision"][:2] == ("fp32", line)


@pytest.mark.parametrize(
    "blocks",
    [
        '"bf16": {"enabled": "auto"}',  # left to the trainer
        '"fp16": {"enabled": false}, "bf16": {"enabled": true}',
        '"bfloat16": {"enabled": true}',  # DeepSpeed's alias
        '"amp": {"enabled": true}',
        '"torch_autocast": {"enabled": true, "dtype": "bfloat16"}',
        '"fp16": {"enabled": "$FP16"}',
    ],
)
def test_deepspeed_with_a_precision_block_on_or_left_open_is_not_fp32(blocks: str) -> None:
    text = '{"train_micro_batch_size_per_gpu": 1, ' + blocks + "}"
    doc = deepspeed.parse(Input("ds.json", text))
    assert "fp32" not in [f.value for f in doc.facts if f.pointer == "/training/precision"]


@pytest.mark.parametrize(
    ("ds_precision", "trainer", "expected"),
    [
        ('"bf16": {"enabled": "auto"}', "bf16: true\n", "bf16"),  # HF fills "auto"
        ('"fp16": {"enabled": false}', "bf16: true\n", "bf16"),  # the trainer's outranks
        ('"fp16": {"enabled": false}', "", "fp32"),
    ],
)
def test_trainer_precision_outranks_deepspeed_fp32(
    tmp_path: Path, ds_precision: str, trainer: str, expected: str
) -> None:
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}, ' + ds_precision + "}")
    (tmp_path / "sft.yaml").write_text(
        f"per_device_train_batch_size: 4\nmax_steps: 10\ndeepspeed: ds.json\n{trainer}"
    )
    (tmp_path / "train.sh").write_text("deepspeed train.py --config sft.yaml\n")
    jobs = load_jobs([tmp_path])
    assert [job.training.precision for job in jobs] == [expected]
