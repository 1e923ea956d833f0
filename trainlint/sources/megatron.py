"""Megatron-LM command-line flags (``pretrain_gpt.py --micro-batch-size 1 --save-interval 1000``).

Megatron-LM has no config file: scripts pass everything as argparse flags, usually gathered in
bash arrays (``GPT_MODEL_ARGS=(--num-layers 96 ...)``) that the shell reader expands in place.
This format reads no file of its own; it reads the flags of any program a launch line runs
(``Format.flags``), after the formats before it in name order (hf-trainer), so ``--seed`` and
``--bf16`` keep one meaning. A file the repo config forces on it is a TL901.
"""

from __future__ import annotations

from typing import Any

from trainlint.errors import SourceError
from trainlint.job import Location
from trainlint.sources.base import Document, Fact, Input, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format
from trainlint.sources.base.table import JobField, facts_for

name = "megatron-lm"
role: Role = "entrypoint"


def _minutes(value: Any) -> float | None:
    minutes = n.positive_float(value)
    return minutes * 60 if minutes is not None else None


def _any_value(result: Any) -> Any:
    """A flag whose value picks a variant of one thing (``--fp8-format hybrid`` → fp8)."""
    return lambda value: result if n.to_str(value) and value is not False else None


def _not(value: Any) -> bool | None:
    flag = n.to_bool(value)
    return None if flag is None else not flag


FLAGS: dict[str, list[JobField]] = {
    "micro-batch-size": [JobField("/training/micro_batch_size", n.positive_int)],
    "global-batch-size": [JobField("/training/global_batch_size", n.positive_int)],
    "train-iters": [JobField("/training/max_steps", n.positive_int)],
    "train-samples": [JobField("/training/dataset_samples", n.positive_int)],
    "seq-length": [JobField("/model/seq_len", n.positive_int)],
    "num-layers": [JobField("/model/layers", n.positive_int)],
    "hidden-size": [JobField("/model/hidden", n.positive_int)],
    "ffn-hidden-size": [JobField("/model/ffn_hidden", n.positive_int)],
    "num-attention-heads": [JobField("/model/heads", n.positive_int)],
    "num-query-groups": [JobField("/model/kv_heads", n.positive_int)],
    "tensor-model-parallel-size": [JobField("/training/parallelism/tensor", n.positive_int)],
    "pipeline-model-parallel-size": [JobField("/training/parallelism/pipeline", n.positive_int)],
    "context-parallel-size": [JobField("/training/parallelism/context", n.positive_int)],
    "expert-model-parallel-size": [JobField("/training/parallelism/expert", n.positive_int)],
    "use-distributed-optimizer": [  # optimizer state sharded over data-parallel ranks: ZeRO-1
        JobField("/training/parallelism/zero_stage", n.when_true(1))
    ],
    "use-torch-fsdp2": [JobField("/training/parallelism/strategy", n.when_true("fsdp"))],
    "use-megatron-fsdp": [JobField("/training/parallelism/strategy", n.when_true("fsdp"))],
    "save-interval": [JobField("/checkpoint/every_steps", n.positive_int)],
    "no-save-optim": [JobField("/checkpoint/save_optimizer", _not)],
    "log-interval": [JobField("/logging/every_steps", n.positive_int)],
    "eval-interval": [JobField("/eval/every_steps", n.positive_int)],
    "fp16": [JobField("/training/precision", n.when_true("fp16"))],
    "bf16": [JobField("/training/precision", n.when_true("bf16"))],
    "fp8-format": [
        JobField("/training/precision", _any_value("fp8")),
        JobField("/features/fp8", _any_value("precision")),  # fp8 on top of --bf16
    ],
    "use-flash-attn": [JobField("/features/flash-attn", n.when_true("kernel"))],
    "recompute-activations": [JobField("/training/activation_checkpointing", n.to_bool)],
    "recompute-granularity": [JobField("/training/activation_checkpointing", _any_value(True))],
    "exit-duration-in-mins": [JobField("/resources/time_limit_s", _minutes)],
    "seed": [JobField("/training/seed", n.to_int)],
    "num-workers": [JobField("/data/num_workers", n.to_int)],
    "optimizer": n.optimizer_fields(),
    "tensorboard-dir": [JobField("/logging/reporters", _any_value(["tensorboard"]))],
    "wandb-project": [JobField("/logging/reporters", _any_value(["wandb"]))],
}


def flag_key(flag: str) -> str:
    """``--micro-batch-size`` and ``--micro_batch_size`` name the same argument."""
    return flag.lstrip("-").replace("_", "-")


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """Facts for one Megatron flag after the training script; [] for a flag it does not know."""
    return facts_for(FLAGS.get(flag_key(flag), []), value, location)


def keys() -> dict[str, list[str]]:
    """Every flag this table reads → the job-model pointers it sets (docs/formats.md)."""
    return {
        f"--{flag}": [job_field.pointer for job_field in fields] for flag, fields in FLAGS.items()
    }


def recognise(file: Input) -> float:
    """Never a file's format: Megatron-LM is configured on the command line."""
    return 0.0


def parse(file: Input) -> Document:
    raise SourceError(f"{name} has no config file: its settings are a launch line's flags")


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("pretrain_gpt.py --micro-batch-size 1 ... (flags on a launch line)",),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(cli_facts),
)
