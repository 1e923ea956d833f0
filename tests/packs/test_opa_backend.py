"""The OPA server backend gives the embedded engine's findings, through OPA's REST Data API.

The server is a stand-in (tests/packs/opa_server.py) that implements ``POST /v1/data/<path>``
over regorus on 127.0.0.1, so what is tested is the wire format and the error handling.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES
from tests.engine.test_backends import JOBS
from tests.packs.opa_server import OpaServer, serve
from trainlint.cli import main
from trainlint.engine import ENGINES, available_engines, create_engine
from trainlint.engine.opa_backend import OpaEngine, data_path, redact
from trainlint.errors import PolicyError
from trainlint.lint import CheckOptions, check
from trainlint.packs import load_builtin_pack


@pytest.fixture(scope="module")
def opa() -> Iterator[tuple[str, OpaServer]]:
    with serve(load_builtin_pack()) as running:
        yield running


@pytest.fixture
def server(opa: tuple[str, OpaServer]) -> Iterator[OpaServer]:
    """The shared server, with its failure behaviour reset after each test."""
    yield opa[1]
    opa[1].behaviour.status = None
    opa[1].behaviour.body = None
    opa[1].behaviour.delay_s = 0.0
    opa[1].behaviour.requests.clear()


@pytest.fixture(scope="module")
def url(opa: tuple[str, OpaServer]) -> str:
    return opa[0]


def test_registered_as_a_remote_engine() -> None:
    assert ENGINES["opa"].remote
    assert "opa" not in available_engines()
    with pytest.raises(PolicyError, match="--opa-url"):
        create_engine("opa", load_builtin_pack())


@pytest.mark.parametrize("job", JOBS, ids=lambda job: job["id"])
def test_parity_with_regorus_on_the_backend_jobs(job: dict[str, Any], url: str) -> None:
    pack = load_builtin_pack()
    remote = create_engine("opa", pack, opa_url=url)
    assert remote.evaluate(job) == create_engine("regorus", pack).evaluate(job)


def test_parity_with_regorus_on_the_examples(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    local = check([Path("examples")], CheckOptions(engine_name="regorus"))
    remote = check([Path("examples")], CheckOptions(engine_name="opa", opa_url=url))
    assert not remote.errors
    assert remote.findings, "the examples have findings, so parity means something"
    assert [f.model_dump() for f in remote.findings] == [f.model_dump() for f in local.findings]


def test_sends_the_job_as_input_to_the_rules_document(url: str, server: OpaServer) -> None:
    engine = OpaEngine(load_builtin_pack(), url + "/")
    server.behaviour.requests.clear()
    engine.evaluate(JOBS[0])
    path, headers = server.behaviour.requests[-1]
    assert path == "/v1/data/trainlint/rules"
    assert headers["Content-Type"] == "application/json"
    assert "Authorization" not in headers


def test_bearer_token_from_the_environment(
    url: str, server: OpaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINLINT_OPA_TOKEN", "s3cret-token")
    OpaEngine(load_builtin_pack(), url)
    assert server.behaviour.requests[-1][1]["Authorization"] == "Bearer s3cret-token"


def test_query_reads_any_document_and_undefined_is_none(url: str) -> None:
    engine = OpaEngine(load_builtin_pack(), url)
    assert engine.query({}, "data.no.such.package") is None
    value = engine.query({}, "data.trainlint.params.checkpoint_too_frequent")
    assert value == create_engine("regorus", load_builtin_pack()).query(
        {}, "data.trainlint.params.checkpoint_too_frequent"
    )


def test_undefined_rules_document_means_no_findings(url: str, server: OpaServer) -> None:
    engine = OpaEngine(load_builtin_pack(), url)
    server.behaviour.body = b"{}"  # OPA: 200 without "result" when the path is undefined
    assert engine.evaluate(JOBS[0]) == {}


def test_http_error_names_the_url_and_the_server_message(url: str, server: OpaServer) -> None:
    server.behaviour.status = 500
    with pytest.raises(PolicyError) as error:
        OpaEngine(load_builtin_pack(), url)
    message = str(error.value)
    assert f"{url}/v1/data/trainlint/rules: HTTP 500: policy engine exploded" in message


def test_not_json_is_an_error(url: str, server: OpaServer) -> None:
    server.behaviour.body = b"<html>proxy login</html>"
    with pytest.raises(PolicyError, match="not JSON"):
        OpaEngine(load_builtin_pack(), url)
    server.behaviour.body = b"[1, 2]"
    with pytest.raises(PolicyError, match="JSON object"):
        OpaEngine(load_builtin_pack(), url)


def test_timeout(url: str, server: OpaServer) -> None:
    server.behaviour.delay_s = 1.0
    with pytest.raises(PolicyError, match=r"no answer within 0\.2 s"):
        OpaEngine(load_builtin_pack(), url, timeout=0.2)


def test_connection_refused_hides_credentials() -> None:
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    secret_url = f"http://admin:hunter2@127.0.0.1:{port}/?token=abc123"
    with pytest.raises(PolicyError) as error:
        OpaEngine(load_builtin_pack(), secret_url)
    message = str(error.value)
    assert f"http://127.0.0.1:{port}/v1/data/trainlint/rules" in message
    assert "cannot connect" in message
    assert "hunter2" not in message and "admin" not in message and "abc123" not in message


def test_rejects_a_url_that_is_not_http() -> None:
    with pytest.raises(PolicyError, match="not an http"):
        OpaEngine(load_builtin_pack(), "ftp://user:pw@host/x")


def test_redact_and_data_path() -> None:
    assert redact("https://u:p@opa.example:8181/base?x=1#f") == "https://opa.example:8181/base"
    assert redact("http://[::1]:8181") == "http://[::1]:8181"
    assert data_path("data.main.deny_fp32") == "main/deny_fp32"
    with pytest.raises(PolicyError):
        data_path("input.x")


def test_cli_engine_opa(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    runner = CliRunner()
    local = runner.invoke(main, ["check", "examples", "--format", "json"])
    remote = runner.invoke(main, ["check", "examples", "--format", "json", "--engine", "opa",
                                  "--opa-url", url])  # fmt: skip
    assert remote.exit_code == local.exit_code == 1, remote.output
    assert remote.output == local.output


def test_cli_usage_errors() -> None:
    runner = CliRunner()
    missing = runner.invoke(main, ["check", "examples", "--engine", "opa"])
    assert missing.exit_code == 2
    assert "--engine opa needs --opa-url" in missing.output
    stray = runner.invoke(main, ["check", "examples", "--opa-url", "http://127.0.0.1:1"])
    assert stray.exit_code == 2
    assert "--opa-url is only used with --engine opa" in stray.output


def test_cli_unreachable_server_is_a_policy_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(
        main, ["check", "examples", "--engine", "opa", "--opa-url", f"http://127.0.0.1:{port}"]
    )
    assert result.exit_code == 2
    assert "cannot connect" in result.output
