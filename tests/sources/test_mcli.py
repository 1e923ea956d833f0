"""MosaicML mcli run YAML: the run's GPUs and type, the command's launch, the embedded
Composer ``parameters`` located in the run file, overrides on the command line, evaluation
runs that are no training, and container paths that are never missing here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.helpers import rows
from trainlint.assemble import assemble
from trainlint.sources import mcli, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures"
FRESH = Path(__file__).parent.parent / "fresh" / "repos" / "llm-foundry" / "mcli"


def read(path: Path) -> Document:
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document)
    return doc


def test_mcli_finetuning_run_reads_compute_command_and_parameters() -> None:
    doc = read(FIXTURES / "mcli" / "mcli-llama2-finetune.yaml")
    assert doc.format == "mcli"
    assert rows(doc)[:4] == [
        ("/name", "llama2-finetune", 13, 1),
        ("/resources/world_size", 8, 17, 3),
        ("/launcher/kind", "composer", 11, 3),
        ("/launcher/entrypoint", "train/train.py", 11, 12),
    ]
    located = {pointer: (value, line) for pointer, value, line, _ in rows(doc)}
    assert located["/training/global_batch_size"] == (64, 114)  # inside parameters:
    assert located["/model/seq_len"] == (4096, 25)
    assert located["/training/seed"] == (17, 117)  # ${global_seed}
    assert located["/training/micro_batch_size"] == (None, 119)  # auto
    assert located["/model/name"] == ("meta-llama/Llama-2-7b-hf", 37)
    assert doc.references == []  # /mnt/config/parameters.yaml is this file's parameters


def test_gpu_type_cluster_nodes_and_time_limit() -> None:
    text = (
        "name: r\nimage: x\ncommand: composer train.py /mnt/config/parameters.yaml\n"
        "compute:\n  gpus: 16\n  nodes: 2\n  gpu_type: h100_80gb\n  cluster: r7z2\n"
        "scheduling:\n  max_duration: 12\n  preemptible: true\n"
        "integrations:\n- integration_type: wandb\n  project: p\n"
    )
    facts = {f.pointer: f.value for f in mcli.parse(Input("run.yaml", text)).facts}
    assert facts["/resources/gpu/model"] == "H100-SXM"
    assert (facts["/resources/world_size"], facts["/resources/gpus_per_node"]) == (16, 8)
    assert facts["/resources/nodes"] == 2
    assert facts["/tags/cluster"] == "r7z2"
    assert facts["/resources/time_limit_s"] == 12 * 3600.0
    assert facts["/resources/spot"] is True
    assert facts["/logging/reporters"] == ["wandb"]


def test_command_overrides_win_over_the_parameters_they_run() -> None:
    text = (
        "image: x\ncompute: {gpus: 8}\ncommand: |\n"
        "  composer train.py /mnt/config/parameters.yaml max_duration=10ba\n"
        "parameters:\n  train_loader: {name: text}\n  max_duration: 1ep\n"
    )
    doc = mcli.parse(Input("run.yaml", text))
    run = [(f.pointer, f.value, f.location.line) for f in doc.facts if f.pointer.startswith(
        ("/training/max_steps", "/training/epochs"))]  # fmt: skip
    assert run == [("/training/max_steps", 10, 4)]


def test_paths_in_the_container_are_unresolved_not_missing() -> None:
    """``cd llm-foundry/scripts`` enters the clone of the git_repo integration: the YAML it
    trains on is ``scripts/...`` of that repository (found when it is this one)."""
    doc = read(FRESH / "mcli-1b.yaml")
    assert [(r.path, bool(r.unresolved)) for r in doc.references] == [
        ("scripts/train/yamls/pretrain/mpt-1b.yaml", True)
    ]
    elsewhere = "image: x\ncompute: {gpus: 8}\ncommand: composer train.py yamls/a.yaml\n"
    references = mcli.parse(Input("run.yaml", elsewhere)).references
    assert [(r.path, bool(r.unresolved)) for r in references] == [("yamls/a.yaml", True)]


def test_a_run_of_this_repository_joins_its_training_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mcli").mkdir()
    (tmp_path / "mcli" / "run.yaml").write_text((FRESH / "mcli-1b.yaml").read_text())
    config = tmp_path / "scripts" / "train" / "yamls" / "pretrain" / "mpt-1b.yaml"
    config.parent.mkdir(parents=True)
    config.write_text((FRESH.parent / "scripts/train/yamls/pretrain/mpt-1b.yaml").read_text())
    monkeypatch.chdir(tmp_path)  # the repository: references are searched up to it
    jobs = assemble([Path("mcli/run.yaml"), config.relative_to(tmp_path)])
    assert [job.id for job in jobs] == ["mcli/run.yaml"]
    job = jobs[0]
    assert job.launcher.kind == "composer"
    assert (job.resources.world_size, job.training.global_batch_size) == (8, 512)
    assert job.training.max_steps == 100  # the command's max_duration=100ba wins
    assert job.training.grad_accum_steps == 16  # 512 / (4 x 8)


def test_an_evaluation_run_is_no_training_job() -> None:
    doc = read(FRESH / "mcli-hf-eval.yaml")
    assert doc.format == "mcli"
    assert doc.purpose is not None and "evaluation" in doc.purpose


def test_mcli_needs_a_run_beside_its_compute() -> None:
    assert mcli.recognise(Input("x.yaml", "compute:\n  gpus: 8\n")) == 0.0
    assert mcli.recognise(Input("x.yaml", "compute: {gpus: 8}\ncommand: python t.py\n")) == 0.95
