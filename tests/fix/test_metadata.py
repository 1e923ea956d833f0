"""A rule's METADATA says whether it has a fix and whether it is safe (``custom.autofix``);
the fixers and the METADATA agree, and ``trainlint rule`` shows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from trainlint.cli import main
from trainlint.errors import PolicyError
from trainlint.fix.rules import FIXERS
from trainlint.packs import load_builtin_pack, load_pack

RULE = """\
# METADATA
# title: sample-rule
# description: Something worth knowing.
# custom:
#   id: X001
#   severity: warning
#   category: testing
#   remediation: Do the other thing.
{autofix}package trainlint.rules.sample_rule

import rego.v1

findings := set()
"""


def test_every_fixer_is_declared_and_every_declared_fix_has_a_fixer() -> None:
    declared = {rule.slug for rule in load_builtin_pack().rules if rule.autofix is not None}
    assert declared == set(FIXERS)


def test_unsafe_fixes_are_the_ones_that_change_the_training() -> None:
    unsafe = {r.slug for r in load_builtin_pack().rules if r.autofix and not r.autofix.safe}
    assert unsafe == {"needless-recompute", "checkpoint-too-frequent", "no-mixed-precision"}


def test_autofix_is_parsed(tmp_path: Path) -> None:
    block = "#   autofix:\n#     safe: false\n#     description: Halve it.\n"
    (tmp_path / "sample_rule.rego").write_text(RULE.format(autofix=block))
    [rule] = load_pack(tmp_path).rules
    assert rule.autofix is not None and not rule.autofix.safe
    assert rule.autofix.description == "Halve it."


@pytest.mark.parametrize(
    "block",
    [
        "#   autofix: yes\n",
        "#   autofix:\n#     description: Halve it.\n",
        "#   autofix:\n#     safe: maybe\n#     description: Halve it.\n",
        "#   autofix:\n#     safe: true\n",
    ],
)
def test_malformed_autofix_is_a_metadata_problem(tmp_path: Path, block: str) -> None:
    (tmp_path / "sample_rule.rego").write_text(RULE.format(autofix=block))
    with pytest.raises(PolicyError, match=r"custom\.autofix"):
        load_pack(tmp_path)


def test_rule_command_says_whether_the_fix_is_safe(in_tmp: Path) -> None:
    safe = CliRunner().invoke(main, ["rule", "TL301"]).output
    unsafe = CliRunner().invoke(main, ["rule", "TL107"]).output
    none = CliRunner().invoke(main, ["rule", "TL401"]).output
    assert "Fix is available (safe: `trainlint check --fix`)" in safe
    assert "Fix is available (unsafe: `trainlint check --fix --unsafe-fixes`)" in unsafe
    assert "Fix is available" not in none
