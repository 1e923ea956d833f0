"""Read the files of a run, each once: decoding, binary and size limits, and finding the file
a reference names.

``read_file`` turns one path into a ``Document`` or a ``Skipped`` and never raises on bad
input; ``Workspace`` keeps what was read, keyed by resolved path, and resolves references the
way their tools would, never outside the repository. Grouping documents into jobs is
``assemble``'s.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from trainlint.config import Configs, RepoConfig
from trainlint.discover import (
    Candidates,
    NotRegularFile,
    checked_roots,
    inside,
    kind_of,
    open_regular,
    resolved,
)
from trainlint.job import ParseError
from trainlint.sources import broken, read_document
from trainlint.sources.base import (
    Document,
    Input,
    Line,
    Reference,
    Skipped,
    UnsupportedWorkload,
    keep_trainlint_lines,
)
from trainlint.sources.base.consulted import noting
from trainlint.sources.base.workloads import looks_like_training
from trainlint.sources.structured import MAX_BYTES

Sighting = tuple[str, str]
"""A look at the file system made following a reference, as (kind, path): "doc", a file
loaded; "present" or "absent", a place a file was looked for; "text", a Hydra app read."""


@dataclass(frozen=True)
class Summary:
    """What a file's outcome and its inline suppressions read of its document
    (``files.summary_of``), kept beside it in the cache so that a run need not read the
    documents it does not assemble: the path it is shown as, its format (None: skipped),
    why it is no job or was skipped, the GPU workload it looks like (None when none, or when
    it states another purpose) and its ``trainlint:`` lines."""

    path: str
    format: str | None
    reason: str
    workload: UnsupportedWorkload | None
    trainlint_lines: tuple[Line, ...]


class Stub(Protocol):
    """A document the cache holds, read on first use (``Workspace.stubs``)."""

    @property
    def summary(self) -> Summary: ...

    def document(self) -> Document | Skipped: ...


def display(path: Path) -> str:
    """Paths as reported: relative to the current directory, symlinks kept as named (a check
    runs from its project root, ``workdir.at_root``, so these are root-relative)."""
    try:
        return Path(os.path.relpath(os.path.abspath(path))).as_posix()
    except ValueError:  # another drive (Windows)
        return Path(os.path.abspath(path)).as_posix()


@dataclass
class Workspace:
    """Documents read so far, keyed by resolved path, so each file is parsed once per run.

    A reference is read only when its real path lies inside ``roots`` (the run's checked
    roots, ``discover.checked_roots``; set by ``assemble`` from the paths it is given): one
    that a ``..``, a symlink or an absolute path leads out of the repository is unresolved,
    with the reason, and never opened."""

    root: Path = field(default_factory=Path.cwd)
    config: RepoConfig = field(default_factory=RepoConfig)
    configs: Configs | None = None
    """Each file's config (its ``formats``); None: ``config`` for every file."""
    documents: dict[Path, Document | Skipped] = field(default_factory=dict)
    roots: tuple[Path, ...] = ()
    overlay: Mapping[Path, str] = field(default_factory=dict)
    """Text that replaces a file's on disk, by resolved path: the unsaved buffers of an
    editor (``trainlint server``), read in place of the file whenever the run reads it."""
    probed: set[Path] = field(default_factory=set)
    """Where a reference was looked for and no file was (``locate``): a file created there
    changes which file the reference names, so a cached load depends on their absence."""
    stubs: dict[Path, Stub] = field(default_factory=dict)
    """Documents the cache holds, by resolved path, each read on its first ``load``: a run
    reads only those it assembles (what outcomes and suppressions need is in the stub)."""
    sightings: list[Sighting] | None = None
    """While a list (``watching``), every look at the file system made to follow references:
    what a cached job's assembly depends on (``cache.ClosureMemo``)."""

    def load(self, path: Path) -> Document | Skipped:
        self._sight("doc", path)
        key = resolved(path)
        if key in self.stubs:
            self.documents[key] = self.stubs.pop(key).document()
        if key not in self.documents:
            config = self.configs.of(path) if self.configs is not None else self.config
            try:
                forced = config.forced_format(path)
            except (OSError, RuntimeError):  # a symlink loop: read_file reports it
                forced = None
            unsaved = self.overlay.get(key)
            self.documents[key] = (
                read_file(path, forced) if unsaved is None else read_text(path, unsaved, forced)
            )
        return self.documents[key]

    def has(self, key: Path) -> bool:
        """Whether the document of the file whose real path is ``key`` is read or held."""
        return key in self.documents or key in self.stubs

    @contextmanager
    def watching(self) -> Iterator[list[Sighting]]:
        """Note every ``Sighting`` made in the block, into the list it yields."""
        outer, self.sightings = self.sightings, []
        try:
            yield self.sightings
        finally:
            self.sightings = outer

    def _sight(self, kind: str, path: Path) -> None:
        if self.sightings is not None:
            self.sightings.append((kind, str(path)))

    def admit(self, paths: Sequence[Path]) -> None:
        """Take the checked roots of the paths a run was given (once, the first time)."""
        if not self.roots:
            roots = paths.roots if isinstance(paths, Candidates) else checked_roots(paths)
            self.roots = roots or (resolved(self.root),)

    def admits(self, path: Path) -> bool:
        """Whether ``path`` resolves inside the repository (the checked roots)."""
        real = resolved(path)
        return any(inside(real, root) for root in self.roots or (resolved(self.root),))

    def resolve_reference(self, written: str, referrer: Path) -> Path | None:
        """A referenced path as written, tried from the referrer's folder up to the root."""
        return self._search(written, referrer)[0]

    def locate(self, reference: Reference, referrer: Path) -> Path | None:
        """The file a reference names, tried as its tool would: beside the referrer and up to
        the root, or in the config folder of the Hydra app it anchors to."""
        return self._find(reference, referrer)[0]

    def unresolvable(self, reference: Reference, referrer: Path) -> str | None:
        """Why a reference that was not found cannot be checked here (so it is no TL904):
        a path outside the repository (absolute, in a home folder, or led out by ``..`` or a
        symlink), or a path relative to an anchor that is not in the repository. None when
        it should have been found."""
        written = reference.path
        if reference.unresolved is not None:
            return reference.unresolved
        if written.startswith("~"):
            return "a path in a home folder, outside the repository"
        if Path(written).is_absolute():
            return "an absolute path, outside the repository (a cluster or container path)"
        refused = self._find(reference, referrer)[1]
        if refused is not None:
            return refused
        app = self.resolve_reference(reference.anchor, referrer) if reference.anchor else None
        if reference.anchor is not None and app is None:
            return f"relative to {reference.anchor}, which is not in the repository"
        if reference.in_app_config and app is not None and self._app_folder(app) is None:
            return f"in the config_path of {reference.anchor}'s @hydra.main, which names none"
        if reference.app_config_name and app is not None and self._app_name(app) is None:
            return f"the config_name of {reference.anchor}'s @hydra.main, which names none"
        return None

    def _find(self, reference: Reference, referrer: Path) -> tuple[Path | None, str | None]:
        """``locate``'s file, or why an existing one is not read (outside the repository)."""
        if not reference.in_app_config:
            return self._search(reference.path, referrer)
        app = self.resolve_reference(reference.anchor, referrer) if reference.anchor else None
        folder = self._app_folder(app) if app is not None else None
        name: str | None = reference.path
        if app is not None and reference.app_config_name:
            name = _yaml_name(self._app_name(app))
        if app is None or folder is None or not name:
            return None, None
        return self._pick([app.parent / folder / name])

    def _app_folder(self, app: Path) -> str | None:
        self._sight("text", app)
        return hydra_main_folder(app)

    def _app_name(self, app: Path) -> str | None:
        self._sight("text", app)
        return hydra_main_name(app)

    def _search(self, written: str, referrer: Path) -> tuple[Path | None, str | None]:
        return self._pick(self._tried(written, referrer))

    def _tried(self, written: str, referrer: Path) -> Iterator[Path]:
        """Where a written path is looked for: as it is when absolute, else from the
        referrer's folder up to the root (or a checked root), then under the root when the
        root is in the repository."""
        candidate = Path(os.path.expanduser(written))
        if candidate.is_absolute():
            yield candidate
            return
        tops = {resolved(self.root), *self.roots}
        for base in [referrer.parent, *referrer.parent.parents]:
            yield base / candidate
            if resolved(base) in tops:
                break
        if self.admits(self.root):
            yield self.root / candidate

    def _pick(self, tried: Iterable[Path]) -> tuple[Path | None, str | None]:
        """The first present file inside the repository; else why the first present one
        outside it is not read (None when none is present)."""
        refused: str | None = None
        for candidate in tried:
            if not present(candidate):
                self.probed.add(candidate)
                self._sight("absent", candidate)
                continue
            self._sight("present", candidate)
            if self.admits(candidate):
                return candidate, None
            where = resolved(candidate)
            refused = refused or f"resolves to {where}, outside the repository; not read"
        return None, refused


