"""What became of every candidate file: part of a job, skipped with a reason, or a GPU workload
trainlint does not understand (issue 14's honest outcome for each file).

``trainlint show --files`` lists them; the text summary counts the workloads not understood,
and TL907 (unsupported-workload) reports each at the line that made it look like one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainlint.assemble import purpose_of, why_not_a_job
from trainlint.discover import Candidates, resolved
from trainlint.job import Job
from trainlint.read import Summary, Workspace, display
from trainlint.results import FileOutcome
from trainlint.sources.base import Document, Skipped, UnsupportedWorkload


def outcomes(paths: Sequence[Path], space: Workspace, jobs: Sequence[Job]) -> list[FileOutcome]:
    """Each discovered file once, in discovery order, with what became of it; what the walk
    met and did not read (``Candidates.unread``) is skipped with its reason, in path order."""
    holders: dict[str, list[str]] = {}
    for job in jobs:
        for source in job.sources:
            holders.setdefault(source.path, []).append(job.id)
    unread = paths.unread if isinstance(paths, Candidates) else {}
    seen: set[Path] = set()
    found = []
    for path in sorted([*paths, *unread]) if unread else paths:
        key = Path(os.path.abspath(path)) if path in unread else resolved(path)
        if key in seen:
            continue
        seen.add(key)
        if path in unread:
            found.append(_not_read(path, unread[path], holders, space))
        else:
            found.append(_outcome(summary(space, path), holders))
    return found


def summary(space: Workspace, path: Path) -> Summary:
    """The ``Summary`` of the file at ``path``: its stub's when the cache holds its document
    unread, else made from the document."""
    stub = space.stubs.get(resolved(path))
    return stub.summary if stub is not None else summary_of(space.load(path))


def summary_of(doc: Document | Skipped) -> Summary:
    """What a file's outcome and its suppressions read of its document (``Summary``)."""
    if isinstance(doc, Skipped):
        return Summary(doc.path, None, doc.reason, doc.workload, doc.trainlint_lines)
    workload = doc.workload if purpose_of(doc) is None else None
    reason = why_not_a_job(doc) or "no job of the run includes it"
    return Summary(doc.path, doc.format, reason, workload, doc.trainlint_lines)


def _not_read(
    path: Path, reason: str, holders: dict[str, list[str]], space: Workspace
) -> FileOutcome:
    """A file the walk did not read: skipped with the reason, never opened here; a member
    when a job references it (the job read it as a reference, and reports its TL901)."""
    shown = display(path)
    if shown in holders:
        return _in_jobs(summary(space, path), holders[shown])
    return FileOutcome(path=shown, outcome="skipped", reason=reason)


def _outcome(read: Summary, holders: dict[str, list[str]]) -> FileOutcome:
    """A file a job references is part of it, read or not (the job is checked, so the file is
    no workload left unchecked); any other file is skipped or, when it looks like a GPU
    workload for no other stated purpose, not understood."""
    jobs = holders.get(read.path, [])
    if jobs:
        return _in_jobs(read, jobs)
    return _unread(read.path, read.reason, read.workload, read.format)


def _in_jobs(read: Summary, jobs: list[str]) -> FileOutcome:
    if read.path in jobs:
        return FileOutcome(path=read.path, outcome="job", reason="roots its own job",
                           format=read.format, jobs=jobs)  # fmt: skip
    reason = f"part of {_plural(len(jobs), 'job')} that reference it"
    if read.format is None:  # skipped
        reason += f"; {read.reason}"
    return FileOutcome(path=read.path, outcome="member", reason=reason, format=read.format,
                       jobs=jobs)  # fmt: skip


def _unread(
    path: str, reason: str, workload: UnsupportedWorkload | None, fmt: str | None = None
) -> FileOutcome:
    if workload is None:
        return FileOutcome(path=path, outcome="skipped", reason=reason, format=fmt)
    return FileOutcome(path=path, outcome="unsupported", reason=reason, format=fmt,
                       kind=workload.kind, location=workload.location)  # fmt: skip


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def unsupported_input(files: Sequence[FileOutcome]) -> dict[str, Any]:
    """TL907's Rego input: the GPU workloads not understood, in file order."""
    return {
        "unsupported_workloads": [
            {"file": f.path, "kind": f.kind, "reason": f.reason}
            for f in files
            if f.outcome == "unsupported"
        ]
    }
