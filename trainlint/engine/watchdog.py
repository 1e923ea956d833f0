"""Policy code trainlint does not ship runs confined: in a forked worker, bounded in time and
memory, with no environment and no terminal.

Neither regorus nor regopy can interrupt a compilation or an evaluation, both hold the GIL while
they run, and neither bounds its memory: 26 levels of nested array literals hang regorus's
parser, ``numbers.range(1, 30000000)`` takes regopy past 13 GB. So a pack with any module that
trainlint does not ship is compiled, checked and evaluated in a worker process (``Worker``):

- **time**: the worker must compile the pack within ``EVAL_TIMEOUT_S`` and answer each call
  (one job, one query, one Rego test) within it again; past that it is killed, the call is a
  PolicyError, and the next call forks a fresh worker, which compiles the pack again;
- **memory**: the worker's address space may grow by ``EVAL_MEMORY_BYTES`` past what it
  inherits (``RLIMIT_AS``, Linux); an allocation beyond fails, the engine aborts, and the call
  is a PolicyError;
- **environment**: the worker clears its environment before it compiles anything (regopy's
  ``opa.runtime().env`` reads the live process environment); ``capabilities`` also refuses
  the modules that would read it or reach the network, before they are compiled;
- **output**: its stdin, stdout and stderr are /dev/null (regopy prints Rego ``print`` on
  stdout, which would land in a JSON report or a GitHub workflow command);
- **lifetime**: it dies with its parent (``PR_SET_PDEATHSIG``, Linux) and exits when the pipe
  closes; a reply is at most ``MAX_REPLY_BYTES``.

The builtin rules are trusted (the test suite compiles and evaluates them) and run in process.
Where ``os.fork`` does not exist (Windows) nothing is bounded; the capability check still runs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, Protocol, TypeVar

from trainlint.engine.capabilities import refuse_denied_calls
from trainlint.engine.collect import refuse_reserved
from trainlint.errors import PolicyError
from trainlint.packs import module_package

EVAL_TIMEOUT_S = 20.0
"""Seconds a confined worker may take to compile the pack, and then to answer each call."""

EVAL_MEMORY_BYTES = 2 * 1024**3
"""How far a confined worker's address space may grow past what it inherits from trainlint."""

MAX_REPLY_BYTES = 64 * 1024**2
"""The largest answer read from a worker (a job's findings are kilobytes)."""

_HEADER = struct.Struct("!Q")
_log = logging.getLogger("trainlint.engine")
_MEMORY_EXIT = 86  # the worker's exit status after a MemoryError in Python


class Inner(Protocol):
    """A compiled engine, as a backend's constructor returns it."""

    name: str

    def evaluate(self, job_input: dict[str, Any]) -> dict[str, list[dict[str, Any]]]: ...

    def query(self, job_input: dict[str, Any], query: str) -> Any: ...


EngineT = TypeVar("EngineT", bound=Inner)


def compile_confined(
    name: str, modules: dict[str, str], build: Callable[[bool], EngineT]
) -> EngineT | GuardedEngine:
    """The pack compiled by ``build(check)``: in process when trainlint ships every module
    (no load check: the suite runs them), else capability-checked, compiled and checked in a
    confined worker (in process where workers cannot be forked)."""
    if shipped(modules):
        return build(False)

    def untrusted() -> EngineT:
        refuse_denied_calls(modules, trusted=shipped_sources())
        refuse_reserved({file: module_package(source) or "" for file, source in modules.items()})
        return build(True)

    if not hasattr(os, "fork"):
        return untrusted()
    return GuardedEngine(name, untrusted)


def shipped(modules: dict[str, str]) -> bool:
    """Whether every module is one shipped with trainlint (compared by source text): code the
    test suite has compiled and evaluated, so it needs neither limits nor a load check."""
    return set(modules.values()) <= shipped_sources()


