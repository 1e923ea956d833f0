"""Hydra / OmegaConf configs (lightning-hydra-template style): ``defaults:`` lists of config
groups, ``_target_`` objects and ``${...}`` interpolation, composed from the repo's files.

A file is read as Hydra composes it: its defaults tree is expanded from the files next to it,
the layers are merged (later wins, ``_self_`` where listed), interpolations that name keys of
the merged config are resolved and resolvers are left unknown; the merged view is then read
with the Lightning table. Each fact points at the file and line of the key that won. Group
files are References, so they join the root's job; a composing config (the primary one that
``@hydra.main`` loads, an experiment, a group file with its own defaults) has role
"entrypoint", so its merged view wins over the partial view of each file it pulls in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainlint.job import Location
from trainlint.sources import lightning, submitit
from trainlint.sources.base import (
    Document,
    DocumentDefault,
    Fact,
    Input,
    Reference,
    Role,
    top_of,
)
from trainlint.sources.base.format import Format
from trainlint.sources.base.typos import near_misses
from trainlint.sources.python.literal import UNKNOWN
from trainlint.sources.structured import KeyPath, Tree
from trainlint.sources.structured.hydra_defaults import (
    Composer,
    Composition,
    Entry,
    Root,
    config_tree,
    entries,
    header_package,
)
from trainlint.sources.structured.located import Locate
from trainlint.sources.structured.omegaconf import Layer, resolve

name = "hydra"
role: Role = "config"

_PRIMARY_KEYS = {"trainer", "model", "data", "callbacks"}


def recognise(file: Input) -> float:
    """Hydra's own syntax: a defaults list, a ``# @package`` header, ``_target_`` objects or
    ``${hydra:...}``. NeMo configs (``exp_manager``) are Hydra too but have their own format."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    data = file.mapping
    if "exp_manager" in data:
        return 0.3
    if isinstance(data.get("defaults"), list) or header_package(file.text):
        return 0.9
    if _has_target(data, 0):
        return 0.85
    if "${hydra:" in file.text:
        return 0.8
    return 0.35 if "${oc." in file.text else 0.0


def _has_target(data: Any, depth: int) -> bool:
    if not isinstance(data, dict) or depth > 2:
        return False
    return "_target_" in data or any(_has_target(v, depth + 1) for v in data.values())


@dataclass(frozen=True)
class Composed:
    """A Hydra config as Hydra composes it: the merged, resolved view and where each key won.
    Formats of Hydra apps (verl) read it with their own tables."""

    composition: Composition
    merged: Any
    root: Root
    path: Path
    tree: Tree
    package: KeyPath
    group: tuple[str, ...]

    def locate(self) -> Locate:
        return locator(self.composition.merged)


def composed(file: Input) -> Composed:
    """The file's composed view; a file of comments only (``# @package _global_``) is an
    empty config, one that is not a mapping a SourceError."""
    tree = config_tree(file.trees)
    path = Path(file.path)
    root, group = placement(path, tree.data)
    package = _own_package(file.text, group)
    composition = compose(root, path, tree, group, package)
    merged = resolve(composition.merged.data)
    return Composed(composition, merged, root, path, tree, package, group)


def document(file: Input, view: Composed, format_name: str, score: float) -> Document:
    """A Document of the composed view, with its references and its role, but no facts: each
    format reads the merged view in its own terms."""
    role_ = _role(view.composition, view.group, file.text)
    doc = Document(file.path, format_name, score, role_)
    doc.references = _references(view.composition, view.root, view.path, view.tree, file.path)
    return doc


def parse(file: Input) -> Document:
    """The composed view read with the Lightning table."""
    view = composed(file)
    doc = document(file, view, name, recognise(file))
    doc.facts = lightning.read(view.merged, view.locate())
    launched, defaults = launcher(view, file.path)
    doc.facts += launched
    doc.defaults += defaults
    if launched and _launcher_only(view):
        doc.purpose = "Hydra launcher settings (the SLURM job of each run that selects them)"
    trainer_path: KeyPath = () if view.package == ("trainer",) else ("trainer",)
    if lightning.trainer_block(view.merged) or view.package == ("trainer",):  # another
        doc.unknown_keys = near_misses(  # program's ``trainer:`` (verl's) has other keys
            view.tree, lightning.TRAINER_KEYS, name, file.path, trainer_path
        )
    return doc


