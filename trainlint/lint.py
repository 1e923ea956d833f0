"""The library entry point: ``check(paths, CheckOptions(...))`` runs the whole pipeline,
paths → jobs → estimates → Rego → findings, and returns the ``results.Report``.

The CLI is a thin shell around ``check``; nothing here imports click or rich. ``check`` runs
in named steps: ``_plan`` (config, policy, selection, engine), ``_evaluate`` (load the jobs and
run the rules), ``_suppress`` (inline ignores, waivers, the baseline), ``_governance`` (TL905,
TL906).
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import pickle
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from trainlint import cache as caching
from trainlint import engine as engines
from trainlint import suppress
from trainlint.assemble import assemble
from trainlint.config import Configs, RepoConfig, project_root, run_config
from trainlint.conftest_compat import FileMode, FileModeOptions, conftest_rule_ids
from trainlint.conftest_input import InputError
from trainlint.discover import Candidates, discover, resolved
from trainlint.errors import ConfigError, PolicyError
from trainlint.estimate import EstimateParams, RuleLimits, estimate
from trainlint.files import outcomes, unsupported_input
from trainlint.findings import Finding, Severity, make_finding, selected, sort_key
from trainlint.fix import attach as attach_fixes
from trainlint.job import Job, Location, SourceFile
from trainlint.measurement import attach_measurements
from trainlint.packs import Pack, RuleMeta, with_rego_v0
from trainlint.packs.layering import Violation
from trainlint.parallel import (
    Evaluation,
    EvaluationSpec,
    evaluate_jobs,
    read_documents,
    worker_count,
)
from trainlint.policy import PlacedViolation, Policy, config_location, load_policy
from trainlint.read import Stub, Workspace, display
from trainlint.results import FileOutcome, Report, RunError
from trainlint.sources.base import Document, Skipped
from trainlint.sources.structured import KeyPath
from trainlint.workdir import at_root, working_directory


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    """Everything a check run takes besides its paths; the defaults are ``trainlint check``
    with no option. Frozen: the CLI builds one, and diff mode hands the same one to the check
    of each revision (with that revision's ``config``)."""

    engine_name: str = engines.DEFAULT_ENGINE
    """The Rego backend (``engine.ENGINES``); ``opa`` evaluates on the server at ``opa_url``."""
    opa_url: str | None = None
    select: Sequence[str] | None = None
    """Rules to run (ids, prefixes, slugs); replaces the config's select, None keeps it."""
    extend_select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    pack: Pack | None = None
    """The policy pack (default: builtin), under the config's org packs and params."""
    packs: Sequence[str] = ()
    """Org packs named outside the repository (``--pack``): the repo config cannot remove them."""
    config: RepoConfig | None = None
    """The run's config (``packs``, ``params``, ``baseline``, ``fail-on``); None finds the
    closest to the folder holding every path (``config.run_config``). Each file's selection,
    ignores, waivers and formats are its own closest config's, unless ``one_config``."""
    one_config: bool = False
    """``config`` applies to every file (``--config FILE``): no per-file discovery."""
    root: Path | None = None
    """The folder reported paths are relative to (None: ``config.project_root``'s choice, the
    git work tree); for a folder checked as a repository of its own inside another."""
    baseline: Path | None = None
    """Findings recorded in this file do not count (default: the config's baseline)."""
    today: datetime.date | None = None
    """The date waivers and inline ignores expire against (default: today)."""
    namespaces: Sequence[str] = ()
    """Conftest-style namespaces whose deny/violation/warn rules run too."""
    all_namespaces: bool = False
    rego_v0: bool = False
    """Pack modules of no declared Rego version are Rego v0 (``--rego-v0``)."""
    conftest: Path | None = None
    """Conftest mode (``--conftest DIR``): this policy directory's namespaces run on every
    YAML, JSON and TOML file, each document as conftest parses it (``conftest_compat.FileMode``)."""
    offline: bool = False
    """Remote packs from the cache only."""
    workers: int | None = None
    """Processes that parse and evaluate (``--jobs``; default: ``parallel.worker_count``'s)."""
    strict: bool = False
    """TL907 (GPU workloads no format reads) as errors."""
    exclude: Sequence[Path] = ()
    """trainlint's own files (the report being written, the baseline), never read as input."""
    approved_by: Sequence[str] | None = None
    """Who the CI platform verified approved the change; a waiver of a locked rule then counts
    only when its approver is among them. None: the platform said nothing."""
    overlay: Mapping[Path, str] = field(default_factory=dict)
    """Text read in place of files on disk, by resolved path (``read.Workspace.overlay``): an
    editor's unsaved buffers, checked as the whole job they belong to. A check with an
    overlay keeps no cache (what it reads is not what is on disk)."""
    context: Callable[[Sequence[Job], Mapping[str, Any]], None] | None = None
    """Fills in what rules read from outside the repository before they run, given the jobs
    and the pack's params (``check --db``: the org's scan database, ``scans.context``)."""
    cache: bool = False
    """Reuse and keep the work of earlier runs (``trainlint.cache``) in ``cache_dir``, else
    the config's ``cache-dir``, else ``.trainlint_cache`` in the project root; the report
    is the same with or without it."""
    cache_dir: Path | None = None
    changed: Sequence[Path] | None = None
    """Changed files (absolute; ``--changed``, the pre-commit hook): only the jobs that
    include one of them are evaluated and reported, and only these files' workloads (TL907);
    a changed repo config keeps every job. None: every job."""


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
    pack_rules: frozenset[str] = frozenset()
    """The configured packs' rule ids, run by default: with no ``select``, a pack's rules
    run beside the builtin ones (listing a pack opts into them). They count as selected by
    the least specific selector, so any ``ignore`` naming one (``ACME``) turns it off."""

    @classmethod
    def resolve(
        cls,
        config: RepoConfig,
        select: Sequence[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        pack_rules: Collection[str] = (),
    ) -> Selection:
        """``select`` on the command line replaces the config's; the others add to it."""
        base = list(select) if select is not None else list(config.select or [])
        extra = [*config.extend_select, *extend_select]
        chosen = [*(base or (["TL"] if extra else [])), *extra]
        defaults = frozenset() if base else frozenset(pack_rules)
        return cls(tuple(chosen), (*config.ignore, *ignore), defaults)

    def runs(self, rule_id: str, slug: str) -> bool:
        if selected(rule_id, slug, self.select, self.ignore):
            return True
        ignored = any(selected(rule_id, slug, [code], []) for code in self.ignore)
        return rule_id in self.pack_rules and not ignored


Documents = dict[Path, Document | Skipped]


@dataclass
class Loaded:
    """A run's jobs, with their estimates, and what became of every candidate file."""

    jobs: list[Job]
    files: list[FileOutcome]
    documents: Documents
    """Every file read, by resolved path (the workspace's): where suppressions find comments."""
    scope: str = ""
    """The cache's name for these paths from this root (``trainlint.cache``; "": no cache)."""
    measured: list[Path] = dataclasses.field(default_factory=list)
    """The folders the jobs' probe measurements were looked for in."""
    identity: str = ""
    """The cache's identity of this load (``caching.identity``; "": none, never reused)."""
    pending: Callable[[], tuple[Documents, Stubs]] | None = field(
        default=None, repr=False, compare=False
    )
    """A restored load's documents and stubs, until they are needed (a run whose report is
    reused never does)."""
    stubs: Stubs = field(default_factory=dict, repr=False, compare=False)
    """The documents the cache holds that this run did not read (``read.Workspace.stubs``):
    ``read_documents`` reads them; ``read`` gives their summaries instead."""
    stored: caching.Stored = field(default_factory=dict, repr=False, compare=False)
    """The documents the cache's document table holds, which a stored load names only."""
    roots: list[str] = field(default_factory=list, repr=False, compare=False)
    """Each job's ``cache.Closure`` key: a stored load's jobs are its closures' (the cache's
    ``carry`` entry), not stored twice."""
    inputs: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    """Each job's ``_input_digest`` as the cache knows it, by job id (not stored: each run
    takes them from the closures): valid while nothing changes a job after loading."""
    fingerprints: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    """Each job's ``cache.Closure.fingerprint`` (its files and their bytes), by job id: what
    its findings' fixes read (``_MadeFindings``); empty without a cache."""

    def read_documents(self) -> Documents:
        """Every document read, the cache's read now."""
        self._restore()
        for path, stub in self.stubs.items():
            self.documents[path] = stub.document()
        self.stubs.clear()
        return self.documents

    def read(self) -> Mapping[Path, suppress.Read]:
        """Every file read, by resolved path: its document, or for one the cache holds
        unread, its summary (all that suppressions read)."""
        self._restore()
        return {**{path: stub.summary for path, stub in self.stubs.items()}, **self.documents}

    def _restore(self) -> None:
        if self.pending is not None:
            documents, stubs = self.pending()
            self.documents.update(documents)
            self.stubs.update(stubs)
            self.pending = None


Stubs = dict[Path, Stub]


def load(  # noqa: PLR0913 - the library call: paths, pack, config, then keyword-only options
    paths: Sequence[Path],
    pack: Pack | None = None,
    config: RepoConfig | Configs | None = None,
    *,
    workers: int | None = None,
    exclude: Sequence[Path] = (),
    root: Path | None = None,
    overlay: Mapping[Path, str] | None = None,
    cache: caching.Cache | None = None,
    lazy_documents: bool = False,
) -> Loaded:
    """Discover, parse and assemble the jobs under ``paths``, with their estimates filled
    from the pack's ``params.estimate`` assumptions, their suggestions within its rules'
    thresholds (``RuleLimits``). Files are parsed in ``workers``
    processes (default: ``parallel.worker_count``'s choice for the number of files);
    ``exclude`` names trainlint's own files (the report being written, the baseline).
    Paths in the result are relative to ``root`` (default: ``config.project_root``);
    ``overlay`` gives text read in place of files (``Workspace.overlay``); ``cache`` serves
    what an earlier run already did (``trainlint.cache``; never with an overlay);
    ``lazy_documents`` leaves a restored load's documents for ``Loaded.read_documents``."""
    _refuse_missing(paths)
    configs = config if isinstance(config, Configs) else Configs(config or run_config(paths))
    pack = pack or load_policy(configs.run).pack
    own = [Path(os.path.abspath(path)) for path in exclude]
    with at_root(root or project_root(paths, configs.run), paths) as local:
        run = _Run(pack, configs, workers, own, None if overlay else cache, overlay or {})
        loaded = _load(local, run)
    if not lazy_documents:
        loaded.read_documents()
    return loaded


@dataclass(frozen=True)
class _Run:
    """What ``_load`` loads with: the pack, each file's config, the worker processes,
    trainlint's own files (never input), the cache (None: none) and the editor's buffers."""

    pack: Pack
    configs: Configs
    workers: int | None
    own: Sequence[Path]
    cache: caching.Cache | None = None
    overlay: Mapping[Path, str] = field(default_factory=dict)


def _load(paths: Sequence[Path], run: _Run) -> Loaded:
    """``load`` from the project root, ``paths`` named from it: a cached load whose files
    are unchanged, else parse, assemble and estimate (what is unchanged from the cache)."""
    found = discover(paths, exclude=run.own)
    if run.cache is None:
        return _load_found(found, run, None)
    scope = caching.digest(os.getcwd(), *map(str, paths))
    parts = [*map(str, found), *(str(resolved(path)) for path in found), repr(found.unread)]
    parts += [repr(found.roots), *map(str, run.own)]
    memo = caching.RunMemo(run.cache, scope, caching.digest(*parts, _pack_key(run.pack)))
    carried, salt = caching.Carried(), caching.digest(repr(run.configs.run))
    entry = memo.get(carried, salt)
    run.configs.take(carried.configs)  # each folder's config, where the configs hold
    hit = _restored(entry[1], entry[2], run, scope) if entry is not None else None
    if entry is not None and hit is not None:
        hit.identity = entry[0]
        return hit
    loaded = _load_found(found, run, scope, carried)
    read = ({**loaded.documents, **loaded.stubs}, run.configs, loaded.jobs, loaded.measured,
            carried)  # fmt: skip
    made = carried.made(salt, run.configs)
    jobs = [made[2][root].job_json or b"" for root in loaded.roots]
    stored = (caching.load_dependencies(*read), _stored(loaded), made, jobs)
    loaded.identity = memo.put(*stored) or ""
    loaded.inputs = _inputs(loaded.jobs, loaded.roots, made[2])
    return loaded


def _restored(
    entry: object, closures: Mapping[str, caching.Closure], run: _Run, scope: str
) -> Loaded | None:
    """The load ``_stored`` kept, its jobs from their ``closures`` (its documents left in the
    cache until read); None when the entry is not one, or its jobs no longer validate (a
    job model changed within a version): a miss, never an error."""
    if not isinstance(entry, tuple) or len(entry) != 2 or not isinstance(entry[1], Loaded):
        return None
    if not isinstance(entry[0], bytes) or run.cache is None:
        return None
    loaded: Loaded = entry[1]
    try:
        jobs = [caching.restored_job(closures[root]) for root in loaded.roots]
    except (KeyError, ValueError):  # no such closure; pydantic's ValidationError
        return None
    table, rest = caching.Table(run.cache, "document", scope), entry[0]
    space = Workspace(config=run.configs.run, configs=run.configs)

    def documents() -> tuple[Documents, Stubs]:
        read, stubs = caching.restored_documents(table, loaded.stored, space.load)
        return {**pickle.loads(rest), **read}, dict(stubs)

    inputs = _inputs(jobs, loaded.roots, closures)
    return replace(loaded, jobs=jobs, documents={}, pending=documents, inputs=inputs)


def _inputs(
    jobs: Sequence[Job], roots: Sequence[str], closures: Mapping[str, caching.Closure]
) -> dict[str, str]:
    """Each job's ``_input_digest``, by id, from the closure holding its JSON."""
    return {job.id: closures[root].input_digest for job, root in zip(jobs, roots, strict=True)}


def _stored(loaded: Loaded) -> tuple[bytes, Loaded]:
    """A load as the cache keeps it: the documents the document table holds by their keys
    (``Loaded.stored``) and the others pickled apart (read only when needed), the rest
    pickled; not the jobs, which the closures that rooted them hold (``Loaded.roots``)."""
    rest = {path: doc for path, doc in loaded.documents.items() if path not in loaded.stored}
    documents = pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL)
    return documents, replace(loaded, jobs=[], documents={}, stubs={})


def _pack_key(pack: Pack) -> str:
    return caching.pack_digest(pack.modules, pack.data)


def _load_found(
    found: Candidates,
    run: _Run,
    scope: str | None,
    carried: caching.Carried | None = None,
) -> Loaded:
    """Parse, assemble and estimate the ``found`` candidates; with a cache (``scope``), the
    documents and estimates of unchanged files and jobs come from it, and what the last
    load ``carried`` on (each file's digest, taken once; its document key, the last run's
    where the file's bytes are unchanged; each file's closure and job, the last run's while
    all it saw holds)."""
    space = Workspace(config=run.configs.run, configs=run.configs, overlay=dict(run.overlay))
    tables = _Tables.of(run.cache, scope)
    carried = carried if tables else None
    misses = (
        caching.fill_documents(tables.documents, found, space, carried)
        if tables and carried
        else {}
    )
    read_documents(found, space, worker_count(len(misses) if tables else len(found), run.workers))
    jobs = assemble(found, space, carried.closures if carried else None)
    finished = carried.closures.finished if carried else set()  # as the last run left them
    known: dict[int, str] = carried.closures.measured_in if carried else {}
    measured = _by_measurement_root(jobs, run.configs, known)
    for folder, measured_jobs in measured.items():  # estimates use them
        attach_measurements([job for job in measured_jobs if id(job) not in finished], folder)
    fresh = [job for job in jobs if id(job) not in finished]
    _estimate_all(fresh, run.pack, tables.estimates if tables else None, prune=not finished)
    if tables and carried:
        caching.store_documents(tables.documents, space, misses, carried.stored)
    if carried:  # where references found nothing: the load holds while they stay so
        carried.digests.update({Path(os.path.abspath(p)): None for p in space.probed})
        _depend_on_consulted(space, carried.digests)
    loaded = Loaded(jobs, outcomes(found, space, jobs), space.documents, scope or "")
    loaded.stubs = space.stubs
    loaded.measured = list(measured)
    loaded.stored = carried.stored if carried else {}
    if carried:  # every job has a closure then
        roots, made = carried.closures.roots, carried.closures.made
        loaded.roots = [roots[id(job)] for job in jobs]
        loaded.fingerprints = {job.id: made[roots[id(job)]].fingerprint for job in jobs}
    return loaded


def _depend_on_consulted(space: Workspace, digests: caching.Digests) -> None:
    """Every file a reading consulted (a base config, a Hydra group file, a place checked
    for a script) as a dependency of the load: its digest (None: no file there), taken once
    a run (``cache.consulted_now`` keeps it in ``digests``)."""
    read = [doc.consulted for doc in space.documents.values() if isinstance(doc, Document)]
    kept = [[(kind, path) for kind, path, _ in stub.consulted] for stub in space.stubs.values()
            if isinstance(stub, caching.Stub)]  # fmt: skip
    for consulted in [*read, *kept]:
        for _, path in consulted:
            caching.consulted_now("text", path, digests)  # by its real path, hashed once
            digests.setdefault(Path(path), digests[resolved(Path(path))])  # and its name


@dataclass(frozen=True)
class _Tables:
    """The cache's documents and estimates of one scope."""

    documents: caching.Table
    estimates: caching.Table

    @classmethod
    def of(cls, cache: caching.Cache | None, scope: str | None) -> _Tables | None:
        if cache is None or scope is None:
            return None
        return cls(caching.Table(cache, "document", scope), caching.Table(cache, "estimate", scope))


def _estimate_all(
    jobs: Sequence[Job], pack: Pack, table: caching.Table | None, *, prune: bool = True
) -> None:
    """Fill each job's estimates: from ``table`` when the same job was estimated with the
    same pack data before (the table keeps only this run's entries when ``prune``: not when
    some jobs were reused finished, whose entries this run does not look up)."""
    params, limits = EstimateParams.of(pack.data, pack.name), RuleLimits.of(pack.data)
    salt = caching.data_digest(pack.data)
    for job in jobs:
        key = caching.digest(salt, job.model_dump_json()) if table is not None else ""
        cached = table.get(key) if table is not None else None
        if cached is not None:
            job.estimates = cached
            continue
        job.estimates = estimate(job, params, limits)
        if table is not None:
            table.put(key, job.estimates)
    if table is not None:
        table.save(prune=prune)


def _by_measurement_root(
    jobs: Sequence[Job], configs: Configs, known: dict[int, str]
) -> dict[Path, list[Job]]:
    """The jobs by the folder their probe measurements are under: the one ``trainlint probe``
    writes to for the job's entry file (``measurement.measurement_root``: the folder of its
    closest config, else its own), whatever paths the check was given; ``known``: each job's
    folder by its ``id`` where the cache knows it, where the others' are kept."""
    grouped: dict[Path, list[Job]] = {}
    for job in jobs:
        if id(job) in known:
            folder = Path(known[id(job)])
        else:
            config = configs.closest(job.id)
            folder = config.root if config.source is not None else _real_folder(job.id)
            known[id(job)] = str(folder)
        grouped.setdefault(folder, []).append(job)
    return grouped


def _real_folder(file: str) -> Path:
    """The real path of the folder holding ``file``: its own real path's folder, which
    assembly resolved already (``resolved`` remembers it), unless the file is a symlink."""
    if os.path.islink(file):
        return resolved(Path(os.path.dirname(os.path.abspath(file))))
    return resolved(Path(file)).parent


def _refuse_missing(paths: Sequence[Path]) -> None:
    missing = [str(p) for p in paths if not os.path.lexists(p)]  # a symlink loop is TL901
    if missing:
        raise ConfigError(f"path does not exist: {', '.join(missing)}")


def load_jobs(
    paths: Sequence[Path],
    pack: Pack | None = None,
    config: RepoConfig | None = None,
    *,
    workers: int | None = None,
) -> list[Job]:
    """The jobs of ``load``."""
    return load(paths, pack, config, workers=workers).jobs


def check(paths: Sequence[Path], options: CheckOptions | None = None) -> Report:
    """Every finding of the policy's rules on every job under ``paths``, sorted by location.

    Suppressed findings are kept and marked; TL905 reports suppressions that are unused,
    malformed or expired, TL906 every attempt to loosen a lock, TL907 the GPU workloads no
    format reads. The report is the same for any number of ``workers``.
    """
    options = options or CheckOptions()
    _refuse_missing(paths)
    plan = _plan(paths, options)
    own = [*options.exclude, *([plan.baseline] if plan.baseline is not None else [])]
    loaded = load(paths, plan.pack, plan.configs, workers=options.workers, exclude=own,
                  root=plan.root, overlay=options.overlay, cache=plan.cache,
                  lazy_documents=True)  # fmt: skip
    with working_directory(plan.root):  # where the report's paths are relative to
        if options.changed is not None:
            loaded = _including(loaded, options.changed)
        key = _report_key(loaded, plan, options)
        report = _reused_report(loaded, plan, key) if key is not None else None
        if report is None:
            report = _report(loaded, plan, options)
            if key is not None and not report.errors:  # an error may pass next time
                _keep_report(report, loaded, plan, key)
    report.root = plan.root
    return report


def _report(loaded: Loaded, plan: RunPlan, options: CheckOptions) -> Report:
    """Evaluate, suppress, govern and fix: the report of a load, sorted."""
    plan = _nested_configs(plan, loaded.files)
    if options.context is not None:
        options.context(loaded.jobs, plan.pack.data.get("trainlint", {}).get("params", {}))
    report = _evaluate(loaded, plan, options)  # each job's findings come with their fixes
    if plan.files is not None:
        _check_files(report, loaded, plan.files)
    suppressions = _suppress(report, loaded.read(), plan, options)
    report.findings += _governance(report, plan, suppressions)
    report.findings.sort(key=sort_key)
    return report


def _report_key(loaded: Loaded, plan: RunPlan, options: CheckOptions) -> str | None:
    """The cache key of a whole report: the load's identity (every file it read, each
    file's config files, the measurements, the pack it was estimated with) and everything
    evaluating, suppressing and governing read besides (the pack, the engine, the command
    line's selection, the run's config, the locks and layer violations, the baseline's
    bytes, the day waivers expire against). None where a report is never reused: no cache,
    a partial run (``--changed``), conftest mode, a context filled from outside, a remote
    engine or a pack whose results change from run to run."""
    if (
        plan.cache is None
        or not loaded.identity
        or options.changed is not None
        or options.context is not None
        or plan.files is not None
        or engines.ENGINES[options.engine_name].remote
        or not caching.deterministic(plan.pack.modules)
    ):
        return None
    today = options.today or datetime.date.today()
    baseline = caching.file_digest(plan.baseline) if plan.baseline is not None else None
    settings = (
        options.engine_name, options.select, options.extend_select, options.ignore,
        options.namespaces, options.all_namespaces, options.strict, options.approved_by,
        options.one_config, plan.selectors, plan.conftest_ids, plan.violations,
        plan.policy.locks, plan.policy.rule_packs, plan.pack.name, plan.pack.rules, plan.config,
        plan.root, plan.baseline, baseline, today.isoformat(),
    )  # fmt: skip
    return caching.digest(loaded.identity, _pack_key(plan.pack), repr(settings))


def _reused_report(loaded: Loaded, plan: RunPlan, key: str) -> Report | None:
    """The report an earlier run made under ``key``, with this load's jobs and files."""
    assert plan.cache is not None
    entry = plan.cache.get("report", loaded.scope)
    if not isinstance(entry, tuple) or len(entry) != 2 or entry[0] != key:
        return None
    try:
        report = pickle.loads(entry[1])  # inside a signed entry
    except Exception:  # as Cache.get: a miss
        return None
    return (
        replace(report, jobs=loaded.jobs, files=loaded.files)
        if isinstance(report, Report)
        else None
    )


def _keep_report(report: Report, loaded: Loaded, plan: RunPlan, key: str) -> None:
    """Store the report under ``key``, without the jobs and files the load keeps; pickled
    apart, so a run of another key unpickles only the key (~0.02 s for 1,800 findings)."""
    assert plan.cache is not None
    kept = pickle.dumps(replace(report, jobs=[], files=[]), protocol=pickle.HIGHEST_PROTOCOL)
    plan.cache.put("report", loaded.scope, (key, kept))


def _including(loaded: Loaded, changed: Sequence[Path]) -> Loaded:
    """The jobs that include one of the ``changed`` files, and those files' outcomes: what
    ``--changed`` reports. A changed repo config can change every job: all are kept."""
    from trainlint.config import CONFIG_FILES

    if any(path.name in CONFIG_FILES for path in changed):
        return loaded
    names = {display(path) for path in changed}
    kept = [i for i, job in enumerate(loaded.jobs) if any(s.path in names for s in job.sources)]
    files = [outcome for outcome in loaded.files if outcome.path in names]
    jobs = [loaded.jobs[i] for i in kept]
    return Loaded(jobs, files, loaded.read_documents(), loaded.scope, loaded.measured)


@dataclass(frozen=True)
class RunPlan:
    """What a check run evaluates with, settled before any file is read. (What to do with a
    pull request's comment is ``comment.sticky.Plan``.)"""

    configs: Configs
    """The run's config and each file's (the closest to it, or the run's with ``--config``)."""
    policy: Policy
    selectors: Selectors
    conftest_ids: tuple[str, ...]
    known: suppress.KnownRules
    violations: tuple[PlacedViolation, ...]
    """Attempts to loosen an org pack's locks in the pack layers and the repo configs (TL906)."""
    engine: engines.Engine
    """Compiled once, for the jobs evaluated in this process and the run-level rules."""
    baseline: Path | None
    root: Path
    """The project root (``config.project_root``): every path reported is relative to it."""
    files: FileMode | None = None
    """Conftest mode's policies, compiled once (``--conftest``)."""
    cache: caching.Cache | None = None
    """The persistent cache (``CheckOptions.cache``); None: every run starts afresh."""

    @property
    def config(self) -> RepoConfig:
        return self.configs.run

    @property
    def pack(self) -> Pack:
        return self.policy.pack

    @property
    def selection(self) -> Selection:
        """The run's config's selection, under the command line's."""
        return self.selection_of(self.configs.run)

    def selection_of(self, config: RepoConfig) -> Selection:
        """A config's selection under the command line's (``--select`` replaces each's)."""
        cli = self.selectors
        return Selection.resolve(
            config, cli.select, cli.extend_select, cli.ignore, self.policy.rule_packs
        )

    def runs_in(self, rule: RuleMeta, file: str) -> bool:
        """``runs`` for a finding in ``file``: under the selection of that file's config."""
        return self._runs(rule, self.selection_of(self.configs.of(file)))

    def runs_anywhere(self, rule: RuleMeta) -> bool:
        """Whether the rule runs for the files of some config of the run."""
        return any(self._runs(rule, self.selection_of(c)) for c in self.configs.used())

    @cached_property
    def rules(self) -> dict[str, RuleMeta]:
        """The pack's rules by Rego package name (its last segment: ``lock_violation``)."""
        return {_package(rule): rule for rule in self.pack.rules}

    def runs(self, rule: RuleMeta) -> bool:
        """Selected, locked by an org pack (a locked rule cannot be turned off), or always
        reported (TL906, whatever ``select``, ``--select`` or ``ignore`` say)."""
        return self._runs(rule, self.selection)

    def _runs(self, rule: RuleMeta, selection: Selection) -> bool:
        return (
            _package(rule) in ALWAYS_REPORTED
            or selection.runs(rule.id, rule.slug)
            or self.policy.locks.rule(rule.id) is not None
        )

    def ran(self, code: str) -> bool:
        """Whether a suppression's code names a rule that ran: an ignore of a rule left out
        by every config's selection is not unused."""
        ran = any(self.runs_anywhere(rule) and _names(rule, code) for rule in self.pack.rules)
        return ran or code in self.conftest_ids


@dataclass(frozen=True)
class Selectors:
    """The command line's ``--select``, ``--extend-select`` and ``--ignore``."""

    select: Sequence[str] | None = None
    extend_select: Sequence[str] = ()
    ignore: Sequence[str] = ()


def _plan(paths: Sequence[Path], options: CheckOptions) -> RunPlan:
    """The config, the layered policy, the selection (an unknown selector is an error) and
    the engine; the baseline is ``options``' or the config's."""
    config = options.config
    if config is None:
        config = run_config(paths) if paths else RepoConfig()
    policy = load_policy(config, options.pack, offline=options.offline, required=options.packs)
    if options.rego_v0:
        policy = dataclasses.replace(policy, pack=with_rego_v0(policy.pack))
    selectors = Selectors(options.select, options.extend_select, options.ignore)
    selection = Selection.resolve(
        config, options.select, options.extend_select, options.ignore, policy.rule_packs
    )
    conftest = conftest_rule_ids(policy.pack, options.namespaces, options.all_namespaces)
    files = _file_mode(options)
    conftest += files.rule_ids if files is not None else ()
    known = _known(policy.pack, conftest)
    _refuse_unknown_in_config(config, known)
    _refuse_unknown([*selection.select, *selection.ignore], known)
    violations = (*policy.violations, *_deselected_locks(config, policy))
    engine = engines.create_engine(options.engine_name, policy.pack, opa_url=options.opa_url)
    baseline = options.baseline or (config.root / config.baseline if config.baseline else None)
    baseline = Path(os.path.abspath(baseline)) if baseline is not None else None
    configs = Configs(config, fixed=options.one_config)
    root = options.root or (project_root(paths, config) if paths else Path.cwd())
    root = Path(os.path.abspath(root))
    return RunPlan(configs, policy, selectors, tuple(conftest), known, violations, engine,
                   baseline, root, files, _cache(options, config, root))  # fmt: skip


def _cache(options: CheckOptions, config: RepoConfig, root: Path) -> caching.Cache | None:
    """The cache a run keeps (``CheckOptions.cache``): ``cache_dir``, else the config's
    ``cache-dir`` (relative to the config), else ``.trainlint_cache`` in the project root."""
    if not options.cache:
        return None
    folder = options.cache_dir
    if folder is None:
        folder = config.root / config.cache_dir if config.cache_dir else root / caching.CACHE_DIR
    return caching.Cache.open(Path(os.path.abspath(folder)))


def _nested_configs(plan: RunPlan, files: Sequence[FileOutcome]) -> RunPlan:
    """The plan with every file's config known (read from the project root): each nested
    config's selectors checked like the run's, and its attempts to turn a locked rule off
    added to the lock violations (TL906): an org pack's locks hold under every config."""
    for outcome in files:
        plan.configs.of(outcome.path)
    violations = list(plan.violations)
    for config in plan.configs.used()[1:]:
        _refuse_unknown_in_config(config, plan.known)
        violations += _deselected_locks(config, plan.policy)
    return replace(plan, violations=tuple(violations))


def _file_mode(options: CheckOptions) -> FileMode | None:
    """Conftest mode's policy directory, compiled with the run's engine (``--conftest``)."""
    if options.conftest is None:
        return None
    chosen = FileModeOptions(options.namespaces, options.all_namespaces, options.rego_v0)
    return FileMode.load(options.conftest, _compiler(options), chosen)


def _compiler(options: CheckOptions) -> Callable[[Pack], engines.Engine]:
    return lambda pack: engines.create_engine(options.engine_name, pack, opa_url=options.opa_url)


def _check_files(report: Report, loaded: Loaded, files: FileMode) -> None:
    """Conftest mode: each file the run read that conftest would parse, as conftest reads it;
    a file that does not parse is a run error, as it fails conftest."""
    for path in sorted(path for path in loaded.read_documents() if files.wants(path)):
        try:
            report.findings += files.findings(path)
        except (InputError, PolicyError) as exc:
            report.errors.append(RunError(job=display(path), message=f"conftest: {exc}"))


def _evaluate(loaded: Loaded, plan: RunPlan, options: CheckOptions) -> Report:
    """Run the selected rules on each loaded job (trainlint's own files were excluded from
    loading), each job's findings with their fixes; TL907 on the run's files."""
    running = tuple(rule for rule in plan.pack.rules if plan.runs_anywhere(rule))
    params = plan.pack.data.get("trainlint", {}).get("params", {})
    report = Report(jobs=loaded.jobs, rules=running, params=params, files=loaded.files)
    reported = {_package(rule) for rule in running if _package(rule) not in GOVERNANCE}
    made = _MadeFindings.of(loaded, plan, options)
    keys = _evaluation_keys(loaded, plan, options)
    memos = [made.key(job, key) if made else "" for job, key in zip(loaded.jobs, keys, strict=True)]
    kept: list[Made | None] = [made.get(memo) if made else None for memo in memos]
    evaluations = _evaluations(loaded, plan, options, keys, [k is None for k in kept])
    for job, evaluation, memo, ready in zip(report.jobs, evaluations, memos, kept, strict=True):
        if ready is None and evaluation is not None:
            if evaluation.error is not None:
                report.errors.append(RunError(job=job.id, message=evaluation.error))
                continue
            ready = _made_findings(job, evaluation, plan, reported - {UNSUPPORTED}, params)
            if made is not None:
                made.put(memo, ready)
        report.findings += [f for package, f in ready or [] if _runs(plan, package, f)]
    if made is not None:
        made.table.save(prune=options.changed is None)
    if UNSUPPORTED in reported:
        rule = plan.rules[UNSUPPORTED]
        found = _unsupported(report, plan.engine, rule, options.strict)
        report.findings += [f for f in found if plan.runs_in(rule, f.file)]
    return report


Made = list[tuple[str, Finding]]
"""One job's findings with their fixes, each with its rule's package ("" for a conftest
namespace's, which the namespaces select): before the per-file selection (``_runs``)."""


def _made_findings(
    job: Job, evaluation: Evaluation, plan: RunPlan, packages: set[str], params: dict[str, Any]
) -> Made:
    """One job's findings of the rule ``packages`` that run anywhere, and of the conftest
    namespaces, each with its fix (``trainlint.fix``)."""
    made: Made = [("", finding) for finding in evaluation.conftest]
    for package, raws in evaluation.results.items():
        if package in packages:
            rule = plan.rules[package]
            made += [(package, make_finding(job, rule.id, rule.slug, rule.severity, raw))
                     for raw in raws]  # fmt: skip
    fixed = attach_fixes([finding for _, finding in made], [job], params, plan.root)
    return [(package, finding) for (package, _), finding in zip(made, fixed, strict=True)]


def _runs(plan: RunPlan, package: str, finding: Finding) -> bool:
    """Whether a made finding is reported: its rule runs for its file's config."""
    return not package or plan.runs_in(plan.rules[package], finding.file)


@dataclass(frozen=True)
class _MadeFindings:
    """Each job's made findings (``Made``) from the cache, keyed by the job's evaluation key
    (its input, the engine, the pack), its files and their bytes (``Loaded.fingerprints``:
    the fixes read them), the rules' ids, slugs and severities, the rules that run, and the
    root."""

    table: caching.Table
    fingerprints: Mapping[str, str]
    salt: str

    @classmethod
    def of(cls, loaded: Loaded, plan: RunPlan, options: CheckOptions) -> _MadeFindings | None:
        if plan.cache is None or not loaded.fingerprints or options.context is not None:
            return None
        rules = sorted((p, r.id, r.slug, r.severity) for p, r in plan.rules.items())
        running = sorted(p for p, r in plan.rules.items() if plan.runs_anywhere(r))
        salt = caching.digest(repr(rules), repr(running), str(plan.root))
        table = caching.Table(plan.cache, "findings", loaded.scope)
        return cls(table, loaded.fingerprints, salt)

    def key(self, job: Job, evaluated: str) -> str:
        """The job's key ("": none, its findings are made afresh)."""
        printed = self.fingerprints.get(job.id)
        return caching.digest(self.salt, evaluated, printed) if evaluated and printed else ""

    def get(self, key: str) -> Made | None:
        made = self.table.get(key) if key else None
        return made if isinstance(made, list) else None

    def put(self, key: str, made: Made) -> None:
        if key:
            self.table.put(key, made)


def _evaluation_keys(loaded: Loaded, plan: RunPlan, options: CheckOptions) -> list[str]:
    """Each job's key in the cache's evaluations: its input (``_input_digest``), the engine,
    the pack and the namespaces; "" for each when evaluations are not cached (no cache, a
    server engine, a pack whose results change from run to run)."""
    remote = engines.ENGINES[options.engine_name].remote
    if plan.cache is None or remote or not caching.deterministic(plan.pack.modules):
        return [""] * len(loaded.jobs)
    salt = caching.digest(options.engine_name, _pack_key(plan.pack), *options.namespaces,
                          str(options.all_namespaces))  # fmt: skip
    known = loaded.inputs if options.context is None else {}  # a context changes the jobs
    return [caching.digest(salt, known.get(job.id) or _input_digest(job)) for job in loaded.jobs]


def _evaluations(
    loaded: Loaded,
    plan: RunPlan,
    options: CheckOptions,
    keys: Sequence[str],
    wanted: Sequence[bool],
) -> list[Evaluation | None]:
    """The evaluation of each ``wanted`` job (None for the others), in ``workers`` processes
    unless the engine is a server; with ``keys``, from the cache for a job whose input was
    evaluated before with the same pack and engine."""
    remote = engines.ENGINES[options.engine_name].remote  # one server: requests stay in order
    spec = EvaluationSpec(
        options.engine_name, plan.pack, options.namespaces, options.all_namespaces
    )
    if plan.cache is not None and all(keys):
        return _memoized_evaluations(spec, loaded, plan, options, keys, wanted)
    jobs = [job for job, want in zip(loaded.jobs, wanted, strict=True) if want]
    done = iter(evaluate_jobs(spec, jobs, 1 if remote else worker_count(len(jobs), options.workers),
                              plan.engine))  # fmt: skip
    return [next(done) if want else None for want in wanted]


def _memoized_evaluations(  # noqa: PLR0913 - _evaluations' arguments, and its spec
    spec: EvaluationSpec,
    loaded: Loaded,
    plan: RunPlan,
    options: CheckOptions,
    keys: Sequence[str],
    wanted: Sequence[bool],
) -> list[Evaluation | None]:
    """``evaluate_jobs`` for the wanted jobs whose input no run evaluated before (one
    evaluation for jobs of the same input), the rest from the cache; the entries of the
    jobs not wanted are kept (``Table.touch``), errors never stored (a timeout may pass
    next time)."""
    assert plan.cache is not None
    table = caching.Table(plan.cache, "evaluation", loaded.scope or "-")
    found: dict[str, Evaluation] = {}
    todo: dict[str, Job] = {}
    for job, key, want in zip(loaded.jobs, keys, wanted, strict=True):
        if not want:
            table.touch(key)
            continue
        hit = table.get(key)
        if isinstance(hit, Evaluation):
            found[key] = hit
        else:
            todo.setdefault(key, job)
    count = worker_count(len(todo), options.workers)
    fresh = evaluate_jobs(spec, list(todo.values()), count, plan.engine)
    for key, evaluation in zip(todo, fresh, strict=True):
        found[key] = evaluation
        if evaluation.error is None:
            table.put(key, evaluation)
    table.save(prune=options.changed is None)
    return [found[key] if want else None for key, want in zip(keys, wanted, strict=True)]


def _input_digest(job: Job) -> str:
    """A digest of the job's Rego input: of its JSON, which ``as_input`` is a function of
    (~4x cheaper than serializing the input itself, ~0.04 ms a job; a different key order is
    only a miss). Made from the job as it is when evaluated, after anything that fills it in
    after loading."""
    return caching.digest(job.model_dump_json(by_alias=True))


def _suppress(
    report: Report, documents: Mapping[Path, suppress.Read], plan: RunPlan, options: CheckOptions
) -> suppress.Suppressions:
    """One finding per place (``_unique``), each marked with the suppression that covers it
    (inline ignores from the lines the workspace read, waivers, the baseline); the
    suppressions, for TL905 and TL906."""
    findings = _unique(sorted(report.findings, key=sort_key))
    files = [s.path for job in report.jobs for s in job.sources] + [f.file for f in findings]
    suppressions = suppress.collect(
        files, documents, plan.configs, plan.known, plan.baseline, options.today,
        plan.policy.locks, verified=options.approved_by,
    )  # fmt: skip
    report.findings = suppressions.apply(findings)
    return suppressions


def _package(rule: RuleMeta) -> str:
    return rule.package.rsplit(".", 1)[-1]


def _names(rule: RuleMeta, code: str) -> bool:
    """Whether ``code`` (an id, prefix or slug) names ``rule``."""
    return selected(rule.id, rule.slug, [code], [])


def _refuse_unknown(selectors: Sequence[str], known: suppress.KnownRules) -> None:
    """A selector matching no rule is a typo that would silently select nothing (ruff: error);
    the closest rule id or slug is suggested."""
    for selector in selectors:
        if not known(selector):
            message = f"unknown rule selector {selector!r}: no rule id, prefix or slug matches"
            raise ConfigError(message + known.hint(selector))


def _deselected_locks(config: RepoConfig, policy: Policy) -> list[PlacedViolation]:
    """The repo config's select/ignore/per-file-ignores that would turn a locked rule off."""
    chosen = Selection.resolve(config, pack_rules=policy.rule_packs)
    placed = []
    for rule in policy.pack.rules:
        lock = policy.locks.rule(rule.id)
        if lock is None or chosen.runs(rule.id, rule.slug):
            continue
        matching = [s for s in chosen.ignore if _names(rule, s)]
        entry = ("ignore", chosen.ignore.index(matching[0])) if matching else ("select",)
        detail = f"turns off locked rule {rule.id} ({', '.join(matching) or 'not selected'})"
        violation = Violation(f"rules.{rule.id}", lock.pack, detail, "the repo config")
        placed.append(PlacedViolation(violation, config_location(config, entry)))
    return placed


def _refuse_unknown_in_config(config: RepoConfig, known: suppress.KnownRules) -> None:
    """An unknown selector in the repo config, reported at its file, line and column."""
    for entry, code in _config_selectors(config):
        if not known(code):
            where = config_location(config, entry, value=True)
            key = ".".join(map(str, entry[:-1]))
            raise ConfigError(
                f"{where.file}:{where.line}:{where.column}: {key}: unknown rule selector "
                f"{code!r}{known.hint(code)}"
            )


def _config_selectors(config: RepoConfig) -> Iterator[tuple[KeyPath, str]]:
    """Every rule selector the repo config writes, with its key path (``("ignore", 2)``)."""
    for key in ("select", "extend-select", "ignore"):
        for index, code in enumerate(getattr(config, key.replace("-", "_")) or ()):
            yield (key, index), code
    for glob, codes in config.per_file_ignores.items():
        for index, code in enumerate(codes):
            yield ("per-file-ignores", glob, index), code


def _known(pack: Pack, conftest_ids: Sequence[str] = ()) -> suppress.KnownRules:
    """Whether a selector names a rule: an id, prefix or slug, or a conftest rule id."""
    names = (*(name for rule in pack.rules for name in (rule.id, rule.slug)), *conftest_ids)
    return suppress.KnownRules(
        lambda code: code in conftest_ids or any(_names(rule, code) for rule in pack.rules),
        names,
    )


def _governance(
    report: Report, plan: RunPlan, suppressions: suppress.Suppressions
) -> list[Finding]:
    """TL905 and TL906: one more evaluation, of the suppression problems and the lock
    violations alone, after every other rule has run."""
    problems = suppressions.unused(report.findings, plan.ran)
    violations = [*plan.violations, *suppressions.lock_violations(report.findings)]
    if not problems and not violations:
        return []
    try:
        results = plan.engine.evaluate(suppress.problem_inputs(problems, violations))
    except PolicyError as exc:
        report.errors.append(RunError(job="governance", message=str(exc)))
        return []
    places = {
        UNUSED_SUPPRESSION: ("suppression_problems", [p.location for p in problems]),
        LOCK_VIOLATION: ("lock_violations", [v.location for v in violations]),
    }
    findings = []
    for package, (key, locations) in places.items():
        rule = plan.rules.get(package)
        if rule is None or not plan.runs(rule):
            continue
        findings += [
            _placed(rule, _governance_severity(rule, raw, problems), raw, key, locations)
            for raw in results.get(package, [])
        ]
    return findings


def _governance_severity(
    rule: RuleMeta, raw: dict[str, Any], problems: Sequence[suppress.Problem]
) -> Severity:
    """The rule's severity, but info for a baseline entry that matches no finding (TL905's
    results point at ``/suppression_problems/<i>``): its finding was fixed or vanished, and a
    fix must not block a commit."""
    pointer = str(raw.get("pointer", ""))
    if not pointer.startswith("/suppression_problems/"):
        return rule.severity
    index = int(pointer.rsplit("/", 1)[-1])
    problem = problems[index] if index < len(problems) else None
    stale = problem is not None and (problem.kind, problem.problem) == ("baseline", "unused")
    return "info" if stale else rule.severity


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
