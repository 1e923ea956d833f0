"""The default backend: regorus, Microsoft's Rego interpreter in Rust (``gordon-to-regorus``).

Queries use the ``*_as_json`` calls: ``eval_rule`` returns Python sets of dicts and fails with
"unhashable type: dict". regorus checks a module (unsafe variables, unknown functions) only
when a query first reaches it, so the constructor evaluates all of ``data`` once with an empty
input: a broken pack is reported when it is loaded, not on the first job, and never missed
because no rule used the broken module. Only modules trainlint ships skip that check (~10 ms
of every start; the test suite compiles and evaluates them). A pack with modules trainlint does
not ship is compiled and evaluated in a confined worker (``watchdog``: time, memory, no
environment) after ``capabilities`` has refused any call that would leave the sandbox.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from trainlint.engine import collect
from trainlint.engine.builtin_errors import Notices, is_builtin_error
from trainlint.engine.rego_version import add_module, version_of
from trainlint.engine.results import findings_by_rule, normalise, one_line
from trainlint.engine.watchdog import GuardedEngine, compile_confined
from trainlint.errors import PolicyError
from trainlint.packs import Pack

UNDEFINED = "<undefined>"
"""What ``eval_rule_as_json`` returns for a rule with no value."""
NO_RULE = "not a valid rule path"
"""Its error for a rule no module defines."""


class RegorusEngine:
    """A pack compiled once into a ``regorus.Engine``."""

    name: str = "regorus"

    def __init__(self, pack: Pack, *, check: bool = True) -> None:
        import regorus

        self._engine: Any = regorus.Engine()
        add = functools.partial(_call, self._engine.add_policy)
        for file, source in pack.modules.items():
            version = version_of(pack, file)
            add_module(self._engine, add, f"{pack.name}/{file}", source, version)
        self._packages = sorted({rule.package for rule in pack.rules})
        self._notices = Notices(self.name)
        collector = collect.collector_module(self._packages)
        _call(self._engine.add_policy, collect.FILE, collector)
        _call(self._engine.add_data_json, json.dumps(pack.data))
        if check:
            self.check()

    def check(self) -> None:
        """Evaluate all of ``data`` once with an empty input, so a broken module fails now."""
        _call(self._engine.set_input_json, "{}")
        try:
            _call(self._engine.eval_query_as_json, "data")
        except PolicyError as exc:
            if not is_builtin_error(exc):  # it compiled; a builtin failing is OPA's undefined
                raise

    def evaluate(self, job_input: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """Set the job as input and read every rule package's findings; when a builtin fails,
        rule by rule, the failing rules undefined (``builtin_errors``)."""
        _call(self._engine.set_input_json, json.dumps(job_input))
        try:
            collected = json.loads(_call(self._engine.eval_rule_as_json, collect.QUERY))
        except PolicyError as exc:
            if not is_builtin_error(exc):
                raise
            collected = self._rule_by_rule(job_input.get("id"))
        return findings_by_rule(collected)

    def query(self, job_input: dict[str, Any], query: str) -> Any:
        """The value of ``query`` (a reference such as ``data.main.deny``) for this job;
        undefined (None) when a builtin fails in it."""
        _call(self._engine.set_input_json, json.dumps(job_input))
        try:
            return normalise(_value(_call(self._engine.eval_query_as_json, query)))
        except PolicyError as exc:
            if not is_builtin_error(exc):
                raise
            self._notices.undefined(query, job_input.get("id"), exc)
            return None

    def _rule_by_rule(self, job: object) -> dict[str, Any]:
        """The collector's document, each rule package evaluated alone (the input is set)."""
        collected: dict[str, Any] = {}
        for package in self._packages:
            try:
                rule = f"data.{package}.findings"
                value = json.loads(_call(self._engine.eval_rule_as_json, rule))
            except PolicyError as exc:
                if NO_RULE in str(exc):  # a rule package without findings: left out
                    continue
                if not is_builtin_error(exc):
                    raise
                self._notices.undefined(package, job, exc)
                value = []  # the failing body matched nothing: OPA's set is empty
            if value != UNDEFINED:
                collected[package.rsplit(".", 1)[-1]] = {"findings": value}
        return collected


def create(pack: Pack) -> RegorusEngine | GuardedEngine:
    """The compiled pack; in a confined worker unless trainlint ships every module."""
    return compile_confined(
        RegorusEngine.name, pack.modules, lambda check: RegorusEngine(pack, check=check)
    )


def _call(method: Callable[..., Any], *args: str) -> Any:
    """Run a regorus call; its RuntimeError (with file:line:col) becomes a PolicyError."""
    try:
        return method(*args)
    except (RuntimeError, ValueError) as exc:
        raise PolicyError(f"regorus: {one_line(str(exc))}") from None


def _value(result_json: str) -> Any:
    """The query's value; ``None`` when undefined (no rule package in the pack)."""
    results = json.loads(result_json).get("result") or []
    return results[0]["expressions"][0]["value"] if results else None
