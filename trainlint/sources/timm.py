"""timm (pytorch-image-models) training through its ``distributed_train.sh N train.py-flags``
wrapper (``./distributed_train.sh 8 --model resnet50 -b 128 --amp``).

The wrapper is ``torchrun --nproc_per_node=$1 train.py "$@"``: its first argument is the
processes (GPUs) of the one node, the rest are ``train.py``'s flags, read here by the wrapper's
name (``train.py`` itself is too common a name to claim; run directly, its argparse
definitions are read when it is in the repository). What they mean, from ``train.py``'s parser:

- ``-b``/``--batch-size`` is each process's batch (default 128), ``--grad-accum-steps`` the
  batches per optimizer step; ``--epochs`` (default 300); ``-j``/``--workers`` (default 4).
- ``--amp`` trains in mixed precision of ``--amp-dtype`` (default ``float16``); without
  ``--amp`` timm trains in fp32, stated as its default.
- ``--checkpoint-hist`` keeps that many checkpoints (default 10), saved after each validation
  (every ``--val-interval`` epochs, default 1); ``--log-interval`` logs every that many batches.
- ``--model`` names the architecture (``resnet50``), ``--img-size`` the square input side.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import DocumentDefault, Fact, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format, flags_only, no_file
from trainlint.sources.base.table import JobField, facts_for

name = "timm"
role: Role = "entrypoint"

_MICRO = [JobField("/training/micro_batch_size", n.positive_int)]
_WORKERS = [JobField("/data/num_workers", n.to_int)]
FLAGS: dict[str, list[JobField]] = {
    "-b": _MICRO,
    "--batch-size": _MICRO,
    "--grad-accum-steps": [JobField("/training/grad_accum_steps", n.positive_int)],
    "--epochs": [JobField("/training/epochs", n.positive_int)],
    "-j": _WORKERS,
    "--workers": _WORKERS,
    "--checkpoint-hist": [JobField("/checkpoint/keep_last", n.positive_int)],
    "--log-interval": [JobField("/logging/every_steps", n.positive_int)],
    "--model": [JobField("/model/name", n.to_str)],
    "--img-size": [JobField("/data/image_size", n.positive_int)],
    "--grad-checkpointing": [JobField("/training/activation_checkpointing", n.to_bool)],
    "--seed": [JobField("/training/seed", n.to_int)],
}
# --amp and --amp-dtype are read together (``together``); the wrapper's first argument by
# ``processes``.

ENTRYPOINTS = re.compile(r"(?:^|/)distributed_train\.sh$")


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """Facts for one flag of timm's train.py."""
    return facts_for(FLAGS.get(flag, []), value, location)


def processes(flag: str, value: Any, location: Location) -> list[Fact]:
    """``distributed_train.sh 8``: torchrun's processes on this one node, one per GPU."""
    count = n.positive_int(value)
    if count is None:
        return []
    return [
        Fact("/resources/gpus_per_node", count, location),
        Fact("/resources/nodes", 1, location),
    ]


def together(stated: Mapping[str, tuple[Any, Location]]) -> list[Fact]:
    """``--amp`` in ``--amp-dtype`` (float16 unless it says otherwise)."""
    if "--amp" not in stated or n.to_bool(stated["--amp"][0]) is False:
        return []
    dtype = stated["--amp-dtype"][0] if "--amp-dtype" in stated else "float16"
    precision = n.precision(dtype)
    return [Fact("/training/precision", precision, stated["--amp"][1])] if precision else []


def cli_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """train.py's fp32 without ``--amp``, seed 42, 4 workers, 10 checkpoints kept, a save after
    every epoch's validation, located at the first flag the launch line gives it."""
    if not facts:
        return []
    where = facts[0].location
    return [
        DocumentDefault("/training/precision", "fp32", "--amp", where),
        DocumentDefault("/training/seed", 42, "--seed", where),
        DocumentDefault("/data/num_workers", 4, "--workers", where),
        DocumentDefault("/checkpoint/keep_last", 10, "--checkpoint-hist", where),
        DocumentDefault("/checkpoint/every_epochs", 1, "--val-interval", where),
    ]


recognise = no_file  # configured on the command line only
parse = flags_only(name)


def keys() -> dict[str, list[str]]:
    """Every flag this format reads → the job-model pointers it sets (docs/formats.md)."""
    described = {flag: [field.pointer for field in fields] for flag, fields in FLAGS.items()}
    return described | {
        "--amp with --amp-dtype (float16 unless stated)": ["/training/precision"],
        "distributed_train.sh N (first argument)": [
            "/resources/gpus_per_node",
            "/resources/nodes",
        ],
    }


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("./distributed_train.sh 8 --model resnet50 -b 128 --amp (a launch line)",),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(
        cli_facts,
        entrypoints=ENTRYPOINTS,
        defaults=cli_defaults,
        together=together,
        single_dash=True,
        first_positional=processes,
    ),
)
