"""One JSON API client for the PR-comment hosts: retries, pagination, and a token kept secret.

* Base URL: ``https://`` only; ``http://`` is accepted for 127.0.0.1, ``localhost`` and ``::1``
  (tests), as in :mod:`trainlint.packs.fetch`. Redirects are not followed, and a pagination link
  to another origin is refused, so the token only ever goes to the configured host.
* Retries (GitHub's "Rate limits for the REST API" guidance): 5xx, 429, and 403 when it is a rate
  limit (``X-RateLimit-Remaining: 0``, a ``Retry-After`` header, or a "rate limit" message), plus
  connection errors and timeouts. The wait is ``Retry-After`` (seconds or a date) when given,
  else the time until ``X-RateLimit-Reset``/``RateLimit-Reset`` (epoch seconds), else one minute
  for a secondary rate limit without headers, else exponential backoff with jitter. A required wait
  longer than ``RetryPolicy.max_wait_s`` fails at once (retrying earlier is pointless, and GitHub
  warns that clients which keep sending while limited may be banned). After
  ``RetryPolicy.attempts`` tries the error names the status, method and endpoint path.
* POST is retried too: a 5xx after a create could in rare cases leave a duplicate comment; the
  ``update`` behaviour then edits the newest one on the next run.
* The token never appears in an error: messages carry the method, path and the host's own
  ``message`` field, and any occurrence of the token is replaced by ``***``.
* An answer is checked before it is used: JSON that does not decode, an object where a list
  was expected, a comment without an integer id or with a body that is not text are a
  ``CommentError`` naming the endpoint (exit 2), never a crash.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from trainlint import __version__
from trainlint.errors import ConfigError, TrainlintError

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
USER_AGENT = f"trainlint/{__version__} (+https://github.com/trainlint/trainlint)"
TIMEOUT_S = 30.0
MAX_PAGES = 100
SECONDARY_LIMIT_WAIT_S = 60.0


class CommentError(TrainlintError):
    """A request to the PR host failed (status, method and endpoint path in the message)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry; ``sleep``/``now``/``rand`` are injectable for tests."""

    attempts: int = 4
    base_s: float = 1.0
    max_backoff_s: float = 30.0
    max_wait_s: float = 120.0
    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], float] = time.time
    rand: Callable[[], float] = field(default=random.random)

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with "equal jitter": half fixed, half random."""
        ceiling = min(self.max_backoff_s, self.base_s * 2.0**attempt)
        return ceiling / 2 + self.rand() * ceiling / 2


def check_base_url(url: str, variable: str) -> str:
    """The API base without a trailing slash; https, or http on a loopback host only."""
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS):
        if parts.username or parts.password:
            raise ConfigError(f"{variable}: credentials in the URL are not accepted")
        return url.rstrip("/")
    raise ConfigError(
        f"{variable}: {parts.scheme}://{parts.hostname or ''} is not an https URL "
        "(plain http is accepted for 127.0.0.1/localhost only)"
    )


