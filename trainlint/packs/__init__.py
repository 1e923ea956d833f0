"""Policy packs: a directory of Rego modules, their ``data.json`` and each rule's METADATA.

Neither embedded engine implements ``rego.metadata.rule()``, so the METADATA annotations (OPA
format: a ``# METADATA`` comment line followed by ``# `` lines of YAML) are read here. A *rule
module* is one whose package sits under ``trainlint.rules``; its package-scope METADATA (the
block right above ``package``) must carry ``title`` (the slug), ``description`` and ``custom:
{id, severity, category, remediation}``. Other packages (shared helpers) need none.

A pack is an OPA bundle, a directory or a ``.tar.gz`` (see ``bundle``): an optional
``.manifest``, ``*.rego`` modules anywhere below its root, ``data.json`` files merged at their
directory's path, and ``*_test.rego`` tests, which are kept apart and never compiled for checks.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import yaml

from trainlint import __version__
from trainlint.errors import PolicyError
from trainlint.estimate.params import GROUP, published_defaults
from trainlint.packs.bundle import (
    Manifest,
    check_roots,
    check_version,
    is_archive,
    merge_data,
    parse_manifest,
    read_bundle,
)
from trainlint.resources import bundled

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
RULES_PACKAGE = "trainlint.rules"
TEST_SUFFIX = "_test.rego"

_PACKAGE_RE = re.compile(r"^package[ \t]+([A-Za-z_][\w.]*)", re.MULTILINE)
SLUG_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Autofix:
    """METADATA ``custom.autofix``: the rule's findings can carry a mechanical fix
    (``check --fix``), described for the docs; ``safe`` says whether plain ``--fix`` applies
    it or only ``--unsafe-fixes`` (it changes the training itself)."""

    safe: bool
    description: str


@dataclass(frozen=True)
class RuleMeta:
    """What a rule says about itself; the source of its docs, SARIF rule entry and findings."""

    id: str
    slug: str
    """METADATA's ``title``: OPA's field for a rule's name, and here its slug (the package's
    last part), so findings, SARIF and the docs show one name."""
    severity: Severity
    category: str
    description: str
    remediation: str
    package: str
    why: str = ""
    example: str = ""
    fix: str = ""
    references: tuple[str, ...] = ()
    autofix: Autofix | None = None


@dataclass(frozen=True)
class Pack:
    """A loaded pack. ``modules`` never holds ``*_test.rego``: tests are not compiled for checks."""

    name: str
    modules: dict[str, str]
    tests: dict[str, str]
    data: dict[str, Any]
    rules: tuple[RuleMeta, ...]
    manifest: Manifest | None = None
    origin: str = ""
    rego_versions: dict[str, int] = dataclasses.field(default_factory=dict)
    """Module -> the Rego version (0 or 1) its manifest declares (``file_rego_versions``, else
    ``rego_version``), or an option sets (``--rego-v0``); a module not listed is Rego v1."""
    rego_fallback: bool = False
    """Conftest mode: a module of no declared version that does not parse as Rego v1 is parsed
    as Rego v0 (conftest's policies predate OPA 1.0's syntax)."""

    def get_rule(self, key: str) -> RuleMeta | None:
        """The rule whose id (any case), slug or package name (full or last part) is ``key``."""
        for rule in self.rules:
            short = rule.package.rsplit(".", 1)[-1]
            if key.upper() == rule.id.upper() or key in (rule.slug, rule.package, short):
                return rule
        return None


def load_pack(path: Path, origin: str | None = None) -> Pack:
    """Read a pack: an OPA bundle directory or ``.tar.gz`` (``origin``: how to name it, a path
    or URL; default the path). Checks the manifest, roots, data and every rule's METADATA.
    The builtin pack's directory also gets the estimator's defaults in its data."""
    pack = pack_from_files(read_bundle(path), origin or str(path), _default_name(path))
    return _with_estimate_defaults(pack) if path.resolve() == _builtin_dir().resolve() else pack


def _with_estimate_defaults(pack: Pack) -> Pack:
    """The pack with the estimator's defaults as the base of ``params.estimate``: defined once
    (``EstimateParams``), published here so rules read them (TL203: ``gpu_mtbf_hours``) and
    org packs and repo configs override them, kind-checked and locked like any parameter."""
    trainlint = pack.data.get("trainlint", {})
    params = trainlint.get("params", {})
    estimate = {**published_defaults(), **params.get(GROUP, {})}
    published = {**trainlint, "params": {**params, GROUP: estimate}}
    return dataclasses.replace(pack, data={**pack.data, "trainlint": published})


def pack_from_files(files: dict[str, bytes], origin: str, default_name: str) -> Pack:
    """A pack from a bundle's files (bundle-relative path -> bytes)."""
    manifest = parse_manifest(files, origin)
    check_version(manifest, __version__, origin)
    sources = {
        name: _decode(raw, f"{origin}/{name}")
        for name, raw in sorted(files.items())
        if name.endswith(".rego")
    }
    packages = {name: _package(name, src, origin) for name, src in sources.items()}
    data = merge_data(files, origin)
    check_roots(manifest.effective_roots if manifest else [""], packages, data, origin)
    modules = {name: src for name, src in sources.items() if not name.endswith(TEST_SUFFIX)}
    tests = {name: src for name, src in sources.items() if name.endswith(TEST_SUFFIX)}
    checked = [_rule_meta(f"{origin}/{name}", src) for name, src in modules.items()]
    problems = [problem for _, found in checked for problem in found]
    if problems:
        count = f"{len(problems)} METADATA problem{'s' if len(problems) > 1 else ''}"
        raise PolicyError(f"{origin}: {count}:\n" + "\n".join(f"  {p}" for p in problems))
    metas = tuple(meta for meta, _ in checked if meta is not None)
    _check_unique(metas, origin)
    name = (manifest.info.name if manifest else None) or default_name
    versions = declared_rego_versions(manifest, [*modules, *tests])
    return Pack(name, modules, tests, data, metas, manifest, origin, versions)


