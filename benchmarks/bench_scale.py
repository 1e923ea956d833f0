"""How `trainlint check` scales with the size of a repository (issue 9), as a Markdown report.

Run:  python benchmarks/bench_scale.py [--sizes 10,100,1000,5000] [--skip-5000] [--repeat 3]
          [--work /tmp/trainlint-bench] [--checkov /tmp/checkov-venv/bin/checkov]

For each size N it generates a synthetic monorepo of N files (benchmarks/generate_monorepo.py,
seed 0) and measures:

* ``check s``: wall time of ``python -m trainlint check DIR`` as a subprocess (median and
  fastest of --repeat runs: the fastest is the least disturbed by other load on a shared
  machine), with its peak RSS (``ru_maxrss`` from ``os.wait4``: the largest process of
  the tree) and the peak summed PSS of the whole process tree (sampled; see ``run_child``);
* ``parse floor s``: in this process (modules already imported, the garbage collector set as
  the ``trainlint`` program sets it), only discovering, reading and parsing the files with
  trainlint's own parsers (``discover`` + ``read.read_file``), no assembly, estimates or
  Rego, on one core: the least any linter reading these formats must spend;
* ``engine ms/job``: the builtin pack compiled once (regorus, the default engine), then
  ``evaluate`` on each job's input from ``lint.load_jobs`` (total / jobs);
* the ratio check / parse floor (the target is ≤ 2 at 1,000 files).

Children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed, one warm-up run
first), as an installed package has its ``.pyc`` files: compiling trainlint's modules from
source would add ~0.15 s to every start. A fixed pure-Python workload (``calibrate``) is timed
before and after, so figures from a slower or busier moment can be told apart.

Also the cold start of ``trainlint check`` on one file and of ``trainlint --version``, and,
with --checkov, checkov's ``-d DIR --framework kubernetes --quiet --compact --skip-download``
against ``trainlint check DIR`` on generated Kubeflow PyTorchJob and batch/v1 Job manifests
(--checkov-sizes; checkov's policies cover no PyTorchJob resource, so those runs time only its
start-up and parsing, while the Job manifests run its pod checks). Results and the machine
are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_speed import median_s
from generate_monorepo import generate

TRAINLINT = [sys.executable, "-m", "trainlint"]
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def calibrate() -> float:
    """Seconds for a fixed pure-Python loop (fastest of 3): this machine's speed right now."""

    def loop() -> None:
        total = 0
        for i in range(5_000_000):
            total += i

    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        loop()
        best = min(best, time.perf_counter() - start)
    return best


