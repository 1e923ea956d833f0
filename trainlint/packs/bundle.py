"""OPA bundles: the ``.manifest``, safe reading of a directory or ``.tar.gz``, and ``build``.

Follows OPA's bundle format (management-bundles docs; ``v1/bundle/bundle.go`` in OPA):

- ``.manifest`` (JSON, optional): ``revision``, ``roots`` (default ``[""]``: everything),
  ``metadata`` (free-form; trainlint reads name, version, description and
  ``min_trainlint_version``), ``rego_version``, ``file_rego_versions``.
- every ``data.json`` is merged at its directory's path (``a/b/data.json`` -> ``data.a.b``);
  the one at the root must hold an object; the same key from two files is a conflict.
- every Rego package and every data path must sit under a declared root, and roots must not
  overlap (OPA's ``validateAndInjectDefaults``).
- ``opa build`` writes tar members with a leading ``/`` (``/.manifest``, ``/data.json``);
  OPA reads either spelling, so a single leading ``/`` means the bundle root here too.

``data.yaml``/``data.yml`` are refused (OPA would load them; trainlint reads JSON only), as are
nested ``.manifest`` or ``*signatures.json`` files, which OPA would take for the bundle's own.

Every JSON file of a pack is read by ``load_json``: its nesting is measured on the text before
it is parsed (a ``data.json`` nesting 5,000 levels is a PolicyError, not a RecursionError), and
a ``data.json`` counts its directory levels too, since that is where its data sits. Paths may
nest ``Limits.path_depth`` folders.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trainlint.errors import PolicyError
from trainlint.writing import replace_file

if TYPE_CHECKING:
    import tarfile  # imported where archives are read or written: a check reads a directory

MANIFEST = ".manifest"
SIGNATURES = ".signatures.json"
DATA_FILE = "data.json"
MiB = 1024 * 1024
MAX_JSON_DEPTH = 64
"""How deep a pack's data may nest, its data.json's folders included (regorus reads 128)."""


@dataclass(frozen=True)
class Limits:
    """What a bundle may hold before it is refused (gzip bombs, runaway archives)."""

    member_bytes: int = 16 * MiB
    total_bytes: int = 64 * MiB
    members: int = 10_000
    path_depth: int = 32


DEFAULT_LIMITS = Limits()


class PackMetadata(BaseModel):
    """The keys trainlint reads from the manifest's free-form ``metadata``."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    version: str | None = None
    description: str | None = None
    min_trainlint_version: str | None = None


class Manifest(BaseModel):
    """OPA's ``.manifest``; keys OPA knows that trainlint does not use are kept as they are."""

    model_config = ConfigDict(extra="allow")

    revision: str = ""
    roots: list[str] | None = None
    metadata: dict[str, Any] | None = None
    rego_version: int | None = Field(default=None, ge=0, le=1)
    file_rego_versions: dict[str, int] | None = None

    @property
    def info(self) -> PackMetadata:
        return PackMetadata.model_validate(self.metadata or {})

    @property
    def effective_roots(self) -> list[str]:
        """The roots with OPA's default (``[""]``, the whole tree) and no edge slashes."""
        roots = [""] if self.roots is None else self.roots
        return [root.strip("/") for root in roots]


def read_bundle(path: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, bytes]:
    """Every file of a bundle directory or ``.tar.gz``: bundle-relative POSIX path -> bytes."""
    if path.is_dir():
        return read_directory(path, limits)
    if path.is_file() and is_archive(path):
        return read_archive(path, limits)
    raise PolicyError(f"{path}: policy pack not found (expected a directory or a .tar.gz bundle)")


def is_archive(path: Path) -> bool:
    return path.name.endswith((".tar.gz", ".tgz"))


