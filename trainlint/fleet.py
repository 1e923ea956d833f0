"""The org fleet: what a platform team knows about its GPUs and job files never say.

A fleet is written in the repo config (``[tool.trainlint.fleet]``, ``[fleet]``, ``fleet:``) or
in a policy pack's ``data.trainlint.fleet`` (an org pack carries it, and may lock its keys:
``packs.layering``). Its keys: ``default-gpu`` (a catalog GPU), ``gpus-per-node``, ``prices``
(catalog GPU → USD per GPU-hour), ``storage-price`` (USD per GB-month) and ``pools``: each a
``match`` on where the job asks to run (``job.Placement``: a SLURM partition, constraint,
account or qos; a Kubernetes node label or instance type; a SkyPilot accelerator, cloud or
region) and what the pool's nodes are (GPU, GPUs per node, price, interconnect).

``hardware(fleet, placement)`` is what the fleet says about one job: the first pool that
matches it, else the fleet's defaults. Whatever the job's own files state wins over it
(``estimate.inputs``); every number it feeds has the source ``fleet``.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from trainlint.catalog import GpuSpec, gpus, resolve_gpu
from trainlint.job import Placement
from trainlint.suggest import did_you_mean

MAX_PRICE = 1e6  # USD per GPU-hour, as ``estimate.params``
MAX_GBPS = 1e7  # 10 Pb/s: past it a link speed is a typo
MAX_PER_NODE = 1_000_000
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
"""The well-known Kubernetes node labels that name a node's cloud instance type."""


class _Keys(BaseModel):
    """Keys spelled as in the rest of the config (``gpus-per-node``; snake_case works too)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def catalog_gpu(name: str) -> str:
    """The catalog name of the GPU ``name`` (an alias works); a ValueError with the closest
    catalog names ("did you mean") when the catalog has no such GPU."""
    spec = resolve_gpu(name)
    if spec is None:
        names = [g.name for g in gpus()]  # the catalog's spelling, suggested first
        raise ValueError(f"unknown GPU {name!r}{did_you_mean(name, names)}")
    return spec.name


class Interconnect(_Keys):
    """A pool's links, in Gb/s as vendors quote them: NVLink per GPU inside a node, the
    fabric (InfiniBand, RoCE, EFA) per node across nodes."""

    nvlink_gbps: float | None = Field(default=None, alias="nvlink-gbps", gt=0, le=MAX_GBPS)
    fabric_gbps: float | None = Field(default=None, alias="fabric-gbps", gt=0, le=MAX_GBPS)


class PoolMatch(_Keys):
    """Where a job asks to run, for a pool to be its: every key written must match the job's
    placement (a glob, case-insensitive); a job that does not say a key's fact does not match."""

    partition: str | None = None
    constraint: str | None = None
    account: str | None = None
    qos: str | None = None
    node_selector: dict[str, str] = Field(default_factory=dict, alias="node-selector")
    instance_type: str | None = Field(default=None, alias="instance-type")
    accelerator: str | None = None
    cloud: str | None = None
    region: str | None = None

    @model_validator(mode="after")
    def _says_something(self) -> PoolMatch:
        if not self.model_fields_set:
            raise ValueError("a pool's match needs at least one key (partition, constraint, ...)")
        return self

    def matches(self, placement: Placement) -> bool:
        """Whether a job placed at ``placement`` runs on this pool."""
        scalars = ("partition", "account", "qos", "accelerator", "cloud", "region")
        for name in scalars:
            wanted = getattr(self, name)
            if wanted is not None and not _glob(getattr(placement, name), wanted):
                return False
        if self.constraint is not None and not _constraint(placement.constraint, self.constraint):
            return False
        if self.instance_type is not None and not any(
            _glob(value, self.instance_type) for value in _instance_types(placement)
        ):
            return False
        labels = placement.node_labels
        return all(_glob(labels.get(key), value) for key, value in self.node_selector.items())


class Pool(_Keys):
    """Nodes a scheduler hands out together: their GPU, count per node, price and links."""

    name: str | None = None
    match: PoolMatch
    gpu: str | None = None
    gpus_per_node: int | None = Field(default=None, alias="gpus-per-node", ge=1, le=MAX_PER_NODE)
    price: float | None = Field(default=None, gt=0, le=MAX_PRICE)
    """USD per GPU-hour of the pool's GPU."""
    interconnect: Interconnect | None = None

    @field_validator("gpu")
    @classmethod
    def _catalog_gpu(cls, value: str | None) -> str | None:
        return None if value is None else catalog_gpu(value)


