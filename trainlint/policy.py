"""The policy a run enforces: the builtin pack, the repo config's org packs and its ``params``.

Layering and locks are in :mod:`trainlint.packs.layering`; this module resolves the config's
pack sources, checks the config's parameter names and kinds (a misspelt rule or key is an error
naming it, never a setting nobody reads), applies them under the locks, and places every lock
violation on the config line that caused it, for TL906.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainlint.config import RepoConfig
from trainlint.errors import ConfigError
from trainlint.fleet import dumped
from trainlint.job import Location
from trainlint.packs import Pack, load_builtin_pack, load_pack
from trainlint.packs.layering import (
    Locks,
    Violation,
    fleet_data,
    layer,
    override_fleet,
    override_params,
    same_kind,
    with_fleet,
    with_params,
)
from trainlint.packs.sources import PackSource
from trainlint.read import display
from trainlint.sources.structured import KeyPath


@dataclass(frozen=True)
class PlacedViolation:
    violation: Violation
    location: Location


@dataclass
class Policy:
    pack: Pack
    locks: Locks = field(default_factory=Locks)
    violations: list[PlacedViolation] = field(default_factory=list)
    rule_packs: dict[str, str] = field(default_factory=dict)
    """The rules of the configured packs (``--pack``, ``TRAINLINT_PACKS``, the config's
    ``packs``): rule id -> the name of the pack that declares it. Configuring a pack opts
    into its rules: with no ``select`` they run beside the builtin ones (``Selection``)."""


def load_policy(
    config: RepoConfig,
    base: Pack | None = None,
    *,
    offline: bool = False,
    required: Sequence[str] = (),
) -> Policy:
    """``base`` (default: the builtin pack) under the ``required`` packs (named on the command
    line or in ``TRAINLINT_PACKS``: the repository cannot remove them), then the repo config's
    org packs and params."""
    packs = [base or load_builtin_pack(), *_required_packs(required, offline)]
    packs += _org_packs(config, offline)
    pack, locks, layered = layer(packs)
    params = config_params(pack, config)
    merged, rejected = override_params(_params(pack), params, locks, "the repo config")
    placed = [PlacedViolation(v, _pack_location(config, v)) for v in layered]
    placed += [PlacedViolation(v, _param_location(config, pack, v)) for v in rejected]
    fleet, refused = config_fleet(pack, config, locks)
    placed += [PlacedViolation(v, _fleet_location(config, v)) for v in refused]
    pack = with_fleet(with_params(pack, merged), fleet)
    return Policy(pack, locks, placed, _rule_packs(packs[1:]))


def config_fleet(
    pack: Pack, config: RepoConfig, locks: Locks
) -> tuple[dict[str, Any], list[Violation]]:
    """The packs' fleet with the repo config's keys over it, but for those a pack locks."""
    own = dumped(config.fleet) if config.fleet is not None else {}
    return override_fleet(fleet_data(pack), own, locks, "the repo config")


def _rule_packs(packs: Sequence[Pack]) -> dict[str, str]:
    return {rule.id: pack.name for pack in packs for rule in pack.rules}


def config_params(pack: Pack, config: RepoConfig) -> dict[str, dict[str, Any]]:
    """The config's ``params`` keyed by the pack's parameter groups (a rule's package name, or
    ``estimate``), after checking every group, key and value kind exists in the pack."""
    current = _params(pack)
    result: dict[str, dict[str, Any]] = {}
    for name, values in config.params.items():
        group = _group(pack, name)
        if group not in current:
            raise ConfigError(f"{config.source}: params: no rule or parameter group {name!r}")
        for key, value in values.items():
            _check_param(current[group], key, value, f"params.{name}", config)
        result[group] = dict(values)
    return result


def _group(pack: Pack, name: str) -> str:
    """The parameter group a config ``params`` key names: a rule's package, or ``estimate``."""
    rule = pack.get_rule(name)
    return rule.package.rsplit(".", 1)[-1] if rule else name.replace("-", "_")


