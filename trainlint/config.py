"""Repository configuration: ``[tool.trainlint]`` in pyproject.toml, ``.trainlint.yaml`` or
``.trainlint.toml``; the file closest to the checked path wins (ruff's rule).

Unknown keys are errors that name the key and the file. For now the config says which format
a glob of files is (``formats: {"configs/*.yaml": axolotl}``), for files whose content is
ambiguous; selection, waivers and parameters join it with the rule catalogue.
"""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from trainlint.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_FILES = (".trainlint.yaml", ".trainlint.yml", ".trainlint.toml", "pyproject.toml")


class RepoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    formats: dict[str, str] = {}
    """Glob (relative to the config's folder) → format name, overriding recognition."""

    root: Path = Path(".")
    """The folder the config file is in; globs are relative to it."""

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
        try:
            relative = path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None
        for glob, name in self.formats.items():
            if fnmatch.fnmatch(relative, glob):
                return name
        return None


def find_config(start: Path) -> RepoConfig:
    """The closest config at or above ``start`` (a file's folder or a folder); defaults if none."""
    folder = start.resolve() if start.is_dir() else start.resolve().parent
    for directory in [folder, *folder.parents]:
        for name in CONFIG_FILES:
            candidate = directory / name
            if candidate.is_file():
                raw = _read(candidate)
                if raw is not None:
                    return _validate(raw, candidate)
    return RepoConfig()


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
        return RepoConfig.model_validate({**raw, "root": path.parent})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{path}: {problems}") from None
