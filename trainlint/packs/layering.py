"""Layering (DESIGN §5): builtin < org packs, in the order the config lists them < repo config.

Each layer's ``data.trainlint.params`` overrides the layers below, key by key. A pack can
**lock** what the layers above it may change, in ``data.trainlint.locks``::

    {"params": {"checkpoint_too_frequent.max_overhead_fraction": "max",
                "missing_cost_tags.required_tags": "superset"},
     "rules": {"TL401": {"approvers": ["platform-team"]}}}

A parameter lock says which way is *tighter*: ``max`` (a ceiling: a smaller value is allowed),
``min`` (a floor: a larger one is), ``superset`` (a list that may only grow), ``subset`` (a list
that may only shrink) or ``exact``. A locked rule always runs: ``select``/``ignore``,
per-file-ignores, inline ignores and baseline entries cannot turn it off, and a waiver
suppresses it only when its ``approved_by`` is one of the pack's approvers. Whatever loosens a
lock is not applied, and is reported as a :class:`Violation` (TL906) naming the lock and the
pack; tightening is always allowed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from trainlint.errors import PolicyError
from trainlint.packs import Pack, RuleMeta

DIRECTIONS = ("max", "min", "superset", "subset", "exact")


@dataclass(frozen=True)
class ParamLock:
    path: str  # "<group>.<key>" under data.trainlint.params
    direction: str
    value: Any
    pack: str


@dataclass(frozen=True)
class RuleLock:
    rule: str  # the rule id
    approvers: tuple[str, ...]
    pack: str


@dataclass
class Locks:
    params: dict[str, ParamLock] = field(default_factory=dict)
    rules: dict[str, RuleLock] = field(default_factory=dict)

    def rule(self, rule_id: str) -> RuleLock | None:
        return self.rules.get(rule_id.upper())


@dataclass(frozen=True)
class Violation:
    """An attempt to loosen a lock: what was tried, which lock, which pack set it."""

    lock: str  # "params.checkpoint_too_frequent.max_overhead_fraction" or "rules.TL401"
    pack: str
    detail: str
    where: str  # who tried: "repo config" or "pack 'x'"


def layer(packs: Sequence[Pack]) -> tuple[Pack, Locks, list[Violation]]:
    """One pack from ``packs`` (builtin first): modules and rules united, params overridden
    in order under the locks of the packs below, locks accumulated."""
    if not packs:
        raise PolicyError("no policy pack to layer")
    combined, locks = packs[0], Locks()
    _add_locks(locks, packs[0])
    violations: list[Violation] = []
    for pack in packs[1:]:
        combined = _unite(combined, pack)
        params, rejected = override_params(
            _params(combined), _params(pack), locks, f"pack {pack.name!r}"
        )
        combined = with_params(combined, params)
        violations += rejected
        _add_locks(locks, pack)
    return combined, locks, violations


def override_params(
    base: dict[str, Any], changes: dict[str, Any], locks: Locks, where: str
) -> tuple[dict[str, Any], list[Violation]]:
    """``base`` with ``changes`` applied group by group; a change that loosens a lock is left
    out and returned as a violation."""
    merged = {group: dict(values) if isinstance(values, dict) else values
              for group, values in base.items()}  # fmt: skip
    violations = []
    for group, values in changes.items():
        if not isinstance(values, dict):
            merged[group] = values
            continue
        target = merged.setdefault(group, {})
        for key, value in values.items():
            lock = locks.params.get(f"{group}.{key}")
            problem = loosens(lock, value) if lock else None
            if lock and problem:
                violations.append(Violation(f"params.{lock.path}", lock.pack, problem, where))
            else:
                target[key] = value
    return merged, violations


def loosens(lock: ParamLock, value: Any) -> str | None:
    """Why ``value`` loosens ``lock``, or None when it keeps or tightens it."""
    locked = lock.value
    if lock.direction == "exact":
        return None if value == locked else f"{value!r} differs from the locked {locked!r}"
    if lock.direction in ("max", "min"):
        if not _number(value) or not _number(locked):
            return None if value == locked else f"{value!r} is not a number like {locked!r}"
        if lock.direction == "max" and value > locked:
            return f"{value!r} is above the locked maximum {locked!r}"
        if lock.direction == "min" and value < locked:
            return f"{value!r} is below the locked minimum {locked!r}"
        return None
    if not isinstance(value, list) or not isinstance(locked, list):
        return f"{value!r} is not a list like {locked!r}"
    if lock.direction == "superset":
        missing = [item for item in locked if item not in value]
        return f"drops the locked {missing!r}" if missing else None
    extra = [item for item in value if item not in locked]
    return f"adds {extra!r} beyond the locked {locked!r}" if extra else None


def with_params(pack: Pack, params: dict[str, Any]) -> Pack:
    trainlint = {**pack.data.get("trainlint", {}), "params": params}
    return dataclasses.replace(pack, data={**pack.data, "trainlint": trainlint})


def _params(pack: Pack) -> dict[str, Any]:
    value = pack.data.get("trainlint", {}).get("params", {})
    return value if isinstance(value, dict) else {}


def _unite(base: Pack, pack: Pack) -> Pack:
    """Both packs' modules (named by pack, so files never collide), tests and rules (ids and
    slugs must not repeat); data other than params merged, the later pack winning. The locks
    stay in the data, so a layered pack can be layered again (``pack test``, then a repo's
    config) without losing them."""
    modules = {**base.modules, **{_module_name(pack, f): s for f, s in pack.modules.items()}}
    tests = {**base.tests, **{_module_name(pack, f): s for f, s in pack.tests.items()}}
    rules = _unique_rules([*base.rules, *pack.rules], pack)
    data = _deep_merge(base.data, pack.data)
    trainlint = dict(data.get("trainlint", {}))
    trainlint["params"] = _params(base)  # params go through override_params and the locks
    return dataclasses.replace(
        base,
        name=f"{base.name}+{pack.name}",
        modules=modules,
        tests=tests,
        data={**data, "trainlint": trainlint},
        rules=tuple(rules),
    )


def _module_name(pack: Pack, file: str) -> str:
    return f"{pack.name}/{file}"


def _unique_rules(rules: Sequence[RuleMeta], pack: Pack) -> list[RuleMeta]:
    seen: dict[str, RuleMeta] = {}
    for rule in rules:
        for key in (rule.id.upper(), rule.slug):
            other = seen.get(key)
            seen[key] = rule
            if other is not None:
                raise PolicyError(
                    f"pack {pack.name!r}: rule {key!r} is declared by both {other.package} "
                    f"and {rule.package}"
                )
    return list(rules)


def _add_locks(locks: Locks, pack: Pack) -> None:
    """Read ``data.trainlint.locks``; the locked value is the pack's own parameter value
    (after the layers below it), so a later pack cannot re-lock at a looser value."""
    raw = pack.data.get("trainlint", {}).get("locks")
    if raw is None:
        return
    if not isinstance(raw, dict) or set(raw) - {"params", "rules"}:
        raise PolicyError(f"pack {pack.name!r}: data.trainlint.locks must hold params and rules")
    params = _params(pack)
    for path, direction in (raw.get("params") or {}).items():
        group, _, key = str(path).partition(".")
        if direction not in DIRECTIONS or not key:
            raise PolicyError(
                f"pack {pack.name!r}: lock {path!r}: want '<rule>.<param>': one of {DIRECTIONS}"
            )
        if key not in params.get(group, {}):
            raise PolicyError(f"pack {pack.name!r}: lock {path!r} names no parameter it sets")
        if path not in locks.params:  # the lowest layer's lock holds
            locks.params[path] = ParamLock(path, direction, params[group][key], pack.name)
    for rule_id, spec in (raw.get("rules") or {}).items():
        approvers = (spec or {}).get("approvers", []) if isinstance(spec, dict) else []
        locks.rules.setdefault(
            str(rule_id).upper(), RuleLock(str(rule_id).upper(), tuple(approvers), pack.name)
        )


def _deep_merge(base: Any, top: Any) -> Any:
    if isinstance(base, dict) and isinstance(top, dict):
        return {**base, **{k: _deep_merge(base.get(k), v) for k, v in top.items()}}
    return top


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
