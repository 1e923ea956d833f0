"""The pre-commit hook, run for real with ``pre-commit try-repo`` in a scratch git repository.

pre-commit installs trainlint with a plain (non-editable) ``pip install`` into a fresh virtual
environment, so this also proves the wheel carries the builtin policies and schemas.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
def test_try_repo_runs_the_hook_on_a_training_repo(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "llama3-sft", project)
    git(project, "init", "-q")
    git(project, "add", ".")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "try-repo",
            str(REPO),
            "trainlint",
            "--all-files",
            "--verbose",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "train.slurm:20:5: TL201 [warning]" in output
    assert "configs/sft.yaml:17:1: TL301" in output
    assert "Traceback" not in output

    # Staging only the SLURM script is enough to run the hook (files regex, not identify tags).
    script = project / "train.slurm"
    script.write_text(script.read_text().replace("--save_steps 10", "--save_steps 5"))
    git(project, "add", "train.slurm")
    staged = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "trainlint"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert staged.returncode == 1, staged.stdout + staged.stderr
    assert "train.slurm:20:5: TL201" in staged.stdout


def test_the_hook_runs_for_every_extension_the_formats_read() -> None:
    """The hook's ``files:`` is derived from the format registry: the suffix of each format's
    example files (the docs' list), and discovery's candidates (the repo config is .toml)."""
    import re

    import yaml

    from trainlint.discover import CANDIDATE_SUFFIXES
    from trainlint.sources import all_sources

    named = {Path(example.split()[0]).suffix for f in all_sources() for example in f.examples}
    owned = {suffix.lower() for suffix in named if suffix}
    assert owned <= CANDIDATE_SUFFIXES  # discovery offers every format its own files
    words = sorted(suffix.lstrip(".") for suffix in owned | CANDIDATE_SUFFIXES)
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["files"] == rf"(?i)\.({'|'.join(words)})$"
    files = re.compile(hook["files"])
    for name in ("train.py", "torchtitan/llama3_8b.toml", "Train.YAML", "run.sbatch"):
        assert files.search(name), name
    assert not files.search("README.md")


def test_the_hook_passes_the_changed_files_to_check_changed() -> None:
    import yaml

    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["entry"] == "trainlint check --changed"
    assert hook["pass_filenames"] is True


def test_a_changed_member_file_checks_the_job_that_includes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pre-commit passes a member config alone: its launch script's job is checked (read
    from the whole repository), the job that does not include it is not."""
    from click.testing import CliRunner

    from trainlint import cli

    project = tmp_path / "project"
    for name in ("llama3-sft", "gpt2-finetune"):
        shutil.copytree(EXAMPLES / name, project / name)
    git(project, "init", "-q")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TRAINLINT_NO_CACHE")  # as a user runs it: with the cache
    monkeypatch.chdir(project)
    runner = CliRunner()
    everything = runner.invoke(cli.main, ["check", "--format", "json", "."]).output
    member = runner.invoke(cli.main, ["check", "--changed", "llama3-sft/configs/sft.yaml"])
    assert member.exit_code == 1, member.output
    assert "llama3-sft/train.slurm:20:5: TL201" in member.output  # the job that includes it
    assert "llama3-sft/configs/sft.yaml:17:1: TL301" in member.output
    assert "gpt2-finetune/" not in member.output and "gpt2-finetune/" in everything
    other = runner.invoke(cli.main, ["check", "--changed", "gpt2-finetune/run.sh"])
    assert "gpt2-finetune/run.sh" in other.output and "llama3-sft/" not in other.output
    unrelated = project / "notes.yaml"
    unrelated.write_text("title: notes\n")
    quiet = runner.invoke(cli.main, ["check", "--changed", "notes.yaml"])
    assert quiet.exit_code == 0, quiet.output  # a file no job includes: nothing to report


def test_changed_never_writes_a_baseline_of_some_jobs(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from trainlint import cli

    args = ["check", "--changed", "--write-baseline", str(tmp_path / "b.json"), str(EXAMPLES)]
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 2
    assert "--changed cannot be combined with --write-baseline" in result.output
    assert not (tmp_path / "b.json").exists()
