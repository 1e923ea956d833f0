"""The composite GitHub Action (action.yml) and the README's workflow: their shape, every
``trainlint`` invocation checked against the CLI's real commands and options, and the action's
run steps executed as a runner runs them (bash, the step's env with its ``${{ }}`` filled in,
``$GITHUB_OUTPUT`` carried to later steps) in a depth-1 clone against a fake GitHub API on
127.0.0.1 (no network)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from tests.comment.conftest import GITHUB_TOKEN, _run
from tests.comment.fake_hosts import FakeHost
from tests.conftest import EXAMPLES, REPO
from tests.test_diff import commit, git
from trainlint import cli
from trainlint.report.markdown import MARKER
from trainlint.results import DiffReport

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
SCRIPTS = [step["run"] for step in STEPS if "run" in step]


def invocations(script: str) -> list[list[str]]:
    """``trainlint ...`` command lines of a bash script, as words (continuations joined)."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        for i, word in enumerate(words):
            if word == "trainlint" or word.endswith("/bin/trainlint"):
                found.append(words[i + 1 :])
                break
    return found


ALL = [words for script in SCRIPTS for words in invocations(script)]


def step(name: str) -> dict[str, Any]:
    (found,) = [s for s in STEPS if s.get("name") == name]
    return found


def option(command: click.Command, name: str) -> click.Option | None:
    for param in command.params:
        if isinstance(param, click.Option) and name in (*param.opts, *param.secondary_opts):
            return param
    return None


def test_composite_action_shape() -> None:
    assert ACTION["name"] == "trainlint" and ACTION["description"]
    assert ACTION["runs"]["using"] == "composite"
    inputs = ACTION["inputs"]
    assert {"paths", "packs", "fail-on", "comment", "sarif", "version", "github-token"} <= set(
        inputs
    )
    assert inputs["paths"]["default"] == "."
    assert inputs["fail-on"]["default"] == "warning"
    assert inputs["github-token"]["default"] == "${{ github.token }}"
    assert all(spec.get("description") for spec in inputs.values())


def test_run_steps_are_bash_and_never_inline_expressions() -> None:
    """GitHub's script-injection guidance: inputs and event data reach scripts through env."""
    for step in STEPS:
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], step.get("name")


def test_every_input_is_used() -> None:
    text = (REPO / "action.yml").read_text()
    for name in ACTION["inputs"]:
        assert f"inputs.{name}" in text, name


PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+(?:\.\d+)*)$")


def test_third_party_actions_are_pinned_by_commit_sha_with_the_tag_in_a_comment() -> None:
    """A tag can be moved to other code; a full commit SHA cannot (GitHub's hardening guide)."""
    text = (REPO / "action.yml").read_text().splitlines()
    lines = [line for line in text if re.match(r"\s*(?:-\s+)?uses:", line)]
    assert len(lines) == len([s for s in STEPS if "uses" in s]) >= 4
    for line in lines:
        assert PINNED.match(line), line
    names = {PINNED.match(line).group(1) for line in lines}  # type: ignore[union-attr]
    assert {"actions/setup-python", "actions/cache", "github/codeql-action/upload-sarif"} <= names


def test_pip_and_packs_are_cached() -> None:
    paths = {s["with"]["path"] for s in STEPS if s.get("uses", "").startswith("actions/cache@")}
    assert paths == {"~/.cache/pip", "~/.cache/trainlint/packs"}


def test_installs_trainlint_from_the_action_path() -> None:
    install = step("Install trainlint")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$ACTION_PATH"' in install["run"]
    assert ACTION["inputs"]["version"]["default"] == ""


@pytest.mark.parametrize("version", ["0.2.0", "trainlint", "trainlint==0.2.0"])
def test_a_version_that_names_no_source_is_refused_before_pip_runs(
    version: str, tmp_path: Path
) -> None:
    """``trainlint==X`` would come from an index where no trainlint is published (or a
    squatter's): the install step refuses it and never creates the venv."""
    done = run_step(
        "Install trainlint", tmp_path, {**pull_request(tmp_path), "inputs.version": version}
    )
    assert done.returncode == 2, done.stdout
    assert "names no source" in done.stdout and "uses:" in done.stdout
    assert not (tmp_path / "runner" / "trainlint-venv" / "pyvenv.cfg").exists()  # no venv made


@pytest.mark.parametrize("words", ALL, ids=lambda words: " ".join(words[:2]))
def test_invocations_use_real_commands_and_options(words: list[str]) -> None:
    command: click.Command = cli.main
    if words and not words[0].startswith("-"):
        assert isinstance(cli.main, click.Group)
        sub = cli.main.commands.get(words[0])
        assert sub is not None, f"no `trainlint {words[0]}` command"
        command, words = sub, words[1:]
    for i, word in enumerate(words):
        if not word.startswith("-"):
            continue
        name = word.split("=", 1)[0]
        param = option(command, name)
        if command is cli.main and name == "--version":
            continue
        assert param is not None, f"`trainlint {command.name}` has no {name}"
        value = words[i + 1] if i + 1 < len(words) else None
        if isinstance(param.type, click.Choice) and value and "$" not in value:
            assert value in param.type.choices, f"{name} {value}"


