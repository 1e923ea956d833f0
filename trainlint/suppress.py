"""Suppressions (DESIGN §6): inline comments, per-file-ignores, waivers and a baseline.

A suppressed finding is kept and marked with why it does not count; it is never dropped. Every
suppression records whether it matched something, so the ones that suppress nothing (stale
after a fix), the malformed ones and the expired waivers become problems that TL905
(unused-suppression) reports at the comment's or the config entry's own line.

- ``# trainlint: ignore[TL201,log-every-step] reason`` applies to its own line when it trails
  code, and to the next line when it stands alone; ``# trainlint: ignore-file[TL301] reason``
  anywhere in a file applies to the whole file. YAML, TOML, shell and Python share ``#``
  comments; JSON has none, so JSON files are waived in the repo config.
- A waiver lapses on its ``expires`` date: from then on it suppresses nothing and is reported.
- Baseline entries are keyed by rule, file, job and the finding's fingerprint (not its line),
  so a moved line still matches; each entry absorbs one finding.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainlint.config import RepoConfig, Waiver
from trainlint.errors import ConfigError
from trainlint.findings import Finding, Suppression, selected
from trainlint.job import Location
from trainlint.packs.layering import Locks, RuleLock, Violation
from trainlint.policy import PlacedViolation, config_line
from trainlint.read import display
from trainlint.sources.structured import MAX_BYTES
from trainlint.writing import replace_file

BASELINE_VERSION = 1
_IGNORE = re.compile(r"(?:^|\s)#\s*trainlint:\s*(?P<kind>ignore(?:-file)?)\b(?P<rest>.*)$")
_CODES = re.compile(r"^\[(?P<codes>[^\]]*)\]\s*(?P<reason>.*)$")
NO_COMMENTS = frozenset({".json"})

Hit = tuple[Suppression, Location]
"""A suppression that covers a finding, and where it is written (for a lock violation)."""

_WHO = {
    "inline": "an inline ignore", "file": "an ignore-file comment",
    "per-file-ignores": "the repo config's per-file-ignores", "waiver": "the repo config's waiver",
    "baseline": "the baseline",
}  # fmt: skip

Known = Callable[[str], bool]
"""Whether a selector (id, prefix or slug) names at least one rule of the pack."""


@dataclass
class Problem:
    """A suppression that is malformed, expired or suppresses nothing: TL905's input."""

    kind: str  # inline, waiver, baseline
    problem: str  # malformed, unused, expired
    detail: str
    location: Location


@dataclass
class InlineIgnore:
    codes: list[str]
    reason: str | None
    location: Location
    lines: frozenset[int]  # empty = the whole file
    used: bool = False

    @property
    def whole_file(self) -> bool:
        return not self.lines


@dataclass
class BaselineEntry:
    rule: str
    file: str
    job: str
    fingerprint: str
    line: int  # of the entry in the baseline file, for reporting it
    used: bool = False


