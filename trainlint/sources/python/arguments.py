"""An entry script's own command-line arguments, read from its syntax tree (never run).

Most research code is ``torchrun … main.py --batch-size 64 --epochs 300`` with main.py's
``argparse`` definitions beside it. This module reads those definitions (``add_argument`` with
its default, action and help; ``click.option``/``typer.Option``; the fields of the dataclasses
an ``HfArgumentParser`` parses) and maps each to the job model by its name, refined by its help
text. The mapping is conservative: a name it cannot place with confidence maps to nothing
(``--batch-size`` whose help says "total batch size of all GPUs on the current node" is neither
the per-GPU nor the global batch).

Each mapped argument gives a default (``DocumentDefault``, located at its definition) and the
spellings a command line may use for it (``Document.arguments``), which the job assembly reads
as the fallback for flags no format reads (``assemble``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import DocumentDefault, Fact, ProgramArgument
from trainlint.sources.base import normalize as n
from trainlint.sources.base.table import JobField, facts_for
from trainlint.sources.python import tables as t
from trainlint.sources.python.calls import Context
from trainlint.sources.python.literal import UNKNOWN, literal

# Argument names a script uses for the job's quantities, beyond those module variables and
# TrainingArguments use (``tables.NAMES``): pytorch/examples, timm, DeiT, OpenRLHF-style scripts.
_STEPS = t.OWN_NAMES["max_iters"]
_SAVE = t.OWN_NAMES["save_every"]
_LOG = t.OWN_NAMES["log_interval"]
_EVAL = t.OWN_NAMES["eval_interval"]
_WORKERS = t.OWN_NAMES["num_workers"]
_SEQ = t.OWN_NAMES["seq_len"]
_MODEL = t.OWN_NAMES["model_name"]
_MICRO = t.OWN_NAMES["micro_batch_size"]
SCRIPT_NAMES: dict[str, list[JobField]] = {
    "micro_batch_size_per_gpu": _MICRO, "train_micro_batch_size_per_gpu": _MICRO,
    "total_batch_size": t.OWN_NAMES["global_batch_size"],
    "train_batch_size": [],  # per device in some scripts, global in others: not placed
    "iters": _STEPS, "iterations": _STEPS, "max_iterations": _STEPS, "total_steps": _STEPS,
    "num_steps": _STEPS, "train_iters": _STEPS, "num_train_steps": _STEPS,
    "workers": _WORKERS, "num_workers": _WORKERS, "dataloader_workers": _WORKERS,
    "seq_length": _SEQ, "max_seq_length": _SEQ,
    "save_freq": _SAVE, "save_steps": _SAVE, "checkpoint_interval": _SAVE, "ckpt_interval": _SAVE,
    "log_freq": _LOG, "print_freq": _LOG, "logging_steps": _LOG, "log_steps": _LOG,
    "eval_freq": _EVAL, "eval_steps": _EVAL, "val_interval": _EVAL, "val_every": _EVAL,
    "zero_stage": [JobField("/training/parallelism/zero_stage", n.to_int)],
    "cpu_offload": [JobField("/training/parallelism/offload_optimizer", n.to_bool)],
    "offload_optimizer": [JobField("/training/parallelism/offload_optimizer", n.to_bool)],
    "model_name_or_path": _MODEL, "pretrained_model_name_or_path": _MODEL, "arch": _MODEL,
    "lora_enable": [JobField("/model/peft/method", n.when_true("lora"))],
    "use_lora": [JobField("/model/peft/method", n.when_true("lora"))],
    "lora_rank": [JobField("/model/peft/rank", n.positive_int)],
}  # fmt: skip
# A batch size whose help says it spans GPUs or nodes: not the per-GPU batch.
_SPANS_DEVICES = re.compile(r"\b(?:total|global|all\s+gpus|across|effective)\b", re.I)
_PER_DEVICE = re.compile(r"\bper[\s_-]*(?:gpu|device|process|rank|replica)\b", re.I)
_AMP = ("amp", "use_amp", "mixed_precision")


@dataclass(frozen=True)
class _Definition:
    """One argument as the script defines it: its dest, its command-line spellings (without
    dashes), its default expression, whether it is a switch, its help, and its node."""

    dest: str
    flags: tuple[str, ...]
    default: ast.expr | None
    switch: bool | None  # True: store_true, False: store_false, None: takes a value
    help: str
    node: ast.AST


def script_arguments(
    ctx: Context, tree: ast.Module
) -> tuple[list[DocumentDefault], dict[str, ProgramArgument]]:
    """The defaults of the script's mapped arguments, and every spelling of them a command line
    may use → the argument (``Document.arguments``)."""
    defaults: list[DocumentDefault] = []
    spellings: dict[str, ProgramArgument] = {}
    for definition in _definitions(ctx, tree):
        name = _mapped_name(definition)
        if name is None:
            continue
        argument = ProgramArgument(name, definition.switch)
        for flag in definition.flags:
            spellings.setdefault(flag, argument)
        defaults += _defaults(ctx, definition, name)
    return defaults, spellings


@dataclass(frozen=True)
class ArgumentDefault:
    """An argument's literal default as the script defines it: the value, its first flag
    (``--ngpus``) and the default's expression (where it is written)."""

    value: Any
    flag: str
    node: ast.AST


