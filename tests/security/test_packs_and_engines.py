"""Issue 15, hostile packs: policy code sees no environment, makes no network call and runs in
bounded time and memory; a later pack cannot remove locks or replace another pack's modules,
packages or data; pack downloads and pack JSON are bounded before they allocate; the OPA token
never travels over plain http to another host.

Servers are real (127.0.0.1); engines are the real regorus and regopy, each where installed.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
import threading
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES
from trainlint.cli import main
from trainlint.engine import available_engines, create_engine, watchdog
from trainlint.engine.rego_tests import run_rego_tests
from trainlint.errors import ConfigError, PolicyError
from trainlint.lint import check
from trainlint.packs import Pack, load_builtin_pack, load_pack
from trainlint.packs.fetch import resolve
from trainlint.packs.layering import layer
from trainlint.packs.signing import verify_bundle
from trainlint.packs.sources import PackSource

ENGINES = available_engines()
BUILTIN = load_builtin_pack()
SECRET = "s3cr3t-from-the-environment"


# --- helpers ------------------------------------------------------------------------------


def rule_module(body: str, slug: str = "sample-rule", rule_id: str = "X001") -> str:
    """A rule module whose findings are ``body`` (Rego, after ``findings contains``)."""
    package = slug.replace("-", "_")
    return (
        f"# METADATA\n# title: {slug}\n# description: A sample.\n# custom:\n#   id: {rule_id}\n"
        "#   severity: warning\n#   category: governance\n#   remediation: Do the other thing.\n"
        f"package trainlint.rules.{package}\n\nimport rego.v1\n\nfindings contains {body}\n"
    )


def write_pack(root: Path, files: dict[str, str], name: str | None = None) -> Path:
    """A pack directory holding ``files``; ``name`` goes in the manifest when given."""
    root.mkdir(parents=True, exist_ok=True)
    if name is not None:
        (root / ".manifest").write_text(json.dumps({"metadata": {"name": name}}))
    for file, text in files.items():
        (root / file).parent.mkdir(parents=True, exist_ok=True)
        (root / file).write_text(text)
    return root


def compile_and_run(engine: str, pack: Pack, job: dict[str, Any] | None = None) -> Any:
    compiled = create_engine(engine, pack)
    try:
        return compiled.evaluate(job or {})
    finally:
        close = getattr(compiled, "close", None)
        if close is not None:
            close()


@dataclass
class Recorder:
    """A real HTTP server on 127.0.0.1 that answers with ``body`` and ``headers``."""

    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    port: int = 0


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    state = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            state.requests.append((self.path, self.headers.get("Authorization")))
            self.send_response(200)
            for key, value in state.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(state.body)))
            self.end_headers()
            self.wfile.write(state.body)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


def tar_gz(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def zeros_gzipped(size: int) -> bytes:
    """``size`` zero bytes, gzipped in pieces (never all in memory)."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as zipped:
        block = bytes(1 << 20)
        for _ in range(size // len(block)):
            zipped.write(block)
    return out.getvalue()


# --- 1. no environment, no network, no terminal --------------------------------------------

READ_ENV = [
    "opa.runtime().env.TRAINLINT_TEST_SECRET",
    'opa["runtime"]().env.TRAINLINT_TEST_SECRET',
    "opa[`runtime`]().env.TRAINLINT_TEST_SECRET",
    "opa. # a comment\n    runtime().env.TRAINLINT_TEST_SECRET",
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("read", READ_ENV)
def test_policy_code_cannot_read_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, read: str
) -> None:
    monkeypatch.setenv("TRAINLINT_TEST_SECRET", SECRET)
    body = f'{{"message": m, "pointer": ""}} if {{\n    m := {read}\n}}'
    pack = load_pack(write_pack(tmp_path / "leak", {"leak.rego": rule_module(body)}))
    with pytest.raises(PolicyError, match=r"opa\.runtime, which trainlint refuses") as raised:
        compile_and_run(engine, pack)
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "call", ['http.send({{"method": "get", "url": "{url}"}})', 'net.lookup_ip_addr("localhost")']
)
def test_policy_code_makes_no_network_call(
    tmp_path: Path, recorder: Recorder, engine: str, call: str
) -> None:
    url = f"http://127.0.0.1:{recorder.port}/exfiltrate"
    body = f'{{"message": "m", "pointer": ""}} if {{\n    {call.format(url=url)}\n}}'
    pack = load_pack(write_pack(tmp_path / "net", {"net.rego": rule_module(body)}))
    with pytest.raises(PolicyError, match=r"which trainlint refuses: policy code sees no"):
        compile_and_run(engine, pack)
    assert recorder.requests == []


