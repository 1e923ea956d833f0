"""Random edits of every repository in tests/fresh/repos, each followed by a cached and an
uncached ``trainlint check``: the two reports must be the same byte for byte, and a warm
re-run must give it again. This is how the cache's stale ``_base_`` documents were found.

Run:  python benchmarks/cache_stress.py [--seed 1] [--edits 4] [REPO ...]

Each repository is copied into a scratch git repository; each edit appends a blank line,
changes a number, deletes a line or removes a file (the kind and file drawn with --seed).
The signing key lives in a scratch XDG cache folder. Prints each mismatch, and exits 1 on
any (the reports of a mismatch are left in the scratch folder, which is then kept).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPOS = Path(__file__).resolve().parents[1] / "tests" / "fresh" / "repos"
SUFFIXES = (".yaml", ".yml", ".json", ".sh", ".slurm", ".py", ".toml", ".cfg")


def check(root: Path, env: dict[str, str], *extra: str) -> str:
    command = [sys.executable, "-m", "trainlint", "check", "--format", "json", *extra, "."]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    return done.stdout if done.returncode in (0, 1) else done.stdout + done.stderr


def edit(files: list[Path], rng: random.Random) -> str:
    """One random edit of one of ``files`` (removed from it when deleted); what it was."""
    path = rng.choice(files)
    text = path.read_text(errors="replace")
    kind = rng.choice(["append", "number", "line", "remove"])
    numbers = list(re.finditer(r"\b\d+\b", text))
    lines = text.splitlines(keepends=True)
    if kind == "number" and numbers:
        found = rng.choice(numbers)
        path.write_text(f"{text[: found.start()]}{int(found.group()) * 2 + 1}{text[found.end() :]}")
    elif kind == "line" and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
        path.write_text("".join(lines))
    elif kind == "remove":
        path.unlink()
        files.remove(path)
    else:
        kind = "append"
        path.write_text(text + "\n")
    return f"{kind} {path}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="*", help="names under tests/fresh/repos (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--edits", type=int, default=4)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    scratch = Path(tempfile.mkdtemp(prefix="cache-stress-"))
    env = {k: v for k, v in os.environ.items() if k != "TRAINLINT_NO_CACHE"}
    env["XDG_CACHE_HOME"] = str(scratch / "xdg")
    bad = 0
    for name in args.repos or sorted(p.name for p in REPOS.iterdir()):
        root = scratch / name
        shutil.copytree(REPOS / name, root)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        files = [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
                 and p.suffix in SUFFIXES]  # fmt: skip
        check(root, env)
        for step in range(args.edits if files else 0):
            what = edit(files, rng)
            cached, fresh = check(root, env), check(root, env, "--no-cache")
            warm = check(root, env)
            if not cached == fresh == warm:
                bad += 1
                print(f"MISMATCH {name} edit {step}: {what}")
                (scratch / f"{name}-{step}.cached.json").write_text(cached)
                (scratch / f"{name}-{step}.fresh.json").write_text(fresh)
        print(f"{name}: {'ok' if not bad else f'{bad} mismatches so far'}", flush=True)
    print(f"{bad} mismatches")
    if not bad:
        shutil.rmtree(scratch)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
