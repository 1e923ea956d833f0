"""``trainlint pack test``: a pack's Rego unit tests and its data-driven cases, one report.

Rego tests follow ``opa test``: every ``test_*`` rule of a ``*_test.rego`` file is a test that
passes when it is ``true``; ``todo_*`` rules are reported as skipped (run by
``trainlint.engine.rego_tests`` on regorus, whatever the check engine).

Cases are the builtin rules' format (``tests/rules/cases/TLxxx.yaml``): a YAML file names one
rule and lists cases; each case writes ``files`` (path → text) into an empty folder, optionally
a repo ``config`` (written as ``.trainlint.yaml``), runs ``check`` on the folder with only that
rule selected (or the case's ``select`` list), and compares the rule's unsuppressed findings
with ``expect``: every ``{file, line, column}`` exactly, plus ``message`` substrings (a string
or a list) when given. An empty ``expect`` is a case that must not fire. A pack keeps its cases
in ``tests/cases/*.yaml`` or ``cases/*.yaml`` (or anywhere, with ``--cases DIR``).

Each result carries its location (``file:line`` of the test rule or of the case in its YAML
file). Running a case changes the working directory while it runs (findings name files
relative to it), so cases run one at a time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from trainlint.engine import DEFAULT_ENGINE
from trainlint.engine.rego_tests import run_rego_tests
from trainlint.errors import ConfigError, TrainlintError
from trainlint.lint import CheckOptions, check
from trainlint.packs import Pack, load_builtin_pack, load_pack, module_package
from trainlint.packs.layering import layer
from trainlint.workdir import working_directory

Status = Literal["passed", "failed", "skipped"]
CASE_DIRS = ("tests/cases", "cases")
_TODO_RULE = re.compile(r"^(todo_\w+)\b", re.MULTILINE)


@dataclass(frozen=True)
class TestResult:
    """One Rego test or one case: what it is, where it is written, and how it went."""

    __test__ = False  # not a pytest class

    kind: Literal["rego", "case"]
    name: str
    location: str  # file:line
    status: Status
    detail: str | None = None


@dataclass
class PackTestReport:
    __test__ = False

    results: list[TestResult] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(1 for result in self.results if result.status == status)

    @property
    def ok(self) -> bool:
        """Something ran and nothing failed."""
        return self.count("failed") == 0 and self.count("passed") > 0

    def summary(self) -> str:
        rego = sum(1 for r in self.results if r.kind == "rego")
        cases = len(self.results) - rego
        if not self.results:
            return "No tests found (no *_test.rego test_ rules and no case files)."
        counts = ", ".join(f"{self.count(s)} {s}" for s in ("passed", "failed", "skipped"))
        return f"{counts} ({rego} Rego tests, {cases} cases)."


LIBRARY_PREFIX = "trainlint.lib."  # the builtin helper packages org rules may import


@dataclass(frozen=True)
class CaseFile:
    """A case file: the rule it tests and its cases, each with its line in the file."""

    path: Path
    rule: str
    cases: list[tuple[int, dict[str, Any]]]


def run_tests(
    pack: Pack,
    pack_root: str,
    case_dirs: Sequence[Path] = (),
    engine_name: str = DEFAULT_ENGINE,
) -> PackTestReport:
    """The pack's Rego tests, then its cases (from ``case_dirs``); ``pack_root`` prefixes the
    test files' names in locations (the pack directory as the user wrote it, or "").

    An org pack is tested the way repositories will run it: its Rego tests see the builtin
    helper libraries (``data.trainlint.lib``), and its cases run layered over the builtin pack.
    """
    builtin = load_builtin_pack()
    tested, checked = pack, pack
    if pack.name != builtin.name:
        libraries = {f"{builtin.name}/{file}": source for file, source in builtin.modules.items()
                     if (module_package(source) or "").startswith(LIBRARY_PREFIX)}  # fmt: skip
        tested = dataclasses.replace(pack, modules={**libraries, **pack.modules})
        checked = layer([builtin, pack])[0]
    report = PackTestReport(rego_test_results(tested, pack_root))
    for directory in case_dirs:
        for case_file in load_case_files(directory):
            report.results.extend(case_results(case_file, checked, engine_name))
    return report


def run_pack_tests(
    path: Path, case_dirs: Sequence[Path] = (), engine_name: str = DEFAULT_ENGINE
) -> PackTestReport:
    """``trainlint pack test PATH``: load the pack (directory or bundle) and run its Rego tests
    and cases: those of ``case_dirs`` when given, else its ``tests/cases`` / ``cases``."""
    pack = load_pack(path)
    chosen = list(case_dirs) or (default_case_dirs(path) if path.is_dir() else [])
    return run_tests(pack, str(path) if path.is_dir() else "", chosen, engine_name)


def default_case_dirs(pack_dir: Path) -> list[Path]:
    """``tests/cases`` and ``cases`` inside a pack directory, those that exist."""
    return [pack_dir / name for name in CASE_DIRS if (pack_dir / name).is_dir()]


def rego_test_results(pack: Pack, pack_root: str = "") -> list[TestResult]:
    """Every ``test_*`` rule (run) and ``todo_*`` rule (skipped), in file and line order."""
    prefix = f"{pack_root.rstrip('/')}/" if pack_root else ""
    lines = {file: source.splitlines() for file, source in pack.tests.items()}
    results = [
        TestResult(
            "rego",
            outcome.name,
            f"{prefix}{outcome.file}:{_line(lines, outcome)}",
            "passed" if outcome.passed else "failed",
            outcome.error,
        )
        for outcome in run_rego_tests(pack)
    ]
    for file, source in sorted(pack.tests.items()):
        package = module_package(source) or ""
        for name in dict.fromkeys(_TODO_RULE.findall(source)):
            where = f"{prefix}{file}:{_first_line(lines[file], name)}"
            results.append(TestResult("rego", f"{package}.{name}", where, "skipped", "todo"))
    return sorted(results, key=_order)


def load_case_files(directory: Path) -> list[CaseFile]:
    """The ``*.yaml`` case files of a directory, sorted; ConfigError on a malformed one."""
    if not directory.is_dir():
        raise ConfigError(f"{directory}: cases directory not found")
    return [load_case_file(path) for path in sorted(directory.glob("*.yaml"))]


def load_case_file(path: Path) -> CaseFile:
    """One case file with the line of each case (from the YAML node positions)."""
    try:
        text = path.read_text(encoding="utf-8")
        document = yaml.safe_load(text)
        node = yaml.compose(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the case file: {exc}") from None
    cases = document.get("cases") if isinstance(document, dict) else None
    rule = document.get("rule") if isinstance(document, dict) else None
    if not isinstance(rule, str) or not isinstance(cases, list):
        raise ConfigError(f"{path}: a case file needs 'rule' (a rule id) and a 'cases' list")
    lines = _case_lines(node, len(cases))
    for index, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("files"), dict):
            raise ConfigError(f"{path}: case {index} needs 'files' (a mapping of path → text)")
        _check_expect(f"{path}:{lines[index]}: case {index}", case.get("expect"))
    return CaseFile(path, rule, list(zip(lines, cases, strict=True)))


_EXPECTED_KEYS = ("file", "line", "column")


def _check_expect(where: str, expect: Any) -> None:
    """Each expected finding names its place whole (``file``, ``line``, ``column``): a case
    that leaves one out is refused with the key it lacks, before any case runs."""
    if expect is None:
        return
    if not isinstance(expect, list):
        raise ConfigError(f"{where}: 'expect' must be a list of findings")
    for number, want in enumerate(expect):
        missing = [key for key in _EXPECTED_KEYS if not isinstance(want, dict) or key not in want]
        if missing:
            lacks = ", ".join(map(repr, missing))
            raise ConfigError(f"{where}: expect[{number}] lacks {lacks} (each expected finding "
                              "needs file, line and column)")  # fmt: skip


def case_results(case_file: CaseFile, pack: Pack, engine_name: str) -> list[TestResult]:
    """Run every case of a file, each in a fresh temporary folder."""
    results = []
    for index, (line, case) in enumerate(case_file.cases):
        name = f"{case_file.rule} #{index} {case.get('name', '')}".rstrip()
        problems = run_case(case_file.rule, case, engine_name=engine_name, pack=pack)
        status: Status = "failed" if problems else "passed"
        detail = "; ".join(problems) or None
        results.append(TestResult("case", name, f"{case_file.path}:{line}", status, detail))
    return results


def run_case(
    rule: str,
    case: dict[str, Any],
    *,
    engine_name: str = DEFAULT_ENGINE,
    pack: Pack | None = None,
    workdir: Path | None = None,
) -> list[str]:
    """Write the case into ``workdir`` (default: a new temporary folder), check it from
    there and return what differs from ``expect`` (empty: the case passes)."""
    with _folder(workdir) as root:
        write_case(root, case)
        try:
            with working_directory(root):
                options = CheckOptions(
                    engine_name=engine_name, select=case.get("select", [rule]), pack=pack
                )
                report = check([Path(".")], options)
        except TrainlintError as exc:
            return [f"check failed: {exc}"]
    if report.errors:
        return [f"error: {error.job}: {error.message}" for error in report.errors]
    got = [f for f in report.findings if f.rule == rule and f.suppression is None]
    expected = case.get("expect") or []
    got_places = sorted((f.file, f.line, f.column) for f in got)
    want_places = sorted((e["file"], e["line"], e["column"]) for e in expected)
    if got_places != want_places:
        found = "; ".join(f"{f.file}:{f.line}:{f.column}: {f.message}" for f in got) or "none"
        return [f"expected findings at {_places(want_places)}, got {found}"]
    problems = []
    for want in expected:
        if "message" not in want:
            continue
        finding = next(f for f in got if (f.file, f.line) == (want["file"], want["line"]))
        parts = [want["message"]] if isinstance(want["message"], str) else want["message"]
        problems += [
            f"{want['file']}:{want['line']}: message lacks {part!r}: {finding.message}"
            for part in parts
            if part not in finding.message
        ]
    return problems


def write_case(root: Path, case: dict[str, Any]) -> None:
    """The case's files, and its repo config as ``.trainlint.yaml``, under ``root``."""
    for name, text in case["files"].items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    if "config" in case:
        (root / ".trainlint.yaml").write_text(yaml.safe_dump(case["config"]))


