"""MosaicML platform (mcli) run YAML: ``mcli run -f mcli-1b.yaml``. The run's GPUs and their
type, the container command that launches training (read as a bash script, like a SkyPilot
``run:``), and ``parameters``: the training YAML mcli writes to
``/mnt/config/parameters.yaml`` inside the run, read here as the Composer format, located in
this file.

What the keys mean (MosaicML CLI's run schema):

- ``compute.gpus`` is every GPU of the run (mcli fills nodes of the cluster's size with
  them), ``compute.nodes`` the node count when written; ``gpu_num`` is the older spelling.
  ``compute.gpu_type`` (``a100_80gb``, ``h100_80gb``) names the GPU, ``compute.cluster`` the
  cluster, a cost tag here.
- ``command`` runs in the container: its launch (``composer train/train.py
  /mnt/config/parameters.yaml max_duration=10ba``) gives the launcher, and its ``key=value``
  overrides win over ``parameters`` when it runs them, else they go to the config it names.
  Other paths it names are in the container: after its ``cd`` into the clone of a
  ``git_repo`` integration (``cd llm-foundry/scripts``) a relative path is that repository's
  (``scripts/train/yamls/pretrain/mpt-1b.yaml``), found when the clone is of this one;
  otherwise, or when not found, the reference is unresolved, never missing.
- ``scheduling.max_duration`` is the run's time limit in hours, ``scheduling.preemptible``
  a spot-like run; an ``integrations`` entry of type ``wandb`` logs to Weights & Biases.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any

from trainlint.catalog import resolve_gpu
from trainlint.sources import composer, launch_script, shell
from trainlint.sources.base import (
    Document,
    Fact,
    Input,
    Override,
    Reference,
    Role,
    pointer,
    typos,
)
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe
from trainlint.sources.shell import embedded
from trainlint.sources.structured import KeyPath, Tree, flat
from trainlint.sources.structured.located import Locate, fact, mapping_at, table_facts, tree_locator

name = "mcli"
role: Role = "entrypoint"

PARAMETERS_PATH = "/mnt/config/parameters.yaml"  # where mcli writes ``parameters`` in the run


def _hours(value: Any) -> float | None:
    hours = n.positive_float(value)
    return None if hours is None else hours * 3600.0


TABLE: dict[KeyPath, list[JobField]] = {
    ("name",): [JobField("/name", n.to_str)],
    ("run_name",): [JobField("/name", n.to_str)],
    ("compute", "nodes"): [JobField("/resources/nodes", n.positive_int)],
    ("scheduling", "max_duration"): [JobField("/resources/time_limit_s", _hours)],
    ("scheduling", "preemptible"): [JobField("/resources/spot", n.to_bool)],
}

# The run schema's top-level keys (mcli's RunConfig and its older spellings).
KNOWN_KEYS = flat.words(
    """
name run_name image command compute scheduling integrations env_variables parameters metadata
gpu_type gpu_num cluster platform entrypoint dependent_deployment
"""
)
_RUN_KEYS = frozenset({"command", "image", "integrations", "parameters", "entrypoint"})


def recognise(file: Input) -> float:
    """A ``compute`` block (``gpus``/``gpu_type``/``cluster``) or the older top-level
    ``gpu_num``/``gpu_type``, beside a run's ``command``, ``image`` or ``integrations``."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    data = file.mapping
    if "apiVersion" in data or "kind" in data:
        return 0.0
    compute = data.get("compute")
    sized = isinstance(compute, dict) and bool({"gpus", "gpu_type", "cluster"} & set(compute))
    sized = sized or bool({"gpu_num", "gpu_type"} & set(data))
    return 0.95 if sized and _RUN_KEYS & set(data) else 0.0


