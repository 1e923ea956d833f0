"""submitit (``submitit.AutoExecutor`` / ``SlurmExecutor``) scripts and the parameters of
Hydra's submitit launcher: the SLURM job a Python program submits, read with ``ast``.

``executor.update_parameters(nodes=2, gpus_per_node=8, tasks_per_node=8, timeout_min=720,
slurm_partition="learn", slurm_constraint="volta32gb", slurm_additional_parameters={...})``
is the ``#SBATCH`` header submitit writes: each parameter is read as the sbatch option it
becomes (``timeout_min`` → ``--time`` in minutes, ``tasks_per_node`` → ``--ntasks-per-node``,
``slurm_<option>`` → ``--<option>``, each ``additional_parameters`` key → ``--<key>``), through
the same SLURM reader as a batch script's headers: nodes, GPUs per node (``--gres``,
``--gpus-per-node``), the time limit, the partition, account and qos (cost tags and the job's
placement), and the constraint (placement, which the org fleet's pools map to a GPU). A
parameter left out is submitit's default: a SLURM job of 5 minutes (``SlurmExecutor``'s
``time``), a Hydra ``submitit_slurm`` launch of 60 (the plugin's ``timeout_min``), kept as the
framework's default time limit. Only literal values count, and module constants bound once
to one (``nodes=NUM_NODES`` after ``NUM_NODES = 2``); any other name or call is unknown.
``hydra.launcher`` blocks are read by the hydra format through ``launcher_facts``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from trainlint.job import Location
from trainlint.sources import python_code
from trainlint.sources.base import Document, DocumentDefault, Fact, Input, Role
from trainlint.sources.base.format import Format
from trainlint.sources.python.calls import Context
from trainlint.sources.python.literal import UNKNOWN, literal
from trainlint.sources.shell.slurm import SlurmOption, resource_facts
from trainlint.sources.structured import MAX_BYTES

name = "submitit"
role: Role = "entrypoint"

# submitit's generic parameter names (AutoExecutor, Hydra's launcher) → the sbatch option.
GENERIC = {
    "nodes": "nodes", "gpus_per_node": "gpus-per-node", "tasks_per_node": "ntasks-per-node",
    "timeout_min": "time", "name": "job-name",
}  # fmt: skip
# SlurmExecutor's own names (``slurm_`` prefixed in AutoExecutor) → the sbatch option.
SLURM = {
    "partition": "partition", "time": "time", "nodes": "nodes",
    "ntasks_per_node": "ntasks-per-node", "gpus_per_node": "gpus-per-node",
    "gpus_per_task": "gpus-per-task", "qos": "qos", "comment": "comment",
    "constraint": "constraint", "account": "account", "gres": "gres", "job_name": "job-name",
    "wckey": "wckey",
}  # fmt: skip
ADDITIONAL = frozenset({"additional_parameters", "slurm_additional_parameters"})
SLURM_DEFAULT_MINUTES = 5  # submitit/slurm/slurm.py: _make_sbatch_string(time: int = 5)
HYDRA_DEFAULT_MINUTES = 60  # hydra_submitit_launcher/config.py: BaseQueueConf.timeout_min

_IMPORT_HINT = re.compile(r"^\s*(?:import\s+submitit\b|from\s+submitit\b)", re.MULTILINE)
_CALL_HINT = re.compile(r"\.update_parameters\s*\(")

Located = tuple[str, Any, Location]
"""A parameter as written: its name, its literal value (UNKNOWN when not one), where."""


def sbatch_option(key: str, prefixed: bool) -> str | None:
    """The sbatch option a submitit parameter becomes (``prefixed``: AutoExecutor's
    ``slurm_<name>`` spelling, else SlurmExecutor's or Hydra's own names)."""
    if key in GENERIC:
        return GENERIC[key]
    if prefixed:
        return SLURM.get(key.removeprefix("slurm_")) if key.startswith("slurm_") else None
    return SLURM.get(key)


def launcher_facts(parameters: Iterable[Located], file: str, prefixed: bool) -> list[Fact]:
    """The facts of submitit parameters, read as the ``#SBATCH`` options they become; SLURM
    schedules the job (``/resources/scheduler``, at the first parameter)."""
    written = list(parameters)
    options: list[SlurmOption] = []
    for key, value, where in written:
        if key in ADDITIONAL and isinstance(value, dict):
            options += [_option(str(k).replace("_", "-"), v, where) for k, v in value.items()]
        elif (option := sbatch_option(key, prefixed)) is not None:
            options.append(_option(option, value, where))
    scheduler = [Fact("/resources/scheduler", "slurm", written[0][2])] if written else []
    facts = resource_facts([o for o in options if o.value is not None], file)
    return scheduler + _in_their_files(facts, written)


def _in_their_files(facts: list[Fact], written: list[Located]) -> list[Fact]:
    """The SLURM reader locates by line and column in one file; a Hydra launcher's keys may
    win in another file of the composition (``hydra/launcher/slurm.yaml``)."""
    files = {(where.line, where.column): where.file for *_, where in written}
    return [
        replace(f, location=f.location.model_copy(update={"file": files[at]}))
        if (at := (f.location.line, f.location.column)) in files
        else f
        for f in facts
    ]


def time_default(minutes: int, where: Location) -> DocumentDefault:
    """The time limit submitit passes when none is written."""
    return DocumentDefault("/resources/time_limit_s", minutes * 60.0, "timeout_min", where)


def _option(option: str, value: Any, where: Location) -> SlurmOption:
    text = None if value is UNKNOWN or value is None or isinstance(value, (dict, list)) else value
    shown = str(text).lower() if isinstance(text, bool) else None if text is None else str(text)
    return SlurmOption(option, shown, where.line, where.column)


def recognise(file: Input) -> float:
    """0.92 for a Python file importing submitit that sets an executor's parameters."""
    if file.suffix != "py" or len(file.text) > MAX_BYTES:
        return 0.0
    return 0.92 if _IMPORT_HINT.search(file.text) and _CALL_HINT.search(file.text) else 0.0


