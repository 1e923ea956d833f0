"""Where org packs come from, as the repo config lists them (``[[tool.trainlint.packs]]``).

One of ``path`` (a bundle directory or ``.tar.gz``, relative to the config), ``url`` (HTTPS,
pinned by ``sha256`` or verified with ``public_key``) or ``entry_point`` (a name in the
``trainlint.packs`` entry-point group of an installed distribution). Turning a source into a
local bundle path is :func:`trainlint.packs.fetch.resolve`; this module holds the model and the
local lookups (config-relative paths, entry points).

An entry point may load to a path (``str``, ``os.PathLike``, an ``importlib.resources``
Traversable), a module (its package directory is the bundle) or a zero-argument callable that
returns one of those. A pip-installable pack declares, for example::

    [project.entry-points."trainlint.packs"]
    acme-ml = "acme_ml_pack:bundle"        # def bundle(): return files(__name__) / "bundle"
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from importlib import metadata, resources
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trainlint.errors import PolicyError

ENTRY_POINT_GROUP = "trainlint.packs"


class PackSource(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    path: str | None = None
    url: str | None = None
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{64}$")
    public_key: str | None = Field(default=None, alias="public-key")
    """A PEM public key file (RS256/ES256) or a secret file (HS256), relative to the config."""
    key_id: str | None = Field(default=None, alias="key-id")
    entry_point: str | None = Field(default=None, alias="entry-point")

    @model_validator(mode="after")
    def _one_location(self) -> PackSource:
        given = [name for name in ("path", "url", "entry_point") if getattr(self, name)]
        if len(given) != 1:
            raise ValueError("a pack source needs exactly one of path, url or entry_point")
        return self


def local_path(path: str, config_root: Path) -> Path:
    """``path`` (relative to the directory of the config that names it) as an existing path."""
    resolved = config_root / Path(path).expanduser()
    if not resolved.exists():
        raise PolicyError(f"pack path {path!r} not found (looked for {resolved})")
    return resolved


def entry_point_path(name: str, *, cache_dir: Path) -> Path:
    """The bundle path that the ``trainlint.packs`` entry point ``name`` loads to.

    A Traversable that is not on the file system (a zipped distribution) is copied once under
    ``cache_dir/entry-points/``.
    """
    found = metadata.entry_points(group=ENTRY_POINT_GROUP).select(name=name)
    if not found:
        available = sorted({ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)})
        listed = ", ".join(available) if available else "none installed"
        raise PolicyError(
            f"no pack entry point {name!r} in group {ENTRY_POINT_GROUP!r} (available: {listed})"
        )
    entry = next(iter(found))
    label = f"pack entry point {name!r} ({entry.value})"
    try:
        loaded: Any = entry.load()
        if isinstance(loaded, ModuleType):
            loaded = resources.files(loaded)
        elif callable(loaded):
            loaded = loaded()
    except Exception as exc:  # third-party code: any failure is the pack's, reported as such
        raise PolicyError(f"{label} failed to load: {type(exc).__name__}: {exc}") from exc
    path = _as_path(loaded, label, cache_dir / "entry-points" / _slot(name, entry))
    if not path.exists():
        raise PolicyError(f"{label} points at {path}, which does not exist")
    return path


def _as_path(obj: object, label: str, copy_to: Path) -> Path:
    if isinstance(obj, (str, os.PathLike)):
        return Path(obj)
    if _is_traversable(obj):
        return _materialize(obj, copy_to)
    raise PolicyError(f"{label} gave a {type(obj).__name__}; expected a path to a bundle")


def _is_traversable(obj: object) -> bool:
    return all(hasattr(obj, attr) for attr in ("iterdir", "is_dir", "read_bytes", "name"))


def _slot(name: str, entry: metadata.EntryPoint) -> str:
    dist = entry.dist
    version = f"{dist.name}-{dist.version}" if dist is not None else ""
    digest = hashlib.sha256(f"{name}\0{entry.value}\0{version}".encode()).hexdigest()
    return digest[:24]


def _materialize(node: Any, dest: Path) -> Path:
    """Copy a non-file-system Traversable (a zipped package) to ``dest``, once, atomically."""
    target: Path = dest / str(node.name)
    if target.exists():
        return target
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=dest.parent))
    try:
        _copy_tree(node, staging / node.name)
        try:
            os.replace(staging, dest)
        except OSError:  # another process finished first; its copy is identical
            if not target.exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _copy_tree(node: Any, out: Path) -> None:
    if node.is_dir():
        out.mkdir()
        for child in node.iterdir():
            _copy_tree(child, out / child.name)
    else:
        out.write_bytes(node.read_bytes())
