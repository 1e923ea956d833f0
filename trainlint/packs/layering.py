"""Layering (DESIGN §5): builtin < org packs, in the order the config lists them < repo config.

Each layer's ``data.trainlint.params`` overrides the layers below, key by key. A pack can
**lock** what the layers above it may change, in ``data.trainlint.locks``::

    {"params": {"checkpoint_too_frequent.max_overhead_fraction": "max",
                "missing_cost_tags.required_tags": "superset"},
     "rules": {"TL401": {"approvers": ["platform-team"]}}}

The org fleet, ``data.trainlint.fleet`` (``trainlint.fleet``), is layered the same way, key by
key (``default-gpu``, ``prices``, ``pools``...: a key replaces the one below whole), and a pack
locks its keys in ``"fleet": {"default-gpu": "exact", "pools": "exact"}``: a layer above (a
later pack, the repo config) may not set a locked key to anything else.

A parameter lock says which way is *tighter*: ``max`` (a ceiling: a smaller value is allowed),
``min`` (a floor: a larger one is), ``superset`` (a list that may only grow), ``subset`` (a list
that may only shrink) or ``exact``. A locked rule always runs: ``select``/``ignore``,
per-file-ignores, inline ignores and baseline entries cannot turn it off, and a waiver
suppresses it only when its ``approved_by`` is one of the pack's approvers. Whatever loosens a
lock is not applied, and is reported as a :class:`Violation` (TL906) naming the lock and the
pack; tightening is always allowed. Replacing a parameter group that holds a locked parameter
with something that is not an object loosens every lock in it.

Merging is type-safe and no pack changes another's code or data except through params:

- a parameter keeps its kind (a number stays a number, an object an object, key by key); a
  different kind is a PolicyError, unless a lock reports it first;
- data other than params and locks is each pack's own: a path two packs set is a PolicyError;
  the locks in the layered data keep the lowest layer's entry, as ``Locks`` does;
- each pack's modules keep their names (``<pack>/<file>``); two packs may not have the same
  name, nor give two modules the same key;
- no package of a pack may be, contain or sit inside a package of another pack (it could add
  a rule such as ``exempt := true`` that silences the other pack's findings), nor a path where
  another pack has data (regopy lets a rule shadow data: a package ``trainlint.params`` would
  replace locked parameters), nor be anywhere at or under ``data.trainlint.params`` and
  ``data.trainlint.locks``, which only layering writes.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trainlint.errors import PolicyError
from trainlint.packs import Pack, RuleMeta, module_package

DIRECTIONS = ("max", "min", "superset", "subset", "exact")
LAYERED = ("params", "locks", "fleet")
"""The keys of ``data.trainlint`` that layering writes: no pack's package may touch them."""

_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 60


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
    fleet: dict[str, ParamLock] = field(default_factory=dict)
    """By fleet key (``default-gpu``); the lock's ``path`` is ``fleet.<key>``."""

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
    _check_names(packs)
    for index, pack in enumerate(packs):
        _check_trainlint_data(pack, groups=index == 0)
        _check_reserved_packages(pack)
    packs = [_canonical_fleet(pack) for pack in packs]
    combined, locks = packs[0], Locks()
    _add_locks(locks, packs[0])
    violations: list[Violation] = []
    for pack in packs[1:]:
        combined = _unite(combined, pack)
        params, rejected = override_params(
            _params(combined), _params(pack), locks, f"pack {pack.name!r}"
        )
        combined = with_params(combined, params)
        where = f"pack {pack.name!r}"
        fleet, refused = override_fleet(fleet_data(combined), fleet_data(pack), locks, where)
        combined = with_fleet(combined, fleet)
        violations += rejected + refused
        _add_locks(locks, pack)
    return combined, locks, violations


def override_params(
    base: dict[str, Any], changes: dict[str, Any], locks: Locks, where: str
) -> tuple[dict[str, Any], list[Violation]]:
    """``base`` with ``changes`` applied group by group; a change that loosens a lock is left
    out and returned as a violation. A group that is not an object loosens the locks in it
    (and is a PolicyError where there is none); a value of another kind is a PolicyError."""
    merged = {group: dict(values) if isinstance(values, dict) else values
              for group, values in base.items()}  # fmt: skip
    violations = []
    for group, values in changes.items():
        if not isinstance(values, dict):
            violations += _replaced_group(group, values, locks, where)
            continue
        target = merged.setdefault(group, {})
        if not isinstance(target, dict):
            raise PolicyError(f"params.{group} is {_kind(target)}, not an object of parameters")
        for key, value in values.items():
            lock = locks.params.get(f"{group}.{key}")
            problem = loosens(lock, value) if lock else None
            if lock and problem:
                violations.append(Violation(f"params.{lock.path}", lock.pack, problem, where))
                continue
            if key in target and not same_kind(target[key], value):
                raise PolicyError(
                    f"{where}: params.{group}.{key}: {_shown(value)} is not the kind of value "
                    f"{_shown(target[key])} is"
                )
            target[key] = value
    return merged, violations


