"""Python training code, read through ``ast`` only: nanoGPT-style config modules, dataclass
defaults, and literal keyword arguments of TrainingArguments, TRL configs, Lightning's Trainer,
ModelCheckpoint and DeepSpeed config dicts.

Nothing is imported, compiled to bytecode, executed or evaluated: ``ast.parse`` builds a syntax
tree and only literals are values (``5 * 8`` is folded by a bounded evaluator of numbers); a
name, call or expression is unknown. Every ``.py`` file is a discovery candidate, so a regular
expression over the text decides first whether a file is worth parsing at all.
"""

from __future__ import annotations

import ast
import itertools
import re
import warnings
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from trainlint.errors import SourceError
from trainlint.job import Location, UnknownKey
from trainlint.sources import deepspeed
from trainlint.sources.base import (
    Document,
    DocumentDefault,
    Fact,
    Input,
    ProgramArgument,
    Reference,
    Role,
    typos,
)
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe, facts_for, facts_from_table
from trainlint.sources.python import tables as t
from trainlint.sources.python.arguments import script_arguments
from trainlint.sources.python.calls import Context, Found, read_calls
from trainlint.sources.python.literal import UNKNOWN, Positions, dict_tree, literal
from trainlint.sources.python.walk import scan
from trainlint.sources.structured import MAX_BYTES, MAX_NODES, check_size

name = "python"
role: Role = "config"

_CALLS = t.HF_ARGUMENTS | t.HF_TRAINERS | set(t.STRATEGY_CALLS) | {"Fabric", "ModelCheckpoint"}
_CALL_WORDS = ("Trainer", "Arguments", "Config", "Checkpoint", "Strategy", "Fabric", "initialize")
_CALL_HINT = re.compile(rf"\b(?:{'|'.join(sorted(_CALLS))}|deepspeed\.initialize)\s*\(")
_NAME_HINT = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE)
_DS_HINT = re.compile(r"[\"'](?:zero_optimization|train_micro_batch_size_per_gpu)[\"']")
_DS_KEYS = frozenset(str(path[0]) for path in deepspeed.TABLE if path)
_PYTEST_MODULE = re.compile(r"^(?:test_\w*|\w+_test|conftest)\.py$")
# nanoGPT's bench.py: the model's globals, timed for a few steps. Python only: a Kubernetes
# "tensorflow-benchmarks" job does train.
_BENCHMARK_MODULE = re.compile(r"^bench(?:mark)?(?:_\w*)?\.py$")
_PURE_CONFIG = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom, ast.Pass)


@dataclass(frozen=True)
class _Reading:
    confidence: float = 0.0
    facts: list[Fact] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    unknown_keys: list[UnknownKey] = field(default_factory=list)
    purpose: str | None = None
    defaults: list[DocumentDefault] = field(default_factory=list)
    arguments: dict[str, ProgramArgument] = field(default_factory=dict)


# A script defining command-line arguments (argparse, click, typer, HfArgumentParser).
_ARGUMENT_HINT = re.compile(r"\.add_argument\(|click\.option\(|\.Option\(|HfArgumentParser\(")
# Confidence of a script read only for its argument definitions: below any training reading.
_ARGUMENTS_ONLY = 0.3


def recognise(file: Input) -> float:
    """0.9 for a known constructor, 0.85 for a DeepSpeed dict, 0.8 for a config module of
    known names, 0.7 for a dataclass of them, 0 for other Python. Raises SourceError for a
    file that cannot be parsed only when its text looks like training code."""
    return _read(file.path, file.text).confidence if file.suffix == "py" else 0.0


def parse(file: Input) -> Document:
    reading = _read(file.path, file.text)
    doc = Document(file.path, name, reading.confidence, role)
    doc.facts, doc.references = list(reading.facts), list(reading.references)
    doc.unknown_keys = list(reading.unknown_keys)
    doc.purpose = reading.purpose
    doc.defaults, doc.arguments = list(reading.defaults), dict(reading.arguments)
    return doc


def extended(
    file: Input, format_name: str, confidence: float, role_: Role
) -> tuple[Document, ast.Module, Context]:
    """The start of a format that reads more of a Python file (Ray Train, submitit): this
    format's reading of it (DeepSpeed dicts, TrainingArguments, ``os.environ``) under the
    other format's name, its syntax tree and the scan of its calls."""
    check_size(file.text)
    tree = _parse(file.text)
    doc = Document(file.path, format_name, confidence, role_)
    if recognise(file) > 0:
        doc = replace(parse(file), format=format_name, confidence=confidence, role=role_)
    return doc, tree, Context(file.path, Positions(file.text), scan(tree))


