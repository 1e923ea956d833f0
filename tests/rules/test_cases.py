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

from tests.fast_loop import engines
from trainlint.packs import load_builtin_pack
from trainlint.packs.testing import run_case

CASES = Path(__file__).parent / "cases"
MIN_FIRING, MIN_QUIET = 3, 2
# Rules whose input comes from the org's scan database (check --db), not from files: their
# cases both ways run against real databases in tests/scans.
FROM_DATABASE = {"TL406", "TL407"}


def _load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict) and {"rule", "cases"} <= set(document), path
    return document


def _fast(cases: list[dict[str, Any]]) -> set[int]:
    """The indexes of a rule's first firing case and its first quiet case."""
    firing = [bool(case.get("expect")) for case in cases]
    return {firing.index(fires) for fires in (True, False) if fires in firing}


def _cases() -> list[Any]:
    """Every case of every rule. The fast loop runs each rule's first firing and first quiet
    case; the others are ``slow`` (~30 ms a case, ~200 cases)."""
    params = []
    for path in sorted(CASES.glob("*.yaml")):
        document = _load(path)
        fast = _fast(document["cases"])
        for index, case in enumerate(document["cases"]):
            name = f"{document['rule']}-{index}-{case.get('name', '')}".replace(" ", "_")
            marks = [] if index in fast else [pytest.mark.slow]
            params.append(pytest.param(document["rule"], case, id=name, marks=marks))
    return params


# Every case on every engine; regopy's (~0.15 s a case) only in the full run (tests/fast_loop.py).
@pytest.mark.parametrize("engine_name", engines())
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
        if rule.id in FROM_DATABASE:
            continue
        firing, quiet = counts.get(rule.id, (0, 0))
        assert firing >= MIN_FIRING and quiet >= MIN_QUIET, (rule.id, firing, quiet)
