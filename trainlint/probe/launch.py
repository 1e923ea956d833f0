"""Run a probe command (``torchrun ...`` or a job's own launch line) with a hard timeout.

The command runs in its own session (process group), so a timeout or an interrupt ends every
process it started — torchrun's workers, a data loader's workers — and none is left orphaned:
SIGTERM to the group, then SIGKILL after a grace period. Output goes to a log file (never held
in memory), and the tail of it comes back for error messages. Nothing here imports torch.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

GRACE_S = 10.0
TAIL_BYTES = 8_000


@dataclass(frozen=True)
class RunLength:
    """How long one probe run goes at each world size: warm-up steps (not measured), measured
    steps, and the time limit of the whole run."""

    warmup: int
    steps: int
    timeout_s: float


@dataclass(frozen=True)
class Completed:
    """How a probe command ended: its exit code (None when killed on timeout), whether the
    timeout ended it, the wall time, and the log it wrote."""

    returncode: int | None
    timed_out: bool
    seconds: float
    log: Path

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def tail(self, limit: int = TAIL_BYTES) -> str:
        """The last ``limit`` bytes of the log, for an error message."""
        try:
            with self.log.open("rb") as handle:
                handle.seek(max(0, self.log.stat().st_size - limit))
                return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""


def run(  # noqa: PLR0913 - subprocess.run's shape: the command, then one keyword per setting
    command: Sequence[str],
    *,
    log: Path,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    grace_s: float = GRACE_S,
) -> Completed:
    """Run ``command`` (no shell) to completion or until ``timeout_s``, then end its whole
    process group; ``env`` is added to the current environment."""
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with log.open("wb") as output:
        process = subprocess.Popen(
            list(command),
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            start_new_session=True,
        )
        try:
            returncode: int | None = process.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            returncode, timed_out = None, True
        except BaseException:  # KeyboardInterrupt: never leave the workers running
            _end_group(process, grace_s)
            raise
        _end_group(process, grace_s)
    return Completed(returncode, timed_out, time.monotonic() - start, log)


def _end_group(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the process group, wait up to ``grace_s``, then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if process.poll() is not None and not _group_alive(process.pid):
                return
            time.sleep(0.05)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
