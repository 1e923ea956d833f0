"""The probe's process runner: timeouts end the whole process group, output goes to a log."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from trainlint.probe.launch import run

# A parent that starts a grandchild (like torchrun starting workers) and prints its pid.
PARENT = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print('child', child.pid, flush=True)\n"
    "time.sleep(60)\n"
)


def test_success_and_log(tmp_path: Path) -> None:
    done = run([sys.executable, "-c", "print('hello')"], log=tmp_path / "a.log", timeout_s=30)
    assert done.ok and done.returncode == 0 and "hello" in done.tail()


def test_failure_keeps_the_exit_code(tmp_path: Path) -> None:
    done = run([sys.executable, "-c", "raise SystemExit(3)"], log=tmp_path / "b.log", timeout_s=30)
    assert done.returncode == 3 and not done.ok and not done.timed_out


@pytest.mark.slow  # waits out a 3 s timeout and its grace period
def test_timeout_ends_the_grandchildren_too(tmp_path: Path) -> None:
    start = time.monotonic()
    done = run([sys.executable, "-c", PARENT], log=tmp_path / "c.log", timeout_s=3, grace_s=2)
    assert done.timed_out and done.returncode is None
    assert time.monotonic() - start < 15
    child = int(done.tail().split("child", 1)[1].split()[0])
    assert not _running(child), "the grandchild outlived the timeout"


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped by init."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z" and os.path.exists(f"/proc/{pid}")
