"""The estimator fuzzed with absurd numbers: every estimate is finite or unknown.

A config can state ``max_steps: 1e308``; multiplied by a step time that was an infinite cost,
JSON no policy engine reads, and a job with no findings. The inputs are bounded where they are
read (``estimate.inputs.MAX_QUANTITY``), so whatever the job states, each number of the
estimate is finite and far below a float's range. Counts and sizes here run from the ordinary
to the absurd (10**300, 1e308, 5e-324) in every field the estimator reads.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from tests.fuzz.test_readers import FUZZ
from trainlint.estimate import estimate
from trainlint.job import Job

COUNTS = st.one_of(
    st.none(), st.integers(-2, 10**13),
    st.sampled_from([10**15, 10**15 + 1, 10**16, 2**63, 10**30, 10**300]),
)  # fmt: skip
FRACTIONS = st.one_of(
    st.none(), st.floats(), st.sampled_from([1e308, 1.7e308, 1e15, 1e-308, 5e-324, 0.5])
)
NAMES = st.one_of(st.none(), st.sampled_from([
    "gpt2", "meta-llama/Meta-Llama-3-70B", "H100", "A100-80GB", "T4", "bf16", "fp32", "lora",
    "fsdp", "hybrid_shard", "steps", "adamw", "adamw_8bit",
]))  # fmt: skip
FLAGS = st.one_of(st.none(), st.booleans())

JOBS = st.fixed_dictionaries({
    "resources": st.fixed_dictionaries({
        "gpu": st.fixed_dictionaries({"model": NAMES, "memory_bytes": COUNTS}),
        "gpus_per_node": COUNTS, "nodes": COUNTS, "world_size": COUNTS}),
    "model": st.fixed_dictionaries({
        "name": NAMES, "params": COUNTS, "layers": COUNTS, "hidden": COUNTS, "heads": COUNTS,
        "vocab": COUNTS, "seq_len": COUNTS, "peft": st.fixed_dictionaries({"method": NAMES,
                                                                           "rank": COUNTS})}),
    "training": st.fixed_dictionaries({
        "micro_batch_size": COUNTS, "grad_accum_steps": COUNTS, "global_batch_size": COUNTS,
        "max_steps": COUNTS, "epochs": FRACTIONS, "dataset_samples": COUNTS,
        "dataset_tokens": COUNTS, "precision": NAMES, "activation_checkpointing": FLAGS,
        "optimizer": st.fixed_dictionaries({"name": NAMES}),
        "parallelism": st.fixed_dictionaries({"strategy": NAMES, "zero_stage": COUNTS,
                                              "tensor": COUNTS, "pipeline": COUNTS})}),
    "checkpoint": st.fixed_dictionaries({
        "every_steps": FRACTIONS, "keep_last": COUNTS, "save_optimizer": FLAGS}),
})  # fmt: skip


def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value) if abs(value) < 1e300 else math.inf]
    if isinstance(value, dict):
        return [x for item in value.values() for x in _numbers(item)]
    if isinstance(value, list | tuple):
        return [x for item in value for x in _numbers(item)]
    return []


@settings(FUZZ, max_examples=examples(150))
@given(sections=JOBS)
def test_every_estimate_of_an_absurd_job_is_finite_or_unknown(sections: dict[str, Any]) -> None:
    job = Job.model_validate({"id": "job", "sources": [], **sections})
    numbers = _numbers(estimate(job).model_dump())
    assert all(math.isfinite(x) and abs(x) < 1e300 for x in numbers)
