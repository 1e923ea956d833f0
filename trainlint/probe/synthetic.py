"""Synthetic-mode worker: ``torchrun ... -m trainlint.probe.synthetic --config C --out O``.

Builds a decoder-only transformer with the job's dimensions (pre-norm blocks: causal
multi-head attention with grouped KV heads through ``scaled_dot_product_attention``, a GELU MLP
of ``ffn_hidden``, a tied embedding/LM head), wraps it in DDP (or FSDP on CUDA), and trains it
on random tokens: ``warmup`` steps, then ``steps`` timed optimizer steps of ``grad_accum``
micro-batches each. Decisions (recorded in the result's notes):

- timing: ``torch.cuda.synchronize`` before reading the clock on GPU; wall clock on CPU;
- precision: autocast bf16/fp16 on CUDA (fp16 with a GradScaler); fp32 on CPU, where autocast
  would time an emulation, not the job;
- optimizer: AdamW, SGD (momentum 0.9) or Adafactor; any other family runs as AdamW;
- activation checkpointing: ``torch.utils.checkpoint`` around each block;
- FSDP (``fully_shard`` per block and the root) on CUDA only; on CPU the gloo backend runs DDP;
- peak memory: ``max_memory_allocated``/``max_memory_reserved`` on GPU, peak RSS
  (``getrusage``) on CPU, gathered from every rank with a tensor ``all_gather``;
- checkpoint: one timed save of model and optimizer state to a fresh directory in the probe's
  temporary folder (``torch.save`` from rank 0 under DDP, ``torch.distributed.checkpoint``
  under FSDP), deleted afterwards — never the job's own checkpoint directory;
- out of memory: ``{"oom": true}``; the rank that ran out writes ``<out>.rank<r>.oom`` and exits
  with status 3 so torchrun stops the others instead of leaving them waiting in a collective.

Rank 0 writes the result JSON to ``--out``. This module imports torch; nothing that
``trainlint check`` imports may import it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint as checkpoint_fn

OOM_EXIT = 3


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int, kv_heads: int, ffn_hidden: int, ckpt: bool):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.ckpt = ckpt
        self.norm1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, (heads + 2 * kv_heads) * self.head_dim, bias=False)
        self.proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.norm2 = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, ffn_hidden, bias=False)
        self.down = nn.Linear(ffn_hidden, hidden, bias=False)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        qkv = self.qkv(self.norm1(x))
        kv = self.kv_heads * self.head_dim
        q, k, v = qkv.split([self.heads * self.head_dim, kv, kv], dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.kv_heads != self.heads:
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, -1))
        out: torch.Tensor = x + self.down(F.gelu(self.up(self.norm2(x))))
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.ckpt and self.training:
            out: torch.Tensor = checkpoint_fn(self._forward, x, use_reentrant=False)
            return out
        return self._forward(x)


class Decoder(nn.Module):
    def __init__(self, cfg: dict[str, Any]):
        super().__init__()
        hidden, vocab = cfg["hidden"], cfg["vocab"]
        self.embed = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(cfg["seq_len"], hidden)
        self.blocks = nn.ModuleList(
            Block(hidden, cfg["heads"], cfg["kv_heads"], cfg["ffn_hidden"], cfg["ckpt"])
            for _ in range(cfg["layers"])
        )
        self.norm = nn.LayerNorm(hidden)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embed(tokens) + self.pos(positions)
        for block in self.blocks:
            x = block(x)
        logits = F.linear(self.norm(x), self.embed.weight)  # tied LM head
        return F.cross_entropy(logits.flatten(0, 1).float(), tokens.flatten())


def make_optimizer(name: str, params: Any) -> torch.optim.Optimizer:
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-4, momentum=0.9)
    if name == "adafactor":
        return torch.optim.Adafactor(params, lr=1e-4)
    return torch.optim.AdamW(params, lr=1e-4)


def is_oom(exc: BaseException) -> bool:
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def step_stats(times: list[float]) -> dict[str, float]:
    mean = statistics.fmean(times)
    sd = statistics.pstdev(times) if len(times) > 1 else 0.0
    return {
        "median": statistics.median(times),
        "p10": percentile(times, 0.1),
        "p90": percentile(times, 0.9),
        "cv": sd / mean if mean > 0 else 0.0,
    }


def hardware(device: torch.device) -> dict[str, Any]:
    info: dict[str, Any] = {"torch": torch.__version__, "cpu_cores": os.cpu_count()}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update(
            gpu=props.name,
            count=torch.cuda.device_count(),
            memory_bytes=props.total_memory,
            cuda=torch.version.cuda,
            driver=_driver(),
            device="cuda",
        )
    else:
        info.update(gpu="cpu", count=os.cpu_count() or 1, device="cpu")
    return info


def _driver() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout else None


def peak_memory(device: torch.device, rank: int) -> dict[str, Any]:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    if device.type == "cuda":
        return {
            "rank": rank,
            "allocated_bytes": torch.cuda.max_memory_allocated(device),
            "reserved_bytes": torch.cuda.max_memory_reserved(device),
            "rss_bytes": rss,
        }
    return {"rank": rank, "allocated_bytes": None, "reserved_bytes": None, "rss_bytes": rss}


def gather_memory(mine: dict[str, Any], device: torch.device, world: int) -> list[Any]:
    """Every rank's peak memory on every rank (a tensor all_gather: the object collectives
    need numpy, which the probe does not require)."""
    keys = ("allocated_bytes", "reserved_bytes", "rss_bytes")
    local = torch.tensor([mine[k] if mine[k] is not None else -1 for k in keys], device=device)
    gathered = [torch.zeros_like(local) for _ in range(world)]
    dist.all_gather(gathered, local)
    return [
        {
            "rank": r,
            **{k: (int(v) if v >= 0 else None) for k, v in zip(keys, t.tolist(), strict=True)},
        }
        for r, t in enumerate(gathered)
    ]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def save_checkpoint(
    model: nn.Module, opt: torch.optim.Optimizer, fsdp: bool, folder: Path
) -> dict[str, Any]:
    """Time one save of model + optimizer state into ``folder`` (new, temporary, deleted)."""
    rank = dist.get_rank()
    if rank == 0:
        folder.mkdir(parents=True, exist_ok=True)
    dist.barrier()
    start = time.perf_counter()
    if fsdp:
        from torch.distributed.checkpoint.state_dict import get_state_dict
        from torch.distributed.checkpoint.state_dict_saver import save as dcp_save

        model_sd, optim_sd = get_state_dict(model, opt)
        dcp_save({"model": model_sd, "optim": optim_sd}, checkpoint_id=str(folder))
    elif rank == 0:
        target = folder / "checkpoint.pt"
        torch.save({"model": model.state_dict(), "optim": opt.state_dict()}, target)
        with target.open("rb+") as handle:
            os.fsync(handle.fileno())
    dist.barrier()
    seconds = time.perf_counter() - start
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    dist.barrier()
    if rank == 0:
        shutil.rmtree(folder, ignore_errors=True)
    return {"size_bytes": size, "save_s": seconds, "path_kind": "temporary"}


def _local_device(kind: str) -> tuple[torch.device, int]:
    """This rank's device (its local GPU, or the CPU) and its local rank."""
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if kind == "cuda":
        torch.cuda.set_device(local)
        return torch.device("cuda", local), local
    return torch.device("cpu"), local


