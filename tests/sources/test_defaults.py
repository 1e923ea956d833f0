"""Frameworks' defaults: each format states its framework's defaults for the keys a file leaves
unset, and a job keeps them apart from its facts (stated values always win; a default never
makes a file a job), so rules read them from the job, never by format name."""

from __future__ import annotations

from pathlib import Path

from trainlint.assemble import assemble, build_job
from trainlint.discover import discover
from trainlint.job import Location
from trainlint.read import Workspace
from trainlint.sources import read_document
from trainlint.sources.base import Document, DocumentDefault, Input

TOP = Location(file="sft.yaml", line=1, column=1)


def read(path: str, text: str) -> Document:
    doc = read_document(Input(path, text))
    assert isinstance(doc, Document), doc
    return doc


def defaults(doc: Document) -> dict[str, tuple[object, str, int]]:
    return {d.pointer: (d.value, d.key, d.location.line) for d in doc.defaults}


def test_hf_trainer_states_its_seed_and_workers_at_the_top_of_the_file() -> None:
    doc = read("sft.yaml", "# SFT\nper_device_train_batch_size: 4\nsave_steps: 100\n")
    assert doc.defaults == [
        DocumentDefault("/training/seed", 42, "seed", TOP),
        DocumentDefault("/data/num_workers", 0, "dataloader_num_workers", TOP),
    ]


def test_a_stated_key_has_no_default() -> None:
    doc = read("sft.yaml", "per_device_train_batch_size: 4\nseed: 7\ndataloader_num_workers: 2\n")
    assert doc.defaults == []


def test_hf_eval_defaults_sit_beside_the_eval_key() -> None:
    steps = read("sft.yaml", "per_device_train_batch_size: 4\nsave_steps: 1\neval_steps: 10\n")
    assert defaults(steps)["/eval/strategy"] == ("no", "eval_strategy", 3)
    by = read("sft.yaml", "per_device_train_batch_size: 4\nsave_steps: 1\neval_strategy: steps\n")
    interval = next(d for d in by.defaults if d.pointer == "/eval/every_steps")
    assert (interval.value, interval.same_as, interval.location.line) == (
        None, "/logging/every_steps", 3,
    )  # fmt: skip


def test_random_seed_frameworks_default_to_no_value() -> None:
    tune = read("lora.yaml", "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
                "seed: null\nbatch_size: 2\nepochs: 1\n")  # fmt: skip
    assert defaults(tune) == {"/training/seed": (None, "seed", 1)}


def test_a_launch_line_states_hf_eval_defaults_for_its_flags() -> None:
    doc = read("run.sh", "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --eval_steps 10\n")
    assert defaults(doc) == {"/eval/strategy": ("no", "eval_strategy", 2)}


def test_a_stated_value_beats_every_default_and_defaults_never_count_as_stated() -> None:
    hf = read("sft.yaml", "per_device_train_batch_size: 4\nsave_steps: 100\n")
    tune = read("lora.yaml", "model:\n  _component_: x.lora_llama3_1_8b\nbatch_size: 2\n"
                "epochs: 1\nseed: 5\ndataloader:\n  num_workers: 4\n")  # fmt: skip
    job = build_job([hf, tune])
    assert (job.training.seed, job.data.num_workers) == (5, 4)
    assert job.defaults == {}
    lone = build_job([hf])
    assert lone.data.num_workers is None and lone.training.seed is None
    assert "/data/num_workers" not in lone.provenance
    assert lone.defaults["/data/num_workers"].value == 0
    assert lone.defaults["/data/num_workers"].format == "hf-trainer"


def test_a_fixed_default_seed_beats_a_random_one_else_the_first_document_wins() -> None:
    tune = read("lora.yaml", "model:\n  _component_: x.lora_llama3_1_8b\nbatch_size: 2\n")
    lightning = read("cli.yaml", "seed_everything: true\ntrainer:\n  max_steps: 10\n")
    hf = read("sft.yaml", "per_device_train_batch_size: 4\nsave_steps: 100\n")
    assert build_job([tune, hf]).defaults["/training/seed"].value == 42
    assert build_job([tune, lightning]).defaults["/training/seed"].file == "lora.yaml"


def test_defaults_make_no_file_a_job(tmp_path: Path) -> None:
    (tmp_path / "sft.yaml").write_text("optim: adamw_torch\nlr_scheduler_type: cosine\n")
    jobs = assemble(discover([tmp_path]), Workspace(root=tmp_path))
    assert jobs == []
