"""One editor session: the workspace folders, the open buffers, and the last check's report.

Every check covers the whole workspace, with the open buffers read in place of their files
(``lint.CheckOptions.overlay``): a job is assembled from all its files, so a flag in a launch
script is judged with the YAML config it names, saved or not, and a finding lands on the
file and line its fact came from, open or not.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trainlint.config import project_root, run_config
from trainlint.discover import resolved
from trainlint.findings import Finding
from trainlint.job import Job, Location
from trainlint.lint import CheckOptions, check
from trainlint.results import Report


@dataclass
class Session:
    """The state a language server keeps between requests."""

    folders: list[Path] = field(default_factory=list)
    """The client's workspace folders (resolved); none: each open file's project root."""
    buffers: dict[Path, str] = field(default_factory=dict)
    """The open documents' text, by resolved path."""
    report: Report | None = None
    """The last check's, or None before the first."""

    def open(self, path: Path, text: str) -> None:
        self.buffers[resolved(path)] = text

    def close(self, path: Path) -> None:
        self.buffers.pop(resolved(path), None)

    def paths(self) -> list[Path]:
        """What a check covers: the workspace folders, else the project root of every open
        file (its git work tree, else its config's folder, else its own folder)."""
        if self.folders:
            return list(self.folders)
        roots = {_root_of(path) for path in self.buffers}
        return sorted(roots)

    def check(self) -> Report:
        """Check the workspace with the buffers in place of the files; the report is kept
        for hovers and code actions until the next check. Raises ``TrainlintError`` for a
        configuration the check refuses (an unknown selector, a pack that does not load)."""
        paths = self.paths()
        if not paths:
            self.report = Report()
            return self.report
        self.report = check(paths, CheckOptions(overlay=dict(self.buffers)))
        return self.report

    def text(self, path: Path) -> str:
        """A file as the check read it: its buffer, else the file (empty when unreadable)."""
        key = resolved(path)
        if key in self.buffers:
            return self.buffers[key]
        try:
            return key.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def findings(self, path: Path) -> list[Finding]:
        """The last report's findings in ``path`` that count (suppressed ones left out)."""
        if self.report is None:
            return []
        key = resolved(path)
        return [
            finding
            for finding in self.report.findings
            if finding.suppression is None and self.where(finding.file) == key
        ]

    def files_with_findings(self) -> set[Path]:
        if self.report is None:
            return set()
        return {self.where(f.file) for f in self.report.findings if f.suppression is None}

    def where(self, shown: str) -> Path:
        """The file a reported (root-relative) path names."""
        root = self.report.root if self.report is not None and self.report.root else Path.cwd()
        return resolved(root / shown)

    def facts_at(self, path: Path, line: int) -> list[tuple[Job, str, Location]]:
        """Every (job, pointer, location) whose fact a file states on ``line`` (1-based)."""
        if self.report is None:
            return []
        key = resolved(path)
        return [
            (job, pointer, location)
            for job in self.report.jobs
            for pointer, location in job.provenance.items()
            if location.line == line and self.where(location.file) == key
        ]


def _root_of(path: Path) -> Path:
    folder = Path(os.path.dirname(path))
    return project_root([folder], run_config([folder]))


def uri_paths(uris: Sequence[str]) -> list[Path]:
    """Workspace folder URIs as resolved local paths (a non-file URI is left out)."""
    from pygls.uris import to_fs_path

    paths = [to_fs_path(uri) for uri in uris]
    return [resolved(Path(path)) for path in paths if path]
