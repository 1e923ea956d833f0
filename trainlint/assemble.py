"""Group documents into jobs and merge their facts into one pydantic Job (DESIGN §1.3).

Every file that nothing else references roots one job holding everything it references,
transitively: a launch script with its configs (and the scripts it runs), or a lone config with
its DeepSpeed JSON. Facts merge by precedence (command line > config > DeepSpeed JSON), and
``provenance`` keeps the location of the fact that won.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trainlint.config import RepoConfig
from trainlint.discover import resolved
from trainlint.job import (
    Feature,
    Job,
    Location,
    MissingReference,
    ParseError,
    SourceFile,
    UnknownKey,
)
from trainlint.sources import broken, override_facts, read_document
from trainlint.sources.base import PRECEDENCE, Document, Fact, Input, Reference
from trainlint.sources.redact import redact_fact
from trainlint.sources.structured import MAX_BYTES


def display(path: Path) -> str:
    """Paths as users see them: relative to the current directory, symlinks kept as named."""
    try:
        return Path(os.path.relpath(os.path.abspath(path))).as_posix()
    except ValueError:  # another drive (Windows)
        return Path(os.path.abspath(path)).as_posix()


@dataclass
class Workspace:
    """Documents read so far, keyed by resolved path, so each file is parsed once per run."""

    root: Path = field(default_factory=Path.cwd)
    config: RepoConfig = field(default_factory=RepoConfig)
    documents: dict[Path, Document | None] = field(default_factory=dict)

    def load(self, path: Path) -> Document | None:
        key = resolved(path)
        if key not in self.documents:
            try:
                forced = self.config.forced_format(path)
            except (OSError, RuntimeError):  # a symlink loop: read_file reports it
                forced = None
            self.documents[key] = read_file(path, forced)
        return self.documents[key]

    def resolve_reference(self, written: str, referrer: Path) -> Path | None:
        """A referenced path as written, tried from the referrer's folder up to the root."""
        candidate = Path(os.path.expanduser(written))
        if candidate.is_absolute():
            return candidate if _regular_file(candidate) else None
        for base in [referrer.parent, *referrer.parent.parents]:
            if _regular_file(base / candidate):
                return base / candidate
            if resolved(base) == resolved(self.root):
                break
        cwd_candidate = self.root / candidate
        return cwd_candidate if _regular_file(cwd_candidate) else None


def _regular_file(path: Path) -> bool:
    """Only regular files are read: a FIFO or device named ``x.yaml`` would block forever."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def read_file(path: Path, forced: str | None = None) -> Document | None:
    """One file as a Document, or None when no format claims it.

    Bad input never raises: a file that cannot be read, is not a regular file (a FIFO or a
    device is never opened), is a symlink loop, is over ``MAX_BYTES``, or holds a NUL byte in
    its first KiB (binary) is a TL901 error and is not parsed. An oversized file that looks like
    data (binary, or a top-level JSON array such as a dataset) is simply not claimed. Text that is
    not UTF-8 is decoded with replacement characters, so a config with a stray byte is still
    read, and a TL901 error names the offset of the first bad byte.
    """
    shown = display(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return broken(shown, f"not a regular file ({_kind(info.st_mode)}); not read")
        if info.st_size > MAX_BYTES:
            return _oversized(path, shown, info.st_size)
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)  # the file may have grown since stat
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return broken(shown, "symlink loop; not read")
        return broken(shown, f"cannot read file: {exc.strerror or exc}")
    if len(raw) > MAX_BYTES:
        return _oversized(path, shown, len(raw))
    nul = raw.find(b"\0", 0, BINARY_SNIFF)
    if nul >= 0:
        return broken(shown, f"binary file (NUL byte at offset {nul}); not parsed")
    text, bad = _decode(raw)
    try:
        doc = read_document(Input(shown, text), forced)
    except Exception as exc:  # a reader's bug: this file fails, the run goes on
        problem = f"{type(exc).__name__}: {exc}"
        return broken(shown, f"internal error reading this file ({problem}); please report it")
    if doc is not None and bad is not None:
        offset, byte = bad
        line = raw.count(b"\n", 0, offset) + 1
        column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
        message = (
            f"invalid UTF-8: byte 0x{byte:02x} at byte offset {offset}; "
            "read with replacement characters"
        )
        doc.errors.append(ParseError(file=shown, line=line, column=column, message=message))
    return doc


BINARY_SNIFF = 1024
"""A NUL byte in this many leading bytes marks a binary file (git's own heuristic: 8000)."""


def _decode(raw: bytes) -> tuple[str, tuple[int, int] | None]:
    """UTF-8 text (a BOM dropped) and the (offset, value) of the first invalid byte, if any."""
    start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw[start:].decode("utf-8"), None
    except UnicodeDecodeError as exc:
        offset = start + exc.start
        return raw[start:].decode("utf-8", errors="replace"), (offset, raw[offset])


def _oversized(path: Path, shown: str, size: int) -> Document | None:
    """TL901 for a file over the size limit, unless its head says it is data, not a config."""
    try:
        with path.open("rb") as handle:
            head = handle.read(BINARY_SNIFF)
    except OSError:
        head = b""
    if b"\0" in head or (path.suffix.lower() == ".json" and head.lstrip().startswith(b"[")):
        return None  # a checkpoint or a dataset; no training config is this large
    return broken(shown, f"file is {_mib(size)}, over the {_mib(MAX_BYTES)} limit; not read")


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB ({size:,} bytes)"


def _kind(mode: int) -> str:
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "a special file")