def declared_rego_versions(manifest: Manifest | None, files: Iterable[str]) -> dict[str, int]:
    """Each module's Rego version as OPA's manifest declares it: the first
    ``file_rego_versions`` glob that matches its bundle path, else ``rego_version``."""
    if manifest is None:
        return {}
    globs = manifest.file_rego_versions or {}
    declared = {}
    for file in files:
        version = next((v for g, v in globs.items() if _glob_match(g, file)), None)
        if version is None:
            version = manifest.rego_version
        if version is not None:
            declared[file] = version
    return declared


def _glob_match(pattern: str, file: str) -> bool:
    """OPA's ``file_rego_versions`` keys: a glob over the bundle path (a leading ``/`` or none)."""
    return fnmatch.fnmatchcase(file, pattern.lstrip("/"))


def with_rego_v0(pack: Pack) -> Pack:
    """The pack with every module whose version is not declared read as Rego v0 (``--rego-v0``);
    a module that imports ``rego.v1`` parses the same either way."""
    undeclared = {file: 0 for file in pack.modules if file not in pack.rego_versions}
    return dataclasses.replace(pack, rego_versions={**undeclared, **pack.rego_versions})


def _default_name(path: Path) -> str:
    if is_archive(path):
        return path.name.removesuffix(".tar.gz").removesuffix(".tgz")
    return path.name


def _package(file: str, source: str, origin: str) -> str:
    package = module_package(source)
    if package is None:
        raise PolicyError(f"{origin}/{file}: no package declaration")
    return package


def describe_pack(path: Path, key: bytes | None = None) -> dict[str, Any]:
    """What ``pack inspect`` shows: identity, roots, rules, params, locks, and the signature
    checked against the files (and, with ``key``, verified)."""
    from trainlint.packs.signing import signature_state

    pack = load_pack(path)
    signature = signature_state(path, key)
    manifest = pack.manifest
    info = manifest.info if manifest else None
    trainlint_data = pack.data.get("trainlint")
    if not isinstance(trainlint_data, dict):  # layering refuses it; inspect shows what is there
        trainlint_data = {}
    return {
        "name": pack.name,
        "version": info.version if info else None,
        "description": info.description if info else None,
        "min_trainlint_version": info.min_trainlint_version if info else None,
        "revision": manifest.revision if manifest else None,
        "roots": manifest.effective_roots if manifest else [""],
        "origin": pack.origin,
        "signed": signature.signed,
        "signature": signature.describe(),
        "signature_matches": signature.matches,
        "rules": [
            {"id": rule.id, "slug": rule.slug, "severity": rule.severity}
            for rule in sorted(pack.rules, key=lambda r: r.id)
        ],
        "params": trainlint_data.get("params", {}),
        "locks": trainlint_data.get("locks"),
    }


