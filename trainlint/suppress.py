"""Suppressions (DESIGN §6): inline comments, per-file-ignores, waivers and a baseline.

A suppressed finding is kept and marked with why it does not count; it is never dropped. The
steps are pure functions of the findings, so each can run again with the same answer:
``Suppressions.apply`` marks each finding with the first suppression that may cover it;
``lock_violations`` lists the suppressions of a locked rule's findings that the lock does not
allow (TL906); ``unused`` lists the suppressions that suppress nothing (stale after a fix),
the malformed ones and the expired waivers (TL905), at the comment's or the config entry's own
line.

- ``# trainlint: ignore[TL201,log-every-step] reason`` applies to its own line when it trails
  code, and to the next line when it stands alone; ``# trainlint: ignore-file[TL301] reason``
  anywhere in a file applies to the whole file. YAML, TOML, shell and Python share ``#``
  comments; JSON has none, so JSON files are waived in the repo config.
- Comments are read from the text the run already read: each document keeps the lines that
  mention ``trainlint:`` (``sources.base.keep_trainlint_lines``), so no file is opened twice.
  A file the run did not read as input (a probe measurement, a file outside the run that a
  conftest rule names) has no inline ignores; the config and the baseline still apply to it.
- Config entries are located by key path (``RepoConfig.located``): a waiver at its ``reason``.
- A waiver lapses on its ``expires`` date: from then on it suppresses nothing and is reported.
- Baseline entries are keyed by rule, file, job and the finding's fingerprint (not its line),
  so a moved line still matches; each entry absorbs one finding. An entry records the
  finding's waste: a finding 10% or more worse than recorded is no longer suppressed (the
  baseline accepted the waste it saw). An entry that matches no finding is TL905 at info: its
  finding was fixed, and a fix never blocks.
"""

from __future__ import annotations

import datetime
import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from trainlint.config import Configs, RepoConfig, Waiver
from trainlint.discover import resolved
from trainlint.errors import ConfigError
from trainlint.findings import Finding, Suppression, Waste, selected, waste_grew
from trainlint.job import Location
from trainlint.packs.layering import Locks, RuleLock, Violation
from trainlint.policy import PlacedViolation, config_location
from trainlint.read import Summary, display
from trainlint.sources.base import Document, Line, Skipped
from trainlint.suggest import did_you_mean
from trainlint.writing import replace_file

BASELINE_VERSION = 1
_IGNORE = re.compile(r"(?:^|\s)#\s*trainlint:\s*(?P<kind>ignore(?:-file)?)\b(?P<rest>.*)$")
_CODES = re.compile(r"^\[(?P<codes>[^\]]*)\]\s*(?P<reason>.*)$")

_WHO = {
    "inline": "an inline ignore", "file": "an ignore-file comment",
    "per-file-ignores": "the repo config's per-file-ignores", "waiver": "the repo config's waiver",
    "baseline": "the baseline",
}  # fmt: skip

Known = Callable[[str], bool]
"""Whether a selector (id, prefix or slug) names at least one rule of the pack."""


@dataclass(frozen=True)
class KnownRules:
    """A ``Known`` that also suggests: the rule names (ids, slugs) a misspelt code was
    closest to, for "did you mean" (``TL2O1`` -> ``TL201``)."""

    matches: Known
    names: tuple[str, ...]

    def __call__(self, code: str) -> bool:
        return self.matches(code)

    def hint(self, code: str) -> str:
        return did_you_mean(code, self.names)


def _hint(known: Known, code: str) -> str:
    """The "did you mean" of ``known`` for ``code``, when it can suggest."""
    return known.hint(code) if isinstance(known, KnownRules) else ""


BaselineKey = tuple[str, str, str, str]


class Hit(NamedTuple):
    """A suppression that covers a finding, and where it is written (for a lock violation)."""

    suppression: Suppression
    where: Location


@dataclass(frozen=True)
class Problem:
    """A suppression that is malformed, expired or suppresses nothing: TL905's input."""

    kind: str  # inline, waiver, baseline
    problem: str  # malformed, unused, expired
    detail: str
    location: Location


@dataclass(frozen=True)
class InlineIgnore:
    codes: tuple[str, ...]
    reason: str | None
    location: Location
    lines: frozenset[int]  # empty = the whole file

    @property
    def whole_file(self) -> bool:
        return not self.lines

    def covers(self, finding: Finding) -> bool:
        return (self.whole_file or finding.line in self.lines) and _covers(self.codes, finding)


