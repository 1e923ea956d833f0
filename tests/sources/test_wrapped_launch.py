"""A script that runs a repository script with arguments (``bash tools/dist_train.sh CONFIG 8
--amp``, OpenMMLab's launchers): the run script is read with them as its ``$1``, ``$2``...,
its exports and prefix assignments, and what it forwards (``${@:3}``, ``PY_ARGS=${@:5}``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.assemble import assemble

FRESH = Path(__file__).parent.parent / "fresh" / "repos" / "mmpretrain"


def _repository(folder: Path, line: str) -> None:
    for name in ("tools/dist_train.sh", "tools/slurm_train.sh", "tools/slurm_test.sh"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FRESH / name, folder / name)
    shutil.copytree(FRESH / "configs", folder / "configs")
    (folder / "run.sh").write_text(f"#!/bin/bash\n{line}\n")


def test_dist_train_takes_the_config_and_gpu_count_of_the_line_that_runs_it(in_tmp: Path) -> None:
    _repository(in_tmp, "bash tools/dist_train.sh configs/resnet/resnet50_8xb32_in1k.py 8 --amp")
    (job,) = assemble([Path("run.sh")])
    assert job.resources.gpus_per_node == 8 and job.launcher.kind == "torchrun"
    assert job.provenance["/resources/gpus_per_node"].file == "tools/dist_train.sh"
    assert job.training.epochs == 100 and job.training.micro_batch_size == 32
    assert job.training.precision == "fp16"  # --amp, forwarded by ${@:3}
    assert job.provenance["/training/precision"].file == "run.sh"
    roles = {source.path: source.role for source in job.sources}
    assert roles["tools/dist_train.sh"] == "member"  # its own reading, without arguments
    assert roles["configs/_base_/default_runtime.py"] == "member"


def test_slurm_train_reads_exports_prefixes_and_forwarded_options(in_tmp: Path) -> None:
    _repository(in_tmp, (
        "export GPUS_PER_NODE=4\nGPUS=4 bash tools/slurm_train.sh gpu r50 "
        "configs/resnet/resnet50_8xb32_in1k.py work_dirs/r50 --cfg-options "
        "train_dataloader.batch_size=64"
    ))  # fmt: skip
    (job,) = assemble([Path("run.sh")])
    assert job.launcher.kind == "srun" and job.resources.scheduler == "slurm"
    assert job.resources.gpus_per_node == 4 and job.resources.placement.partition == "gpu"
    assert job.training.micro_batch_size == 64  # PY_ARGS=${@:5}
    assert job.provenance["/training/micro_batch_size"].file == "run.sh"


def test_an_evaluation_script_run_with_arguments_is_no_job(in_tmp: Path) -> None:
    _repository(
        in_tmp, "bash tools/slurm_test.sh gpu r50 configs/resnet/resnet50_8xb32_in1k.py x.pth"
    )
    assert assemble([Path("run.sh")]) == []


def test_a_batch_script_run_by_bash_keeps_its_own_headers(in_tmp: Path) -> None:
    (in_tmp / "train.slurm").write_text(
        "#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=02:00:00\ntorchrun --nproc_per_node 8 "
        "train.py --max_steps $1\n"
    )
    (in_tmp / "run.sh").write_text("#!/bin/bash\nbash train.slurm 100\n")
    (job,) = assemble([Path("run.sh")])
    assert job.resources.time_limit_s == 7200 and job.resources.gpus_per_node == 8
    assert {source.path: source.role for source in job.sources}["train.slurm"] == "entrypoint"
