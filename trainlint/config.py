"""Repository configuration: ``[tool.trainlint]`` in pyproject.toml, ``.trainlint.yaml`` or
``.trainlint.toml``; the file closest to the checked path wins (ruff's rule), and ``extend``
names a base config it inherits from (the extending file's keys win).

Keys are spelled as in ruff (``extend-select``, ``per-file-ignores``; snake_case works too).
Unknown keys are errors that name the key and the file; so is a waiver without a reason.
"""

from __future__ import annotations

import datetime
import fnmatch
import sys
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trainlint.errors import ConfigError
from trainlint.packs.sources import PackSource

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_FILES = (".trainlint.yaml", ".trainlint.yml", ".trainlint.toml", "pyproject.toml")


MAX_EXTENDS = 8  # a chain of ``extend`` longer than this is a loop


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

    root: Path = Path(".")
    """The folder the config file is in; globs are relative to it."""

    source: Path | None = None
    """The config file itself (None for defaults), for findings about the config."""

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


def find_config(start: Path) -> RepoConfig:
    """The closest config at or above ``start`` (a file's folder or a folder); defaults if none."""
    folder = start.resolve() if start.is_dir() else start.absolute().parent.resolve()
    for directory in [folder, *folder.parents]:
        for name in CONFIG_FILES:
            candidate = directory / name
            if candidate.is_file():
                raw = _read(candidate)
                if raw is not None:
                    return _validate(_extended(raw, candidate), candidate)
    return RepoConfig()


def load_config(path: Path) -> RepoConfig:
    """The config in one named file (``--config``), with its ``extend`` chain."""
    raw = _read(path)
    if raw is None:
        raise ConfigError(f"{path}: no [tool.trainlint] table")
    return _validate(_extended(raw, path), path)


def _extended(raw: dict[str, Any], path: Path, depth: int = 0) -> dict[str, Any]:
    """``raw`` over its ``extend`` chain: keys of the extending file replace the base's."""
    base_name = raw.get("extend")
    if base_name is None:
        return raw
    if depth >= MAX_EXTENDS:
        raise ConfigError(f"{path}: 'extend' chain longer than {MAX_EXTENDS} (a loop?)")
    base_path = (path.parent / str(base_name)).resolve()
    base = _read(base_path) if base_path.is_file() else None
    if base is None:
        raise ConfigError(f"{path}: extend: {base_name!r} is not a trainlint config file")
    inherited = _extended(base, base_path, depth + 1)
    merged = {**inherited, **raw}
    params = dict(inherited.get("params", {}))
    for rule, values in raw.get("params", {}).items():
        params[rule] = {**params.get(rule, {}), **values}
    if params:
        merged["params"] = params
    return merged


def _read(path: Path) -> dict[str, Any] | None:
    """The trainlint table of a config file; None for a pyproject.toml without one."""
    try:
        text = path.read_text()
        if path.name == "pyproject.toml":
            table = tomllib.loads(text).get("tool", {}).get("trainlint")
            return dict(table) if isinstance(table, dict) else None
        data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping")
    return data


def _validate(raw: dict[str, Any], path: Path) -> RepoConfig:
    try:
        return RepoConfig.model_validate({**raw, "root": path.parent, "source": path})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{path}: {problems}") from None
