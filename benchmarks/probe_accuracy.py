"""Estimated vs measured step time and peak memory for three synthetic model sizes.

Run through benchmarks/probe_gpu.sh. Each size is a nanoGPT-style job file in a temporary
folder, annotated with the GPU it runs on; ``trainlint probe --world-sizes 1`` measures it and
the estimator's figures for the same file are read from ``load_jobs``. The section for the
device it ran on (``cpu`` or ``gpu``) is replaced in docs/accuracy.md; the other is kept.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ACCURACY = REPO / "docs" / "accuracy.md"
sys.path.insert(0, str(REPO))

from trainlint.lint import load_jobs  # noqa: E402
from trainlint.probe import probe  # noqa: E402

# name, layers, heads, hidden, seq_len, micro_batch
GPU_SIZES = [
    ("gpt2-124M", 12, 12, 768, 1024, 8),
    ("gpt2-350M", 24, 16, 1024, 1024, 8),
    ("gpt2-1.3B", 24, 32, 2048, 1024, 8),
]
CPU_SIZES = [
    ("tiny-1", 2, 2, 64, 64, 2),
    ("tiny-2", 4, 4, 128, 64, 2),
    ("tiny-3", 4, 4, 256, 64, 2),
]
JOB = """\
# trainlint: gpu={gpu} gpus=1
n_layer = {layers}
n_head = {heads}
n_embd = {hidden}
block_size = {seq}
batch_size = {micro}
gradient_accumulation_steps = 1
max_iters = 1000
dtype = "bfloat16"
init_from = "scratch"
dataset = "openwebtext"
"""
HEADER = (
    "| model | params (est.) | step time est. | step time measured (median, p10-p90) "
    "| ratio | peak memory est. | peak memory measured | ckpt save |\n"
    "|---|---|---|---|---|---|---|---|\n"
)


def _say(name: str, line: str) -> None:
    print(f"{name}: {line}", flush=True)


def _gib(value: float | None) -> str:
    return "-" if value is None else f"{value / 2**30:.2f} GiB"


def _s(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"


def run(device: str, warmup: int, steps: int) -> tuple[str, list[str]]:
    import torch

    cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    kind = "cuda" if cuda else "cpu"
    gpu = torch.cuda.get_device_name(0) if cuda else "H100"
    sizes = GPU_SIZES if cuda else CPU_SIZES
    rows = []
    for name, layers, heads, hidden, seq, micro in sizes:
        with tempfile.TemporaryDirectory(prefix="trainlint-accuracy-") as scratch:
            folder = Path(scratch)
            (folder / ".trainlint.yaml").write_text("{}\n")
            path = folder / "train.py"
            text = JOB.format(gpu=gpu, layers=layers, heads=heads, hidden=hidden, seq=seq,
                              micro=micro)  # fmt: skip
            path.write_text(text)
            est = load_jobs([path])[0].estimates
            start = time.monotonic()
            _, m = probe(
                path, world_sizes=[1], warmup=warmup, steps=steps, device=kind,
                progress=partial(_say, name),
            )  # fmt: skip
            print(f"{name}: {time.monotonic() - start:.0f} s", flush=True)
            one = m.world_sizes["1"]
            hw = m.hardware
        if one.oom or one.step_time_s is None:
            rows.append(
                f"| {name} | {(est.params or 0) / 1e6:.1f}M | {_s(est.step_time_s)} "
                f"| out of memory | - | {_gib(est.memory.total_bytes)} | - | - |"
            )
            continue
        st = one.step_time_s
        ratio = f"{st.median / est.step_time_s:.3g}x" if est.step_time_s else "-"
        ckpt = one.checkpoint
        save = f"{ckpt.save_s:.2f} s ({_gib(ckpt.size_bytes)})" if ckpt else "-"
        rows.append(
            f"| {name} | {(est.params or 0) / 1e6:.1f}M | {_s(est.step_time_s)} "
            f"| {_s(st.median)} ({_s(st.p10)}-{_s(st.p90)}) | {ratio} "
            f"| {_gib(est.memory.total_bytes)} | {_gib(one.peak_memory_bytes)} | {save} |"
        )
    where = (
        f"{hw.gpu}, torch {hw.torch}, CUDA {hw.cuda}, driver {hw.driver}"
        if hw and kind == "cuda"
        else f"CPU ({hw.cpu_cores if hw else '?'} cores), torch {hw.torch if hw else '?'}"
    )
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {where}; world size 1, "
        f"{warmup} warmup + {steps} timed steps, synthetic tokens.",
        "",
        HEADER + "\n".join(rows),
    ]
    if kind == "cpu":
        lines += [
            "",
            f"The estimates are for one {gpu} (the annotation); the measurement ran fp32 on the "
            "CPU, so the ratio checks the pipeline, not the estimator. Peak memory measured on "
            "CPU is the process's peak RSS (PyTorch itself included).",
        ]
    return ("gpu" if kind == "cuda" else "cpu"), lines


def write(section: str, lines: list[str]) -> None:
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    text = ACCURACY.read_text() if ACCURACY.is_file() else ""
    body = f"{begin}\n" + "\n".join(lines) + f"\n{end}"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: body, text)
    else:
        text = text.rstrip("\n") + f"\n\n{body}\n"
    ACCURACY.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    section, lines = run(args.device, args.warmup, args.steps)
    write(section, lines)
    print(f"wrote the {section} section of {ACCURACY}")


if __name__ == "__main__":
    main()
