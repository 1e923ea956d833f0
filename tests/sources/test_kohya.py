"""kohya sd-scripts: the training scripts' flags, the dataset config whose batch and resolution
take the flags' place, the ``--config_file`` TOML under the launch line's flags, the saves kept,
typos against every option the scripts define, and recognition of its TOML beside others'."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.helpers import job_in, launched
from trainlint.job import Job
from trainlint.sources import kohya, read_document
from trainlint.sources.base import Document, Input

SD_SCRIPTS = Path(__file__).parents[1] / "fresh" / "repos" / "sd-scripts"


def fresh(script: str) -> Job:
    return job_in(SD_SCRIPTS, script)


DATASET = "[general]\nresolution = [1024, 1024]\n\n[[datasets]]\nbatch_size = 6\n"


def test_the_dataset_config_gives_batch_and_resolution() -> None:
    job = fresh("sdxl_train_network.sh")
    assert (job.training.micro_batch_size, job.data.image_size) == (6, 1024)
    where = job.provenance["/data/image_size"]
    assert (where.file, where.line) == ("my_sdxl_dataset_config.toml", 4)  # [general]
    assert (job.model.peft.method, job.model.peft.rank) == ("lora", 32)
    assert (job.training.epochs, job.checkpoint.every_epochs) == (10, 1)
    assert (job.training.precision, job.training.optimizer.eight_bit) == ("bf16", True)


def test_datasets_that_differ_state_no_batch() -> None:
    """config_README's example: 4 images of 512 px in one dataset, 2 of 768 px in the other."""
    job = fresh("train_network.sh")
    assert (job.training.micro_batch_size, job.data.image_size) == (None, None)
    assert job.training.precision == "fp16"


def test_the_config_file_under_the_launch_line_s_flags(tmp_path: Path) -> None:
    toml = ('[model]\npretrained_model_name_or_path = "sdxl"\n[training]\nmax_train_steps = 4000\n'
            'save_every_n_steps = 500\nsave_last_n_steps = 1500\nmixed_precision = "fp16"\n'
            'train_batch_size = 2\nresolution = "1024,1024"\n')  # fmt: skip
    job = launched(tmp_path, "accelerate launch sdxl_train.py --config_file lora.toml "
                 "--mixed_precision bf16\n", **{"lora.toml": toml})  # fmt: skip
    assert job.training.precision == "bf16"  # the flag wins over the config
    assert (job.training.max_steps, job.checkpoint.every_steps) == (4000, 500)
    assert job.checkpoint.keep_last == 3  # the saves of the last 1500 steps, every 500
    assert (job.training.micro_batch_size, job.data.image_size) == (2, 1024)
    assert job.provenance["/training/max_steps"].line == 4


def test_the_batch_flag_counts_only_without_a_dataset_config(tmp_path: Path) -> None:
    alone = launched(tmp_path, "accelerate launch train_network.py --train_batch_size 3 "
                   "--resolution 768\n")  # fmt: skip
    assert (alone.training.micro_batch_size, alone.data.image_size) == (3, 768)
    beside = launched(tmp_path, "accelerate launch train_network.py --train_batch_size 3 "
                    "--dataset_config d.toml\n", **{"d.toml": DATASET})  # fmt: skip
    assert (beside.training.micro_batch_size, beside.data.image_size) == (6, 1024)


def test_defaults_fp32_random_seed_and_eight_workers(tmp_path: Path) -> None:
    job = launched(tmp_path, "accelerate launch train_db.py --max_train_steps 1600 --xformers\n")
    assert job.training.precision is None
    defaults = {pointer: d.value for pointer, d in job.defaults.items()}
    assert defaults == {"/training/precision": "fp32", "/training/seed": None,
                        "/data/num_workers": 8}  # fmt: skip
    assert [(f.name, f.experimental) for f in job.features] == [("xformers", True)]


def test_typos_against_the_scripts_options() -> None:
    text = 'pretrained_model_name_or_path = "x"\nnetwork_dim = 8\nsave_every_n_epoch = 1\n'
    doc = kohya.parse(Input("lora.toml", text))
    assert [(u.key, u.suggestion, u.line) for u in doc.unknown_keys] == [
        ("save_every_n_epoch", "save_every_n_epochs", 3)
    ]


@pytest.mark.parametrize(
    ("name", "text", "format_"),
    [
        ("lora.toml", 'network_module = "networks.lora"\nnetwork_dim = 4\noutput_name = "a"\n',
         "kohya"),
        ("data.toml", DATASET, "kohya"),
        ("llama3_8b.toml", '[job]\ndump_folder = "o"\n[model]\nname = "llama3"\n'
         '[training]\nsteps = 10\n', "torchtitan"),
    ],
)  # fmt: skip
def test_recognised_beside_other_toml(name: str, text: str, format_: str) -> None:
    doc = read_document(Input(name, text))
    assert isinstance(doc, Document) and doc.format == format_


def test_a_toml_of_another_tool_is_not_kohya_s() -> None:
    assert kohya.recognise(Input("settings.toml", '[tool]\nname = "x"\nversion = 1\n')) == 0.0
    assert kohya.recognise(Input("pyproject.toml", "network_dim = 1\n")) == 0.0
