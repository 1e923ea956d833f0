"""Ray Train scripts (``TorchTrainer``, ``LightningTrainer``, ``TransformersTrainer``, ...):
``ScalingConfig``, ``CheckpointConfig`` and ``RunConfig`` read with ``ast``, never imported.

``ScalingConfig(num_workers=N, use_gpu=True, resources_per_worker={"GPU": g})`` holds N workers
of g GPUs each (g is 1 when ``use_gpu`` is set and ``resources_per_worker`` names no GPU; a
fraction of a GPU shares one): world size N x g, and ``/resources/accelerator`` "gpu", or
"tpu" for ``use_tpu=True`` / ``resources_per_worker={"TPU": n}``. ``use_gpu=False`` written
with no GPU or TPU resource is a CPU job ("none"). Ray places workers on any node, so the
script states no GPUs per node nor a node count. ``CheckpointConfig(num_to_keep=K)`` is the
checkpoints kept; its ``checkpoint_frequency`` is left out, as Ray ignores it for trainers that
run a user's loop (they save when the loop calls ``ray.train.report(checkpoint=...)``).
``RunConfig(name=...)`` names the run. A Ray trainer built outside any ``if`` is a training
launch: the script roots a job when nothing launches it. Only literal keyword values count:
a name or a call (``num_workers=args.workers``) is unknown. Everything the generic Python
reader finds in the same file (a DeepSpeed dict, ``TrainingArguments``, ``os.environ``) is
kept.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from trainlint.sources import python_code
from trainlint.sources.base import Document, Fact, Input, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.python.calls import Context
from trainlint.sources.python.literal import UNKNOWN, literal
from trainlint.sources.structured import MAX_BYTES

name = "ray-train"
role: Role = "entrypoint"

_IMPORT_HINT = re.compile(r"^\s*(?:from|import)\s+ray(?:\.train\b|\s+import\s+train\b)", re.M)
_CALL_HINT = re.compile(r"\b(?:ScalingConfig|CheckpointConfig|RunConfig)\s*\(")
_CALLS = frozenset({"ScalingConfig", "CheckpointConfig", "RunConfig"})


def recognise(file: Input) -> float:
    """0.92 for a Python file importing ``ray.train`` that calls one of its configs: above the
    generic Python reader, which this format includes."""
    if file.suffix != "py" or len(file.text) > MAX_BYTES:
        return 0.0
    text = file.text
    return 0.92 if _IMPORT_HINT.search(text) and _CALL_HINT.search(text) else 0.0


def parse(file: Input) -> Document:
    doc, _, ctx = python_code.extended(file, name, recognise(file), role)
    doc.facts = [*doc.facts, *ray_facts(ctx)]
    doc.launches_training = _trains(ctx)
    doc.purpose = doc.purpose if doc.purpose and "pytest" in doc.purpose else None
    return doc


def ray_facts(ctx: Context) -> list[Fact]:
    """The facts of every unconditional Ray config call, in source order."""
    facts: list[Fact] = []
    for call, conditional in ctx.scan.calls:
        last = ctx.scan.full_name(call.func).rsplit(".", 1)[-1]
        if conditional or last not in _CALLS:
            continue
        if last == "ScalingConfig":
            facts += _scaling(ctx, call)
        elif last == "CheckpointConfig":
            facts += _keyword_fact(ctx, call, "num_to_keep", "/checkpoint/keep_last", n.to_int)
        else:
            facts += _keyword_fact(ctx, call, "name", "/name", n.to_str)
    return facts


def _trains(ctx: Context) -> bool:
    """A Ray trainer built where the script runs, not under an ``if``: ``TorchTrainer(...)``
    (``ray.train.torch``), ``LightningTrainer``, ``TransformersTrainer``, ...."""
    for call, conditional in ctx.scan.calls:
        full = ctx.scan.full_name(call.func)
        if not conditional and full.startswith("ray.train.") and full.endswith("Trainer"):
            return True
    return False


def _keywords(call: ast.Call) -> dict[str, ast.keyword]:
    return {kw.arg: kw for kw in call.keywords if kw.arg is not None}


def _keyword_fact(
    ctx: Context, call: ast.Call, key: str, pointer: str, convert: Callable[[Any], object]
) -> list[Fact]:
    kw = _keywords(call).get(key)
    value = convert(literal(kw.value)) if kw is not None else None
    return [Fact(pointer, value, ctx.at(kw))] if kw is not None and value is not None else []


def _scaling(ctx: Context, call: ast.Call) -> list[Fact]:
    """Workers x accelerators per worker; the accelerator kind; a CPU job."""
    keywords = _keywords(call)
    per_worker = _per_worker(keywords.get("resources_per_worker"))
    if per_worker is None:
        return []  # resources_per_worker is not a literal: nothing is known
    use_gpu, use_tpu = (_flag(keywords.get(key)) for key in ("use_gpu", "use_tpu"))
    kind, count = _accelerator(use_gpu, use_tpu, per_worker)
    if kind is None:
        return []
    where = ctx.at(keywords.get("use_tpu" if kind == "tpu" else "use_gpu") or call)
    facts = [Fact("/resources/accelerator", kind, where)]
    workers_kw = keywords.get("num_workers")
    workers = n.positive_int(literal(workers_kw.value)) if workers_kw is not None else None
    if workers is not None and workers_kw is not None and count is not None:
        facts.append(Fact("/resources/world_size", workers * count, ctx.at(workers_kw)))
    return facts


def _flag(kw: ast.keyword | None) -> bool | None:
    """False when not written (Ray's default), the literal when written, else unknown."""
    if kw is None:
        return False
    value = literal(kw.value)
    return value if isinstance(value, bool) else None


def _per_worker(kw: ast.keyword | None) -> dict[str, float] | None:
    """``resources_per_worker`` as numbers by resource name ({} when not written)."""
    if kw is None:
        return {}
    value = literal(kw.value)
    if value is UNKNOWN or not isinstance(value, dict):
        return None
    numbers = {str(k).upper(): v for k, v in value.items() if isinstance(v, (int, float))}
    return numbers if len(numbers) == len(value) else None


def _accelerator(
    use_gpu: bool | None, use_tpu: bool | None, per_worker: dict[str, float]
) -> tuple[str | None, int | None]:
    """(kind, whole accelerators per worker): a fractional GPU is shared, so no count."""
    for kind, flag in (("tpu", use_tpu), ("gpu", use_gpu)):
        stated = per_worker.get(kind.upper())
        if flag or (stated is not None and stated > 0):
            amount = stated if stated is not None else 1
            return kind, int(amount) if float(amount).is_integer() and amount >= 1 else None
    if use_gpu is False and use_tpu is False:
        return "none", None
    return None, None


def keys() -> dict[str, list[str]]:
    """Every keyword this format reads → the job-model pointers it sets (docs/formats.md)."""
    return {
        "ScalingConfig(num_workers=, use_gpu=, use_tpu=, resources_per_worker={GPU|TPU: n})": [
            "/resources/world_size", "/resources/accelerator"],
        "CheckpointConfig(num_to_keep=)": ["/checkpoint/keep_last"],
        "RunConfig(name=)": ["/name"],
        "(everything the python format reads in the same file)": [],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("train_ray.py",),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
)
