"""``trainlint check --watch``: a real process, a real edit, the second report read back.

Bounded by timeouts on reading, never by a timed assertion: the test waits for the line that
ends each report (``WATCHING``) and fails only if it never comes.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.conftest import EXAMPLES, REPO
from trainlint.cli.watching import WATCHING


def next_report(lines: queue.Queue[str | None]) -> str:
    """The output up to the next end-of-report line (stdout and stderr, in order)."""
    report = []
    while (line := lines.get(timeout=120)) is not None and line.rstrip() != WATCHING:
        report.append(line)
    assert line is not None, "the process ended: " + "".join(report)
    return "".join(report)


def test_watch_checks_again_after_an_edit(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "llama3-sft", project)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("TRAINLINT_NO_CACHE", None)  # with the cache, whose writes must not re-trigger
    command = [sys.executable, "-m", "trainlint", "check", "--watch", str(project)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env, cwd=REPO)  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        first = next_report(lines)
        assert "configs/sft.yaml:17:1: TL301" in first  # logging every step
        config = project / "configs" / "sft.yaml"
        config.write_text(config.read_text().replace("logging_steps: 1", "logging_steps: 50"))
        second = next_report(lines)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    assert "TL301" not in second
    assert second.replace("TL301", "") != first  # a new report, not the old one again
    assert process.returncode in (0, 130)  # Ctrl-C while watching, or during a re-check