@dataclass(frozen=True)
class BaselineEntry:
    rule: str
    file: str
    job: str
    fingerprint: str
    line: int  # of the entry in the baseline file, for reporting it
    waste: Waste | None = None  # when it was recorded; None in baselines written before

    def outgrown_by(self, finding: Finding) -> bool:
        """Whether ``finding`` got 10% or more worse than what was recorded (then the entry no
        longer suppresses it: a baseline accepts the waste it saw, not any waste)."""
        return waste_grew(self.waste, finding.waste)

    @property
    def key(self) -> BaselineKey:
        return (self.rule, self.file, self.job, self.fingerprint)


@dataclass(frozen=True)
class Suppressions:
    """Everything that can suppress a finding in one run; nothing here changes once collected."""

    inline: Mapping[str, tuple[InlineIgnore, ...]] = field(default_factory=dict)
    configs: Configs = field(default_factory=lambda: Configs(RepoConfig(), fixed=True))
    """Each file's config: its per-file-ignores and waivers apply to the file's findings."""
    baseline: tuple[BaselineEntry, ...] = ()
    baseline_path: Path | None = None
    problems: tuple[Problem, ...] = ()
    today: datetime.date = field(default_factory=datetime.date.today)
    locks: Locks = field(default_factory=Locks)
    verified: frozenset[str] | None = None
    """Who the CI platform verified approved the change (``--approved-by``); None: unknown."""

    def apply(self, findings: Sequence[Finding]) -> list[Finding]:
        """Each finding, marked with the first suppression that covers it and that its rule's
        lock allows (``_refusal``); one without is returned as it is."""
        absorbed = self._absorbed(findings)
        return [self._marked(f, entry) for f, entry in zip(findings, absorbed, strict=True)]

    def _marked(self, finding: Finding, entry: int | None) -> Finding:
        lock = self.locks.rule(finding.rule)
        for suppression, _ in self._hits(finding, entry):
            if lock is None or self._refusal(lock, suppression, finding) is None:
                return finding.model_copy(update={"suppression": suppression})
        return finding

    def lock_violations(self, findings: Sequence[Finding]) -> list[PlacedViolation]:
        """The suppressions of a locked rule's findings that its lock does not allow (TL906),
        once per lock and place, in the order of the findings."""
        placed: dict[tuple[str, str, int], PlacedViolation] = {}
        for finding, entry in zip(findings, self._absorbed(findings), strict=True):
            lock = self.locks.rule(finding.rule)
            if lock is None:
                continue
            for suppression, where in self._hits(finding, entry):
                detail = self._refusal(lock, suppression, finding)
                if detail is None:
                    continue
                violation = Violation(f"rules.{lock.rule}", lock.pack, detail,
                                      _WHO[suppression.kind])  # fmt: skip
                key = (violation.lock, where.file, where.line)
                placed.setdefault(key, PlacedViolation(violation, where))
        return list(placed.values())

    def _refusal(self, lock: RuleLock, suppression: Suppression, finding: Finding) -> str | None:
        """Why ``suppression`` may not suppress a finding of the locked rule; None when it
        may: only a waiver signed by an approver of the locking pack may, and where the CI
        platform verified who approved the change, only when that approver is among them."""
        approver, rule = suppression.approved_by, finding.rule
        if suppression.kind != "waiver":
            return f"a {suppression.kind} suppression of {rule}"
        if approver not in lock.approvers:
            approvers = ", ".join(lock.approvers) or "none"
            return (f"a waiver of {rule} approved by {approver!r}, "
                    f"not one of the pack's approvers ({approvers})")  # fmt: skip
        if self.verified is not None and approver not in self.verified:
            return (f"a waiver of {rule} approved by {approver!r}, who has not approved this "
                    "change (the approvals the CI platform verified)")  # fmt: skip
        return None

    def unused(self, findings: Sequence[Finding], ran: Known) -> list[Problem]:
        """Malformed and expired suppressions, and those that cover none of ``findings`` of a
        rule that ran (an ignore of a rule left out by ``--select`` is not called unused).
        A suppression that covers a finding is used even when another one marks it."""
        by_file: dict[str, list[Finding]] = {}
        for finding in findings:
            by_file.setdefault(finding.file, []).append(finding)
        problems = list(self.problems)
        for file, ignores in self.inline.items():
            problems += [
                Problem("inline", "unused", _unused_inline(ignore), ignore.location)
                for ignore in ignores
                if all(ran(code) for code in ignore.codes)
                and not any(ignore.covers(f) for f in by_file.get(file, []))
            ]
        for config in self.configs.used():
            for index, waiver in enumerate(config.waivers):
                problems += self._waiver_problems(config, index, waiver, findings, ran)
        absorbed = set(self._absorbed(findings))
        baseline = display(self.baseline_path) if self.baseline_path else "<baseline>"
        problems += [
            Problem("baseline", "unused",
                    f"baseline entry for {entry.rule} in {entry.file} matches no finding "
                    "(fixed? rewrite the baseline with --write-baseline)",
                    Location(file=baseline, line=entry.line, column=1))
            for index, entry in enumerate(self.baseline)
            if index not in absorbed and ran(entry.rule)
        ]  # fmt: skip
        return problems

    def _waiver_problems(
        self,
        config: RepoConfig,
        index: int,
        waiver: Waiver,
        findings: Sequence[Finding],
        ran: Known,
    ) -> list[Problem]:
        where = waiver_location(config, index)
        if _expired(waiver, self.today):
            assert waiver.expires is not None
            detail = f"waiver for {waiver.rule} on {waiver.path!r} expired on "
            return [Problem("waiver", "expired", detail + waiver.expires.isoformat(), where)]
        if ran(waiver.rule) and not any(self._waives(config, waiver, f) for f in findings):
            detail = f"waiver for {waiver.rule} on {waiver.path!r} matches no finding"
            return [Problem("waiver", "unused", detail, where)]
        return []

    def _hits(self, finding: Finding, entry: int | None) -> list[Hit]:
        """Every suppression that covers ``finding``, in order: inline, per-file-ignores,
        waivers, then the baseline entry it absorbs (``entry``)."""
        return [*self._inline(finding), *self._per_file(finding), *self._waivers(finding),
                *self._baseline(finding, entry)]  # fmt: skip

    def _inline(self, finding: Finding) -> list[Hit]:
        return [
            Hit(Suppression(kind="file" if ignore.whole_file else "inline", reason=ignore.reason,
                            source=f"{ignore.location.file}:{ignore.location.line}"),
                ignore.location)
            for ignore in self.inline.get(finding.file, ())
            if ignore.covers(finding)
        ]  # fmt: skip

    def _per_file(self, finding: Finding) -> list[Hit]:
        config = self.configs.of(finding.file)
        source = _config_name(config)
        return [
            Hit(Suppression(kind="per-file-ignores", reason=f"per-file-ignores {glob!r}",
                            source=source),
                config_location(config, ("per-file-ignores", glob)))
            for glob, codes in config.per_file_ignores.items()
            if config.matches(glob, finding.file) and _covers(codes, finding)
        ]  # fmt: skip

    def _waivers(self, finding: Finding) -> list[Hit]:
        config = self.configs.of(finding.file)
        return [
            Hit(Suppression(kind="waiver", reason=waiver.reason, approved_by=waiver.approved_by,
                            expires=waiver.expires.isoformat() if waiver.expires else None,
                            source=_config_name(config)),
                waiver_location(config, index))
            for index, waiver in enumerate(config.waivers)
            if self._waives(config, waiver, finding)
        ]  # fmt: skip

    def _waives(self, config: RepoConfig, waiver: Waiver, finding: Finding) -> bool:
        """Whether the waiver of ``config`` covers the finding: the finding's file is under
        that config (it is the file's closest) and the waiver's path matches it."""
        return (not _expired(waiver, self.today) and _covers([waiver.rule], finding)
                and self.configs.of(finding.file) is config
                and config.matches(waiver.path, finding.file))  # fmt: skip

    def _baseline(self, finding: Finding, entry: int | None) -> list[Hit]:
        """The entry ``finding`` absorbs, unless the finding outgrew it (the entry is still
        used: it is not reported as matching nothing)."""
        if entry is None or self.baseline_path is None or self.baseline[entry].outgrown_by(finding):
            return []
        shown, line = display(self.baseline_path), self.baseline[entry].line
        where = Location(file=shown, line=line, column=1)
        return [Hit(Suppression(kind="baseline", reason="in the baseline",
                                source=f"{shown}:{line}"), where)]  # fmt: skip

    def _absorbed(self, findings: Sequence[Finding]) -> list[int | None]:
        """The baseline entry (its index) each finding uses up, in the findings' order: the
        first entry with its key that no earlier finding took. Only a finding whose rule and
        fingerprint are in the baseline has its paths resolved into a key."""
        if self.baseline_path is None or not self.baseline:
            return [None] * len(findings)
        free: dict[BaselineKey, deque[int]] = {}
        for index, entry in enumerate(self.baseline):
            free.setdefault(entry.key, deque()).append(index)
        listed = {(entry.rule, entry.fingerprint) for entry in self.baseline}
        folder = self.baseline_path.parent
        return [
            _take(free.get(baseline_key(finding, folder)))
            if (finding.rule, finding.fingerprint) in listed else None
            for finding in findings
        ]  # fmt: skip


