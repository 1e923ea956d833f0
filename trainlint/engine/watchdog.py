"""A time limit on Rego evaluation for packs that trainlint does not ship.

Neither regorus nor regopy can interrupt an evaluation, and both hold the GIL while they run, so
a rule that never ends (a huge ``numbers.range`` comprehension, a walk of a huge value) would
hang the run, and no thread can stop it. Rules of a pack other than the builtin one therefore
run in a forked worker process that already holds the compiled engine: each job is sent over a
pipe, and a worker that does not answer within ``EVAL_TIMEOUT_S`` is killed and the job gets a
PolicyError; the next job forks a fresh worker. A worker that dies (a crash of the native
engine) is a PolicyError too. The builtin rules are trusted and evaluated in process.

Where ``os.fork`` does not exist (Windows) evaluation is not bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import struct
import threading
import time
from typing import Any, Protocol

from trainlint.errors import PolicyError

EVAL_TIMEOUT_S = 20.0
"""Seconds one job's evaluation (or the pack's check on load) may take in a guarded engine."""

_HEADER = struct.Struct("!Q")


class Inner(Protocol):
    """A backend engine with a deferred load check (see ``RegorusEngine.check``)."""

    name: str

    def check(self) -> None: ...

    def evaluate(self, job_input: dict[str, Any]) -> dict[str, list[dict[str, Any]]]: ...

    def query(self, job_input: dict[str, Any], query: str) -> Any: ...


def needs_guard(modules: dict[str, str]) -> bool:
    """True unless every module is one shipped with trainlint (or workers cannot be forked)."""
    return hasattr(os, "fork") and not shipped(modules)


def shipped(modules: dict[str, str]) -> bool:
    """Whether every module is one shipped with trainlint (compared by source text): code the
    test suite has compiled and evaluated, so it needs neither a time limit nor a load check."""
    from trainlint.packs import load_builtin_pack

    return set(modules.values()) <= set(load_builtin_pack().modules.values())


class GuardedEngine:
    """``inner``'s evaluations, each bounded by ``timeout`` seconds in a worker process."""

    def __init__(self, inner: Inner, timeout: float | None = None) -> None:
        self.name = inner.name
        self._inner = inner
        self._timeout = EVAL_TIMEOUT_S if timeout is None else timeout
        self._lock = threading.Lock()
        self._worker: tuple[int, int, int] | None = None  # pid, write fd, read fd
        self._call("check", {}, "")

    def evaluate(self, job_input: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        result: dict[str, list[dict[str, Any]]] = self._call("evaluate", job_input, "")
        return result

    def query(self, job_input: dict[str, Any], query: str) -> Any:
        return self._call("query", job_input, query)

    def close(self) -> None:
        """Stop the worker (it also exits by itself when this process closes the pipe)."""
        with self._lock:
            self._stop()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: nothing to clean up with
            self._stop()

    def _call(self, method: str, job_input: dict[str, Any], query: str) -> Any:
        with self._lock:
            _, write_fd, read_fd = self._worker or self._start()
            deadline = time.monotonic() + self._timeout
            try:
                _send(write_fd, json.dumps([method, job_input, query]).encode())
                reply = json.loads(_receive(read_fd, deadline))
            except TimeoutError:
                self._stop()
                raise PolicyError(
                    f"{self.name}: rule evaluation did not finish within {self._timeout:g} s "
                    "(a rule of a pack not shipped with trainlint loops or explodes); stopped"
                ) from None
            except (OSError, EOFError, ValueError):
                self._stop()
                raise PolicyError(f"{self.name}: the evaluation process died") from None
            if reply[0] == "error":
                raise PolicyError(str(reply[1]))
            return reply[1]

    def _start(self) -> tuple[int, int, int]:
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: serve until the pipe closes, never return into the caller
            code = 0
            try:
                os.close(to_child_w)
                os.close(to_parent_r)
                self._serve(to_child_r, to_parent_w)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(to_child_r)
        os.close(to_parent_w)
        self._worker = (pid, to_child_w, to_parent_r)
        return self._worker

    def _serve(self, read_fd: int, write_fd: int) -> None:
        while True:
            try:
                method, job_input, query = json.loads(_receive(read_fd, None))
            except EOFError:
                return
            try:
                value: Any = None
                if method == "check":
                    self._inner.check()
                elif method == "query":
                    value = self._inner.query(job_input, query)
                else:
                    value = self._inner.evaluate(job_input)
                reply = ["ok", value]
            except PolicyError as exc:
                reply = ["error", str(exc)]
            _send(write_fd, json.dumps(reply).encode())

    def _stop(self) -> None:
        if self._worker is None:
            return
        pid, write_fd, read_fd = self._worker
        self._worker = None
        for fd in (write_fd, read_fd):
            os.close(fd)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _send(fd: int, payload: bytes) -> None:
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


def _receive(fd: int, deadline: float | None) -> bytes:
    header = _read(fd, _HEADER.size, deadline)
    return _read(fd, _HEADER.unpack(header)[0], deadline)


def _read(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
