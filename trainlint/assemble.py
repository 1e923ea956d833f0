"""Group documents into jobs and merge their facts into one pydantic Job (DESIGN §1.3).

Every file that nothing else references roots one job holding everything it references,
transitively: a launch script with its configs (and the scripts it runs), or a lone config with
its DeepSpeed JSON. Facts merge by precedence (command line > config > DeepSpeed JSON), and
``provenance`` keeps the location of the fact that won.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trainlint.config import RepoConfig
from trainlint.discover import (
    Candidates,
    NotRegularFile,
    checked_roots,
    inside,
    kind_of,
    open_regular,
    resolved,
)
from trainlint.job import (
    Default,
    Feature,
    Job,
    Location,
    MissingReference,
    ParseError,
    SourceFile,
    UnknownKey,
    UnresolvedReference,
)
from trainlint.sources import FORCED, broken, override_facts, read_document
from trainlint.sources.base import (
    PRECEDENCE,
    RUN_SETTINGS,
    Document,
    Fact,
    Input,
    Reference,
    Skipped,
)
from trainlint.sources.base import purpose as _purpose
from trainlint.sources.base.redact import redact_fact
from trainlint.sources.base.workloads import looks_like_training
from trainlint.sources.structured import MAX_BYTES


def display(path: Path) -> str:
    """Paths as users see them: relative to the current directory, symlinks kept as named."""
    try:
        return Path(os.path.relpath(os.path.abspath(path))).as_posix()
    except ValueError:  # another drive (Windows)
        return Path(os.path.abspath(path)).as_posix()


@dataclass
class Workspace:
    """Documents read so far, keyed by resolved path, so each file is parsed once per run.

    A reference is read only when its real path lies inside ``roots`` (the run's checked
    roots, ``discover.checked_roots``; set by ``assemble`` from the paths it is given): one
    that a ``..``, a symlink or an absolute path leads out of the repository is unresolved,
    with the reason, and never opened."""

    root: Path = field(default_factory=Path.cwd)
    config: RepoConfig = field(default_factory=RepoConfig)
    documents: dict[Path, Document | Skipped] = field(default_factory=dict)
    roots: tuple[Path, ...] = ()

    def load(self, path: Path) -> Document | Skipped:
        key = resolved(path)
        if key not in self.documents:
            try:
                forced = self.config.forced_format(path)
            except (OSError, RuntimeError):  # a symlink loop: read_file reports it
                forced = None
            self.documents[key] = read_file(path, forced)
        return self.documents[key]

    def admit(self, paths: Sequence[Path]) -> None:
        """Take the checked roots of the paths a run was given (once, the first time)."""
        if not self.roots:
            roots = paths.roots if isinstance(paths, Candidates) else checked_roots(paths)
            self.roots = roots or (resolved(self.root),)

    def admits(self, path: Path) -> bool:
        """Whether ``path`` resolves inside the repository (the checked roots)."""
        real = resolved(path)
        return any(inside(real, root) for root in self.roots or (resolved(self.root),))

    def resolve_reference(self, written: str, referrer: Path) -> Path | None:
        """A referenced path as written, tried from the referrer's folder up to the root."""
        return self._search(written, referrer)[0]

    def locate(self, reference: Reference, referrer: Path) -> Path | None:
        """The file a reference names, tried as its tool would: beside the referrer and up to
        the root, or in the config folder of the Hydra app it anchors to."""
        return self._find(reference, referrer)[0]

    def unresolvable(self, reference: Reference, referrer: Path) -> str | None:
        """Why a reference that was not found cannot be checked here (so it is no TL904):
        a path outside the repository (absolute, in a home folder, or led out by ``..`` or a
        symlink), or a path relative to an anchor that is not in the repository. None when
        it should have been found."""
        written = reference.path
        if reference.unresolved is not None:
            return reference.unresolved
        if written.startswith("~"):
            return "a path in a home folder, outside the repository"
        if Path(written).is_absolute():
            return "an absolute path, outside the repository (a cluster or container path)"
        refused = self._find(reference, referrer)[1]
        if refused is not None:
            return refused
        app = self.resolve_reference(reference.anchor, referrer) if reference.anchor else None
        if reference.anchor is not None and app is None:
            return f"relative to {reference.anchor}, which is not in the repository"
        if reference.in_app_config and app is not None and hydra_main_folder(app) is None:
            return f"in the config_path of {reference.anchor}'s @hydra.main, which names none"
        return None

    def _find(self, reference: Reference, referrer: Path) -> tuple[Path | None, str | None]:
        """``locate``'s file, or why an existing one is not read (outside the repository)."""
        if not reference.in_app_config:
            return self._search(reference.path, referrer)
        app = self.resolve_reference(reference.anchor, referrer) if reference.anchor else None
        folder = hydra_main_folder(app) if app is not None else None
        if app is None or folder is None:
            return None, None
        return self._pick([app.parent / folder / reference.path])

    def _search(self, written: str, referrer: Path) -> tuple[Path | None, str | None]:
        return self._pick(self._tried(written, referrer))

    def _tried(self, written: str, referrer: Path) -> Iterator[Path]:
        """Where a written path is looked for: as it is when absolute, else from the
        referrer's folder up to the root (or a checked root), then under the root when the
        root is in the repository."""
        candidate = Path(os.path.expanduser(written))
        if candidate.is_absolute():
            yield candidate
            return
        tops = {resolved(self.root), *self.roots}
        for base in [referrer.parent, *referrer.parent.parents]:
            yield base / candidate
            if resolved(base) in tops:
                break
        if self.admits(self.root):
            yield self.root / candidate

    def _pick(self, tried: Iterable[Path]) -> tuple[Path | None, str | None]:
        """The first present file inside the repository; else why the first present one
        outside it is not read (None when none is present)."""
        refused: str | None = None
        for candidate in tried:
            if not _present(candidate):
                continue
            if self.admits(candidate):
                return candidate, None
            where = resolved(candidate)
            refused = refused or f"resolves to {where}, outside the repository; not read"
        return None, refused