def override_fleet(
    base: dict[str, Any], changes: dict[str, Any], locks: Locks, where: str
) -> tuple[dict[str, Any], list[Violation]]:
    """The fleet ``base`` with the keys of ``changes`` replacing its own; a change to a locked
    key that loosens its lock (``exact``: any other value) is left out, as a violation."""
    merged = dict(base)
    violations = []
    for key, value in changes.items():
        lock = locks.fleet.get(key)
        problem = loosens(lock, value) if lock else None
        if lock and problem:
            violations.append(Violation(lock.path, lock.pack, problem, where))
        else:
            merged[key] = value
    return merged, violations


def fleet_data(pack: Pack) -> dict[str, Any]:
    """The pack's ``data.trainlint.fleet`` (an object: ``_check_trainlint_data``)."""
    value = _trainlint(pack).get("fleet", {})
    return value if isinstance(value, dict) else {}


def with_fleet(pack: Pack, fleet: dict[str, Any]) -> Pack:
    trainlint = {key: value for key, value in _trainlint(pack).items() if key != "fleet"}
    if fleet:
        trainlint["fleet"] = fleet
    return dataclasses.replace(pack, data={**pack.data, "trainlint": trainlint})


def _canonical_fleet(pack: Pack) -> Pack:
    """The pack with its fleet checked and spelled one way (catalog GPU names, ``default-gpu``),
    so that locks compare what a fleet means; a bad fleet is a PolicyError naming the pack."""
    from pydantic import ValidationError

    from trainlint.fleet import Fleet, dumped

    raw = fleet_data(pack)
    if not raw:
        return pack
    try:
        fleet = Fleet.model_validate(raw)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise PolicyError(f"pack {pack.name!r}: data.trainlint.fleet: {detail}") from None
    return with_fleet(pack, dumped(fleet))


def _replaced_group(group: str, value: Any, locks: Locks, where: str) -> list[Violation]:
    """The violations of a group replaced by a non-object; PolicyError when nothing is locked."""
    locked = [lock for path, lock in sorted(locks.params.items())
              if path.partition(".")[0] == group]  # fmt: skip
    detail = f"replaces params.{group} with {_kind(value)}, not an object of parameters"
    if not locked:
        raise PolicyError(f"{where}: {detail}")
    return [Violation(f"params.{lock.path}", lock.pack, detail, where) for lock in locked]


def same_kind(old: Any, new: Any) -> bool:
    """JSON kinds match, objects key by key; numbers are one kind, and a null default takes a
    number or a null."""
    number = (int, float)
    if old is None:
        return new is None or (isinstance(new, number) and not isinstance(new, bool))
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool)
    if isinstance(old, number):
        return isinstance(new, number) or new is None
    if isinstance(old, dict) and isinstance(new, dict):
        return all(same_kind(old[key], item) for key, item in new.items() if key in old)
    return isinstance(new, type(old))


def loosens(lock: ParamLock, value: Any) -> str | None:
    """Why ``value`` loosens ``lock``, or None when it keeps or tightens it."""
    locked, shown, was = lock.value, _shown(value), _shown(lock.value)
    if lock.direction == "exact":
        return None if value == locked else f"{shown} differs from the locked {was}"
    if lock.direction in ("max", "min"):
        if not _number(value) or not _number(locked):
            return None if value == locked else f"{shown} is not a number like {was}"
        if lock.direction == "max" and value > locked:
            return f"{shown} is above the locked maximum {was}"
        if lock.direction == "min" and value < locked:
            return f"{shown} is below the locked minimum {was}"
        return None
    if not isinstance(value, list) or not isinstance(locked, list):
        return f"{shown} is not a list like {was}"
    if lock.direction == "superset":
        missing = [item for item in locked if item not in value]
        return f"drops the locked {_shown(missing)}" if missing else None
    extra = [item for item in value if item not in locked]
    return f"adds {_shown(extra)} beyond the locked {was}" if extra else None


def with_params(pack: Pack, params: dict[str, Any]) -> Pack:
    trainlint = {**pack.data.get("trainlint", {}), "params": params}
    return dataclasses.replace(pack, data={**pack.data, "trainlint": trainlint})


