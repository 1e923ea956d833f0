"""A stand-in OPA server for the tests: OPA's REST Data API over the embedded regorus engine.

``POST /v1/data/<path>`` with ``{"input": ...}`` answers ``{"result": <value>}``, or ``{}``
when the document is undefined, as OPA does (docs/docs/rest-api.md); an evaluation error is a
500 with OPA's ``{"code", "message"}`` error body. Requests are recorded (path, headers) so tests
can see what the client sent. It listens on 127.0.0.1 only, in a daemon thread, and serves
one request at a time.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import regorus

from trainlint.packs import Pack


@dataclass
class Behaviour:
    """What the server does instead of answering, for the failure tests."""

    status: int | None = None  # answer this status with an OPA error body
    body: bytes | None = None  # answer 200 with this raw body
    delay_s: float = 0.0
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)


class OpaServer:
    """Answers from a regorus engine, which must live on one thread: it is built by the
    serving thread on the first request, and the server handles one request at a time."""

    def __init__(self, pack: Pack) -> None:
        self.pack = pack
        self.engine: Any = None
        self.behaviour = Behaviour()

    def _engine(self) -> Any:
        if self.engine is None:
            self.engine = regorus.Engine()
            for file, source in self.pack.modules.items():
                self.engine.add_policy(f"{self.pack.name}/{file}", source)
            self.engine.add_data_json(json.dumps(self.pack.data))
        return self.engine

    def answer(self, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        if not path.startswith("/v1/data/"):
            return 404, {"code": "resource_not_found", "message": f"no route {path}"}
        query = "data." + ".".join(p for p in path.removeprefix("/v1/data/").split("/") if p)
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError as exc:
            return 400, {"code": "invalid_parameter", "message": f"body: {exc}"}
        try:
            engine = self._engine()
            engine.set_input_json(json.dumps(request.get("input")))
            rows = json.loads(engine.eval_query_as_json(query)).get("result") or []
        except (RuntimeError, ValueError) as exc:
            message = str(exc).split("Stack backtrace:")[0].strip()
            return 500, {"code": "internal_error", "message": message}
        return 200, ({"result": rows[0]["expressions"][0]["value"]} if rows else {})


@contextmanager
def serve(pack: Pack) -> Iterator[tuple[str, OpaServer]]:
    """``(base URL, server)`` of an OPA stand-in holding ``pack``, for the ``with`` block."""
    server = OpaServer(pack)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            behaviour = server.behaviour
            behaviour.requests.append((self.path, dict(self.headers.items())))
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if behaviour.delay_s:
                time.sleep(behaviour.delay_s)
            if behaviour.body is not None:
                self._send(200, behaviour.body)
                return
            if behaviour.status is not None:
                error = {"code": "internal_error", "message": "policy engine exploded"}
                self._send(behaviour.status, json.dumps(error).encode())
                return
            status, answer = server.answer(self.path, body)
            self._send(status, json.dumps(answer).encode())

        def _send(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up
                self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: pytest output stays readable."""

    httpd = HTTPServer(("127.0.0.1", 0), Handler)

    def run() -> None:
        httpd.serve_forever(0.05)  # shutdown() waits for the next poll (0.5 s by default)
        server.engine = None  # regorus must be dropped on the thread that made it

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", server
    finally:
        httpd.shutdown()
        thread.join()
        httpd.server_close()
