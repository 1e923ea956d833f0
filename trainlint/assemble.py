"""Group documents into jobs and merge their facts into one pydantic Job (DESIGN §1.3).

Every file that nothing else references roots one job holding everything it references,
transitively: a launch script with its configs (and the scripts it runs), or a lone config with
its DeepSpeed JSON. Facts merge by precedence (command line > config > DeepSpeed JSON), and
``provenance`` keeps the location of the fact that won. Files are read by ``read``'s
``Workspace``; what the merged facts imply is filled in by ``derive``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from trainlint.derive import derive
from trainlint.discover import Candidates, resolved
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
from trainlint.read import Sighting, Workspace, display
from trainlint.sources import FORCED, broken, override_facts
from trainlint.sources.base import (
    PRECEDENCE,
    RUN_SETTINGS,
    Document,
    DocumentDefault,
    Fact,
    Reference,
    Skipped,
)
from trainlint.sources.base import purpose as _purpose
from trainlint.sources.base.redact import redact_fact
from trainlint.sources.python.arguments import argument_facts


def assemble(
    paths: Iterable[Path], workspace: Workspace | None = None, memo: ClosureMemo | None = None
) -> list[Job]:
    """One job per training file that nothing else references (a launch, a config with run
    settings), holding everything it references; a file only reachable through a cycle, or
    only from files that are no job, roots its own when it shows training. A file is judged
    with what it references (``python main.py --config fit.yaml`` trains when fit.yaml sets
    the run). ``memo`` (the cache's) vouches for each file's closure, and the job built from
    it, while everything following its references saw is as it was."""
    space = workspace or Workspace()
    paths = paths if isinstance(paths, Candidates) else list(paths)
    space.admit(paths)
    loaded: dict[Path, Path] = {}
    closures: dict[Path, _Closure | Recalled] = {}
    for path in paths:  # a closure the memo recalls needs no document read
        key = resolved(path)
        recalled = memo.recall(key, space) if memo is not None and key not in loaded else None
        if recalled is not None:
            loaded[key], closures[key] = path, recalled
            continue
        doc = space.load(path)
        if isinstance(doc, Document) and key not in loaded:
            loaded[key] = path
            closures[key] = _closure_of(key, path, doc, space, memo)
    referenced = {p for closure in closures.values() for p in closure.owned}
    jobs: list[Job] = []
    covered: set[Path] = set()
    # A referenced file roots a job only when no file reaching it does (its referrers are no
    # job): a file's closure holds every file it reaches, so the larger closures go first.
    reached = sorted((k for k in loaded if k in referenced), key=lambda k: -closures[k].size)
    for key in [k for k in loaded if k not in referenced] + reached:
        if key in covered:
            continue
        job = _judged(key, closures[key], loaded[key], space, memo)
        if job is not None:
            jobs.append(job)
            covered.update({key, *closures[key].owned})
    return jobs


def _closure_of(
    key: Path, path: Path, doc: Document, space: Workspace, memo: ClosureMemo | None
) -> _Closure:
    """The file's closure, told to the memo with every sighting computing it made and every
    file reading its documents consulted (a base config, a Hydra group file)."""
    with space.watching() as sightings:
        space.load(path)
        closure = _closure(path, doc, space)
    if memo is not None:
        consulted = [seen for _, member in closure.group for seen in member.consulted]
        memo.keep(key, [*sightings, *consulted], closure.owned, closure.size)
    return closure


def _judged(
    key: Path,
    closure: _Closure | Recalled,
    path: Path,
    space: Workspace,
    memo: ClosureMemo | None,
) -> Job | None:
    """The job ``closure`` roots, None when it shows no training (``why_not_a_job``): as
    judged before when the memo holds it, else built now (and told to the memo)."""
    if not isinstance(closure, _Closure):
        if closure.judged:
            return closure.job()
        doc = space.load(path)
        assert isinstance(doc, Document)  # a closure is kept only for a document
        closure = _closure(path, doc, space)
    job = build_job([doc for _, doc in closure.group], closure.missing)
    verdict = job if why_not_a_job(closure.group[0][1], job) is None else None
    if memo is not None:
        memo.judge(key, verdict)
    return verdict


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


@dataclass(frozen=True)
class _Closure:
    """A file's job as it would be: the documents (the file first), the references whose
    file does not exist, and the files it swallows (``owned``: all it reaches but a base
    that is a run of its own, ``Reference.own_run``, which only joins as a member)."""

    group: list[tuple[Path, Document]]
    missing: list[MissingReference | UnresolvedReference]
    owned: set[Path]

    @property
    def size(self) -> int:
        return len(self.group)


class Recalled(Protocol):
    """A closure as a memo recalls it: what it owns, its size, and whether (``judged``)
    and which ``job`` it rooted, without its documents."""

    @property
    def owned(self) -> set[Path]: ...

    @property
    def size(self) -> int: ...

    @property
    def judged(self) -> bool: ...

    def job(self) -> Job | None: ...


class ClosureMemo(Protocol):
    """Closures carried from the last run (``cache.ClosureMemo``)."""

    def recall(self, key: Path, space: Workspace) -> Recalled | None: ...

    def keep(self, key: Path, sightings: list[Sighting], owned: set[Path], size: int) -> None: ...

    def judge(self, key: Path, job: Job | None) -> None: ...


def _closure(path: Path, doc: Document, space: Workspace) -> _Closure:
    """The document and everything it references, breadth first, each file once (so a
    reference cycle ends where it closes), and the references whose file does not exist.

    A referenced file no format recognises (e.g. an accelerate config, until a source reads
    it) still belongs to the job, so it shows in the job's sources; one that is not valid in
    its syntax brings its error (TL901): the job needs it.
    """
    seen = {resolved(path)}
    order = [(path, doc)]
    missing: list[MissingReference | UnresolvedReference] = []
    programs: set[Path] = set()
    owned: set[Path] = set()
    queue = deque(order)
    while queue:
        current_path, current = queue.popleft()
        program = [current.program] if current.program is not None else []
        for reference in [*current.references, *program]:
            target = space.locate(reference, current_path)
            if target is None and reference.optional:
                continue
            if target is None:
                missing.append(_missing(reference, space.unresolvable(reference, current_path)))
                continue
            if not reference.own_run:
                owned.add(resolved(target))
            if resolved(target) in seen:
                continue
            seen.add(resolved(target))
            if reference is current.program:
                programs.add(target)
            child = _as_member(space.load(target), target)
            if reference.role == "member":
                child = _member(child)
            elif reference.role == "config" and child.role == "entrypoint":
                child = replace(child, role="config")  # a sourced script lends, never launches
            order.append((target, child))
            queue.append((target, child))
    # A launched script's own values (module globals, argument defaults) are what its configs
    # and flags override (nanoGPT's train.py globals under config/*.py): first among equals.
    ranked = [order[0], *(o for o in order[1:] if o[0] in programs)]
    group = ranked + [o for o in order[1:] if o[0] not in programs]
    return _Closure(group, missing, owned - {resolved(path)})


def _as_member(loaded: Document | Skipped, target: Path) -> Document:
    """A referenced file as part of the job, even when no format reads it."""
    if isinstance(loaded, Document):
        return loaded
    if loaded.error is not None:
        error = loaded.error
        return broken(error.file, error.message, error.line, error.column)
    return Document(display(target), "unrecognised", 0.0, "unknown")


def _member(doc: Document) -> Document:
    """A file composed into another (a Hydra group file, a config another inherits): the
    composing document already states its merged values, so its own standalone reading
    contributes none, nor its defaults (a value the composition left unknown must stay
    unknown: a base read alone may see all its bases where the inheriting config does not),
    but its errors and typos still count."""
    return replace(doc, facts=[], defaults=[], role="member", overrides=[])


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
    for fact in _argument_facts(documents):  # the entry script's own flags: what no format read
        winners.setdefault(fact.pointer, fact)
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
                kept = _default(default, doc.format)
                if kept is not None:
                    found[default.pointer] = kept
    return found


def _default(default: DocumentDefault, format_name: str) -> Default | None:
    """The job's record of ``default``; None when the model cannot hold its value (a default
    the job model has no shape for is dropped, as a fact would be, never fatal)."""
    where = default.location
    try:
        return Default(
            value=default.value, same_as=default.same_as, format=format_name,
            key=default.key, file=where.file, line=where.line, column=where.column,
        )  # fmt: skip
    except ValidationError:
        return None


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


def _argument_facts(documents: list[Document]) -> list[Fact]:
    """The launch line's flags read through the arguments its entry script defines."""
    overrides = [o for doc in documents if doc.role == "entrypoint" for o in doc.overrides]
    defined = [doc.arguments for doc in documents if doc.arguments]
    return [
        redact_fact(fact)
        for arguments in defined
        for override in overrides
        if override.key in arguments
        for fact in argument_facts(arguments[override.key], override.value, override.location)
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
