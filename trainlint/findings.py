"""Rule results → located findings; selection by id, prefix or slug (DESIGN §6).

A rule returns a JSON pointer; provenance turns it into file:line:column. When the pointer
itself was never set by a file (``/tags`` on a job with no tags), the nearest located
ancestor is used, then the job's entry file at line 1.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trainlint.job import Job, Location

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


class Waste(BaseModel):
    """What the finding costs per run, when the estimates allow saying it."""

    model_config = ConfigDict(extra="forbid")
    gpu_hours: float | None = None
    usd: float | None = None


class Suppression(BaseModel):
    """Why a finding does not count: it stays in machine-readable reports, marked."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["inline", "file", "per-file-ignores", "waiver", "baseline"]
    reason: str | None = None
    approved_by: str | None = None
    expires: str | None = None
    source: str | None = Field(default=None, description="file:line of the comment or config")


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from (``start_line``, ``start_column``) up to, not including,
    (``end_line``, ``end_column``) of ``path`` with ``new_text``. Lines and columns are 1-based
    like ``Location``'s, a column counting characters (code points); an empty range inserts,
    an empty ``new_text`` deletes. ``path`` is relative to the project root, like
    ``Finding.file``."""

    path: str
    start_line: int
    start_column: int
    end_line: int
    end_column: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A mechanical fix of one finding: edits applied together or not at all. ``safe``
    fixes keep what the training computes (``check --fix``); the others change the training
    itself (a checkpoint interval, the GPUs, precision) and apply only with
    ``--unsafe-fixes``."""

    title: str
    safe: bool
    edits: tuple[TextEdit, ...]


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rule: str = Field(description="Stable rule id, e.g. TL201")
    name: str = Field(description="Rule slug, e.g. checkpoint-too-frequent")
    severity: Severity
    message: str
    file: str
    line: int = Field(ge=1)
    column: int = Field(ge=1)
    job: str
    waste: Waste | None = None
    fingerprint: str = Field(
        default="", description="Stable across line moves: rule, fact pointer, message shape"
    )
    suppression: Suppression | None = None
    fix: Fix | None = Field(
        default=None, description="The edits that fix it (trainlint.fix), when there are any"
    )


WORSENED_RATIO = 1.10
"""A finding whose waste grew by this factor or more (10%) got worse: diff mode lists it as
worsened and a baseline entry recorded at the old waste stops suppressing it."""


def waste_grew(before: Waste | None, after: Waste | None) -> bool:
    """Whether ``after`` is at least ``WORSENED_RATIO`` times ``before``, in dollars when both
    state dollars, else in GPU-hours; an unknown side never counts as growth, a waste that
    appears where there was none does."""
    if before is None or after is None:
        return False
    for old, new in ((before.usd, after.usd), (before.gpu_hours, after.gpu_hours)):
        if old is not None and new is not None:
            return new > old and new >= old * WORSENED_RATIO
    return False


def worsened(before: Finding, after: Finding) -> bool:
    """The same finding (same key) at two revisions, and the later one worse: a higher
    severity, or a waste grown by 10% or more (``waste_grew``)."""
    if SEVERITY_RANK[after.severity] != SEVERITY_RANK[before.severity]:
        return SEVERITY_RANK[after.severity] > SEVERITY_RANK[before.severity]
    return waste_grew(before.waste, after.waste)


def locate(job: Job, pointer: str) -> Location:
    """The location that set ``pointer`` or its nearest located ancestor or descendant."""
    probe = pointer
    while probe:
        if probe in job.provenance:
            return job.provenance[probe]
        probe = probe.rsplit("/", 1)[0]
    below = sorted(p for p in job.provenance if pointer and p.startswith(pointer + "/"))
    if below:
        return job.provenance[below[0]]
    return Location(file=job.id, line=1, column=1)


def make_finding(
    job: Job, rule: str, name: str, severity: Severity, raw: dict[str, Any]
) -> Finding:
    pointer = str(raw.get("pointer", ""))
    location = locate(job, pointer)
    waste = raw.get("waste")
    message = str(raw.get("message", name))
    return Finding(
        rule=rule, name=name, severity=severity, message=message,
        file=location.file, line=location.line, column=location.column, job=job.id,
        waste=Waste.model_validate(waste) if isinstance(waste, dict) else None,
        fingerprint=fingerprint(rule, pointer, message),
    )  # fmt: skip


# A number, or a range of two joined by an en dash ("~22-37%" as messages print it): an
# estimate that is a range at one revision and a point at another is the same finding.
_NUMBER = re.compile(r"[-+]?[$~]?\d[\d,.]*(?:\u2013[$~]?\d[\d,.]*)?")


def fingerprint(rule: str, pointer: str, message: str) -> str:
    """A finding's identity without its line or its numbers: a moved line, a re-estimated
    cost or a new price keep it, a different fact or a different kind of message do not."""
    shape = _NUMBER.sub("#", " ".join(message.split()))
    return hashlib.sha256(f"{rule}\0{pointer}\0{shape}".encode()).hexdigest()[:16]


def selected(rule: str, name: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    """ruff semantics: the longest matching selector wins; ``select`` defaults to everything."""
    best_select = _longest_match(rule, name, select or ["TL"])
    best_ignore = _longest_match(rule, name, ignore)
    return best_select > best_ignore


def _longest_match(rule: str, name: str, selectors: Iterable[str]) -> int:
    """Length of the most specific selector matching (a slug counts as exact); -1 if none."""
    best = -1
    for selector in selectors:
        if selector == name:
            best = max(best, len(rule))
        elif rule.startswith(selector.upper()):
            best = max(best, len(selector))
    return best


def sort_key(finding: Finding) -> tuple[str, int, int, str]:
    return finding.file, finding.line, finding.column, finding.rule


def at_or_above(findings: Iterable[Finding], fail_on: Severity) -> bool:
    return any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on] for f in findings)
