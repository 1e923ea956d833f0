"""Find candidate files under the given paths, honouring ``.gitignore`` and default excludes.

Candidates are picked by suffix, and extension-less files by a shell shebang; which format a
file is (if any) is decided later by content (sources.read_document).

Nothing outside the repository is read unless named on the command line (docs/security.md):
a walk never enters a symlinked folder and reads a symlinked file only when it resolves inside
the checked roots (``checked_roots``). What a walk meets and does not read — a FIFO, a device,
a symlink loop or a dangling link, a link out of the repository, a folder it cannot list — is
never opened and never silent: ``Candidates.unread`` keeps it with the reason, and
``trainlint show --files`` lists it as skipped.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from trainlint.errors import ConfigError

if TYPE_CHECKING:
    import pathspec


CANDIDATE_SUFFIXES = frozenset(
    {".yaml", ".yml", ".json", ".toml", ".sh", ".bash", ".slurm", ".sbatch", ".py"}
)

# Directories nobody keeps training configs in (ruff's and pre-commit's usual suspects).
EXCLUDED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", "build", "dist", "site-packages", ".trainlint",
    ".trainlint_cache",
    ".idea", ".vscode", ".github",
})  # fmt: skip

# TOML files of other tools: never training configs, so never read (an invalid one is theirs).
OTHER_TOOLS_TOML = frozenset({
    "pyproject.toml", "Cargo.toml", "ruff.toml", ".ruff.toml", "uv.toml", "poetry.toml",
    "pixi.toml", "rustfmt.toml", ".rustfmt.toml", "clippy.toml", ".clippy.toml",
    "rust-toolchain.toml", "taplo.toml", ".taplo.toml", "typos.toml", "_typos.toml",
    ".typos.toml", "netlify.toml", "wrangler.toml", "fly.toml", "samconfig.toml", "hugo.toml",
    "book.toml", "Project.toml", "Manifest.toml", "cliff.toml", "deny.toml", ".bumpversion.toml",
    "hatch.toml", "pdm.toml", "cibuildwheel.toml", "codecov.toml", "rye.toml",
})  # fmt: skip

# Well-known files of other tools that share our suffixes.
EXCLUDED_NAMES = OTHER_TOOLS_TOML | frozenset({
    "package.json", "package-lock.json", "tsconfig.json", "composer.json", "pnpm-lock.yaml",
    ".pre-commit-config.yaml", ".pre-commit-hooks.yaml", "mkdocs.yml", "docker-compose.yml",
    "docker-compose.yaml", ".readthedocs.yaml", "environment.yml", "environment.yaml",
    ".trainlint.yaml", ".trainlint.yml", ".trainlint.toml",
})  # fmt: skip

# What marks a repository's top folder.
REPOSITORY_MARKERS = (".git", ".hg")

MAX_GITIGNORE_BYTES = 1024 * 1024
"""The most of a ``.gitignore`` read: patterns past it are dropped (more files are checked)."""


class Candidates(list[Path]):
    """The candidate files, sorted, with what the walk met and did not read (``unread``:
    path → why, listed by ``trainlint show --files``) and the real folders whose files the
    run may read (``roots``: ``checked_roots`` of the paths named)."""

    def __init__(
        self,
        paths: Iterable[Path] = (),
        unread: dict[Path, str] | None = None,
        roots: tuple[Path, ...] = (),
    ) -> None:
        super().__init__(paths)
        self.unread = unread if unread is not None else {}
        self.roots = roots


def discover(paths: Iterable[Path], exclude: Iterable[Path] = ()) -> Candidates:
    """Candidate files, sorted, each file once however it was named (``a`` and ``$PWD/a``, a
    symlink and its target: the name first in walk order, ``_keep``).

    Files named explicitly are always candidates, and so is anything else named explicitly
    that is not a directory (a FIFO, a device, a symlink loop): ``read_file`` reports it as
    TL901 without opening it. A walk yields only regular files inside the checked roots and
    never enters a symlinked directory, so it cannot loop; it records what else it met in
    ``unread``. ``exclude`` names trainlint's own files (the report being written, the
    baseline): never candidates, however they are named. A named path in the current
    directory that a symlink leads out of it is a ConfigError.
    """
    _RESOLVED.clear()  # a new run: the tree may have changed since the last one
    named = list(paths)
    for path in named:
        _refuse_redirect(path)
    own = {resolved(path) for path in exclude}
    walk = _Walk(checked_roots(named))
    found: dict[Path, Path] = {}
    for path in named:
        if path.is_dir():
            for candidate, real in walk.files(path):
                _keep(found, real, candidate)
        elif os.path.lexists(path):
            _keep(found, resolved(path), path)
    kept = sorted(path for real, path in found.items() if real not in own)
    return Candidates(kept, unread=walk.unread, roots=walk.roots)


def _keep(found: dict[Path, Path], real: Path, name: Path) -> None:
    """Record ``name`` for the file ``real``; of two names of one file (a symlink and its
    target, a file named and walked) the first in walk order is kept, whatever order the
    paths were named in, so job ids do not depend on it."""
    held = found.get(real)
    if held is None or _walk_order(name) < _walk_order(held):
        found[real] = name


def _walk_order(path: Path) -> tuple[tuple[int, str], ...]:
    """A path's place in a walk of its top folder: a folder's files before its sub-folders,
    each by name (``_Walk.files``)."""
    *folders, name = path.parts or ("",)
    return (*((1, folder) for folder in folders), (0, name))


_RESOLVED: dict[Path | tuple[str, Path], Path] = {}


def resolved(path: Path) -> Path:
    """``path.resolve()`` that never raises: a symlink loop resolves as far as it goes.

    Remembered for the run (``discover`` starts each one afresh): assembly, the parse
    workers and the measurement lookup ask again for every file, and each ``realpath``
    costs an ``lstat`` per path component."""
    key = _key(path)
    real = _RESOLVED.get(key)
    if real is None:
        real = _RESOLVED[key] = Path(os.path.realpath(path))
    return real


def _key(path: Path) -> Path | tuple[str, Path]:
    """The cache key of a path: a relative one with the working directory, so it means the
    same file whatever the working directory was when it was first resolved (tests and diff
    mode change it). Not joined into one path: building a ``Path`` per lookup cost ~0.3 s of
    an edited run's 17,000 lookups."""
    return path if path.is_absolute() else (os.getcwd(), path)


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or under it (both already resolved)."""
    return path == folder or folder in path.parents


def checked_roots(paths: Iterable[Path]) -> tuple[Path, ...]:
    """The real folders whose files a run may read: for each named path (a folder, or a named
    file's folder), the top of its repository — the nearest folder holding ``.git`` — else the
    current directory when it holds the path (the repository in CI), else the folder itself.
    The filesystem root and the home folder are never a repository."""
    cwd = resolved(Path.cwd())
    folders = dict.fromkeys(
        resolved(path) if path.is_dir() else resolved(Path(os.path.abspath(path)).parent)
        for path in paths
    )  # a run may name many files of few folders
    return tuple(dict.fromkeys(_repository(folder, cwd) for folder in folders))


def _repository(folder: Path, cwd: Path) -> Path:
    for candidate in [folder, *folder.parents]:
        marked = any(os.path.lexists(candidate / marker) for marker in REPOSITORY_MARKERS)
        if marked and not _too_wide(candidate):
            return candidate
    return cwd if inside(folder, cwd) and not _too_wide(cwd) else folder


def _too_wide(folder: Path) -> bool:
    return folder == Path(folder.anchor) or folder == resolved(Path(os.path.expanduser("~")))


def _refuse_redirect(path: Path) -> None:
    """A named path inside the current repository (the one holding the current directory,
    else the current directory) that a symlink leads out of it is refused: in CI the
    workflow names ``configs/`` and a pull request can make it a link to the runner's home
    folder. A path named outside the repository is read as named."""
    cwd = resolved(Path.cwd())
    top = _repository(cwd, cwd)
    if _too_wide(top) or not os.path.exists(path):
        return  # no repository here; or missing, dangling, a loop: read_file's TL901
    if not inside(Path(os.path.abspath(path)), top):
        return
    real = resolved(path)
    if not inside(real, top):
        raise ConfigError(
            f"{path} leads out of the repository (to {real}) through a symlink; "
            "name that path itself to check it"
        )


def kind_of(mode: int) -> str:
    """What a file that is no regular file is, for the reason it is not read."""
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "a special file")


class NotRegularFile(OSError):
    """``open_regular`` found something else than a regular file (it changed since a stat)."""

    def __init__(self, mode: int) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind_of(mode)})")
        self.mode = mode


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for binary reading, only when it is a regular file. The open never
    blocks: a FIFO swapped in after a ``stat`` is refused (NotRegularFile), not waited on."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(mode)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


@dataclass
class _Walk:
    """One run's walks: the roots they may read, and what they met and did not read."""

    roots: tuple[Path, ...]
    unread: dict[Path, str] = field(default_factory=dict)

    def files(self, root: Path) -> Iterator[tuple[Path, Path]]:
        """Each candidate under ``root`` with its resolved path, in ``os.walk``'s order (a
        folder's files, then its sub-folders, each sorted by name); symlinked folders are
        not entered. A file that is no symlink resolves to its folder's resolved path plus
        its name: one ``realpath`` per folder rather than per file."""
        yield from self._folder(root, resolved(root), root, self._gitignore(root))

    def _folder(
        self, folder: Path, real: Path, root: Path, ignore: pathspec.GitIgnoreSpec | None
    ) -> Iterator[tuple[Path, Path]]:
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            why = exc.strerror or exc
            self.unread[folder] = f"folder cannot be read ({why}); its files are not checked"
            return
        subfolders: list[tuple[Path, Path]] = []
        for entry in entries:
            path = folder / entry.name
            if _is_dir(entry):
                entered = not entry.is_symlink() and entry.name not in EXCLUDED_DIRS
                if entered and not _ignored(ignore, root, path, True):
                    subfolders.append((path, real / entry.name))
            elif _maybe_candidate(path) and not _ignored(ignore, root, path, False):
                found = self._file(entry, path, real)
                if found is not None:
                    yield found
        for path, real_path in subfolders:
            yield from self._folder(path, real_path, root, ignore)

    def _file(self, entry: os.DirEntry[str], path: Path, folder: Path) -> tuple[Path, Path] | None:
        """A walked entry that is no folder as (path, resolved path) when it is a candidate;
        one with a candidate suffix that cannot or must not be read goes to ``unread``."""
        suffixed = path.suffix.lower() in CANDIDATE_SUFFIXES
        if entry.is_symlink():
            real = resolved(path)
            why = self._refused_link(path, real)
        else:
            real = _RESOLVED.setdefault(_key(path), folder / entry.name)
            why = _not_regular(entry)
        if why is not None:
            if suffixed:
                self.unread[path] = why
            return None
        return (path, real) if suffixed or _has_shell_shebang(path) else None

    def _refused_link(self, path: Path, real: Path) -> str | None:
        """Why a symlinked file is not read (None: it is a regular file inside a root)."""
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "symlink loop; not read"
            if exc.errno == errno.ENOENT:
                return f"a symlink to {os.readlink(path)}, which does not exist"
            return f"cannot read file: {exc.strerror or exc}"
        if not stat.S_ISREG(mode):
            return f"not a regular file ({kind_of(mode)}); not read"
        if not self.admits(real):
            return f"a symlink to {real}, outside the repository; not read"
        return None

    def admits(self, real: Path) -> bool:
        return any(inside(real, root) for root in self.roots)

    def _gitignore(self, root: Path) -> pathspec.GitIgnoreSpec | None:
        """The root's .gitignore (nested ones are rare in training repos and not read yet),
        when it is a regular file inside the repository; its first MiB at most.

        A line git would reject is skipped rather than failing the run.
        """
        file = root / ".gitignore"
        if not file.is_file() or not self.admits(resolved(file)):
            return None
        try:
            with open_regular(file) as handle:
                raw = handle.read(MAX_GITIGNORE_BYTES)
        except OSError:
            return None
        import pathspec  # only where there is a .gitignore to read

        text = raw.decode(errors="replace")
        valid = [line for line in text.splitlines() if _valid_pattern(line)]
        return pathspec.GitIgnoreSpec.from_lines(valid)


def _maybe_candidate(path: Path) -> bool:
    """A candidate by its name: a candidate suffix, or none (then a shell shebang decides)."""
    if path.name in EXCLUDED_NAMES:
        return False
    return not path.suffix or path.suffix.lower() in CANDIDATE_SUFFIXES


def _not_regular(entry: os.DirEntry[str]) -> str | None:
    """Why an entry that is no symlink is not read: it is no regular file (a FIFO, a device,
    a socket); None for a regular file (the listing knows, so no stat on the common path)."""
    try:
        if entry.is_file(follow_symlinks=False):
            return None
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}"
    return f"not a regular file ({kind_of(mode)}); not read"


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a symlink, as os.walk does
    except OSError:
        return False


def _valid_pattern(line: str) -> bool:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, TypeError):
        return False
    return True


def _ignored(spec: pathspec.GitIgnoreSpec | None, root: Path, path: Path, is_dir: bool) -> bool:
    if spec is None:
        return False
    relative = path.relative_to(root).as_posix() + ("/" if is_dir else "")
    return spec.match_file(relative)


def _has_shell_shebang(path: Path) -> bool:
    try:
        with open_regular(path) as handle:
            first = handle.readline(128)
    except OSError:
        return False
    return first.startswith(b"#!") and any(sh in first for sh in (b"sh", b"bash", b"zsh"))