def render_description(desc: dict[str, Any]) -> str:
    """``describe_pack`` as text: one fact a line, then rules, params and locks."""
    version = f" {desc['version']}" if desc["version"] else ""
    revision = f" (revision {desc['revision']})" if desc["revision"] is not None else ""
    lines = [
        f"pack      {desc['name']}{version}{revision}",
        f"origin    {desc['origin']}",
        f"roots     {', '.join(repr(root) for root in desc['roots'])}",
        f"signed    {desc['signature']}",
    ]
    if desc["min_trainlint_version"]:
        lines.append(f"requires  trainlint >= {desc['min_trainlint_version']}")
    lines.append(f"rules     {len(desc['rules'])}")
    lines += [f"  {r['id']:<10} {r['slug']:<30} {r['severity']}" for r in desc["rules"]]
    lines.append("params")
    lines += [f"  {key} = {json.dumps(value)}" for key, value in _flat(desc["params"])]
    if desc["locks"] is not None:
        lines.append("locks")
        lines += [f"  {key} = {json.dumps(value)}" for key, value in _flat(desc["locks"])]
    return "\n".join(lines) + "\n"


def _flat(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested objects as dotted keys; lists and scalars are leaves."""
    if isinstance(value, dict) and value:
        return [
            item
            for key, child in value.items()
            for item in _flat(child, f"{prefix}.{key}" if prefix else str(key))
        ]
    return [(prefix, value)] if prefix else []


@functools.cache
def load_builtin_pack() -> Pack:
    """The pack shipped with trainlint, read once per process."""
    return load_pack(_builtin_dir())


def _builtin_dir() -> Path:
    return bundled("policies") / "builtin"


def module_package(source: str) -> str | None:
    """The package a Rego module declares, or None when it has no package line."""
    match = _PACKAGE_RE.search(source)
    return match.group(1) if match else None


def parse_metadata(source: str) -> dict[str, Any] | None:
    """The package-scope METADATA block (YAML) of a module, or None when there is none.

    Raises ValueError when the block is not a YAML mapping.
    """
    block = _metadata_block(source)
    return None if block is None else block.mapping()


@dataclass(frozen=True)
class _Block:
    """A module's METADATA block: its YAML text and the file line of ``# METADATA``."""

    body: str
    line: int

    def mapping(self) -> dict[str, Any]:
        try:
            value = _load_yaml(self.body)
        except yaml.YAMLError as exc:
            raise ValueError(f"METADATA is not valid YAML: {exc}") from exc
        if not isinstance(value, dict):
            raise ValueError("METADATA must be a YAML mapping")
        return cast("dict[str, Any]", value)

    def line_of(self, path: tuple[str, ...]) -> int:
        """The file line of the key at ``path`` (``("custom", "id")``), or of its closest
        written ancestor, or of ``# METADATA``: where a problem with that field is shown."""
        line = self.line
        if not path:
            return line
        node: yaml.Node | None = yaml.compose(self.body)  # parsed already: it is valid YAML
        for key in path:
            found = _child(node, key)
            if found is None:
                break
            key_node, node = found
            line = self.line + 1 + key_node.start_mark.line
        return line


def _child(node: yaml.Node | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next(((k, v) for k, v in node.value if k.value == key), None)


def _metadata_block(source: str) -> _Block | None:
    lines = _lines_before_package(source)
    start = _metadata_start(lines)
    if start is None:
        return None
    body = "\n".join(_uncomment(line) for line in lines[start + 1 :])
    return _Block(body, start + 1)


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load`` through libyaml when PyYAML has it (every check parses each rule's
    METADATA: the pure-Python parser was the slowest step of a one-file check); a document
    libyaml rejects is parsed again in Python, so the error message stays the same."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.load(text, Loader=fast)  # CSafeLoader: the safe loader in C
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


class _Problems:
    """Every METADATA problem of one module, each as ``file:line: message``: a pack author
    fixes them all in one pass instead of one per run."""

    def __init__(self, file: str, block: _Block | None) -> None:
        self.file, self.block, self.found = file, block, list[str]()

    def add(self, message: str, *path: str) -> None:
        line = self.block.line_of(path) if self.block else 1
        self.found.append(f"{self.file}:{line}: {message}")

    def text(self, mapping: dict[str, Any], *path: str) -> str:
        """A required non-empty string field (stripped), or "" and a problem."""
        value = mapping.get(path[-1])
        if not isinstance(value, str) or not value.strip():
            self.add(f"METADATA {'.'.join(path)} is missing or not a non-empty string", *path)
            return ""
        return value.strip()

    def optional_text(self, mapping: dict[str, Any], *path: str) -> str:
        value = mapping.get(path[-1])
        if value is None:
            return ""
        if not isinstance(value, str):
            self.add(f"METADATA {'.'.join(path)} must be a string", *path)
            return ""
        return value.strip("\n")

    def autofix(self, custom: dict[str, Any]) -> Autofix | None:
        """``custom.autofix``: ``{safe: true|false, description: ...}``, or absent."""
        value = custom.get("autofix")
        if value is None:
            return None
        if not isinstance(value, dict) or not isinstance(value.get("safe"), bool):
            self.add("METADATA custom.autofix needs safe: true or false", "custom", "autofix")
            return None
        description = self.text(value, "custom", "autofix", "description")
        return Autofix(safe=value["safe"], description=description)

    def references(self, value: Any) -> tuple[str, ...]:
        """OPA's ``related_resources``: a list of ``{ref, description}`` or plain URLs."""
        if value is None:
            return ()
        if not isinstance(value, list):
            self.add("METADATA related_resources must be a list", "related_resources")
            return ()
        refs = [item.get("ref") if isinstance(item, dict) else item for item in value]
        urls = tuple(ref for ref in refs if isinstance(ref, str) and ref)
        if len(urls) != len(refs):
            self.add("METADATA related_resources entries need a 'ref' URL", "related_resources")
        return urls


def _rule_meta(file: str, source: str) -> tuple[RuleMeta | None, list[str]]:
    """RuleMeta for a rule module (None for a helper module), and every problem of its
    METADATA as ``file:line: message``."""
    package = module_package(source)
    if package is None:
        raise PolicyError(f"{file}: no package declaration")
    if not package.startswith(RULES_PACKAGE + "."):
        return None, []
    block = _metadata_block(source)
    problems = _Problems(file, block)
    if block is None:
        problems.add("a rule module needs a METADATA block above its package line")
        return None, problems.found
    try:
        metadata = block.mapping()
    except ValueError as exc:
        problems.add(str(exc))
        return None, problems.found
    meta = _validate(metadata, package, problems)
    return (None if problems.found else meta), problems.found


def _validate(metadata: dict[str, Any], package: str, problems: _Problems) -> RuleMeta:
    """The rule's fields; each missing or invalid one is added to ``problems``."""
    slug = _slug(metadata, package, problems)
    custom = metadata.get("custom")
    if not isinstance(custom, dict):
        problems.add("METADATA needs a 'custom' mapping (id, severity, category, remediation)",
                     "custom")  # fmt: skip
        custom = {}
    rule_id = problems.text(custom, "custom", "id") if custom else ""
    if rule_id and not _ID_RE.match(rule_id):
        problems.add(f"METADATA custom.id {rule_id!r} is not a valid rule id", "custom", "id")
    severity = problems.text(custom, "custom", "severity") if custom else ""
    if severity and severity not in SEVERITIES:
        message = f"METADATA custom.severity {severity!r} is not one of {SEVERITIES}"
        problems.add(message, "custom", "severity")
    return RuleMeta(
        id=rule_id,
        slug=slug,
        severity=cast("Severity", severity),
        category=problems.text(custom, "custom", "category") if custom else "",
        description=problems.text(metadata, "description"),
        remediation=problems.text(custom, "custom", "remediation") if custom else "",
        package=package,
        why=problems.optional_text(custom, "custom", "why"),
        example=problems.optional_text(custom, "custom", "example"),
        fix=problems.optional_text(custom, "custom", "fix"),
        references=problems.references(metadata.get("related_resources")),
        autofix=problems.autofix(custom) if custom else None,
    )


def _slug(metadata: dict[str, Any], package: str, problems: _Problems) -> str:
    """METADATA's ``title``: a lower-case hyphenated slug naming the package's last part."""
    slug = problems.text(metadata, "title")
    if slug and not SLUG_RE.match(slug):
        problems.add(f"METADATA title {slug!r} must be a lower-case hyphenated slug", "title")
    elif slug and package.rsplit(".", 1)[-1] != slug.replace("-", "_"):
        problems.add(f"package {package} does not match title {slug!r}", "title")
    return slug


def _check_unique(rules: Iterable[RuleMeta], root: str) -> None:
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


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{where}: cannot read: {exc}") from None
