"""The markdown reporter (check report) and the PR comment body, including truncation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import Golden
from tests.report.canonical import canonical_report
from tests.report.repo import job_repo_with_a_change, slurm_job
from trainlint.cli import main
from trainlint.findings import Finding, Waste
from trainlint.report import _links, renderer
from trainlint.report.markdown import ICONS, MARKER, render, render_comment
from trainlint.results import DiffReport, JobCost, JobDiff


def test_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Golden) -> None:
    text = render(canonical_report(tmp_path, monkeypatch))
    assert "8\N{MULTIPLICATION SIGN} H100-SXM" in text and "1 suppressed" in text
    golden("report_markdown.md", text)


def _entry_costs(text: str) -> list[float]:
    """The $ per run of each finding entry, in the order the report lists them (0: none)."""
    entries = [line for line in text.splitlines() if line.startswith("- ") and " · " in line]
    costs = [re.search(r"~\$([\d,.]+) per run\*\*", entry) for entry in entries]
    return [float(c.group(1).replace(",", "")) if c else 0.0 for c in costs]


def test_findings_are_listed_most_costly_first_without_a_prose_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = canonical_report(tmp_path, monkeypatch)
    text = render(report)
    costs = _entry_costs(text)
    assert len(costs) == sum(f.suppression is None for f in report.findings)
    assert costs == sorted(costs, reverse=True) and costs[0] == 175
    assert "| Finding |" not in text  # messages are not squeezed into table cells
    entry = next(line for line in text.splitlines() if "~$175 per run" in line)
    assert "[`checkpoint-too-frequent`](https://github.com/trainlint/trainlint/blob/main/" in entry
    assert "(examples/llama3-sft/train.slurm#L20)" in entry  # relative outside a PR


def test_equal_costs_are_ordered_by_severity() -> None:
    from trainlint.results import Report

    findings = [finding(1, "info", waste=None), finding(2, "error", waste=None),
                finding(3, "warning", waste=None)]  # fmt: skip
    text = render(Report(findings=findings))
    entries = [line for line in text.splitlines() if line.startswith("- ") and " · " in line]
    icons = [ICONS[s] for s in ("error", "warning", "info")]
    assert [next(i for i in icons if e.startswith(f"- {i} ")) for e in entries] == icons


def test_links_are_absolute_blob_urls_with_a_link_base() -> None:
    from trainlint.results import Report

    base = "https://github.com/acme/models/blob/0123abc/"
    text = render(Report(findings=[finding(7)]), link_base=base)
    assert f"]({base}jobs/job7/train.sh#L8)" in text


def test_discovered_as_a_format() -> None:
    assert renderer("markdown") is render


def finding(index: int, severity: str = "warning", **changes: object) -> Finding:
    fields: dict[str, object] = dict(
        rule="TL201", name="checkpoint-too-frequent", severity=severity,
        message=f"checkpoint every {index} steps | with a pipe <b>and html</b> @someone",
        file=f"jobs/job{index % 40}/train.sh", line=index % 300 + 1, column=1,
        job=f"jobs/job{index % 40}/train.sh", waste=Waste(gpu_hours=1.5, usd=5.25),
        fingerprint=f"{index:016x}",
    )  # fmt: skip
    fields.update(changes)
    return Finding.model_validate(fields)


def synthetic(findings: int, jobs: int = 40) -> DiffReport:
    severities = ["error", "warning", "info"]
    return DiffReport(
        base="origin/main", base_commit="0123456789abcdef0123456789abcdef01234567",
        changed_files=[f"jobs/job{i}/train.sh" for i in range(jobs)],
        jobs=[JobDiff(job=f"jobs/job{i}/train.sh", status="modified",
                      before=JobCost(gpu="H100-SXM", gpus=8, hours=3.0, gpu_hours=24.0, usd=84.0),
                      after=JobCost(gpu="H100-SXM", gpus=8, hours=9.0, gpu_hours=72.0, usd=252.0),
                      new=findings // jobs) for i in range(jobs)],
        new=[finding(i, severities[i % 3]) for i in range(findings)],
        fixed=[finding(i + findings) for i in range(findings // 2)],
        unchanged=[finding(i + 2 * findings) for i in range(findings)],
        usd_before=84.0 * jobs, usd_after=252.0 * jobs,
    )  # fmt: skip


def well_formed(body: str) -> None:
    assert body.startswith(MARKER + "\n")
    assert body.count("<details>") == body.count("</details>")
    assert body.count("```") % 2 == 0
    for line in body.splitlines():
        if line.startswith("|"):
            assert line.endswith("|") and line.count("|") - line.count("\\|") == 4, line


def test_header_and_tables() -> None:
    body = render_comment(synthetic(6, jobs=2))
    well_formed(body)
    assert "### trainlint: +$336 per run (+200%)" in body
    assert "| $ per run | $84 | $252 (+$168, +200%) |" in body
    assert "| GPUs | 8{X} H100-SXM | 8{X} H100-SXM |".format(X="\N{MULTIPLICATION SIGN}") in body
    assert "xychart-beta" in body and "bar [252, 84, 252, 84]" not in body
    assert "#### 🛑 New errors (2)" in body and "✅ Fixed (3)" in body
    assert "\\| with a pipe &lt;b&gt;and html&lt;/b&gt; &#64;someone" in body


def test_links() -> None:
    base = "https://github.com/acme/train/blob/abc123/"
    body = render_comment(synthetic(3, jobs=1), link_base=base)
    assert f"]({base}jobs/job1/train.sh#L2)" in body
    assert "](jobs/job1/train.sh#L2)" in render_comment(synthetic(3, jobs=1))


def test_no_cost_change() -> None:
    diff = synthetic(1, jobs=1)
    diff.jobs[0].after = diff.jobs[0].before
    diff.usd_after = diff.usd_before
    assert "### trainlint: no cost change" in render_comment(diff)


def test_five_thousand_findings_fit() -> None:
    diff = synthetic(5000)
    body = render_comment(diff)
    assert len(body) <= 65536
    well_formed(body)
    assert "### trainlint: +$6,720 per run (+200%)" in body
    assert "left out to fit" in body and "Unchanged findings" not in body
    more = [int(n) for n in re.findall(r"… and (\d+) more finding", body)]
    assert more and sum(more) >= 5000 // 2  # both lists were cut, with their counts


@pytest.mark.parametrize("limit", [20000, 3000, 800])
def test_any_limit(limit: int) -> None:
    body = render_comment(synthetic(5000), limit=limit)
    assert len(body) <= limit
    well_formed(body)


def _chart_diff(before: float, after: float) -> DiffReport:
    return DiffReport(
        base="origin/main", base_commit="0" * 40,
        jobs=[JobDiff(job="jobs/train.sh", status="modified",
                      before=JobCost(gpu="H100-SXM", gpus=8, usd=before),
                      after=JobCost(gpu="H100-SXM", gpus=8, usd=after))],
        usd_before=before, usd_after=after,
    )  # fmt: skip


def _bar_heights(body: str) -> tuple[list[float], float, float]:
    """The bars and the y-axis range of the comment's mermaid chart."""
    axis = re.search(r'y-axis "[^"]*" (\S+) --> (\S+)', body)
    bars = re.search(r"bar \[([^\]]*)\]", body)
    assert axis is not None and bars is not None, body
    return [float(v) for v in bars.group(1).split(",")], float(axis[1]), float(axis[2])


