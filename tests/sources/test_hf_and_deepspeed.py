"""HF TrainingArguments and DeepSpeed JSON sources: exact facts with exact positions."""

from __future__ import annotations

from trainlint.job import Location
from trainlint.sources import read_document
from trainlint.sources.base import Document, Input
from trainlint.sources.hf_trainer import cli_facts

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
    assert doc is not None and doc.format == "hf-trainer" and doc.role == "config"
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
    assert doc is not None and facts(doc)["/checkpoint/every_steps"] == (10.0, 3, 3)


def test_deepspeed_facts_auto_is_unknown() -> None:
    doc = read_document(Input("ds.json", DS_JSON))
    assert doc is not None and doc.format == "deepspeed" and doc.role == "deepspeed"
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
    assert read_document(Input("values.yaml", "replicaCount: 2\nimage: nginx\n")) is None
    assert read_document(Input("notes.json", '{"a": [1, 2]}')) is None


def test_broken_file_is_a_located_error() -> None:
    doc = read_document(Input("ds.json", '{\n  "train_batch_size": GB_SIZE\n}'))
    assert doc is not None and doc.errors
    assert (doc.errors[0].line, doc.errors[0].column) == (2, 23)
