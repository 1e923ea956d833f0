"""SLURM launcher variants described in the corpus PATTERNS.md (our own scripts, written from
the descriptions; the originals are not copied): ``-A``/``--account`` cost accounts,
``--gpus-per-task`` times ``--ntasks-per-node``, ``--constraint=volta32gb``, ``--nodes=$NUM_NODES``
passed through ``sbatch --export``, ``--time-min`` next to ``-t``, and the ml-engineering
``srun … bash -c "$LAUNCHER $CMD"`` body."""

from __future__ import annotations

from typing import Any

import pytest

from trainlint.sources import finish, launch_script
from trainlint.sources.base import Document, Input


def read(text: str) -> Document:
    file = Input("job.slurm", text)
    return finish(launch_script.parse(file), file)


def located(doc: Document) -> dict[str, tuple[Any, int, int]]:
    return {f.pointer: (f.value, f.location.line, f.location.column) for f in doc.facts}


AXOLOTL = """#!/bin/bash
#SBATCH --job-name=axolotl
#SBATCH --nodes=$NUM_NODES
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-task=8
#SBATCH --cpus-per-task=128
#SBATCH -A my-account
#SBATCH --time=72:00:00
export NCCL_DEBUG=INFO
srun axolotl train config.yml --launcher torchrun -- --nproc_per_node=8 --nnodes=$NUM_NODES
"""

NEMO = """#!/bin/bash
#SBATCH -N 1 --gpus-per-node=8 --ntasks-per-node=8
#SBATCH -t 4:00:00
#SBATCH --time-min 04:00:00
#SBATCH --partition=train
srun python speech_to_text_ctc.py trainer.devices=-1
"""

ML_ENGINEERING = """#!/bin/bash
#SBATCH --job-name=tr1 --nodes=2 --ntasks-per-node=1 --gres=gpu:8 --partition=hopper-prod
#SBATCH --exclusive --requeue --mem=0 --dependency=singleton --output=./logs/%x-%j.out
#SBATCH --time=3-00:00:00 -A proj-7
GPUS_PER_NODE=8
NUM_NODES=$SLURM_NNODES
MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
LAUNCHER="python -u -m torch.distributed.run --nproc_per_node $GPUS_PER_NODE \\
  --nnodes $NUM_NODES --rdzv_backend c10d --max_restarts 0 --tee 3"
CMD="train.py --save_steps 100"
srun --wait=60 --kill-on-bad-exit=1 --nodes=$NUM_NODES --ntasks=$NUM_NODES bash -c "$LAUNCHER $CMD"
"""


def test_axolotl_gpus_per_task_with_nodes_from_the_environment() -> None:
    facts = located(read(AXOLOTL))
    assert facts["/resources/gpus_per_node"] == (8, 5, 9)  # 8 per task, 1 task per node
    assert facts["/tags/account"] == ("my-account", 7, 9)  # -A: the cost account
    assert facts["/resources/time_limit_s"] == (259200.0, 8, 9)
    assert facts["/name"] == ("axolotl", 2, 9)
    assert "/resources/nodes" not in facts  # $NUM_NODES comes from sbatch --export
    assert facts["/launcher/kind"][0] == "axolotl"  # srun runs `axolotl train cfg.yml`


def test_nemo_gpus_per_node_and_time_min_does_not_replace_time() -> None:
    facts = located(read(NEMO))
    assert facts["/resources/nodes"] == (1, 2, 9)
    assert facts["/resources/gpus_per_node"] == (8, 2, 14)
    assert facts["/resources/time_limit_s"] == (14400.0, 3, 9)
    assert facts["/tags/partition"] == ("train", 5, 9)


def test_ml_engineering_srun_bash_c_launcher() -> None:
    doc = read(ML_ENGINEERING)
    facts = located(doc)
    assert facts["/resources/nodes"][0] == 2
    assert facts["/resources/gpus_per_node"][0] == 8
    assert facts["/tags/partition"] == ("hopper-prod", 2, 67)
    assert facts["/tags/account"] == ("proj-7", 4, 27)
    assert facts["/resources/time_limit_s"] == (259200.0, 4, 9)
    assert facts["/launcher/kind"][0] == "torchrun"
    assert facts["/launcher/entrypoint"][0] == "train.py"
    assert facts["/checkpoint/every_steps"][0] == 100.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ("#SBATCH --gres=gpu:8\n#SBATCH --constraint=volta32gb",
         {"/resources/gpus_per_node": 8, "/resources/gpu/model": "V100-32GB"}),
        ("#SBATCH --constraint=volta32gb --gpus-per-node=8",
         {"/resources/gpus_per_node": 8, "/resources/gpu/model": "V100-32GB"}),
        ("#SBATCH --gpus-per-task=8", {"/resources/gpus_per_node": 8}),
        ("#SBATCH --gpus-per-task=2 --ntasks-per-node=4", {"/resources/gpus_per_node": 8}),
        ("#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=2",
         {"/resources/gpus_per_node": 8}),  # order of the headers does not matter
        ("#SBATCH --gpus-per-task=1 --ntasks=8", {"/resources/gpus_per_node": 8}),  # one node
        ("#SBATCH --gpus-per-task=1 --ntasks=8 -N 2",
         {"/resources/gpus_per_node": 4, "/resources/nodes": 2}),
        ("#SBATCH --gpus-per-task=2 --ntasks-per-node=$TASKS", {}),  # count unknown
        ("#SBATCH --gpus-per-task=1 --ntasks=8 --nodes=$NUM_NODES", {}),
        ("#SBATCH --nodes=$NUM_NODES --gres=gpu:4", {"/resources/gpus_per_node": 4}),
        ("#SBATCH -A research", {"/tags/account": "research"}),
        ("#SBATCH -Aresearch", {"/tags/account": "research"}),
        ("#SBATCH --account=ml-prod", {"/tags/account": "ml-prod"}),
        ("#SBATCH --account ml-prod", {"/tags/account": "ml-prod"}),
    ],
)  # fmt: skip
def test_header_variants(headers: str, expected: dict[str, Any]) -> None:
    doc = read(f"#!/bin/bash\n{headers}\npython train.py\n")
    pointers = {"/resources/gpus_per_node", "/resources/gpu/model", "/resources/nodes",
                "/tags/account"}  # fmt: skip
    assert {f.pointer: f.value for f in doc.facts if f.pointer in pointers} == expected


def test_slurm_environment_follows_gpus_per_task() -> None:
    text = (
        "#!/bin/bash\n#SBATCH --gpus-per-task=4 --ntasks-per-node=2 --nodes=3\n"
        "torchrun --nproc_per_node=$SLURM_GPUS_ON_NODE --nnodes=$SLURM_NNODES train.py\n"
    )
    facts = located(read(text))
    assert facts["/resources/gpus_per_node"][0] == 8
    assert facts["/resources/nodes"][0] == 3
