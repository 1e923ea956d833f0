"""diffusers' example scripts: their flags read by the script's name when the script is not in
the repository, accelerate's fp32 as a default that any stated precision beats, 8-bit Adam and
xformers, and the names that are not diffusers' scripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.helpers import job_in, launched
from trainlint.job import Job
from trainlint.sources import diffusers, flag_readers
from trainlint.sources.base import normalize as n

DIFFUSERS = Path(__file__).parents[1] / "fresh" / "repos" / "diffusers"


def fresh(script: str) -> Job:
    return job_in(DIFFUSERS, script)


def test_the_script_s_flags_without_the_script_in_the_repository() -> None:
    job = fresh("examples/research_projects/pixart/train_controlnet_hf_diffusers.sh")
    assert job.launcher.entrypoint == "./train_pixart_controlnet_hf.py"
    assert (job.training.micro_batch_size, job.training.grad_accum_steps) == (1, 4)
    assert (job.training.precision, job.data.image_size) == ("fp16", 512)
    assert job.model.name == "PixArt-alpha/PixArt-XL-2-512x512"  # $MODEL_DIR, exported above
    assert job.provenance["/data/image_size"].line == 16


def test_steps_and_checkpoints_of_a_plain_python_launch() -> None:
    job = fresh("examples/research_projects/sana/train_sana_sprint_diffusers.sh")
    assert (job.training.max_steps, job.data.image_size, job.training.precision) == (
        30000, 1024, "bf16"
    )  # fmt: skip
    assert (job.checkpoint.every_steps, job.checkpoint.keep_last) == (500, 10)
    assert job.training.activation_checkpointing is True


def test_eight_bit_adam_and_xformers_and_accelerate_s_fp32_default() -> None:
    job = fresh("examples/dreambooth/train_12gb.sh")
    optimizer = job.training.optimizer
    assert (optimizer.family, optimizer.eight_bit, optimizer.experimental) == ("adamw", True, False)
    assert [(f.name, f.kind, f.experimental) for f in job.features] == [
        ("xformers", "kernel", True)
    ]
    assert job.training.precision is None  # no file states it ...
    default = job.defaults["/training/precision"]  # ... accelerate's "no" is the default,
    # located at the first flag the script is given
    assert (default.value, default.key, default.line) == ("fp32", "mixed_precision", 9)


def test_a_precision_the_launcher_or_its_config_states_beats_the_default(tmp_path: Path) -> None:
    flags = "train_text_to_image.py --resolution=512 --train_batch_size=4\n"
    flagged = launched(tmp_path, f"accelerate launch --mixed_precision bf16 {flags}")
    assert flagged.training.precision == "bf16"
    assert "/training/precision" not in flagged.defaults
    config = "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: fp16\n"
    configured = launched(
        tmp_path, f"accelerate launch --config_file acc.yaml {flags}", **{"acc.yaml": config}
    )
    assert configured.training.precision == "fp16"
    assert "/training/precision" not in configured.defaults


def test_mixed_precision_no_is_fp32_stated(tmp_path: Path) -> None:
    flags = "--checkpointing_steps 250 --checkpoints_total_limit 3 --validation_steps 100"
    job = launched(
        tmp_path, f"accelerate launch train_dreambooth_lora_sdxl.py --mixed_precision=no {flags}\n"
    )
    assert job.training.precision == "fp32"
    assert (job.checkpoint.every_steps, job.checkpoint.keep_last, job.eval.every_steps) == (
        250, 3, 100
    )  # fmt: skip


@pytest.mark.parametrize(
    "entry",
    ["examples/dreambooth/train_dreambooth_lora_sdxl.py", "train_text_to_image.py",
     "./train_controlnet_flux.py", "textual_inversion.py", "train_cosmos_predict25_lora.py",
     "train_unconditional.py"],
)  # fmt: skip
def test_diffusers_example_scripts_are_named(entry: str) -> None:
    assert diffusers.FORMAT.flags is not None
    assert diffusers.FORMAT.flags.reads_flags_of(entry)


@pytest.mark.parametrize("entry", ["train.py", "train_sft.py", "train_network.py",
                                   "sdxl_train.py", "my_train_text.py", "finetune.py"])  # fmt: skip
def test_other_programs_keep_their_readers(entry: str) -> None:
    """Not diffusers' scripts: the HF Trainer (or kohya) still reads their flags."""
    assert diffusers.FORMAT.flags is not None
    assert not diffusers.FORMAT.flags.reads_flags_of(entry)
    assert diffusers.FORMAT.flags not in flag_readers(entry)


@pytest.mark.parametrize(
    ("value", "side"),
    [("512", 512), (1024, 1024), ("768,768", 768), ([1024, 1024], 1024), ("1024,768", None),
     ("0", None), (True, None), ("auto", None)],
)  # fmt: skip
def test_a_resolution_is_one_square_side(value: object, side: int | None) -> None:
    assert n.image_side(value) == side