def parse(file: Input) -> Document:
    tree = file.trees[0]
    plain = flat.plain(tree)
    data = plain.data if isinstance(plain.data, dict) else {}
    locate = tree_locator(plain, file.path)
    doc = Document(file.path, name, recognise(file), role)
    facts = table_facts(data, TABLE, locate) + _compute(data, locate)
    facts += _environment(data, locate) + _reporters(data, locate)
    doc.unknown_keys = typos.near_misses(tree, KNOWN_KEYS, name, file.path)
    command = data.get("command")
    parameters = _parameters(tree, file.path)
    if isinstance(command, str) and command.strip():
        doc.purpose = _purpose(command, file.path)
        run = _command(file, tree, facts)
        facts += run.facts
        doc.references = run.references
        if run.runs_parameters:
            parameters = _with_overrides(parameters, run.overrides)
        else:
            doc.overrides = run.overrides  # for the config the command names
    if parameters is not None and doc.purpose is None:
        facts += parameters.facts
        doc.unknown_keys += parameters.unknown_keys
        doc.defaults = parameters.defaults
    doc.facts = facts
    return doc


def _compute(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """The run's GPUs (``compute.gpus`` or ``gpu_num``), their type, the cluster as a tag."""
    compute = mapping_at(data, ("compute",))
    facts = []
    gpu_key: KeyPath = ("compute", "gpu_type") if "gpu_type" in compute else ("gpu_type",)
    gpu = n.to_str(compute.get("gpu_type", data.get("gpu_type")))
    spec = resolve_gpu(gpu) if gpu else None
    if spec is not None:
        facts += fact("/resources/gpu/model", spec.name, locate(gpu_key))
        facts += fact("/resources/gpu/memory_bytes", spec.memory_bytes, locate(gpu_key))
    count_key: KeyPath = ("compute", "gpus") if "gpus" in compute else ("gpu_num",)
    gpus = n.positive_int(compute.get("gpus", data.get("gpu_num")))
    where = locate(count_key)
    facts += fact("/resources/world_size", gpus, where)
    nodes = n.positive_int(compute.get("nodes"))
    if gpus and nodes and gpus % nodes == 0:
        facts += fact("/resources/gpus_per_node", gpus // nodes, where)
    cluster = n.to_str(compute.get("cluster", data.get("cluster")))
    if cluster:
        facts += fact("/tags/cluster", cluster, locate(("compute", "cluster")))
    return facts


def _environment(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """``env_variables`` as a mapping or as mcli's list of ``{key, value}``."""
    variables = data.get("env_variables")
    pairs: list[tuple[str, Any, KeyPath]]
    if isinstance(variables, dict):
        pairs = [(str(key), value, ("env_variables", str(key))) for key, value in variables.items()]
    elif isinstance(variables, list):
        pairs = [
            (str(item.get("key")), item.get("value"), ("env_variables", index))
            for index, item in enumerate(variables)
            if isinstance(item, dict) and item.get("key")
        ]
    else:
        pairs = []
    return [
        Fact(pointer("env", key), str(value), locate(path))
        for key, value, path in pairs
        if value is not None
    ]


def _reporters(data: dict[str, Any], locate: Locate) -> list[Fact]:
    integrations = data.get("integrations")
    for index, item in enumerate(integrations if isinstance(integrations, list) else []):
        if isinstance(item, dict) and item.get("integration_type") == "wandb":
            return fact("/logging/reporters", ["wandb"], locate(("integrations", index)))
    return []


def _origin(file: Input, tree: Tree) -> tuple[int, int]:
    line, column = tree.span(("command",))
    return embedded.value_origin(file.text, line, column) or (line, column)


def _purpose(command: str, path: str) -> str | None:
    """``composer eval/eval.py ...``: an evaluation run, not training."""
    script = shell.parse_script(command)
    launch = launch_script.script_launch(script, path)
    if launch is None or launch.purpose is None:
        return None
    entry = launch.entry.text if launch.entry is not None else launch.kind
    return f"runs {entry}: {launch.purpose}, not training"


@dataclass(frozen=True)
class _Command:
    """What the run's command says: its launch facts, the files it names, its ``key=value``
    overrides, and whether it trains on the ``parameters`` of this file."""

    facts: list[Fact]
    references: list[Reference]
    overrides: list[Override]
    runs_parameters: bool


def _command(file: Input, tree: Tree, facts: list[Fact]) -> _Command:
    """The command's launch facts (the run's own GPUs win) and the files it names: paths in
    the container, unresolved (never missing), but for the parameters mcli writes from this
    file and a path in a clone of this repository."""
    origin = _origin(file, tree)
    text = str(tree.data["command"])
    launched, references = embedded.script_facts(text, file.path, origin)
    declared = {f.pointer for f in facts if f.pointer.startswith("/resources/")}
    launched = [f for f in launched if f.pointer not in declared]
    runs_parameters = any(reference.path == PARAMETERS_PATH for reference in references)
    container = "a path in the mcli run's container (a cloned repository or image), not here"
    clone = _clone_folder(text, _clones(tree))
    kept = [
        replace(reference, path=_in_clone(reference.path, clone), unresolved=container)
        for reference in references
        if reference.path != PARAMETERS_PATH
    ]
    overrides = embedded.script_overrides(text, file.path, origin)
    return _Command(launched, kept, overrides, runs_parameters)


_CD = re.compile(r"^[ \t]*cd[ \t]+([\w.\-/]+)[ \t]*(?:$|&&|;)", re.MULTILINE)


def _clones(tree: Tree) -> set[str]:
    """The folders ``git_repo`` integrations clone into: their ``path``, else the repository's
    name (``mosaicml/llm-foundry`` → ``llm-foundry``)."""
    integrations = tree.data.get("integrations") if isinstance(tree.data, dict) else None
    folders = set()
    for item in integrations if isinstance(integrations, list) else []:
        if isinstance(item, dict) and item.get("integration_type") == "git_repo":
            written = item.get("path") or str(item.get("git_repo") or "")
            folders.add(posixpath.basename(str(written).rstrip("/")))
    return folders - {""}


def _clone_folder(command: str, clones: set[str]) -> str | None:
    """The folder of the cloned repository the command works in, relative to the clone
    (``cd llm-foundry/scripts`` → ``scripts``; ``cd llm-foundry`` → ``.``): the command's one
    ``cd``, when it enters a clone. None when it enters none, or moves more than once."""
    moves = _CD.findall(command)
    if len(moves) != 1:
        return None
    parts = PurePosixPath(moves[0]).parts
    if not parts or parts[0] not in clones:
        return None
    return posixpath.join(".", *parts[1:])


def _in_clone(written: str, clone: str | None) -> str:
    """A relative path the command names inside the clone, as a path of the repository that
    was cloned (found when it is this one; unresolved, never missing, when it is not)."""
    if clone is None or written.startswith(("/", "~", "$")):
        return written
    return posixpath.normpath(posixpath.join(clone, written))


def _parameters(tree: Tree, path: str) -> Document | None:
    """The embedded training YAML, read as Composer's with every position in this file."""
    data = tree.data.get("parameters") if isinstance(tree.data, dict) else None
    if not isinstance(data, dict) or not data:
        return None
    prefix = ("parameters",)
    spans = {key[1:]: span for key, span in tree.spans.items() if key[:1] == prefix}
    return composer.read_tree(Tree(data, spans), path)


def _with_overrides(parameters: Document | None, overrides: list[Override]) -> Document | None:
    """The command line's ``key=value`` win over everything the parameters' same key says
    (``max_duration=10ba`` replaces a ``max_duration: 1ep``'s epochs too)."""
    if parameters is None or not overrides:
        return parameters
    meant = [f for o in overrides for f in composer.override_facts(o.key, o.value, o.location)]
    replaced = {
        rule.pointer for o in overrides for rule in composer.TABLE.get(tuple(o.key.split(".")), [])
    }
    parameters.facts = [f for f in parameters.facts if f.pointer not in replaced] + meant
    return parameters


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "compute.gpus (or gpu_num), compute.nodes": [
            "/resources/world_size", "/resources/gpus_per_node"],
        "compute.gpu_type (or gpu_type)": ["/resources/gpu/model", "/resources/gpu/memory_bytes"],
        "compute.cluster": ["/tags/cluster"],
        "env_variables": ["/env/NAME"],
        "integrations (integration_type: wandb)": ["/logging/reporters"],
        "command (bash: composer / torchrun / python ... and key=value overrides)": [
            "/launcher/kind", "/launcher/entrypoint", "/launcher/command", "(reference)"],
        "parameters (read as the composer format)": ["(the composer format's pointers)"],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("mcli/mcli-1b.yaml", "mcli/mcli-llama3-70b-instruct-finetune.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
