"""Turn a :class:`PackSource` into a local bundle path: a directory or a ``.tar.gz``.

URL sources are downloaded with httpx and cached under :func:`cache_dir`
(``$XDG_CACHE_HOME/trainlint/packs``, default ``~/.cache/trainlint/packs``), one entry per URL:
``<sha256 of the URL>.tar.gz`` (the body) and ``<same>.json`` (its ETag and sha256). Both are
written atomically (a temporary file in the same directory, then ``os.replace``).

* Only ``https://`` is fetched; plain ``http://`` is accepted for 127.0.0.1, ``localhost`` and
  ``::1`` only, so tests can serve bundles from a local server. Each redirect hop is checked.
* A URL source must be pinned (``sha256``) or signed (``public_key``); otherwise it is refused
  before any request.
* A cached copy is revalidated with ``If-None-Match``; a ``304`` reuses it (the HTTP caching an
  OPA bundle service implements). If the server cannot be reached (or answers 5xx), the cached
  copy is used and a warning logged; without one the error names the URL.
* ``offline=True`` never touches the network: the cached copy or an error.
* The body is read raw and bounded as it arrives: at most ``max_bytes`` on the wire and, after
  one ``gzip``/``deflate`` content coding (decoded here with an output cap, never by httpx,
  which inflates a whole chunk at once), at most ``max_bytes`` decoded; ``gzip, gzip`` or any
  other coding is refused. The sha256 is computed as the bytes arrive.
* The pin is checked on every use, downloaded or cached; so is the signature when
  ``public_key`` is configured (for any kind of source), by ``signing.verify_bundle``.
* Messages show URLs without user-info, query or fragment (where tokens live).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from trainlint import __version__
from trainlint.errors import PolicyError
from trainlint.packs.signing import verify_bundle
from trainlint.packs.sources import PackSource, entry_point_path, local_path

log = logging.getLogger(__name__)

TIMEOUT_S = 30.0
MAX_BUNDLE_BYTES = 64 * 1024 * 1024
MAX_REDIRECTS = 5
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16
_CODINGS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}

Verify = Callable[[Path], None]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/trainlint/packs`` (an absolute XDG_CACHE_HOME only, per the XDG spec),
    else ``~/.cache/trainlint/packs``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "trainlint" / "packs"


def resolve(  # noqa: PLR0913 - a source, then keyword-only settings with defaults
    source: PackSource,
    config_root: Path,
    *,
    cache_dir: Path | None = None,
    offline: bool = False,
    timeout: float = TIMEOUT_S,
    max_bytes: int = MAX_BUNDLE_BYTES,
    repository: Path | None = None,
) -> Path:
    """The local bundle path of ``source``, checked against its pin and signature.

    ``config_root`` is the directory of the config that lists the source: ``path`` and
    ``public_key`` are relative to it. ``cache_dir`` defaults to :func:`cache_dir`; ``offline``
    uses only the cache; ``timeout`` bounds each network operation (connect, each read), in
    seconds; ``max_bytes`` is the largest bundle accepted. With ``repository`` (a source the
    repository's own config lists), its path and key file must lie inside that folder: a pull
    request must not make trainlint read ``/home/runner`` as pack data. Raises PolicyError
    with a one-line reason.
    """
    cache = cache_dir if cache_dir is not None else _default_cache_dir()
    if repository is not None:
        _inside_repository(source, config_root, repository)
    verify = _signature_check(source, config_root)
    if source.url is not None:
        return _fetch(source, _Limits(timeout, max_bytes), cache, offline, verify)
    if source.entry_point is not None:
        path = entry_point_path(source.entry_point, cache_dir=cache)
    else:
        path = local_path(source.path or "", config_root)
    if source.sha256 is not None:
        _check_pin(path, source.sha256, str(path), max_bytes)
    verify(path)
    return path


_default_cache_dir = cache_dir


def display_url(url: str) -> str:
    """``url`` without user-info, query and fragment: safe to print."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


@dataclass(frozen=True)
class _Limits:
    timeout: float
    max_bytes: int


@dataclass(frozen=True)
class _Entry:
    """One URL's cache slot: ``body`` (the bundle) and ``meta`` (its ETag and sha256)."""

    body: Path
    meta: Path

    @classmethod
    def of(cls, root: Path, url: str) -> _Entry:
        key = hashlib.sha256(url.encode()).hexdigest()
        return cls(root / f"{key}.tar.gz", root / f"{key}.json")

    def read(self) -> tuple[str, dict[str, object]] | None:
        """``(sha256 of the body, stored meta)``, or None when there is no cached body."""
        try:
            digest = _sha256(self.body.read_bytes())
        except OSError:
            return None
        try:
            meta = json.loads(self.meta.read_text())
        except (OSError, ValueError):
            meta = {}
        return digest, meta if isinstance(meta, dict) else {}

    def revalidation_etag(self, pin: str | None) -> str | None:
        """The ETag to send: only for an intact body that matches the pin (if any)."""
        found = self.read()
        if found is None:
            return None
        digest, meta = found
        etag = meta.get("etag")
        usable = meta.get("sha256") == digest and (pin is None or pin.lower() == digest)
        return etag if usable and isinstance(etag, str) else None

    def store(self, staged: Path, body: bytes, etag: str | None, url: str) -> None:
        os.replace(staged, self.body)
        meta = {"url": display_url(url), "etag": etag, "sha256": _sha256(body)}
        _atomic_write(self.meta, json.dumps(meta, indent=2).encode())


def _fetch(source: PackSource, limits: _Limits, cache: Path, offline: bool, verify: Verify) -> Path:
    url = source.url or ""
    shown = display_url(url)
    _check_url(url, shown)
    if source.sha256 is None and source.public_key is None:
        raise PolicyError(
            f"pack {shown}: a remote pack must be pinned (sha256) or signed (public-key); refused"
        )
    entry = _Entry.of(cache, url)
    if offline:
        return _use_cache(entry, source, shown, verify, "offline mode")
    try:
        status, body, digest, etag = _download(url, entry.revalidation_etag(source.sha256), limits)
    except _Unreachable as exc:
        if entry.read() is None:
            raise PolicyError(f"pack {shown}: {exc}, and there is no cached copy") from exc
        log.warning("pack %s: %s; using the cached copy", shown, exc)
        return _use_cache(entry, source, shown, verify, str(exc))
    if status == 304:
        return _use_cache(entry, source, shown, verify, "HTTP 304 without a cached copy")
    if not body.startswith(_GZIP_MAGIC):
        raise PolicyError(f"pack {shown}: the response is not a gzip bundle (.tar.gz)")
    if source.sha256 is not None:  # hashed as it arrived, after the size caps
        _check_digest(digest, source.sha256, f"{shown} (downloaded)")
    try:
        staged = _atomic_write(entry.body, body, keep_staged=True)
    except OSError as exc:
        raise PolicyError(f"pack {shown}: cannot write the cache in {cache}: {exc}") from exc
    try:
        _verify_download(verify, staged, shown)
        entry.store(staged, body, etag, url)
    except OSError as exc:
        raise PolicyError(f"pack {shown}: cannot write the cache in {cache}: {exc}") from exc
    finally:
        staged.unlink(missing_ok=True)
    return entry.body


def _verify_download(verify: Verify, staged: Path, shown: str) -> None:
    """The signature check of a download, reported against its URL (not the temporary file)."""
    try:
        verify(staged)
    except PolicyError as exc:
        raise PolicyError(str(exc).replace(str(staged), f"{shown} (downloaded)")) from exc


def _use_cache(entry: _Entry, source: PackSource, shown: str, verify: Verify, why: str) -> Path:
    found = entry.read()
    if found is None:
        raise PolicyError(f"pack {shown}: no cached copy ({why})")
    digest, meta = found
    label = f"{shown} (cached at {entry.body})"
    if source.sha256 is not None:
        _check_digest(digest, source.sha256, label)
    elif meta.get("sha256") != digest:
        raise PolicyError(f"pack {label}: the cached copy does not match its recorded sha256")
    verify(entry.body)
    return entry.body


class _Unreachable(Exception):
    """The server could not be reached or failed (5xx): a cached copy may stand in."""


_Download = tuple[int, bytes, str, str | None]
"""The status, body, body's sha256 and ETag of a 200 or 304."""


def _download(url: str, etag: str | None, limits: _Limits) -> _Download:
    """The answer to a GET of ``url``, following redirects that pass the URL check."""
    headers = {"User-Agent": f"trainlint/{__version__}", "Accept-Encoding": "identity"}
    if etag is not None:
        headers["If-None-Match"] = etag
    with httpx.Client(timeout=limits.timeout, follow_redirects=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                with client.stream("GET", url, headers=headers) as response:
                    if not response.has_redirect_location:
                        return _read(response, display_url(url), limits.max_bytes)
                    location = response.headers.get("location", "")
            except httpx.TransportError as exc:
                raise _Unreachable(f"cannot be fetched ({type(exc).__name__})") from exc
            except httpx.HTTPError as exc:
                raise PolicyError(f"pack {display_url(url)}: {type(exc).__name__}") from exc
            url = urljoin(url, location)
            _check_url(url, display_url(url))
    raise PolicyError(f"pack {display_url(url)}: more than {MAX_REDIRECTS} redirects")


def _read(response: httpx.Response, shown: str, max_bytes: int) -> _Download:
    """The body read raw, capped on the wire and once decoded, and hashed as it arrives."""
    status = response.status_code
    if status == 304:
        return status, b"", "", response.headers.get("etag")
    if status >= 500:
        raise _Unreachable(f"the server answered HTTP {status}")
    if status != 200:
        raise PolicyError(f"pack {shown}: the server answered HTTP {status}")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise _too_big(shown, max_bytes)
    decode = _decoder(response.headers.get("content-encoding", ""), shown)
    body, digest, received = bytearray(), hashlib.sha256(), 0
    for raw in itertools.chain(response.iter_raw(_CHUNK), [None]):  # None: the end
        received += len(raw or b"")
        if received > max_bytes:
            raise _too_big(shown, max_bytes)
        for piece in decode(raw):
            body += piece
            digest.update(piece)
            if len(body) > max_bytes:
                raise _too_big(shown, max_bytes)
    return status, bytes(body), digest.hexdigest(), response.headers.get("etag")


_Decode = Callable[[bytes | None], Iterator[bytes]]
"""Raw bytes in (None at the end), decoded pieces out."""


def _decoder(header: str, shown: str) -> _Decode:
    """The decoder of a Content-Encoding: identity, or one gzip/deflate coding whose output is
    produced at most ``_CHUNK`` bytes at a time (an inflating bomb stops at ``max_bytes``)."""
    named = (coding.strip().lower() for coding in header.split(","))
    codings = [coding for coding in named if coding not in ("", "identity")]
    if not codings:
        return _identity
    if len(codings) > 1 or codings[0] not in _CODINGS:
        raise PolicyError(
            f"pack {shown}: unsupported Content-Encoding {header.strip()!r} (trainlint asks for "
            "identity and reads at most one gzip or deflate coding); refused"
        )
    inflater = zlib.decompressobj(_CODINGS[codings[0]])

    def inflate(raw: bytes | None) -> Iterator[bytes]:
        try:
            if raw is None:
                yield inflater.flush(_CHUNK)
                return
            while raw:
                yield inflater.decompress(raw, _CHUNK)
                raw = inflater.unconsumed_tail
        except zlib.error as exc:
            raise PolicyError(f"pack {shown}: the {codings[0]} coding is corrupt: {exc}") from None

    return inflate


def _identity(raw: bytes | None) -> Iterator[bytes]:
    if raw:
        yield raw


def _too_big(shown: str, max_bytes: int) -> PolicyError:
    return PolicyError(f"pack {shown}: the bundle is larger than {max_bytes} bytes; refused")


def _check_url(url: str, shown: str) -> None:
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return
    raise PolicyError(
        f"pack {shown}: only https:// URLs are fetched (http:// only for 127.0.0.1/localhost/::1)"
    )


def _check_pin(path: Path, expected: str, label: str, max_bytes: int) -> None:
    """The pin of a local bundle, hashed in chunks and no further than ``max_bytes``."""
    if not path.is_file():
        raise PolicyError(f"pack {label}: sha256 pins a .tar.gz bundle, not a directory")
    digest, size = hashlib.sha256(), 0
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise _too_big(label, max_bytes)
                digest.update(chunk)
    except OSError as exc:
        raise PolicyError(f"pack {label}: cannot read: {type(exc).__name__}") from None
    _check_digest(digest.hexdigest(), expected, label)


def _check_digest(actual: str, expected: str, label: str) -> None:
    if actual != expected.lower():
        raise PolicyError(
            f"pack {label}: sha256 mismatch: expected {expected.lower()}, got {actual}"
        )


def _inside_repository(source: PackSource, config_root: Path, repository: Path) -> None:
    root = repository.resolve()
    for label, written in (("path", source.path), ("public-key", source.public_key)):
        if written is None:
            continue
        real = (config_root / Path(written).expanduser()).resolve()
        if real != root and root not in real.parents:
            raise PolicyError(
                f"pack {label} {written!r} is outside the repository ({root}); not read "
                "(name a pack outside it with --pack or TRAINLINT_PACKS, or by url)"
            )


def _signature_check(source: PackSource, config_root: Path) -> Verify:
    """A check of the bundle signature with the configured key (read now, before any download);
    a no-op when the source has no ``public_key``."""
    if source.public_key is None:
        return lambda path: None
    key_file = config_root / Path(source.public_key).expanduser()
    try:
        key = key_file.read_bytes()
    except OSError as exc:
        raise PolicyError(
            f"pack public key {source.public_key!r} cannot be read ({type(exc).__name__})"
        ) from exc

    def verify(path: Path) -> None:
        verify_bundle(path, key, key_id=source.key_id)

    return verify


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _atomic_write(path: Path, data: bytes, *, keep_staged: bool = False) -> Path:
    """Write ``data`` to a temporary file next to ``path``, then ``os.replace`` it there.

    With ``keep_staged`` the temporary file (same suffixes as ``path``) is returned unreplaced.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = "".join(path.suffixes)
    fd, name = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=path.parent)
    staged = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if not keep_staged:
            os.replace(staged, path)
            return path
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return staged
