"""OpenRLHF: the flags of its trainers, dotted (since ed62d0e2) and plain (before), read only
for ``openrlhf.cli.train_*``, on the launch line ``ray job submit -- python3 -m ...`` runs;
a SLURM allocation beats the actor's placement."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.assemble import assemble
from trainlint.job import Job, Location
from trainlint.sources import openrlhf
from trainlint.workdir import working_directory


def job_of(root: Path, script: str) -> Job:
    (root / "run.sh").write_text(script)
    with working_directory(root):
        (job,) = assemble([Path("run.sh")])
    return job


DOTTED = """#!/bin/bash
ray job submit --address="http://127.0.0.1:8265" \\
   -- python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 --actor.num_gpus_per_node 8 --ref.num_gpus_per_node 4 \\
   --actor.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \\
   --train.micro_batch_size 2 --train.batch_size 128 --train.max_epochs 1 \\
   --data.max_len 2048 --ds.zero_stage 3 --ds.param_dtype bf16 --ds.adam_offload \\
   --actor.gradient_checkpointing_enable --ckpt.save_steps 10 --ckpt.max_num 3 \\
   --logger.logging_steps 1 --eval.steps -1 --ds.attn_implementation flash_attention_2
"""


def test_the_dotted_flags_of_a_trainer_run_through_ray_job_submit(tmp_path: Path) -> None:
    job = job_of(tmp_path, DOTTED)
    assert (job.launcher.kind, job.launcher.entrypoint) == ("python", "openrlhf.cli.train_ppo_ray")
    assert (job.resources.gpus_per_node, job.resources.nodes, job.resources.world_size) == (8, 1, 8)
    assert job.model.name == "OpenRLHF/Llama-3-8b-sft-mixture" and job.model.seq_len == 2048
    training = job.training
    assert (training.micro_batch_size, training.global_batch_size, training.epochs) == (2, 128, 1)
    assert (training.parallelism.zero_stage, training.precision) == (3, "bf16")
    assert training.parallelism.offload_optimizer and training.activation_checkpointing
    assert (job.checkpoint.every_steps, job.checkpoint.keep_last) == (10, 3)
    assert job.logging.every_steps == 1 and job.eval.every_steps is None  # -1: never
    assert [f.name for f in job.features] == ["flash-attn"]
    assert job.provenance["/training/global_batch_size"].line == 6


def test_the_plain_flags_of_releases_before_the_dotted_hierarchy(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\ndeepspeed --module openrlhf.cli.train_sft "
        "--pretrain meta-llama/Meta-Llama-3-8B --micro_train_batch_size 2 "
        "--train_batch_size 256 --max_epochs 1 --zero_stage 2 --bf16 "
        "--gradient_checkpointing --flash_attn --save_steps 100 --max_len 4096\n"
    )
    job = job_of(tmp_path, script)
    assert job.model.name == "meta-llama/Meta-Llama-3-8B" and job.model.seq_len == 4096
    assert (job.training.micro_batch_size, job.training.global_batch_size) == (2, 256)
    assert (job.training.parallelism.zero_stage, job.training.precision) == (2, "bf16")
    assert job.training.activation_checkpointing and job.checkpoint.every_steps == 100
    assert [f.name for f in job.features] == ["flash-attn"]


def test_a_slurm_allocation_beats_the_actor_s_placement(tmp_path: Path) -> None:
    job = job_of(tmp_path, "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --gres=gpu:8\n"
                 "srun python3 -m openrlhf.cli.train_ppo_ray --actor.num_nodes 1 "
                 "--actor.num_gpus_per_node 4 --train.batch_size 128\n")  # fmt: skip
    assert (job.resources.nodes, job.resources.gpus_per_node) == (2, 8)
    assert job.provenance["/resources/nodes"].line == 2
    assert job.training.global_batch_size == 128


def test_another_program_s_flags_are_not_openrlhf_s(tmp_path: Path) -> None:
    job = job_of(tmp_path, "#!/bin/bash\npython3 train.py --ds.zero_stage 3 "
                 "--actor.num_gpus_per_node 8 --ckpt.save_steps 5\n")  # fmt: skip
    assert job.training.parallelism.zero_stage is None and job.resources.gpus_per_node is None
    assert job.checkpoint.every_steps is None


@pytest.mark.parametrize(
    ("flag", "value", "facts"),
    [
        ("--ds.param_dtype", "fp16", [("/training/precision", "fp16")]),
        ("--ds.param_dtype", "fp32", []),
        ("--ckpt.save_steps", "-1", []),
        ("--ds.attn_implementation", "eager", []),
        ("--critic.model_name_or_path", "x", []),  # the critic is not the model trained
        ("--unknown.flag", "1", []),
    ],
)
def test_one_flag(flag: str, value: str, facts: list[tuple[str, object]]) -> None:
    where = Location(file="run.sh", line=1, column=1)
    assert [(f.pointer, f.value) for f in openrlhf.cli_facts(flag, value, where)] == facts


def test_a_key_value_word_is_no_flag_of_an_argparse_trainer(tmp_path: Path) -> None:
    """OpenRLHF's argparse would refuse ``ds.zero_stage=3``: it states nothing."""
    job = job_of(tmp_path, "#!/bin/bash\npython3 -m openrlhf.cli.train_sft ds.zero_stage=3\n")
    assert job.training.parallelism.zero_stage is None


FIXTURE = Path(__file__).parent / "fixtures" / "openrlhf" / "train_ppo_with_reward_fn.sh"


def test_a_release_before_the_dotted_flags_read_from_its_own_example(tmp_path: Path) -> None:
    """OpenRLHF c1ba971c's examples/scripts/train_ppo_with_reward_fn.sh, as released."""
    job = job_of(tmp_path, FIXTURE.read_text())
    assert job.launcher.entrypoint == "openrlhf.cli.train_ppo_ray"
    lines = {pointer: where.line for pointer, where in job.provenance.items()}
    expected = {
        "/resources/gpus_per_node": (2, 20),
        "/resources/nodes": (1, 19),
        "/model/name": ("OpenRLHF/Llama-3-8b-sft-mixture", 24),
        "/training/micro_batch_size": (8, 27),
        "/training/global_batch_size": (128, 28),
        "/training/epochs": (1, 32),
        "/model/seq_len": (2048, 33),
        "/training/parallelism/zero_stage": (3, 34),
        "/training/precision": ("bf16", 35),
        "/training/parallelism/offload_optimizer": (True, 44),
        "/training/activation_checkpointing": (True, 46),
    }
    dumped = job.model_dump()
    found = {}
    for pointer in expected:
        node = dumped
        for part in pointer.strip("/").split("/"):
            node = node[part]
        found[pointer] = (node, lines.get(pointer))
    assert found == expected
    assert [f.name for f in job.features] == ["flash-attn"]


@pytest.mark.parametrize("flag", ["--ckpt.save_hf", "--save_hf_ckpt"])
def test_a_bare_hf_export_flag_is_an_export_at_every_save(tmp_path: Path, flag: str) -> None:
    script = (
        "#!/bin/bash\npython3 -m openrlhf.cli.train_ppo_ray \\\n"
        f"   --ckpt.save_steps 5 {flag} \\\n   --train.batch_size 128\n"
    )
    job = job_of(tmp_path, script)
    assert (job.checkpoint.every_steps, job.checkpoint.export_hf) == (5, True)
    assert job.provenance["/checkpoint/export_hf"].line == 3