Read = Document | Skipped | Summary
"""A file as the run read it: its document, or the summary the cache keeps of it (the path
it is shown as and its ``trainlint:`` lines are all suppressions read)."""


def collect(  # noqa: PLR0913 - builds Suppressions, one argument per input
    files: Iterable[str],
    documents: Mapping[Path, Read],
    config: RepoConfig | Configs,
    known: Known,
    baseline_path: Path | None = None,
    today: datetime.date | None = None,
    locks: Locks | None = None,
    *,
    verified: Iterable[str] | None = None,
) -> Suppressions:
    """Every suppression that applies to a run over ``files`` (paths as reported), their
    inline ignores read from ``documents`` (what the run read, by resolved path: each
    document or its ``Summary``);
    ``verified``: who approved the change, as the CI platform verified it (None: unknown)."""
    configs = config if isinstance(config, Configs) else Configs(config, fixed=True)
    inline: dict[str, tuple[InlineIgnore, ...]] = {}
    problems: list[Problem] = []
    shown = {document.path: document for document in documents.values()}
    for file in sorted(set(files)):
        configs.of(file)  # every file's config is known before its waivers are checked
        lines = _trainlint_lines(file, shown, documents)
        ignores, malformed = inline_ignores(file, lines, known)
        if ignores:
            inline[file] = tuple(ignores)
        problems += malformed
    problems += [problem for each in configs.used() for problem in _malformed_waivers(each, known)]
    return Suppressions(
        inline=inline, configs=configs, problems=tuple(problems),
        baseline=tuple(read_baseline(baseline_path)) if baseline_path is not None else (),
        baseline_path=baseline_path, today=today or datetime.date.today(),
        locks=locks or Locks(), verified=None if verified is None else frozenset(verified),
    )  # fmt: skip


