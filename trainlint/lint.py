"""The check pipeline as a library call: paths → jobs → estimates → Rego → findings.

The CLI is a thin shell around ``check``; nothing here imports click or rich.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ValidationError

from trainlint import engine as engines
from trainlint.assemble import Workspace, assemble
from trainlint.config import find_config
from trainlint.discover import discover
from trainlint.errors import ConfigError, PolicyError
from trainlint.estimate import EstimateParams, estimate
from trainlint.findings import Finding, make_finding, selected, sort_key
from trainlint.job import Job
from trainlint.packs import Pack, load_builtin_pack


class RunError(BaseModel):
    """A problem that stopped one job from being checked; the other jobs still are."""

    job: str
    message: str


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    errors: list[RunError] = field(default_factory=list)


def load_jobs(paths: Sequence[Path], pack: Pack | None = None) -> list[Job]:
    """Discover, parse and assemble the jobs under ``paths``, with their estimates filled
    from the pack's ``params.estimate`` assumptions."""
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise ConfigError(f"path does not exist: {', '.join(missing)}")
    params = estimate_params(pack or load_builtin_pack())
    jobs = assemble(discover(paths), Workspace(config=find_config(paths[0])))
    for job in jobs:
        job.estimates = estimate(job, params)
    return jobs


def estimate_params(pack: Pack) -> EstimateParams:
    """The estimator's assumptions (MFU, write bandwidth, prices...) as the pack sets them."""
    raw = pack.data.get("trainlint", {}).get("params", {}).get("estimate", {})
    try:
        return EstimateParams.model_validate(raw)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise PolicyError(f"pack {pack.name!r}: params.estimate: {detail}") from None


def check_selectors(selectors: Sequence[str], pack: Pack) -> None:
    """A selector matching no rule is a typo that would silently select nothing (ruff: error)."""
    for selector in selectors:
        if not any(selected(r.id, r.slug, [selector], []) for r in pack.rules):
            message = f"unknown rule selector {selector!r}: no rule id, prefix or slug matches"
            raise ConfigError(message)


def check(
    paths: Sequence[Path],
    engine_name: str = engines.DEFAULT_ENGINE,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    pack: Pack | None = None,
) -> Report:
    """Every finding of the pack's rules on every job under ``paths``, sorted by location."""
    pack = pack or load_builtin_pack()
    check_selectors([*select, *ignore], pack)
    engine = engines.create_engine(engine_name, pack)  # compiled once for the whole run
    report = Report(jobs=load_jobs(paths, pack))
    rules = {rule.package.rsplit(".", 1)[-1]: rule for rule in pack.rules}
    for job in report.jobs:
        try:
            results = engine.evaluate(job.as_input())
        except PolicyError as exc:
            report.errors.append(RunError(job=job.id, message=str(exc)))
            continue
        for package, raws in results.items():
            rule = rules.get(package)
            if rule is None or not selected(rule.id, rule.slug, select, ignore):
                continue
            report.findings.extend(
                make_finding(job, rule.id, rule.slug, rule.severity, raw) for raw in raws
            )
    report.findings = _unique(sorted(report.findings, key=sort_key))
    return report


def _unique(findings: list[Finding]) -> list[Finding]:
    """One finding per rule, place and message: a config shared by several jobs (a broken or
    missing file, a typo) is reported once, at its line, not once per job."""
    seen: set[tuple[str, str, int, int, str]] = set()
    unique = []
    for finding in findings:
        key = (finding.rule, finding.file, finding.line, finding.column, finding.message)
        if key not in seen:
            seen.add(key)
            unique.append(finding)
    return unique