class _Probe:
    """Built inside a confined worker: reports what the worker can see and prints."""

    def look(self) -> dict[str, Any]:
        os.write(1, b"PROBE-STDOUT\n")
        os.write(2, b"PROBE-STDERR\n")
        return {"environ": dict(os.environ)}


def test_a_confined_worker_has_no_environment_and_no_terminal(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRAINLINT_TEST_SECRET", SECRET)
    worker = watchdog.Worker("probe", _Probe)
    try:
        assert worker.call("look") == {"environ": {}}
    finally:
        worker.close()
    captured = capfd.readouterr()
    assert "PROBE" not in captured.out + captured.err
    assert os.environ["TRAINLINT_TEST_SECRET"] == SECRET  # the parent keeps its own


@pytest.mark.parametrize("engine", ENGINES)
def test_rego_print_never_reaches_the_report_stream(
    tmp_path: Path, engine: str, capfd: pytest.CaptureFixture[str]
) -> None:
    body = '{"message": "m", "pointer": ""} if {\n    print("::error ::PACK-PRINT")\n}'
    pack = load_pack(write_pack(tmp_path / "printer", {"printer.rego": rule_module(body)}))
    assert compile_and_run(engine, pack)["sample_rule"] == [{"message": "m", "pointer": ""}]
    captured = capfd.readouterr()
    assert "PACK-PRINT" not in captured.out + captured.err


def test_the_shipped_pack_passes_the_capability_check_and_stays_in_process() -> None:
    from trainlint.engine.capabilities import refuse_denied_calls

    refuse_denied_calls({**BUILTIN.modules, **BUILTIN.tests})
    for engine in ENGINES:
        assert not isinstance(create_engine(engine, BUILTIN), watchdog.Worker)


# --- the OPA token -------------------------------------------------------------------------


def test_the_opa_token_never_goes_over_plain_http_to_another_host(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trainlint.engine.opa_backend import check_url

    monkeypatch.setenv("TRAINLINT_OPA_TOKEN", SECRET)
    # 0.0.0.0 reaches this machine's 127.0.0.1 server, but it is not a loopback name: refused.
    with pytest.raises(ConfigError, match=r"plain http:// is accepted only for a loopback"):
        create_engine("opa", BUILTIN, opa_url=f"http://0.0.0.0:{recorder.port}")
    with pytest.raises(ConfigError, match=r"use https://"):
        create_engine("opa", BUILTIN, opa_url="http://opa.example.com:8181/?token=x")
    assert recorder.requests == []
    for url in ("https://opa.example.com", "http://localhost:8181", "http://127.0.0.5:1",
                "http://[::1]:8181"):  # fmt: skip
        check_url(url)


def test_the_cli_refuses_a_plain_http_opa_url_with_exit_2(in_tmp: Path) -> None:
    (in_tmp / "train.sh").write_text("#!/bin/bash\ntorchrun --nproc_per_node 8 train.py\n")
    result = CliRunner().invoke(
        main, ["check", "train.sh", "--engine", "opa", "--opa-url", "http://10.1.2.3:8181"]
    )
    assert result.exit_code == 2, result.output
    assert "loopback" in result.output


# --- 2. locked parameters survive a later pack ---------------------------------------------

ACME_FILES = {
    "trainlint/params/checkpoint_too_frequent/data.json": '{"max_overhead_fraction": 0.03}',
    "trainlint/locks/data.json": json.dumps(
        {"params": {"checkpoint_too_frequent.max_overhead_fraction": "max"}}
    ),
}


def test_a_later_pack_replacing_a_locked_group_is_tl906_and_keeps_the_lock(
    tmp_path: Path,
) -> None:
    acme = load_pack(write_pack(tmp_path / "acme", ACME_FILES))
    team = load_pack(
        write_pack(
            tmp_path / "team",
            {"trainlint/params/data.json": '{"checkpoint_too_frequent": "off"}'},
        )
    )
    pack, _, violations = layer([BUILTIN, acme, team])
    params = pack.data["trainlint"]["params"]["checkpoint_too_frequent"]
    assert params["max_overhead_fraction"] == 0.03
    assert set(params) == set(BUILTIN.data["trainlint"]["params"]["checkpoint_too_frequent"])
    (violation,) = violations
    assert violation.lock == "params.checkpoint_too_frequent.max_overhead_fraction"
    assert violation.where == "pack 'team'" and "not an object" in violation.detail


def test_locked_tl201_still_fires_and_tl906_is_reported_end_to_end(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(EXAMPLES / "llama3-sft", in_tmp / "repo")
    repo = in_tmp / "repo"
    write_pack(repo / "acme", ACME_FILES, name="acme")
    write_pack(repo / "team", {"trainlint/params/data.json": '{"checkpoint_too_frequent": "off"}'})
    config = '[[packs]]\npath = "acme"\n\n[[packs]]\npath = "team"\n'
    (repo / ".trainlint.toml").write_text(config)
    monkeypatch.chdir(repo)
    report = check([Path(".")])
    rules = [finding.rule for finding in report.findings]
    assert "TL201" in rules and "TL906" in rules


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"trainlint": "x"}, r"data\.trainlint is a string"),
        ({"trainlint": {"params": []}}, r"data\.trainlint\.params is a list"),
        ({"trainlint": {"locks": "none"}}, r"data\.trainlint\.locks is a string"),
        ({"trainlint": {"params": {"log_every_step": {"max_every_steps": "often"}}}},
         r"params\.log_every_step\.max_every_steps: 'often' is not the kind of value 1 is"),
        ({"trainlint": {"params": {"no_fallback": {"fallbacks": {"fp8": 16}}}}},
         r"params\.no_fallback\.fallbacks: .* is not the kind of value"),
        ({"trainlint": {"params": {"log_every_step": "off"}}},
         r"replaces params\.log_every_step with a string \('off'\)"),
        ({"trainlint": {"params": {"brand_new": 3}}}, r"params\.brand_new with a number"),
    ],
)  # fmt: skip
def test_pack_data_of_the_wrong_kind_is_a_policy_error(
    tmp_path: Path, data: dict[str, Any], message: str
) -> None:
    team = write_pack(tmp_path / "team", {"data.json": json.dumps(data)})
    with pytest.raises(PolicyError, match=message):
        layer([BUILTIN, load_pack(team)])


