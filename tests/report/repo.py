"""A one-job git repository for the reporters' CLI tests (no user or system git config)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

LAUNCH = "torchrun --nproc_per_node=8 train.py --logging_steps 1 --max_steps 5000"
QUIET = LAUNCH.replace("--logging_steps 1 ", "--logging_steps 100 ")


def slurm_job(root: Path) -> Path:
    """An 8-GPU SLURM job that logs every step (TL301, info) among other findings."""
    job = root / "train.slurm"
    job.write_text(f"#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=02:00:00\n{LAUNCH}\n")
    return job


def git(repo: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull}  # fmt: skip
    options = ["-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    done = subprocess.run(["git", *options, *args], cwd=repo, env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def job_repo_with_a_change(root: Path, remote: str | None = None) -> str:
    """The job committed on branch ``base`` logging every 100 steps, then every step in a
    second commit (HEAD): one new finding, TL301 at info."""
    job = slurm_job(root)
    job.write_text(job.read_text().replace(LAUNCH, QUIET))
    git(root, "init", "-q")
    if remote:
        git(root, "remote", "add", "origin", remote)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "branch", "base")
    job.write_text(job.read_text().replace(QUIET, LAUNCH))
    git(root, "commit", "-q", "-am", "log every step")
    return git(root, "rev-parse", "HEAD")