_HYDRA_MAIN = re.compile(r"@hydra\.main\(([^)]*)\)")
_CONFIG_PATH = re.compile(r"config_path\s*=\s*[\"']([^\"']*)[\"']")


_CONFIG_NAME = re.compile(r"config_name\s*=\s*[\"']([^\"']+)[\"']")


def hydra_main_folder(app: Path) -> str | None:
    """The ``config_path`` of an app's ``@hydra.main(...)``, read as text (never imported)."""
    return _hydra_main_argument(app, _CONFIG_PATH)


def hydra_main_name(app: Path) -> str | None:
    """The ``config_name`` of an app's ``@hydra.main(...)``: the primary config Hydra loads
    when the launch line names none."""
    return _hydra_main_argument(app, _CONFIG_NAME)


def _hydra_main_argument(app: Path, argument: re.Pattern[str]) -> str | None:
    try:
        with open_regular(app) as handle:
            text = handle.read(MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    decorator = _HYDRA_MAIN.search(text)
    found = argument.search(decorator.group(1)) if decorator else None
    return found.group(1) if found else None


def _yaml_name(name: str | None) -> str | None:
    """``ppo_trainer`` → ``ppo_trainer.yaml`` (Hydra adds the suffix)."""
    if name is None:
        return None
    return name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"


def present(path: Path | str) -> bool:
    """Whether a reference finds a file at ``path``: anything but a folder or nothing. A FIFO,
    a device or a symlink loop is found, and ``read_file`` reports it (TL901) without opening
    it; a dangling link is missing."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError as exc:
        return exc.errno == errno.ELOOP


def read_file(path: Path, forced: str | None = None) -> Document | Skipped:
    """One file as a Document, or why it is no part of a job (``Skipped``).

    Bad input never raises: a file that cannot be read, is not a regular file (a FIFO or a
    device is never opened) or is a symlink loop is a TL901 error. A binary file (a NUL byte
    in its first KiB) or one over ``MAX_BYTES`` is not parsed: a TL901 error when its head
    shows training keys, else skipped (a checkpoint, a dataset) with its error kept for a job
    that references it. Text that is not UTF-8 is decoded with replacement characters, so a
    config with a stray byte is still read, and a TL901 error names the first bad byte.
    """
    shown = display(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return broken(shown, f"not a regular file ({kind_of(info.st_mode)}); not read")
        if info.st_size > MAX_BYTES:
            return _oversized(path, shown, info.st_size)
        with open_regular(path) as handle:  # never blocks: a FIFO swapped in is refused
            raw = handle.read(MAX_BYTES + 1)  # the file may have grown since stat
    except NotRegularFile as exc:
        return broken(shown, f"not a regular file ({kind_of(exc.mode)}); not read")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return broken(shown, "symlink loop; not read")
        return broken(shown, f"cannot read file: {exc.strerror or exc}")
    if len(raw) > MAX_BYTES:
        return _oversized(path, shown, len(raw))
    nul = raw.find(b"\0", 0, BINARY_SNIFF)
    if nul >= 0:
        return _skipped(shown, f"binary file (NUL byte at offset {nul}); not parsed")
    text, bad = _decode(raw)
    doc, parsed = _parsed(shown, text, forced)
    if parsed and isinstance(doc, Document) and bad is not None:
        offset, byte = bad
        line = raw.count(b"\n", 0, offset) + 1
        column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
        message = (
            f"invalid UTF-8: byte 0x{byte:02x} at byte offset {offset}; "
            "read with replacement characters"
        )
        doc.errors.append(ParseError(file=shown, line=line, column=column, message=message))
    return doc


def read_text(path: Path, text: str, forced: str | None = None) -> Document | Skipped:
    """The file at ``path`` as if it held ``text`` (decoded already): an editor's unsaved
    buffer. A reader's bug fails this file only (TL901), never the run."""
    return _parsed(display(path), text, forced)[0]


def _parsed(shown: str, text: str, forced: str | None) -> tuple[Document | Skipped, bool]:
    """The text read by its format, and whether the reader finished (False: its bug)."""
    try:
        with noting() as consulted:
            read = read_document(Input(shown, text), forced)
        if consulted and isinstance(read, Document):
            read = replace(read, consulted=tuple(dict.fromkeys(consulted)))
        return keep_trainlint_lines(read, text), True
    except Exception as exc:  # a reader's bug: this file fails, the run goes on
        problem = f"{type(exc).__name__}: {exc}"
        doc = broken(shown, f"internal error reading this file ({problem}); please report it")
        return keep_trainlint_lines(doc, text), False


def _skipped(shown: str, message: str) -> Skipped:
    """A file not read, with the error a referencing job reports."""
    error = ParseError(file=shown, line=1, column=1, message=message)
    return Skipped(shown, message, error=error)


BINARY_SNIFF = 1024
"""A NUL byte in this many leading bytes marks a binary file (git's own heuristic: 8000)."""


def _decode(raw: bytes) -> tuple[str, tuple[int, int] | None]:
    """UTF-8 text (a BOM dropped) and the (offset, value) of the first invalid byte, if any."""
    start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw[start:].decode("utf-8"), None
    except UnicodeDecodeError as exc:
        offset = start + exc.start
        return raw[start:].decode("utf-8", errors="replace"), (offset, raw[offset])


def _oversized(path: Path, shown: str, size: int) -> Document | Skipped:
    """TL901 for a training config over the size limit; any other big file (a checkpoint, a
    dataset) is skipped, its error kept for a job that references it."""
    try:
        with open_regular(path) as handle:
            head = handle.read(BINARY_SNIFF * 16)
    except OSError:
        head = b""
    message = f"file is {_mib(size)}, over the {_mib(MAX_BYTES)} limit; not read"
    text = head.decode("utf-8", errors="replace")
    if b"\0" not in head and looks_like_training(Input(shown, text)):
        return broken(shown, message)
    return _skipped(shown, message)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB ({size:,} bytes)"