def _looks_like_training(text: str) -> bool:
    """Cheap text hints, so most Python files of a repo are never parsed."""
    if any(word in text for word in _CALL_WORDS) and _CALL_HINT.search(text):
        return True  # ``in`` first: far faster than the regular expression on most files
    if _DS_HINT.search(text):
        return True
    names = {match.group(1) for match in _NAME_HINT.finditer(text)} & t.KNOWN_NAMES
    return len(names) >= 2 and bool(names & t.SPECIFIC_NAMES)


@lru_cache(maxsize=8)
def _read(path: str, text: str) -> _Reading:
    """The file's facts (cached: the registry calls recognise, then parse). A syntax error is a
    SourceError only in a file whose text looks like training code."""
    if not _looks_like_training(text[:MAX_BYTES]):
        return _arguments_only(path, text)
    check_size(text)
    tree = _parse(text)
    ctx = Context(path, Positions(text), scan(tree))
    defaults, arguments = script_arguments(ctx, tree)
    found = read_calls(ctx)
    ds_facts = _deepspeed_facts(ctx, found)
    module_facts, unknown = _module_facts(ctx, tree, found)
    class_facts = _dataclass_facts(ctx, found)
    if found.confidence <= 0:
        return _arguments_reading(defaults, arguments)
    facts = ds_facts + class_facts + module_facts + found.facts  # later wins: calls last
    facts += _feature_facts(ctx, tree)
    only_classes = bool(class_facts) and not (ds_facts or module_facts or found.facts)
    purpose = _not_a_run(path, tree, only_classes and _extends_a_class(ctx))
    return _Reading(
        found.confidence, facts, found.references, unknown, purpose, defaults, arguments
    )


def _arguments_only(path: str, text: str) -> _Reading:
    """A script that is no training config but may define the arguments of an entry script
    (``argparse``): read for them alone, never a TL901 (it is not trainlint's file)."""
    if not _ARGUMENT_HINT.search(text[:MAX_BYTES]) or len(text) > MAX_BYTES:
        return _Reading()
    try:
        tree = _parse(text)
    except SourceError:
        return _Reading()
    ctx = Context(path, Positions(text), scan(tree))
    return _arguments_reading(*script_arguments(ctx, tree))


def _arguments_reading(
    defaults: list[DocumentDefault], arguments: dict[str, ProgramArgument]
) -> _Reading:
    if not arguments:
        return _Reading()
    purpose = "defines a program's command-line arguments (read when a launch runs it)"
    return _Reading(_ARGUMENTS_ONLY, purpose=purpose, defaults=defaults, arguments=arguments)


def _not_a_run(path: str, tree: ast.Module, library_classes: bool) -> str | None:
    """Why a Python file that reads like training code runs no training itself: a pytest
    module (``tests/test_sft_trainer.py`` builds tiny trainers to test a library), or a module
    that only extends argument classes (``class GRPOConfig(TrainingArguments)`` in
    ``trl/trainer/grpo_config.py``: a library's defaults, which its users' runs override) and
    runs nothing, or a benchmark script (``bench.py``). A project's own ``@dataclass class
    TrainConfig:`` of defaults stays a run's config. Each is still read when a job references
    it."""
    if _PYTEST_MODULE.match(path.rsplit("/", 1)[-1]):
        return "tests (a pytest module), not a training run"
    if _BENCHMARK_MODULE.match(path.rsplit("/", 1)[-1]):
        return "a benchmark (a short timed loop of the model), not a training run"
    if library_classes and not any(map(_runs_something, tree.body)):
        return "extends argument classes and runs nothing (library code), not a training run"
    return None


def _extends_a_class(ctx: Context) -> bool:
    """Every dataclass holding settings derives from another class (a library's own
    arguments type, ``GRPOConfig(_BaseConfig)``), not from nothing."""
    holding = [c for c in ctx.scan.dataclasses if set(_assigned(c.body)) & t.KNOWN_NAMES]
    return bool(holding) and all(cls.bases for cls in holding)