def _params(pack: Pack) -> dict[str, Any]:
    value = _trainlint(pack).get("params", {})
    return value if isinstance(value, dict) else {}


def _unite(base: Pack, pack: Pack) -> Pack:
    """Both packs' modules and tests (named by pack; a repeated name is a PolicyError) and
    rules (ids and slugs must not repeat); data other than params merged where the packs do
    not overlap. The locks stay in the data, so a layered pack can be layered again (``pack
    test``, then a repo's config) without losing them."""
    rules = _unique_rules([*base.rules, *pack.rules], pack)
    modules = _add_modules(base.modules, pack, pack.modules)
    tests = _add_modules(base.tests, pack, pack.tests)
    _check_packages(base, pack)
    data = _merge_owned(_own_data(base.data), _own_data(pack.data), pack.name, "")
    trainlint = dict(data.get("trainlint", {}))
    trainlint["params"] = _params(base)  # params go through override_params and the locks
    trainlint.pop("fleet", None)  # so does the fleet, through override_fleet
    if fleet_data(base):
        trainlint["fleet"] = fleet_data(base)
    locks = _merge_locks(_trainlint(base).get("locks"), _trainlint(pack).get("locks"))
    if locks is not None:
        trainlint["locks"] = locks
    return dataclasses.replace(
        base,
        name=f"{base.name}+{pack.name}",
        modules=modules,
        tests=tests,
        data={**data, "trainlint": trainlint},
        rules=tuple(rules),
        rego_versions={**base.rego_versions, **_versions(pack)},
        rego_fallback=base.rego_fallback or pack.rego_fallback,
    )


def _versions(pack: Pack) -> dict[str, int]:
    """The pack's declared Rego versions under its modules' layered names."""
    return {_module_name(pack, file): version for file, version in pack.rego_versions.items()}


def _module_name(pack: Pack, file: str) -> str:
    return f"{pack.name}/{file}"


def _add_modules(base: dict[str, str], pack: Pack, files: dict[str, str]) -> dict[str, str]:
    """``base`` and ``pack``'s files under ``<pack>/``; a key already taken is a PolicyError
    (a pack named ``lib`` would otherwise replace the builtin ``lib/fmt.rego``)."""
    added = {_module_name(pack, file): source for file, source in files.items()}
    taken = sorted(set(added) & set(base))
    if taken:
        raise PolicyError(
            f"pack {pack.name!r}: module {taken[0]!r} would replace a module of an earlier pack; "
            "rename the pack (manifest metadata.name) or the file"
        )
    return {**base, **added}


def _check_names(packs: Sequence[Pack]) -> None:
    """Locks, TL906 and module keys name packs: two packs may not share a name."""
    seen: set[str] = set()
    for pack in packs:
        if pack.name in seen:
            raise PolicyError(
                f"two packs are named {pack.name!r} ({pack.origin or 'no origin'}); each pack "
                "needs its own name (manifest metadata.name)"
            )
        seen.add(pack.name)


def _check_trainlint_data(pack: Pack, *, groups: bool) -> None:
    """``data.trainlint``, its params and locks are objects (and, in the lowest pack, every
    parameter group): trainlint reads them as such."""
    trainlint = pack.data.get("trainlint", {})
    if not isinstance(trainlint, dict):
        raise PolicyError(
            f"pack {pack.name!r}: data.trainlint is {_kind(trainlint)}, not an object"
        )
    for key in LAYERED:
        value = trainlint.get(key, {})
        if not isinstance(value, dict):
            raise PolicyError(
                f"pack {pack.name!r}: data.trainlint.{key} is {_kind(value)}, not an object"
            )
    for group, values in trainlint.get("params", {}).items() if groups else ():
        if not isinstance(values, dict):
            raise PolicyError(
                f"pack {pack.name!r}: params.{group} is {_kind(values)}, not an object of "
                "parameters"
            )


def _check_reserved_packages(pack: Pack) -> None:
    """No package at, above or below the data layering writes (``trainlint.params``...)."""
    reserved = [("trainlint", key) for key in LAYERED]
    for file, package in _packages(pack):
        parts = tuple(package.split("."))
        for path in reserved:
            if _related(parts, path):
                raise PolicyError(
                    f"pack {pack.name!r}: {file}: package {package} overlaps "
                    f"data.{'.'.join(path)}, which only layering writes"
                )


