"""The second embedded backend: regopy, the Python binding of Microsoft's ``rego-cpp``.

The pack is compiled once into a bundle (``Interpreter.build``) and each job runs that plan
(``query_bundle``): about 4x faster per job than ``query``, which recompiles every time.

Known limits, measured with regopy 1.5.2 (the builtin rules avoid them):
- ``with input as …`` on a partial-set rule crashes the process, so test modules never run here
  (``rego_tests`` uses regorus);
- two packages defining functions of the same name with different arities make queries fail
  or crash the process, so such packs are refused before they reach the interpreter;
- ``some k, v in x`` inside a comprehension does not parse;
- ``sprintf("%s", [s])`` where ``s`` comes from a builtin such as ``concat`` quotes ``s`` and
  produces invalid JSON, ``%d`` above 2**31 wraps, and ``null > 3`` is true;
- errors are printed on stdout unless the interpreter's log level is NONE.
"""

from __future__ import annotations

import bisect
import importlib
import json
import re
from typing import Any

from trainlint.engine import collect
from trainlint.engine.rego_version import refuse_v0
from trainlint.engine.results import findings_by_rule, normalise
from trainlint.engine.watchdog import GuardedEngine, compile_confined
from trainlint.errors import PolicyError
from trainlint.packs import Pack, module_package

_FUNCTION_HEAD = re.compile(r"^([A-Za-z_]\w*)\(", re.MULTILINE)
_ERROR = re.compile(
    r"\(error(?:\s+\d+:(?P<file>[^|\s]*)\|(?P<offset>\d+)\|\d+)?\s*\(errormsg (?P<n>\d+):"
)


class RegopyEngine:
    """A pack compiled once into a ``regopy.Interpreter``."""

    name: str = "regopy"

    def __init__(self, pack: Pack, *, check: bool = True) -> None:
        import regopy

        self._interpreter: Any = regopy.Interpreter()
        self._interpreter.log_level = regopy.LogLevel.NONE
        self._interpreter.strict_built_in_errors = False  # OPA's default: a failing builtin
        # makes its expression undefined (``builtin_errors``); stated, not left to a default
        self._sources = {f"{pack.name}/{file}": source for file, source in pack.modules.items()}
        refuse_v0(pack, self.name)
        _refuse_arity_clashes(self._sources)
        for name, source in self._sources.items():
            self._guard(self._interpreter.add_module, name, source)
        self._guard(self._interpreter.add_data_json, json.dumps(pack.data))
        collector = collect.collector_module(rule.package for rule in pack.rules)
        self._guard(self._interpreter.add_module, collect.FILE, collector)
        self._bundle = self._guard(self._interpreter.build, collect.QUERY)
        if check:
            self.check()

    def check(self) -> None:
        """Evaluate once with an empty input, so a broken module fails when the pack loads."""
        self.evaluate({})

    def evaluate(self, job_input: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """Set the job as input and read every rule package's findings."""
        self._guard(self._interpreter.set_input_term, json.dumps(job_input))
        output = self._guard(self._interpreter.query_bundle, self._bundle)
        if not output.ok():
            raise PolicyError(f"regopy: evaluation failed: {_output_error(output)}")
        text = str(output)
        if text == "undefined":
            return {}
        return findings_by_rule(json.loads(text)["expressions"][0])

    def query(self, job_input: dict[str, Any], query: str) -> Any:
        """The value of ``query`` (a reference such as ``data.main.deny``) for this job.

        ``query`` compiles the query on each call; conftest-style rules are few and small.
        """
        self._guard(self._interpreter.set_input_term, json.dumps(job_input))
        output = self._guard(self._interpreter.query, query)
        if not output.ok():
            raise PolicyError(f"regopy: evaluation failed: {_output_error(output)}")
        text = str(output)
        return None if text == "undefined" else normalise(json.loads(text)["expressions"][0])

    def _guard(self, method: Any, *args: Any) -> Any:
        """Run a regopy call; RegoError and non-JSON output become PolicyError."""
        try:
            return method(*args)
        except json.JSONDecodeError as exc:  # an error dump, or regopy printed invalid JSON
            error = _describe(exc.doc, self._sources) if exc.doc.startswith("(error") else None
            detail = error or f"the engine returned invalid JSON ({exc})"
            raise PolicyError(f"regopy: evaluation failed: {detail}") from None
        except Exception as exc:  # regopy.RegoError derives from Exception only
            raise PolicyError(f"regopy: {_describe(str(exc), self._sources)}") from None


def create(pack: Pack) -> RegopyEngine | GuardedEngine:
    """The compiled pack; in a confined worker unless trainlint ships every module."""
    return compile_confined(
        RegopyEngine.name, pack.modules, lambda check: RegopyEngine(pack, check=check)
    )


def _refuse_arity_clashes(sources: dict[str, str]) -> None:
    """PolicyError, instead of a crash, when packages share a function name at other arities."""
    seen: dict[str, tuple[int, str]] = {}
    for file, source in sources.items():
        package = module_package(source) or ""
        for name, arity in _functions(source):
            first = seen.setdefault(name, (arity, package))
            if first[0] != arity and first[1] != package:
                raise PolicyError(
                    f"regopy: {file}: function {name}/{arity} clashes with {name}/{first[0]} in "
                    f"package {first[1]}; regopy cannot evaluate this pack (rename one, or use the "
                    "regorus engine)"
                )


def _functions(source: str) -> list[tuple[str, int]]:
    """(name, arity) of each function head at the start of a line."""
    return [(m[1], _arity(source, m.end())) for m in _FUNCTION_HEAD.finditer(source)]


def _arity(source: str, start: int) -> int:
    """Number of arguments in the parenthesised list that opens just before ``start``."""
    depth, commas, quoted = 0, 0, False
    for index in range(start, len(source)):
        char = source[index]
        if quoted:
            quoted = char != '"' or source[index - 1] == "\\"
        elif char == '"':
            quoted = True
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                empty = not source[start:index].strip()
                return 0 if empty else commas + 1
            depth -= 1
        elif char == "," and depth == 0:
            commas += 1
    return commas + 1


def _describe(error: str, sources: dict[str, str]) -> str:
    """``file:line:col: message`` for each error in regopy's S-expression error dump."""
    found = []
    for match in _ERROR.finditer(error):
        message = error[match.end() : match.end() + int(match["n"])]
        if match["file"]:
            where = _location(sources.get(match["file"], ""), int(match["offset"]))
            message = f"{match['file']}:{where}: {message}"
        found.append(message)
    lines = error.strip().splitlines()
    return "; ".join(dict.fromkeys(found)) or (lines[0] if lines else "unknown error")


def _location(source: str, offset: int) -> str:
    """1-based ``line:column`` of a character offset."""
    starts = [0] + [index + 1 for index, char in enumerate(source) if char == "\n"]
    line = bisect.bisect_right(starts, offset)
    return f"{line}:{offset - starts[line - 1] + 1}"


def _output_error(output: Any) -> str:
    """The message and code of a failed query; regopy prints only "<error>" for it."""
    try:
        shared: Any = importlib.import_module("regopy.rego_shared")
        error = output.node().at(0)
        message, code = (shared.rego_node_value(error.at(index)._impl) for index in (0, 2))
        return f"{message} ({code})"
    except Exception:  # private API: any failure falls back to regopy's own text
        return str(output)
