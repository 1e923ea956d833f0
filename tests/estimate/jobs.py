"""Small Job builders for the estimate tests."""

from __future__ import annotations

from typing import Any

from trainlint.job import Job

GB = 1e9


def make_job(**sections: Any) -> Job:
    """A Job from its sections as plain dicts: ``make_job(model={"name": "gpt2"})``."""
    return Job.model_validate({"id": "job", "sources": [], **sections})


def llmc_gpt2(**training: Any) -> Job:
    """llm.c's GPT-2 124M run: 8xH100, 64 x 1024 tokens per GPU, 524,288 tokens per step."""
    return make_job(
        model={"name": "gpt2", "seq_len": 1024},
        resources={"gpu": {"model": "H100"}, "gpus_per_node": 8},
        training={
            "micro_batch_size": 64,
            "grad_accum_steps": 1,
            "precision": "bf16",
            "optimizer": {"name": "adamw"},
            **training,
        },
    )


def on_gpus(model: dict[str, Any], gpu: str, world: int, **training: Any) -> Job:
    """A bf16 AdamW job of ``model`` on ``world`` x ``gpu`` in 8-GPU nodes; ``training``
    overrides or adds (micro-batch, parallelism, recomputation...)."""
    return make_job(
        model=model,
        resources={"gpu": {"model": gpu}, "world_size": world, "gpus_per_node": 8},
        training={"optimizer": {"name": "adamw"}, "precision": "bf16", **training},
    )