def read_directory(root: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, bytes]:
    """The files a bundle directory holds; dot-files (but ``.manifest`` and
    ``.signatures.json``) and ``__pycache__`` are not part of it; links are refused."""
    files: dict[str, bytes] = {}
    total = 0
    for file in _walk(root, root, limits.path_depth):
        name = file.relative_to(root).as_posix()
        size = file.stat().st_size
        total += size
        _check_size(f"{root}: member {name!r}", size, total, len(files) + 1, limits)
        try:
            files[name] = file.read_bytes()
        except OSError as exc:
            raise PolicyError(f"{root / name}: cannot read: {exc}") from None
    return files


def _walk(root: Path, folder: Path, depth: int) -> list[Path]:
    found: list[Path] = []
    for entry in sorted(folder.iterdir()):
        rel = entry.relative_to(root).as_posix()
        if depth <= 0:
            raise PolicyError(f"{root}: {rel!r} nests folders deeper than the limit; refused")
        if entry.is_symlink():
            raise PolicyError(f"{root}: {rel!r} is a symbolic link (a bundle holds plain files)")
        if entry.name == "__pycache__" or (entry.name.startswith(".") and rel not in _DOTFILES):
            continue
        if entry.is_dir():
            found.extend(_walk(root, entry, depth - 1))
        elif entry.is_file():
            found.append(entry)
        else:
            raise PolicyError(f"{root}: {rel!r} is not a regular file")
    return found


_DOTFILES = (MANIFEST, SIGNATURES)


def read_archive(archive: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, bytes]:
    """Extract a ``.tar.gz`` in memory, refusing anything but plain files with safe names."""
    import tarfile

    files: dict[str, bytes] = {}
    total = 0
    try:
        with archive.open("rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
            capped = _Capped(unzipped, limits.total_bytes + 16 * MiB, archive)
            with tarfile.open(fileobj=cast("IO[bytes]", capped), mode="r|") as tar:
                for member in tar:
                    name = _member_name(archive, member, limits.path_depth)
                    if member.isdir():
                        continue
                    total += member.size
                    which = f"{archive}: member {member.name!r}"
                    _check_size(which, member.size, total, len(files) + 1, limits)
                    if name in files:
                        raise PolicyError(f"{archive}: member {member.name!r} appears twice")
                    stream = tar.extractfile(member)
                    files[name] = stream.read() if stream else b""
    except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
        raise PolicyError(f"{archive}: not a readable .tar.gz bundle: {exc}") from None
    return files


class _Capped(io.RawIOBase):
    """A reader that stops a gzip bomb: it refuses to inflate past ``limit`` bytes."""

    def __init__(self, inner: gzip.GzipFile, limit: int, archive: Path) -> None:
        self._inner, self._limit, self._archive, self._count = inner, limit, archive, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._inner.readinto(buffer)
        self._count += count
        if self._count > self._limit:
            raise PolicyError(f"{self._archive}: inflates past {self._limit} bytes; refused")
        return count


_DRIVE = re.compile(r"^[A-Za-z]:")


def _member_name(archive: Path, member: tarfile.TarInfo, depth: int) -> str:
    """The member's bundle path; PolicyError naming it when it is unsafe or not a file."""
    import tarfile

    raw = member.name
    where = f"{archive}: member {raw!r}"
    if member.issym() or member.islnk():
        raise PolicyError(f"{where} is a link (to {member.linkname!r}); refused")
    if member.ischr() or member.isblk() or member.isfifo():
        raise PolicyError(f"{where} is a device or FIFO; refused")
    if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE):
        raise PolicyError(f"{where} has unsupported type {member.type!r}; refused")
    if "\\" in raw or "\x00" in raw:
        raise PolicyError(f"{where} has a backslash or NUL in its name; refused")
    # ``opa build`` writes "/data.json": one leading slash is the bundle root, not the disk's.
    name = raw[1:] if raw.startswith("/") else raw
    if name.startswith("/") or _DRIVE.match(name):
        raise PolicyError(f"{where} is an absolute path; refused")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise PolicyError(f"{where} climbs out of the bundle with '..'; refused")
    if not parts and not member.isdir():
        raise PolicyError(f"{where} has an empty name; refused")
    if len(parts) > depth:
        raise PolicyError(f"{where} nests deeper than {depth} folders; refused")
    return "/".join(parts)


