"""The remote backend: an OPA server evaluates each job (``--engine opa --opa-url URL``).

This speaks OPA's REST Data API, OPA's own wire format (OPA docs ``docs/docs/rest-api.md``,
"Get a Document (with Input)"; see /work/shared/reference/policy-tools.md §3.4), so any OPA
server an org already runs centrally works unchanged:

- request: ``POST {url}/v1/data/trainlint/rules`` with the JSON body ``{"input": <job>}``
  (``Content-Type: application/json``); a conftest-style query ``data.main.deny`` becomes
  ``POST {url}/v1/data/main/deny``;
- response: 200 with ``{"result": <document>}``; a 200 **without** ``result`` means the
  document is undefined (the server has no such package), which reads as "no findings";
- any other status, a body that is not such a JSON object, a refused connection or a timeout
  is a PolicyError naming the URL without its credentials (user info and query string).

The server must hold the same pack (``pack build`` makes an OPA bundle for it): findings come
from the server, while each rule's METADATA (id, severity, docs) still comes from the local
pack, which is never compiled here. Findings go through the same contract check and number
normalisation as the embedded backends, so reports do not depend on where Rego ran. A bearer
token for an OPA server started with ``--authentication=token`` is read from the environment
variable ``TRAINLINT_OPA_TOKEN`` (never from the URL, never printed). The token and the jobs
travel only over ``https://``; plain ``http://`` is accepted for a loopback host (``localhost``,
``127.0.0.0/8``, ``::1``: an OPA sidecar, the tests) and is a ConfigError anywhere else, before
any request. Redirects are not followed.

The server evaluates the policies it holds, not the local pack: what those may call
(``http.send``, ``opa.runtime``) is the server's capabilities setting, not trainlint's.
"""

from __future__ import annotations

import ipaddress
import json
import os
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit, urlunsplit

import httpx

from trainlint.engine.results import findings_by_rule, normalise
from trainlint.errors import ConfigError, PolicyError
from trainlint.packs import Pack

RULES_PATH = "trainlint/rules"
TOKEN_ENV = "TRAINLINT_OPA_TOKEN"
DEFAULT_TIMEOUT_S = 30.0


class OpaEngine:
    """A client of one OPA server; ``pack`` only names the policies the server should hold."""

    name: str = "opa"

    def __init__(self, pack: Pack, url: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        parts = check_url(url)
        self.pack_name = pack.name
        self.url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self.display_url = redact(self.url)
        self._params = parts.query  # kept on every request (a proxy's), never printed
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        token = os.environ.get(TOKEN_ENV)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.Client(headers=headers, timeout=timeout, follow_redirects=False)
        self.evaluate({})  # an unreachable or broken server fails the run once, up front

    def evaluate(self, job_input: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """POST the job to ``/v1/data/trainlint/rules`` and read every rule's findings."""
        return findings_by_rule(self._post(RULES_PATH, job_input))

    def query(self, job_input: dict[str, Any], query: str) -> Any:
        """The value of a reference (``data.main.deny``) for this job; None if undefined."""
        return normalise(self._post(data_path(query), job_input))

    def close(self) -> None:
        self._client.close()

    def _post(self, path: str, job_input: dict[str, Any]) -> Any:
        """The ``result`` of ``POST /v1/data/<path>``; None when the document is undefined."""
        endpoint = f"{self.url}/v1/data/{path}"
        shown = f"{self.display_url}/v1/data/{path}"
        try:
            body = json.dumps({"input": job_input})
            response = self._client.post(endpoint, params=self._params or None, content=body)
        except httpx.TimeoutException:
            raise PolicyError(f"opa: {shown}: no answer within {self._timeout()} s") from None
        except httpx.HTTPError as exc:
            raise PolicyError(f"opa: {shown}: {_reason(exc)}") from None
        if response.status_code != httpx.codes.OK:
            detail = _server_message(response)
            raise PolicyError(f"opa: {shown}: HTTP {response.status_code}{detail}")
        try:
            body = response.json()
        except ValueError:
            raise PolicyError(f"opa: {shown}: the answer is not JSON") from None
        if not isinstance(body, dict):
            raise PolicyError(f"opa: {shown}: expected a JSON object with 'result'")
        return body.get("result")

    def _timeout(self) -> str:
        seconds = self._client.timeout.read
        return f"{seconds:g}" if seconds is not None else "?"


def create(pack: Pack, *, url: str) -> OpaEngine:
    return OpaEngine(pack, url)


def check_url(url: str) -> SplitResult:
    """The URL's parts when it may carry the token: https, or http to a loopback host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PolicyError(f"--opa-url {redact(url)!r} is not an http(s) URL")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ConfigError(
            f"--opa-url {redact(url)!r}: plain http:// is accepted only for a loopback host "
            "(localhost, 127.0.0.1, ::1); use https:// so the token and the jobs are encrypted"
        )
    return parts


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def data_path(query: str) -> str:
    """``data.main.deny`` → ``main/deny``: the Data API path of a plain dotted reference."""
    parts = query.split(".")
    if parts[0] != "data" or len(parts) < 2 or not all(parts[1:]):
        raise PolicyError(f"opa: cannot send {query!r}: only data.<path> references are supported")
    return "/".join(quote(part, safe="") for part in parts[1:])


def redact(url: str) -> str:
    """The URL without user info, query or fragment: safe to print in an error."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _reason(exc: httpx.HTTPError) -> str:
    """Why a request failed, without the request's URL (which may hold credentials)."""
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect (is the OPA server running?)"
    return type(exc).__name__


def _server_message(response: httpx.Response) -> str:
    """OPA's error body is ``{"code": ..., "message": ...}``; show its message when present."""
    try:
        body = response.json()
    except ValueError:
        return ""
    message = body.get("message") if isinstance(body, dict) else None
    return f": {' '.join(str(message).split())[:300]}" if message else ""
