"""How long `trainlint check` takes, end to end and per stage, on the examples and the corpus.

Run:  python benchmarks/check_speed.py [--repeat 5]
Prints a Markdown table; results are recorded in docs/benchmarks.md. The corpus is read
from ../shared/corpus (never copied into the repository).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGETS = {"examples": REPO / "examples", "corpus": REPO.parent / "shared" / "corpus"}


def median_s(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cli_run(path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "trainlint", "check", "--no-cache", str(path)], capture_output=True
    )


def stages(path: Path, repeat: int) -> dict[str, float]:
    from trainlint import engine as engines
    from trainlint.assemble import assemble
    from trainlint.discover import discover
    from trainlint.estimate import estimate
    from trainlint.packs import load_builtin_pack
    from trainlint.read import Workspace

    files = discover([path])
    jobs = assemble(files, Workspace())
    pack = load_builtin_pack()
    result = {
        "files": float(len(files)),
        "jobs": float(len(jobs)),
        "parse+assemble s": median_s(lambda: assemble(discover([path]), Workspace()), repeat),
        "estimate s": median_s(lambda: [estimate(job) for job in jobs], repeat),
    }
    inputs = [job.as_input() for job in jobs]
    for name in engines.available_engines():
        result[f"compile {name} s"] = median_s(
            lambda n=name: engines.create_engine(n, pack), repeat
        )
        engine = engines.create_engine(name, pack)
        total = median_s(lambda e=engine: [e.evaluate(i) for i in inputs], repeat)
        result[f"evaluate {name} ms/job"] = 1000 * total / max(1, len(inputs))
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    rows: dict[str, dict[str, float]] = {}
    for label, path in TARGETS.items():
        if path.is_dir():
            rows[label] = {"cli check s": median_s(lambda p=path: cli_run(p), repeat)}
            rows[label] |= stages(path, repeat)
    columns = sorted({key for row in rows.values() for key in row}, key=_order)
    print("| target | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for label, row in rows.items():
        print(f"| {label} | " + " | ".join(_fmt(row.get(c)) for c in columns) + " |")


def _order(key: str) -> tuple[int, str]:
    first = ["files", "jobs", "cli check s", "parse+assemble s", "estimate s"]
    return (first.index(key), key) if key in first else (len(first), key)


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.0f}" if value.is_integer() else f"{value:.3f}"


if __name__ == "__main__":
    main()