def _check_size(which: str, size: int, total: int, count: int, limits: Limits) -> None:
    """``which`` (``<bundle>: member '<name>'``), of ``size`` bytes, the ``count``-th member,
    with ``total`` bytes so far, within ``limits``."""
    if size > limits.member_bytes:
        message = f"is {size} bytes, over the {limits.member_bytes}-byte limit for one file"
        raise PolicyError(f"{which} {message}")
    if total > limits.total_bytes:
        message = f"takes the bundle past {limits.total_bytes} bytes in all"
        raise PolicyError(f"{which} {message}")
    if count > limits.members:
        raise PolicyError(f"{which} is past the limit of {limits.members} files")


def parse_manifest(files: dict[str, bytes], origin: str) -> Manifest | None:
    """The bundle's ``.manifest``, None when it has none; PolicyError on anything invalid."""
    _refuse_lookalikes(files, origin)
    raw = files.get(MANIFEST)
    if raw is None:
        return None
    try:
        manifest = Manifest.model_validate(load_json(raw, f"{origin}/{MANIFEST}"))
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}"
                           for e in exc.errors())  # fmt: skip
        raise PolicyError(f"{origin}/{MANIFEST}: {detail}") from None
    _check_roots_overlap(manifest.effective_roots, origin)
    return manifest


def _refuse_lookalikes(files: dict[str, bytes], origin: str) -> None:
    """Files OPA would mistake for the manifest or signatures, or data we would not read."""
    for name in files:
        base = name.rsplit("/", 1)[-1]
        if name != MANIFEST and name.endswith(MANIFEST):
            raise PolicyError(f"{origin}/{name}: OPA reads any '*.manifest' as the bundle manifest")
        if name != SIGNATURES and name.endswith("signatures.json"):
            raise PolicyError(f"{origin}/{name}: OPA reads any '*signatures.json' as signatures")
        if base in ("data.yaml", "data.yml"):
            raise PolicyError(f"{origin}/{name}: trainlint packs take data as data.json only")


def _check_roots_overlap(roots: list[str], origin: str) -> None:
    for index, root in enumerate(roots):
        for other in roots[index + 1 :]:
            if root_contains(root, other) or root_contains(other, root):
                raise PolicyError(f"{origin}/{MANIFEST}: roots {root!r} and {other!r} overlap")


def root_contains(root: str, path: str) -> bool:
    """OPA's ``rootContains``: segment-wise prefix; the empty root holds everything."""
    if root == "":
        return True
    root_parts, parts = root.split("/"), path.split("/")
    return len(root_parts) <= len(parts) and parts[: len(root_parts)] == root_parts


def merge_data(files: dict[str, bytes], origin: str) -> dict[str, Any]:
    """Every ``data.json`` at its directory's path, merged; conflicts are errors (OPA)."""
    data: dict[str, Any] = {}
    for name in sorted(files):
        if name.rsplit("/", 1)[-1] != DATA_FILE:
            continue
        where = f"{origin}/{name}"
        key = [part for part in name.split("/")[:-1] if part]
        value = load_json(files[name], where, MAX_JSON_DEPTH - len(key))
        if not key and not isinstance(value, dict):
            raise PolicyError(f"{where}: data.json must hold a JSON object")
        for part in reversed(key):
            value = {part: value}
        conflict = _merge_into(data, value)
        if conflict is not None:
            raise PolicyError(f"{where}: data at /{conflict} is already set by another data.json")
    return data


def _merge_into(base: dict[str, Any], extra: dict[str, Any], prefix: str = "") -> str | None:
    """Deep-merge ``extra`` into ``base``; the conflicting path when a key is set twice."""
    for key, value in extra.items():
        path = f"{prefix}{key}"
        if key not in base:
            base[key] = value
        elif isinstance(base[key], dict) and isinstance(value, dict):
            conflict = _merge_into(base[key], value, path + "/")
            if conflict is not None:
                return conflict
        else:
            return path
    return None


