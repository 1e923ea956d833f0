"""The check pipeline as a library call: paths → jobs → estimates → Rego → findings.

The CLI is a thin shell around ``check``; nothing here imports click or rich.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from trainlint import engine as engines
from trainlint import suppress
from trainlint.assemble import Workspace, assemble
from trainlint.config import RepoConfig, find_config
from trainlint.conftest_compat import conftest_rule_ids
from trainlint.discover import discover
from trainlint.errors import ConfigError, PolicyError
from trainlint.estimate import EstimateParams, estimate
from trainlint.files import FileOutcome, outcomes, unsupported_input
from trainlint.findings import Finding, Severity, make_finding, selected, sort_key
from trainlint.job import Job, Location, SourceFile
from trainlint.measurement import attach_measurements, measurement_root
from trainlint.packs import Pack, RuleMeta
from trainlint.packs.layering import Violation
from trainlint.parallel import evaluate_jobs, read_documents, worker_count
from trainlint.policy import PlacedViolation, Policy, config_location, load_policy
from trainlint.sources.base import Document, Skipped


class RunError(BaseModel):
    """A problem that stopped one job from being checked; the other jobs still are."""

    job: str
    message: str


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    errors: list[RunError] = field(default_factory=list)
    rules: tuple[RuleMeta, ...] = ()
    """The rules that ran (the effective pack's), for reports that describe them (SARIF)."""
    params: dict[str, Any] = field(default_factory=dict)
    """The effective ``data.trainlint.params``: rule options as the layers set them."""
    files: list[FileOutcome] = field(default_factory=list)
    """What became of every candidate file (``trainlint show --files``)."""


UNUSED_SUPPRESSION = "unused_suppression"  # TL905's package: it runs after the others
LOCK_VIOLATION = "lock_violation"  # TL906's, likewise
GOVERNANCE = frozenset({UNUSED_SUPPRESSION, LOCK_VIOLATION})
ALWAYS_REPORTED = frozenset({LOCK_VIOLATION})
"""Rules no selection turns off: TL906 reports the attempts to loosen an org pack's locks, and
the repository that makes the attempt writes the selection (``select = ["TL1"]``), so it
cannot be the one to hide the report. TL905 (unused, malformed or expired suppressions) is
not here: a suppression it reports suppresses nothing, so hiding TL905 hides no finding; it
follows the selection like ruff's RUF100, and an org pack that wants it locks it."""
UNSUPPORTED = "unsupported_workload"  # TL907's: it reads the run's files, not a job


@dataclass(frozen=True)
class Selection:
    """Which rules run: ruff's select / extend-select / ignore, from the CLI over the config."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @classmethod
    def resolve(
        cls,
        config: RepoConfig,
        select: Sequence[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
    ) -> Selection:
        """``select`` on the command line replaces the config's; the others add to it."""
        base = list(select) if select is not None else list(config.select or [])
        extra = [*config.extend_select, *extend_select]
        chosen = [*(base or (["TL"] if extra else [])), *extra]
        return cls(tuple(chosen), (*config.ignore, *ignore))

    def runs(self, rule_id: str, slug: str) -> bool:
        return selected(rule_id, slug, self.select, self.ignore)


@dataclass
class Loaded:
    """A run's jobs, with their estimates, and what became of every candidate file."""

    jobs: list[Job]
    files: list[FileOutcome]
    documents: dict[Path, Document | Skipped]
    """Every file read, by resolved path (the workspace's): where suppressions find comments."""


def load(
    paths: Sequence[Path],
    pack: Pack | None = None,
    config: RepoConfig | None = None,
    *,
    workers: int | None = None,
    exclude: Sequence[Path] = (),
) -> Loaded:
    """Discover, parse and assemble the jobs under ``paths``, with their estimates filled
    from the pack's ``params.estimate`` assumptions. Files are parsed in ``workers``
    processes (default: ``parallel.worker_count``'s choice for the number of files);
    ``exclude`` names trainlint's own files (the report being written, the baseline)."""
    missing = [str(p) for p in paths if not os.path.lexists(p)]  # a symlink loop is TL901
    if missing:
        raise ConfigError(f"path does not exist: {', '.join(missing)}")
    config = config or find_config(paths[0])
    params = estimate_params(pack or load_policy(config).pack)
    found = discover(paths, exclude=exclude)
    space = Workspace(config=config)
    read_documents(found, space, worker_count(len(found), workers))
    jobs = assemble(found, space)
    attach_measurements(jobs, measurement_root(paths[0]))  # first: estimates use them
    for job in jobs:
        job.estimates = estimate(job, params)
    return Loaded(jobs, outcomes(found, space, jobs), space.documents)


def load_jobs(
    paths: Sequence[Path],
    pack: Pack | None = None,
    config: RepoConfig | None = None,
    *,
    workers: int | None = None,
) -> list[Job]:
    """The jobs of ``load``."""
    return load(paths, pack, config, workers=workers).jobs


def estimate_params(pack: Pack) -> EstimateParams:
    """The estimator's assumptions (MFU, write bandwidth, prices...) as the pack sets them."""
    raw = pack.data.get("trainlint", {}).get("params", {}).get("estimate", {})
    try:
        return EstimateParams.model_validate(raw)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise PolicyError(f"pack {pack.name!r}: params.estimate: {detail}") from None


def check_selectors(selectors: Sequence[str], known: suppress.Known) -> None:
    """A selector matching no rule is a typo that would silently select nothing (ruff: error)."""
    for selector in selectors:
        if not known(selector):
            message = f"unknown rule selector {selector!r}: no rule id, prefix or slug matches"
            raise ConfigError(message)


def check(
    paths: Sequence[Path],
    engine_name: str = engines.DEFAULT_ENGINE,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    pack: Pack | None = None,
    *,
    extend_select: Sequence[str] = (),
    baseline: Path | None = None,
    config: RepoConfig | None = None,
    today: datetime.date | None = None,
    opa_url: str | None = None,
    namespaces: Sequence[str] = (),
    all_namespaces: bool = False,
    offline: bool = False,
    workers: int | None = None,
    strict: bool = False,
    exclude: Sequence[Path] = (),
    packs: Sequence[str] = (),
    approved_by: Sequence[str] | None = None,
) -> Report:
    """Every finding of the policy's rules on every job under ``paths``, sorted by location.

    The policy is ``pack`` (default: builtin) under the config's org packs and params. Suppressed
    findings are kept and marked; TL905 reports suppressions that are unused, malformed or
    expired, TL906 every attempt to loosen a lock. Conftest-style rules of the selected
    ``namespaces`` run too. Big runs parse and evaluate in ``workers`` processes (default:
    ``parallel.worker_count``'s choice); the report is the same for any number of them.
    TL907 reports the GPU workloads no format reads, as errors when ``strict``; ``exclude``
    names trainlint's own files, never read as input. ``packs`` are org packs named outside
    the repository (the repo config cannot remove them); ``approved_by``, when given, lists
    the identities the CI platform verified approved this change: a waiver of a locked rule
    then counts only when its approver is among them too.
    """
    if config is None:
        config = find_config(paths[0]) if paths else RepoConfig()
    policy = load_policy(config, pack, offline=offline, required=packs)
    pack = policy.pack
    selection = Selection.resolve(config, select, extend_select, ignore)
    conftest_ids = conftest_rule_ids(pack, namespaces, all_namespaces)
    known = _known(pack, conftest_ids)
    for selector in [*selection.select, *selection.ignore, *_config_selectors(config)]:
        if not known(selector):
            raise ConfigError(
                f"unknown rule selector {selector!r}: no rule id, prefix or slug matches"
            )
    violations = [*policy.violations, *_deselected_locks(config, policy)]
    engine = engines.create_engine(engine_name, pack, opa_url=opa_url)  # compiled once
    running = tuple(rule for rule in pack.rules if _runs(rule, selection, policy))
    params = pack.data.get("trainlint", {}).get("params", {})
    baseline = baseline or (config.root / config.baseline if config.baseline else None)
    own = [*exclude, *([baseline] if baseline is not None else [])]
    loaded = load(paths, pack, config, workers=workers, exclude=own)
    jobs = loaded.jobs
    report = Report(jobs=jobs, rules=running, params=params, files=loaded.files)
    rules = {rule.package.rsplit(".", 1)[-1]: rule for rule in pack.rules}
    remote = engines.ENGINES[engine_name].remote  # one server: requests stay in order
    count = 1 if remote else worker_count(len(jobs), workers)
    evaluations = evaluate_jobs(engine, engine_name, pack, jobs, namespaces, all_namespaces, count)
    reported = {
        p for p, rule in rules.items() if p not in GOVERNANCE and _runs(rule, selection, policy)
    }
    per_job = reported - {UNSUPPORTED}
    for job, evaluation in zip(jobs, evaluations, strict=True):
        if evaluation.error is not None:
            report.errors.append(RunError(job=job.id, message=evaluation.error))
            continue
        report.findings.extend(evaluation.conftest)  # namespaces select them, not --select
        for package, raws in evaluation.results.items():
            if package not in per_job:
                continue
            rule = rules[package]
            report.findings.extend(
                make_finding(job, rule.id, rule.slug, rule.severity, raw) for raw in raws
            )
    if UNSUPPORTED in reported:
        report.findings += _unsupported(report, engine, rules[UNSUPPORTED], strict)
    findings = _unique(sorted(report.findings, key=sort_key))
    files = [s.path for job in report.jobs for s in job.sources] + [f.file for f in findings]
    suppressions = suppress.collect(
        files, loaded.documents, config, known, baseline, today, policy.locks,
        verified=approved_by,
    )  # fmt: skip
    findings = suppressions.apply(findings)
    violations += suppressions.lock_violations(findings)

    def ran(code: str) -> bool:
        return any(_runs(r, selection, policy) and selected(r.id, r.slug, [code], [])
                   for r in pack.rules) or code in conftest_ids  # fmt: skip

    problems = suppressions.unused(findings, ran)
    findings += _governance(problems, violations, engine, rules, selection, policy, report)
    report.findings = sorted(findings, key=sort_key)
    return report


def _runs(rule: RuleMeta, selection: Selection, policy: Policy) -> bool:
    """Selected, locked by an org pack (a locked rule cannot be turned off), or always
    reported (TL906, whatever ``select``, ``--select`` or ``ignore`` say)."""
    return (
        rule.package.rsplit(".", 1)[-1] in ALWAYS_REPORTED
        or selection.runs(rule.id, rule.slug)
        or policy.locks.rule(rule.id) is not None
    )


def _deselected_locks(config: RepoConfig, policy: Policy) -> list[PlacedViolation]:
    """The repo config's select/ignore/per-file-ignores that would turn a locked rule off."""
    chosen = Selection.resolve(config)
    placed = []
    for rule in policy.pack.rules:
        lock = policy.locks.rule(rule.id)
        if lock is None or chosen.runs(rule.id, rule.slug):
            continue
        matching = [s for s in chosen.ignore if selected(rule.id, rule.slug, [s], [])]
        entry = ("ignore", chosen.ignore.index(matching[0])) if matching else ("select",)
        detail = f"turns off locked rule {rule.id} ({', '.join(matching) or 'not selected'})"
        violation = Violation(f"rules.{rule.id}", lock.pack, detail, "the repo config")
        placed.append(PlacedViolation(violation, config_location(config, entry)))
    return placed


def _config_selectors(config: RepoConfig) -> list[str]:
    return [code for codes in config.per_file_ignores.values() for code in codes]


def _known(pack: Pack, conftest_ids: Sequence[str] = ()) -> suppress.Known:
    """Whether a selector names a rule: an id, prefix or slug, or a conftest rule id."""
    return lambda code: (
        code in conftest_ids or any(selected(r.id, r.slug, [code], []) for r in pack.rules)
    )


def _governance(
    problems: Sequence[suppress.Problem],
    violations: Sequence[PlacedViolation],
    engine: engines.Engine,
    rules: dict[str, RuleMeta],
    selection: Selection,
    policy: Policy,
    report: Report,
) -> list[Finding]:
    """TL905 and TL906: one more evaluation, of the suppression problems and the lock
    violations alone, after every other rule has run."""
    if not problems and not violations:
        return []
    try:
        results = engine.evaluate(suppress.problem_inputs(problems, violations))
    except PolicyError as exc:
        report.errors.append(RunError(job="governance", message=str(exc)))
        return []
    places = {
        UNUSED_SUPPRESSION: ("suppression_problems", [p.location for p in problems]),
        LOCK_VIOLATION: ("lock_violations", [v.location for v in violations]),
    }
    findings = []
    for package, (key, locations) in places.items():
        rule = rules.get(package)
        if rule is None or not _runs(rule, selection, policy):
            continue
        findings += [
            _placed(rule, rule.severity, raw, key, locations) for raw in results.get(package, [])
        ]
    return findings


def _unsupported(
    report: Report, engine: engines.Engine, rule: RuleMeta, strict: bool
) -> list[Finding]:
    """TL907: one evaluation of the run's workloads that no format reads, each located at the
    line that made it look like one; errors under ``--strict``."""
    workloads = [f for f in report.files if f.outcome == "unsupported" and f.location]
    if not workloads:
        return []
    try:
        results = engine.evaluate(unsupported_input(workloads))
    except PolicyError as exc:
        report.errors.append(RunError(job="files", message=str(exc)))
        return []
    severity: Severity = "error" if strict else rule.severity
    places = [f.location for f in workloads if f.location is not None]
    raws = results.get(UNSUPPORTED, [])
    return [_placed(rule, severity, raw, "unsupported_workloads", places) for raw in raws]


def _placed(
    rule: RuleMeta, severity: Severity, raw: dict[str, Any], key: str, places: Sequence[Location]
) -> Finding:
    """A finding of a run-level rule (TL905, TL906, TL907), at the place its ``/<key>/<i>``
    pointer names: a one-file holder job carries that location."""
    index = int(str(raw.get("pointer", "")).rsplit("/", 1)[-1] or 0)
    where = places[index]
    holder = Job(
        id=where.file,
        sources=[SourceFile(path=where.file, format="unknown", role="unknown")],
        provenance={f"/{key}/{index}": where},
    )
    return make_finding(holder, rule.id, rule.slug, severity, raw)


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
