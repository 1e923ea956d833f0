"""The composite GitHub Action (action.yml) and the README's workflow: their shape, and every
``trainlint`` invocation checked against the CLI's real commands and options (no network)."""

from __future__ import annotations

import re
import shlex
from typing import Any

import click
import pytest
import yaml

from tests.conftest import REPO
from trainlint import cli

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


def test_uses_pinned_major_versions() -> None:
    uses = [step["uses"] for step in STEPS if "uses" in step]
    assert "actions/setup-python@v5" in uses
    assert "github/codeql-action/upload-sarif@v3" in uses
    assert all(re.search(r"@(v\d+|[0-9a-f]{40})$", u) for u in uses)


def test_installs_trainlint_from_the_action_path() -> None:
    install = next(step for step in STEPS if step.get("name") == "Install trainlint")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$ACTION_PATH"' in install["run"]


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


def test_the_expected_commands_are_run() -> None:
    lines = [" ".join(words) for words in ALL]
    assert any(
        line.startswith("check ") and "--diff $BASE" in line and "--format github" in line
        for line in lines
    )
    assert any(line.startswith("check ") and "--format sarif -o" in line for line in lines)
    assert any(
        line.startswith("comment ") and "--github --repo $REPO --pr $PR" in line for line in lines
    )


def test_sarif_upload_and_comment_are_conditional() -> None:
    upload = next(s for s in STEPS if s.get("uses", "").startswith("github/codeql-action"))
    assert "inputs.sarif == 'true'" in upload["if"]
    comment = next(s for s in STEPS if "trainlint comment" in s.get("run", ""))
    assert "inputs.comment == 'true'" in comment["if"]
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
    step = next(s for s in job["steps"] if re.match(r"[^/\s]+/trainlint@|\./?$", s.get("uses", "")))
    assert set(step.get("with", {})) <= set(ACTION["inputs"])