def _malformed_waivers(config: RepoConfig, known: Known) -> list[Problem]:
    """The waivers of ``config`` that name no rule of the pack."""
    return [
        Problem("waiver", "malformed",
                f"waiver names unknown rule {waiver.rule!r}{_hint(known, waiver.rule)}",
                waiver_location(config, index))
        for index, waiver in enumerate(config.waivers)
        if not known(waiver.rule)
    ]  # fmt: skip


def _trainlint_lines(
    file: str,
    shown: Mapping[str, Read],
    documents: Mapping[Path, Read],
) -> tuple[Line, ...]:
    """The lines of ``file`` that mention ``trainlint:``, as the run read it; none for a file
    the run never read as input (its text was never checked, so it holds no inline ignore).
    A file is found by the path it is shown as (``shown``), else by its real path (another
    name of it)."""
    document = shown.get(file) or documents.get(resolved(Path(file)))
    return document.trainlint_lines if document is not None else ()


def inline_ignores(
    file: str, lines: Iterable[Line], known: Known
) -> tuple[list[InlineIgnore], list[Problem]]:
    """The ``# trainlint: ignore[...]`` comments among ``lines`` (numbered lines of ``file``)
    and the malformed ones."""
    ignores: list[InlineIgnore] = []
    problems: list[Problem] = []
    for number, line in lines:
        match = _IGNORE.search(line)
        if match is None:
            continue
        column = line.index("#", match.start()) + 1
        where = Location(file=file, line=number, column=column)
        comment = line[column - 1 :].strip()
        parsed = _CODES.match(match.group("rest").strip())
        codes = [c.strip() for c in parsed.group("codes").split(",") if c.strip()] if parsed else []
        if parsed is None or not codes:
            spelled = match.group("kind")
            detail = f"expected '# trainlint: {spelled}[RULE, ...] reason', got {comment!r}"
            problems.append(Problem("inline", "malformed", detail, where))
            continue
        unknown = [code for code in codes if not known(code)]
        if unknown:
            named = ", ".join(f"{code!r}{_hint(known, code)}" for code in unknown)
            detail = f"unknown rule {named} in {comment!r}"
            problems.append(Problem("inline", "malformed", detail, where))
            continue
        reason = parsed.group("reason").strip() or None
        own_line = not line[: match.start()].strip()
        covered = _lines(match.group("kind"), number, own_line)
        ignores.append(InlineIgnore(tuple(codes), reason, where, covered))
    return ignores, problems


def _lines(kind: str, number: int, own_line: bool) -> frozenset[int]:
    """The lines a comment covers: none (= all) for ignore-file; a comment alone on its line
    covers the line below (and itself, for a finding at the comment's line)."""
    if kind == "ignore-file":
        return frozenset()
    return frozenset({number, number + 1}) if own_line else frozenset({number})


