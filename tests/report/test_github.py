"""The github reporter: workflow-command escaping, GitHub's annotation limits, the job summary,
and the CLI choosing it inside GitHub Actions."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES
from tests.report.canonical import canonical_report
from trainlint import cli
from trainlint.findings import Finding, Severity, Suppression, Waste
from trainlint.report import github, renderer
from trainlint.results import Report, RunError

Golden = Callable[[str, str], None]

COMMAND = re.compile(r"^::(error|warning|notice)( [^:]*)?::(.*)$")


def finding(  # noqa: PLR0913 - test data: one keyword per field a test varies
    severity: Severity = "warning",
    *,
    file: str = "train.yaml",
    line: int = 3,
    usd: float | None = None,
    message: str = "checkpoint every 10 steps",
    suppressed: bool = False,
) -> Finding:
    return Finding(
        rule="TL201", name="checkpoint-too-frequent", severity=severity, message=message,
        file=file, line=line, column=5, job=file,
        waste=Waste(gpu_hours=1.0, usd=usd) if usd is not None else None,
        suppression=Suppression(kind="inline", reason="ok") if suppressed else None,
    )  # fmt: skip


def commands(text: str) -> list[tuple[str, dict[str, str], str]]:
    """Parse the workflow commands of an output: (kind, properties, message), unescaped."""
    found = []
    for line in text.splitlines():
        match = COMMAND.match(line)
        if not match:
            continue
        props = dict(
            pair.split("=", 1) for pair in (match.group(2) or "").strip().split(",") if pair
        )
        found.append((match.group(1), {k: unescape(v) for k, v in props.items()}, match.group(3)))
    return found


def unescape(value: str) -> str:
    """The runner's unescaping (actions/runner ActionCommand.UnescapeProperty), reversed order."""
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(escaped, raw)
    return value


def test_github_is_a_discovered_format() -> None:
    assert renderer("github") is github.render


@pytest.mark.parametrize(
    ("raw", "data", "prop"),
    [
        ("plain text", "plain text", "plain text"),
        ("100%", "100%25", "100%25"),
        ("a\nb", "a%0Ab", "a%0Ab"),
        ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
        ("a:b", "a:b", "a%3Ab"),
        ("a,b", "a,b", "a%2Cb"),
        ("%0A", "%250A", "%250A"),  # an already-escaped-looking value is escaped again
        ("50%: 1,2\n", "50%25: 1,2%0A", "50%25%3A 1%2C2%0A"),
    ],
)
def test_escaping_follows_the_actions_toolkit(raw: str, data: str, prop: str) -> None:
    assert github.escape_data(raw) == data
    assert github.escape_property(raw) == prop
    assert unescape(prop) == raw


def test_annotation_escapes_file_names_titles_and_messages() -> None:
    weird = finding(
        file="jobs/a,b:c%.yaml", message="50% of the run\nsave less, often: every 100", usd=3
    )
    (line,) = github.render(Report(findings=[weird])).splitlines()[:1]
    assert line == (
        "::warning file=jobs/a%2Cb%3Ac%25.yaml,line=3,col=5,endLine=3,endColumn=5,"
        "title=TL201 checkpoint-too-frequent::50%25 of the run%0Asave less, often: every 100"
        " (~1.0 GPU-h, ~$3.0 per run)"
    )
    ((kind, props, _),) = commands(line)
    assert kind == "warning" and props["file"] == "jobs/a,b:c%.yaml" and props["line"] == "3"


def test_severities_map_to_commands_and_suppressed_findings_are_not_annotated() -> None:
    report = Report(
        findings=[
            finding("error"), finding("warning"), finding("info"), finding(suppressed=True)
        ],
        errors=[RunError(job="jobs/broken.yaml", message="cannot parse: line 3")],
    )  # fmt: skip
    found = commands(github.render(report))
    assert [kind for kind, *_ in found] == ["error", "error", "warning", "notice"]
    assert found[0] == ("error", {}, "jobs/broken.yaml: cannot parse: line 3")


def synthetic(count: int = 40) -> Report:
    """``count`` findings cycling error/warning/info with distinct costs (finding i costs $i)."""
    severities: tuple[Severity, ...] = ("error", "warning", "info")
    return Report(
        findings=[
            finding(severities[i % 3], file=f"job{i:02}.yaml", line=i + 1, usd=float(i))
            for i in range(count)
        ]
    )


def by_cost(report: Report, severity: Severity) -> list[Finding]:
    return sorted(
        (f for f in report.findings if f.severity == severity),
        key=lambda f: -(f.waste.usd or 0) if f.waste else 0,
    )