def format_result(result: TestResult) -> str:
    """``PASS  file:line  name`` (``FAIL`` with its reason on the next line, ``SKIP``)."""
    label = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[result.status]
    line = f"{label}  {result.location}  {result.name}"
    if result.status == "failed" and result.detail:
        line += "\n      " + " ".join(result.detail.split())
    return line


@contextlib.contextmanager
def _folder(workdir: Path | None) -> Iterator[Path]:
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
        yield workdir
        return
    with tempfile.TemporaryDirectory(prefix="trainlint-case-") as name:
        yield Path(name)


def _case_lines(node: yaml.Node | None, count: int) -> list[int]:
    """1-based line of each item of the top-level ``cases`` sequence."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "cases" and isinstance(value, yaml.SequenceNode):
                return [item.start_mark.line + 1 for item in value.value]
    return [1] * count


def _line(lines: dict[str, list[str]], outcome: Any) -> int:
    return _first_line(lines.get(outcome.file, []), outcome.name.rsplit(".", 1)[-1])


def _first_line(lines: list[str], rule: str) -> int:
    """Line of the first head of ``rule`` at the start of a line (1 if not found)."""
    head = re.compile(rf"^{re.escape(rule)}\b")
    return next((number for number, text in enumerate(lines, 1) if head.match(text)), 1)


def _order(result: TestResult) -> tuple[str, int]:
    file, _, line = result.location.rpartition(":")
    return file, int(line) if line.isdigit() else 0


def _places(places: list[tuple[str, int, int]]) -> str:
    return ", ".join(f"{file}:{line}:{column}" for file, line, column in places) or "none"
