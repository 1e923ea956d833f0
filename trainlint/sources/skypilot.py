"""SkyPilot task YAML: accelerators, nodes, spot, labels, envs, and the ``run:`` script's launch.

``resources.accelerators`` (``H100:8``, ``{A100: 1, V100: 1}``, ``[L4:1, H100:1]``, or the first
``any_of``/``ordered`` alternative that names one: SkyPilot may pick any of them, and the first
is the one the author listed first) gives the GPU model and count per node. The ``run:`` block
is read as bash with the task's own ``$SKYPILOT_NUM_GPUS_PER_NODE``/``$SKYPILOT_NUM_NODES`` and
``envs`` in scope, so its ``torchrun``/``accelerate launch`` line gives launcher facts; the
files it names are container paths, mapped back to local ones through ``file_mounts``.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import Any

from trainlint.catalog import resolve_gpu
from trainlint.job import Location
from trainlint.sources.base import Document, Fact, Input, Override, Reference, Role, pointer, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe, facts_from_table
from trainlint.sources.shell import embedded
from trainlint.sources.structured import KeyPath, Tree

name = "skypilot"
role: Role = "entrypoint"

TABLE: dict[KeyPath, list[JobField]] = {
    ("name",): [JobField("/name", n.to_str)],
    ("num_nodes",): [JobField("/resources/nodes", n.positive_int)],
    ("resources", "use_spot"): [JobField("/resources/spot", n.to_bool)],
    # Where the task runs, for the org fleet's pools (``trainlint.fleet``).
    ("resources", "cloud"): [JobField("/resources/placement/cloud", n.to_str)],
    ("resources", "region"): [JobField("/resources/placement/region", n.to_str)],
    ("resources", "instance_type"): [JobField("/resources/placement/instance_type", n.to_str)],
}

TOP_KEYS = frozenset({
    "name", "workdir", "num_nodes", "resources", "envs", "secrets", "volumes", "file_mounts",
    "setup", "run", "config", "service", "inputs", "outputs", "event_callback", "pool",
    "experimental",
})  # fmt: skip
RESOURCE_KEYS = frozenset({
    "infra", "cloud", "region", "zone", "accelerators", "accelerator_args", "cpus", "memory",
    "instance_type", "use_spot", "job_recovery", "spot_recovery", "disk_size", "disk_tier",
    "network_tier", "ports", "labels", "any_of", "ordered", "image_id", "autostop", "priority",
    "volumes", "_docker_login_config", "_is_image_managed", "_requires_fuse",
    "_cluster_config_overrides",
})  # fmt: skip
_SKY_RESOURCES = {"accelerators", "use_spot", "cloud", "infra", "any_of", "ordered",
                  "instance_type", "disk_tier", "image_id", "network_tier"}  # fmt: skip
_TASK_KEYS = {"num_nodes", "file_mounts", "envs", "workdir", "resources", "secrets"}


def recognise(file: Input) -> float:
    """A ``run:``/``setup:`` bash string next to task keys, or a SkyPilot ``resources`` block."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    data = file.mapping
    if "apiVersion" in data or "kind" in data:
        return 0.0
    resources = data.get("resources")
    sky_resources = isinstance(resources, dict) and bool(_SKY_RESOURCES & set(resources))
    script = any(isinstance(data.get(key), str) for key in ("run", "setup"))
    if script and sky_resources:
        return 0.95
    if script and _TASK_KEYS & set(data):
        return 0.9
    return 0.8 if sky_resources else 0.0


def parse(file: Input) -> Document:
    tree = file.trees[0]
    data = file.mapping
    doc = Document(file.path, name, recognise(file), role)
    resources = _resource_facts(tree, file.path)
    facts = facts_from_table(tree, TABLE, file.path) + resources
    facts += _env_facts(tree, file.path) + _label_facts(tree, file.path)
    run = data.get("run")
    if isinstance(run, str):
        run_facts, references = _run_facts(file, tree, resources)
        doc.references = _local_references(references, data)
        doc.overrides = _run_overrides(file, tree, resources)
        declared = {fact.pointer for fact in facts if fact.pointer.startswith("/resources/")}
        facts += [f for f in run_facts if f.pointer not in declared]  # the allocation wins
    doc.facts = facts
    doc.unknown_keys = typos.near_misses(tree, TOP_KEYS, name, file.path)
    doc.unknown_keys += typos.near_misses(tree, RESOURCE_KEYS, name, file.path, ("resources",))
    return doc


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "resources.accelerators (or the first any_of / ordered alternative)": [
            "/resources/gpu/model", "/resources/gpus_per_node", "/resources/world_size",
            "/resources/placement/accelerator"],
        "resources.labels.<key>": ["/tags/<key>"],
        "envs.<NAME>": ["/env/NAME"],
        "run (bash: torchrun / accelerate launch / deepspeed / mpirun ...)": [
            "/launcher/kind", "/launcher/entrypoint", "/launcher/command", "(reference)"],
    }  # fmt: skip


def _where(tree: Tree, path: KeyPath, file: str) -> Location:
    line, column = tree.span(path)
    return Location(file=file, line=line, column=column)


def _accelerators(tree: Tree) -> tuple[KeyPath, Any] | None:
    """The accelerators value and its path: the task's own, else the first alternative's."""
    resources = tree.data.get("resources") if isinstance(tree.data, dict) else None
    if not isinstance(resources, dict):
        return None
    if resources.get("accelerators") is not None:
        return ("resources", "accelerators"), resources["accelerators"]
    for group in ("any_of", "ordered"):
        options = resources.get(group)
        for index, option in enumerate(options if isinstance(options, list) else []):
            if isinstance(option, dict) and option.get("accelerators") is not None:
                return ("resources", group, index, "accelerators"), option["accelerators"]
    return None