def test_limits_keep_the_most_costly_and_fold_the_rest() -> None:
    report = synthetic(40)  # 14 errors, 13 warnings, 13 infos
    text = github.render(report)
    found = commands(text)
    kinds = Counter(kind for kind, *_ in found)
    assert kinds == {"error": 10, "warning": 10, "notice": 10}  # 9 infos + the fold line
    assert sum(kinds.values()) <= 50
    annotated = {props["file"] for _, props, _ in found if "file" in props}
    errors = by_cost(report, "error")
    assert {f.file for f in errors[:10]} <= annotated
    assert not {f.file for f in errors[10:]} & annotated
    infos = by_cost(report, "info")
    assert {f.file for f in infos[:9]} <= annotated and infos[9].file not in annotated
    fold = [message for kind, props, message in found if "file" not in props]
    assert fold == ["11 more findings not annotated: see the job summary"]
    # the folded ones are still in the log, as plain lines in a collapsed group
    group = text.split("::group::", 1)[1].split("::endgroup::", 1)[0]
    assert group.count("\n") == 1 + 11
    assert "job01.yaml:2:5: TL201 [warning]" in group  # the cheapest warning


def test_annotations_are_ordered_by_cost_then_location() -> None:
    report = Report(
        findings=[
            finding(file="b.yaml", usd=1), finding(file="a.yaml"), finding(file="c.yaml", usd=9),
            finding(file="a.yaml", line=1),
        ]
    )  # fmt: skip
    files = [(p["file"], p["line"]) for _, p, _ in commands(github.render(report))]
    assert files == [("c.yaml", "3"), ("b.yaml", "3"), ("a.yaml", "1"), ("a.yaml", "3")]


def test_no_fold_line_within_the_limits() -> None:
    text = github.render(synthetic(30))  # 10 of each
    assert "not annotated" not in text and "::group::" not in text
    assert len(commands(text)) == 30


def test_run_errors_take_error_slots_first() -> None:
    report = synthetic(6)
    report.errors = [RunError(job=f"bad{i}.yaml", message="unreadable") for i in range(9)]
    found = commands(github.render(report))
    errors = [(props, message) for kind, props, message in found if kind == "error"]
    assert len(errors) == 10 and errors[-1][0]["file"] == "job03.yaml"  # the costlier error
    assert found[-1][2] == "1 more finding not annotated: see the job summary"


def test_job_summary_lists_every_finding() -> None:
    report = synthetic(40)
    report.findings.append(finding(suppressed=True, file="waived.yaml"))
    summary = github.job_summary(report)
    assert summary.startswith("## trainlint\n")
    assert "| error | 14 |" in summary and "| warning | 13 |" in summary
    assert "| info | 13 |" in summary
    assert "Flagged per run: **\\~\\$780**" in summary  # 0 + 1 + … + 39
    rows = [line for line in summary.splitlines() if line.startswith("| `job")]
    assert len(rows) == 40
    assert rows[0].startswith("| `job39.yaml:40` | TL201 checkpoint-too-frequent | error |")
    assert "1 suppressed finding" in summary and "| `waived.yaml:3` |" in summary


def test_job_summary_escapes_markdown() -> None:
    text = "a | b <img src=x> ~$5 and ~$6 *bold*"
    summary = github.job_summary(Report(findings=[finding(message=text, file="x|y.yaml")]))
    row = next(line for line in summary.splitlines() if line.startswith("| `x"))
    assert "`x\\|y.yaml:3`" in row
    assert "a \\| b \\<img src=x\\> \\~\\$5 and \\~\\$6 \\*bold\\*" in row
    assert row.count(" | ") == 4  # five cells, no pipe from the message splits a cell


def test_job_summary_fits_githubs_limit() -> None:
    report = synthetic(3000)
    limit = 64 * 1024
    summary = github.job_summary(report, limit=limit)
    assert len(summary.encode()) <= limit
    assert "left out to fit" in summary
    assert "| `job2999.yaml:3000` |" in summary  # the most costly rows stay
    assert len(github.job_summary(report).encode()) <= github.SUMMARY_LIMIT


def test_canonical_report_golden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Golden
) -> None:
    report = canonical_report(tmp_path, monkeypatch)
    text = github.render(report)
    assert all(line.startswith(("::", "Found", "No findings")) for line in text.splitlines())
    assert "TL302" not in text  # the waived finding is not annotated
    golden("report_github.txt", text)


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(EXAMPLES / "gpt2-finetune", tmp_path / "examples" / "gpt2-finetune")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_selects_github_in_actions_and_appends_the_job_summary(examples: Path) -> None:
    summary = examples / "step_summary.md"
    summary.write_text("earlier step\n")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    result = CliRunner().invoke(cli.main, ["check", "examples"], env=env)
    assert result.exit_code == 1, result.output
    assert result.output.startswith("::warning file=examples/gpt2-finetune/")
    written = summary.read_text()
    assert written.startswith("earlier step\n## trainlint\n")  # appended, not overwritten
    assert "| `examples/gpt2-finetune/run.sh:12` | TL303 blocking-debug |" in written


def test_cli_explicit_format_wins_and_writes_no_summary(examples: Path) -> None:
    summary = examples / "step_summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    result = CliRunner().invoke(cli.main, ["check", "examples", "--format", "text"], env=env)
    assert result.output.startswith("examples/gpt2-finetune/")
    assert not summary.exists()


def test_cli_defaults_to_text_outside_actions(examples: Path) -> None:
    env = {"GITHUB_ACTIONS": None, "GITHUB_STEP_SUMMARY": None}
    result = CliRunner().invoke(cli.main, ["check", "examples"], env=env)
    assert result.output.startswith("examples/gpt2-finetune/")