def _runs_something(stmt: ast.stmt) -> bool:
    """A top-level statement that does work when the module runs: a call, a loop, a
    ``__main__`` guard; imports, definitions and plain assignments do not."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef)):
        return False
    if isinstance(stmt, (ast.AsyncFunctionDef, ast.Pass)) or _is_docstring(stmt):
        return False
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return False  # ``logger = logging.getLogger(__name__)`` only prepares
    if isinstance(stmt, ast.If):  # ``if TYPE_CHECKING:`` imports; a __main__ guard runs
        return any(map(_runs_something, stmt.body + stmt.orelse)) or "__main__" in ast.dump(
            stmt.test
        )
    if isinstance(stmt, ast.Try):
        return any(map(_runs_something, stmt.body))
    return True


def _feature_facts(ctx: Context, tree: ast.Module) -> list[Fact]:
    """Experimental kernels the file imports (``t.FEATURE_IMPORTS``) or builds at run time
    (``t.FEATURE_CALLS``) as ``/features/<name>``; an import inside ``try: ... except
    ImportError:`` has its fallback in that handler (``/fallbacks/<name>``)."""
    guarded = _guarded_imports(tree)
    facts: list[Fact] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
        else:
            continue
        for module in modules:
            feature = t.FEATURE_IMPORTS.get(module.split(".")[0])
            if feature is None:
                continue
            facts.append(Fact(f"/features/{feature}", "kernel", ctx.at(node)))
            if id(node) in guarded:
                handler = guarded[id(node)]
                facts.append(Fact(f"/fallbacks/{feature}", "except ImportError", ctx.at(handler)))
    for call, _ in ctx.scan.calls:
        feature = t.FEATURE_CALLS.get(ctx.scan.full_name(call.func))
        if feature is not None:
            facts.append(Fact(f"/features/{feature}", "extension", ctx.at(call)))
    return facts


def _guarded_imports(tree: ast.Module) -> dict[int, ast.ExceptHandler]:
    """Imports in the body of a ``try`` whose handler catches ImportError → that handler."""
    guarded: dict[int, ast.ExceptHandler] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        handler = next((h for h in node.handlers if _catches_import_error(h)), None)
        if handler is None:
            continue
        for stmt in node.body:
            for inner in ast.walk(stmt):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    guarded[id(inner)] = handler
    return guarded


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(name, ast.Name) and name.id in t.IMPORT_ERRORS for name in names)


def _parse(text: str) -> ast.Module:
    try:
        with warnings.catch_warnings():  # invalid escapes and the like are not our findings
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except SyntaxError as exc:
        raise SourceError(f"invalid Python: {exc.msg}", exc.lineno or 1, exc.offset or 1) from None
    except (ValueError, RecursionError, MemoryError):
        raise SourceError("Python source too deeply nested or not text") from None
    if sum(1 for _ in itertools.islice(ast.walk(tree), MAX_NODES + 1)) > MAX_NODES:
        raise SourceError(f"Python file has more than {MAX_NODES} syntax nodes")
    return tree


def _assigned(body: list[ast.stmt]) -> dict[str, tuple[Any, ast.Name]]:
    """Name → (literal value or UNKNOWN, target) of simple assignments; the last one wins and
    ``x += 1`` makes ``x`` unknown."""
    values: dict[str, tuple[Any, ast.Name]] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = (literal(stmt.value), target)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.value is not None:
                values[stmt.target.id] = (literal(_field_default(stmt.value)), stmt.target)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            values[stmt.target.id] = (UNKNOWN, stmt.target)
    return values


def override_facts(key: str, value: Any, where: Location) -> list[Fact]:
    """nanoGPT's configurator: ``--batch_size=32 --compile=False`` replace module globals."""
    return facts_for(t.OWN_NAMES.get(key, []), value, where)


def _field_default(value: ast.expr) -> ast.expr:
    """``field(default=2000)`` / ``dataclasses.field(default=...)`` → its default expression."""
    func = value.func if isinstance(value, ast.Call) else None
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if isinstance(value, ast.Call) and name == "field":
        return next((k.value for k in value.keywords if k.arg == "default"), value)
    return value


def _name_facts(
    ctx: Context, values: dict[str, tuple[Any, ast.Name]], table: dict[str, list[JobField]]
) -> list[Fact]:
    facts: list[Fact] = []
    for key, (value, target) in values.items():
        if key in table and value is not UNKNOWN:
            facts += facts_for(table[key], value, ctx.at(target))
    return facts