def parse_accelerator(value: Any) -> tuple[str | None, int | None]:
    """(GPU name, count) of ``H100:8`` / ``L4`` / ``{A100: 1}`` / ``[L4:1, H100:1]`` (first)."""
    if isinstance(value, dict):
        if not value:
            return None, None
        first, count = next(iter(value.items()))
        if count is None and ":" in str(first):  # flow style {H100:8, A100:8}: keys "H100:8"
            return parse_accelerator(str(first))
        return str(first), 1 if count is None else n.positive_int(count)
    if isinstance(value, list):
        return parse_accelerator(value[0]) if value else (None, None)
    text = n.to_str(value)
    if not text or not text.strip():
        return None, None
    gpu, colon, count = text.strip().partition(":")
    return gpu.strip() or None, n.positive_int(count.strip()) if colon else 1


def _resource_facts(tree: Tree, file: str) -> list[Fact]:
    found = _accelerators(tree)
    if found is None:
        return []
    path, value = found
    where = _where(tree, path, file)
    gpu, count = parse_accelerator(value)
    spec = resolve_gpu(gpu) if gpu else None
    facts = [] if gpu is None else [Fact("/resources/placement/accelerator", gpu, where)]
    if spec is not None:
        facts.append(Fact("/resources/gpu/model", spec.name, where))
        facts.append(Fact("/resources/gpu/memory_bytes", spec.memory_bytes, where))
    if count is not None:
        nodes = n.positive_int(tree.data.get("num_nodes", 1)) if isinstance(tree.data, dict) else 1
        facts.append(Fact("/resources/gpus_per_node", count, where))
        if nodes is not None:
            facts.append(Fact("/resources/world_size", count * nodes, where))
    return facts


def _mapping(tree: Tree, path: KeyPath) -> dict[str, Any]:
    node: Any = tree.data
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def _env_facts(tree: Tree, file: str) -> list[Fact]:
    """``envs`` values (secrets are redacted centrally); ``secrets`` never give a value."""
    return [
        Fact(f"/env/{key}", _env_text(value), _where(tree, ("envs", key), file))
        for key, value in _mapping(tree, ("envs",)).items()
        if _env_text(value) is not None
    ]


def _env_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    return n.to_str(value)


def _label_facts(tree: Tree, file: str) -> list[Fact]:
    return [
        Fact(
            pointer("tags", n.tag_key(key)),
            str(value),
            _where(tree, ("resources", "labels", key), file),
        )
        for key, value in _mapping(tree, ("resources", "labels")).items()
        if n.to_str(value) is not None and key.strip()
    ]


def environment(tree: Tree, resources: list[Fact]) -> dict[str, str | None]:
    """What the ``run:`` script sees: the task's envs (secrets set, values unknown) and
    SkyPilot's own variables for this task's size."""
    declared = {fact.pointer: fact.value for fact in resources}
    data = tree.data if isinstance(tree.data, dict) else {}
    environ: dict[str, str | None] = {
        str(key): _env_text(value) for key, value in _mapping(tree, ("envs",)).items()
    }
    environ |= {str(key): None for key in _mapping(tree, ("secrets",))}
    gpus = declared.get("/resources/gpus_per_node")
    nodes = n.positive_int(data.get("num_nodes", 1))
    environ["SKYPILOT_NUM_GPUS_PER_NODE"] = None if gpus is None else str(gpus)
    environ["SKYPILOT_NUM_NODES"] = None if nodes is None else str(nodes)
    return environ


def _run_facts(
    file: Input, tree: Tree, resources: list[Fact]
) -> tuple[list[Fact], list[Reference]]:
    line, column = tree.span(("run",))
    origin = embedded.value_origin(file.text, line, column) or (line, column)
    text = str(tree.data["run"])
    return embedded.script_facts(
        text, file.path, origin, environment(tree, resources), ("SKYPILOT_",)
    )


def _run_overrides(file: Input, tree: Tree, resources: list[Fact]) -> list[Override]:
    line, column = tree.span(("run",))
    origin = embedded.value_origin(file.text, line, column) or (line, column)
    return embedded.script_overrides(
        str(tree.data["run"]), file.path, origin, environment(tree, resources), ("SKYPILOT_",)
    )


def _local_references(references: list[Reference], data: dict[str, Any]) -> list[Reference]:
    """Container paths → the local files ``file_mounts`` (or ``workdir``) put there; a path
    nothing local provides (a bucket, the image's own files) is not a reference of this repo."""
    local = []
    for reference in references:
        path = local_path(reference.path, data)
        if path is not None:
            local.append(replace(reference, path=path))
    return local


def local_path(written: str, data: dict[str, Any]) -> str | None:
    mounts = data.get("file_mounts")
    for target, source in mounts.items() if isinstance(mounts, dict) else []:
        source_path = source.get("source") if isinstance(source, dict) else source
        if not isinstance(source_path, str) or "://" in source_path:
            continue
        target = str(target).rstrip("/")
        if written == target or written.startswith(target + "/"):
            return posixpath.normpath(source_path + written[len(target) :])
    if written.startswith(("/", "~")):
        return None
    workdir = data.get("workdir", ".")
    if not isinstance(workdir, str) or "://" in workdir:
        return None  # a git workdir: the file is in that repository, not this one
    return posixpath.normpath(posixpath.join(workdir, written))


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("task.yaml", "train.sky.yaml", "sky.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
