"""Find candidate files under the given paths, honouring ``.gitignore`` and default excludes.

Candidates are picked by suffix, and extension-less files by a shell shebang; which format a
file is (if any) is decided later by content (sources.read_document).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec


CANDIDATE_SUFFIXES = frozenset(
    {".yaml", ".yml", ".json", ".toml", ".sh", ".bash", ".slurm", ".sbatch", ".py"}
)

# Directories nobody keeps training configs in (ruff's and pre-commit's usual suspects).
EXCLUDED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", "build", "dist", "site-packages", ".trainlint",
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


def discover(paths: Iterable[Path], exclude: Iterable[Path] = ()) -> list[Path]:
    """Candidate files, sorted, each file once however it was named (``a`` and ``$PWD/a``).

    Files named explicitly are always candidates, and so is anything else named explicitly
    that is not a directory (a FIFO, a device, a symlink loop): ``read_file`` reports it as
    TL901 without opening it. A walk only yields regular files and never follows a symlinked
    directory, so it cannot loop. ``exclude`` names trainlint's own files (the report being
    written, the baseline): never candidates, however they are named.
    """
    _RESOLVED.clear()  # a new run: the tree may have changed since the last one
    own = {resolved(path) for path in exclude}
    found: dict[Path, Path] = {}
    for path in paths:
        if path.is_dir():
            for candidate, real in _walk(path):
                found.setdefault(real, candidate)
        elif os.path.lexists(path):
            found.setdefault(resolved(path), path)
    return sorted(path for real, path in found.items() if real not in own)


_RESOLVED: dict[Path, Path] = {}


def resolved(path: Path) -> Path:
    """``path.resolve()`` that never raises: a symlink loop resolves as far as it goes.

    Remembered for the run (``discover`` starts each one afresh): assembly, the parse
    workers and the measurement lookup ask again for every file, and each ``realpath``
    costs an ``lstat`` per path component."""
    real = _RESOLVED.get(path)
    if real is None:
        real = _RESOLVED[path] = Path(os.path.realpath(path))
    return real


def _walk(root: Path) -> Iterator[tuple[Path, Path]]:
    """Each candidate under ``root`` with its resolved path, in ``os.walk``'s order (a
    folder's files, then its sub-folders, each sorted by name); symlinked folders are not
    entered. A file that is no symlink resolves to its folder's resolved path plus its name:
    one ``realpath`` per folder rather than per file."""
    yield from _walk_folder(root, resolved(root), root, _gitignore(root))


def _walk_folder(
    folder: Path, real: Path, root: Path, ignore: pathspec.GitIgnoreSpec | None
) -> Iterator[tuple[Path, Path]]:
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return
    subfolders: list[tuple[Path, Path]] = []
    for entry in entries:
        path = folder / entry.name
        if _is_dir(entry):
            entered = not entry.is_symlink() and entry.name not in EXCLUDED_DIRS
            if entered and not _ignored(ignore, root, path, True):
                subfolders.append((path, real / entry.name))
        elif _is_candidate(path, _is_file(entry)) and not _ignored(ignore, root, path, False):
            if entry.is_symlink():
                yield path, resolved(path)
            else:
                yield path, _RESOLVED.setdefault(path, real / entry.name)
    for path, real_path in subfolders:
        yield from _walk_folder(path, real_path, root, ignore)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a symlink, as os.walk does
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    """A regular file (after symlinks): a FIFO or device is never opened; False on a loop."""
    try:
        return entry.is_file()
    except OSError:
        return False


def _gitignore(root: Path) -> pathspec.GitIgnoreSpec | None:
    """The root's .gitignore (nested ones are rare in training repos and not read yet).

    A line git would reject is skipped rather than failing the run.
    """
    file = root / ".gitignore"
    if not file.is_file():
        return None
    import pathspec  # only where there is a .gitignore to read

    valid = [line for line in file.read_text(errors="replace").splitlines() if _valid_pattern(line)]
    return pathspec.GitIgnoreSpec.from_lines(valid)


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


def _is_candidate(path: Path, is_file: bool) -> bool:
    if path.name in EXCLUDED_NAMES or not is_file:
        return False
    if path.suffix.lower() in CANDIDATE_SUFFIXES:
        return True
    return not path.suffix and _has_shell_shebang(path)


def _has_shell_shebang(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            first = handle.readline(128)
    except OSError:
        return False
    return first.startswith(b"#!") and any(sh in first for sh in (b"sh", b"bash", b"zsh"))