def argument_defaults(ctx: Context, tree: ast.Module) -> dict[str, ArgumentDefault]:
    """Every argument's dest → its literal default, mapped to the job model or not (a submitit
    script's ``--ngpus``); a dest defined twice, or without a literal default, is left out."""
    found: dict[str, ArgumentDefault] = {}
    seen: set[str] = set()
    for definition in _definitions(ctx, tree):
        dest, default = definition.dest, definition.default
        value = literal(default) if default is not None else UNKNOWN
        if dest in seen:
            found.pop(dest, None)
        elif default is not None and value is not UNKNOWN and value is not None:
            found[dest] = ArgumentDefault(value, "--" + definition.flags[0], default)
        seen.add(dest)
    return found


def argument_facts(argument: ProgramArgument, value: Any, where: Location) -> list[Fact]:
    """Facts for ``--flag value`` (True for a bare switch) of an argument the script defines."""
    if argument.switch is not None:
        value = argument.switch if value is True else n.to_bool(value)
    return facts_for(fields_of(argument.name), value, where)


def fields_of(name: str) -> list[JobField]:
    """The job fields a mapped argument name sets (``ProgramArgument.name``)."""
    if name.startswith("amp:"):
        return [JobField("/training/precision", n.when_true(name.split(":", 1)[1]))]
    return SCRIPT_NAMES.get(name) or t.NAMES.get(name, [])


def _mapped_name(definition: _Definition) -> str | None:
    """The table name the argument maps to, by its dest and help; None when unsure."""
    dest = definition.dest
    if dest in ("batch_size", "batch"):
        if _SPANS_DEVICES.search(definition.help) and not _PER_DEVICE.search(definition.help):
            return None
        return "batch_size"
    if dest in _AMP:
        precision = _amp_precision(definition.help)
        return f"amp:{precision}" if precision and definition.switch is not False else None
    if dest in SCRIPT_NAMES:
        return dest if SCRIPT_NAMES[dest] else None
    return dest if dest in t.NAMES else None


def _amp_precision(help_text: str) -> str | None:
    """``--amp`` means the half type its help names; without one it is unplaced."""
    lowered = help_text.lower()
    if "bf16" in lowered or "bfloat16" in lowered:
        return "bf16"
    if "fp16" in lowered or "float16" in lowered or "half" in lowered:
        return "fp16"
    return None


def _defaults(ctx: Context, definition: _Definition, name: str) -> list[DocumentDefault]:
    """The argument's default as the run's value when no flag sets it, at its definition (a
    switch without ``default=`` is off, so a ``store_false`` one is on)."""
    if definition.default is not None:
        raw: Any = literal(definition.default)
    else:
        raw = None if definition.switch is None else not definition.switch
    if raw is UNKNOWN or raw is None:
        return []
    where = ctx.at(definition.default if definition.default is not None else definition.node)
    facts = facts_for(fields_of(name), raw, where)
    return [
        DocumentDefault(f.pointer, f.value, "--" + definition.flags[0], f.location) for f in facts
    ]


def _definitions(ctx: Context, tree: ast.Module) -> list[_Definition]:
    found = [d for call, _ in ctx.scan.calls if (d := _add_argument(call)) is not None]
    found += _click_options(tree)
    found += _parsed_dataclasses(ctx, tree)
    return found