def test_a_later_pack_cannot_replace_an_earlier_packs_data(tmp_path: Path) -> None:
    acme = load_pack(write_pack(tmp_path / "acme", {"acme/data.json": '{"regions": ["eu"]}'}))
    team = load_pack(write_pack(tmp_path / "team", {"acme/data.json": '{"regions": []}'}))
    with pytest.raises(PolicyError, match=r"data at /acme/regions is already set"):
        layer([BUILTIN, acme, team])


def test_a_later_pack_cannot_loosen_the_locks_kept_in_layered_data(tmp_path: Path) -> None:
    acme = load_pack(write_pack(tmp_path / "acme", ACME_FILES))
    loose = {"params": {"checkpoint_too_frequent.max_overhead_fraction": "min"}}
    team = load_pack(
        write_pack(
            tmp_path / "team",
            {
                "trainlint/locks/data.json": json.dumps(loose),
                "trainlint/params/checkpoint_too_frequent/data.json": ACME_FILES[
                    "trainlint/params/checkpoint_too_frequent/data.json"
                ],
            },
        )
    )
    pack, locks, _ = layer([BUILTIN, acme, team])
    kept = pack.data["trainlint"]["locks"]["params"]
    assert kept["checkpoint_too_frequent.max_overhead_fraction"] == "max"
    relayered = layer([pack])[1]  # the layered pack layered again (pack test, then a repo)
    assert relayered.params["checkpoint_too_frequent.max_overhead_fraction"].direction == "max"
    assert locks.params["checkpoint_too_frequent.max_overhead_fraction"].pack == "acme"


# --- 3. modules, packages and names are each pack's own -----------------------------------

