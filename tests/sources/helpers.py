"""Helpers shared by the source tests: comparable facts and references, random data."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from hypothesis import strategies as st

from trainlint.assemble import assemble
from trainlint.errors import SourceError
from trainlint.job import Job
from trainlint.sources.base import Document, Input
from trainlint.workdir import working_directory

FactRow = tuple[str, Any, int, int]
RefRow = tuple[str, str, int, int]


# Facts every file of a kind states alike (the command text, the scheduler of a batch script or
# manifest): their own tests check them, the exact fact lists of fixtures leave them out.
ALIKE = frozenset({"/launcher/command", "/resources/scheduler"})


def rows(doc: Document) -> list[FactRow]:
    """Every fact but the command text and scheduler, as (pointer, value, line, column)."""
    return [
        (f.pointer, f.value, f.location.line, f.location.column)
        for f in doc.facts
        if f.pointer not in ALIKE
    ]


def refs(doc: Document) -> list[RefRow]:
    return [(r.path, r.role, r.location.line, r.location.column) for r in doc.references]


def located(doc: Document) -> dict[str, tuple[Any, int, int]]:
    """pointer → (value, line, column), the later fact winning as in assembly (but for the
    facts every file of a kind states alike)."""
    return {
        f.pointer: (f.value, f.location.line, f.location.column)
        for f in doc.facts
        if f.pointer not in ALIKE
    }


def job_values(job: Job) -> dict[str, Any]:
    """pointer → value of every fact the job states or derives (as its provenance lists them)."""
    data = job.model_dump(by_alias=True)
    found: dict[str, Any] = {}
    for pointer in job.provenance:
        value: Any = data
        for part in pointer.strip("/").split("/"):
            value = value.get(part) if isinstance(value, dict) else None
        found[pointer] = value
    return found


def near_misses(doc: Document) -> list[tuple[str, str | None, int]]:
    return [(u.key, u.suggestion, u.line) for u in doc.unknown_keys]


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["auto", "${x.y}", "${oc.env:X}", "2e-5", "bf16-mixed", "ddp", "-1", "${"]),
)  # fmt: skip


def values() -> st.SearchStrategy[Any]:
    return st.recursive(
        _SCALARS,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=8,
    )


def mappings(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Random mappings whose keys are mostly the format's own."""
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=10), values(), max_size=12)


def parse_never_raises(module: ModuleType, data: Any, path: str = "random.yaml") -> None:
    """``recognise`` and ``parse`` give a result or a SourceError, nothing else."""
    file = Input(path, yaml.safe_dump(data))
    try:
        module.recognise(file)
        module.parse(file)
    except SourceError:
        pass


def job_in(root: Path, path: str) -> Job:
    """The one job ``path`` roots, assembled from ``root`` (a fresh repository, a tmp folder)."""
    with working_directory(root):
        (job,) = assemble([Path(path)])
    return job


def launched(root: Path, script: str, **files: str) -> Job:
    """The job of a launch script ``run.sh`` holding ``script``, beside ``files`` (name → text)."""
    for name, text in files.items():
        (root / name).write_text(text)
    (root / "run.sh").write_text(script)
    return job_in(root, "run.sh")
