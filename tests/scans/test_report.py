"""The platform report's outputs, the budget and duplicate rules with ``check --db``, and the
budget line in the PR comment, on repositories made with git."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.scans.conftest import commit, write_job
from trainlint.cli import main
from trainlint.cli.posting import diff_body

pytestmark = pytest.mark.slow

ARTIFACTS = Path(os.environ.get("TRAINLINT_ARTIFACTS", "test-artifacts"))


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code in (0, 1), result.output
    return result.output


def budget_pack(folder: Path, usd: float) -> Path:
    """An org pack setting team nlp's monthly budget (and nothing else)."""
    pack = folder / "org-pack"
    params = pack / "trainlint" / "params" / "monthly_budget"
    params.mkdir(parents=True)
    manifest = {"revision": "1", "roots": ["trainlint/params"], "rego_version": 1,
                "metadata": {"name": "org", "version": "1.0.0"}}  # fmt: skip
    (pack / ".manifest").write_text(json.dumps(manifest))
    (params / "data.json").write_text(json.dumps({"budgets": {"team": {"nlp": {"usd": usd}}}}))
    return pack


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


def test_html_report_renders_its_charts_in_chromium(
    three_repos: list[Path], tmp_path: Path
) -> None:
    """One self-contained page: it loads from a file with the network off, its SVG charts
    have a bar per group, and a screenshot is kept (test-artifacts/report.png)."""
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    url = f"sqlite:///{tmp_path / 'scans.db'}"
    invoke("scan", *map(str, three_repos), "--db", url)
    page = tmp_path / "report.html"
    invoke("report", "--db", url, "--by", "team", "--format", "html", "-o", str(page))
    html = page.read_text()
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://github.com/org/" in html  # the most wasteful jobs link to their lines
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu",
              "--proxy-server=127.0.0.1:9", "--window-size=1000,1400"]  # fmt: skip
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=120, check=True).stdout  # fmt: skip
    assert dom.count('class="chart"') == 3
    assert dom.count('class="bar"') >= 6  # spend and waste for three teams
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report.png"
    subprocess.run([*common, f"--screenshot={shot.resolve()}", page.as_uri()],
                   capture_output=True, timeout=120, check=True)  # fmt: skip
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000  # drawn, not a blank page


def test_text_and_csv_list_every_group(three_repos: list[Path], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'scans.db'}"
    invoke("scan", *map(str, three_repos), "--db", url)
    rows = invoke("report", "--db", url, "--by", "project", "--format", "csv").splitlines()
    assert rows[0] == "project,jobs,usd_per_run,waste_usd,gpu_hours,findings"
    assert sorted(line.split(",")[0] for line in rows[1:]) == ["chat", "eval", "vlm"]
    text = invoke("report", "--db", url, "--by", "gpu")
    assert "H100" in text and "duplicate experiment" in text


def test_check_db_flags_the_duplicate_and_the_crossed_budget(
    three_repos: list[Path], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'scans.db'}"
    invoke("scan", str(three_repos[1]), str(three_repos[2]), "--db", url)  # research, vision
    nlp = three_repos[0]
    pack = budget_pack(tmp_path, usd=50.0)
    out = invoke("check", str(nlp), "--db", url, "--pack", str(pack), "--format", "json")
    found = {f["rule"]: f for f in json.loads(out)["findings"]}
    assert "org/research:train.slurm (team research)" in found["TL406"]["message"]
    assert found["TL407"]["message"].startswith("this job takes team nlp to $")
    assert "of its $50 budget for " in found["TL407"]["message"]
    roomy = budget_pack(tmp_path / "roomy", usd=1_000_000.0)
    out = invoke("check", str(nlp), "--db", url, "--pack", str(roomy), "--format", "json")
    assert "TL407" not in {f["rule"] for f in json.loads(out)["findings"]}
    out = invoke("check", str(nlp), "--format", "json")  # no database: neither rule fires
    assert not {"TL406", "TL407"} & {f["rule"] for f in json.loads(out)["findings"]}


def test_the_pr_comment_says_which_budget_the_change_crosses(
    three_repos: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'scans.db'}"
    nlp = three_repos[0]
    invoke("scan", str(nlp), "--db", url)
    write_job(nlp, "tag.team=nlp tag.project=chat runs=20", steps=4000)
    commit(nlp, "more runs")
    pack = budget_pack(nlp, usd=1000.0)
    (nlp / ".trainlint.toml").write_text(f'[[packs]]\npath = "{pack}"\n')
    monkeypatch.chdir(nlp)
    body = diff_body((Path("."),), "HEAD~1", None, url)
    assert body.startswith("> **Budget:** this PR takes team nlp to $")
    assert "of its $1,000 budget for " in body
    assert "TL407" in body
