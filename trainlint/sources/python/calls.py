"""Facts from the calls of a training script: the literal keyword arguments of the
constructors that configure training, and a few calls that switch a feature on.

Feature switches (``torch.compile``, anomaly detection, the torch profiler, ``os.environ``) only
count when no ``if`` guards them: nanoGPT writes ``if compile: model = torch.compile(model)``,
and a flag read from the config must not be overridden by the code it guards.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from trainlint.job import Location
from trainlint.sources import hf_trainer
from trainlint.sources.base import Fact, Reference, pointer
from trainlint.sources.base.table import JobField, facts_for
from trainlint.sources.python import tables as t
from trainlint.sources.python.literal import UNKNOWN, Positions, literal
from trainlint.sources.python.walk import Scan, keyword_names


@dataclass
class Context:
    path: str
    positions: Positions
    scan: Scan

    def at(self, node: ast.AST) -> Location:
        line, column = self.positions.of(node)
        return Location(file=self.path, line=line, column=column)


@dataclass
class Found:
    facts: list[Fact] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    # (dict literal or the name of one, node whose position the dict's root takes, forced):
    # forced when the code passes it as a DeepSpeed config, else its keys must say so.
    ds_configs: list[tuple[ast.expr, ast.AST, bool]] = field(default_factory=list)
    confidence: float = 0.0

    def recognised(self, confidence: float) -> None:
        self.confidence = max(self.confidence, confidence)


def read_calls(ctx: Context) -> Found:
    found = Found()
    for call, conditional in ctx.scan.calls:
        full = ctx.scan.full_name(call.func)
        last = full.rsplit(".", 1)[-1]
        handler = _constructor(full, last, keyword_names(call))
        if handler is not None:
            handler(ctx, call, found)
        elif not conditional:
            _switch(ctx, call, full, last, found)
    for assign, conditional in ctx.scan.assigns:
        if not conditional:
            found.facts += _environ_item(ctx, assign)
    return found


Handler = Callable[[Context, ast.Call, Found], None]


def _constructor(full: str, last: str, keywords: set[str]) -> Handler | None:
    """Which constructor ``full`` is: Lightning's and HF's ``Trainer`` share a name, so the
    import (``L.Trainer``, ``from lightning import Trainer``) or the keywords decide."""
    if last in {"Trainer", "Fabric"}:
        bare = full == last
        if full.startswith(t.LIGHTNING_MODULES) or (
            bare and keywords & t.LIGHTNING_ONLY and "args" not in keywords
        ):
            return _lightning_trainer
    if last in t.HF_ARGUMENTS:
        return _hf_arguments
    if last in t.HF_TRAINERS and (full == last or full.startswith(("transformers.", "trl."))):
        return lambda ctx, call, found: found.recognised(0.9)
    if last == "ModelCheckpoint":
        return _table_call(t.MODEL_CHECKPOINT)
    if last in t.STRATEGY_CALLS:
        return _strategy_call
    if full.endswith("deepspeed.initialize"):
        return _ds_config_argument
    return None


def _keyword_facts(ctx: Context, call: ast.Call, table: Mapping[str, list[JobField]]) -> list[Fact]:
    """Facts of the keywords of ``table`` whose value is a literal (anything else: unknown)."""
    facts: list[Fact] = []
    for kw in call.keywords:
        if kw.arg is None or kw.arg not in table:
            continue
        value = literal(kw.value)
        if value is not UNKNOWN:
            facts += facts_for(table[kw.arg], value, ctx.at(kw))
    return facts


def _table_call(table: Mapping[str, list[JobField]]) -> Handler:
    def handle(ctx: Context, call: ast.Call, found: Found) -> None:
        found.facts += _keyword_facts(ctx, call, table)
        found.recognised(0.9)

    return handle


def _lightning_trainer(ctx: Context, call: ast.Call, found: Found) -> None:
    found.facts += _keyword_facts(ctx, call, t.LIGHTNING)
    found.recognised(0.9)


def _hf_arguments(ctx: Context, call: ast.Call, found: Found) -> None:
    """TrainingArguments and the TRL configs: hf-trainer's own table, keyword by keyword."""
    for kw in call.keywords:
        if kw.arg is None:
            continue  # **kwargs: unknown
        value = literal(kw.value)
        if kw.arg == "deepspeed" and isinstance(kw.value, (ast.Dict, ast.Name)):
            found.ds_configs.append((kw.value, kw, True))
            value = True if isinstance(kw.value, ast.Dict) else UNKNOWN
        if value is UNKNOWN:
            continue
        found.facts += hf_trainer.cli_facts(kw.arg, value, ctx.at(kw))
        reference = hf_trainer.cli_reference(kw.arg, value, ctx.at(kw))
        if reference is not None:
            found.references.append(reference)
    found.recognised(0.9)


