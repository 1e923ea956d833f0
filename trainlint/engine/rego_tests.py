"""Run a pack's Rego unit tests the way ``opa test`` does, on regorus.

Conventions: tests live in ``*_test.rego``; every rule named ``test_*`` is one test and passes
when it evaluates to ``true`` (``todo_*`` rules are skipped, as in OPA). Tests mock with
``with input as {...}`` and ``with data.trainlint.params... as ...``. regorus is used whatever
the check engine: regopy crashes on ``with input as`` applied to a partial-set rule.

Tests are policy code like any other: unless trainlint ships every module and test, they are
capability-checked, compiled and run in a confined worker (``watchdog``), each test bounded in
time; a test that runs out of time fails with that reason and the next one gets a fresh worker.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from trainlint.engine.capabilities import refuse_denied_calls
from trainlint.engine.rego_version import add_module, version_of
from trainlint.engine.results import one_line
from trainlint.engine.watchdog import Worker, shipped, shipped_sources
from trainlint.errors import PolicyError
from trainlint.packs import Pack, module_package

_TEST_RULE = re.compile(r"^(test_\w+)\b", re.MULTILINE)


@dataclass(frozen=True)
class RegoTestResult:
    """One ``test_*`` rule: ``name`` is ``package.rule``; ``error`` says why it failed."""

    name: str
    passed: bool
    error: str | None = None
    file: str = ""


def run_rego_tests(pack: Pack) -> list[RegoTestResult]:
    """Compile the pack with its tests once, then evaluate every test rule in file order."""
    tests = [
        (package, rule, file)
        for file, source in sorted(pack.tests.items())
        for package, rule in _test_rules(file, source)
    ]
    sources = {**pack.modules, **pack.tests}
    if shipped(sources):
        engine = _engine(pack)
        return [_run(engine, *test) for test in tests]

    def runner() -> _Runner:
        refuse_denied_calls(sources, trusted=shipped_sources())
        return _Runner(_engine(pack))

    if not hasattr(os, "fork"):
        local = runner()
        return [_run(local.engine, *test) for test in tests]
    return _run_confined(Worker("regorus", runner), tests)


def _run_confined(worker: Worker, tests: list[tuple[str, str, str]]) -> list[RegoTestResult]:
    """Each test in the worker; one that breaks the worker's limits fails with the reason."""
    results = []
    try:
        for package, rule, file in tests:
            try:
                results.append(RegoTestResult(**worker.call("run", package, rule, file)))
            except PolicyError as exc:
                results.append(RegoTestResult(f"{package}.{rule}", False, str(exc), file))
    finally:
        worker.close()
    return results


@dataclass
class _Runner:
    """The compiled tests, as the confined worker holds them."""

    engine: Any

    def run(self, package: str, rule: str, file: str) -> dict[str, Any]:
        return dataclasses.asdict(_run(self.engine, package, rule, file))


def list_rego_tests(pack: Pack) -> list[str]:
    """``package.rule`` of every test in the pack, without running any."""
    return [
        f"{package}.{rule}"
        for file, source in sorted(pack.tests.items())
        for package, rule in _test_rules(file, source)
    ]


def _engine(pack: Pack) -> Any:
    import regorus

    engine = regorus.Engine()

    def add(name: str, source: str) -> None:
        try:
            engine.add_policy(name, source)
        except (RuntimeError, ValueError) as exc:
            raise PolicyError(f"regorus: {one_line(str(exc))}") from None

    for file, source in {**pack.modules, **pack.tests}.items():
        add_module(engine, add, f"{pack.name}/{file}", source, version_of(pack, file))
    try:
        engine.add_data_json(json.dumps(pack.data))
    except (RuntimeError, ValueError) as exc:
        raise PolicyError(f"regorus: {one_line(str(exc))}") from None
    return engine


def _test_rules(file: str, source: str) -> list[tuple[str, str]]:
    """(package, rule) for each distinct ``test_*`` rule head, in source order."""
    package = module_package(source)
    if package is None:
        raise PolicyError(f"{file}: no package declaration")
    names = dict.fromkeys(_TEST_RULE.findall(source))
    return [(package, name) for name in names]


def _run(engine: Any, package: str, rule: str, file: str) -> RegoTestResult:
    """Evaluate one test rule; an error or any value but ``true`` fails it."""
    name = f"{package}.{rule}"
    try:
        result = json.loads(engine.eval_query_as_json(f"data.{package}.{rule}"))
    except (RuntimeError, ValueError) as exc:
        return RegoTestResult(name, False, one_line(str(exc)), file)
    values = [row["expressions"][0]["value"] for row in result.get("result") or []]
    if values == [True]:
        return RegoTestResult(name, True, None, file)
    got = "undefined" if not values else json.dumps(values[0])
    return RegoTestResult(name, False, f"expected true, got {got}", file)
