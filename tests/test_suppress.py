"""Suppressions end to end: inline comments, per-file-ignores, waivers, the baseline, TL905.

Every test runs the real pipeline on files written to a temporary repo. TL302 (debug-logging)
is the probe rule: ``NCCL_DEBUG=INFO`` in a launch script fires it on a line of our choosing.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from trainlint.cli import main
from trainlint.errors import ConfigError
from trainlint.findings import Finding
from trainlint.lint import CheckOptions, check
from trainlint.results import Report

TODAY = datetime.date(2026, 11, 29)
SCRIPT = """\
#!/bin/bash
#SBATCH --gres=gpu:h100:8
export NCCL_DEBUG=INFO{trailing}
torchrun --nproc_per_node 8 train.py
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(repo: Path, config: str | None = None, **options: Any) -> Report:  # CheckOptions'
    if config is not None:
        (repo / ".trainlint.toml").write_text(config)
    select = options.pop("select", ["TL302", "TL905"])
    return check([Path(".")], CheckOptions(select=select, today=TODAY, **options))


def rules(report: Report, suppressed: bool | None = None) -> list[tuple[str, str, int]]:
    return [
        (f.rule, f.file, f.line)
        for f in report.findings
        if suppressed is None or (f.suppression is not None) == suppressed
    ]


def only(report: Report, rule: str) -> Finding:
    (finding,) = [f for f in report.findings if f.rule == rule]
    return finding


def test_the_probe_rule_fires_unsuppressed(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    assert rules(run(repo)) == [("TL302", "train.sh", 3)]


def test_trailing_comment_suppresses_its_line_and_keeps_the_finding(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing="  # trainlint: ignore[TL302] hang"))
    finding = only(run(repo), "TL302")
    assert finding.suppression is not None
    assert finding.suppression.kind == "inline"
    assert finding.suppression.reason == "hang"
    assert finding.suppression.source == "train.sh:3"


def test_comment_on_the_line_above_suppresses_by_slug(repo: Path) -> None:
    text = SCRIPT.format(trailing="").replace(
        "export NCCL", "# trainlint: ignore[debug-logging] bisecting a hang\nexport NCCL"
    )
    (repo / "train.sh").write_text(text)
    assert rules(run(repo), suppressed=False) == []
    assert only(run(repo), "TL302").suppression is not None


def test_ignore_file_suppresses_everywhere_in_the_file(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing="") + "# trainlint: ignore-file[TL3]\n")
    finding = only(run(repo), "TL302")
    assert finding.suppression is not None and finding.suppression.kind == "file"


def test_unused_inline_ignore_is_reported_where_it_is(repo: Path) -> None:
    text = SCRIPT.format(trailing="") + "echo done  # trainlint: ignore[TL302] stale\n"
    (repo / "train.sh").write_text(text)
    report = run(repo)
    unused = only(report, "TL905")
    assert (unused.file, unused.line, unused.column) == ("train.sh", 5, 12)
    assert "unused inline ignore" in unused.message
    assert only(report, "TL302").suppression is None


@pytest.mark.parametrize(
    ("comment", "says"),
    [
        ("# trainlint: ignore", "expected '# trainlint: ignore[RULE, ...] reason'"),
        ("# trainlint: ignore[]", "expected"),
        ("# trainlint: ignore[TL9999] typo", "unknown rule 'TL9999'"),
        ("# trainlint: ignore-file[nonsense]", "unknown rule 'nonsense'"),
    ],
)
def test_malformed_ignores_are_reported_and_suppress_nothing(
    repo: Path, comment: str, says: str
) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=f"  {comment}"))
    report = run(repo)
    assert says in only(report, "TL905").message
    assert "malformed" in only(report, "TL905").message
    assert only(report, "TL302").suppression is None


def test_ignore_of_a_rule_that_did_not_run_is_not_called_unused(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing="  # trainlint: ignore[TL201] later"))
    assert [r for r, _, _ in rules(run(repo))] == ["TL302"]