def _module_facts(
    ctx: Context, tree: ast.Module, found: Found
) -> tuple[list[Fact], list[UnknownKey]]:
    """Module-level literals. A nanoGPT module (its marker names) is read with nanoGPT's
    meanings, and only its names: a name train.py does not define is silently ignored there,
    so it is reported as a near-miss when it is one, never read."""
    values = _assigned(tree.body)
    known = set(values) & t.KNOWN_NAMES
    if len(known) >= 2 and known & t.SPECIFIC_NAMES:
        found.recognised(0.8)
    if not set(values) & t.NANOGPT_MARKERS:
        return _name_facts(ctx, values, t.NAMES), []
    table = {k: t.NAMES[k] for k in t.NANOGPT_GLOBALS if k in t.NAMES}
    table.pop("gradient_accumulation_steps", None)
    facts = _name_facts(ctx, values, table) + _nanogpt_facts(ctx, values)
    unknown: list[UnknownKey] = []
    if all(isinstance(stmt, _PURE_CONFIG) or _is_docstring(stmt) for stmt in tree.body):
        unknown = _near_misses(ctx, values)
    return facts, unknown


def _nanogpt_facts(ctx: Context, values: dict[str, tuple[Any, ast.Name]]) -> list[Fact]:
    """nanoGPT's ``gradient_accumulation_steps`` counts micro-batches across all ranks (train.py
    divides it by the world size), so with ``batch_size`` it states the global batch; and
    train.py saves ``ckpt.pt`` at every ``eval_interval`` unless ``always_save_checkpoint`` is
    False (then only when the validation loss improves)."""
    facts: list[Fact] = []
    accum, accum_target = values.get("gradient_accumulation_steps", (UNKNOWN, None))
    micro = values.get("batch_size", (UNKNOWN, None))[0]
    if accum_target is not None and _positive(accum) and _positive(micro):
        facts.append(Fact("/training/global_batch_size", int(accum * micro), ctx.at(accum_target)))
    interval, interval_target = values.get("eval_interval", (UNKNOWN, None))
    always = values.get("always_save_checkpoint", (True, None))[0]
    if interval_target is not None and always is not False:
        fields = [JobField("/checkpoint/every_steps", n.positive_float)]
        facts += facts_for(fields, interval, ctx.at(interval_target))
    return facts + _nanogpt_vocab(ctx, values)


def _nanogpt_vocab(ctx: Context, values: dict[str, tuple[Any, ast.Name]]) -> list[Fact]:
    """nanoGPT takes the vocabulary from ``data/<dataset>/meta.pkl`` (the character-level
    sets) or else GPT-2's padded 50304 (train.py, ``init_from = 'scratch'``); no config global
    sets it. So a scratch model over a non-character dataset gets 50304, a default (``/model/
    source``), located at the dimension it sizes; ``resume`` and ``gpt2*`` models say nothing."""
    dims = [values[k][1] for k in ("n_embd", "n_layer") if k in values]
    init = values.get("init_from", ("scratch", None))[0]
    dataset = values.get("dataset", ("", None))[0]
    if not dims or "vocab_size" in values or init != "scratch":
        return []
    if not isinstance(dataset, str) or "char" in dataset.lower():
        return []
    where = ctx.at(dims[0])
    return [Fact("/model/vocab", t.NANOGPT_VOCAB, where), Fact("/model/source", "default", where)]


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _near_misses(ctx: Context, values: dict[str, tuple[Any, ast.Name]]) -> list[UnknownKey]:
    found = []
    for key, (_, target) in values.items():
        suggestion = typos.suggest(key, t.NANOGPT_GLOBALS)
        if suggestion is not None:
            where = ctx.at(target)
            found.append(UnknownKey(file=ctx.path, line=where.line, column=where.column,
                                    key=key, format=name, suggestion=suggestion))  # fmt: skip
    return found


def _dataclass_facts(ctx: Context, found: Found) -> list[Fact]:
    """Field defaults of dataclasses with two or more known names (``TrainConfig``,
    modded-nanogpt's ``Hyperparameters``, whose plain class attributes count too)."""
    facts: list[Fact] = []
    for cls in ctx.scan.dataclasses:
        values = _assigned(cls.body)
        if len(set(values) & t.KNOWN_NAMES) >= 2:
            found.recognised(0.7)
            facts += _name_facts(ctx, values, t.NAMES)
    return facts