def assemble(paths: Iterable[Path], workspace: Workspace | None = None) -> list[Job]:
    """One job per file that nothing else references (an entry point or a lone config),
    holding everything it references; files only reachable through a cycle root their own."""
    space = workspace or Workspace()
    loaded: dict[Path, tuple[Path, Document]] = {}
    for path in paths:
        doc = space.load(path)
        if doc is not None:
            loaded.setdefault(resolved(path), (path, doc))
    closures = {key: _closure(path, doc, space) for key, (path, doc) in loaded.items()}
    referenced = {resolved(p) for group, _ in closures.values() for p, _ in group[1:]}
    roots = [key for key in loaded if key not in referenced]
    covered = {resolved(p) for key in roots for p, _ in closures[key][0]}
    roots += [key for key in loaded if key not in covered]
    return [build_job([doc for _, doc in closures[key][0]], closures[key][1]) for key in roots]


def _closure(
    path: Path, doc: Document, space: Workspace
) -> tuple[list[tuple[Path, Document]], list[MissingReference]]:
    """The document and everything it references, breadth first, each file once (so a
    reference cycle ends where it closes), and the references whose file does not exist.

    A referenced file no format recognises (e.g. an accelerate config, until a source reads
    it) still belongs to the job, so it shows in the job's sources.
    """
    seen = {resolved(path)}
    order = [(path, doc)]
    missing: list[MissingReference] = []
    queue = deque(order)
    while queue:
        current_path, current = queue.popleft()
        for reference in current.references:
            target = space.resolve_reference(reference.path, current_path)
            if target is None:
                missing.append(_missing(reference))
                continue
            if resolved(target) in seen:
                continue
            seen.add(resolved(target))
            child = space.load(target) or Document(display(target), "unrecognised", 0.0, "unknown")
            if reference.role == "member":
                child = _member(child)
            order.append((target, child))
            queue.append((target, child))
    return order, missing


def _member(doc: Document) -> Document:
    """A file composed into another (a Hydra group file): the composing document already
    states its merged values, so its own standalone reading contributes none (a value the
    composition left unknown must stay unknown), but its errors and typos still count."""
    return replace(doc, facts=[], role="member", overrides=[])


def _missing(reference: Reference) -> MissingReference:
    where = reference.location
    return MissingReference(
        file=where.file, line=where.line, column=where.column, path=reference.path
    )


def build_job(documents: list[Document], missing: Sequence[MissingReference] = ()) -> Job:
    """Merge the documents' facts (lowest precedence first, so winners overwrite) into a Job."""
    entry = documents[0]
    ranked = sorted(documents, key=lambda d: PRECEDENCE[d.role])  # stable: keeps file order
    winners: dict[str, Fact] = {}
    for doc in ranked:
        for fact in doc.facts:
            winners[fact.pointer] = fact
    for fact in _override_facts(documents):  # the command line beats every config it names
        winners[fact.pointer] = fact
    tree: dict[str, Any] = {
        "id": entry.path,
        "sources": [SourceFile(path=d.path, format=d.format, role=d.role) for d in documents],
        "parse_errors": [error for doc in documents for error in doc.errors],
        "unknown_keys": [key for doc in documents for key in doc.unknown_keys],
        "missing_references": list(missing),
    }
    features = {p: winners.pop(p) for p in list(winners) if p.startswith(FEATURES)}
    for fact in winners.values():
        _set(tree, fact.pointer, fact.value)
    job = _validate(tree, winners)  # drops the facts it rejects from ``winners``
    job.provenance = {pointer: fact.location for pointer, fact in winners.items()}
    _collect_features(job, features)
    located: dict[str, Sequence[ParseError | UnknownKey | MissingReference]] = {
        "parse_errors": job.parse_errors,
        "unknown_keys": job.unknown_keys,
        "missing_references": job.missing_references,
    }
    for field_name, items in located.items():
        for index, item in enumerate(items):
            job.provenance[f"/{field_name}/{index}"] = Location(
                file=item.file, line=item.line, column=item.column
            )
    derive(job)
    return job