def parse(file: Input) -> Document:
    doc, tree, ctx = python_code.extended(file, name, recognise(file), role)
    calls = [call for call, conditional in ctx.scan.calls if not conditional and _sets(call)]
    constants = module_constants(tree)
    parameters = [p for call in calls for p in _parameters(ctx, call, constants)]
    facts = launcher_facts(parameters, file.path, prefixed=_auto(ctx))
    doc.facts = [*doc.facts, *facts]
    if calls and not any(f.pointer == "/resources/time_limit_s" for f in facts):
        doc.defaults = [*doc.defaults, time_default(SLURM_DEFAULT_MINUTES, ctx.at(calls[0]))]
    doc.launches_training = any(f.pointer.startswith("/resources/gpus") for f in facts)
    return doc


def _sets(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "update_parameters"


def _auto(ctx: Context) -> bool:
    """AutoExecutor spells SLURM parameters ``slurm_<name>``; SlurmExecutor does not."""
    names = {ctx.scan.full_name(call.func) for call, _ in ctx.scan.calls}
    return not any(n.endswith("SlurmExecutor") for n in names)


def _parameters(ctx: Context, call: ast.Call, constants: dict[str, Any]) -> list[Located]:
    """Each keyword's literal value, or the module constant it names (``nodes=NUM_NODES``)."""
    found: list[Located] = []
    for kw in call.keywords:
        if kw.arg is None:
            continue
        value = literal(kw.value)
        if value is UNKNOWN and isinstance(kw.value, ast.Name):
            value = constants.get(kw.value.id, UNKNOWN)
        found.append((kw.arg, value, ctx.at(kw)))
    return found


def module_constants(tree: ast.Module) -> dict[str, Any]:
    """Names the module binds once, at its top level, to a literal (``NUM_NODES = 2``): their
    value wherever the module reads them. A name bound twice anywhere (or by ``global``,
    ``for``, ``with``, an import) is unknown."""
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound[node.id] = bound.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name_ in node.names:
                bound[name_] = bound.get(name_, 0) + 2
    constants: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            value = literal(stmt.value)
            if isinstance(target, ast.Name) and bound.get(target.id) == 1 and value is not UNKNOWN:
                constants[target.id] = value
    return constants


def keys() -> dict[str, list[str]]:
    """Every parameter this format reads → the job-model pointers it sets (docs/formats.md)."""
    resources = ["/resources/nodes", "/resources/gpus_per_node", "/resources/world_size"]
    return {
        "update_parameters(nodes=, gpus_per_node=, tasks_per_node=)": resources,
        "update_parameters(timeout_min=) (slurm_time=)": ["/resources/time_limit_s"],
        "update_parameters(slurm_partition=, slurm_account=, slurm_qos=)": [
            "/tags/<option>", "/resources/placement/<option>"],
        "update_parameters(slurm_constraint=)": [
            "/resources/placement/constraint", "/resources/gpu/model"],
        "update_parameters(slurm_gres=, slurm_gpus_per_task=)": resources,
        "update_parameters(slurm_comment=)": ["/tags/<key>"],
        "update_parameters(name=) (slurm_job_name=)": ["/name"],
        "update_parameters(slurm_additional_parameters={option: value})": [
            "(each as its sbatch option)"],
        "hydra.launcher.* (hydra/launcher: submitit_slurm, read by the hydra format)": [
            "(the same, without the slurm_ prefix)"],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("submit.py", "run_with_submitit.py"),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
)