_HYDRA_MAIN = re.compile(r"@hydra\.main\(([^)]*)\)")
_CONFIG_PATH = re.compile(r"config_path\s*=\s*[\"']([^\"']*)[\"']")


def hydra_main_folder(app: Path) -> str | None:
    """The ``config_path`` of an app's ``@hydra.main(...)``, read as text (never imported)."""
    try:
        with open_regular(app) as handle:
            text = handle.read(MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    decorator = _HYDRA_MAIN.search(text)
    path = _CONFIG_PATH.search(decorator.group(1)) if decorator else None
    return path.group(1) if path else None


def _present(path: Path) -> bool:
    """Whether a reference finds a file at ``path``: anything but a folder or nothing. A FIFO,
    a device or a symlink loop is found, and ``read_file`` reports it (TL901) without opening
    it; a dangling link is missing."""
    try:
        return not stat.S_ISDIR(path.stat().st_mode)
    except OSError as exc:
        return exc.errno == errno.ELOOP


def read_file(path: Path, forced: str | None = None) -> Document | Skipped:
    """One file as a Document, or why it is no part of a job (``Skipped``).

    Bad input never raises: a file that cannot be read, is not a regular file (a FIFO or a
    device is never opened) or is a symlink loop is a TL901 error. A binary file (a NUL byte
    in its first KiB) or one over ``MAX_BYTES`` is not parsed: a TL901 error when its head
    shows training keys, else skipped (a checkpoint, a dataset) with its error kept for a job
    that references it. Text that is not UTF-8 is decoded with replacement characters, so a
    config with a stray byte is still read, and a TL901 error names the first bad byte.
    """
    shown = display(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return broken(shown, f"not a regular file ({kind_of(info.st_mode)}); not read")
        if info.st_size > MAX_BYTES:
            return _oversized(path, shown, info.st_size)
        with open_regular(path) as handle:  # never blocks: a FIFO swapped in is refused
            raw = handle.read(MAX_BYTES + 1)  # the file may have grown since stat
    except NotRegularFile as exc:
        return broken(shown, f"not a regular file ({kind_of(exc.mode)}); not read")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return broken(shown, "symlink loop; not read")
        return broken(shown, f"cannot read file: {exc.strerror or exc}")
    if len(raw) > MAX_BYTES:
        return _oversized(path, shown, len(raw))
    nul = raw.find(b"\0", 0, BINARY_SNIFF)
    if nul >= 0:
        return _skipped(shown, f"binary file (NUL byte at offset {nul}); not parsed")
    text, bad = _decode(raw)
    try:
        doc = read_document(Input(shown, text), forced)
    except Exception as exc:  # a reader's bug: this file fails, the run goes on
        problem = f"{type(exc).__name__}: {exc}"
        return broken(shown, f"internal error reading this file ({problem}); please report it")
    if isinstance(doc, Document) and bad is not None:
        offset, byte = bad
        line = raw.count(b"\n", 0, offset) + 1
        column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
        message = (
            f"invalid UTF-8: byte 0x{byte:02x} at byte offset {offset}; "
            "read with replacement characters"
        )
        doc.errors.append(ParseError(file=shown, line=line, column=column, message=message))
    return doc


def _skipped(shown: str, message: str) -> Skipped:
    """A file not read, with the error a referencing job reports."""
    error = ParseError(file=shown, line=1, column=1, message=message)
    return Skipped(shown, message, error=error)


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


def _oversized(path: Path, shown: str, size: int) -> Document | Skipped:
    """TL901 for a training config over the size limit; any other big file (a checkpoint, a
    dataset) is skipped, its error kept for a job that references it."""
    try:
        with open_regular(path) as handle:
            head = handle.read(BINARY_SNIFF * 16)
    except OSError:
        head = b""
    message = f"file is {_mib(size)}, over the {_mib(MAX_BYTES)} limit; not read"
    text = head.decode("utf-8", errors="replace")
    if b"\0" not in head and looks_like_training(Input(shown, text)):
        return broken(shown, message)
    return _skipped(shown, message)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB ({size:,} bytes)"


def assemble(paths: Iterable[Path], workspace: Workspace | None = None) -> list[Job]:
    """One job per training file that nothing else references (a launch, a config with run
    settings), holding everything it references; a file only reachable through a cycle, or
    only from files that are no job, roots its own when it shows training. A file is judged
    with what it references (``python main.py --config fit.yaml`` trains when fit.yaml sets
    the run)."""
    space = workspace or Workspace()
    paths = paths if isinstance(paths, Candidates) else list(paths)
    space.admit(paths)
    loaded: dict[Path, tuple[Path, Document]] = {}
    for path in paths:
        doc = space.load(path)
        if isinstance(doc, Document):
            loaded.setdefault(resolved(path), (path, doc))
    closures = {key: _closure(path, doc, space) for key, (path, doc) in loaded.items()}
    referenced = {resolved(p) for group, _ in closures.values() for p, _ in group[1:]}
    jobs: list[Job] = []
    covered: set[Path] = set()
    for key in [k for k in loaded if k not in referenced] + [k for k in loaded if k in referenced]:
        if key in covered:
            continue
        group, missing = closures[key]
        job = build_job([doc for _, doc in group], missing)
        if why_not_a_job(group[0][1], job) is None:
            jobs.append(job)
            covered.update(resolved(path) for path, _ in group)
    return jobs


def purpose_of(doc: Document) -> str | None:
    """What a file is for when it says it is no training: its launch's purpose (evaluation,
    serving) or its name's (``eval_gpt2.py``, ``ray-job.batch-inference.yaml``)."""
    return doc.purpose or _purpose.file_purpose(doc.path)


# GPUs a file declares (a process count alone, ``mpirun -n 2``, may be CPU processes).
HOLDS_GPUS = frozenset({"/resources/gpus_per_node", "/resources/gpu/model"})


def why_not_a_job(doc: Document, job: Job | None = None) -> str | None:
    """None when the file, with what it references (``job``), shows training: a training
    launch (a distributed launcher, another tool's training program, or ``python`` running a
    script named for training, or given run settings or GPUs), run settings (steps, epochs,
    batch, intervals), or — for a launch file such as a batch script or a manifest — GPUs
    held for no other stated purpose. A broken file that is ours roots a job too, so its
    TL901 is reported. Else why it is no job."""
    if (doc.errors and doc.format == "unknown") or doc.confidence >= FORCED:
        return None  # a broken file of ours, or one the repo config calls a training config
    if doc.purpose is not None:
        return doc.purpose
    if doc.launches_training:
        return None
    stated = set(job.provenance) if job is not None else {fact.pointer for fact in doc.facts}
    values = {fact.pointer: fact.value for fact in doc.facts}
    settings = not RUN_SETTINGS.isdisjoint(stated)
    gpus = not HOLDS_GPUS.isdisjoint(stated)
    kind = job.launcher.kind if job is not None else values.get("/launcher/kind")
    if kind is not None:
        entry = str((job.launcher.entrypoint if job else values.get("/launcher/entrypoint")) or "")
        script = entry.endswith(".py")  # ``mpirun python x.py``: one rank per GPU
        generic = kind in ("python", "srun") or (kind == "mpirun" and not script)
        if not generic or settings or gpus or _purpose.trainish(entry):
            return None
        return f"runs {entry} with no training settings or GPUs"
    named = _purpose.file_purpose(doc.path)
    if named is not None:
        return f"named for {named}, not training"
    if settings or (doc.role == "entrypoint" and gpus):
        return None
    return f"{doc.format} file with no training launch or run settings (steps, epochs, batch)"


def _closure(
    path: Path, doc: Document, space: Workspace
) -> tuple[list[tuple[Path, Document]], list[MissingReference | UnresolvedReference]]:
    """The document and everything it references, breadth first, each file once (so a
    reference cycle ends where it closes), and the references whose file does not exist.

    A referenced file no format recognises (e.g. an accelerate config, until a source reads
    it) still belongs to the job, so it shows in the job's sources; one that is not valid in
    its syntax brings its error (TL901): the job needs it.
    """
    seen = {resolved(path)}
    order = [(path, doc)]
    missing: list[MissingReference | UnresolvedReference] = []
    queue = deque(order)
    while queue:
        current_path, current = queue.popleft()
        for reference in current.references:
            target = space.locate(reference, current_path)
            if target is None:
                missing.append(_missing(reference, space.unresolvable(reference, current_path)))
                continue
            if resolved(target) in seen:
                continue
            seen.add(resolved(target))
            child = _as_member(space.load(target), target)
            if reference.role == "member":
                child = _member(child)
            elif reference.role == "config" and child.role == "entrypoint":
                child = replace(child, role="config")  # a sourced script lends, never launches
            order.append((target, child))
            queue.append((target, child))
    return order, missing


def _as_member(loaded: Document | Skipped, target: Path) -> Document:
    """A referenced file as part of the job, even when no format reads it."""
    if isinstance(loaded, Document):
        return loaded
    if loaded.error is not None:
        error = loaded.error
        return broken(error.file, error.message, error.line, error.column)
    return Document(display(target), "unrecognised", 0.0, "unknown")


def _member(doc: Document) -> Document:
    """A file composed into another (a Hydra group file): the composing document already
    states its merged values, so its own standalone reading contributes none (a value the
    composition left unknown must stay unknown), but its errors and typos still count."""
    return replace(doc, facts=[], role="member", overrides=[])


def _missing(
    reference: Reference, unresolvable: str | None
) -> MissingReference | UnresolvedReference:
    where = reference.location
    if unresolvable is not None:
        return UnresolvedReference(file=where.file, line=where.line, column=where.column,
                                   path=reference.path, reason=unresolvable)  # fmt: skip
    return MissingReference(
        file=where.file, line=where.line, column=where.column, path=reference.path
    )


def build_job(
    documents: list[Document], missing: Sequence[MissingReference | UnresolvedReference] = ()
) -> Job:
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
        "missing_references": [m for m in missing if isinstance(m, MissingReference)],
        "unresolved_references": [m for m in missing if isinstance(m, UnresolvedReference)],
    }
    features = {p: winners.pop(p) for p in list(winners) if p.startswith(FEATURES)}
    for fact in winners.values():
        _set(tree, fact.pointer, fact.value)
    job = _validate(tree, winners)  # drops the facts it rejects from ``winners``
    job.provenance = {pointer: fact.location for pointer, fact in winners.items()}
    job.defaults = _defaults(documents, job.provenance)
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


def _defaults(documents: Sequence[Document], stated: Collection[str]) -> dict[str, Default]:
    """The frameworks' defaults for what no file of the job states: the first document's (in
    job order), a known value before an unknown one (a fixed seed before a random one)."""
    found: dict[str, Default] = {}
    for doc in documents:
        for default in doc.defaults:
            held = found.get(default.pointer)
            if default.pointer in stated or (held is not None and held.value is not None):
                continue
            if held is None or default.value is not None:
                where = default.location
                found[default.pointer] = Default(
                    value=default.value, same_as=default.same_as, format=doc.format,
                    key=default.key, file=where.file, line=where.line, column=where.column,
                )  # fmt: skip
    return found


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
    """Fill fields implied by other stated facts (world size, global batch, accumulation,
    total steps, GPU memory), never from a guess: each derived pointer is listed in
    ``job.derived`` and located where its inputs were."""
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
    """World size from GPUs per node x nodes (one node when no file names a node count; a
    count stated as unknown, ``--nnodes $NNODES``, leaves it unknown), and GPUs per node back
    from world size / nodes when the split is even."""
    res, prov = job.resources, job.provenance
    nodes_unknown = res.nodes is None and "/resources/nodes" in prov
    if res.gpus_per_node is not None and res.world_size is None and not nodes_unknown:
        res.world_size = res.gpus_per_node * (res.nodes or 1)
        _derived(job, "/resources/gpus_per_node", "/resources/world_size")
    even = bool(res.world_size and res.nodes and res.world_size % res.nodes == 0)
    if res.world_size and res.nodes and res.gpus_per_node is None and even:
        res.gpus_per_node = res.world_size // res.nodes
        _derived(job, "/resources/world_size", "/resources/gpus_per_node")


def model_parallel(job: Job) -> int:
    """GPUs one model replica spans: tensor x pipeline x context parallel sizes."""
    par = job.training.parallelism
    return (par.tensor or 1) * (par.pipeline or 1) * (par.context or 1)


def _derive_batch(job: Job) -> None:
    """global = micro x accumulation x data-parallel replicas (world / model parallel), read
    in whichever direction the job leaves open (DeepSpeed states global, Megatron derives
    accumulation). The world size comes from the batch only with accumulation stated, and
    nothing is derived from a layout that cannot run (TL108 says so)."""
    res, train = job.resources, job.training
    spans = model_parallel(job)
    if res.world_size is not None and res.world_size % spans != 0:
        return
    micro, accum, glob = train.micro_batch_size, train.grad_accum_steps, train.global_batch_size
    if res.world_size is None and glob and micro and accum and glob % (micro * accum) == 0:
        res.world_size = glob // (micro * accum) * spans
        _derived(job, "/training/global_batch_size", "/resources/world_size")
    replicas = res.world_size // spans if res.world_size else None
    if glob is None and micro and replicas:
        train.global_batch_size = micro * (accum or 1) * replicas  # accumulation defaults to 1
        _derived(job, "/training/micro_batch_size", "/training/global_batch_size")
    if accum is None and glob and micro and replicas and glob % (micro * replicas) == 0:
        train.grad_accum_steps = glob // (micro * replicas)  # Megatron/NeMo derive it
        _derived(job, "/training/global_batch_size", "/training/grad_accum_steps")


def _derived(job: Job, source: str, target: str) -> None:
    job.derived.append(target)
    _copy(job.provenance, source, target)


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