def launcher(view: Composed, file: str) -> tuple[list[Fact], list[DocumentDefault]]:
    """The SLURM job Hydra's submitit launcher submits: ``hydra.launcher.*`` (or, in a
    ``hydra/launcher/<name>.yaml`` group file, its own keys) read as the sbatch options they
    become, when the launcher is ``submitit_slurm`` (selected anywhere in the composition,
    also by a repo launcher file's own ``- submitit_slurm``, or named by its SlurmLauncher
    ``_target_``); without ``timeout_min``, the plugin's 60 minutes."""
    chosen = any(option == "submitit_slurm" for _, option, _ in view.composition.selected)
    block, at = _launcher_block(view, _in_launcher_group(view))
    if not (chosen or _slurm_block(block)):
        return [], []
    locate = view.locate()
    written = [(str(key), _plain(value), at(str(key), locate)) for key, value in block.items()]
    facts = submitit.launcher_facts(written, file, prefixed=False)
    where = written[0][2] if written else top_of(file)
    if not facts:
        facts = [Fact("/resources/scheduler", "slurm", where)]
    if "timeout_min" in block:
        return facts, []
    return facts, [submitit.time_default(submitit.HYDRA_DEFAULT_MINUTES, where)]


_SUBMITIT_SLURM = "hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
# The submitit launcher's own names (BaseQueueConf) and those only its SLURM queue has.
_SUBMITIT_KEYS = frozenset({"timeout_min", "gpus_per_node", "tasks_per_node", "mem_gb",
                            "submitit_folder", "cpus_per_task"})  # fmt: skip
_SLURM_KEYS = frozenset({"partition", "account", "qos", "constraint", "gres",
                         "additional_parameters"})  # fmt: skip


def _slurm_block(block: dict[Any, Any]) -> bool:
    """Its SlurmLauncher ``_target_``, or, in a repo launcher file whose own ``- submitit_slurm``
    the composition does not record, submitit's parameter names beside SLURM-only ones (its
    LocalLauncher, or another plugin, is not SLURM)."""
    target = str(block.get("_target_", ""))
    if target:
        return _SUBMITIT_SLURM in target
    return bool(_SUBMITIT_KEYS & set(block)) and bool(_SLURM_KEYS & set(block))


_At = Callable[[str, Locate], Location]


def _launcher_only(view: Composed) -> bool:
    """A launcher config alone (``hydra/launcher/slurm.yaml``, or a file of nothing but
    ``hydra:`` settings): the resources of the runs it is selected for, no run itself, as a
    lone DeepSpeed or accelerate config is none."""
    data = view.tree.data if isinstance(view.tree.data, dict) else {}
    return _in_launcher_group(view) or set(data) <= {"hydra", "defaults"}


def _in_launcher_group(view: Composed) -> bool:
    """This file is a ``hydra/launcher/<name>.yaml`` group file: its keys are the launcher's."""
    parts = view.path.parts
    own = isinstance(view.tree.data, dict) and "hydra" not in view.tree.data  # not _global_
    return own and len(parts) >= 3 and parts[-3:-1] == ("hydra", "launcher")


def _launcher_block(view: Composed, own: bool) -> tuple[dict[Any, Any], _At]:
    """The launcher's settings and how to locate each: the file's own keys in a launcher
    group file, else the merged ``hydra.launcher``."""
    if own:
        data = view.tree.data if isinstance(view.tree.data, dict) else {}

        def own_key(key: str, locate: Locate) -> Location:
            line, column = view.tree.span((key,))
            return Location(file=str(view.path), line=line, column=column)

        return dict(data), own_key
    hydra = view.merged.get("hydra") if isinstance(view.merged, dict) else None
    block = hydra.get("launcher") if isinstance(hydra, dict) else None

    def merged_key(key: str, locate: Locate) -> Location:
        return locate(("hydra", "launcher", key))

    return (dict(block) if isinstance(block, dict) else {}), merged_key


def _plain(value: Any) -> Any:
    """A launcher value Hydra fills in at run time (``${hydra.job.name}``) is unknown."""
    if isinstance(value, (bool, int, float, dict)):
        return value
    return value if isinstance(value, str) and "${" not in value else UNKNOWN


def _role(composition: Composition, group: tuple[str, ...], text: str) -> Role:
    """A file whose view is a composition (a primary config, an ``@package _global_``
    experiment, or any config that pulls in others) is ranked above the files it pulls in:
    a job holds their partial views too, and the composed one must win."""
    composes = any(target is not None for _, _, target in composition.selected)
    return "entrypoint" if composes or not group or header_package(text) == "_global_" else role


def compose(root: Root, path: Path, tree: Tree, group: tuple[str, ...],
            package: KeyPath) -> Composition:  # fmt: skip
    """Expand until the overrides are stable: an ``override /g: x`` found anywhere changes the
    choice of the regular ``g`` entry; one with no regular entry (an experiment file read on
    its own) is a plain choice. Three passes settle every tree an override can reshape."""
    overrides: dict[tuple[str, ...], tuple[str, ...]] = {}
    promoted: set[tuple[str, ...]] = set()
    composer = Composer(root, overrides, promoted)
    for _ in range(3):
        composer = Composer(root, overrides, promoted)
        composer.expand(path, tree, group, package, (path.resolve(),))
        found = composer.result.overrides_found
        regular = composer.result.regular
        new_overrides = {g: o for g, o in found.items() if g in regular}
        new_promoted = promoted | {g for g in found if g not in regular}
        if (new_overrides, new_promoted) == (overrides, promoted):
            break
        overrides, promoted = new_overrides, new_promoted
    return composer.result