@dataclass
class Suppressions:
    """Everything that can suppress a finding in one run, and what each one matched."""

    inline: dict[str, list[InlineIgnore]] = field(default_factory=dict)
    config: RepoConfig = field(default_factory=RepoConfig)
    waivers_used: set[int] = field(default_factory=set)
    baseline: list[BaselineEntry] = field(default_factory=list)
    baseline_path: Path | None = None
    problems: list[Problem] = field(default_factory=list)
    today: datetime.date = field(default_factory=datetime.date.today)
    locks: Locks = field(default_factory=Locks)
    lock_violations: dict[tuple[str, str, int], PlacedViolation] = field(default_factory=dict)
    verified: frozenset[str] | None = None
    """Who the CI platform verified approved the change (``--approved-by``); None: unknown."""

    def apply(self, finding: Finding) -> Finding:
        """The finding, marked with the first suppression that covers it; every suppression
        that covers it counts as used, so none of them is reported as unused. A locked rule's
        finding is suppressed only by a waiver an approver of the locking pack signed; any other
        suppression of it is a lock violation."""
        found = [*self._inline(finding), *self._per_file(finding), *self._waivers(finding)]
        found += self._baseline(finding)
        lock = self.locks.rule(finding.rule)
        if lock is not None:
            found = [hit for hit in found if self._allowed(lock, hit, finding)]
        if not found:
            return finding
        return finding.model_copy(update={"suppression": found[0][0]})

    def _allowed(self, lock: RuleLock, hit: Hit, finding: Finding) -> bool:
        suppression, where = hit
        approver = suppression.approved_by
        verified = self.verified is None or approver in self.verified
        if suppression.kind == "waiver" and approver in lock.approvers and verified:
            return True
        if suppression.kind == "waiver" and approver in lock.approvers:
            detail = (f"a waiver of {finding.rule} approved by {approver!r}, who has not "
                      "approved this change (the approvals the CI platform verified)")  # fmt: skip
        elif suppression.kind == "waiver":
            approvers = ", ".join(lock.approvers) or "none"
            detail = (f"a waiver of {finding.rule} approved by {approver!r}, "
                      f"not one of the pack's approvers ({approvers})")  # fmt: skip
        else:
            detail = f"a {suppression.kind} suppression of {finding.rule}"
        violation = Violation(f"rules.{lock.rule}", lock.pack, detail, _WHO[suppression.kind])
        key = (violation.lock, where.file, where.line)
        self.lock_violations.setdefault(key, PlacedViolation(violation, where))
        return False

    def _inline(self, finding: Finding) -> list[Hit]:
        hits: list[Hit] = []
        for ignore in self.inline.get(finding.file, []):
            if (ignore.whole_file or finding.line in ignore.lines) and _covers(
                ignore.codes, finding
            ):
                ignore.used = True
                where = f"{ignore.location.file}:{ignore.location.line}"
                hits.append((Suppression(
                    kind="file" if ignore.whole_file else "inline", reason=ignore.reason,
                    source=where,
                ), ignore.location))  # fmt: skip
        return hits

    def _per_file(self, finding: Finding) -> list[Hit]:
        source = _config_name(self.config)
        return [
            (
                Suppression(
                    kind="per-file-ignores", reason=f"per-file-ignores {glob!r}", source=source
                ),
                config_line(self.config, [glob]),
            )
            for glob, codes in self.config.per_file_ignores.items()
            if self.config.matches(glob, finding.file) and _covers(codes, finding)
        ]

    def _waivers(self, finding: Finding) -> list[Hit]:
        hits: list[Hit] = []
        for index, waiver in enumerate(self.config.waivers):
            if _expired(waiver, self.today):
                continue
            if _covers([waiver.rule], finding) and self.config.matches(waiver.path, finding.file):
                self.waivers_used.add(index)
                hits.append((Suppression(
                    kind="waiver", reason=waiver.reason, approved_by=waiver.approved_by,
                    expires=waiver.expires.isoformat() if waiver.expires else None,
                    source=_config_name(self.config),
                ), config_line(self.config, [waiver.reason])))  # fmt: skip
        return hits

    def _baseline(self, finding: Finding) -> list[Hit]:
        if self.baseline_path is None:
            return []
        key = baseline_key(finding, self.baseline_path.parent)
        for entry in self.baseline:
            if not entry.used and (entry.rule, entry.file, entry.job, entry.fingerprint) == key:
                entry.used = True
                where = f"{display(self.baseline_path)}:{entry.line}"
                place = Location(file=display(self.baseline_path), line=entry.line, column=1)
                return [(Suppression(kind="baseline", reason="in the baseline", source=where),
                         place)]  # fmt: skip
        return []

    def unused(self, ran: Known) -> list[Problem]:
        """Malformed and expired suppressions, and those that matched no finding of a rule
        that ran (an ignore of a rule left out by ``--select`` is not called unused)."""
        problems = list(self.problems)
        for ignores in self.inline.values():
            problems += [
                Problem("inline", "unused", _unused_inline(ignore), ignore.location)
                for ignore in ignores
                if not ignore.used and all(ran(code) for code in ignore.codes)
            ]
        for index, waiver in enumerate(self.config.waivers):
            where = config_line(self.config, [waiver.reason])
            if _expired(waiver, self.today):
                assert waiver.expires is not None
                detail = f"waiver for {waiver.rule} on {waiver.path!r} expired on "
                problems.append(Problem("waiver", "expired", detail + waiver.expires.isoformat(),
                                        where))  # fmt: skip
            elif index not in self.waivers_used and ran(waiver.rule):
                detail = f"waiver for {waiver.rule} on {waiver.path!r} matches no finding"
                problems.append(Problem("waiver", "unused", detail, where))
        baseline = display(self.baseline_path) if self.baseline_path else "<baseline>"
        problems += [
            Problem("baseline", "unused",
                    f"baseline entry for {entry.rule} in {entry.file} matches no finding "
                    "(fixed? rewrite the baseline with --write-baseline)",
                    Location(file=baseline, line=entry.line, column=1))
            for entry in self.baseline if not entry.used and ran(entry.rule)
        ]  # fmt: skip
        return problems


