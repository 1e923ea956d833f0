"""Repository configuration: ``[tool.trainlint]`` in pyproject.toml, ``.trainlint.yaml`` or
``.trainlint.toml``; the file closest to each checked file configures that file (ruff's rule:
``Configs``), and ``extend`` names a base config it inherits from (the extending file's keys
win). The run's own config (``run_config``, the closest to the folder holding every checked
path) gives what is one per run — packs, params, fleet, baseline, fail-on — and
``project_root`` the folder every reported path is relative to. ``--config FILE``
(``load_config``) replaces them all.

Keys are spelled as in ruff (``extend-select``, ``per-file-ignores``; snake_case works too).
Unknown keys are errors that name the key, the file and its line, and the closest valid key
("did you mean"); so is a waiver without a reason.
Where each entry is written (``RepoConfig.located``, by key path: ``("waivers", 2, "reason")``)
is kept from the YAML and TOML readers' positions, for findings about the config.

A pull request can write the config, so it is read like any checked file: a regular file of at
most ``structured.MAX_BYTES``, YAML through the bounded reader (node budget against alias
bombs, depth limit, no custom tags), TOML with the same depth and node limits. The config, its
``extend`` chain and its ``baseline`` stay inside *the repository*: the git work tree that
holds the config (its closest ancestor folder with a ``.git``, a folder or a worktree's file),
or, outside git, the config's own folder. The search for a config stops at that work tree's
top; ``extend`` and ``baseline`` must be relative paths that resolve (symlinks followed) inside
it, and a refused path is never opened, so no error can echo what it holds. (Pack ``path``
and ``public-key`` are the packs' to check: docs/packs.md allows a pack next to the repo.)
"""

from __future__ import annotations

import datetime
import fnmatch
import os
import re
import stat
import sys
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from trainlint.errors import ConfigError, SourceError
from trainlint.fleet import Fleet
from trainlint.packs.sources import PackSource
from trainlint.sources.structured import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    KeyPath,
    Tagged,
    Tree,
    load_yaml,
)
from trainlint.sources.structured.toml import load_toml
from trainlint.suggest import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_FILES = (".trainlint.yaml", ".trainlint.yml", ".trainlint.toml", "pyproject.toml")


MAX_EXTENDS = 8  # a chain of ``extend`` longer than this is a loop


class Written(NamedTuple):
    """Where a config entry is written: its file and line, the column of its key's (or list
    item's) text, and of its value's when that is a scalar on the same line."""

    file: Path
    line: int
    column: int
    value_column: int


