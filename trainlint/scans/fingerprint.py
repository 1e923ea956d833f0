"""A job's experiment fingerprint: what it trains, not who runs it or where it writes.

Two jobs with the same fingerprint train the same model on the same data with the same
hyper-parameters on the same hardware: a duplicate experiment when they live in different
repositories or paths. Left out: cost tags, names, output folders, seeds (a re-run with
another seed is the same experiment), where each fact came from, and the estimates.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from trainlint.job import Job

# Parts of the job that say who, where and how it was found, never what it trains.
_IGNORED_TOP = frozenset({
    "id", "name", "sources", "tags", "budget", "parse_errors", "unknown_keys",
    "missing_references", "unresolved_references", "provenance", "derived", "defaults",
    "estimates", "measurements", "fallbacks", "platform",
})  # fmt: skip
# Facts inside the training sections that name outputs or randomness, not the experiment.
_IGNORED_PATHS = frozenset({("training", "seed"), ("launcher", "command")})
_OUTPUT_WORDS = ("output", "save_dir", "log_dir", "logging_dir", "run_name", "wandb")


def fingerprint(job: Job) -> str | None:
    """A short stable hash of the job's training facts; None when it states too little to be
    told from another job (no model, no steps or epochs, no GPUs): an empty shape would make
    every sparse job a duplicate of every other."""
    if not _distinctive(job):
        return None
    facts = _facts(job.model_dump(mode="json", by_alias=True, exclude=set(_IGNORED_TOP)))
    text = json.dumps(facts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _distinctive(job: Job) -> bool:
    model = job.model.name or job.model.params or job.model.layers
    length = job.training.max_steps or job.training.epochs or job.training.total_steps
    return bool(model) and bool(length)


def _facts(tree: Any, path: tuple[str, ...] = ()) -> Any:
    """The tree without empty values, ignored paths and output-naming keys."""
    if isinstance(tree, dict):
        kept = {}
        for key, value in tree.items():
            here = (*path, key)
            if here in _IGNORED_PATHS or any(word in key.lower() for word in _OUTPUT_WORDS):
                continue
            value = _facts(value, here)
            if value not in (None, {}, []):
                kept[key] = value
        return kept
    if isinstance(tree, list):
        return [_facts(item, path) for item in tree]
    return tree