class Fleet(_Keys):
    """The org's GPUs: defaults for every job, and pools matched by where a job runs."""

    default_gpu: str | None = Field(default=None, alias="default-gpu")
    gpus_per_node: int | None = Field(default=None, alias="gpus-per-node", ge=1, le=MAX_PER_NODE)
    prices: dict[str, float] = Field(default_factory=dict)
    """USD per GPU-hour by catalog GPU name (an alias works)."""
    storage_price: float | None = Field(default=None, alias="storage-price", gt=0, le=MAX_PRICE)
    """USD per GB-month of checkpoint storage."""
    pools: list[Pool] = Field(default_factory=list)

    @field_validator("default_gpu")
    @classmethod
    def _catalog_gpu(cls, value: str | None) -> str | None:
        return None if value is None else catalog_gpu(value)

    @field_validator("prices")
    @classmethod
    def _catalog_prices(cls, value: dict[str, float]) -> dict[str, float]:
        canonical = {}
        for name, price in value.items():
            if not 0 < price <= MAX_PRICE:
                raise ValueError(f"{name!r}: a price is USD per GPU-hour, above 0 and at most "
                                 f"{MAX_PRICE:,.0f}")  # fmt: skip
            canonical[catalog_gpu(name)] = float(price)
        return canonical

    def pool_of(self, placement: Placement) -> Pool | None:
        """The first pool whose match holds for ``placement``."""
        return next((pool for pool in self.pools if pool.match.matches(placement)), None)

    def price(self, gpu: GpuSpec, pool: Pool | None = None) -> float | None:
        """USD per GPU-hour of ``gpu``: the pool's price when it is the pool's GPU, else the
        fleet's ``prices``; None when the fleet states none."""
        if pool is not None and pool.price is not None and pool.gpu in (None, gpu.name):
            return pool.price
        return self.prices.get(gpu.name)


@dataclass(frozen=True)
class FleetHardware:
    """What the fleet says about one job's hardware; None where it says nothing."""

    gpu: GpuSpec | None = None
    gpus_per_node: int | None = None
    price: float | None = None
    interconnect: Interconnect | None = None
    pool: str | None = None
    """The matched pool's name (or its index, ``pools[2]``); None for the fleet's defaults."""


def hardware(fleet: Fleet | None, placement: Placement, stated: GpuSpec | None) -> FleetHardware:
    """The fleet's GPU, GPUs per node, price and links for a job placed at ``placement``
    whose files name the GPU ``stated`` (or none): the matched pool's, else the defaults.
    The price is for the GPU the job runs on (``stated`` wins over the fleet's GPU)."""
    if fleet is None:
        return FleetHardware()
    pool = fleet.pool_of(placement)
    gpu_name = (pool.gpu if pool else None) or fleet.default_gpu
    fleet_gpu = resolve_gpu(gpu_name) if gpu_name else None
    runs_on = stated or fleet_gpu
    per_node = (pool.gpus_per_node if pool else None) or fleet.gpus_per_node
    return FleetHardware(
        gpu=fleet_gpu,
        gpus_per_node=per_node,
        price=None if runs_on is None else fleet.price(runs_on, pool),
        interconnect=pool.interconnect if pool else None,
        pool=None if pool is None else pool.name or f"pools[{fleet.pools.index(pool)}]",
    )


def _glob(value: str | None, pattern: str) -> bool:
    return value is not None and fnmatch.fnmatchcase(value.lower(), pattern.lower())


def _constraint(expression: str | None, pattern: str) -> bool:
    """A SLURM constraint matches the whole expression, or one of the features it requires
    (``h100&ib`` has ``h100`` and ``ib``; an ``|`` alternative requires none of them)."""
    if expression is None:
        return False
    if _glob(expression, pattern):
        return True
    if "|" in expression:
        return False
    features = [f.split("*")[0] for f in re.split(r"[&,\[\]()]+", expression) if f]
    return any(_glob(feature, pattern) for feature in features)


def _instance_types(placement: Placement) -> list[str]:
    """The instance types the job asks for: SkyPilot's ``instance_type``, the Kubernetes labels."""
    labels = [placement.node_labels.get(label) for label in INSTANCE_TYPE_LABELS]
    return [value for value in (placement.instance_type, *labels) if value is not None]


def dumped(fleet: Fleet) -> dict[str, Any]:
    """The fleet as pack data (``data.trainlint.fleet``): the keys it sets, spelled as a
    config writes them (``default-gpu``), GPUs by their catalog names."""
    return fleet.model_dump(mode="json", by_alias=True, exclude_unset=True)
