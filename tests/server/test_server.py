"""``trainlint server`` driven over stdio as an editor drives it (tests/server/client.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.server.client import WAIT_S, Client

EXAMPLE = REPO / "examples" / "llama3-sft"
GRES_LINE = 3  # 0-based: "#SBATCH --gres=gpu:h100:8"
NCCL_LINE = 13  # 0-based: "export NCCL_DEBUG=INFO"


@pytest.fixture
def client(tmp_path: Path) -> Client:
    return Client(tmp_path)


def test_acceptance_open_hover_code_action_shutdown(client: Client) -> None:
    """initialize → didOpen train.slurm → diagnostics with TL codes → hover on the GPU line
    shows memory and cost → a code action on a finding → shutdown and exit."""
    client.start(EXAMPLE)
    script = EXAMPLE / "train.slurm"
    uri = client.open(script)

    found = client.diagnostics(uri)
    codes = {d["code"] for d in found}
    assert {"TL302", "TL201", "TL401"} <= codes
    assert all(d["source"] == "trainlint" for d in found)
    nccl = next(d for d in found if d["code"] == "TL302")
    assert nccl["range"]["start"] == {"line": NCCL_LINE, "character": 7}
    assert nccl["severity"] in (1, 2, 3)

    hover = client.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": GRES_LINE, "character": 12}},
    )
    text = hover["contents"]["value"]
    assert "memory per GPU" in text and "$ per run" in text
    assert "step time" in text

    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": nccl["range"],
            "context": {"diagnostics": [nccl]},
        },
    )
    titles = [action["title"] for action in actions]
    assert any("Suppress TL302" in title for title in titles)
    suppress = next(a for a in actions if "Suppress TL302" in a["title"])
    (edit,) = suppress["edit"]["changes"][uri]
    assert edit["newText"].startswith("  # trainlint: ignore[TL302] ")
    assert edit["range"]["start"]["line"] == NCCL_LINE

    assert client.close() == 0


def test_unsaved_buffers_are_checked_as_part_of_their_job(client: Client, tmp_path: Path) -> None:
    """A config open with unsaved text is what the job is checked with: the finding its file
    shows on disk goes away, in the config and in the script that launches it; closed unsaved,
    the file on disk counts again."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE, work)
    client.start(work)
    script_uri = client.open(work / "train.slurm")
    assert "TL301" not in {d["code"] for d in client.diagnostics(script_uri)}
    config = work / "configs" / "sft.yaml"
    assert "TL301" in {d["code"] for d in client.diagnostics(config.as_uri())}

    edited = config.read_text().replace("logging_steps: 1\n", "logging_steps: 50\n")
    client.open(config, edited)
    assert "TL301" not in {d["code"] for d in client.diagnostics(config.as_uri())}

    script = (work / "train.slurm").read_text()
    change = {"text": script.replace("--save_steps 10 ", "--save_steps 1000 ")}
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": script_uri, "version": 2}, "contentChanges": [change]},
    )
    after = client.settled(script_uri, lambda codes: "TL201" not in codes)
    assert "TL302" in after
    assert config.read_text().count("logging_steps: 1\n") == 1  # nothing written to disk

    client.notify("textDocument/didClose", {"textDocument": {"uri": config.as_uri()}})
    client.settled(config.as_uri(), lambda codes: "TL301" in codes)  # the disk's again
    assert client.close() == 0


@pytest.mark.slow  # a server process of its own; the acceptance test covers the area
def test_without_pygls_the_command_says_what_to_install(tmp_path: Path) -> None:
    """``trainlint server`` where pygls is not installed (import blocked): exit 2 and the
    extra to install, not a traceback."""
    blocked = (
        "import sys; sys.modules['pygls'] = None; from trainlint.cli import run; "
        "sys.argv = ['trainlint', 'server']; run()"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", blocked], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=WAIT_S, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "pip install 'trainlint[server]'" in done.stderr


@pytest.mark.slow  # a server process of its own; the acceptance test covers the area
def test_positions_are_counted_in_utf16_as_lsp_clients_count(
    client: Client, tmp_path: Path
) -> None:
    """A character outside the BMP before a finding on its line is one character to trainlint
    and two UTF-16 units to the client: the diagnostic and the suppress edit say two."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE, work)
    script = work / "train.slurm"
    line = ': "\N{ROCKET}"; export NCCL_DEBUG=INFO'
    script.write_text(script.read_text().replace("export NCCL_DEBUG=INFO", line))
    client.start(work)
    uri = client.open(script)
    nccl = next(d for d in client.diagnostics(uri) if d["code"] == "TL302")
    units = line.index("NCCL") + 1  # the rocket is two UTF-16 units
    assert nccl["range"]["start"] == {"line": NCCL_LINE, "character": units}
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": nccl["range"], "context": {"diagnostics": []}},
    )
    (edit,) = next(a for a in actions if "Suppress TL302" in a["title"])["edit"]["changes"][uri]
    assert edit["range"]["start"]["character"] == len(line.encode("utf-16-le")) // 2
    assert client.close() == 0


@pytest.mark.slow  # a server process of its own; the acceptance test covers the area
def test_only_changed_diagnostics_are_sent_again(client: Client) -> None:
    """A second check that changes nothing re-sends the open files' diagnostics only: the
    config's, unchanged and not open, are not sent again (messages arrive in order, so
    everything the second open published is in before the hover's answer)."""
    client.start(EXAMPLE)
    script_uri = client.open(EXAMPLE / "train.slurm")
    config_uri = (EXAMPLE / "configs" / "sft.yaml").as_uri()
    client.diagnostics(script_uri)
    assert "TL301" in {d["code"] for d in client.diagnostics(config_uri)}
    deepspeed_uri = client.open(EXAMPLE / "configs" / "ds_zero3.json")
    untitled = {"uri": "untitled:Untitled-1", "languageId": "yaml", "version": 1, "text": "a: 1"}
    client.notify("textDocument/didOpen", {"textDocument": untitled})  # no file: not checked
    client.request(
        "textDocument/hover",
        {"textDocument": {"uri": script_uri}, "position": {"line": 0, "character": 0}},
    )
    sent = [m["params"]["uri"] for m in client.seen if m.get("method", "").endswith("Diagnostics")]
    assert deepspeed_uri in sent and script_uri in sent
    assert config_uri not in sent
    assert not [uri for uri in sent if uri.endswith("Untitled-1")]
    assert client.close() == 0


@pytest.mark.slow  # a server process of its own; the acceptance test covers the area
def test_the_checked_folders_follow_the_client(client: Client, tmp_path: Path) -> None:
    """No workspace: the open file's project root is checked. A workspace folder without the
    job: nothing found in it. The job's folder added (didChangeWorkspaceFolders): found."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE, work)
    other = tmp_path / "other"
    other.mkdir()
    client.start()
    script_uri = client.open(work / "train.slurm")
    assert "TL302" in {d["code"] for d in client.diagnostics(script_uri)}
    assert client.close() == 0

    elsewhere = Client(tmp_path)
    try:
        elsewhere.start(other)
        elsewhere.open(work / "train.slurm")
        assert elsewhere.diagnostics(script_uri) == []
        added = {"added": [{"uri": work.as_uri(), "name": "work"}], "removed": []}
        elsewhere.notify("workspace/didChangeWorkspaceFolders", {"event": added})
        elsewhere.notify("textDocument/didSave", {"textDocument": {"uri": script_uri}})
        elsewhere.settled(script_uri, lambda codes: "TL302" in codes)
        assert elsewhere.close() == 0
    finally:
        if elsewhere.process.poll() is None:
            elsewhere.process.kill()
