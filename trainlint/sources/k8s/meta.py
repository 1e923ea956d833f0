"""Kubernetes metadata that is not a resource count: labels and annotations (cost tags), GPU
product and spot node selectors, and container environment.

Labels, annotations and node selectors are gathered wherever they sit in a training document
(job metadata, pod templates, TrainJob ``runtimePatches``), since every operator nests them
differently; only the initializer steps of a TrainJob runtime (dataset/model download pods)
and volume-claim templates are left out, as their pods are not the training pods.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trainlint.catalog import resolve_gpu
from trainlint.job import Location
from trainlint.sources.base import Fact, pointer
from trainlint.sources.base import normalize as n
from trainlint.sources.structured import KeyPath, Tree


@dataclass(frozen=True)
class At:
    """A place in one YAML document of the file (multi-document files have several trees)."""

    tree: Tree
    path: KeyPath

    @property
    def value(self) -> Any:
        node: Any = self.tree.data
        for part in self.path:
            if isinstance(node, dict) and isinstance(part, str):
                node = node.get(part)
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                return None
        return node

    @property
    def text(self) -> str | None:
        """The value when it is a string (a name, a kind); None for anything else: a list or
        a mapping where a name belongs names nothing."""
        value = self.value
        return value if isinstance(value, str) else None

    def child(self, *parts: str | int) -> At:
        return At(self.tree, (*self.path, *parts))

    def location(self, file: str) -> Location:
        line, column = self.tree.span(self.path)
        return Location(file=file, line=line, column=column)


GPU_LABELS = frozenset({
    "nvidia.com/gpu.product", "cloud.google.com/gke-accelerator",
    "karpenter.k8s.aws/instance-gpu-name", "node.kubernetes.io/accelerator", "accelerator",
    "cloud.google.com/gke-tpu-accelerator",  # GKE's TPU version: tpu-v5-lite-podslice, ...
})  # fmt: skip
# Node labels whose value says the node is spot/preemptible capacity (→ /resources/spot).
SPOT_LABELS = {
    "cloud.google.com/gke-spot": {"true"}, "cloud.google.com/gke-preemptible": {"true"},
    "karpenter.sh/capacity-type": {"spot"}, "eks.amazonaws.com/capacitytype": {"spot"},
    "kubernetes.azure.com/scalesetpriority": {"spot"},
    "node.kubernetes.io/lifecycle": {"spot", "preemptible"},
}  # fmt: skip
_SPOT_KNOWN = {"on-demand", "on_demand", "false", "regular", "normal"}


def training_places(tree: Tree) -> Iterator[At]:
    """Every path of the document outside initializer steps and volume-claim templates."""
    skipped: list[KeyPath] = []
    for path, value in tree.items():
        if any(path[: len(s)] == s for s in skipped):
            continue
        if len(path) >= 2 and path[-2] == "replicatedJobs" and _initializer(value):
            skipped.append(path)
            continue
        if path and path[-1] in ("volumeClaimPolicies", "volumeClaimTemplates"):
            skipped.append(path)
            continue
        yield At(tree, path)


def _initializer(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("name", "")).endswith("initializer")


def tag_facts(places: list[At], file: str) -> list[Fact]:
    """``metadata.labels``/``metadata.annotations`` entries → ``/tags/<key>``."""
    facts = []
    for place in places:
        if place.path[-2:] not in (("metadata", "labels"), ("metadata", "annotations")):
            continue
        for key, value in _scalars(place.value):
            where = place.child(key).location(file)
            facts.append(Fact(pointer("tags", n.tag_key(key)), value, where))
    return facts


def _scalars(mapping: Any) -> Iterator[tuple[str, str]]:
    if not isinstance(mapping, dict):
        return
    for key, value in mapping.items():
        text = "true" if value is True else "false" if value is False else n.to_str(value)
        if text is not None and str(key).strip():
            yield str(key), text


def selector_facts(places: list[At], file: str) -> list[Fact]:
    """GPU model and spot capacity from ``nodeSelector`` and required node affinity."""
    facts = []
    for place in places:
        last = place.path[-1] if place.path else None
        if last == "nodeSelector":
            for key, value in _scalars(place.value):
                facts += _label_fact(key, [value], place.child(key).location(file))
                facts.append(_placed(key, value, place.child(key).location(file)))
        elif last == "matchExpressions" and "requiredDuringSchedulingIgnoredDuringExecution" in (
            place.path
        ):
            facts += _expression_facts(place, file)
    return facts


def _expression_facts(place: At, file: str) -> list[Fact]:
    facts = []
    items = place.value if isinstance(place.value, list) else []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or item.get("operator") != "In":
            continue
        values = item.get("values")
        if isinstance(item.get("key"), str) and isinstance(values, list):
            where = place.child(index, "key").location(file)
            facts += _label_fact(item["key"], [str(v) for v in values], where)
            if len(values) == 1:  # the node's label is known only when one value is allowed
                facts.append(_placed(item["key"], str(values[0]), where))
    return facts


def _placed(key: str, value: str, where: Location) -> Fact:
    """A node label the pod requires, for the org fleet's pools (``trainlint.fleet``)."""
    return Fact(pointer("resources", "placement", "node_labels", key.strip()), value, where)


def _label_fact(key: str, values: list[str], where: Location) -> list[Fact]:
    """A node label naming the GPU (one model among the values) or the capacity type."""
    key = key.strip().lower()
    if key in GPU_LABELS:
        models = {spec for value in values if (spec := resolve_gpu(value)) is not None}
        if len(models) == 1:
            spec = models.pop()
            return [Fact("/resources/gpu/model", spec.name, where),
                    Fact("/resources/gpu/memory_bytes", spec.memory_bytes, where)]  # fmt: skip
    if key in SPOT_LABELS and len(values) == 1:
        value = values[0].strip().lower()
        if value in SPOT_LABELS[key]:
            return [Fact("/resources/spot", True, where)]
        if value in _SPOT_KNOWN:
            return [Fact("/resources/spot", False, where)]
    return []


def env_facts(entries: list[At], file: str) -> list[Fact]:
    """Container ``env`` items with a literal ``value`` (``valueFrom`` is unknown: no fact)."""
    facts = []
    for entry in entries:
        item = entry.value
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        value = item.get("value")
        if value is not None and "valueFrom" not in item and n.to_str(value) is not None:
            facts.append(Fact(f"/env/{item['name']}", str(value), entry.location(file)))
    return facts