def _add_argument(call: ast.Call) -> _Definition | None:
    """``parser.add_argument("--batch-size", "-b", type=int, default=64, help=…)``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "add_argument"):
        return None
    written = [
        a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
    ]
    longs = [w[2:] for w in written if w.startswith("--")]
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    dest_node = keywords.get("dest")
    dest = dest_node.value if isinstance(dest_node, ast.Constant) else None
    if not longs and not isinstance(dest, str):
        return None
    dest = dest if isinstance(dest, str) else longs[0].replace("-", "_")
    return _Definition(
        dest.lower(),
        tuple(longs) or (dest,),
        keywords.get("default"),
        _switch(keywords.get("action")),
        _text(keywords.get("help")),
        call,
    )


def _switch(action: ast.expr | None) -> bool | None:
    value = action.value if isinstance(action, ast.Constant) else None
    return {"store_true": True, "store_false": False}.get(value) if isinstance(value, str) else None


def _text(node: ast.expr | None) -> str:
    value = literal(node) if node is not None else None
    return value if isinstance(value, str) else ""


def _click_options(tree: ast.Module) -> list[_Definition]:
    """``@click.option("--epochs", default=10, help=…)`` and ``typer.Option(10, "--epochs")``
    (the parameter's name is the dest)."""
    found: list[_Definition] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            found += [d for deco in node.decorator_list if (d := _click(deco)) is not None]
            found += _typer_parameters(node)
    return found


def _click(deco: ast.expr) -> _Definition | None:
    if not (isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute)):
        return None
    if deco.func.attr != "option":
        return None
    names = [a.value for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    longs = [w[2:].split("/")[0] for w in names if w.startswith("--")]
    if not longs:
        return None
    keywords = {k.arg: k.value for k in deco.keywords if k.arg}
    flag = keywords.get("is_flag")
    switch = True if isinstance(flag, ast.Constant) and flag.value is True else None
    dest = longs[0].replace("-", "_").lower()
    return _Definition(dest, tuple(longs), keywords.get("default"), switch,
                       _text(keywords.get("help")), deco)  # fmt: skip


def _typer_parameters(func: ast.FunctionDef) -> list[_Definition]:
    """``def main(epochs: int = typer.Option(3, help=...))``: defaults belong to the last
    positional parameters, positional-only ones included (``def f(a, /, b=1)``)."""
    positional = [*func.args.posonlyargs, *func.args.args]
    defaults = func.args.defaults
    args = positional[len(positional) - len(defaults) :] if defaults else []
    found: list[_Definition] = []
    for arg, default in zip(args, defaults, strict=True):
        call = default if isinstance(default, ast.Call) else None
        callee = call.func if call is not None else None
        if call is None or not (isinstance(callee, ast.Attribute) and callee.attr == "Option"):
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        value = call.args[0] if call.args else keywords.get("default")
        flag = arg.arg.replace("_", "-")
        found.append(_Definition(arg.arg.lower(), (flag, arg.arg), value, None,
                                 _text(keywords.get("help")), call))  # fmt: skip
    return found


def _parsed_dataclasses(ctx: Context, tree: ast.Module) -> list[_Definition]:
    """The fields of the dataclasses ``HfArgumentParser((ModelArguments, …))`` parses: each
    field is a ``--field_name`` flag; ``field(default=…, metadata={"help": …})``."""
    parsed: set[str] = set()
    for call, _ in ctx.scan.calls:
        if ctx.scan.full_name(call.func).rsplit(".", 1)[-1] != "HfArgumentParser" or not call.args:
            continue
        first = call.args[0]
        items = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
        parsed |= {item.id for item in items if isinstance(item, ast.Name)}
    found: list[_Definition] = []
    for cls in (c for c in ctx.scan.dataclasses if c.name in parsed):
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                found.append(_field(stmt.target.id, stmt.value, stmt))
    return found


def _field(name: str, value: ast.expr | None, stmt: ast.AnnAssign) -> _Definition:
    default, help_text = value, ""
    if (
        isinstance(value, ast.Call)
        and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field"
    ):
        keywords = {k.arg: k.value for k in value.keywords if k.arg}
        default = keywords.get("default")
        metadata = literal(keywords["metadata"]) if "metadata" in keywords else None
        help_text = str(metadata.get("help", "")) if isinstance(metadata, dict) else ""
    spellings = (name, name.replace("_", "-")) if "_" in name else (name,)
    return _Definition(name.lower(), spellings, default, None, help_text, stmt)