def placement(path: Path, data: Any) -> tuple[Root, tuple[str, ...]]:
    """The config root and this file's group: a primary config when its group entries resolve
    from its own folder, else a group file one folder below the root (``trainer/gpu.yaml``)."""
    flat = "__" in path.stem
    segments = path.stem.split("__") if flat else [path.stem]
    primary = Root(path.parent, tuple(segments[:-1]), flat)
    if flat:  # "__" in the stem: at least two segments
        grouped, group = Root(path.parent, tuple(segments[:-2]), flat), (segments[-2],)
    elif path.parent.name:
        grouped, group = Root(path.parent.parent, (), flat), (path.parent.name,)
    else:
        return primary, ()
    as_primary, as_group = _resolving(primary, data, ()), _resolving(grouped, data, group)
    if as_primary != as_group:
        return (primary, ()) if as_primary > as_group else (grouped, group)
    # Nothing resolves either way: a Trainer block is a primary config's, anything else a group
    # file's (experiment files are ``@package _global_`` too, so the header cannot decide).
    return (primary, ()) if isinstance(data.get("trainer"), dict) else (grouped, group)


def _resolving(root: Root, data: Any, group: tuple[str, ...]) -> int:
    """How many selections resolve from ``root``. Bare names resolve either way and do not
    count; for a group reading only ``/absolute`` and ``override`` entries count, because
    relative group entries mark a primary config (and in flattened names ``a__b__c`` both
    readings of a relative entry name the same file)."""
    count = 0
    for entry in entries(data, group):
        if entry.group is None or entry.bare or (group and entry.relative and not entry.override):
            continue
        count += sum(root.find(entry.group, option) is not None for option in entry.options)
    return count


def _own_package(text: str, group: tuple[str, ...]) -> KeyPath:
    header = header_package(text)
    if header in (None, "_group_"):
        return group
    if header == "_global_":
        return ()
    assert header is not None
    return tuple(p for p in header.split(".") if p and p != "_global_")


def locator(merged: Layer) -> Locate:
    """Where the winning layer set a key (or its closest located ancestor)."""

    def locate(path: KeyPath) -> Location:
        while path and path not in merged.where:
            path = path[:-1]
        return merged.where.get(path) or Location(file="<unknown>", line=1, column=1)

    return locate


def _references(
    composition: Composition, root: Root, path: Path, tree: Tree, shown: str
) -> list[Reference]:
    """This file's own selections (after overrides): found or missing, each at its entry's
    line; missing optional entries and Hydra's own plugin groups (``hydra/...``) are skipped."""
    references = []
    searched = _search_path(tree)
    for entry, option, target in composition.selected:
        if target is None and _tolerated(entry):
            continue
        assert entry.group is not None
        line, column = tree.span(("defaults", entry.index))
        written = root.written(entry.group, option, path)
        where = Location(file=shown, line=line, column=column)
        unresolved = searched if target is None else None
        references.append(Reference(written, where, "member", unresolved=unresolved))
    return references


def _search_path(tree: Tree) -> str | None:
    """Why a missing defaults entry may still be found: ``hydra.searchpath`` adds folders (or
    packages) that trainlint does not search."""
    data = tree.data if isinstance(tree.data, dict) else {}
    hydra = data.get("hydra")
    paths = hydra.get("searchpath") if isinstance(hydra, dict) else None
    if not paths:
        return None
    return "Hydra may find it on the config's hydra.searchpath"


def _tolerated(entry: Entry) -> bool:
    return entry.optional or (entry.group or ("",))[0] == "hydra"


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    launcher = {
        f"hydra.launcher.{key} (hydra/launcher: submitit_slurm)": pointers
        for key, pointers in _LAUNCHER_KEYS.items()
    }
    return {"defaults": ["(reference)"], **lightning.keys(), **launcher}


_LAUNCHER_KEYS = {
    "nodes, gpus_per_node, gres, gpus_per_task": [
        "/resources/nodes", "/resources/gpus_per_node", "/resources/world_size"],
    "timeout_min": ["/resources/time_limit_s"],
    "partition, account, qos": ["/tags/<key>", "/resources/placement/<key>"],
    "constraint": ["/resources/placement/constraint", "/resources/gpu/model"],
    "comment": ["/tags/<key>"],
    "additional_parameters": ["(each as its sbatch option)"],
}  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("configs/train.yaml", "configs/trainer/gpu.yaml", "conf/config.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    overrides=lightning.override_facts,  # ``trainer.devices=8`` reads as the merged config
)
