"""What a fixer sees of one finding: the job it belongs to, the rule's parameters and the
files, read once per run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from trainlint.findings import Finding
from trainlint.fix.text import SourceText
from trainlint.job import Job, Location

Reader = Callable[[str], "SourceText | None"]


@dataclass(frozen=True)
class Site:
    finding: Finding
    job: Job
    params: Mapping[str, Any]
    """The rule's parameters in force (``data.trainlint.params.<rule>``)."""
    read: Reader
    """A job file's text by its root-relative path; None when it cannot be read as text."""

    def stated_at(self, pointer: str) -> Location | None:
        """Where a file states ``pointer``, when the finding points there: never a value
        trainlint derived or a framework's default, whose text is elsewhere or nowhere."""
        location = self.job.provenance.get(pointer)
        if location is None or pointer in self.job.derived or pointer in self.job.defaults:
            return None
        at = (self.finding.file, self.finding.line, self.finding.column)
        return location if (location.file, location.line, location.column) == at else None

    def source(self, path: str) -> SourceText | None:
        return self.read(path)

    def other_files(self) -> list[str]:
        """Every file of the job, its entry first."""
        return [source.path for source in self.job.sources]