def test_per_file_ignores(repo: Path) -> None:
    (repo / "jobs").mkdir()
    (repo / "jobs" / "train.sh").write_text(SCRIPT.format(trailing=""))
    report = run(repo, '[per-file-ignores]\n"jobs/*.sh" = ["TL302"]\n')
    finding = only(report, "TL302")
    assert finding.suppression is not None and finding.suppression.kind == "per-file-ignores"


WAIVER = """\
[[waivers]]
rule = "debug-logging"
path = "*.sh"
reason = "NCCL traces for the interconnect ticket"
approved_by = "platform-team"
expires = {expires}
"""


def test_waiver_suppresses_until_it_expires(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    finding = only(run(repo, WAIVER.format(expires="2026-12-31")), "TL302")
    assert finding.suppression is not None
    assert finding.suppression.kind == "waiver"
    assert finding.suppression.approved_by == "platform-team"
    assert finding.suppression.expires == "2026-12-31"


def test_expired_waiver_stops_suppressing_and_is_reported(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    report = run(repo, WAIVER.format(expires="2026-11-28"))
    assert only(report, "TL302").suppression is None
    expired = only(report, "TL905")
    assert "expired waiver" in expired.message and "2026-11-28" in expired.message
    assert (expired.file, expired.line) == (".trainlint.toml", 4)  # the waiver's reason line


def test_waiver_that_matches_nothing_is_unused(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing="").replace("NCCL_DEBUG=INFO", "X=1"))
    report = run(repo, WAIVER.format(expires="2027-01-31"))
    assert "unused waiver" in only(report, "TL905").message


def test_waiver_without_reason_is_refused(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    config = '[[waivers]]\nrule = "TL302"\nreason = "  "\n'
    with pytest.raises(ConfigError, match="reason"):
        run(repo, config)
    with pytest.raises(ConfigError, match="reason"):
        run(repo, '[[waivers]]\nrule = "TL302"\n')


def test_baseline_round_trip_survives_a_moved_line(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    cli = CliRunner()
    written = cli.invoke(main, ["check", "--select", "TL302", "--write-baseline", "base.json"])
    assert written.exit_code == 0, written.output
    assert json.loads((repo / "base.json").read_text())["findings"][0]["rule"] == "TL302"
    assert cli.invoke(main, ["check", "--select", "TL302"]).exit_code == 1
    baselined = cli.invoke(main, ["check", "--select", "TL302", "--baseline", "base.json"])
    assert baselined.exit_code == 0

    moved = SCRIPT.format(trailing="").replace("export", "# a comment\n\nexport")
    (repo / "train.sh").write_text(moved)
    report = run(repo, baseline=repo / "base.json")
    finding = only(report, "TL302")
    assert finding.line == 5 and finding.suppression is not None
    assert finding.suppression.kind == "baseline"


def test_new_finding_is_not_in_the_baseline_and_a_fixed_one_is_reported(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    CliRunner().invoke(main, ["check", "--select", "TL302", "--write-baseline", "base.json"])
    (repo / "train.sh").write_text(SCRIPT.format(trailing="").replace("NCCL_DEBUG=INFO", "X=1"))
    (repo / "other.sh").write_text(SCRIPT.format(trailing=""))
    report = run(repo, baseline=repo / "base.json")
    assert rules(report, suppressed=False) == [("TL905", "base.json", 4), ("TL302", "other.sh", 3)]
    assert "baseline entry for TL302 in train.sh" in only(report, "TL905").message


def test_baseline_from_the_config(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    CliRunner().invoke(main, ["check", "--select", "TL302", "--write-baseline", "base.json"])
    assert rules(run(repo, 'baseline = "base.json"\n'), suppressed=False) == []


def test_suppressed_findings_stay_in_json_and_do_not_fail_the_run(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing="  # trainlint: ignore[TL302] ok"))
    result = CliRunner().invoke(main, ["check", "--select", "TL302", "--format", "json"])
    assert result.exit_code == 0
    (finding,) = json.loads(result.output)["findings"]
    assert finding["suppression"]["reason"] == "ok"
    text = CliRunner().invoke(main, ["check", "--select", "TL302"]).output
    assert "TL302" not in text.splitlines()[0] and "1 suppressed" in text


def test_fingerprint_ignores_line_and_numbers() -> None:
    from trainlint.findings import fingerprint

    same = fingerprint("TL201", "/checkpoint/every_steps", "every 10 steps: ~1.9 s, $620")
    assert same == fingerprint("TL201", "/checkpoint/every_steps", "every 20 steps: ~2.5 s, $1,240")
    assert same != fingerprint("TL201", "/checkpoint/every_epochs", "every 10 steps: ~1.9 s, $620")


# What the refactor of issue 16 makes reliable: config entries located by key path, comments
# read from the text the run already read, and suppression steps that are pure functions.

SAME_REASON = """\
# reason = "NCCL traces for the interconnect ticket" (kept from the old cluster's config)
[[waivers]]
rule = "debug-logging"
reason = "NCCL traces for the interconnect ticket"
expires = 2026-01-01

[[waivers]]
rule = "TL302"
path = "jobs/*"
reason = "NCCL traces for the interconnect ticket"
expires = 2026-01-01
"""


def test_waivers_with_the_same_reason_are_located_at_their_own_lines(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    report = run(repo, SAME_REASON)
    expired = [(f.file, f.line, f.column) for f in report.findings if f.rule == "TL905"]
    assert expired == [(".trainlint.toml", 4, 11), (".trainlint.toml", 10, 11)]


def test_a_waiver_is_located_at_its_reason_not_at_a_comment_that_repeats_it(repo: Path) -> None:
    (repo / "train.sh").write_text(SCRIPT.format(trailing="").replace("NCCL_DEBUG=INFO", "X=1"))
    config = SAME_REASON.split("\n\n")[0].replace("2026-01-01", "2027-01-31") + "\n"
    unused = only(run(repo, config), "TL905")
    assert "matches no finding" in unused.message
    assert (unused.file, unused.line, unused.column) == (".trainlint.toml", 4, 11)


def test_inline_ignores_come_from_the_text_the_run_read(repo: Path) -> None:
    """The suppressions never open a file: what the workspace read is what counts, even once
    the file is gone; files read in worker processes bring their comment lines back."""
    from trainlint import suppress
    from trainlint.config import RepoConfig
    from trainlint.lint import load

    for name in ("train.sh", "other.sh"):
        (repo / name).write_text(SCRIPT.format(trailing=f"  # trainlint: ignore[TL302] {name}"))
    loaded = load([Path(".")], workers=2)
    for name in ("train.sh", "other.sh"):
        (repo / name).unlink()
    found = suppress.collect(["train.sh", "other.sh"], loaded.documents, RepoConfig(),
                             lambda code: True)  # fmt: skip
    assert {file: [i.reason for i in ignores] for file, ignores in found.inline.items()} == {
        "other.sh": ["other.sh"], "train.sh": ["train.sh"],
    }  # fmt: skip


def test_applying_suppressions_is_pure(repo: Path) -> None:
    """Each step answers the same however often it runs: a baseline entry absorbs a finding
    on every call, and nothing is marked used or violated as a side effect."""
    from trainlint import suppress
    from trainlint.config import find_config
    from trainlint.lint import load

    (repo / "train.sh").write_text(SCRIPT.format(trailing=""))
    (repo / "other.sh").write_text(SCRIPT.format(trailing=""))
    findings = [f for f in run(repo).findings if f.rule == "TL302"]
    assert [f.file for f in findings] == ["other.sh", "train.sh"]
    suppress.write_baseline(findings[:1], repo / "base.json")
    (repo / "train.sh").write_text(SCRIPT.format(trailing="  # trainlint: ignore[TL302] hang"))
    (repo / ".trainlint.toml").write_text('[[waivers]]\nrule = "TL301"\nreason = "unused"\n')
    suppressions = suppress.collect(
        ["other.sh", "train.sh"], load([Path(".")]).documents, find_config(repo),
        lambda code: True, repo / "base.json",
    )  # fmt: skip
    once = suppressions.apply(findings)
    assert [f.suppression.kind for f in once if f.suppression] == ["baseline", "inline"]
    assert suppressions.apply(findings) == once and suppressions.apply(once) == once
    problems = suppressions.unused(once, lambda code: True)
    assert [p.detail for p in problems] == ["waiver for TL301 on '**' matches no finding"]
    assert suppressions.unused(findings, lambda code: True) == problems
    assert suppressions.lock_violations(once) == suppressions.lock_violations(findings) == []


# -- a baseline accepts the waste it saw ------------------------------------------------------


def checkpoints_every(repo: Path, steps: int) -> None:
    """The llama example, saving every ``steps`` steps (TL201 fires below 500)."""
    import re
    import shutil

    from tests.conftest import EXAMPLES

    script = repo / "llama3-sft" / "train.slurm"
    if not script.exists():
        shutil.copytree(EXAMPLES / "llama3-sft", repo / "llama3-sft")
    script.write_text(re.sub(r"--save_steps \d+", f"--save_steps {steps}", script.read_text()))


def baseline_at(repo: Path, steps: int) -> Path:
    checkpoints_every(repo, steps)
    written = CliRunner().invoke(main, ["check", "--select", "TL201", "--write-baseline", "b.json"])
    assert written.exit_code == 0, written.output
    return repo / "b.json"


def test_a_baseline_entry_records_the_waste_and_stops_suppressing_when_it_grows(
    repo: Path,
) -> None:
    """save_steps 50 → 5 makes TL201 ten times costlier: the baseline accepted $35, not $350."""
    baseline = baseline_at(repo, 50)
    (entry,) = json.loads(baseline.read_text())["findings"]
    assert entry["waste"]["usd"] > 0
    checkpoints_every(repo, 48)  # ~2.5% costlier: still the waste the baseline accepted
    report = run(repo, select=["TL201", "TL905"], baseline=baseline)
    assert rules(report, suppressed=True) == [("TL201", "llama3-sft/train.slurm", 20)]
    checkpoints_every(repo, 40)  # ~25% costlier
    report = run(repo, select=["TL201", "TL905"], baseline=baseline)
    assert rules(report, suppressed=False) == [("TL201", "llama3-sft/train.slurm", 20)]
    checkpoints_every(repo, 5)
    result = CliRunner().invoke(main, ["check", "--select", "TL201,TL905", "--baseline", "b.json"])
    assert result.exit_code == 1, result.output
    assert "train.slurm:20:5: TL201 [warning] checkpoint every 5 steps" in result.output
    assert "TL905" not in result.output  # the entry is used: it just no longer suppresses


def test_a_baseline_written_before_waste_was_recorded_still_suppresses(repo: Path) -> None:
    baseline = baseline_at(repo, 50)
    document = json.loads(baseline.read_text())
    for entry in document["findings"]:
        del entry["waste"]
    baseline.write_text(json.dumps(document))
    checkpoints_every(repo, 5)
    report = run(repo, select=["TL201", "TL905"], baseline=baseline)
    assert rules(report, suppressed=True) == [("TL201", "llama3-sft/train.slurm", 20)]
    assert rules(report, suppressed=False) == []


def test_the_baseline_entry_of_a_fixed_finding_is_info_and_does_not_block(repo: Path) -> None:
    baseline_at(repo, 50)
    checkpoints_every(repo, 1000)  # fixed
    result = CliRunner().invoke(main, ["check", "--select", "TL201,TL905", "--baseline", "b.json"])
    assert result.exit_code == 0, result.output
    assert "b.json:4:1: TL905 [info] unused baseline entry: baseline entry for TL201" in (
        result.output
    )