SILENT_FMT = """package trainlint.lib.fmt

import rego.v1

usd(_) := x if false

gpu_hours(_) := x if false
"""


@pytest.mark.parametrize("source", [SILENT_FMT, "package acme.fmt\n"])
def test_a_pack_named_lib_cannot_replace_the_builtin_helpers(tmp_path: Path, source: str) -> None:
    lib = write_pack(tmp_path / "lib", {"fmt.rego": source})
    with pytest.raises(PolicyError, match=r"module 'lib/fmt\.rego' would replace a module"):
        layer([BUILTIN, load_pack(lib)])


def test_a_pack_named_lib_is_an_error_end_to_end_not_missing_findings(in_tmp: Path) -> None:
    shutil.copytree(EXAMPLES / "llama3-sft", in_tmp / "repo")
    repo = in_tmp / "repo"
    write_pack(repo / "lib", {"fmt.rego": SILENT_FMT})
    (repo / ".trainlint.toml").write_text('[[packs]]\npath = "lib"\n')
    result = CliRunner().invoke(main, ["check", str(repo)])
    assert result.exit_code == 2, result.output
    assert "would replace a module" in result.output


@pytest.mark.parametrize(
    "package",
    ["trainlint.lib.fmt", "trainlint.lib", "trainlint.rules", "trainlint",
     "trainlint.lib.fmt.extra", "trainlint.rules.checkpoint_too_frequent.sample_rule"],
)  # fmt: skip
def test_a_pack_cannot_add_rules_to_another_packs_packages(tmp_path: Path, package: str) -> None:
    source = f"package {package}\n\nimport rego.v1\n\nexempt := true\n"
    if package.startswith("trainlint.rules."):  # a rule module: it needs its METADATA
        source = rule_module("{}").replace("package trainlint.rules.sample_rule", source)
    other = write_pack(tmp_path / "other", {"x.rego": source})
    with pytest.raises(PolicyError, match=r"overlaps (package|data)"):
        layer([BUILTIN, load_pack(other)])


@pytest.mark.parametrize(
    "package",
    ["trainlint.params", "trainlint.params.checkpoint_too_frequent", "trainlint.locks.rules",
     "trainlint.params.new_group"],
)  # fmt: skip
def test_a_package_cannot_shadow_the_layered_params(tmp_path: Path, package: str) -> None:
    # regopy lets a rule shadow data: this would replace the locked value with 100
    source = f"package {package}\n\nimport rego.v1\n\nmax_overhead_fraction := 100\n"
    acme = load_pack(write_pack(tmp_path / "acme", ACME_FILES))
    shadow = load_pack(write_pack(tmp_path / "shadow", {"x.rego": source}))
    with pytest.raises(PolicyError, match=r"overlaps"):
        layer([BUILTIN, acme, shadow])


def test_data_cannot_shadow_an_earlier_packs_package(tmp_path: Path) -> None:
    rules = write_pack(tmp_path / "team", {"trainlint/rules/no_seed/data.json": '{"x": 1}'})
    with pytest.raises(PolicyError, match=r"overlaps package trainlint\.rules\.no_seed"):
        layer([BUILTIN, load_pack(rules)])


def test_a_pack_named_like_the_org_pack_is_refused(tmp_path: Path) -> None:
    acme = load_pack(write_pack(tmp_path / "acme", ACME_FILES, name="acme"))
    fake = load_pack(write_pack(tmp_path / "fake", {"notes/data.json": "{}"}, name="acme"))
    with pytest.raises(PolicyError, match=r"two packs are named 'acme'"):
        layer([BUILTIN, acme, fake])


@pytest.mark.parametrize("engine", ENGINES)
def test_the_engine_package_is_reserved(tmp_path: Path, engine: str) -> None:
    source = 'package trainlint_engine\n\nimport rego.v1\n\n_by_rule[k] := [] if k := "x"\n'
    pack = load_pack(write_pack(tmp_path / "sneaky", {"x.rego": source}))
    with pytest.raises(PolicyError, match=r"reserved for trainlint's engine"):
        compile_and_run(engine, pack)


# --- 6. pack downloads are bounded while they arrive ---------------------------------------