FEATURES = "/features/"
# Experimental optimizers (normalize's table marks them) as features: a word of the optimizer's
# name → the feature's name, else the name itself.
_OPTIMIZER_FEATURES = {
    "muon": "muon", "sophia": "sophia", "lion": "lion", "galore": "galore", "apollo": "apollo",
    "schedule_free": "schedule-free", "schedulefree": "schedule-free", "ademamix": "ademamix",
    "adopt": "adopt", "onebit": "onebit", "zeroone": "onebit",
}  # fmt: skip


def _collect_features(job: Job, facts: dict[str, Fact]) -> None:
    """``/features/<name>`` facts (value: the kind) into ``job.features``, with an fp8
    precision and an experimental optimizer as features of their own; each is located at its
    fact (``/features/<index>``) and carries its declared ``fallback.<name>``."""
    found: dict[str, tuple[str, bool, Location | None]] = {
        split_pointer(pointer)[1]: (str(fact.value), True, fact.location)
        for pointer, fact in facts.items()
        if len(split_pointer(pointer)) == 2 and isinstance(fact.value, str)
    }
    if job.training.precision == "fp8" and "fp8" not in found:
        found["fp8"] = ("precision", True, job.provenance.get("/training/precision"))
    optimizer = job.training.optimizer
    if optimizer.experimental and optimizer.name:
        key = optimizer.name.rsplit(".", 1)[-1].lower().replace("-", "_")
        name = next((v for k, v in _OPTIMIZER_FEATURES.items() if k in key), key)
        found.setdefault(name, ("optimizer", True, job.provenance.get("/training/optimizer/name")))
    fallbacks = {_feature_key(k): v for k, v in job.fallbacks.items()}
    for index, name in enumerate(sorted(found)):
        kind, experimental, where = found[name]
        fallback = fallbacks.get(_feature_key(name))
        job.features.append(Feature(name=name, kind=kind, experimental=experimental,
                                    fallback=fallback))  # fmt: skip
        if where is not None:
            job.provenance[f"/features/{index}"] = where


def _feature_key(name: str) -> str:
    """``fallback.flash_attn`` and ``fallback.Flash-Attn`` name the feature ``flash-attn``."""
    return name.strip().lower().replace("_", "-")


def _override_facts(documents: list[Document]) -> list[Fact]:
    """Command-line overrides read by each referenced config's own format."""
    overrides = [o for doc in documents if doc.role == "entrypoint" for o in doc.overrides]
    formats = {doc.format for doc in documents}
    return [
        redact_fact(fact)
        for override in overrides
        for fmt in sorted(formats)
        for fact in override_facts(fmt, override)
    ]


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
    _derive_gpus(job)
    _derive_batch(job)
    train = job.training
    if train.total_steps is None and train.max_steps:
        train.total_steps = train.max_steps
        _copy(job.provenance, "/training/max_steps", "/training/total_steps")
    if job.name is None:
        job.name = Path(job.id).stem
    _gpu_memory(job)


def _derive_gpus(job: Job) -> None:
    """World size from GPUs per node * nodes, and back when the split is even."""
    res, prov = job.resources, job.provenance
    if res.gpus_per_node is not None and res.world_size is None:
        res.world_size = res.gpus_per_node * (res.nodes or 1)
        _copy(prov, "/resources/gpus_per_node", "/resources/world_size")
    even = bool(res.world_size and res.nodes and res.world_size % res.nodes == 0)
    if res.world_size and res.nodes and res.gpus_per_node is None and even:
        res.gpus_per_node = res.world_size // res.nodes
        _copy(prov, "/resources/world_size", "/resources/gpus_per_node")


def _derive_batch(job: Job) -> None:
    """global = micro * accumulation * data-parallel replicas (world / (tensor * pipeline)),
    read in whichever direction the job leaves open (DeepSpeed states global, not world)."""
    res, train, prov = job.resources, job.training, job.provenance
    model_parallel = (train.parallelism.tensor or 1) * (train.parallelism.pipeline or 1)
    per_replica = (train.micro_batch_size or 0) * (train.grad_accum_steps or 1)
    glob = train.global_batch_size
    if res.world_size is None and glob and per_replica and glob % per_replica == 0:
        res.world_size = glob // per_replica * model_parallel
        _copy(prov, "/training/global_batch_size", "/resources/world_size")
    if glob is None and per_replica and res.world_size:
        train.global_batch_size = per_replica * max(1, res.world_size // model_parallel)
        _copy(prov, "/training/micro_batch_size", "/training/global_batch_size")
    replicas = max(1, (res.world_size or 0) // model_parallel)
    micro_total = (train.micro_batch_size or 0) * replicas
    if train.grad_accum_steps is None and glob and micro_total and glob % micro_total == 0:
        train.grad_accum_steps = glob // micro_total  # Megatron/NeMo: accumulation is derived
        _copy(prov, "/training/global_batch_size", "/training/grad_accum_steps")


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
