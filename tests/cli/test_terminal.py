"""What a terminal shows: the text report through rich, coloured, with every character kept."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO
from trainlint.cli.checking import print_text, text_console

# A finding whose file name and message hold brackets, as rich markup would read them.
LINE = (
    "runs/[exp-1]/train.yaml:3:5: TL201 [warning] save_steps [10] saves every [bold]10 steps "
    "(~$46 per run)\n"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("no_color", [False, True])
def test_a_terminal_shows_the_severity_and_every_bracket(
    monkeypatch: pytest.MonkeyPatch, no_color: bool
) -> None:
    """rich read ``[warning]`` (and ``[exp-1]``, ``[bold]``) as markup tags and dropped them,
    with or without NO_COLOR."""
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    screen = io.StringIO()
    print_text(text_console(file=screen, force_terminal=True), LINE)
    shown = screen.getvalue()
    assert ANSI.sub("", shown) == LINE
    severity = "\x1b[33m[warning]\x1b[0m"  # yellow, the theme's tl.warning
    assert (severity in shown) is not no_color


@pytest.mark.slow  # a subprocess; the forced-terminal test above covers the fast loop
def test_check_on_a_real_terminal_keeps_the_severity(tmp_path: Path) -> None:
    """End to end: ``trainlint check`` with its stdout a pseudo-terminal, as a user runs it."""
    shutil.copytree(EXAMPLES / "llama3-sft", tmp_path / "repo")
    primary, secondary = os.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    with subprocess.Popen(
        [sys.executable, "-m", "trainlint", "check", "repo"],
        cwd=tmp_path, stdout=secondary, stderr=subprocess.PIPE, env=env,
    ) as process:  # fmt: skip
        os.close(secondary)
        shown = _read_all(primary)
        assert process.wait() == 1
    os.close(primary)
    plain = ANSI.sub("", shown.replace("\r\n", "\n"))
    assert "repo/train.slurm:20:5: TL201 [warning] " in plain
    assert "\x1b[" in shown  # coloured: it was a terminal


def _read_all(fd: int) -> str:
    """Everything written to the pseudo-terminal until the writer closes it."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8")


def test_estimate_tables_keep_bracketed_job_ids(in_tmp: Path) -> None:
    """``trainlint estimate`` on a terminal: the job id (a file name) is not read as markup."""
    from rich.console import Console

    from trainlint.cli.inspecting import estimate_tables
    from trainlint.lint import load_jobs

    shutil.copytree(EXAMPLES / "llama3-sft", in_tmp / "[exp-1]")
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=200)
    for table in estimate_tables(load_jobs([Path("[exp-1]")])):
        console.print(table)
    assert "[exp-1]/train.slurm" in ANSI.sub("", screen.getvalue())
