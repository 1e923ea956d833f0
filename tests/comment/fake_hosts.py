"""A real HTTP server on 127.0.0.1 implementing the GitHub and GitLab endpoints trainlint uses.

In-memory comments with ids, pagination at a small page size (``Link`` headers; GitLab also
``X-Next-Page``), a log of every request (method, path, query, headers, JSON body), and failures
injected in order (``fail(502)``, ``fail(403, {"X-RateLimit-Remaining": "0", ...})``).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

GITHUB_PREFIX = "/repos/octo/models"
GITLAB_PREFIX = "/api/v4/projects/ml%2Ftraining/merge_requests/7"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class FakeHost:
    kind: str  # "github" or "gitlab"
    token: str
    page_size: int = 2
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    failures: list[tuple[int, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    next_id: int = 100
    url: str = ""

    def add(self, body: str, **extra: Any) -> int:
        self.next_id += 1
        self.comments[self.next_id] = {"id": self.next_id, "body": body, **extra}
        return self.next_id

    def fail(
        self, status: int, headers: dict[str, str] | None = None, times: int = 1, **body: Any
    ) -> None:
        self.failures.extend([(status, headers or {}, body or {"message": "injected"})] * times)

    def calls(self, *methods: str) -> list[Request]:
        return [r for r in self.requests if not methods or r.method in methods]

    def bodies(self) -> list[str]:
        return [c["body"] for c in self.comments.values()]


def serve(host: FakeHost) -> tuple[ThreadingHTTPServer, threading.Thread]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(host))
    port = server.server_address[1]
    host.url = f"http://127.0.0.1:{port}" + ("/api/v4" if host.kind == "gitlab" else "")
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    return server, thread


def _handler(host: FakeHost) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            with lock:
                query = parse_qs(parts.query)
                host.requests.append(
                    Request(self.command, parts.path, query, dict(self.headers), body)
                )
                if host.failures:
                    status, headers, payload = host.failures.pop(0)
                    return self._send(status, payload, headers)
                if not self._authorised():
                    return self._send(401, {"message": "Bad credentials"})
                route = _github if host.kind == "github" else _gitlab
                self._send(*route(host, self.command, parts.path, query, body))

        def _authorised(self) -> bool:
            if host.kind == "github":
                return self.headers.get("Authorization") == f"Bearer {host.token}"
            return host.token in (self.headers.get("PRIVATE-TOKEN"), self.headers.get("JOB-TOKEN"))

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    return Handler


Response = tuple[int, Any, dict[str, str]]


def _page(host: FakeHost, path: str, query: dict[str, list[str]], items: list[Any]) -> Response:
    size = min(int(query.get("per_page", ["30"])[0]), host.page_size)
    page = int(query.get("page", ["1"])[0])
    chunk = items[(page - 1) * size : page * size]
    headers: dict[str, str] = {}
    if page * size < len(items):
        others = "&".join(f"{k}={v[0]}" for k, v in query.items() if k != "page")
        headers["Link"] = f'<{_origin(host)}{path}?{others}&page={page + 1}>; rel="next"'
        if host.kind == "gitlab":
            headers["X-Next-Page"] = str(page + 1)
    return 200, chunk, headers


def _origin(host: FakeHost) -> str:
    return host.url.removesuffix("/api/v4")


def _github(host: FakeHost, method: str, path: str, query: Any, body: Any) -> Response:
    thread, single = f"{GITHUB_PREFIX}/issues/5/comments", f"{GITHUB_PREFIX}/issues/comments/"
    if path == thread and method == "GET":
        return _page(host, path, query, list(host.comments.values()))
    if path == thread and method == "POST":
        link = f"https://github.test/octo/models/pull/5#issuecomment-{host.next_id + 1}"
        new = host.add(body["body"], html_url=link)
        return 201, host.comments[new], {}
    if path == f"{GITHUB_PREFIX}/pulls/5" and method == "GET":
        return 200, {"number": 5, "base": {"ref": "main"}}, {}
    if path.startswith(single):
        return _one(host, method, int(path.removeprefix(single)), body, "PATCH")
    return 404, {"message": "Not Found"}, {}


def _gitlab(host: FakeHost, method: str, path: str, query: Any, body: Any) -> Response:
    notes = f"{GITLAB_PREFIX}/notes"
    if path == notes and method == "GET":
        return _page(host, path, query, list(host.comments.values()))
    if path == notes and method == "POST":
        new = host.add(body["body"], system=False)
        return 201, host.comments[new], {}
    if path == GITLAB_PREFIX and method == "GET":
        return 200, {"iid": 7, "target_branch": "develop"}, {}
    if path.startswith(notes + "/"):
        return _one(host, method, int(path.removeprefix(notes + "/")), body, "PUT")
    return 404, {"message": "404 Not Found"}, {}


def _one(host: FakeHost, method: str, ident: int, body: Any, edit: str) -> Response:
    if ident not in host.comments:
        return 404, {"message": "Not Found"}, {}
    if method == edit:
        host.comments[ident]["body"] = body["body"]
        return 200, host.comments[ident], {}
    if method == "DELETE":
        del host.comments[ident]
        return 204, None, {}
    return 405, {"message": "Method Not Allowed"}, {}
