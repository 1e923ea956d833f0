"""``check --exit-zero`` and ``check --statistics``, spelled and behaving as ruff's."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner, Result

from tests.conftest import EXAMPLES, REPO
from trainlint.cli import main

Golden = Callable[[str, str], None]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def examples(in_tmp: Path) -> Path:
    shutil.copytree(EXAMPLES, in_tmp / "examples")
    return in_tmp / "examples"


def test_exit_zero_reports_the_findings_and_exits_zero(examples: Path) -> None:
    result = run("check", "examples", "--exit-zero")
    assert result.exit_code == 0
    assert "TL201 [warning]" in result.output and result.output.startswith("examples/")
    assert run("check", "examples").exit_code == 1


def test_exit_zero_still_exits_two_on_an_error(examples: Path) -> None:
    """ruff's --exit-zero: 0 unless the run terminated abnormally (a usage or config error)."""
    assert run("check", "examples", "--exit-zero", "--select", "TL2O1").exit_code == 2
    (examples / ".trainlint.toml").write_text("fail-on = 'sometimes'\n")
    assert run("check", "examples", "--exit-zero").exit_code == 2


def test_statistics_as_text(examples: Path, golden: Golden) -> None:
    result = run("check", "examples", "--statistics")
    assert result.exit_code == 1  # the findings still count, as with ruff
    golden("check_examples_statistics.txt", result.output)


def test_statistics_are_text_in_github_actions_unless_asked_otherwise(
    examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default format there is github annotations, which statistics cannot be."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = run("check", "examples", "--statistics")
    assert result.exit_code == 1
    assert (
        result.output == (REPO / "tests" / "golden" / "check_examples_statistics.txt").read_text()
    )


def test_statistics_as_json_tally_the_findings_that_count(examples: Path) -> None:
    findings = json.loads(run("check", "examples", "--format", "json").output)["findings"]
    counted = [f for f in findings if f["suppression"] is None]
    result = run("check", "examples", "--statistics", "--format", "json", "--exit-zero")
    assert result.exit_code == 0
    document = json.loads(result.output)
    schema = json.loads((REPO / "schemas" / "statistics.schema.json").read_text())
    jsonschema.validate(document, schema)
    rows = document["statistics"]
    assert {row["rule"]: row["count"] for row in rows} == Counter(f["rule"] for f in counted)
    usd = {row["rule"]: row["waste"]["usd"] or 0 for row in rows}
    assert sum(usd.values()) == pytest.approx(
        sum(f["waste"]["usd"] for f in counted if f["waste"] and f["waste"]["usd"])
    )
    order = [(-row["count"], -usd[row["rule"]], row["rule"]) for row in rows]
    assert order == sorted(order)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "sarif"], "--statistics is shown as text or json, not sarif"),
        (["--diff", "main"], "--statistics cannot be combined with --diff"),
        (["--write-baseline", "b.json"], "--statistics cannot be combined with --write-baseline"),
    ],
)
def test_statistics_refuses_what_it_cannot_show(
    examples: Path, args: list[str], message: str
) -> None:
    result = run("check", "examples", "--statistics", *args)
    assert result.exit_code == 2
    assert result.output == f"trainlint: error: {message}\n"