def _distributed(model: nn.Module, fsdp: bool, device: torch.device, local: int) -> nn.Module:
    """``model`` sharded block by block (FSDP2), or replicated with DDP."""
    if fsdp:
        from torch.distributed.fsdp import fully_shard

        for block in model.blocks:  # type: ignore[union-attr]
            fully_shard(block)
        fully_shard(model)
        return model
    ids = [local] if device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(model, device_ids=ids)


def run(cfg: dict[str, Any], out: Path) -> int:
    backend = "nccl" if cfg["device"] == "cuda" else "gloo"
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    device, local = _local_device(cfg["device"])
    torch.manual_seed(1234 + rank)
    fsdp = cfg["parallelism"] == "fsdp" and device.type == "cuda"
    precision = cfg["precision"] if device.type == "cuda" else "fp32"
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    try:
        model = _distributed(Decoder(cfg).to(device), fsdp, device, local)
        opt = make_optimizer(cfg["optimizer"], model.parameters())
        scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")
        autocast = torch.autocast("cuda", dtype=dtype) if dtype is not None else nullcontext()
        shape = (cfg["micro_batch"], cfg["seq_len"])
        tokens = torch.randint(0, cfg["vocab"], shape, device=device)

        def one_step() -> None:
            for micro in range(cfg["grad_accum"]):
                last = micro == cfg["grad_accum"] - 1
                sync = (
                    model.no_sync()  # type: ignore[operator]
                    if not last and not fsdp
                    else nullcontext()
                )
                with sync:
                    with autocast:
                        loss = model(tokens) / cfg["grad_accum"]
                    scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)

        for _ in range(cfg["warmup"]):
            one_step()
        _sync(device)
        dist.barrier()
        times = []
        for _ in range(cfg["steps"]):
            start = time.perf_counter()
            one_step()
            _sync(device)
            times.append(time.perf_counter() - start)
    except BaseException as exc:
        if not is_oom(exc):
            raise
        Path(f"{out}.rank{rank}.oom").write_text(str(exc)[:2000])
        if rank == 0:
            out.write_text(json.dumps({"oom": True, "error": str(exc)[:500]}))
        sys.stdout.flush()
        os._exit(OOM_EXIT)
    folder = out.parent / f"{out.stem}-checkpoint"
    ckpt = save_checkpoint(model, opt, fsdp, folder) if cfg.get("checkpoint", True) else None
    memories = gather_memory(peak_memory(device, rank), device, world)
    if rank == 0:
        stats = step_stats(times)
        tokens_per_step = world * cfg["micro_batch"] * cfg["seq_len"] * cfg["grad_accum"]
        peaks = [m["allocated_bytes"] or m["rss_bytes"] for m in memories]
        if device.type == "cuda":
            peaks = [m["reserved_bytes"] or m["allocated_bytes"] for m in memories]
        result = {
            "world_size": world,
            "step_time_s": stats,
            "tokens_per_s": tokens_per_step / stats["median"],
            "peak_memory_bytes": max(peaks),
            "peak_memory": memories,
            "oom": False,
            "checkpoint": ckpt,
            "steps": cfg["steps"],
            "warmup": cfg["warmup"],
            "precision": precision if dtype is not None else "fp32",
            "parallelism": "fsdp" if fsdp else "ddp",
            "hardware": hardware(device),
        }
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        os.replace(tmp, out)
    dist.barrier()
    dist.destroy_process_group()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trainlint.probe.synthetic")
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    cfg = json.loads(args.config.read_text())
    return run(cfg, args.out)


if __name__ == "__main__":
    sys.exit(main())