def waiver_location(config: RepoConfig, index: int) -> Location:
    """Where the config writes its ``index``-th waiver: at its reason."""
    return config_location(config, ("waivers", index, "reason"), value=True)


def baseline_key(finding: Finding, folder: Path) -> BaselineKey:
    """What a baseline entry matches: rule, file and job relative to the baseline's folder,
    and the fingerprint (rule, pointer and message shape: not the line)."""
    return (
        finding.rule,
        _relative(finding.file, folder),
        _relative(finding.job, folder),
        (finding.fingerprint),
    )


def write_baseline(findings: Sequence[Finding], path: Path) -> int:
    """Record the findings that count now, each with its waste (so a finding that later gets
    10% worse is no longer suppressed); returns how many were written. The file is replaced
    atomically (``writing.replace_file``)."""
    rows = sorted(
        (_row(baseline_key(f, path.parent), f.waste) for f in findings if f.suppression is None),
        key=lambda row: json.dumps(row, sort_keys=True),
    )
    lines = ",\n".join("    " + json.dumps(row, sort_keys=True) for row in rows)
    body = f'{{\n  "version": {BASELINE_VERSION},\n  "findings": [\n{lines}\n  ]\n}}\n'
    empty = f'{{"version": {BASELINE_VERSION}, "findings": []}}\n'
    replace_file(path, body if rows else empty)  # replaced whole: never read half-written
    return len(rows)


def _row(key: BaselineKey, waste: Waste | None) -> dict[str, Any]:
    row: dict[str, Any] = {"rule": key[0], "file": key[1], "job": key[2], "fingerprint": key[3]}
    recorded = waste.model_dump(exclude_none=True) if waste else {}
    return {**row, "waste": recorded} if recorded else row


def read_baseline(path: Path) -> list[BaselineEntry]:
    """The entries of a baseline file; a missing or invalid one is a configuration error."""
    try:
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read baseline: {exc}") from None
    rows = document.get("findings") if isinstance(document, dict) else None
    if document.get("version") != BASELINE_VERSION or not isinstance(rows, list):
        raise ConfigError(f"{path}: not a trainlint baseline (version {BASELINE_VERSION})")
    lines = text.splitlines()
    entries = []
    for row in rows:
        if not isinstance(row, dict) or not all(
            isinstance(row.get(k), str) for k in ("rule", "file", "job", "fingerprint")
        ):
            raise ConfigError(f"{path}: baseline entry {row!r} needs rule, file, job, fingerprint")
        line = next((i for i, text in enumerate(lines, 1) if row["fingerprint"] in text), 1)
        entries.append(BaselineEntry(row["rule"], row["file"], row["job"], row["fingerprint"],
                                     line, _recorded_waste(path, row)))  # fmt: skip
    return entries


def _recorded_waste(path: Path, row: dict[str, Any]) -> Waste | None:
    """An entry's ``waste`` ({usd, gpu_hours}); absent in baselines written before it was kept."""
    if "waste" not in row:
        return None
    try:
        return Waste.model_validate(row["waste"])
    except ValueError:
        raise ConfigError(f"{path}: baseline entry {row!r}: waste must be "
                          "{usd, gpu_hours} numbers") from None  # fmt: skip


def problem_inputs(
    problems: Sequence[Problem], violations: Sequence[PlacedViolation] = ()
) -> dict[str, Any]:
    """TL905's and TL906's Rego input: the suppression problems and the lock violations."""
    return {
        "suppression_problems": [
            {"kind": p.kind, "problem": p.problem, "detail": p.detail} for p in problems
        ],
        "lock_violations": [
            {"lock": v.violation.lock, "pack": v.violation.pack, "detail": v.violation.detail,
             "where": v.violation.where}
            for v in violations
        ],
    }  # fmt: skip


def _covers(codes: Iterable[str], finding: Finding) -> bool:
    return selected(finding.rule, finding.name, list(codes), [])


def _expired(waiver: Waiver, today: datetime.date) -> bool:
    return waiver.expires is not None and waiver.expires < today


def _unused_inline(ignore: InlineIgnore) -> str:
    scope = "in this file" if ignore.whole_file else "on this line or the next"
    return f"ignore[{', '.join(ignore.codes)}] suppresses no finding {scope}"


def _config_name(config: RepoConfig) -> str | None:
    return display(config.source) if config.source else None


def _take(free: deque[int] | None) -> int | None:
    return free.popleft() if free else None


def _relative(path: str, folder: Path) -> str:
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()