def _strategy_call(ctx: Context, call: ast.Call, found: Found) -> None:
    """``DeepSpeedStrategy(stage=3, config=...)``, ``FSDPStrategy(...)``, ``DDPStrategy()``."""
    kind = t.STRATEGY_CALLS[ctx.scan.full_name(call.func).rsplit(".", 1)[-1]]
    found.facts.append(Fact("/training/parallelism/strategy", kind, ctx.at(call)))
    if kind == "deepspeed":
        found.facts += _keyword_facts(ctx, call, t.DEEPSPEED_STRATEGY)
        _ds_config_argument(ctx, call, found)
    found.recognised(0.8)


def _ds_config_argument(ctx: Context, call: ast.Call, found: Found) -> None:
    """``config=`` of ``deepspeed.initialize`` / ``DeepSpeedStrategy``: a dict or a JSON path."""
    for kw in call.keywords:
        if kw.arg not in {"config", "config_params"}:
            continue
        if isinstance(kw.value, (ast.Dict, ast.Name)):
            found.ds_configs.append((kw.value, kw, True))
        value = literal(kw.value)
        if isinstance(value, str) and value.strip():
            found.references.append(Reference(value.strip(), ctx.at(kw), "deepspeed"))
            found.facts.append(Fact("/training/parallelism/strategy", "deepspeed", ctx.at(kw)))


def _switch(ctx: Context, call: ast.Call, full: str, last: str, found: Found) -> None:
    """Calls that switch a feature on for the whole run."""
    where = ctx.at(call)
    if full == "torch.compile":
        found.facts.append(Fact("/training/compile", True, where))
    elif full.endswith("autograd.set_detect_anomaly") and call.args:
        value = literal(call.args[0])
        if isinstance(value, bool):
            found.facts.append(Fact("/logging/anomaly_detection", value, where))
    elif full.endswith("autograd.detect_anomaly"):
        found.facts.append(Fact("/logging/anomaly_detection", True, where))
    elif full.endswith("profiler.profile") and full.startswith("torch."):
        schedule = _keyword(call, "schedule")  # absent or None: every step is profiled
        scheduled = schedule is not None and literal(schedule) is not None
        found.facts += [Fact("/logging/profiler/enabled", True, where),
                        Fact("/logging/profiler/scheduled", scheduled, where)]  # fmt: skip
    elif last in t.PROFILER_CALLS:
        scheduled = t.PROFILER_CALLS[last]
        found.facts += [Fact("/logging/profiler/enabled", True, where),
                        Fact("/logging/profiler/scheduled", scheduled, where)]  # fmt: skip
    elif full in {"os.environ.setdefault", "os.environ.update"}:
        found.facts += _environ_call(ctx, call, last)


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _environ_call(ctx: Context, call: ast.Call, method: str) -> list[Fact]:
    if method == "setdefault" and len(call.args) == 2:
        return _env_fact(ctx, call.args[0], literal(call.args[0]), literal(call.args[1]))
    facts: list[Fact] = []
    if method == "update" and len(call.args) == 1 and isinstance(call.args[0], ast.Dict):
        for key, value in zip(call.args[0].keys, call.args[0].values, strict=True):
            if key is not None:
                facts += _env_fact(ctx, key, literal(key), literal(value))
    for kw in call.keywords if method == "update" else []:
        if kw.arg is not None:
            facts += _env_fact(ctx, kw, kw.arg, literal(kw.value))
    return facts


def _environ_item(ctx: Context, assign: ast.Assign) -> list[Fact]:
    """``os.environ["NCCL_DEBUG"] = "INFO"``."""
    facts: list[Fact] = []
    for target in assign.targets:
        if isinstance(target, ast.Subscript) and ctx.scan.full_name(target.value) == "os.environ":
            facts += _env_fact(ctx, target, literal(target.slice), literal(assign.value))
    return facts


def _env_fact(ctx: Context, node: ast.AST, name: object, value: object) -> list[Fact]:
    if not isinstance(name, str) or not name or not isinstance(value, str):
        return []
    return [Fact(pointer("env", name), value, ctx.at(node))]