class Waiver(BaseModel):
    """A reviewed exception: the rule's findings under ``path`` do not count until ``expires``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    rule: str = Field(min_length=1, description="Rule id, prefix or slug.")
    path: str = Field(default="**", description="Glob relative to the config's folder.")
    reason: str = Field(min_length=1, description="Why the waste is accepted (required).")
    approved_by: str | None = Field(default=None, alias="approved-by")
    expires: datetime.date | None = Field(default=None, description="ISO date; then it lapses.")

    @field_validator("reason")
    @classmethod
    def _reason_is_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a waiver needs a reason")
        return value.strip()


class RepoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    extend: str | None = None
    """A base config file (relative to this one) whose settings this one extends."""

    formats: dict[str, str] = {}
    """Glob (relative to the config's folder) → format name, overriding recognition."""

    select: list[str] | None = None
    extend_select: list[str] = Field(default=[], alias="extend-select")
    ignore: list[str] = []
    per_file_ignores: dict[str, list[str]] = Field(default={}, alias="per-file-ignores")
    fail_on: Literal["error", "warning", "info"] | None = Field(default=None, alias="fail-on")
    waivers: list[Waiver] = []
    baseline: str | None = None
    """A baseline file (relative to the config) of findings that do not count."""

    packs: list[PackSource] = []
    """Org policy packs layered over the builtin one, in order (issue: DESIGN §5)."""

    params: dict[str, dict[str, Any]] = {}
    """Rule parameters by rule slug (``checkpoint-too-frequent``) or ``estimate``; they
    override the packs' ``data.trainlint.params``."""

    cache_dir: str | None = Field(default=None, alias="cache-dir")
    """Where ``trainlint check`` keeps its cache (relative to the config; default
    ``.trainlint_cache`` in the project root)."""

    fleet: Fleet | None = None
    """The org's GPUs (``trainlint.fleet``): one per run like ``params``; over the packs'
    ``data.trainlint.fleet`` key by key, unless a pack locks the key."""

    root: Path = Path(".")
    """The folder the config file is in; globs are relative to it."""

    source: Path | None = None
    """The config file itself (None for defaults), for findings about the config."""

    _located: dict[KeyPath, Written] = PrivateAttr(default_factory=dict)

    @property
    def located(self) -> Mapping[KeyPath, Written]:
        """Where each entry (up to three keys deep) is written, in this file or in the base
        it extends, as the position-aware readers found it when the config was parsed."""
        return self._located

    @field_validator("formats")
    @classmethod
    def _known_formats(cls, value: dict[str, str]) -> dict[str, str]:
        from trainlint.sources import all_sources

        names = {source.name for source in all_sources()}
        for glob, name in value.items():
            if name not in names:
                raise ValueError(f"{glob!r}: unknown format {name!r} (known: {sorted(names)})")
        return value

    def forced_format(self, path: Path) -> str | None:
        """The format the config assigns to ``path``, if a glob matches it."""
        if not self.formats:
            return None
        try:
            relative = path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None
        for glob, name in self.formats.items():
            if fnmatch.fnmatch(relative, glob):
                return name
        return None

    def relative(self, path: str | Path) -> str:
        """``path`` relative to the config's folder, for matching globs; as given if outside."""
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return Path(path).as_posix()

    def matches(self, glob: str, path: str | Path) -> bool:
        """gitignore-free glob match of a repo-relative path (``**`` spans folders)."""
        relative = self.relative(path)
        return fnmatch.fnmatch(relative, glob) or fnmatch.fnmatch(relative, glob.replace("**/", ""))


ReadConfigs = dict[Path, RepoConfig | None]
"""Config files already read, by path (None: a pyproject.toml without a trainlint table)."""


def find_config(start: Path) -> RepoConfig:
    """The closest config at or above ``start`` (a file's folder or a folder), up to the top
    of its git work tree; defaults if none."""
    folder = start.resolve() if start.is_dir() else start.absolute().parent.resolve()
    top = git_top(folder)
    for directory in [folder, *folder.parents]:
        for name in CONFIG_FILES:
            candidate = directory / name
            if candidate.is_file():
                config = _config_in(candidate, top or directory)
                if config is not None:
                    return config
        if directory == top:
            break
    return RepoConfig()


def _config_in(file: Path, root: Path, read: ReadConfigs | None = None) -> RepoConfig | None:
    """The config in ``file`` (None: a pyproject.toml without one), read once per ``read``."""
    if read is not None and file in read:
        return read[file]
    _inside(file.resolve(), root, f"{file}: the config is a link to a file")
    table = _read(file)
    config = None if table is None else _validate(_extended(table, file, root), file, root)
    if read is not None:
        read[file] = config
    return config


def load_config(path: Path) -> RepoConfig:
    """The config in the file ``path`` itself (``--config FILE``), its ``extend`` chain
    followed; a missing file, or a pyproject.toml without ``[tool.trainlint]``, is an error."""
    if not path.is_file():
        raise ConfigError(f"--config {path}: no such file")
    file = Path(os.path.abspath(path))
    root = repository_root(file.parent)
    table = _read(file)
    if table is None:
        raise ConfigError(f"--config {path}: no [tool.trainlint] table in {file.name}")
    return _validate(_extended(table, file, root), file, root)


def common_folder(paths: Sequence[Path]) -> Path:
    """The deepest folder holding every path named (a file's folder for a file), whatever
    their order: where the run's own config is looked for."""
    folders = [
        Path(os.path.abspath(p)) if p.is_dir() else Path(os.path.abspath(p)).parent for p in paths
    ] or [Path.cwd()]
    try:
        return Path(os.path.commonpath(folders))
    except ValueError:  # paths on two drives (Windows): no folder holds them all
        return Path.cwd()


def run_config(paths: Sequence[Path]) -> RepoConfig:
    """The config of the run: the closest to the folder holding every checked path (for one
    path, its own closest config). It gives what is one per run (``packs``, ``params``,
    ``fleet``, ``baseline``, ``fail-on``); each file's selection, ignores and waivers are its own
    closest config's (``Configs``)."""
    return find_config(common_folder(paths))


def project_root(paths: Sequence[Path], config: RepoConfig) -> Path:
    """The folder every reported path is relative to, whatever the working directory: the
    git work tree holding the checked paths, else the folder of the run's config file, else
    the current directory. Reports, fingerprints and baselines match from any folder."""
    top = git_top(common_folder(paths))
    if top is not None:
        return top
    if config.source is not None:
        return Path(os.path.abspath(config.source)).parent
    return Path.cwd()


@dataclass
class Configs:
    """The config of each checked file: the closest one at or above it, as ruff finds a
    file's settings (a nested ``.trainlint.toml`` applies to the files under it), or the
    run's config for every file when ``fixed`` (``--config FILE``). Each folder is searched
    once and each config file read once per run."""

    run: RepoConfig
    fixed: bool = False
    _by_folder: dict[str, RepoConfig] = field(default_factory=dict)
    _by_path: dict[tuple[str, str | Path], RepoConfig] = field(default_factory=dict)
    """Each file's config by the path asked with (and the working directory): a run asks
    ~8 times per file, and ``abspath`` of each costs ~0.1 s of 7,500 asks."""
    _closest_by_folder: dict[str, RepoConfig | None] = field(default_factory=dict)
    _reals: dict[str, str] = field(default_factory=dict)
    _read: ReadConfigs = field(default_factory=dict)
    _defaults: RepoConfig = field(default_factory=RepoConfig)

    def __post_init__(self) -> None:
        """The run's config is its file's: found again, it is the same object."""
        if self.run.source is not None:
            self._read[Path(os.path.realpath(self.run.source))] = self.run
        else:
            self._defaults = self.run

    def of(self, path: str | Path) -> RepoConfig:
        """The config that applies to the file ``path`` (relative to the working directory)."""
        return self.run if self.fixed else self.closest(path)

    def closest(self, path: str | Path) -> RepoConfig:
        """The closest config at or above the file ``path``, even under ``--config`` (where
        the probe keeps the file's measurements, ``measurement.measurement_root``)."""
        key = (os.getcwd(), path)  # a relative path names another file from another folder
        found = self._by_path.get(key)
        if found is None:
            folder = os.path.dirname(os.path.abspath(path))
            found = self._by_folder.get(folder)
            if found is None:
                found = self._by_folder[folder] = self._find(folder)
            self._by_path[key] = found
        return found

    def found(self) -> dict[str, str | None]:
        """Each folder's config as this run found it: the file it was read from, None for
        the defaults; for the next run while every config holds (``take``)."""
        files = {id(config): str(path) for path, config in self._read.items() if config}
        return {
            folder: None if config is self._defaults else files[id(config)]
            for folder, config in self._by_folder.items()
            if config is self._defaults or id(config) in files
        }

    def take(self, found: Mapping[str, str | None]) -> None:
        """Each folder's config as an earlier run ``found`` it (its files read again, each
        once): valid while every config file and each folder searched for one is as it
        was, which the cache checks (``cache.Dependencies.configs_hold``)."""
        for folder, file in found.items():
            if folder not in self._by_folder:
                config = self._defaults if file is None else self._again(Path(file))
                if config is not None:
                    self._by_folder[folder] = config

    def _again(self, file: Path) -> RepoConfig | None:
        return _config_in(file, git_top(file.parent) or file.parent, self._read)

    def _find(self, folder: str) -> RepoConfig:
        if not os.path.isdir(folder):  # a place that is no file of the tree (``<baseline>``)
            return self.run
        return self._closest(self._real(folder)) or self._defaults

    def _real(self, folder: str) -> str:
        """``os.path.realpath`` of an absolute, normalised ``folder``, remembered: its
        parent's real path and its name unless it is a symlink (one ``lstat`` a folder,
        not one a component of its path)."""
        real = self._reals.get(folder)
        if real is None:
            parent, name = os.path.split(folder)
            if parent == folder or os.path.islink(folder):
                real = os.path.realpath(folder)
            else:
                real = os.path.join(self._real(parent), name)
            self._reals[folder] = real
        return real

    def _closest(self, folder: str) -> RepoConfig | None:
        """``find_config``'s search, remembered folder by folder: a folder without a config
        file has its parent's, up to the top of the git work tree (None: no config)."""
        if folder in self._closest_by_folder:
            return self._closest_by_folder[folder]
        try:
            names = set(os.listdir(folder))
        except OSError:
            names = set()
        found = self._here(Path(folder), names)
        parent = os.path.dirname(folder)
        if found is None and ".git" not in names and parent != folder:
            found = self._closest(parent)
        self._closest_by_folder[folder] = found
        return found

    def _here(self, folder: Path, names: set[str]) -> RepoConfig | None:
        """The config of a file in ``folder`` itself (whose entries are ``names``)."""
        for name in (name for name in CONFIG_FILES if name in names):
            candidate = folder / name
            if candidate.is_file():
                config = _config_in(candidate, git_top(folder) or folder, self._read)
                if config is not None:
                    return config
        return None

    def used(self) -> list[RepoConfig]:
        """The run's config, then every other config a file was given, by file."""
        others = {id(c): c for c in self._by_folder.values() if c is not self.run}
        nested = sorted(others.values(), key=lambda c: str(c.source or ""))
        return [self.run, *nested]


def repository_root(folder: Path) -> Path:
    """The repository of a config in ``folder``: its git work tree, else ``folder`` itself."""
    return git_top(folder) or folder.resolve()


def git_top(folder: Path) -> Path | None:
    """The git work tree holding ``folder``: its closest ancestor with a ``.git`` entry (a
    folder, or the file of a worktree or submodule); None outside git."""
    folder = folder.resolve()
    for directory in [folder, *folder.parents]:
        if (directory / ".git").exists():
            return directory
    return None


def _inside(resolved: Path, root: Path, what: str) -> None:
    """Refuse ``resolved`` (symlinks already followed) unless it lies under ``root``."""
    if not resolved.is_relative_to(root):
        raise ConfigError(f"{what} outside the repository ({root}); not read")


@dataclass(frozen=True)
class _Table:
    """A config file's trainlint table, and where each of its entries is written."""

    data: dict[str, Any]
    located: dict[KeyPath, Written]


def _extended(table: _Table, path: Path, root: Path, depth: int = 0) -> _Table:
    """``table`` over its ``extend`` chain: keys of the extending file replace the base's. Every
    base lies inside ``root`` (the repository); one outside is refused before it is opened."""
    raw = table.data
    base_name = raw.get("extend")
    if base_name is None:
        return table
    if depth >= MAX_EXTENDS:
        raise ConfigError(f"{path}: 'extend' chain longer than {MAX_EXTENDS} (a loop?)")
    base_path = _repository_path(path, "extend", base_name, root)
    base = _read(base_path) if base_path.is_file() else None
    if base is None:
        raise ConfigError(f"{path}: extend: {base_name!r} is not a trainlint config file")
    inherited = _extended(base, base_path, root, depth + 1)
    merged = {**inherited.data, **raw}
    base_params, own_params = inherited.data.get("params", {}), raw.get("params", {})
    if isinstance(base_params, dict) and isinstance(own_params, dict):
        params = dict(base_params)
        for rule, values in own_params.items():
            below = params.get(rule)
            if isinstance(below, dict) and isinstance(values, dict):
                values = {**below, **values}
            params[rule] = values
        if params:
            merged["params"] = params
    return _Table(merged, _overlay(inherited.located, table.located))


def _overlay(base: dict[KeyPath, Written], own: dict[KeyPath, Written]) -> dict[KeyPath, Written]:
    """Where the entries of a config over its base are written, as ``_extended`` merges them:
    a key of the extending file replaces the base's whole, a rule's ``params`` key by key."""
    kept = {p: w for p, w in base.items() if p[: 3 if p[0] == "params" else 1] not in own}
    return {**kept, **own}


def _repository_path(path: Path, key: str, name: object, root: Path) -> Path:
    """The file ``key: name`` of the config ``path`` names: a relative path that resolves
    (symlinks followed) inside the repository ``root``; an absolute or ``~`` path is refused
    as written. Nothing is opened here, so a refusal cannot echo what the file holds."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{path}: {key}: expected the relative path of a file")
    if Path(name).is_absolute() or name.startswith("~"):
        raise ConfigError(
            f"{path}: {key}: {name!r} must be a path relative to the config, inside the "
            f"repository ({root}); not read"
        )
    resolved = (path.parent / name).resolve()
    _inside(resolved, root, f"{path}: {key}: {name!r} is")
    return resolved


def _read(path: Path) -> _Table | None:
    """The trainlint table of a config file, located; None for a pyproject.toml without one."""
    text = _read_text(path)
    tree: Tree | None = None
    prefix: KeyPath = ()  # of the table in the file
    try:
        if path.name == "pyproject.toml":
            tool = tomllib.loads(text).get("tool")
            data = tool.get("trainlint") if isinstance(tool, dict) else None
            if not isinstance(data, dict):
                return None
            prefix = ("tool", "trainlint")
        elif path.suffix == ".toml":
            data = tomllib.loads(text)
        else:
            tree = _yaml(text, path)
            data = tree.data if tree is not None else None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: cannot read config: invalid TOML: {exc}") from None
    except RecursionError:
        message = f"{path}: cannot read config: nesting deeper than {MAX_DEPTH} levels"
        raise ConfigError(message) from None
    if data is None:
        return _Table({}, {})
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping")
    _check_bounds(data, path)
    spans = tree.spans if tree is not None else _toml_spans(text, path)
    return _Table(data, _located(data, spans, prefix, text, path))


def _toml_spans(text: str, path: Path) -> dict[KeyPath, tuple[int, int]]:
    """The key positions of a TOML config tomllib has read, from the reader of TOML files."""
    try:
        return load_toml(text).spans
    except SourceError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.message}") from None


def _located(
    data: dict[str, Any],
    spans: Mapping[KeyPath, tuple[int, int]],
    prefix: KeyPath,
    text: str,
    file: Path,
) -> dict[KeyPath, Written]:
    """Where each entry of ``data`` up to three keys deep is written, from the reader's key
    positions (``spans``, where ``data`` lies at ``prefix``); keys spelled as in ruff."""
    lines = text.splitlines()
    located = {}
    for path, value in _entries(data, ()):
        span = spans.get((*prefix, *path))
        if span is not None:
            located[_ruff_spelling(path)] = _written(file, lines, span, path[-1], value)
    return located


def _entries(value: Any, path: KeyPath, depth: int = 3) -> Iterator[tuple[KeyPath, Any]]:
    """Every (key path, value) under ``value``, down to ``depth`` keys."""
    if isinstance(value, dict):
        children: Iterable[tuple[str | int, Any]] = value.items()
    else:
        children = enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield (*path, key), child
        if len(path) + 1 < depth:
            yield from _entries(child, (*path, key), depth)


_AFTER_KEY = re.compile(r"""["']?[ \t]*[:=][ \t]*["']?""")


def _written(
    file: Path, lines: list[str], span: tuple[int, int], key: str | int, value: Any
) -> Written:
    """The place of one entry: its text past an opening quote, and its scalar value's text
    when the value follows the key on its line (``reason: text``, ``reason = "text"``)."""
    line, column = span
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    start = column if text[column - 1 : column] in {'"', "'"} else column - 1
    value_start = start
    after = None
    if isinstance(key, str) and not isinstance(value, (dict, list)):
        at_key = text.startswith(key, start)
        after = _AFTER_KEY.match(text, start + len(key)) if at_key else None
    if after is not None and after.end() < len(text):
        value_start = after.end()
    return Written(file, line, start + 1, value_start + 1)


def _ruff_spelling(path: KeyPath) -> KeyPath:
    """Field names spelled as in ruff (``per_file_ignores`` as ``per-file-ignores``, a
    waiver's ``approved_by`` as ``approved-by``); globs, rule names and params keep theirs."""
    fields = (0, 2) if path[0] in ("waivers", "packs") else (0,)
    return tuple(
        part.replace("_", "-") if index in fields and isinstance(part, str) else part
        for index, part in enumerate(path)
    )


def _read_text(path: Path) -> str:
    """The text of a config file, read with a checked file's limits: a regular file (a FIFO
    or a device is refused without waiting on it) of at most ``MAX_BYTES``, in UTF-8."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ConfigError(f"{path}: cannot read config: not a regular file")
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: config larger than {MAX_BYTES // 2**20} MiB; not read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read config: not UTF-8 (byte {exc.start})") from None


def _yaml(text: str, path: Path) -> Tree | None:
    """One YAML document through the bounded reader; custom tags have no meaning here."""
    try:
        trees = load_yaml(text)
    except SourceError as exc:
        where = f"{path}:{exc.line}:{exc.column}"
        raise ConfigError(f"{where}: cannot read config: {exc.message}") from None
    if len(trees) > 1:
        raise ConfigError(f"{path}: cannot read config: more than one YAML document")
    if not trees:
        return None
    tree = trees[0]
    for key, value in tree.items():
        if isinstance(value, Tagged):
            line, column = tree.span(key)
            shown = ".".join(map(str, key)) or "(top)"
            raise ConfigError(f"{path}:{line}:{column}: {shown}: the tag {value.tag} has no "
                              "meaning in a trainlint config")  # fmt: skip
    return tree


def _check_bounds(data: dict[str, Any], path: Path) -> None:
    """The YAML reader's depth and node limits, for TOML too (iteratively: no recursion)."""
    budget = MAX_NODES
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        budget -= 1
        if budget < 0:
            raise ConfigError(f"{path}: cannot read config: more than {MAX_NODES:,} values")
        if depth > MAX_DEPTH:
            raise ConfigError(f"{path}: cannot read config: nesting deeper than {MAX_DEPTH} levels")
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, (dict, list)):
            stack.extend((child, depth + 1) for child in children)


def _validate(table: _Table, path: Path, root: Path) -> RepoConfig:
    """The config model of ``table``; the baseline it names lies inside the repository too."""
    raw = table.data
    if raw.get("baseline") is not None:
        _repository_path(path, "baseline", raw["baseline"], root)
    try:
        config = RepoConfig.model_validate({**raw, "root": path.parent, "source": path})
    except ValidationError as exc:
        problems = sorted(_problem(error, table.located, path) for error in exc.errors())
        raise ConfigError("\n".join(text for _, text in problems)) from None
    config._located = table.located
    return config


_INTERNAL_FIELDS = frozenset({"root", "source"})  # set by trainlint, never written in a config


def _problem(
    error: ErrorDetails, located: Mapping[KeyPath, Written], path: Path
) -> tuple[tuple[str, int, int], str]:
    """One validation error as ruff reports one, ``file:line:column: key: what is wrong``, and
    where it is (to sort by): at the key, the value or the closest enclosing entry written,
    and for an unknown key the closest valid one (``unknown key (did you mean 'select'?)``)."""
    written = tuple(error["loc"])
    loc = _ruff_spelling(written) if written else ()
    message = error["msg"]
    if error["type"] == "extra_forbidden" and loc:
        model = _model_at(loc[:-1])
        names = [] if model is None else [spelling for spelling, _ in _fields(model)]
        message = f"unknown key{did_you_mean(str(loc[-1]), names)}"
    depth = next((n for n in range(len(loc), 0, -1) if loc[:n] in located), 0)
    shown = f"{'.'.join(map(str, written)) or '(top)'}: {message}"
    if not depth:
        return (str(path), 0, 0), f"{path}: {shown}"
    where = located[loc[:depth]]
    at_value = depth == len(loc) and error["type"] not in {"extra_forbidden", "missing"}
    column = where.value_column if at_value else where.column
    return (str(where.file), where.line, column), f"{where.file}:{where.line}:{column}: {shown}"


def _model_at(loc: KeyPath) -> type[BaseModel] | None:
    """The config model (``RepoConfig``, ``Waiver``, ``PackSource``) that holds the keys at
    ``loc``: list indexes skipped, each key's field followed to the model it holds."""
    model: type[BaseModel] = RepoConfig
    for part in loc:
        if isinstance(part, int):
            continue
        fields = {spelling: info for spelling, info in _fields(model)}
        info = fields.get(part)
        held = _model_in(info.annotation) if info is not None else None
        if held is None:
            return None
        model = held
    return model


def _fields(model: type[BaseModel]) -> Iterator[tuple[str, FieldInfo]]:
    """A model's fields as a config spells them (``extend-select``), internal ones left out."""
    for name, info in model.model_fields.items():
        if model is not RepoConfig or name not in _INTERNAL_FIELDS:
            yield (info.alias or name).replace("_", "-"), info


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds: itself, or inside ``list[...]`` or ``X | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next(filter(None, map(_model_in, typing.get_args(annotation))), None)
