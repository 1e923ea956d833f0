"""An entry script's own argument definitions: defaults located at the definition, the launch
line's flags read through them, conservative mapping by name and help. Nothing is run."""

from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.assemble import assemble
from trainlint.job import Job
from trainlint.sources import read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures" / "entry_scripts"


def _job_of(folder: Path, root: str, launch: str) -> Job:
    (folder / root).write_text(launch)
    jobs = [job for job in assemble(sorted(folder.iterdir())) if job.id.endswith(root)]
    assert len(jobs) == 1
    return jobs[0]


def test_the_launch_line_overrides_the_entry_scripts_argparse_defaults(in_tmp: Path) -> None:
    shutil.copy(FIXTURES / "main.py", in_tmp / "main.py")
    launch = "#!/bin/bash\ntorchrun --nproc_per_node=8 main.py --epochs 300 --amp -j 8 --hidden 1\n"
    job = _job_of(in_tmp, "run.sh", launch)
    assert job.training.epochs == 300
    assert job.training.precision == "bf16"
    assert job.data.num_workers is None  # -j 8: launch lines' short options are not read
    assert job.provenance["/training/epochs"].file == "run.sh"
    assert job.provenance["/training/epochs"].line == 2
    defaults = job.defaults
    assert defaults["/data/num_workers"].value == 4
    assert (defaults["/data/num_workers"].file, defaults["/data/num_workers"].line) == (
        "main.py",
        7,
    )
    assert defaults["/data/num_workers"].key == "--workers"
    assert defaults["/training/micro_batch_size"].value == 8
    assert defaults["/logging/every_steps"].value == 10
    assert defaults["/model/name"].value == "resnet18"
    assert "/training/epochs" not in defaults  # the flag states it


def test_a_batch_size_whose_help_spans_gpus_maps_to_nothing(in_tmp: Path) -> None:
    shutil.copy(FIXTURES / "main.py", in_tmp / "main.py")
    job = _job_of(
        in_tmp, "run.sh", "#!/bin/bash\ntorchrun --nproc_per_node=8 main.py --batch-size 64\n"
    )
    assert job.training.micro_batch_size is None
    assert job.training.global_batch_size is None


def test_hf_argument_dataclasses_of_the_entry_script(in_tmp: Path) -> None:
    shutil.copy(FIXTURES / "hf_train.py", in_tmp / "hf_train.py")
    launch = (
        "#!/bin/bash\ndeepspeed hf_train.py --lora_enable True --lora_r 128 "
        "--per_device_train_batch_size 4 --model_name_or_path lmsys/vicuna-13b-v1.5\n"
    )
    job = _job_of(in_tmp, "finetune.sh", launch)
    assert job.model.peft.method == "lora"
    assert job.model.peft.rank == 128
    assert job.training.micro_batch_size == 4
    assert job.model.name == "lmsys/vicuna-13b-v1.5"


def test_an_entry_script_not_in_the_repository_is_no_finding(in_tmp: Path) -> None:
    job = _job_of(
        in_tmp, "run.sh", "#!/bin/bash\ntorchrun --nproc_per_node=8 absent.py --epochs 3\n"
    )
    assert job.missing_references == []
    assert job.unresolved_references == []


def test_an_argparse_script_alone_roots_no_job_and_is_never_broken() -> None:
    doc = read_document(Input("main.py", (FIXTURES / "main.py").read_text()))
    assert isinstance(doc, Document) and doc.purpose is not None and not doc.facts
    assert doc.arguments["epochs"].name == "epochs"
    broken = read_document(Input("x.py", "parser.add_argument('--epochs', default=3\n"))
    assert not isinstance(broken, Document) or not broken.errors


def test_a_config_the_launch_names_overrides_the_entry_scripts_own_globals(in_tmp: Path) -> None:
    """nanoGPT: train.py's globals are what ``config/*.py`` (exec'd into it) overrides."""
    (in_tmp / "config").mkdir()
    (in_tmp / "train.py").write_text(
        "batch_size = 12\nblock_size = 1024\nn_layer = 12\nn_embd = 768\nmax_iters = 600000\n"
        "eval_interval = 2000\n"
    )
    (in_tmp / "config" / "train_small.py").write_text("batch_size = 64\nmax_iters = 5000\n")
    launch = "#!/bin/bash\ntorchrun --nproc_per_node=8 train.py config/train_small.py\n"
    job = _job_of(in_tmp, "run.sh", launch)
    assert (job.training.micro_batch_size, job.training.max_steps) == (64, 5000)
    assert job.model.layers == 12  # train.py's own, where the config says nothing
    assert job.provenance["/training/micro_batch_size"].file == "config/train_small.py"


def test_positional_only_parameters_with_defaults_are_read_without_error() -> None:
    """``def f(a, b=1, /, c=2)``: defaults cover positional-only parameters too (diffusers'
    attention_dispatch.py was a TL901 "internal error" at error severity)."""
    text = (
        "import typer\n\n"
        "def dispatch(query, key=None, /, scale=1.0):\n    return query\n\n"
        "def main(lr, /, epochs: int = typer.Option(3, help='passes over the data')):\n"
        "    pass\n"
    )
    doc = read_document(Input("attention_dispatch.py", text))
    assert not isinstance(doc, Document) or not doc.errors
