"""Ray launchers: ``ray start`` joins a cluster and is no training launch; ``ray job submit --
<command>`` and a RayJob's ``spec.entrypoint`` run the command, whose Hydra overrides beat the
config it names."""

from __future__ import annotations

from pathlib import Path

from trainlint.assemble import assemble
from trainlint.job import Job
from trainlint.sources import launch_script
from trainlint.sources.base import Input

NODE = """#!/bin/bash
#SBATCH -N 2
#SBATCH --gres=gpu:8
srun --nodes=1 bash -c "ray start --address=10.0.0.1:6379 --block"
echo "then: ray job submit -- python3 -m openrlhf.cli.train_ppo_ray"
"""

HEAD_THEN_TRAIN = """#!/bin/bash
#SBATCH -N 2
#SBATCH --gres=gpu:8
srun --nodes=1 bash -c "pip install ray && ray start --head --port=6379 --block" &
sleep 10
srun --overlap --nodes=1 bash -c "ray job submit --address=http://localhost:8265 \\
    -- python3 -m openrlhf.cli.train_ppo_ray --train.batch_size 128"
"""


def test_a_script_that_only_starts_a_ray_node_is_no_training_job(in_tmp: Path) -> None:
    (in_tmp / "node.sh").write_text(NODE)
    assert assemble([Path("node.sh")]) == []
    doc = launch_script.parse(Input("node.sh", NODE))
    assert doc.purpose == "runs ray: cluster setup, not training"


def test_the_training_submitted_after_ray_start_is_the_launch(in_tmp: Path) -> None:
    (in_tmp / "run.sh").write_text(HEAD_THEN_TRAIN)
    (job,) = assemble([Path("run.sh")])
    assert (job.launcher.kind, job.launcher.entrypoint) == ("srun", "openrlhf.cli.train_ppo_ray")
    assert job.training.global_batch_size == 128 and job.resources.nodes == 2


RAYJOB = """apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: ppo
spec:
  entrypoint: python3 -m verl.trainer.main_ppo trainer.total_epochs=3 trainer.nnodes=2
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
            - name: ray-head
              image: verl
              resources:
                limits:
                  nvidia.com/gpu: 8
"""


def _verl_app(root: Path) -> None:
    (root / "verl" / "trainer" / "config").mkdir(parents=True)
    (root / "verl" / "trainer" / "main_ppo.py").write_text(
        '@hydra.main(config_path="config", config_name="ppo_trainer")\ndef main(c): ...\n'
    )
    (root / "verl" / "trainer" / "config" / "ppo_trainer.yaml").write_text(
        "actor_rollout_ref:\n  model:\n    path: base/model\n"
        "trainer:\n  total_epochs: 30\n  save_freq: 10\n"
    )


def test_a_rayjob_entrypoint_s_overrides_beat_the_config_it_names(in_tmp: Path) -> None:
    _verl_app(in_tmp)
    (in_tmp / "rayjob.yaml").write_text(
        RAYJOB.replace("main_ppo ", "main_ppo --config-path=config --config-name=ppo_trainer ")
    )
    (job,) = assemble([Path("rayjob.yaml")])
    sources = [(s.path, s.format) for s in job.sources]
    assert ("verl/trainer/config/ppo_trainer.yaml", "verl") in sources
    assert job.training.epochs == 3 and job.provenance["/training/epochs"].file == "rayjob.yaml"
    assert job.checkpoint.every_steps == 10  # the config's, not overridden
    assert job.model.name == "base/model"


def test_a_rayjob_entrypoint_overrides_any_hydra_app_s_config(in_tmp: Path) -> None:
    """A Lightning-Hydra app: ``trainer.max_epochs=3`` is read by the config's own format."""
    (in_tmp / "src").mkdir()
    (in_tmp / "configs").mkdir()
    (in_tmp / "src" / "train.py").write_text(
        '@hydra.main(config_path="../configs", config_name="train")\ndef main(c): ...\n'
    )
    (in_tmp / "configs" / "train.yaml").write_text(
        "trainer:\n  _target_: lightning.Trainer\n  max_epochs: 30\n  devices: 8\n"
    )
    entry = "python src/train.py --config-name=train trainer.max_epochs=3"
    job = _job(
        in_tmp,
        "rayjob.yaml",
        RAYJOB.replace(
            "python3 -m verl.trainer.main_ppo trainer.total_epochs=3 trainer.nnodes=2", entry
        ),
    )
    assert job.training.epochs == 3 and job.provenance["/training/epochs"].file == "rayjob.yaml"


def _job(root: Path, name: str, text: str) -> Job:
    (root / name).write_text(text)
    (job,) = assemble([Path(name)])
    return job


def test_a_rayjob_entrypoint_is_read_alone_when_its_config_is_not_here(in_tmp: Path) -> None:
    job = _job(in_tmp, "rayjob.yaml", RAYJOB)
    assert (job.launcher.entrypoint, job.training.epochs) == ("verl.trainer.main_ppo", 3)


def test_a_rayjob_s_head_is_one_node(in_tmp: Path) -> None:
    """A cluster of the head pod alone (no worker group): one node with its GPUs."""
    job = _job(in_tmp, "rayjob.yaml", RAYJOB)
    assert (job.resources.nodes, job.resources.gpus_per_node) == (1, 8)
    assert job.provenance["/resources/nodes"].line == 8  # headGroupSpec