def run_child(argv: Sequence[str]) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MB, peak tree PSS MB) of one child process run to completion.

    Peak RSS is ``ru_maxrss`` from ``os.wait4``: the largest single process of the tree (the
    child or one of its reaped worker processes), not their sum. The tree PSS is the sum of
    the proportional set sizes of the child and all its descendants, sampled every 20 ms
    (forked workers share pages, which PSS counts once)."""
    peak_pss = [0.0]
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENV
    )
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak_pss[0] = max(peak_pss[0], _tree_pss_mb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, _, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = 0  # reaped by wait4; keep Popen from waiting again
    return elapsed, usage.ru_maxrss / 1024, peak_pss[0]  # Linux: ru_maxrss in kilobytes


def _tree_pss_mb(pid: int) -> float:
    total_kb, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kb += int(line.split()[1])
                    break
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue  # exited meanwhile
    return total_kb / 1024


def median_child(argv: Sequence[str], repeat: int) -> tuple[float, float, float, float]:
    """Median and fastest wall seconds, and the largest peak RSS and tree PSS (MB) of
    ``repeat`` runs."""
    runs = [run_child(argv) for _ in range(repeat)]
    return (
        statistics.median(t for t, _, _ in runs),
        min(t for t, _, _ in runs),
        max(m for _, m, _ in runs),
        max(p for _, _, p in runs),
    )


def parse_floor(root: Path) -> int:
    """Discover, read and parse every file; nothing else. Returns the documents read."""
    from trainlint.discover import discover
    from trainlint.read import read_file

    return sum(read_file(path) is not None for path in discover([root]))


def engine_ms_per_job(root: Path, repeat: int) -> tuple[int, float, float]:
    """(jobs, compile seconds, evaluate ms per job) with the default engine."""
    from trainlint import engine as engines
    from trainlint.lint import load_jobs
    from trainlint.packs import load_builtin_pack

    pack = load_builtin_pack()
    jobs = load_jobs([root], pack)
    inputs = [job.as_input() for job in jobs]
    compile_s = median_s(lambda: engines.create_engine(engines.DEFAULT_ENGINE, pack), repeat)
    engine = engines.create_engine(engines.DEFAULT_ENGINE, pack)
    total = median_s(lambda: [engine.evaluate(i) for i in inputs], repeat)
    return len(jobs), compile_s, 1000 * total / max(1, len(inputs))


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        ram = f"{mem_kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        ram = "?"
    version = subprocess.run([*TRAINLINT, "--version"], capture_output=True, text=True)
    return (
        f"{os.cpu_count()} cores ({model}), {ram} RAM, Python {platform.python_version()}, "
        f"{version.stdout.strip() or 'trainlint ?'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,1000,5000")
    parser.add_argument("--skip-5000", action="store_true", help="leave out N=5000 (slow)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/trainlint-bench"))
    parser.add_argument("--checkov", help="checkov executable (its own venv) to compare with")
    parser.add_argument("--checkov-sizes", default="100,1000")
    args = parser.parse_args()
    from trainlint.cli import collect_never

    collect_never()  # in-process figures under the collector settings of the program
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.skip_5000:
        sizes = [n for n in sizes if n != 5000]

    print(
        f"Machine: {machine()}. Medians (and fastest) of {args.repeat} runs, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
        f"Calibration loop: {calibrate():.3f} s.\n"
    )

    one = args.work / "one"
    generate(1, one)
    single = next(p for p in one.rglob("*") if p.is_file())
    parse_floor(one)  # import the parsers before timing the floor
    run_child(
        [*TRAINLINT, "check", "--no-cache", str(single)]
    )  # writes the .pyc files, as an install does
    cold = max(5, args.repeat)
    version_s, version_min, version_mb, _ = median_child([*TRAINLINT, "--version"], cold)
    one_s, one_min, one_mb, _ = median_child([*TRAINLINT, "check", "--no-cache", str(single)], cold)
    print("| cold start | s (fastest) | peak RSS MB |\n|---|---|---|")
    print(f"| `trainlint --version` | {version_s:.3f} ({version_min:.3f}) | {version_mb:.0f} |")
    print(f"| `trainlint check` one file | {one_s:.3f} ({one_min:.3f}) | {one_mb:.0f} |\n")

    print(
        "| files | jobs | check s (fastest) | peak RSS MB | tree PSS MB | parse floor s "
        "| check / floor | compile s | engine ms/job | engine s total |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        root = args.work / f"mono-{n}"
        generate(n, root)
        check_s, check_min, check_mb, check_pss = median_child(
            [*TRAINLINT, "check", "--no-cache", str(root)], args.repeat
        )
        floor_s = median_s(functools.partial(parse_floor, root), args.repeat)
        jobs, compile_s, per_job = engine_ms_per_job(root, args.repeat)
        print(
            f"| {n} | {jobs} | {check_s:.3f} ({check_min:.3f}) | {check_mb:.0f} | "
            f"{check_pss:.0f} | {floor_s:.3f} | {check_s / floor_s:.1f}x | {compile_s:.3f} | "
            f"{per_job:.2f} | {per_job * jobs / 1000:.2f} |",
            flush=True,
        )

    if args.checkov:
        print("\n| manifests | files | trainlint check s | checkov s | checkov / trainlint |")
        print("|---|---|---|---|---|")
        for kind in ("kubernetes", "kubernetes-job"):  # PyTorchJob, batch/v1 Job
            for n in [int(s) for s in args.checkov_sizes.split(",") if s]:
                root = args.work / f"{kind}-{n}"
                generate(n, root, only=kind)
                ours, _, _, _ = median_child(
                    [*TRAINLINT, "check", "--no-cache", str(root)], args.repeat
                )
                theirs, _, _, _ = median_child(
                    [
                        args.checkov,
                        "-d",
                        str(root),
                        "--framework",
                        "kubernetes",
                        "--quiet",
                        "--compact",
                        "--skip-download",
                    ],
                    args.repeat,
                )
                label = "PyTorchJob" if kind == "kubernetes" else "batch/v1 Job"
                print(
                    f"| {label} | {n} | {ours:.3f} | {theirs:.3f} | {theirs / ours:.1f}x |",
                    flush=True,
                )
    print(f"\nCalibration loop after: {calibrate():.3f} s.")


if __name__ == "__main__":
    main()
