"""SpeechBrain HyperPyYAML hparams: real recipes' facts with their places, ``!ref`` followed
only to plain values, dynamic batching, the precision switches, ``!include:``, the launch
line's overrides and a checked job end to end. Tags are never constructed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainlint.assemble import assemble
from trainlint.sources import read_document, speechbrain
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures" / "speechbrain"


def read(path: Path) -> Document:
    doc = read_document(Input(path.as_posix(), path.read_text()))
    assert isinstance(doc, Document), doc
    return doc


def parsed(text: str) -> dict[str, Any]:
    return {f.pointer: f.value for f in speechbrain.parse(Input("hparams/x.yaml", text)).facts}


EXPECTED: dict[str, dict[str, tuple[Any, int]]] = {
    # dynamic_batching: True, so batch_size 16 is no batch
    "conformer_large.yaml": {
        "/training/precision": ("fp16", 58), "/training/grad_accum_steps": (1, 53),
        "/training/seed": (3407, 12), "/training/epochs": (120.0, 50),
        "/data/num_workers": (4, 57),
        "/checkpoint/keep_last": (10, 59),  # avg_checkpoints, the recipe's num_to_keep
    },
    # stated fp32; dataloader_options batch_size !ref <batch_size>
    "wav2vec2_base.yaml": {
        "/training/precision": ("fp32", 45), "/training/grad_accum_steps": (8, 59),
        "/checkpoint/every_seconds": (1800.0, 47), "/training/seed": (1234, 7),
        "/training/epochs": (100.0, 41), "/data/num_workers": (4, 60),
        "/training/micro_batch_size": (12, 57),
        "/checkpoint/keep_last": (1, 117),  # save_and_keep_only's num_to_keep
    },
    # the EpochCounter's limit is !ref <N_epochs>
    "sepformer.yaml": {
        "/training/precision": ("fp16", 36), "/training/seed": (1234, 10),
        "/training/epochs": (200.0, 44), "/data/num_workers": (3, 112),
        "/training/micro_batch_size": (1, 45), "/checkpoint/keep_last": (1, 177),
    },
    "train_ecapa.yaml": {
        "/checkpoint/every_seconds": (300.0, 32), "/training/seed": (1988, 7),
        "/training/epochs": (40.0, 35), "/data/num_workers": (4, 50),
        "/training/micro_batch_size": (128, 51), "/checkpoint/keep_last": (1, 164),
    },
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_facts_with_places(name: str) -> None:
    doc = read(FIXTURES / name)
    assert doc.format == "speechbrain" and doc.unknown_keys == [] and doc.errors == []
    assert {f.pointer: (f.value, f.location.line) for f in doc.facts} == EXPECTED[name]


def test_fp32_is_speechbrains_default_precision_for_a_file_without_one() -> None:
    doc = read(FIXTURES / "train_ecapa.yaml")
    assert [(d.pointer, d.value, d.key, d.location.line) for d in doc.defaults] == [
        ("/training/precision", "fp32", "precision", 1)
    ]
    assert read(FIXTURES / "sepformer.yaml").defaults == []  # it states fp16


@pytest.mark.parametrize(
    ("lines", "precision"),
    [
        ("precision: bf16", "bf16"),
        ("precision: fp16\nauto_mix_prec: False", "fp16"),
        ("precision: fp32\nauto_mix_prec: True", "fp16"),
        ("auto_mix_prec: True\nbfloat16_mix_prec: True", "bf16"),
        ("precision: fp64", None),
        ("precision: !ref <p>\np: bf16", "bf16"),
        ("", None),
    ],
)
def test_the_precision_switches_win_when_true(lines: str, precision: str | None) -> None:
    found = parsed(f"model: !new:torch.nn.Linear\nnumber_of_epochs: 2\n{lines}\n")
    assert found.get("/training/precision") == precision


@pytest.mark.parametrize(
    ("lines", "epochs", "batch"),
    [
        ("n: 7\nepoch_counter: !new:speechbrain.utils.epoch_loop.EpochCounter\n  limit: !ref <n>",
         7.0, None),
        ("number_of_epochs: 5\nepoch_counter: !new:x.EpochCounter\n  limit: !ref <n> * 2", 5.0,
         None),
        ("batch_size: 8\ntrain_dataloader_opts:\n  batch_size: !ref <batch_size> // 2", None, 8),
        ("batch_size: 8\ndynamic_batching: True", None, None),
        ("batch_size: 8\ndynamic_batching: !ref <dyn>\ndyn: False", None, 8),
        ("batch_size: !PLACEHOLDER", None, None),
    ],
)  # fmt: skip
def test_refs_are_followed_only_to_plain_values(
    lines: str, epochs: float | None, batch: int | None
) -> None:
    found = parsed(f"model: !new:torch.nn.Linear\n{lines}\n")
    assert found.get("/training/epochs") == epochs
    assert found.get("/training/micro_batch_size") == batch


@pytest.mark.parametrize(
    "text",
    ["max_epoch: 3\nbatch_bins: 100\nencoder: conformer\nencoder_conf: {}\n",  # ESPnet
     "number_of_epochs: 3\nbatch_size: 8\n",  # no HyperPyYAML tag
     "model: \"!new:not.a.tag\"\n"],
)  # fmt: skip
def test_only_hyperpyyaml_is_speechbrains(text: str) -> None:
    assert speechbrain.recognise(Input("train.yaml", text)) == 0.0


def test_a_launch_line_overrides_the_hparams_and_includes_join_the_job(in_tmp: Path) -> None:
    (in_tmp / "hparams/models").mkdir(parents=True)
    (in_tmp / "hparams/models/net.yaml").write_text("layers: 4\n")
    (in_tmp / "hparams/train.yaml").write_text(
        "seed: 1\nnumber_of_epochs: 10\nbatch_size: 4\nnet: !include:models/net.yaml\n"
        "gone: !include:models/gone.yaml\n"
    )
    (in_tmp / "run.sh").write_text(
        "torchrun --nproc_per_node 4 train.py hparams/train.yaml --number_of_epochs 3 "
        "--precision=bf16 --data_folder /data\n"
    )
    (job,) = assemble([Path("run.sh")])
    assert job.training.epochs == 3 and job.provenance["/training/epochs"].file == "run.sh"
    assert job.training.precision == "bf16" and job.training.micro_batch_size == 4
    assert job.resources.gpus_per_node == 4
    assert {s.path: s.role for s in job.sources}["hparams/models/net.yaml"] == "member"
    assert [m.path for m in job.missing_references] == ["models/gone.yaml"]