def _check_packages(base: Pack, pack: Pack) -> None:
    """``pack``'s packages touch no package and no data of the packs below, and its data no
    package of theirs."""
    below = [(file, tuple(package.split("."))) for file, package in _packages(base)]
    for file, package in _packages(pack):
        parts = tuple(package.split("."))
        for other_file, other in below:
            if _related(parts, other):
                raise PolicyError(
                    f"pack {pack.name!r}: {file}: package {package} overlaps package "
                    f"{'.'.join(other)} of an earlier pack ({other_file}); a pack may not add "
                    "rules to another pack's packages"
                )
        if _reaches(base.data, parts):
            raise PolicyError(
                f"pack {pack.name!r}: {file}: package {package} overlaps data that an earlier "
                "pack sets"
            )
    for other_file, other in below:
        if _reaches(pack.data, other):
            raise PolicyError(
                f"pack {pack.name!r}: its data at /{'/'.join(other)} overlaps package "
                f"{'.'.join(other)} of an earlier pack ({other_file})"
            )


def _packages(pack: Pack) -> Iterable[tuple[str, str]]:
    """(file, package) of each module; a module without one was refused when it was loaded."""
    for file, source in sorted(pack.modules.items()):
        package = module_package(source)
        if package is not None:
            yield file, package


def _related(path: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """One path is the other or contains it."""
    shorter = min(len(path), len(other))
    return path[:shorter] == other[:shorter]


def _reaches(data: Any, path: tuple[str, ...]) -> bool:
    """Whether data is set at ``path``, inside it or above it (a leaf on the way)."""
    node = data
    for part in path:
        if not isinstance(node, dict):
            return True
        if part not in node:
            return False
        node = node[part]
    return True


def _own_data(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without what layering merges itself (``trainlint.params`` and ``.locks``)."""
    trainlint = data.get("trainlint")
    if not isinstance(trainlint, dict):
        return data
    rest = {key: value for key, value in trainlint.items() if key not in LAYERED}
    return {**data, "trainlint": rest}


def _merge_owned(base: dict[str, Any], top: dict[str, Any], name: str, at: str) -> dict[str, Any]:
    """``base`` and ``top`` merged where they are both objects; a value both set is a
    PolicyError (a later pack may not replace an earlier pack's data)."""
    merged = dict(base)
    for key, value in top.items():
        path = f"{at}/{key}"
        if key not in merged:
            merged[key] = value
        elif isinstance(merged[key], dict) and isinstance(value, dict):
            merged[key] = _merge_owned(merged[key], value, name, path)
        else:
            raise PolicyError(
                f"pack {name!r}: data at {path} is already set by an earlier pack; only "
                "data.trainlint.params may change it (under its locks)"
            )
    return merged


def _merge_locks(base: Any, top: Any) -> dict[str, Any] | None:
    """The locks of both packs, the lower layer's entry kept (as ``_add_locks`` keeps it)."""
    if base is None and top is None:
        return None
    below, above = base or {}, top or {}
    return {
        part: {**(above.get(part) or {}), **(below.get(part) or {})}
        for part in ("params", "rules", "fleet")
        if part in below or part in above
    }


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
    raw = _trainlint(pack).get("locks")
    if raw is None:
        return
    if not isinstance(raw, dict) or set(raw) - {"params", "rules", "fleet"}:
        raise PolicyError(
            f"pack {pack.name!r}: data.trainlint.locks must hold params and rules (and fleet), "
            "nothing else"
        )
    _add_fleet_locks(locks, pack, raw.get("fleet") or {})
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


def _add_fleet_locks(locks: Locks, pack: Pack, raw: Any) -> None:
    """``locks.fleet``: fleet key → direction; the locked value is the pack's own fleet's."""
    fleet = fleet_data(pack)
    for key, direction in raw.items() if isinstance(raw, dict) else ():
        if direction not in DIRECTIONS:
            raise PolicyError(
                f"pack {pack.name!r}: fleet lock {key!r}: want '<fleet key>': one of {DIRECTIONS}"
            )
        if key not in fleet:
            raise PolicyError(f"pack {pack.name!r}: fleet lock {key!r} names no key its fleet sets")
        if key not in locks.fleet:  # the lowest layer's lock holds
            locks.fleet[key] = ParamLock(f"fleet.{key}", direction, fleet[key], pack.name)


def _trainlint(pack: Pack) -> dict[str, Any]:
    value = pack.data.get("trainlint", {})
    return value if isinstance(value, dict) else {}


def _kind(value: Any) -> str:
    """A JSON value's kind and a short form of it, for messages."""
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    kind = next((name for cls, name in kinds.items() if isinstance(value, cls)), None)
    if kind is None:
        kind = "null" if value is None else "a number"
    return f"{kind} ({_shown(value)})"


def _shown(value: Any) -> str:
    return _SHOWN.repr(value)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