def shipped_sources() -> frozenset[str]:
    """The text of every module and test of the builtin pack."""
    from trainlint.packs import load_builtin_pack

    pack = load_builtin_pack()
    return frozenset([*pack.modules.values(), *pack.tests.values()])


class Worker:
    """An object built by ``build`` inside a confined worker process; ``call`` runs one of its
    methods there, each call bounded by ``timeout`` seconds (default ``EVAL_TIMEOUT_S``).

    Arguments and results cross a pipe as JSON. The worker is started (and ``build`` run, under
    the same time limit) by the constructor, and again by the first call after one was killed.
    """

    def __init__(self, name: str, build: Callable[[], Any], timeout: float | None = None) -> None:
        self.name = name
        self._build = build
        self._timeout = EVAL_TIMEOUT_S if timeout is None else timeout
        self._lock = threading.Lock()
        self._worker: tuple[int, int, int] | None = None  # pid, write fd, read fd
        with self._lock:
            self._start()

    def call(self, method: str, *args: Any) -> Any:
        """``method(*args)`` on the built object, in the worker; PolicyError past the limits."""
        with self._lock:
            _, write_fd, read_fd = self._worker or self._start()
            try:
                _send(write_fd, json.dumps([method, list(args)]).encode())
            except OSError:
                self._fail("evaluating")
            reply = self._reply(read_fd, "evaluating")
            for notice in reply[2] if len(reply) > 2 and isinstance(reply[2], list) else []:
                _log.warning("%s", notice)  # said in the worker, whose stderr is /dev/null
            if reply[0] == "error":
                raise PolicyError(str(reply[1]))
            return reply[1]

    def close(self) -> None:
        """Stop the worker (it also exits by itself when this process closes the pipe)."""
        with self._lock:
            self._stop()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: nothing to clean up with
            self._stop()

    def _start(self) -> tuple[int, int, int]:
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        # Linux signals a worker when the *thread* that forked it ends: only the main thread
        # lives as long as the process.
        main = threading.current_thread() is threading.main_thread()
        parent = os.getpid() if main else None
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the caller
            os.close(to_child_w)
            os.close(to_parent_r)
            _run_worker(self._build, to_child_r, to_parent_w, parent)
        os.close(to_child_r)
        os.close(to_parent_w)
        self._worker = (pid, to_child_w, to_parent_r)
        reply = self._reply(to_parent_r, "compiling the pack")
        if reply[0] == "error":
            self._stop()
            raise PolicyError(str(reply[1]))
        return self._worker

    def _reply(self, read_fd: int, doing: str) -> Any:
        """The worker's next message; PolicyError (the worker stopped) when it is late or dead."""
        deadline = time.monotonic() + self._timeout
        try:
            reply = json.loads(_receive(read_fd, deadline, MAX_REPLY_BYTES))
        except TimeoutError:
            self._stop()
            what = "compiling the pack" if doing.startswith("compiling") else "rule evaluation"
            raise PolicyError(
                f"{self.name}: {what} did not finish within {self._timeout:g} s (a module of a "
                "pack not shipped with trainlint loops or explodes); stopped"
            ) from None
        except _TooBig:
            self._stop()
            raise PolicyError(
                f"{self.name}: the evaluation answered more than {MAX_REPLY_BYTES} bytes; stopped"
            ) from None
        except (OSError, EOFError, ValueError, RecursionError):
            self._fail(doing)
        if not isinstance(reply, list) or not reply:
            self._fail(doing)
        return reply

    def _fail(self, doing: str) -> NoReturn:
        """Reap a dead (or garbled) worker and say why it died."""
        status = self._stop()
        raise PolicyError(f"{self.name}: the evaluation process died {_death(status, doing)}")

    def _stop(self) -> int | None:
        """Kill and reap the worker; its wait status (None when there was none)."""
        if self._worker is None:
            return None
        pid, write_fd, read_fd = self._worker
        self._worker = None
        for fd in (write_fd, read_fd):
            os.close(fd)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]


