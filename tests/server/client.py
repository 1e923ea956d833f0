"""A small LSP client for the tests: ``python -m trainlint server`` in a subprocess, spoken to
in JSON-RPC with Content-Length framing, as an editor would. Every wait is bounded (the
server is ended if it hangs); nothing is timed."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from tests.conftest import REPO

WAIT_S = 60.0
"""The most a test waits for one message: a bound on a hang, not a timing assertion."""

Message = dict[str, Any]


class Client:
    """One server process and the messages it sent, in order."""

    def __init__(self, cwd: Path) -> None:
        inherited = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *inherited])}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "trainlint", "server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
            env=env,
        )  # fmt: skip
        self.inbox: queue.Queue[Message | None] = queue.Queue()
        self.seen: list[Message] = []
        self.next_id = 0
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = 0
            while (header := stream.readline()) not in (b"\r\n", b""):
                name, _, value = header.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not header:
                self.inbox.put(None)
                return
            self.inbox.put(json.loads(stream.read(length)))

    def send(self, message: Message) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its response (the result; an error fails)."""
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        reply = self.wait(lambda m: m.get("id") == ident and "method" not in m)
        assert "error" not in reply, reply["error"]
        return reply.get("result")

    def wait(self, wanted: Callable[[Message], bool]) -> Message:
        """The first message, already seen or to come, that ``wanted`` accepts; consumed."""
        for index, message in enumerate(self.seen):
            if wanted(message):
                return self.seen.pop(index)
        while True:
            try:
                arrived = self.inbox.get(timeout=WAIT_S)
            except queue.Empty:
                raise AssertionError(f"no such message within {WAIT_S} s: {self.seen}") from None
            if arrived is None:
                raise AssertionError(f"the server exited: {self._stderr()}")
            if wanted(arrived):
                return arrived
            self.seen.append(arrived)

    def diagnostics(self, uri: str) -> list[Message]:
        """The next diagnostics published for ``uri``."""
        message = self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            )
        )
        found: list[Message] = message["params"]["diagnostics"]
        return found

    def settled(self, uri: str, done: Callable[[set[str]], bool]) -> set[str]:
        """The rule codes of the first diagnostics for ``uri``, published from now on, that
        satisfy ``done`` (earlier checks' diagnostics may still be on their way)."""
        while not done(codes := {d["code"] for d in self.diagnostics(uri)}):
            pass
        return codes

    def close(self) -> int:
        """shutdown, exit, and the exit status (the process is killed if it hangs)."""
        try:
            assert self.request("shutdown", None) is None
            self.notify("exit", None)
            return self.process.wait(timeout=WAIT_S)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    def _stderr(self) -> str:
        self.process.kill()
        _, err = self.process.communicate()
        return err.decode(errors="replace")

    def start(self, *folders: Path) -> None:
        """initialize with ``folders`` as the workspace (none: no root), then initialized."""
        named = [{"uri": folder.as_uri(), "name": folder.name} for folder in folders]
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folders[0].as_uri() if folders else None,
                "workspaceFolders": named or None,
                "capabilities": {},
            },
        )
        self.notify("initialized", {})

    def open(self, path: Path, text: str | None = None) -> str:
        """didOpen of ``path`` (its text on disk unless ``text``); its URI."""
        uri = path.as_uri()
        shown = path.read_text() if text is None else text
        document = {"uri": uri, "languageId": "plaintext", "version": 1, "text": shown}
        self.notify("textDocument/didOpen", {"textDocument": document})
        return uri
