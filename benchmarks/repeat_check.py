"""`trainlint check` on the same paths many times: the spread on a machine whose speed drifts.

Run:  python benchmarks/repeat_check.py DIR [DIR ...] [--runs 11]

For each DIR, ``python -m trainlint check DIR`` runs --runs times (bytecode caching on, as in
bench_scale.py) and the fastest, 25th percentile, median and slowest wall times are printed,
between two calibration loops. Results are in docs/benchmarks.md ("Results").
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import CHILD_ENV, TRAINLINT, calibrate


def wall_times(path: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [*TRAINLINT, "check", "--no-cache", str(path)], capture_output=True, env=CHILD_ENV
        )
        times.append(time.perf_counter() - start)
    return sorted(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    print(f"Calibration loop before: {calibrate():.3f} s\n")
    print("| path | runs | fastest | p25 | median | slowest |\n|---|---|---|---|---|---|")
    for path in args.paths:
        times = wall_times(path, args.runs)
        print(
            f"| {path} | {args.runs} | {times[0]:.3f} | {times[len(times) // 4]:.3f} | "
            f"{statistics.median(times):.3f} | {times[-1]:.3f} |",
            flush=True,
        )
    print(f"\nCalibration loop after: {calibrate():.3f} s")


if __name__ == "__main__":
    main()