def test_one_evaluation_feeds_annotations_sarif_and_the_comment() -> None:
    checks = [
        step for step in STEPS if any(w[:1] == ["check"] for w in invocations(step.get("run", "")))
    ]
    assert [s["name"] for s in checks] == ["trainlint check"]
    lines = [" ".join(words) for words in invocations(checks[0]["run"])]
    assert all("--format github" in line and '"${outputs[@]}"' not in line for line in lines)
    assert any("--diff $BASE" in line for line in lines)
    script = checks[0]["run"]
    for rendering in (
        "json=$out/report.json",
        "sarif=$out/trainlint.sarif",
        "markdown=$out/comment.md",
    ):
        assert f'--output-format "{rendering}"' in script
    comment = [" ".join(w) for w in invocations(step("Pull request comment")["run"])]
    assert comment == ["comment --github --repo $REPO --pr $PR --body-file $BODY"]


def test_sarif_upload_and_comment_are_conditional() -> None:
    upload = next(s for s in STEPS if s.get("uses", "").startswith("github/codeql-action"))
    assert "inputs.sarif == 'true'" in upload["if"]
    assert "steps.context.outputs.read-only != 'true'" in upload["if"]
    comment = step("Pull request comment")
    assert "inputs.comment == 'true'" in comment["if"]
    assert "continue-on-error" not in comment  # a failure on a writable token is a failure
    assert comment["env"]["GITHUB_TOKEN"] == "${{ inputs.github-token }}"


def readme_workflow() -> dict[Any, Any]:  # PyYAML reads the key `on` as True
    text = (REPO / "README.md").read_text()
    section = text.split("## GitHub Action", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "the README's GitHub Action section has no workflow"
    return dict(yaml.safe_load(block.group(1)))


def test_readme_workflow_is_complete() -> None:
    workflow = readme_workflow()
    # PyYAML reads the bare key `on` as the boolean True
    assert "pull_request" in (workflow.get("on") or workflow[True])
    assert workflow["permissions"] == {
        "contents": "read", "pull-requests": "write", "security-events": "write"
    }  # fmt: skip
    (job,) = workflow["jobs"].values()
    uses = [step.get("uses", "") for step in job["steps"]]
    assert uses[0].startswith("actions/checkout@")
    assert re.fullmatch(r"actions/checkout@[0-9a-f]{40}", uses[0])
    step = next(s for s in job["steps"] if re.match(r"[^/\s]+/trainlint@|\./?$", s.get("uses", "")))
    assert set(step.get("with", {})) <= set(ACTION["inputs"])


# -- the run steps, executed -------------------------------------------------------------------

EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def runner_env(tmp: Path, extra: dict[str, str]) -> dict[str, str]:
    """What a runner gives every step: its temp folder, the command files, no user git config,
    and ``trainlint`` on the venv path the install step would have made (this checkout)."""
    runner = tmp / "runner"
    venv_bin = runner / "trainlint-venv" / "bin"
    if not venv_bin.exists():
        venv_bin.mkdir(parents=True)
        exe = venv_bin / "trainlint"
        exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trainlint "$@"\n')
        exe.chmod(0o755)
        (venv_bin.parent.parent / "home").mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", ""), "HOME": str(runner / "home"),
        "PYTHONPATH": str(REPO), "RUNNER_TEMP": str(runner), "GITHUB_ACTIONS": "true",
        "GITHUB_ENV": str(runner / "env"), "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, **extra,
    }  # fmt: skip


