"""Find candidate files under the given paths, honouring ``.gitignore`` and default excludes.

Candidates are picked by suffix, and extension-less files by a shell shebang; which format a
file is (if any) is decided later by content (sources.read_document).
"""

from __future__ import annotations

import functools
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


def discover(paths: Iterable[Path]) -> list[Path]:
    """Candidate files, sorted, each file once however it was named (``a`` and ``$PWD/a``).

    Files named explicitly are always candidates, and so is anything else named explicitly
    that is not a directory (a FIFO, a device, a symlink loop): ``read_file`` reports it as
    TL901 without opening it. A walk only yields regular files and never follows a symlinked
    directory, so it cannot loop.
    """
    resolved.cache_clear()  # a new run: the tree may have changed since the last one
    found: dict[Path, Path] = {}
    for path in paths:
        if path.is_dir():
            candidates: Iterable[Path] = _walk(path)
        else:
            candidates = [path] if os.path.lexists(path) else []
        for candidate in candidates:
            found.setdefault(resolved(candidate), candidate)
    return sorted(found.values())


@functools.lru_cache(maxsize=1 << 16)
def resolved(path: Path) -> Path:
    """``path.resolve()`` that never raises: a symlink loop resolves as far as it goes.

    Remembered for the run (``discover`` starts each one afresh): assembly, the parse
    workers and the measurement lookup ask again for every file, and each ``realpath``
    costs an ``lstat`` per path component."""
    return Path(os.path.realpath(path))


def _walk(root: Path) -> Iterator[Path]:
    ignore = _gitignore(root)
    for directory, subdirs, files in os.walk(root):
        base = Path(directory)
        subdirs[:] = sorted(
            d
            for d in subdirs
            if d not in EXCLUDED_DIRS and not _ignored(ignore, root, base / d, True)
        )
        for name in sorted(files):
            path = base / name
            if _is_candidate(path) and not _ignored(ignore, root, path, False):
                yield path


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


def _is_candidate(path: Path) -> bool:
    # is_file: regular files only (a FIFO or device is never opened); False on a symlink loop
    if path.name in EXCLUDED_NAMES or not path.is_file():
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