class GuardedEngine(Worker):
    """An engine compiled and evaluated in a confined ``Worker``."""

    def evaluate(self, job_input: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        result: dict[str, list[dict[str, Any]]] = self.call("evaluate", job_input)
        return result

    def query(self, job_input: dict[str, Any], query: str) -> Any:
        return self.call("query", job_input, query)


def _death(status: int | None, doing: str) -> str:
    """Why a worker died, from its wait status (it was killed when it broke the protocol)."""
    limit = f"{EVAL_MEMORY_BYTES // 1024**2} MiB"
    exited = status is not None and os.WIFEXITED(status)
    if exited and os.WEXITSTATUS(status or 0) == _MEMORY_EXIT:
        return f"while {doing}: it ran out of its {limit} memory limit"
    if status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
        name = signal.Signals(os.WTERMSIG(status)).name
        return f"while {doing} ({name}): past its {limit} memory limit, or a native engine crash"
    return f"while {doing}"


def _run_worker(build: Callable[[], Any], read_fd: int, write_fd: int, parent: int | None) -> None:
    """The worker's whole life: confine, build, serve calls until the pipe closes, exit."""
    code = 0
    try:
        _confine(parent)
        try:
            target = build()
            _send(write_fd, json.dumps(["ready"]).encode())
        except PolicyError as exc:
            _send(write_fd, json.dumps(["error", str(exc)]).encode())
            return
        _serve(target, read_fd, write_fd)
    except MemoryError:
        code = _MEMORY_EXIT
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _serve(target: Any, read_fd: int, write_fd: int) -> None:
    notices = _Collected()
    _log.addHandler(notices)
    _log.propagate = False
    while True:
        try:
            method, args = json.loads(_receive(read_fd, None, None))
        except EOFError:
            return
        try:
            reply = ["ok", getattr(target, method)(*args)]
        except PolicyError as exc:
            reply = ["error", str(exc)]
        except RecursionError:
            reply = ["error", "the evaluation produced a value nested too deeply to read"]
        _send(write_fd, json.dumps([*reply, notices.take()]).encode())


class _Collected(logging.Handler):
    """The worker's notices (``trainlint.engine`` warnings), sent with each reply for the
    parent to log: the worker's own stderr is /dev/null."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self._messages.append(record.getMessage())

    def take(self) -> list[str]:
        taken, self._messages = self._messages, []
        return taken


def _confine(parent: int | None) -> None:
    """No environment, no terminal, bounded memory, no life past the parent's."""
    import faulthandler

    faulthandler.disable()  # it holds its own copy of stderr; a crash here is reported above
    os.environ.clear()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    _die_with(parent)
    _limit_memory(EVAL_MEMORY_BYTES)


def _die_with(parent: int | None) -> None:
    """Ask Linux to kill this worker when its parent dies (a hung rule must not outlive it);
    ``parent`` is None when a thread that may end first forked it (the pipe still ends it)."""
    if parent is None or sys.platform != "linux":
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _limit_memory(budget: int) -> None:
    """``RLIMIT_AS`` at the inherited address space plus ``budget`` (Linux, where it is read)."""
    size = _address_space()
    if size is None:
        return
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (size + budget, size + budget))


def _address_space() -> int | None:
    """This process's virtual memory size in bytes (``VmSize``), None where /proc lacks it."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            lines: Iterable[str] = status.read().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return None


class _TooBig(Exception):
    """A message longer than ``MAX_REPLY_BYTES``."""


def _send(fd: int, payload: bytes) -> None:
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


def _receive(fd: int, deadline: float | None, limit: int | None) -> bytes:
    """One message; ``_TooBig`` before reading one longer than ``limit``."""
    header = _read(fd, _HEADER.size, deadline)
    size = _HEADER.unpack(header)[0]
    if limit is not None and size > limit:
        raise _TooBig
    return _read(fd, size, deadline)


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