def test_a_double_gzip_content_encoding_is_refused_before_it_inflates(
    recorder: Recorder, tmp_path: Path
) -> None:
    recorder.body = gzip_bytes(zeros_gzipped(128 << 20))  # 128 MiB in a few hundred bytes
    recorder.headers = {"Content-Encoding": "gzip, gzip"}
    source = PackSource(url=f"http://127.0.0.1:{recorder.port}/p.tar.gz", sha256="0" * 64)
    tracemalloc.start()
    try:
        with pytest.raises(PolicyError, match=r"unsupported Content-Encoding 'gzip, gzip'"):
            resolve(source, tmp_path, cache_dir=tmp_path / "cache")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_a_gzip_content_encoding_is_capped_while_it_inflates(
    recorder: Recorder, tmp_path: Path
) -> None:
    recorder.body = zeros_gzipped(64 << 20)  # 64 MiB of zeros, ~64 KiB on the wire
    recorder.headers = {"Content-Encoding": "gzip"}
    source = PackSource(url=f"http://127.0.0.1:{recorder.port}/p.tar.gz", sha256="0" * 64)
    tracemalloc.start()
    try:
        with pytest.raises(PolicyError, match=r"larger than 4194304 bytes"):
            resolve(source, tmp_path, cache_dir=tmp_path / "cache", max_bytes=4 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20  # the cap and a chunk, not the 64 MiB the coding holds


def test_a_gzip_encoded_bundle_is_decoded_once_and_pinned_as_decoded(
    recorder: Recorder, tmp_path: Path
) -> None:
    bundle = tar_gz({"acme/data.json": b'{"budget": 1}', ".manifest": b'{"roots": ["acme"]}'})
    recorder.body = gzip_bytes(bundle)
    recorder.headers = {"Content-Encoding": "gzip"}
    pin = hashlib.sha256(bundle).hexdigest()
    source = PackSource(url=f"http://127.0.0.1:{recorder.port}/p.tar.gz", sha256=pin)
    path = resolve(source, tmp_path, cache_dir=tmp_path / "cache")
    assert path.read_bytes() == bundle
    assert load_pack(path).data == {"acme": {"budget": 1}}


def test_a_local_pinned_bundle_is_hashed_no_further_than_the_cap(tmp_path: Path) -> None:
    big = tmp_path / "big.tar.gz"
    with big.open("wb") as out:
        out.truncate(8 << 20)
    source = PackSource(path=str(big), sha256="0" * 64)
    with pytest.raises(PolicyError, match=r"larger than 1048576 bytes"):
        resolve(source, tmp_path, cache_dir=tmp_path / "cache", max_bytes=1 << 20)


# --- 7. compiling and evaluating an untrusted pack is bounded ------------------------------


@pytest.mark.slow  # waits out a 1 s compile timeout
@pytest.mark.skipif("regorus" not in ENGINES, reason="regorus is not installed")
def test_compiling_a_pack_is_bounded_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watchdog, "EVAL_TIMEOUT_S", 1.0)
    depth = 30  # each level doubles regorus's parse time: 18 levels take seconds, 26 forever
    nested = "[" * depth + "1" + "]" * depth
    body = f'{{"message": "m", "pointer": ""}} if {{\n    count({nested}) > 5\n}}'
    pack = load_pack(write_pack(tmp_path / "deep", {"deep.rego": rule_module(body)}))
    with pytest.raises(PolicyError, match=r"compiling the pack did not finish within 1 s"):
        create_engine("regorus", pack)


@pytest.mark.parametrize("engine", ENGINES)
def test_evaluation_memory_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    monkeypatch.setattr(watchdog, "EVAL_MEMORY_BYTES", 256 << 20)
    body = (
        '{"message": "m", "pointer": ""} if {\n    input.big\n'
        "    count(numbers.range(1, 30000000)) > 0\n}\n\n"
        'findings contains {"message": "small", "pointer": ""} if input.small'
    )
    pack = load_pack(write_pack(tmp_path / "hog", {"hog.rego": rule_module(body)}))
    compiled = create_engine(engine, pack)
    assert isinstance(compiled, watchdog.GuardedEngine)
    try:
        with pytest.raises(PolicyError, match=r"memory limit"):
            compiled.evaluate({"big": True})
        # the next job gets a fresh worker
        assert compiled.evaluate({"small": True}) == {
            "sample_rule": [{"message": "small", "pointer": ""}]
        }
    finally:
        compiled.close()


