"""URL pack sources against a real HTTP server on 127.0.0.1 (ETag revalidation, cache, pins)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import tarfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from trainlint.errors import PolicyError
from trainlint.packs.fetch import cache_dir, display_url, resolve
from trainlint.packs.sources import PackSource

BUNDLE_FILES = {
    ".manifest": json.dumps({"revision": "r1", "roots": ["acme"]}),
    "acme/data.json": json.dumps({"budget_usd": 100}),
    "acme/rules/budget.rego": "package acme.rules.budget\n\nimport rego.v1\n",
}


def make_bundle(files: dict[str, str]) -> bytes:
    """A deterministic ``.tar.gz`` bundle (same files → same bytes → same sha256)."""
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for name, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Served:
    """What the server sends and what it saw: ``(path, If-None-Match)`` and the status sent."""

    body: bytes
    etag: str = '"r1"'
    failing: bool = False
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    port: int = 0
    stop: Callable[[], None] = lambda: None

    def url(self, path: str = "/pack.tar.gz") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def _handler(state: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            state.requests.append((path, self.headers.get("If-None-Match")))
            routes: dict[str, Callable[[], None]] = {
                "/pack.tar.gz": self._bundle,
                "/moved-away": lambda: self._redirect("http://example.com/pack.tar.gz"),
                "/moved-here": lambda: self._redirect("/pack.tar.gz"),
                "/big": lambda: self._send(200, b"\x1f\x8b" + b"x" * 4096, length=True),
                "/big-unsized": lambda: self._send(200, b"\x1f\x8b" + b"x" * 4096, length=False),
                "/login": lambda: self._send(200, b"<html>sign in</html>", length=True),
            }
            routes.get(path, lambda: self._send(404, b"", length=True))()

        def _bundle(self) -> None:
            if state.failing:
                self._send(503, b"", length=True)
            elif self.headers.get("If-None-Match") == state.etag:
                self._send(304, b"", length=False)
            else:
                self._send(200, state.body, length=True)

        def _redirect(self, location: str) -> None:
            state.statuses.append(302)
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _send(self, status: int, body: bytes, *, length: bool) -> None:
            state.statuses.append(status)
            self.send_response(status)
            self.send_header("ETag", state.etag)
            if length:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    state = Served(body=make_bundle(BUNDLE_FILES))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    stopped = False

    def stop() -> None:
        nonlocal stopped
        if not stopped:
            httpd.shutdown()
            httpd.server_close()
            thread.join()
            stopped = True

    state.stop = stop
    yield state
    stop()


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def pinned(state: Served, path: str = "/pack.tar.gz") -> PackSource:
    return PackSource(url=state.url(path), sha256=sha256(state.body))


def test_first_fetch_downloads_and_caches(server: Served, cache: Path, tmp_path: Path) -> None:
    path = resolve(pinned(server), tmp_path, cache_dir=cache)
    assert path.parent == cache and path.name.endswith(".tar.gz")
    assert path.read_bytes() == server.body
    meta = json.loads(path.with_name(path.name.replace(".tar.gz", ".json")).read_text())
    assert meta == {"url": server.url(), "etag": '"r1"', "sha256": sha256(server.body)}
    assert server.requests == [("/pack.tar.gz", None)] and server.statuses == [200]
    assert not [p for p in cache.iterdir() if p.name.startswith(".tmp-")]


def test_second_fetch_revalidates_with_the_etag(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    first = resolve(pinned(server), tmp_path, cache_dir=cache)
    second = resolve(pinned(server), tmp_path, cache_dir=cache)
    assert second == first and second.read_bytes() == server.body
    assert server.requests[1] == ("/pack.tar.gz", '"r1"') and server.statuses == [200, 304]


def test_a_new_revision_replaces_the_cached_copy(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    resolve(pinned(server), tmp_path, cache_dir=cache)
    server.body, server.etag = make_bundle({**BUNDLE_FILES, ".manifest": "{}"}), '"r2"'
    path = resolve(pinned(server), tmp_path, cache_dir=cache)
    assert path.read_bytes() == server.body and server.statuses == [200, 200]


def test_server_down_uses_the_cache(
    server: Served, cache: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = resolve(pinned(server), tmp_path, cache_dir=cache)
    server.stop()
    with caplog.at_level(logging.WARNING, logger="trainlint.packs.fetch"):
        assert resolve(pinned(server), tmp_path, cache_dir=cache) == first
    assert "using the cached copy" in caplog.text and server.url() in caplog.text


def test_server_error_uses_the_cache(server: Served, cache: Path, tmp_path: Path) -> None:
    first = resolve(pinned(server), tmp_path, cache_dir=cache)
    server.failing = True
    assert resolve(pinned(server), tmp_path, cache_dir=cache) == first
    assert server.statuses == [200, 503]


def test_server_down_without_cache_is_an_error_without_secrets(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    server.stop()
    url = f"http://deploy:s3cret@127.0.0.1:{server.port}/pack.tar.gz?token=abc123#frag"
    with pytest.raises(PolicyError) as raised:
        resolve(PackSource(url=url, sha256="0" * 64), tmp_path, cache_dir=cache)
    message = str(raised.value)
    assert server.url() in message and "no cached copy" in message
    assert "s3cret" not in message and "abc123" not in message and "deploy" not in message


def test_pin_mismatch_on_download_is_refused_and_not_cached(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    wrong = "ab" * 32
    with pytest.raises(PolicyError, match=f"expected {wrong}, got {sha256(server.body)}"):
        resolve(PackSource(url=server.url(), sha256=wrong), tmp_path, cache_dir=cache)
    assert not cache.exists() or not any(cache.iterdir())


def _tamper(path: Path) -> bytes:
    tampered = path.read_bytes() + b"\0"
    path.write_bytes(tampered)
    return tampered


def test_tampered_cache_is_refused_offline(server: Served, cache: Path, tmp_path: Path) -> None:
    tampered = _tamper(resolve(pinned(server), tmp_path, cache_dir=cache))
    expected = f"expected {sha256(server.body)}, got {sha256(tampered)}"
    with pytest.raises(PolicyError, match=expected):
        resolve(pinned(server), tmp_path, cache_dir=cache, offline=True)


def test_tampered_cache_is_refused_when_the_server_is_down(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    _tamper(resolve(pinned(server), tmp_path, cache_dir=cache))
    server.stop()
    with pytest.raises(PolicyError, match="sha256 mismatch"):
        resolve(pinned(server), tmp_path, cache_dir=cache)


def test_tampered_cache_is_downloaded_again_online(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    path = resolve(pinned(server), tmp_path, cache_dir=cache)
    _tamper(path)
    assert resolve(pinned(server), tmp_path, cache_dir=cache).read_bytes() == server.body
    assert server.requests[1] == ("/pack.tar.gz", None)  # no revalidation of a bad copy


def test_unpinned_unsigned_url_is_refused_before_any_request(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    with pytest.raises(PolicyError, match="pinned \\(sha256\\) or signed"):
        resolve(PackSource(url=server.url()), tmp_path, cache_dir=cache)
    assert server.requests == []


def test_redirect_to_non_local_http_is_refused(server: Served, cache: Path, tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"http://example\.com/pack\.tar\.gz: only https://"):
        resolve(pinned(server, "/moved-away"), tmp_path, cache_dir=cache)
    assert server.requests == [("/moved-away", None)]


def test_local_redirect_is_followed(server: Served, cache: Path, tmp_path: Path) -> None:
    path = resolve(pinned(server, "/moved-here"), tmp_path, cache_dir=cache)
    assert path.read_bytes() == server.body
    assert [p for p, _ in server.requests] == ["/moved-here", "/pack.tar.gz"]


@pytest.mark.parametrize(
    "url", ["http://example.com/pack.tar.gz", "ftp://127.0.0.1/pack.tar.gz", "file:///etc/x"]
)
def test_plain_http_to_other_hosts_is_refused(url: str, cache: Path, tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="only https://"):
        resolve(PackSource(url=url, sha256="0" * 64), tmp_path, cache_dir=cache)


@pytest.mark.parametrize("route", ["/big", "/big-unsized"])
def test_oversized_body_is_refused(route: str, server: Served, cache: Path, tmp_path: Path) -> None:
    source = PackSource(url=server.url(route), sha256="0" * 64)
    with pytest.raises(PolicyError, match="larger than 1024 bytes"):
        resolve(source, tmp_path, cache_dir=cache, max_bytes=1024)


def test_a_page_that_is_not_a_bundle_is_refused(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    with pytest.raises(PolicyError, match="not a gzip bundle"):
        resolve(pinned(server, "/login"), tmp_path, cache_dir=cache)


def test_http_client_errors_are_reported(server: Served, cache: Path, tmp_path: Path) -> None:
    resolve(pinned(server), tmp_path, cache_dir=cache)
    with pytest.raises(PolicyError, match="HTTP 404"):
        resolve(pinned(server, "/gone"), tmp_path, cache_dir=cache)


def test_offline_never_touches_the_network(server: Served, cache: Path, tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="no cached copy \\(offline mode\\)"):
        resolve(pinned(server), tmp_path, cache_dir=cache, offline=True)
    assert server.requests == []
    online = resolve(pinned(server), tmp_path, cache_dir=cache)
    assert resolve(pinned(server), tmp_path, cache_dir=cache, offline=True) == online
    assert len(server.requests) == 1


def test_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "trainlint" / "packs"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "trainlint" / "packs"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == tmp_path / "home" / ".cache" / "trainlint" / "packs"


def test_resolve_caches_under_xdg_by_default(
    server: Served, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = resolve(pinned(server), tmp_path)
    assert path.parent == tmp_path / "xdg" / "trainlint" / "packs"


def test_display_url_strips_credentials() -> None:
    url = "https://user:pw@packs.example.com:8443/a/pack.tar.gz?sig=xyz#x"
    assert display_url(url) == "https://packs.example.com:8443/a/pack.tar.gz"


def test_missing_public_key_file_is_an_error_before_any_request(
    server: Served, cache: Path, tmp_path: Path
) -> None:
    source = PackSource.model_validate({"url": server.url(), "public-key": "keys/missing.pem"})
    with pytest.raises(PolicyError, match=r"'keys/missing\.pem' cannot be read"):
        resolve(source, tmp_path, cache_dir=cache)
    assert server.requests == []


# Signed bundles: P1's signing.sign / bundle.build make them, fetch.resolve verifies them.


@pytest.fixture
def signed(tmp_path: Path) -> tuple[bytes, Path]:
    """A signed ``.tar.gz`` (RS256, key id ``acme-2026``) and the public key file."""
    from tests.packs.keys import rsa_pair
    from trainlint.packs.bundle import build
    from trainlint.packs.signing import sign

    private, public = rsa_pair()
    directory = tmp_path / "bundle"
    for name, text in BUNDLE_FILES.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    sign(directory, private, "RS256", key_id="acme-2026")
    build(directory, tmp_path / "signed.tar.gz")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "acme.pem").write_bytes(public)
    return (tmp_path / "signed.tar.gz").read_bytes(), tmp_path / "keys" / "acme.pem"


def signed_source(state: Served, key_id: str = "acme-2026") -> PackSource:
    fields = {"url": state.url(), "public-key": "keys/acme.pem", "key-id": key_id}
    return PackSource.model_validate(fields)


def test_signed_unpinned_bundle_is_verified_and_cached(
    server: Served, signed: tuple[bytes, Path], cache: Path, tmp_path: Path
) -> None:
    server.body = signed[0]
    path = resolve(signed_source(server), tmp_path, cache_dir=cache)
    assert path.read_bytes() == server.body
    assert resolve(signed_source(server), tmp_path, cache_dir=cache, offline=True) == path


def test_wrong_key_id_is_refused(
    server: Served, signed: tuple[bytes, Path], cache: Path, tmp_path: Path
) -> None:
    server.body = signed[0]
    with pytest.raises(PolicyError, match="key id 'acme-2026', expected 'other'"):
        resolve(signed_source(server, "other"), tmp_path, cache_dir=cache)
    assert not [p for p in cache.iterdir() if p.suffix == ".gz"]


def test_tampered_signed_bundle_is_refused_and_not_cached(
    server: Served, signed: tuple[bytes, Path], cache: Path, tmp_path: Path
) -> None:
    files = dict(BUNDLE_FILES)
    with tarfile.open(fileobj=io.BytesIO(signed[0]), mode="r:gz") as tar:
        for member in tar.getmembers():
            extracted = tar.extractfile(member)
            assert extracted is not None
            files[member.name.lstrip("/")] = extracted.read().decode()
    files["acme/data.json"] = json.dumps({"budget_usd": 1_000_000})
    server.body = make_bundle(files)
    with pytest.raises(PolicyError, match="does not match its signed hash") as raised:
        resolve(signed_source(server), tmp_path, cache_dir=cache)
    assert str(raised.value).startswith(f"{server.url()} (downloaded): ")
    assert not [p for p in cache.iterdir() if not p.name.startswith(".")]


def test_tampered_signed_cache_is_refused_offline(
    server: Served, signed: tuple[bytes, Path], cache: Path, tmp_path: Path
) -> None:
    server.body = signed[0]
    path = resolve(signed_source(server), tmp_path, cache_dir=cache)
    _tamper(path)
    with pytest.raises(PolicyError, match="does not match its recorded sha256"):
        resolve(signed_source(server), tmp_path, cache_dir=cache, offline=True)


def test_signed_and_pinned_path_source(signed: tuple[bytes, Path], tmp_path: Path) -> None:
    source = PackSource.model_validate(
        {"path": "signed.tar.gz", "sha256": sha256(signed[0]), "public-key": "keys/acme.pem"}
    )
    assert resolve(source, tmp_path, cache_dir=tmp_path / "cache") == tmp_path / "signed.tar.gz"
    (tmp_path / "signed.tar.gz").write_bytes(make_bundle(BUNDLE_FILES))
    with pytest.raises(PolicyError, match="sha256 mismatch"):
        resolve(source, tmp_path, cache_dir=tmp_path / "cache")


def test_replaced_signed_cache_with_its_meta_is_refused_by_the_signature(
    server: Served, signed: tuple[bytes, Path], cache: Path, tmp_path: Path
) -> None:
    server.body = signed[0]
    path = resolve(signed_source(server), tmp_path, cache_dir=cache)
    forged = make_bundle(BUNDLE_FILES)
    path.write_bytes(forged)
    meta = path.with_name(path.name.replace(".tar.gz", ".json"))
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "sha256": sha256(forged)}))
    with pytest.raises(PolicyError, match="not signed"):
        resolve(signed_source(server), tmp_path, cache_dir=cache, offline=True)


def test_unwritable_cache_is_a_clear_error(server: Served, tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    with pytest.raises(PolicyError, match="cannot write the cache in"):
        resolve(pinned(server), tmp_path, cache_dir=blocked / "packs")