def _check_param(
    base: dict[str, Any], key: str, value: Any, where: str, config: RepoConfig
) -> None:
    if key not in base:
        known = ", ".join(sorted(base)) or "none"
        raise ConfigError(f"{config.source}: {where}: unknown parameter {key!r} (known: {known})")
    if not same_kind(base[key], value):
        message = f"{where}.{key}: {value!r} is not the kind of value {base[key]!r} is"
        raise ConfigError(f"{config.source}: {message}")


def _org_packs(config: RepoConfig, offline: bool) -> list[Pack]:
    """The packs the repo config lists: a path or key file of one must lie inside the
    repository (the config is the pull request's to write)."""
    if not config.packs:
        return []
    from trainlint.config import repository_root
    from trainlint.packs.fetch import resolve  # httpx only when a config lists packs

    repository = repository_root(config.root)
    return [
        load_pack(resolve(source, config.root, offline=offline, repository=repository))
        for source in config.packs
    ]


def _required_packs(values: Sequence[str], offline: bool) -> list[Pack]:
    if not values:
        return []
    from trainlint.packs.fetch import resolve

    return [
        load_pack(resolve(named_source(value), Path.cwd(), offline=offline)) for value in values
    ]


def named_source(value: str) -> PackSource:
    """A pack named outside the repository's config (``--pack``, ``TRAINLINT_PACKS``): a
    path, ``entry-point:NAME``, or an https URL pinned by ``#sha256=<hex>``."""
    if value.startswith("entry-point:"):
        return PackSource.model_validate({"entry_point": value.removeprefix("entry-point:")})
    if "://" not in value:
        return PackSource(path=value)
    url, _, pin = value.partition("#sha256=")
    try:
        return PackSource(url=url, sha256=pin or None)
    except ValueError as exc:
        raise ConfigError(f"--pack {value!r}: the sha256 pin is not 64 hex digits") from exc


def _params(pack: Pack) -> dict[str, Any]:
    trainlint = pack.data.get("trainlint", {})
    value = trainlint.get("params", {}) if isinstance(trainlint, dict) else {}
    return value if isinstance(value, dict) else {}


def config_location(config: RepoConfig, path: KeyPath, *, value: bool = False) -> Location:
    """Where the repo config writes the entry at key ``path`` (``("waivers", 2, "reason")``):
    at its key's text, or with ``value`` at its value's; at its closest written ancestor when
    it is not written itself (an entry of the defaults), else at the config's first line."""
    if config.source is None:
        return Location(file="<config>", line=1, column=1)
    for depth in range(len(path), 0, -1):
        written = config.located.get(path[:depth])
        if written is not None:
            column = written.value_column if value and depth == len(path) else written.column
            return Location(file=display(written.file), line=written.line, column=column)
    return Location(file=display(config.source), line=1, column=1)


def _param_location(config: RepoConfig, pack: Pack, violation: Violation) -> Location:
    """The config's ``params`` entry that tried to loosen the lock ``params.<group>.<key>``
    (the last one naming the group: the one applied)."""
    group, _, key = violation.lock.removeprefix("params.").partition(".")
    names = [name for name, values in config.params.items()
             if _group(pack, name) == group and key in values]  # fmt: skip
    return config_location(config, ("params", names[-1], key) if names else ("params",))


def _fleet_location(config: RepoConfig, violation: Violation) -> Location:
    """The config's ``fleet`` key that tried to change the locked ``fleet.<key>``."""
    return config_location(config, ("fleet", violation.lock.removeprefix("fleet.")))


def _pack_location(config: RepoConfig, violation: Violation) -> Location:
    """The config entry that lists the pack which tried to loosen the lock."""
    name = violation.where.removeprefix("pack ").strip("'")
    for index, source in enumerate(config.packs):
        spelled = {"path": source.path, "url": source.url, "entry-point": source.entry_point}
        for key, value in spelled.items():
            if name and value and name in value:
                return config_location(config, ("packs", index, key), value=True)
    return config_location(config, ("packs",))
