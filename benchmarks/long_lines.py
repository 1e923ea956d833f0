"""How long the JSON and TOML readers take on a file that is one long line, against the same
data pretty-printed.

Run:  python benchmarks/long_lines.py [--size 2000000] [--repeat 3] [FILE ...]

Generates a single-line JSON array of ~--size bytes shaped like a COCO/ADE20K annotation file
(Mask2Former's datasets/ade20k_instance_imgCatIds.json is 2.1 MB on one line), the same data
with ``indent=1``, the single line with one multi-byte character per element, and a TOML file
whose array sits on one line; then times ``load_json``/``load_toml`` (median of --repeat),
and ``load_json`` on each FILE given. A reader that decodes each node's line prefix is
quadratic on one line; one that indexes the line once is linear. Results in
docs/benchmarks.md ("Long lines").
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from bench_scale import calibrate
from check_speed import median_s

from trainlint.sources.structured import load_json
from trainlint.sources.structured.toml import load_toml


def images(size: int, name: str) -> list[dict[str, object]]:
    one = len(json.dumps({"file_name": name + "00000000.jpg", "width": 683, "id": 0}))
    return [
        {"file_name": f"{name}{i:08d}.jpg", "width": 683, "id": i, "height": 512}
        for i in range(size // (one + 17))
    ]


def cases(size: int) -> dict[str, tuple[Callable[[str], object], str]]:
    ascii_data = {"images": images(size, "ADE_train_")}
    wide_data = {"images": images(size, "ADE_trâin_")}
    items = ", ".join(f'"é{i:07d}"' for i in range(size // 12))
    return {
        "JSON, one line": (load_json, json.dumps(ascii_data)),
        "JSON, indent=1": (load_json, json.dumps(ascii_data, indent=1)),
        "JSON, one line, multi-byte": (load_json, json.dumps(wide_data, ensure_ascii=False)),
        "TOML, one line, multi-byte": (load_toml, f"[t]\nxs = [{items}]\n"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", type=Path, nargs="*")
    parser.add_argument("--size", type=int, default=2_000_000, help="bytes of each document")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"calibration loop {calibrate():.3f} s")
    for label, (load, text) in cases(args.size).items():
        seconds = median_s(lambda: load(text), args.repeat)  # noqa: B023 - called at once
        lines = text.count("\n") + 1
        print(f"{label:28} {len(text.encode()):>10,} bytes {lines:>8,} lines {seconds:8.3f} s")
    for path in args.files:
        text = path.read_text(encoding="utf-8")
        seconds = median_s(lambda: load_json(text), args.repeat)  # noqa: B023 - called at once
        print(f"{path.name:28} {len(text.encode()):>10,} bytes {seconds:8.3f} s")
    print(f"calibration loop {calibrate():.3f} s")


if __name__ == "__main__":
    main()
