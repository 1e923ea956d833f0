"""llm.c: the CUDA binary's single-letter flags under mpirun and srun, the PyTorch reference's
argparse flags under torchrun, the global batch from tokens per step, and the dimensions of
``-e d12``."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.assemble import assemble
from trainlint.job import Job, Location
from trainlint.sources import llm_c
from trainlint.workdir import working_directory

LLM_C = Path(__file__).parents[1] / "fresh" / "repos" / "llm.c"


def job_of(root: Path, script: str) -> Job:
    (root / "run.sh").write_text(script)
    with working_directory(root):
        (job,) = assemble([Path("run.sh")])
    return job


def test_the_binary_s_single_letter_flags_under_mpirun(tmp_path: Path) -> None:
    job = job_of(tmp_path, "#!/bin/bash\nmake train_gpt2cu\nmpirun -np 8 ./train_gpt2cu "
                 "-i 'train_*.bin' -o log -v 250 -s 20000 -b 16 -t 1024 -d 1048576 -z 1 "
                 "-n 2000 -nk 5 -x 32000 -ge 1 -e \"d48\"\n")  # fmt: skip
    assert (job.launcher.kind, job.launcher.entrypoint) == ("mpirun", "./train_gpt2cu")
    training = job.training
    assert (training.micro_batch_size, job.model.seq_len, training.max_steps) == (16, 1024, 32000)
    assert training.global_batch_size == 1024  # 1,048,576 tokens / 1,024 per sequence
    assert job.provenance["/training/global_batch_size"].column == 83  # at -d
    assert (job.checkpoint.every_steps, job.checkpoint.keep_last) == (2000, 5)
    assert job.eval.every_steps == 250 and training.parallelism.zero_stage == 1
    model = job.model
    assert (model.layers, model.hidden, model.heads, model.vocab) == (48, 1600, 25, 50257)


def test_the_binary_at_an_absolute_path_under_srun_bash_c() -> None:
    """llm.c's fs multi-node script: ``srun -l -u bash -c "$binary_path -b 64 ..."``."""
    with working_directory(LLM_C):
        (job,) = assemble([Path("scripts/multi_node/run_gpt2_124M_fs.sbatch")])
    assert (job.training.micro_batch_size, job.training.global_batch_size) == (64, 2048)
    assert (job.checkpoint.every_steps, job.resources.world_size) == (5000, 16)


def test_mpirun_hosts_are_the_nodes() -> None:
    with working_directory(LLM_C):
        (job,) = assemble([Path("scripts/multi_node/run_gpt2_124M_mpi.sh")])
    assert (job.resources.nodes, job.resources.gpus_per_node, job.resources.world_size) == (
        2, 8, 16
    )  # fmt: skip


def test_the_pytorch_reference_s_flags_under_torchrun() -> None:
    with working_directory(LLM_C):
        (job,) = assemble([Path("scripts/pyrun_gpt2_124M.sh")])
    training = job.training
    assert (training.micro_batch_size, training.global_batch_size) == (32, 512)
    assert (training.grad_accum_steps, training.max_steps) == (2, 18865)
    assert (training.precision, training.compile, training.parallelism.zero_stage) == (
        "bf16", True, 1
    )  # fmt: skip
    assert [f.name for f in job.features] == []  # --flash 1 is PyTorch's SDPA


def test_another_program_s_single_letter_flags_are_not_read(tmp_path: Path) -> None:
    job = job_of(tmp_path, "#!/bin/bash\nmpirun -np 8 python train.py -b 64 -t 1024 -n 5\n")
    assert job.training.micro_batch_size is None and job.checkpoint.every_steps is None


@pytest.mark.parametrize(
    ("descriptor", "dims"),
    [
        ("d12", (12, 768, 12)),
        ("gpt2:d24", (24, 1024, 16)),
        ("gpt3:c2048", (24, 2048, 16)),
        ("gpt2-xl", (48, 1600, 25)),
        ("d13", None),  # no such depth: llm.c exits
        ("log/model_00015000.bin", None),  # a checkpoint file
    ],
)
def test_model_descriptors(descriptor: str, dims: tuple[int, int, int] | None) -> None:
    found = llm_c.dimensions(descriptor)
    assert (None if found is None else (found["layers"], found["hidden"], found["heads"])) == dims


def test_a_token_count_the_length_does_not_divide_states_no_batch() -> None:
    where = Location(file="run.sh", line=1, column=1)
    assert llm_c.together({"-d": ("1000", where), "-t": ("1024", where)}) == []
