"""nanotron training YAML: a real fixture's facts with their places, the config named by
``--config-file`` on a launch line, recognition and typos."""

from __future__ import annotations

from pathlib import Path

from tests.sources.helpers import near_misses, rows
from trainlint.assemble import assemble
from trainlint.sources import nanotron, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures"
FRESH = Path(__file__).parent.parent / "fresh" / "repos" / "nanotron" / "examples"


def read(path: Path) -> Document:
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document)
    return doc


def test_smollm_pretraining_config_is_read_with_every_fact_located() -> None:
    doc = read(FIXTURES / "nanotron" / "config_smollm1_135M.yaml")
    assert doc.format == "nanotron"
    assert {row[0]: row[1:] for row in rows(doc)} == {
        "/name": ("smollm-135M", 33, 3),
        "/training/seed": (8, 34, 3),
        "/training/parallelism/tensor": (1, 91, 3),
        "/training/parallelism/pipeline": (1, 88, 3),
        "/training/parallelism/expert": (1, 87, 3),
        "/training/micro_batch_size": (8, 104, 3),
        "/training/grad_accum_steps": (1, 101, 3),
        "/model/seq_len": (2048, 105, 3),
        "/training/max_steps": (2000000, 106, 3),
        "/checkpoint/every_steps": (2000, 3, 3),
        "/checkpoint/strategy": ("steps", 3, 3),
        "/logging/every_steps": (1, 37, 3),
        "/training/precision": ("bf16", 42, 3),
        "/model/hidden": (576, 50, 5),
        "/model/layers": (30, 56, 5),
        "/model/heads": (9, 55, 5),
        "/model/kv_heads": (3, 57, 5),
        "/model/ffn_hidden": (1536, 52, 5),
        "/model/vocab": (49152, 65, 5),
        "/training/parallelism/zero_stage": (0, 84, 3),
        "/training/optimizer/name": ("adamW", 81, 5),
        "/training/optimizer/family": ("adamw", 81, 5),
        "/training/optimizer/eight_bit": (False, 81, 5),
        "/training/optimizer/experimental": (False, 81, 5),
        "/data/num_workers": (1, 24, 5),
    }
    assert doc.unknown_keys == []


def test_config_file_of_a_torchrun_launch_joins_its_job(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text((FRESH / "config_tiny_llama.yaml").read_text())
    (tmp_path / "train.sh").write_text(
        "torchrun --nproc_per_node 8 run_train.py --config-file config.yaml\n"
    )
    jobs = assemble([tmp_path / "train.sh", tmp_path / "config.yaml"])
    assert len(jobs) == 1
    job = jobs[0]
    assert (job.training.parallelism.tensor, job.training.micro_batch_size) == (2, 3)
    assert job.training.global_batch_size == 12  # micro 3 x accumulation 1 x (8 GPUs / tp 2)
    assert job.training.max_steps == 2000


def test_recognition_needs_the_three_sizes_and_a_run_section() -> None:
    assert nanotron.recognise(Input("c.yaml", "parallelism: {dp: 2, tp: 1, pp: 1}\n")) == 0.0
    text = "parallelism: {dp: 2, tp: 1, pp: 1}\ntokens: {micro_batch_size: 2}\n"
    assert nanotron.recognise(Input("c.yaml", text)) == 0.95


def test_section_typos() -> None:
    text = "parallelism: {dp: 2, tp: 1, pp: 1}\ntokens: {train_steps: 5}\ncheckpoint: {}\n"
    assert near_misses(nanotron.parse(Input("c.yaml", text))) == [
        ("checkpoint", "checkpoints", 3)]  # fmt: skip


def test_a_dummy_data_stage_has_no_loader_workers_to_starve() -> None:
    """``dataset: null`` trains on nanotron's dummy generator (run_train.py): its
    ``num_loading_workers: 1`` drove TL106 at warning on a job that loads nothing."""
    text = (FRESH / "config_tiny_llama.yaml").read_text()
    assert "dataset: null" in text
    doc = nanotron.parse(Input("c.yaml", text))
    assert "/data/num_workers" not in {f.pointer for f in doc.facts}
    real = text.replace("dataset: null", "dataset: {hf_dataset_or_datasets: stas/openwebtext-10k}")
    facts = {f.pointer: f.value for f in nanotron.parse(Input("c.yaml", real)).facts}
    assert facts["/data/num_workers"] == 1


def test_a_mamba_model_config_gives_its_width() -> None:
    doc = read(FRESH / "mamba" / "config_mamba.yaml")
    assert {f.pointer: f.value for f in doc.facts}["/model/hidden"] == 1536