@pytest.mark.slow  # waits out a 1 s timeout (tests/test_robustness.py has a fast one)
@pytest.mark.skipif("regorus" not in ENGINES, reason="pack tests run on regorus")
def test_a_pack_test_that_never_finishes_fails_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watchdog, "EVAL_TIMEOUT_S", 1.0)
    tests = (
        "package acme.slow_test\n\nimport rego.v1\n\n"
        "test_slow if {\n    n := numbers.range(1, 99999)\n"
        "    count([1 | some i in n; some j in n; i == 0 - j]) > 0\n}\n\n"
        "test_quick if true\n"
    )
    pack = load_pack(write_pack(tmp_path / "acme", {"slow_test.rego": tests}))
    slow, quick = run_rego_tests(pack)
    assert not slow.passed and "did not finish within 1 s" in (slow.error or "")
    assert quick.passed


def test_pack_tests_may_not_read_the_environment(tmp_path: Path) -> None:
    tests = "package acme.env_test\n\nimport rego.v1\n\ntest_env if opa.runtime().env\n"
    pack = load_pack(write_pack(tmp_path / "acme", {"env_test.rego": tests}))
    with pytest.raises(PolicyError, match=r"env_test\.rego:5: calls opa\.runtime"):
        run_rego_tests(pack)


# --- 12. pack JSON and paths nest within limits --------------------------------------------

DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("data.json", '{"a": ' + DEEP + "}"),
        ("acme/data.json", DEEP),
        (".manifest", '{"metadata": {"x": ' + DEEP + "}}"),
        ("data.json", '{"n": ' + "9" * 5000 + "}"),
        ("data.json", '{"n": NaN}'),
    ],
)
def test_pack_json_that_nests_too_deep_is_a_policy_error(
    tmp_path: Path, file: str, text: str
) -> None:
    pack = write_pack(tmp_path / "deep", {file: text})
    with pytest.raises(PolicyError, match=r"nests deeper than|invalid JSON"):
        load_pack(pack)


def test_deep_pack_json_exits_2_not_3(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "deep", {"data.json": '{"a": ' + DEEP + "}"})
    result = CliRunner().invoke(main, ["pack", "inspect", str(pack)])
    assert result.exit_code == 2, result.output
    assert "nests deeper than" in result.output


def test_data_nesting_counts_the_folders_of_its_data_json(tmp_path: Path) -> None:
    folders = "/".join(["d"] * 20)
    nested = "[" * 50 + "]" * 50  # 20 folders + 50 levels: past the 64 levels data may nest
    pack = write_pack(tmp_path / "deep", {f"{folders}/data.json": nested})
    with pytest.raises(PolicyError, match=r"nests deeper than 44 levels"):
        load_pack(pack)


def test_a_bundle_nesting_thousands_of_folders_is_refused(tmp_path: Path) -> None:
    name = "/".join(["d"] * 5000) + "/data.json"
    archive = tmp_path / "deep.tar.gz"
    archive.write_bytes(tar_gz({name: b"{}"}))
    with pytest.raises(PolicyError, match=r"nests deeper than 32 folders"):
        load_pack(archive)
    folder = tmp_path / "tree"
    (folder / "/".join(["d"] * 40)).mkdir(parents=True)
    (folder / "/".join(["d"] * 40) / "data.json").write_text("{}")
    with pytest.raises(PolicyError, match=r"nests folders deeper than the limit"):
        load_pack(folder)


def test_deep_signatures_are_a_policy_error(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "signed", {".signatures.json": '{"signatures": ' + DEEP + "}"})
    with pytest.raises(PolicyError, match=r"nests deeper than"):
        verify_bundle(pack, b"secret", algorithm="HS256")
    deep_header = base64.urlsafe_b64encode(('{"a": ' + DEEP + "}").encode()).rstrip(b"=")
    token = deep_header.decode() + ".e30.c2ln"  # the header nests; "{}" payload; a signature
    (pack / ".signatures.json").write_text(json.dumps({"signatures": [token]}))
    with pytest.raises(PolicyError, match=r"malformed JWT"):
        verify_bundle(pack, b"secret", algorithm="HS256")
