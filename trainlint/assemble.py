"""Group documents into jobs and merge their facts into one pydantic Job (DESIGN §1.3).

A launch script plus every config it references (transitively) is one job; a config nobody
references is a job of its own. Facts merge by precedence (command line > config > DeepSpeed
JSON), and ``provenance`` keeps the location of the fact that won.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trainlint.job import Job, Location, SourceFile
from trainlint.sources import broken, read_document
from trainlint.sources.base import PRECEDENCE, Document, Fact, Input
from trainlint.sources.structured import MAX_BYTES


def display(path: Path) -> str:
    """Paths as users see them: relative to the current directory when inside it."""
    resolved, cwd = path.resolve(), Path.cwd().resolve()
    return (
        resolved.relative_to(cwd).as_posix()
        if resolved.is_relative_to(cwd)
        else resolved.as_posix()
    )


@dataclass
class Workspace:
    """Documents read so far, keyed by resolved path, so each file is parsed once per run."""

    root: Path = field(default_factory=Path.cwd)
    documents: dict[Path, Document | None] = field(default_factory=dict)

    def load(self, path: Path) -> Document | None:
        key = path.resolve()
        if key not in self.documents:
            self.documents[key] = read_file(path)
        return self.documents[key]

    def resolve_reference(self, written: str, referrer: Path) -> Path | None:
        """A referenced path as written, tried from the referrer's folder up to the root."""
        candidate = Path(os.path.expanduser(written))
        if candidate.is_absolute():
            return candidate if candidate.is_file() else None
        for base in [referrer.parent, *referrer.parent.parents]:
            if (base / candidate).is_file():
                return base / candidate
            if base.resolve() == self.root.resolve():
                break
        cwd_candidate = self.root / candidate
        return cwd_candidate if cwd_candidate.is_file() else None


def read_file(path: Path) -> Document | None:
    """One file as a Document; unreadable, oversized or non-UTF-8 files become TL901 errors."""
    shown = display(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            return broken(shown, f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB")
        raw = path.read_bytes()
    except OSError as exc:
        return broken(shown, f"cannot read file: {exc.strerror or exc}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return broken(shown, "file is not valid UTF-8", line)
    return read_document(Input(shown, text))


def assemble(paths: Iterable[Path], workspace: Workspace | None = None) -> list[Job]:
    """Jobs from the candidate files: every entry point with its references, then orphans."""
    space = workspace or Workspace()
    loaded = [(path, doc) for path in paths if (doc := space.load(path)) is not None]
    members: dict[Path, list[tuple[Path, Document]]] = {}
    referenced: set[Path] = set()
    for path, doc in loaded:
        if doc.role == "entrypoint":
            members[path] = _closure(path, doc, space)
            referenced.update(p.resolve() for p, _ in members[path][1:])
    for path, doc in loaded:
        if doc.role != "entrypoint" and path.resolve() not in referenced:
            members[path] = [(path, doc)]
    return [build_job([doc for _, doc in group]) for group in members.values()]


def _closure(path: Path, doc: Document, space: Workspace) -> list[tuple[Path, Document]]:
    """The entry document and everything it references, depth first, each file once."""
    seen = {path.resolve()}
    order = [(path, doc)]
    stack = [(path, doc)]
    while stack:
        current_path, current = stack.pop()
        for reference in current.references:
            target = space.resolve_reference(reference.path, current_path)
            if target is None or target.resolve() in seen:
                continue
            child = space.load(target)
            if child is None:
                continue
            if child.role == "unknown" and not child.errors:
                continue
            seen.add(target.resolve())
            order.append((target, child))
            stack.append((target, child))
    return order


def build_job(documents: list[Document]) -> Job:
    """Merge the documents' facts (lowest precedence first, so winners overwrite) into a Job."""
    entry = documents[0]
    ranked = sorted(documents, key=lambda d: PRECEDENCE[d.role])  # stable: keeps file order
    winners: dict[str, Fact] = {}
    for doc in ranked:
        for fact in doc.facts:
            winners[fact.pointer] = fact
    errors = [error for doc in documents for error in doc.errors]
    tree: dict[str, Any] = {
        "id": entry.path,
        "sources": [SourceFile(path=d.path, format=d.format, role=d.role) for d in documents],
        "parse_errors": errors,
    }
    for fact in winners.values():
        _set(tree, fact.pointer, fact.value)
    job = _validate(tree, winners)  # drops the facts it rejects from ``winners``
    job.provenance = {pointer: fact.location for pointer, fact in winners.items()}
    for index, error in enumerate(errors):
        job.provenance[f"/parse_errors/{index}"] = Location(
            file=error.file, line=error.line, column=error.column
        )
    derive(job)
    return job


def _validate(tree: dict[str, Any], facts: dict[str, Fact]) -> Job:
    """Validate; a fact the model rejects is dropped (its value stays unknown), never fatal."""
    try:
        return Job.model_validate(tree)
    except ValidationError as exc:
        for error in exc.errors():
            pointer = "/" + "/".join(
                str(part).replace("~", "~0").replace("/", "~1") for part in error["loc"]
            )
            for candidate in list(facts):
                if pointer.startswith(candidate):
                    _unset(tree, candidate)
                    facts.pop(candidate)
        return Job.model_validate(tree)


def derive(job: Job) -> None:
    """Fill fields implied by others (world size, global batch, total steps, GPU memory)."""
    res, train, prov = job.resources, job.training, job.provenance
    if res.gpus_per_node is not None and res.world_size is None:
        res.world_size = res.gpus_per_node * (res.nodes or 1)
        _copy(prov, "/resources/gpus_per_node", "/resources/world_size")
    if res.world_size is not None and res.gpus_per_node is None and res.nodes:
        res.gpus_per_node = max(1, res.world_size // res.nodes)
        _copy(prov, "/resources/world_size", "/resources/gpus_per_node")
    if train.global_batch_size is None and train.micro_batch_size and res.world_size:
        train.global_batch_size = (
            train.micro_batch_size * (train.grad_accum_steps or 1) * res.world_size
        )
        _copy(prov, "/training/micro_batch_size", "/training/global_batch_size")
    if train.total_steps is None and train.max_steps:
        train.total_steps = train.max_steps
        _copy(prov, "/training/max_steps", "/training/total_steps")
    if job.name is None:
        job.name = Path(job.id).stem
    _gpu_memory(job)


def _gpu_memory(job: Job) -> None:
    from trainlint.estimate.catalog import resolve_gpu

    gpu = job.resources.gpu
    spec = resolve_gpu(gpu.model) if gpu.model else None
    if spec is not None:
        gpu.model, gpu.memory_bytes = spec.name, spec.memory_bytes
        gpu.source = gpu.source or "declared"
        _copy(job.provenance, "/resources/gpu/model", "/resources/gpu/memory_bytes")


def _copy(provenance: dict[str, Location], source: str, target: str) -> None:
    if source in provenance and target not in provenance:
        provenance[target] = provenance[source]


def split_pointer(pointer: str) -> list[str]:
    """RFC 6901: ``/tags/a~1b`` → ``["tags", "a/b"]``."""
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _set(tree: dict[str, Any], pointer: str, value: Any) -> None:
    parts = split_pointer(pointer)
    node = tree
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _unset(tree: dict[str, Any], pointer: str) -> None:
    parts = split_pointer(pointer)
    node: Any = tree
    for part in parts[:-1]:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    if isinstance(node, dict):
        node.pop(parts[-1], None)
