"""Layering: builtin < org packs < repo config, with locks that only ever tighten."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from trainlint.errors import PolicyError
from trainlint.packs import Pack, load_builtin_pack
from trainlint.packs.layering import Locks, ParamLock, layer, loosens, override_params

BUILTIN = load_builtin_pack()


def org(name: str, params: dict[str, Any], locks: dict[str, Any] | None = None) -> Pack:
    trainlint: dict[str, Any] = {"params": params}
    if locks is not None:
        trainlint["locks"] = locks
    return dataclasses.replace(
        BUILTIN, name=name, modules={}, tests={}, rules=(), data={"trainlint": trainlint}
    )


def params_of(pack: Pack) -> dict[str, Any]:
    params: dict[str, Any] = pack.data["trainlint"]["params"]
    return params


ACME = org(
    "acme",
    {
        "checkpoint_too_frequent": {"max_overhead_fraction": 0.03},
        "missing_cost_tags": {"required_tags": ["team", "project", "cost-center"]},
    },
    {
        "params": {
            "checkpoint_too_frequent.max_overhead_fraction": "max",
            "missing_cost_tags.required_tags": "superset",
        },
        "rules": {"tl401": {"approvers": ["platform-team"]}},
    },
)


def test_org_pack_overrides_builtin_params_and_keeps_the_rest() -> None:
    pack, locks, violations = layer([BUILTIN, ACME])
    params = params_of(pack)
    assert params["checkpoint_too_frequent"]["max_overhead_fraction"] == 0.03
    assert params["missing_cost_tags"]["required_tags"] == ["team", "project", "cost-center"]
    assert params["log_every_step"] == params_of(BUILTIN)["log_every_step"]
    assert violations == []
    lock = locks.rule("TL401")
    assert lock is not None and lock.approvers == ("platform-team",)
    assert pack.rules == BUILTIN.rules


def test_a_later_pack_may_tighten_but_not_loosen() -> None:
    team = org(
        "team",
        {
            "checkpoint_too_frequent": {"max_overhead_fraction": 0.5},
            "missing_cost_tags": {"required_tags": ["team", "project", "cost-center", "owner"]},
        },
    )
    pack, _, violations = layer([BUILTIN, ACME, team])
    params = params_of(pack)
    assert params["checkpoint_too_frequent"]["max_overhead_fraction"] == 0.03
    assert params["missing_cost_tags"]["required_tags"][-1] == "owner"
    (violation,) = violations
    assert violation.lock == "params.checkpoint_too_frequent.max_overhead_fraction"
    assert violation.pack == "acme" and violation.where == "pack 'team'"
    assert "above the locked maximum 0.03" in violation.detail


@pytest.mark.parametrize(
    ("direction", "locked", "value", "loose"),
    [
        ("max", 0.05, 0.02, False),
        ("max", 0.05, 0.05, False),
        ("max", 0.05, 0.5, True),
        ("min", 2, 4, False),
        ("min", 2, 1, True),
        ("superset", ["team"], ["team", "owner"], False),
        ("superset", ["team", "project"], ["team"], True),
        ("subset", ["A100-80GB", "H100-SXM"], ["H100-SXM"], False),
        ("subset", ["A100-80GB"], ["A100-80GB", "B200"], True),
        ("exact", {"H100-SXM": 2.1}, {"H100-SXM": 2.1}, False),
        ("exact", {"H100-SXM": 2.1}, {"H100-SXM": 3.0}, True),
        ("max", 0.05, "lots", True),
        ("superset", ["team"], "team", True),
    ],
)
def test_lock_directions(direction: str, locked: Any, value: Any, loose: bool) -> None:
    lock = ParamLock("g.k", direction, locked, "acme")
    assert (loosens(lock, value) is not None) == loose


def test_override_params_leaves_out_what_loosens() -> None:
    locks = Locks(params={"g.k": ParamLock("g.k", "max", 1, "acme")})
    merged, violations = override_params(
        {"g": {"k": 1, "j": 0}}, {"g": {"k": 5, "j": 3}, "h": {"x": 1}}, locks, "the repo config"
    )
    assert merged == {"g": {"k": 1, "j": 3}, "h": {"x": 1}}
    assert [v.where for v in violations] == ["the repo config"]


@pytest.mark.parametrize(
    ("locks", "message"),
    [
        ({"params": {"checkpoint_too_frequent.max_overhead_fraction": "sideways"}}, "one of"),
        ({"params": {"nothing.here": "max"}}, "names no parameter it sets"),
        ({"weird": {}}, "must hold params and rules"),
    ],
)
def test_malformed_locks_are_policy_errors(locks: dict[str, Any], message: str) -> None:
    bad = org("bad", {"checkpoint_too_frequent": {"max_overhead_fraction": 0.03}}, locks)
    with pytest.raises(PolicyError, match=message):
        layer([BUILTIN, bad])


def test_a_pack_repeating_a_builtin_rule_id_is_refused() -> None:
    clone = dataclasses.replace(BUILTIN, name="clone", data={})
    with pytest.raises(PolicyError, match="declared by both"):
        layer([BUILTIN, clone])


def test_org_pack_rules_and_modules_join_the_builtin_ones() -> None:
    rule = dataclasses.replace(BUILTIN.rules[0], id="ACME001", slug="acme-rule",
                               package="trainlint.rules.acme_rule")  # fmt: skip
    extra = dataclasses.replace(
        org("acme", {}), modules={"acme_rule.rego": "package trainlint.rules.acme_rule"},
        rules=(rule,),
    )  # fmt: skip
    pack, _, _ = layer([BUILTIN, extra])
    assert "acme/acme_rule.rego" in pack.modules and set(BUILTIN.modules) <= set(pack.modules)
    assert pack.get_rule("ACME001") is rule and pack.get_rule("TL201") is not None