def _deepspeed_facts(ctx: Context, found: Found) -> list[Fact]:
    """DeepSpeed config dicts, read through deepspeed.TABLE: a dict passed as a DeepSpeed
    config (``deepspeed=``, ``config=`` of ``deepspeed.initialize``), one named like one
    (``ds_config``) holding a DeepSpeed key, or any dict holding ZeRO or micro-batch keys."""
    named: dict[str, tuple[ast.Dict, ast.Name]] = {}
    for assign, _ in ctx.scan.assigns:
        for target in assign.targets:
            if isinstance(target, ast.Name) and isinstance(assign.value, ast.Dict):
                named[target.id] = (assign.value, target)
    passed = {value.id for value, _, _ in found.ds_configs if isinstance(value, ast.Name)}
    candidates: list[tuple[ast.Dict, ast.AST, bool]] = [
        (value, target, key in passed or key.lower() in t.DS_NAMES)
        for key, (value, target) in named.items()
    ]
    candidates += [
        (v, anchor, True) for v, anchor, _ in found.ds_configs if isinstance(v, ast.Dict)
    ]
    facts: list[Fact] = []
    seen: set[int] = set()
    for node, anchor, forced in candidates:
        if id(node) in seen:
            continue
        seen.add(id(node))
        tree = dict_tree(node, ctx.positions.of(anchor), ctx.positions)
        keys = set(tree.data)
        if (forced and (keys & _DS_KEYS or not keys)) or keys & t.DS_DISTINCTIVE:
            facts += facts_from_table(tree, deepspeed.TABLE, ctx.path)
            found.recognised(0.85)
    return facts


def keys() -> dict[str, list[str]]:
    """Every name and keyword this format reads → the job-model pointers it sets."""
    described = describe(
        {(key,): fields for key, fields in t.OWN_NAMES.items()}
    )  # variables, fields
    described["TrainingArguments/SFTConfig/DPOConfig/...(keyword=literal), module variables "
              "and dataclass fields of those names"] = ["as hf-trainer keys"]  # fmt: skip
    described["nanoGPT gradient_accumulation_steps * batch_size"] = ["/training/global_batch_size"]
    described["nanoGPT scratch model (n_embd/n_layer, no *_char dataset): vocab 50304"] = [
        "/model/vocab", "/model/source (default)"]  # fmt: skip
    described["nanoGPT eval_interval (unless always_save_checkpoint = False)"] = [
        "/checkpoint/every_steps"
    ]
    for call, table in (("L.Trainer", t.LIGHTNING), ("ModelCheckpoint", t.MODEL_CHECKPOINT),
                        ("DeepSpeedStrategy", t.DEEPSPEED_STRATEGY)):  # fmt: skip
        for key, fields in table.items():
            described[f"{call}({key}=)"] = [job_field.pointer for job_field in fields]
    described |= {
        "entry script's add_argument / click.option / typer.Option / HfArgumentParser "
        "dataclass fields (--batch-size unless its help spans GPUs, --epochs, --workers, "
        "--print-freq, --save-freq, --amp whose help names bf16/fp16, --zero-stage, ...)": [
            "defaults at the definition; a launch line's flag for them when no format reads it"],
        "DeepSpeed config dict (ds_config = {...}, deepspeed=, config=)": ["as deepspeed keys"],
        "TrainingArguments(deepspeed='ds.json'), deepspeed.initialize(config='ds.json')": [
            "(reference)"],
        "torch.compile(...)": ["/training/compile"],
        "import flash_attn / liger_kernel / unsloth / transformer_engine": [
            "/features/<name>", "/fallbacks/<name> (inside try/except ImportError)"],
        "torch.utils.cpp_extension.load(...), load_inline(...)": ["/features/custom-cuda"],
        "torch.autograd.set_detect_anomaly(True), detect_anomaly()": [
            "/logging/anomaly_detection"],
        "torch.profiler.profile(schedule=...), SimpleProfiler/AdvancedProfiler/PyTorchProfiler()": [
            "/logging/profiler/enabled", "/logging/profiler/scheduled"],
        "os.environ['NAME'] = '...', os.environ.setdefault/update": ["/env/NAME"],
    }  # fmt: skip
    return described


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("config/train_gpt2.py", "train.py", "sft.py"),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    overrides=override_facts,
)