def check_roots(roots: list[str], packages: dict[str, str], data: Any, origin: str) -> None:
    """Every package (file -> package) and every data path under a root (OPA semantics)."""
    for file, package in sorted(packages.items()):
        path = package.replace(".", "/")
        if not any(root_contains(root, path) for root in roots):
            raise PolicyError(f"{origin}/{file}: package {package} is outside the manifest "
                              f"roots {roots}")  # fmt: skip
    _check_data_roots(roots, data, "", origin)


def _check_data_roots(roots: list[str], node: Any, path: str, origin: str) -> None:
    if any(root_contains(root, path) for root in roots):
        return
    above_a_root = any(root_contains(path, root) for root in roots)
    if isinstance(node, dict) and above_a_root:
        for key, child in node.items():
            _check_data_roots(roots, child, f"{path}/{key}" if path else key, origin)
        return
    raise PolicyError(f"{origin}: data at /{path} is outside the manifest roots {roots} "
                      "(a data.json sits at its directory's path)")  # fmt: skip


def check_version(manifest: Manifest | None, current: str, origin: str) -> None:
    """Refuse a pack whose ``metadata.min_trainlint_version`` is newer than this trainlint."""
    wanted = manifest.info.min_trainlint_version if manifest else None
    if not wanted:
        return
    if _release(wanted) > _release(current):
        raise PolicyError(f"{origin}: pack needs trainlint >= {wanted}; this is trainlint "
                          f"{current} (upgrade trainlint or use an older pack)")  # fmt: skip


def _release(version: str) -> tuple[int, ...]:
    """The numeric release part of a PEP 440 version (``1.2.0rc1`` -> (1, 2))."""
    match = re.match(r"v?(\d+(?:\.\d+)*)", version.strip())
    if not match:
        raise PolicyError(f"min_trainlint_version {version!r} is not a version number")
    parts = [int(part) for part in match.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def load_json(raw: bytes, where: str, depth: int = MAX_JSON_DEPTH) -> Any:
    """A pack's JSON file: UTF-8, nesting at most ``depth`` levels (measured before parsing),
    no NaN or Infinity; PolicyError saying what is wrong."""
    text = _text(raw, where)
    check_depth(text, where, depth)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # also a 5,000-digit number (ValueError)
        raise PolicyError(f"{where}: invalid JSON: {exc}") from None


# A string (an unterminated one runs to the end of the text), as an unrolled loop: linear.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}


def check_depth(text: str, where: str, depth: int) -> None:
    """PolicyError when the JSON ``text`` nests arrays and objects deeper than ``depth``."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    deepest = max(accumulate(map(_DELTA.__getitem__, brackets)), default=0)
    if deepest > depth:
        raise PolicyError(f"{where}: nests deeper than {max(depth, 0)} levels; refused")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _text(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{where}: not UTF-8: {exc}") from None


def build(directory: Path, output: Path) -> list[str]:
    """Write ``directory`` as a deterministic ``.tar.gz`` OPA loads; returns the members.

    The pack is loaded first (manifest, roots, data, rule METADATA), so a broken pack is never
    built. Members are sorted, named ``/<path>`` as ``opa build`` names them, with mtime 0,
    uid/gid 0, mode 0644, and the gzip header carries no name and mtime 0.
    """
    from trainlint.packs import load_pack  # the pack layer sits above this module

    if not directory.is_dir():
        raise PolicyError(f"{directory}: not a bundle directory")
    load_pack(directory)
    files = read_directory(directory)
    skip = output.resolve().relative_to(directory.resolve()).as_posix() if _inside(
        output, directory) else None  # fmt: skip
    names = sorted(name for name in files if name != skip)
    import tarfile

    payload = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=payload, mtime=0) as zipped:  # noqa: SIM117
        with tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in names:
                tar.addfile(_tarinfo("/" + name, len(files[name])), io.BytesIO(files[name]))
    replace_file(output, payload.getvalue())
    return names


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _tarinfo(name: str, size: int) -> tarfile.TarInfo:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, 0, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    return info
