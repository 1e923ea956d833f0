"""`trainlint server` as an editor meets it: how long from opening a file to its diagnostics,
and from a hover request to its answer, for a workspace folder.

Run:  python benchmarks/server_latency.py DIR [DIR ...] [--runs 5]

For each DIR (the workspace folder), a server starts (tests/server/client.py: stdio, JSON-RPC),
examples/llama3-sft/train.slurm is opened and the GPU line hovered, --runs times; the median of
each step is printed, between two calibration loops. Results are in docs/editors.md ("Limits").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import calibrate

from tests.conftest import REPO
from tests.server.client import Client

SCRIPT = REPO / "examples" / "llama3-sft" / "train.slurm"
GPU_LINE = {"line": 3, "character": 12}


def one_run(folder: Path) -> tuple[float, float]:
    """(open → diagnostics, hover → answer) in seconds, for one fresh server."""
    client = Client(Path("/tmp"))
    try:
        client.start(folder)
        start = time.perf_counter()
        uri = client.open(SCRIPT)
        client.diagnostics(uri)
        opened = time.perf_counter()
        client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": GPU_LINE})
        return opened - start, time.perf_counter() - opened
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"calibration before: {calibrate():.3f} s")
    for folder in args.folders:
        runs = [one_run(folder.resolve()) for _ in range(args.runs)]
        opened = statistics.median(run[0] for run in runs)
        hovered = statistics.median(run[1] for run in runs)
        print(f"{folder}: open -> diagnostics {opened:.2f} s, hover {hovered * 1000:.0f} ms")
    print(f"calibration after: {calibrate():.3f} s")


if __name__ == "__main__":
    main()