@pytest.mark.parametrize(("before", "after"), [(100.0, 164.0), (4.53, 3.25), (9000.0, 12000.0)])
def test_chart_axis_starts_at_zero_so_bars_keep_their_ratio(before: float, after: float) -> None:
    """A +64% change must look like +64%, not tenfold: the axis runs from 0 to at least the
    tallest bar, so bar heights are proportional to the values."""
    bars, low, high = _bar_heights(render_comment(_chart_diff(before, after)))
    assert low == 0
    assert max(bars) <= high < 2.5 * max(bars)
    assert bars[1] / bars[0] == pytest.approx(after / before, rel=0.01)  # no rounding away


CI_VARIABLES = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA", "CI_PROJECT_URL",
                "CI_COMMIT_SHA", "GITHUB_ACTIONS")  # fmt: skip


@pytest.fixture
def no_ci(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (*CI_VARIABLES, "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_blob_base_from_the_ci_variables() -> None:
    github = {"GITHUB_SERVER_URL": "https://ghe.acme.example", "GITHUB_REPOSITORY": "ml/models",
              "GITHUB_SHA": "abc123"}  # fmt: skip
    assert _links.blob_base(github) == "https://ghe.acme.example/ml/models/blob/abc123/"
    gitlab = {"CI_PROJECT_URL": "https://gitlab.com/grp/proj", "CI_COMMIT_SHA": "def456"}
    assert _links.blob_base(gitlab) == "https://gitlab.com/grp/proj/-/blob/def456/"
    assert _links.blob_base({"GITHUB_REPOSITORY": "ml/models"}) is None


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("git@github.com:acme/models.git", "https://github.com/acme/models/blob/S/"),
        ("https://x-access-token:t0k@github.com/acme/models", "https://github.com/acme/models/blob/S/"),
        ("ssh://git@gitlab.acme.example:2222/ml/sub/proj.git",
         "https://gitlab.acme.example/ml/sub/proj/-/blob/S/"),
        ("https://bitbucket.org/acme/models.git", None),
        ("/srv/git/models.git", None),
    ],
)  # fmt: skip
def test_blob_base_from_a_remote(remote: str, expected: str | None) -> None:
    assert _links.blob_base_from_remote(remote, "S") == expected


def test_cli_markdown_links_are_absolute_in_ci_and_relative_elsewhere(
    tmp_path: Path, no_ci: pytest.MonkeyPatch
) -> None:
    slurm_job(tmp_path)
    no_ci.chdir(tmp_path)
    runner = CliRunner()
    local = runner.invoke(main, ["check", ".", "--format", "markdown"]).output
    assert "](train.slurm#L" in local
    no_ci.setenv("GITHUB_SERVER_URL", "https://github.com")
    no_ci.setenv("GITHUB_REPOSITORY", "acme/models")
    no_ci.setenv("GITHUB_SHA", "abc123")
    in_ci = runner.invoke(main, ["check", ".", "--format", "markdown"]).output
    assert "](https://github.com/acme/models/blob/abc123/train.slurm#L" in in_ci


def test_cli_diff_markdown_links_point_at_the_head_commit_on_the_host(
    tmp_path: Path, no_ci: pytest.MonkeyPatch
) -> None:
    """In diff mode the markdown is a PR comment: relative links there 404, so they go to the
    origin remote's blob view of HEAD even outside CI."""
    head = job_repo_with_a_change(tmp_path, remote="git@github.com:acme/models.git")
    no_ci.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--diff", "base", "--format", "markdown"])
    assert f"](https://github.com/acme/models/blob/{head}/train.slurm#L" in result.output, (
        result.output
    )