class ApiClient:
    """A JSON client for one API base with fixed headers (the credential header among them)."""

    def __init__(  # noqa: PLR0913 - an HTTP client's setup: where, auth, and how
        self,
        base_url: str,
        headers: Mapping[str, str],
        secret: str,
        *,
        host: str,
        auth_hint: str = "",
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url
        self.host = host
        self.auth_hint = auth_hint
        self.retry = retry or RetryPolicy()
        self._secret = secret
        self._origin = _origin(base_url)
        self._client = httpx.Client(
            headers={"User-Agent": USER_AGENT, **headers},
            timeout=TIMEOUT_S,
            follow_redirects=False,
            transport=transport,
        )

    def close(self) -> None:
        self._client.close()

    def request(self, method: str, path: str, json: Any = None) -> httpx.Response:
        """One call (``path`` relative to the base, or an absolute same-origin URL), retried."""
        url = path if "://" in path else self.base_url + path
        if _origin(url) != self._origin:
            raise CommentError(f"{self.host} API: refusing to follow a link to another host")
        endpoint = urlsplit(url).path
        for attempt in range(self.retry.attempts):
            last = attempt == self.retry.attempts - 1
            try:
                response = self._client.request(method, url, json=json)
            except httpx.TransportError as exc:
                if last:
                    name = type(exc).__name__
                    raise self._error(method, endpoint, name, attempt + 1) from None
                self.retry.sleep(self.retry.backoff(attempt))
                continue
            if response.is_success:
                return response
            wait = self._wait(response, attempt)
            if wait is None or last or wait > self.retry.max_wait_s:
                raise self._error(method, endpoint, self._describe(response), attempt + 1, wait)
            self.retry.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def json(self, method: str, path: str, body: Any = None) -> Any:
        """The decoded JSON answer of one call (``request``); invalid JSON is a CommentError."""
        return self._decode(method, self.request(method, path, body))

    def pages(self, path: str) -> Iterator[Any]:
        """Items of a paginated list: follows ``Link: rel="next"``, else GitLab's X-Next-Page."""
        url: str | None = path
        for _ in range(MAX_PAGES):
            if url is None:
                return
            response = self.request("GET", url)
            items = self._decode("GET", response)
            if not isinstance(items, list):
                where = f"GET {response.url.path}"
                raise CommentError(f"{self.host} API: {where} answered {kind(items)}, not a list")
            yield from items
            url = _next_url(response)
        raise CommentError(f"{self.host} API: more than {MAX_PAGES} pages of comments")

    def _decode(self, method: str, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError:  # JSONDecodeError and UnicodeDecodeError alike
            where = f"{method} {response.url.path}"
            raise CommentError(f"{self.host} API: {where} answered invalid JSON") from None

    def _describe(self, response: httpx.Response) -> str:
        text = _describe(response)
        if response.status_code in (401, 403, 404) and self.auth_hint:
            text += f" ({self.auth_hint})"
        return text

    def _wait(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when the status is not worth retrying."""
        status, headers = response.status_code, response.headers
        limited = headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers
        secondary = status == 403 and "rate limit" in response.text.lower()
        if not (status >= 500 or status == 429 or (status == 403 and (limited or secondary))):
            return None
        told = _retry_after(headers, self.retry.now())
        if told is None and secondary:
            told = SECONDARY_LIMIT_WAIT_S
        return max(told, 0.0) if told is not None else self.retry.backoff(attempt)

    def _error(
        self,
        method: str,
        endpoint: str,
        what: str,
        attempts: int = 0,
        wait: float | None = None,
    ) -> CommentError:
        if wait is not None and wait > self.retry.max_wait_s:
            cap = self.retry.max_wait_s
            what += f"; rate limited for {wait:.0f} s, longer than the {cap:.0f} s trainlint waits"
        elif attempts > 1:
            what += f" (after {attempts} attempts)"
        message = f"{self.host} API: {method} {endpoint} failed: {what}"
        return CommentError(message.replace(self._secret, "***") if self._secret else message)


def kind(value: Any) -> str:
    """A JSON value's kind, for messages (never the value: it may be long or hostile)."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, (int, float)) else "a value")


def api_object(value: Any, what: str) -> dict[str, Any]:
    """``value`` when it is a JSON object; else a CommentError saying ``what`` it should be."""
    if not isinstance(value, dict):
        raise CommentError(f"{what} is {kind(value)}, not an object")
    return value


def api_id(value: Any, what: str) -> int:
    """A positive integer id (a JSON number, not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CommentError(f"{what} is {kind(value)}, not a positive integer id")
    return value


def api_text(value: Any, what: str) -> str:
    """A string, or null read as the empty string."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise CommentError(f"{what} is {kind(value)}, not text")
    return value


def api_ref(value: Any, what: str) -> str:
    """A branch name git can be given: text, not empty, not starting with ``-``."""
    ref = api_text(value, what)
    if not ref.strip() or ref.startswith("-"):
        raise CommentError(f"{what} is not a branch name")
    return ref


def _retry_after(headers: httpx.Headers, now: float) -> float | None:
    """Retry-After (seconds or an HTTP date), else the rate-limit reset time, as seconds."""
    value = headers.get("retry-after")
    if value:
        if value.strip().isdigit():
            return float(value)
        try:
            return parsedate_to_datetime(value).timestamp() - now
        except (TypeError, ValueError):
            return None
    reset = headers.get("x-ratelimit-reset") or headers.get("ratelimit-reset")
    if reset and reset.strip().isdigit() and headers.get("x-ratelimit-remaining", "0") == "0":
        return float(reset) - now
    return None


def _describe(response: httpx.Response) -> str:
    """``502 Bad Gateway: <the host's message>`` (its JSON ``message``/``error``, 200 chars)."""
    text = f"{response.status_code} {response.reason_phrase}".strip()
    try:
        data = response.json()
    except ValueError:
        return text
    detail = (data.get("message") or data.get("error")) if isinstance(data, dict) else None
    return f"{text}: {str(detail)[:200]}" if detail else text


def _next_url(response: httpx.Response) -> str | None:
    link = response.links.get("next", {}).get("url")
    if link:
        return str(link)
    page = response.headers.get("x-next-page", "").strip()
    if not page:
        return None
    url = response.url.copy_set_param("page", page)
    return str(url)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or ""), parts.port
