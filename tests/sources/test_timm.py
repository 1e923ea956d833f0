"""timm's distributed_train.sh: the wrapper's first argument is the GPUs of one node, the rest
train.py's flags (single-dash ``-b``/``-j`` too), ``--amp`` in its dtype, fp32 without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.helpers import job_in, launched
from trainlint.sources import flag_readers, timm

TIMM = Path(__file__).parents[1] / "fresh" / "repos" / "pytorch-image-models"


def test_the_wrapper_s_processes_and_train_py_s_flags() -> None:
    job = job_in(TIMM, "train_resnext50.sh")
    resources = job.resources
    assert (resources.gpus_per_node, resources.nodes, resources.world_size) == (8, 1, 8)
    assert job.provenance["/resources/gpus_per_node"].column == 24  # the "8"
    training = job.training
    assert (training.micro_batch_size, training.global_batch_size) == (192, 1536)
    assert (training.epochs, training.precision, job.data.num_workers) == (240, "fp16", 6)
    assert job.model.name == "resnext50_32x4d"


def test_without_amp_fp32_is_timm_s_default() -> None:
    job = job_in(TIMM, "train_seresnext26t.sh")
    assert job.training.precision is None
    defaults = {pointer: d.value for pointer, d in job.defaults.items()}
    assert defaults["/training/precision"] == "fp32"
    assert (defaults["/training/seed"], defaults["/checkpoint/keep_last"]) == (42, 10)


@pytest.mark.parametrize(
    ("flags", "precision"),
    [("--amp", "fp16"), ("--amp --amp-dtype bfloat16", "bf16"), ("", None)],
)
def test_amp_in_its_dtype(tmp_path: Path, flags: str, precision: str | None) -> None:
    job = launched(tmp_path, f"./distributed_train.sh 2 --model vit_base_patch16_224 {flags}\n")
    assert job.training.precision == precision


def test_a_variable_process_count_is_no_count(tmp_path: Path) -> None:
    job = launched(tmp_path, "./distributed_train.sh $NGPU --model resnet50 -b 64\n")
    assert job.resources.gpus_per_node is None
    assert job.training.micro_batch_size == 64


def test_only_the_wrapper_is_named() -> None:
    assert timm.FORMAT.flags is not None
    assert timm.FORMAT.flags in flag_readers("./distributed_train.sh")
    assert timm.FORMAT.flags not in flag_readers("train.py")
    assert timm.FORMAT.flags not in flag_readers("tools/dist_train.sh")
