"""Data-driven rule cases (``tests/rules/cases/TLxxx.yaml``), run on every engine backend.

A case file names one rule and lists cases; each case writes ``files`` (path → text) into an
empty folder, optionally a repo ``config`` (written as ``.trainlint.yaml``), runs ``check`` on
the folder with only that rule selected (or the case's ``select`` list), and compares the
rule's findings with ``expect``: every ``{file, line, column}`` exactly, plus ``message``
substrings when given. An empty ``expect`` is a case that must not fire. Every rule of the
builtin pack has a case file with at least three firing and two non-firing cases. The case
runner is ``trainlint.packs.testing`` (also behind ``trainlint pack test``), so the format has
one implementation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from trainlint import engine as engines
from trainlint.packs import load_builtin_pack
from trainlint.packs.testing import run_case

CASES = Path(__file__).parent / "cases"
MIN_FIRING, MIN_QUIET = 3, 2


def _load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict) and {"rule", "cases"} <= set(document), path
    return document


def _cases() -> list[Any]:
    params = []
    for path in sorted(CASES.glob("*.yaml")):
        document = _load(path)
        for index, case in enumerate(document["cases"]):
            name = f"{document['rule']}-{index}-{case.get('name', '')}".replace(" ", "_")
            params.append(pytest.param(document["rule"], case, id=name))
    return params


@pytest.mark.parametrize("engine_name", engines.available_engines())
@pytest.mark.parametrize(("rule", "case"), _cases())
def test_case(rule: str, case: dict[str, Any], engine_name: str, tmp_path: Path) -> None:
    problems = run_case(rule, case, engine_name=engine_name, workdir=tmp_path)
    assert not problems, problems


def test_every_rule_has_enough_cases() -> None:
    counts = {}
    for path in CASES.glob("*.yaml"):
        document = _load(path)
        assert path.stem == document["rule"], path
        firing = sum(1 for case in document["cases"] if case.get("expect"))
        counts[document["rule"]] = (firing, len(document["cases"]) - firing)
    for rule in load_builtin_pack().rules:
        firing, quiet = counts.get(rule.id, (0, 0))
        assert firing >= MIN_FIRING and quiet >= MIN_QUIET, (rule.id, firing, quiet)
