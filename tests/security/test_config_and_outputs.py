"""Issue 15, the repository config and what trainlint writes: a hostile repository or API host
gets a clear error (exit 2), never a crash, a read outside the repository, an import from the
checked folder, a half-written file or a workflow command of its own in the GitHub log."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.conftest import REPO
from trainlint import cli
from trainlint.config import RepoConfig, find_config
from trainlint.errors import ConfigError
from trainlint.findings import Finding, Suppression
from trainlint.lint import CheckOptions, check
from trainlint.report import github
from trainlint.results import Report

TRAIN = (
    "#!/bin/bash\n#SBATCH --gres=gpu:h100:8\n#SBATCH --time=01:00:00\n"
    "torchrun --nproc_per_node 8 train.py --model_name_or_path gpt2 --max_steps 100 --seed 1\n"
)


def invoke(args: list[str], env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(cli.main, args, env=env)


# 4. the repository config is read with the bounds of a checked file ---------------------------


def alias_bomb() -> str:
    """Nine levels of nine aliases: 9**9 strings once expanded (a repr of it took the process
    past 12 GB), under 400 bytes written."""
    items = ['&a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        items.append(f"&{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    value = "[" + ", ".join(items) + "]"
    return f"params:\n  checkpoint-too-frequent:\n    max_overhead_fraction: {value}\n"


def test_a_config_alias_bomb_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / ".trainlint.yaml").write_text(alias_bomb())
    assert len(alias_bomb()) < 600
    with pytest.raises(ConfigError, match="too many nodes"):
        find_config(tmp_path)


def test_a_config_alias_bomb_exits_2_from_the_cli(tmp_path: Path) -> None:
    (tmp_path / ".trainlint.yaml").write_text(alias_bomb())
    (tmp_path / "train.sh").write_text(TRAIN)
    result = invoke(["check", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "too many nodes" in result.stderr


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".trainlint.yaml", "params:\n  estimate:\n    x: " + "[" * 5000 + "]" * 5000 + "\n"),
        (".trainlint.toml", "[params.estimate]\nx = " + "[" * 5000 + "]" * 5000 + "\n"),
        ("pyproject.toml", "[tool.trainlint.params.estimate]\nx = " + "[" * 5000 + "]" * 5000),
    ],
)
def test_a_deeply_nested_config_is_a_config_error(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError, match="nesting"):
        find_config(tmp_path)


def test_a_config_larger_than_a_checked_file_may_be_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".trainlint.toml").write_text("# padding\n" * 500_000)
    with pytest.raises(ConfigError, match="larger than"):
        find_config(tmp_path)


def test_a_config_that_is_not_a_regular_file_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "named.yaml")  # opening it for reading would wait for a writer forever
    os.mkfifo(tmp_path / ".trainlint.toml")
    assert find_config(tmp_path) == RepoConfig()  # not a config file: the defaults
    (tmp_path / ".trainlint.yaml").write_text("extend: named.yaml\n")
    with pytest.raises(ConfigError, match="not a trainlint config file"):
        find_config(tmp_path)


def test_a_config_with_a_custom_tag_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    (tmp_path / ".trainlint.yaml").write_text("select: [TL2]\nignore: !!python/name:os.system\n")
    with pytest.raises(ConfigError, match=r"\.trainlint\.yaml:2:1: .*tag"):
        find_config(tmp_path)


# 8. ``extend`` stays inside the repository -----------------------------------------------------

SECRET = "hunter2-SECRET"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A git work tree ``repo`` and, beside it, a file with a secret that parses as a config."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    secret = tmp_path / "secret.yaml"
    secret.write_text(f"ignore: [{SECRET}]\n{SECRET}-key: 1\n")
    return secret


@pytest.mark.parametrize(
    "extend",
    ["../secret.yaml", "sub/../../secret.yaml", "ABSOLUTE", "~/secret.yaml", "link.yaml"],
)
def test_extend_outside_the_repository_is_refused_without_its_content(
    tmp_path: Path, outside: Path, extend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    repo = tmp_path / "repo"
    (repo / "link.yaml").symlink_to(outside)
    extend = str(outside) if extend == "ABSOLUTE" else extend
    (repo / ".trainlint.yaml").write_text(f"extend: {json.dumps(extend)}\n")
    with pytest.raises(ConfigError, match="repository") as raised:
        find_config(repo)
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize("baseline", ["../secret.yaml", "ABSOLUTE", "link.yaml"])
def test_a_config_baseline_outside_the_repository_is_refused(
    tmp_path: Path, outside: Path, baseline: str
) -> None:
    repo = tmp_path / "repo"
    (repo / "link.yaml").symlink_to(outside)
    baseline = str(outside) if baseline == "ABSOLUTE" else baseline
    (repo / ".trainlint.toml").write_text(f"baseline = {json.dumps(baseline)}\n")
    with pytest.raises(ConfigError, match=r"(outside|inside) the repository"):
        find_config(repo)


def test_a_config_that_links_outside_the_repository_is_refused(
    tmp_path: Path, outside: Path
) -> None:
    (tmp_path / "repo" / ".trainlint.yaml").symlink_to(outside)
    with pytest.raises(ConfigError, match="outside the repository") as raised:
        find_config(tmp_path / "repo")
    assert SECRET not in str(raised.value)


def test_extend_inside_the_repository_still_works(tmp_path: Path, outside: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "configs").mkdir()
    (repo / "configs" / "base.toml").write_text('ignore = ["TL301"]\nfail-on = "info"\n')
    (repo / "sub").mkdir()
    (repo / "sub" / ".trainlint.toml").write_text('extend = "../configs/base.toml"\n')
    config = find_config(repo / "sub")
    assert (config.ignore, config.fail_on) == (["TL301"], "info")


def test_without_git_the_repository_is_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text('ignore = ["TL301"]\n')
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".trainlint.toml").write_text('extend = "../base.toml"\n')
    with pytest.raises(ConfigError, match="outside the repository"):
        find_config(tmp_path / "repo")


def test_the_config_search_stops_at_the_repository_root(tmp_path: Path, outside: Path) -> None:
    (tmp_path / ".trainlint.toml").write_text('ignore = ["TL301"]\n')  # above the repository
    assert find_config(tmp_path / "repo").ignore == []


def test_extend_outside_exits_2_from_the_cli(tmp_path: Path, outside: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".trainlint.yaml").write_text(f"extend: {outside}\n")
    (repo / "train.sh").write_text(TRAIN)
    result = invoke(["check", str(repo)])
    assert result.exit_code == 2
    assert SECRET not in result.output + result.stderr


# 9. ``python -m trainlint`` never imports the checked repository's code ------------------------


def test_python_m_trainlint_imports_nothing_from_the_current_directory(tmp_path: Path) -> None:
    repo, marker = tmp_path / "repo", tmp_path / "imported"
    repo.mkdir()
    payload = f"import pathlib\npathlib.Path({str(marker)!r}).write_text(__name__)\n"
    (repo / "evil_mod.py").write_text(payload + "def bundle():\n    return '.'\n")
    (repo / "regorus.py").write_text(payload)
    (repo / "yaml.py").write_text(payload)
    dist = repo / "evil_pack-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: evil-pack\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[trainlint.packs]\nevil = evil_mod:bundle\n")
    (repo / "train.sh").write_text(TRAIN)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["PYTHONPATH"] = str(REPO)  # trainlint itself, installed or not; never the repo checked
    command = [sys.executable, "-m", "trainlint", "check", ".", "--format", "json"]
    plain = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    assert plain.returncode in (0, 1), plain.stderr  # regorus (the real one) evaluated the job
    assert json.loads(plain.stdout)["findings"]
    (repo / ".trainlint.yaml").write_text("packs:\n  - entry-point: evil\n")
    packed = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    assert packed.returncode == 2
    assert "no pack entry point 'evil'" in packed.stderr
    assert not marker.exists()


# 13. written files are replaced atomically -----------------------------------------------------


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "train.sh").write_text(TRAIN)
    return tmp_path


def replaced(path: Path, run: list[str], exit_codes: tuple[int, ...] = (0, 1)) -> str:
    """Run the CLI over an existing ``path`` held open by a reader; the reader still sees the
    whole old file (a new file took its name) and no temporary file is left beside it."""
    old = "OLD REPORT\n" * 10_000
    path.write_text(old)
    before = set(path.parent.iterdir())
    with path.open() as reader:
        result = invoke(run)
        assert result.exit_code in exit_codes, result.output
        assert reader.read() == old
    assert set(path.parent.iterdir()) == before
    return path.read_text()


def test_output_replaces_the_report_atomically(job: Path) -> None:
    text = replaced(job / "report.json", ["check", "jobs", "--format", "json", "-o", "report.json"])
    assert json.loads(text)["findings"]


def test_write_baseline_replaces_the_baseline_atomically(job: Path) -> None:
    text = replaced(job / "base.json", ["check", "jobs", "--write-baseline", "base.json"], (0,))
    assert json.loads(text)["version"] == 1


def test_init_force_replaces_the_config_atomically(job: Path) -> None:
    from trainlint.starter import STARTER_TOML

    assert replaced(job / ".trainlint.toml", ["init", "--force"], (0,)) == STARTER_TOML


def test_pack_build_and_sign_replace_their_files_atomically(job: Path) -> None:
    assert invoke(["pack", "init", "acme", "--dir", "acme"]).exit_code == 0
    (job / "secret").write_text("a shared secret of at least thirty-two bytes!\n")
    sign = ["pack", "sign", "acme", "--key", "secret", "--algorithm", "HS256"]
    assert json.loads(replaced(job / "acme" / ".signatures.json", sign, (0,)))["signatures"]
    archive = job / "acme.tar.gz"
    archive.write_text("OLD BUNDLE\n")
    with archive.open() as reader:
        assert invoke(["pack", "build", "acme", "-o", "acme.tar.gz"]).exit_code == 0
        assert reader.read() == "OLD BUNDLE\n"  # a new file took its name
    assert invoke(["pack", "verify", "acme.tar.gz", "--key", "secret"]).exit_code == 0
    assert not list(job.glob(".trainlint-*.tmp"))


def test_output_into_a_missing_folder_creates_it(job: Path) -> None:
    result = invoke(["check", "jobs", "--format", "json", "-o", "out/deep/report.json"])
    assert result.exit_code in (0, 1)
    assert json.loads((job / "out" / "deep" / "report.json").read_text())["findings"]


def test_output_that_cannot_be_written_is_a_clear_error(job: Path) -> None:
    (job / "file").write_text("x")
    result = invoke(["check", "jobs", "-o", "file/report.txt"])
    assert result.exit_code == 2, result.output
    assert "cannot write" in result.stderr


def test_output_keeps_the_mode_of_the_file_it_replaces(job: Path) -> None:
    report = job / "report.txt"
    report.write_text("old")
    report.chmod(0o640)
    invoke(["check", "jobs", "-o", "report.txt"])
    assert report.stat().st_mode & 0o777 == 0o640


# 15. ``trainlint comment`` on a malformed API answer -------------------------------------------


@pytest.fixture
def api() -> Iterator[dict[str, Any]]:
    """An HTTP server on 127.0.0.1 answering each path with a canned body (``routes``)."""
    routes: dict[str, tuple[int, bytes]] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            status, body = routes.get(self.path.split("?")[0], (404, b'{"message": "nope"}'))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_address[1]}", "routes": routes}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


GH_LIST = "/repos/octo/models/issues/5/comments"
GL_LIST = "/api/v4/projects/ml%2Ftraining/merge_requests/7/notes"
GH_COMMENT = b'{"id": 7, "body": "x", "html_url": "https://github.test/c/7"}'


@pytest.mark.parametrize(
    "routes",
    [
        {GH_LIST: (200, b'{"message": "an object, not a list"}')},
        {GH_LIST: (200, b"<html>not json</html>")},
        {GH_LIST: (200, b'["a string, not a comment"]')},
        {GH_LIST: (200, b'[{"body": "no id"}]')},
        {GH_LIST: (200, b'[{"id": "seven", "body": "x"}]')},
        {GH_LIST: (200, b'[{"id": 1, "body": ["not", "text"]}]')},
        {GH_LIST: (200, b"[]")},  # the create (same path) answers a list, not the comment
    ],
)
def test_comment_on_a_malformed_github_answer_exits_2(
    api: dict[str, Any], tmp_path: Path, routes: dict[str, tuple[int, bytes]]
) -> None:
    api["routes"].update(routes)
    body = tmp_path / "body.md"
    body.write_text("hello\n")
    args = ["comment", "--github", "--repo", "octo/models", "--pr", "5", "--body-file", str(body)]
    env = {"GITHUB_API_URL": api["url"], "GITHUB_TOKEN": "ghp_token0123456789"}
    result = invoke(args, env)
    assert result.exit_code == 2, (result.output, result.exception)
    assert "GitHub API" in result.stderr


@pytest.mark.parametrize(
    "created", [b"[]", b"null", b'{"id": null}', b"{", b'{"id": true, "body": "x"}']
)
def test_comment_on_a_malformed_created_comment_exits_2(
    api: dict[str, Any], tmp_path: Path, created: bytes
) -> None:
    api["routes"][GH_LIST] = (201, created)
    body = tmp_path / "body.md"
    body.write_text("hello\n")
    args = ["comment", "--github", "--repo", "octo/models", "--pr", "5", "--body-file", str(body),
            "--behavior", "new"]  # fmt: skip
    env = {"GITHUB_API_URL": api["url"], "GITHUB_TOKEN": "ghp_token0123456789"}
    result = invoke(args, env)
    assert result.exit_code == 2, (result.output, result.exception)


@pytest.mark.parametrize("pull", [b"[]", b'{"base": null}', b'{"base": {"ref": 5}}', b"nope"])
def test_comment_on_a_malformed_pull_request_exits_2(
    api: dict[str, Any], pull: bytes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    api["routes"]["/repos/octo/models/pulls/5"] = (200, pull)
    args = ["comment", "--github", "--repo", "octo/models", "--pr", "5"]
    env = {"GITHUB_API_URL": api["url"], "GITHUB_TOKEN": "ghp_token0123456789",
           "GITHUB_BASE_REF": None}  # fmt: skip
    result = invoke(args, env)
    assert result.exit_code == 2, (result.output, result.exception)
    assert "GitHub API" in result.stderr


@pytest.mark.parametrize(
    "notes", [b'{"message": "x"}', b'["x"]', b'[{"id": 1, "system": "yes", "body": 3}]', b"nah"]
)
def test_comment_on_a_malformed_gitlab_answer_exits_2(
    api: dict[str, Any], tmp_path: Path, notes: bytes
) -> None:
    api["routes"][GL_LIST] = (200, notes)
    body = tmp_path / "body.md"
    body.write_text("hello\n")
    args = ["comment", "--gitlab", "--project", "ml/training", "--mr", "7", "--body-file",
            str(body)]  # fmt: skip
    env = {"CI_API_V4_URL": api["url"] + "/api/v4", "GITLAB_TOKEN": "glpat-token0123456789"}
    result = invoke(args, env)
    assert result.exit_code == 2, (result.output, result.exception)
    assert "GitLab API" in result.stderr


# 19. ``--format github`` prints no workflow command but its own --------------------------------


def runner_commands(log: str) -> list[tuple[str, str]]:
    """The workflow commands GitHub's runner would run for ``log`` (actions/runner's
    ActionCommand.TryParseV2 after TrimStart, TryParse's ``##[`` anywhere on a line, and
    stop-commands), as (command, everything after it)."""
    known = {"error", "warning", "notice", "group", "endgroup", "debug", "add-mask", "set-output",
             "stop-commands", "echo", "save-state", "add-path", "set-env"}  # fmt: skip
    found, stopped = [], None
    for line in log.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        text = line.lstrip()
        name = rest = None
        if text.startswith("::") and text.find("::", 2) > 0:
            info, rest = text[2:].split("::", 1)
            name = info.split(" ", 1)[0]
        elif "##[" in line and "]" in line.split("##[", 1)[1]:
            info, rest = line.split("##[", 1)[1].split("]", 1)
            name = info.split(" ", 1)[0]
        if name is None or (name not in known and name != stopped):
            continue
        if stopped is not None:
            stopped = None if name == stopped else stopped
            continue
        if name == "stop-commands":
            stopped = rest
        found.append((name, text))
    return found


def properties(text: str) -> dict[str, str]:
    """The properties of a ``::name k=v,k=v::data`` line, as the runner splits them."""
    info = text[2:].split("::", 1)[0]
    pairs = info.split(" ", 1)[1].split(",") if " " in info else []
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


HOSTILE = [
    "a\n::error title=pwned::owned.sh",
    "::warning title=pwned::b.yaml",
    "c\r::add-mask::x.yaml",
    "\u2028::error title=pwned::d.yaml",
    " \t::error title=pwned::e.yaml",
    "f ##[error]pwned.yaml",
    "g%0A::error title=pwned::.yaml",
    "h::error title=pwned::.yaml",
]


def hostile(file: str, index: int, *, name: str = "checkpoint-too-frequent") -> Finding:
    return Finding(
        rule="TL201", name=name, severity=("error", "warning", "info")[index % 3],
        message=f"message {index}\n::error title=pwned::in the message ##[error]x", file=file,
        line=index + 1, column=1, job=file,
    )  # fmt: skip


def test_github_output_runs_no_command_from_a_file_name_or_message() -> None:
    findings = [hostile(HOSTILE[i % len(HOSTILE)], i) for i in range(60)]  # most are folded
    log = github.render(Report(findings=findings))
    commands = runner_commands(log)
    assert commands, log
    assert {name for name, _ in commands} <= {"error", "warning", "notice", "group", "endgroup"}
    titles = {properties(text).get("title") for name, text in commands if name != "endgroup"}
    assert titles <= {"TL201 checkpoint-too-frequent", "trainlint", None}
    assert sum(name != "group" and name != "endgroup" for name, _ in commands) <= 30


def test_github_job_summary_keeps_rule_names_and_files_on_their_table_row() -> None:
    name = "x\n<img src=x onerror=alert(1)>|y"
    findings = [hostile(HOSTILE[0], 1, name=name), hostile("ok.yaml", 2, name=name)]
    findings[1].suppression = Suppression(kind="inline", reason="a | b\n<script>")
    summary = github.job_summary(Report(findings=findings))
    assert not re.search(r"(?<!\\)<(img|script)", summary)  # Markdown-escaped: shown as text
    rows = [line for line in summary.splitlines() if line.startswith("| `")]
    assert len(rows) == 2
    assert all(row.count("|") - row.count("\\|") in (5, 6) for row in rows)


# design point: governance findings are always reported ------------------------------------------

ORG = '{"trainlint": {"locks": {"rules": {"TL401": {"approvers": ["platform-team"]}}}}}\n'


@pytest.fixture
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "data.json").write_text(ORG)
    (tmp_path / "train.sh").write_text(TRAIN)
    return tmp_path


def test_a_config_select_cannot_hide_a_lock_violation(locked: Path) -> None:
    (locked / ".trainlint.yaml").write_text("packs: [{path: org}]\nselect: [TL1]\n")
    report = check([Path(".")])
    (violation,) = [f for f in report.findings if f.rule == "TL906"]
    assert "turns off locked rule TL401" in violation.message
    assert "TL401" in {f.rule for f in report.findings}  # the locked rule ran anyway
    assert "TL906" in {rule.id for rule in report.rules}  # and SARIF describes TL906


@pytest.mark.parametrize("option", [["--select", "TL1"], ["--ignore", "TL906"]])
def test_the_command_line_cannot_hide_a_lock_violation(locked: Path, option: list[str]) -> None:
    (locked / ".trainlint.yaml").write_text("packs: [{path: org}]\nignore: [TL401]\n")
    result = invoke(["check", ".", "--format", "json", *option])
    rules = {f["rule"] for f in json.loads(result.stdout)["findings"]}
    assert "TL906" in rules


def test_unused_suppressions_follow_the_selection(locked: Path) -> None:
    (locked / "train.sh").write_text(TRAIN + "echo done  # trainlint: ignore[TL302] stale\n")
    assert "TL905" in {f.rule for f in check([Path(".")]).findings}
    assert "TL905" not in {
        f.rule for f in check([Path(".")], CheckOptions(ignore=["TL905"])).findings
    }