def run_step(
    name: str, tmp: Path, context: dict[str, str], cwd: Path | None = None,
    extra: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run one ``run:`` step of action.yml as a runner does (``bash --noprofile --norc -eo
    pipefail``), its env's ``${{ }}`` taken from ``context`` (an expression the test does not
    know fails it); the step's ``$GITHUB_OUTPUT`` lands in ``context`` as
    ``steps.<id>.outputs.<name>``."""
    spec = step(name)
    env = runner_env(tmp, extra or {})
    outputs = tmp / "runner" / f"{spec.get('id', 'step')}.outputs"
    outputs.write_text("")
    env["GITHUB_OUTPUT"] = str(outputs)
    for key, value in spec.get("env", {}).items():
        env[key] = EXPRESSION.sub(lambda m: context[m.group(1)], str(value))
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", spec["run"]],
                          cwd=cwd or tmp, env=env, capture_output=True, text=True, timeout=300,
                          check=False)  # fmt: skip
    for line in outputs.read_text().splitlines():
        key, _, value = line.partition("=")
        context[f"steps.{spec.get('id')}.outputs.{key}"] = value
    return done


@pytest.fixture
def github_api() -> Iterator[FakeHost]:
    yield from _run(FakeHost("github", GITHUB_TOKEN))


def pull_request(tmp: Path, head_repo: str = "octo/models") -> dict[str, str]:
    """The pull_request event's context (pull request 5 of octo/models) and the inputs'
    defaults."""
    context = {f"inputs.{k}": str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    return {
        **context, "inputs.github-token": GITHUB_TOKEN, "inputs.sarif": "true",
        "github.event_name": "pull_request", "github.repository": "octo/models",
        "github.event.pull_request.number": "5",
        "github.event.pull_request.head.repo.full_name": head_repo,
        "github.action_path": str(REPO), "steps.python.outputs.python-path": sys.executable,
    }  # fmt: skip


def training_repo(origin: Path) -> str:
    """The llama example at the base (checkpoints every 50 steps, no NCCL debug logging), then
    the head: every 5 steps (TL201 ten times costlier) and NCCL_DEBUG=INFO (TL302, new).
    Returns the base commit."""
    script = origin / "llama3-sft" / "train.slurm"
    shutil.copytree(EXAMPLES / "llama3-sft", origin / "llama3-sft")
    text = script.read_text()
    script.write_text(re.sub(r"--save_steps \d+", "--save_steps 50", text)
                      .replace("export NCCL_DEBUG=INFO\n", ""))  # fmt: skip
    git(origin, "init", "-q")
    commit(origin, "base")
    base = git(origin, "rev-parse", "HEAD").strip()
    script.write_text(re.sub(r"--save_steps \d+", "--save_steps 5", text))
    commit(origin, "checkpoint every 5 steps, debug NCCL")
    return base


def test_the_action_on_a_pull_request_in_a_depth_1_clone(
    tmp_path: Path, github_api: FakeHost
) -> None:
    """Acceptance (issue 17): actions/checkout's depth-1 clone, the base fetched at depth 1 by
    the action, one evaluation, and the sticky comment on the fake GitHub showing the new
    finding and the worsened one with its Δ$."""
    origin = tmp_path / "origin"
    base = training_repo(origin)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(work))
    context = {**pull_request(tmp_path), "github.event.pull_request.base.sha": base}
    extra = {"GITHUB_API_URL": github_api.url}

    def run(name: str) -> subprocess.CompletedProcess[str]:
        return run_step(name, tmp_path, context, cwd=work, extra=extra)

    fetched = run("Fetch the pull request's base commit")
    assert fetched.returncode == 0, fetched.stderr
    assert run("Pull request context").returncode == 0
    check = run("trainlint check")
    assert check.returncode == 0 and context["steps.check.outputs.exit-code"] == "1", check.stderr
    assert "::warning file=llama3-sft/train.slurm,line=20" in check.stdout
    assert "worse than the base: $" in check.stdout  # the annotation says by how much
    report = DiffReport.model_validate_json(
        Path(context["steps.check.outputs.report-file"]).read_text()
    )
    assert [f.rule for f in report.new] == ["TL302"]
    assert "TL201" in [f.rule for f in report.worsened]
    sarif = json.loads(Path(context["steps.check.outputs.sarif-file"]).read_text())
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} >= {"TL201", "TL302"}
    posted = run("Pull request comment")
    assert posted.returncode == 0, posted.stderr
    (body,) = github_api.bodies()
    assert body.startswith(MARKER)
    new = body.split("New warnings (1)", 1)[1].split("####", 1)[0]
    assert "**TL302** `debug-logging`" in new
    worse = body.split("📈 Worsened", 1)[1].split("####", 1)[0]
    tl201 = next(line for line in worse.splitlines() if "**TL201**" in line)
    delta = next(w for w in report.worsened if w.rule == "TL201").usd_delta
    assert delta is not None and f"**+${delta:,.0f} per run**" in tl201
    assert run("Fail on findings").returncode == 1


def test_a_fork_pull_request_skips_the_comment_and_sarif_with_a_notice(
    tmp_path: Path, github_api: FakeHost
) -> None:
    body = tmp_path / "comment.md"
    body.write_text(f"{MARKER}\nx\n")
    context = {**pull_request(tmp_path, head_repo="someone/models"),
               "steps.check.outputs.comment-file": str(body)}  # fmt: skip
    noticed = run_step("Pull request context", tmp_path, context)
    assert noticed.returncode == 0 and context["steps.context.outputs.read-only"] == "true"
    assert noticed.stdout.count("::notice title=trainlint::") == 2
    assert "read-only token" in noticed.stdout
    extra = {"GITHUB_API_URL": github_api.url}
    posted = run_step("Pull request comment", tmp_path, context, extra=extra)
    assert posted.returncode == 0, posted.stderr
    assert github_api.requests == []
