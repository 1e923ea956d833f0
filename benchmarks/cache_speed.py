"""The persistent cache's gain (issue 19): cold, warm and one-edited-file checks of one tree.

Run:  python benchmarks/cache_speed.py DIR [--runs 7]

DIR is copied into a scratch git repository (its project root, where ``.trainlint_cache``
goes). Each round runs, as subprocesses with bytecode caching on (bench_scale.py's
``CHILD_ENV``), in this order so that load drifts hit every kind alike:

* ``cold``: ``trainlint check --no-cache`` (what every run cost before the cache);
* ``cold, cache filled``: ``check`` with the cache folder removed first (cold plus writing);
* ``warm``: ``check`` again on the unchanged tree;
* ``one file edited``: one file that roots a job gets a comment line added or removed (a
  real change of its bytes), then ``check``.

Every run's output is compared with the cold run's: the cache must not change a byte (the
edited runs against a ``--no-cache`` run of the same edit, once per edit state). Printed:
fastest and median per kind, each as a share of the cold fastest/median, the parse floor
(bench_scale.py's), and the calibration loop before and after. Results are in
docs/benchmarks.md ("The cache").
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import CHILD_ENV, TRAINLINT, calibrate, parse_floor

KINDS = ("cold", "cold, cache filled", "warm", "one file edited")


def timed(args: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=CHILD_ENV, cwd=cwd)
    return time.perf_counter() - start, done.stdout


def edited_file(root: Path) -> Path:
    """A YAML file that roots a job (its first finding's file), toggled by the edit rounds."""
    done = subprocess.run([*TRAINLINT, "check", "--no-cache", "--format", "json", "."],
                          capture_output=True, text=True, env=CHILD_ENV, cwd=root)  # fmt: skip
    import json

    findings = json.loads(done.stdout)["findings"]
    files: list[str] = [f["file"] for f in findings if f["file"].endswith(".yaml")]
    return root / files[0]


def toggle(path: Path) -> None:
    """Add a comment line, or remove the one added: a change of bytes, not of meaning."""
    text = path.read_text()
    marker = "# edited by cache_speed.py\n"
    path.write_text(text[len(marker) :] if text.startswith(marker) else marker + text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    print(f"Calibration loop before: {calibrate():.3f} s\n")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "repo"
        shutil.copytree(args.tree, root, ignore=shutil.ignore_patterns(".trainlint_cache"))
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        times = measure(root, args.runs)
        parse_floor(root)  # imports the parsers before timing the floor
        floor = min(_seconds(lambda: parse_floor(root)) for _ in range(args.runs))
    cold_fast, cold_median = min(times["cold"]), statistics.median(times["cold"])
    print("| run | fastest s | median s | fastest / cold | median / cold |")
    print("|---|---|---|---|---|")
    for kind in KINDS:
        fast, median = min(times[kind]), statistics.median(times[kind])
        print(f"| {kind} | {fast:.3f} | {median:.3f} | {fast / cold_fast:.0%} | "
              f"{median / cold_median:.0%} |")  # fmt: skip
    print(f"\nParse floor: {floor:.3f} s; cold check / floor: {cold_fast / floor:.2f}x (fastest)")
    print(f"\nCalibration loop after: {calibrate():.3f} s")


def measure(root: Path, runs: int) -> dict[str, list[float]]:
    """Each kind's wall times over ``runs`` rounds; every output checked against --no-cache."""
    check = [*TRAINLINT, "check", "."]
    timed(check, root)  # writes the .pyc files, as an install does
    target = edited_file(root)
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    expected: dict[bool, str] = {}
    for _ in range(runs):
        seconds, plain = timed([*check, "--no-cache"], root)
        times["cold"].append(seconds)
        shutil.rmtree(root / ".trainlint_cache", ignore_errors=True)
        for kind in ("cold, cache filled", "warm"):
            seconds, out = timed(check, root)
            assert out == plain, f"{kind}: the cache changed the report"
            times[kind].append(seconds)
        toggle(target)
        seconds, out = timed(check, root)
        state = target.read_text().startswith("#")
        expected.setdefault(state, timed([*check, "--no-cache"], root)[1])
        assert out == expected[state], "one file edited: the cache changed the report"
        times["one file edited"].append(seconds)
        toggle(target)  # back, so the next round's cold run is the same tree
        timed(check, root)  # and the cache holds the tree as it is again
    return times


def _seconds(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
