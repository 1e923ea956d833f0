"""Real git repositories made by the tests, and a real PostgreSQL started for them.

PostgreSQL is Debian's package (``apt-get install postgresql``, which .ci/run's machine has
or can install): initdb in a temporary folder, ``pg_ctl start`` on 127.0.0.1 at a free port,
stopped after the session. Where it cannot be found or installed the tests that need it skip
and say why.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

SLURM = """#!/bin/bash
#SBATCH --job-name=sft
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=24:00:00
# trainlint: {tags}
torchrun --standalone --nproc_per_node=8 train.py --config configs/sft.yaml \\
    --output_dir {output} --seed {seed}
"""
SFT = """model_name_or_path: meta-llama/Meta-Llama-3-8B
max_seq_length: 2048
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
max_steps: {steps}
bf16: true
logging_steps: 10
save_steps: 500
save_total_limit: 2
dataloader_num_workers: 4
"""


def git(folder: Path, *args: str, date: str = "2026-12-01T10:00:00+00:00") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    done = subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                          text=True, env=env)  # fmt: skip
    return done.stdout.strip()


def write_job(folder: Path, tags: str, steps: int = 2000, output: str = "/ckpt/a", seed: int = 1
              ) -> None:  # fmt: skip
    (folder / "configs").mkdir(parents=True, exist_ok=True)
    (folder / "train.slurm").write_text(SLURM.format(tags=tags, output=output, seed=seed))
    (folder / "configs" / "sft.yaml").write_text(SFT.format(steps=steps))


def make_repo(root: Path, name: str, tags: str, **job: object) -> Path:
    """A repository ``org/<name>`` with one SFT job, committed on 2026-12-01."""
    folder = root / name
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "remote", "add", "origin", f"https://github.com/org/{name}.git")
    write_job(folder, tags, **job)  # type: ignore[arg-type]
    commit(folder, "a job")
    return folder


def commit(folder: Path, message: str, date: str = "2026-12-01T10:00:00+00:00") -> str:
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", message, date=date)
    return git(folder, "rev-parse", "HEAD")


@pytest.fixture
def three_repos(tmp_path: Path) -> list[Path]:
    """nlp and research run the same experiment under other tags, outputs and seeds; vision
    runs another (twice as many steps)."""
    return [
        make_repo(tmp_path, "nlp", "tag.team=nlp tag.project=chat", output="/ckpt/nlp", seed=1),
        make_repo(
            tmp_path, "research", "tag.team=research tag.project=eval", output="/ckpt/r", seed=7
        ),
        make_repo(tmp_path, "vision", "tag.team=vision tag.project=vlm", steps=4000),
    ]


def _postgres_bin() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return versions[-1].parent if versions else None


def _install_postgres() -> Path | None:
    """Debian's package, when this is a Debian machine run as root (CI's)."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None
    for command in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "postgresql"]):  # fmt: skip
        if subprocess.run(command, capture_output=True, env={**os.environ,
                          "DEBIAN_FRONTEND": "noninteractive"}).returncode:  # fmt: skip
            return None
    return _postgres_bin()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of its own on 127.0.0.1 for the session, with an empty database.
    Its folder is made under /tmp directly: pytest's own temporary folders are private to
    root, and the server runs as the postgres user."""
    binaries = _postgres_bin() or _install_postgres()
    if binaries is None:
        pytest.skip("PostgreSQL is not installed and cannot be installed here (apt-get, root)")
    data = Path(tempfile.mkdtemp(prefix="trainlint-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run as Debian's postgres user
        shutil.chown(data, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    port = _free_port()

    def pg(*args: str) -> None:
        subprocess.run([*run_as, *args], check=True, capture_output=True)

    pg(str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1"
    pg(str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
       str(data / "log"), "start")  # fmt: skip
    try:
        pg(
            str(binaries / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-U",
            "postgres",
            "scans",
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/scans"
    finally:
        pg(str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def fresh_postgres(postgres_url: str) -> str:
    """The session's server with the scan tables dropped: each test starts empty."""
    import sqlalchemy as sa

    engine = sa.create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as connection:
        for table in ("findings", "jobs", "scans", "repositories", "alembic_version"):
            connection.execute(sa.text(f"DROP TABLE IF EXISTS {table} CASCADE"))
    engine.dispose()
    return postgres_url
