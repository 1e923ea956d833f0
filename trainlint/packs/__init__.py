"""Policy packs: a directory of Rego modules, their ``data.json`` and each rule's METADATA.

Neither embedded engine implements ``rego.metadata.rule()``, so the METADATA annotations (OPA
format: a ``# METADATA`` comment line followed by ``# `` lines of YAML) are read here. A *rule
module* is one whose package sits under ``trainlint.rules``; its package-scope METADATA (the
block right above ``package``) must carry ``title`` (the slug), ``description`` and ``custom:
{id, severity, category, remediation}``. Other packages (shared helpers) need none.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import yaml

from trainlint.errors import PolicyError
from trainlint.resources import bundled

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
RULES_PACKAGE = "trainlint.rules"
TEST_SUFFIX = "_test.rego"

_PACKAGE_RE = re.compile(r"^package[ \t]+([A-Za-z_][\w.]*)", re.MULTILINE)
_SLUG_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class RuleMeta:
    """What a rule says about itself; the source of its docs, SARIF rule entry and findings."""

    id: str
    slug: str
    title: str
    severity: Severity
    category: str
    description: str
    remediation: str
    package: str


@dataclass(frozen=True)
class Pack:
    """A loaded pack. ``modules`` never holds ``*_test.rego``: tests are not compiled for checks."""

    name: str
    modules: dict[str, str]
    tests: dict[str, str]
    data: dict[str, Any]
    rules: tuple[RuleMeta, ...]

    def get_rule(self, key: str) -> RuleMeta | None:
        """The rule whose id (any case), slug or package name (full or last part) is ``key``."""
        for rule in self.rules:
            short = rule.package.rsplit(".", 1)[-1]
            if key.upper() == rule.id.upper() or key in (rule.slug, rule.package, short):
                return rule
        return None


def load_pack(path: Path) -> Pack:
    """Read a pack directory: every ``*.rego`` below it and ``data.json`` at its root."""
    if not path.is_dir():
        raise PolicyError(f"{path}: policy pack not found (expected a directory)")
    sources = {_rel(file, path): _read(file) for file in sorted(path.rglob("*.rego"))}
    modules = {name: src for name, src in sources.items() if not name.endswith(TEST_SUFFIX)}
    tests = {name: src for name, src in sources.items() if name.endswith(TEST_SUFFIX)}
    rules = [_rule_meta(path / name, src) for name, src in modules.items()]
    metas = tuple(meta for meta in rules if meta is not None)
    _check_unique(metas, path)
    return Pack(path.name, modules, tests, _load_data(path / "data.json"), metas)


@functools.cache
def load_builtin_pack() -> Pack:
    """The pack shipped with trainlint, read once per process."""
    return load_pack(bundled("policies") / "builtin")


def module_package(source: str) -> str | None:
    """The package a Rego module declares, or None when it has no package line."""
    match = _PACKAGE_RE.search(source)
    return match.group(1) if match else None


def parse_metadata(source: str) -> dict[str, Any] | None:
    """The package-scope METADATA block (YAML) of a module, or None when there is none.

    Raises ValueError when the block is not a YAML mapping.
    """
    lines = _lines_before_package(source)
    start = _metadata_start(lines)
    if start is None:
        return None
    body = "\n".join(_uncomment(line) for line in lines[start + 1 :])
    try:
        value = yaml.safe_load(body)
    except yaml.YAMLError as exc:
        raise ValueError(f"METADATA is not valid YAML: {exc}") from exc
    if not isinstance(value, dict):
        raise ValueError("METADATA must be a YAML mapping")
    return cast("dict[str, Any]", value)


def _rule_meta(file: Path, source: str) -> RuleMeta | None:
    """RuleMeta for a rule module, None for a helper module; PolicyError naming the file."""
    package = module_package(source)
    if package is None:
        raise PolicyError(f"{file}: no package declaration")
    if not package.startswith(RULES_PACKAGE + "."):
        return None
    try:
        metadata = parse_metadata(source)
        if metadata is None:
            raise ValueError("a rule module needs a METADATA block above its package line")
        return _validate(metadata, package)
    except ValueError as exc:
        raise PolicyError(f"{file}: {exc}") from None


def _validate(metadata: dict[str, Any], package: str) -> RuleMeta:
    """Check the required fields; ValueError names the first missing or invalid one."""
    slug = _text(metadata, "title")
    if not _SLUG_RE.match(slug):
        raise ValueError(f"METADATA title {slug!r} must be a lower-case hyphenated slug")
    if package.rsplit(".", 1)[-1] != slug.replace("-", "_"):
        raise ValueError(f"package {package} does not match title {slug!r}")
    custom = metadata.get("custom")
    if not isinstance(custom, dict):
        raise ValueError("METADATA needs a 'custom' mapping (id, severity, category, remediation)")
    rule_id = _text(custom, "id", "custom.id")
    if not _ID_RE.match(rule_id):
        raise ValueError(f"METADATA custom.id {rule_id!r} is not a valid rule id")
    severity = _text(custom, "severity", "custom.severity")
    if severity not in SEVERITIES:
        raise ValueError(f"METADATA custom.severity {severity!r} is not one of {SEVERITIES}")
    return RuleMeta(
        id=rule_id,
        slug=slug,
        title=slug,
        severity=severity,
        category=_text(custom, "category", "custom.category"),
        description=_text(metadata, "description"),
        remediation=_text(custom, "remediation", "custom.remediation"),
        package=package,
    )


def _text(mapping: dict[str, Any], key: str, label: str | None = None) -> str:
    """A required non-empty string field, stripped of YAML block trailing newlines."""
    value = mapping.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"METADATA {label or key} is missing or not a non-empty string")
    return value.strip()


def _check_unique(rules: Iterable[RuleMeta], root: Path) -> None:
    """Ids and slugs are how users select and suppress rules: a repeat would be ambiguous."""
    seen: dict[str, RuleMeta] = {}
    for rule in rules:
        for key in (rule.id.upper(), rule.slug):
            other = seen.setdefault(key, rule)
            if other is not rule:
                raise PolicyError(
                    f"{root}: rule {key!r} is declared by both {other.package} and {rule.package}"
                )


def _lines_before_package(source: str) -> list[str]:
    lines = source.splitlines()
    for index, line in enumerate(lines):
        if _PACKAGE_RE.match(line):
            return lines[:index]
    return lines


def _metadata_start(lines: list[str]) -> int | None:
    """Index of the ``# METADATA`` line of the comment block right above package."""
    index = len(lines)
    while index > 0 and not lines[index - 1].strip():
        index -= 1
    while index > 0 and lines[index - 1].startswith("#"):
        index -= 1
        if lines[index].rstrip() == "# METADATA":
            return index
    return None


def _uncomment(line: str) -> str:
    return line[2:] if line.startswith("# ") else line[1:]


def _load_data(file: Path) -> dict[str, Any]:
    """The pack's base document; a pack without ``data.json`` has none."""
    if not file.is_file():
        return {}
    try:
        value = json.loads(_read(file))
    except json.JSONDecodeError as exc:
        raise PolicyError(f"{file}: invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise PolicyError(f"{file}: data.json must hold a JSON object")
    return cast("dict[str, Any]", value)


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{file}: cannot read: {exc}") from None


def _rel(file: Path, root: Path) -> str:
    return file.relative_to(root).as_posix()