def collect(
    files: Iterable[str],
    config: RepoConfig,
    known: Known,
    baseline_path: Path | None = None,
    today: datetime.date | None = None,
    locks: Locks | None = None,
    *,
    verified: Iterable[str] | None = None,
) -> Suppressions:
    """Read every suppression that applies to a run over ``files`` (paths as reported);
    ``verified``: who approved the change, as the CI platform verified it (None: unknown)."""
    result = Suppressions(config=config, today=today or datetime.date.today(),
                          locks=locks or Locks(),
                          verified=None if verified is None else frozenset(verified))  # fmt: skip
    for file in sorted(set(files)):
        ignores, problems = inline_ignores(file, known)
        if ignores:
            result.inline[file] = ignores
        result.problems += problems
    for waiver in config.waivers:
        if not known(waiver.rule):
            where = config_line(config, [waiver.reason])
            result.problems.append(
                Problem("waiver", "malformed", f"waiver names unknown rule {waiver.rule!r}", where)
            )
    if baseline_path is not None:
        result.baseline_path = baseline_path
        result.baseline = read_baseline(baseline_path)
    return result


def inline_ignores(file: str, known: Known) -> tuple[list[InlineIgnore], list[Problem]]:
    """The ``# trainlint: ignore[...]`` comments of one file and the malformed ones."""
    text = _text(Path(file))
    if text is None or "trainlint:" not in text:  # most files have none: skip the line scan
        return [], []
    ignores: list[InlineIgnore] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
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
            detail = f"unknown rule {', '.join(map(repr, unknown))} in {comment!r}"
            problems.append(Problem("inline", "malformed", detail, where))
            continue
        reason = parsed.group("reason").strip() or None
        own_line = not line[: match.start()].strip()
        lines = _lines(match.group("kind"), number, own_line)
        ignores.append(InlineIgnore(codes, reason, where, lines))
    return ignores, problems


def _lines(kind: str, number: int, own_line: bool) -> frozenset[int]:
    """The lines a comment covers: none (= all) for ignore-file; a comment alone on its line
    covers the line below (and itself, for a finding at the comment's line)."""
    if kind == "ignore-file":
        return frozenset()
    return frozenset({number, number + 1}) if own_line else frozenset({number})


def baseline_key(finding: Finding, folder: Path) -> tuple[str, str, str, str]:
    """What a baseline entry matches: rule, file and job relative to the baseline's folder,
    and the fingerprint (rule, pointer and message shape: not the line)."""
    return (
        finding.rule,
        _relative(finding.file, folder),
        _relative(finding.job, folder),
        (finding.fingerprint),
    )


def write_baseline(findings: Sequence[Finding], path: Path) -> int:
    """Record the findings that count now; returns how many were written. The file is
    replaced atomically (``writing.replace_file``)."""
    current = [f for f in findings if f.suppression is None]
    entries = sorted(
        {"rule": k[0], "file": k[1], "job": k[2], "fingerprint": k[3]}.items()
        for k in (baseline_key(f, path.parent) for f in current)
    )
    rows = [dict(entry) for entry in entries]
    lines = ",\n".join("    " + json.dumps(row, sort_keys=True) for row in rows)
    body = f'{{\n  "version": {BASELINE_VERSION},\n  "findings": [\n{lines}\n  ]\n}}\n'
    empty = f'{{"version": {BASELINE_VERSION}, "findings": []}}\n'
    replace_file(path, body if rows else empty)  # replaced whole: never read half-written
    return len(rows)


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
                                     line))  # fmt: skip
    return entries


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


def _relative(path: str, folder: Path) -> str:
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _text(path: Path) -> str | None:
    """A file's text for comment scanning; None for JSON, unreadable or oversized files."""
    if path.suffix.lower() in NO_COMMENTS:
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
