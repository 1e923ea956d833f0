"""llm.c's trainers: the CUDA binary's single-letter flags (``mpirun -np 8 ./train_gpt2cu -b 64
-t 1024 -d 524288 -n 5000 -e d12``) and the PyTorch reference's argparse flags
(``torchrun ... train_gpt2.py --batch_size 32 --total_batch_size 524288``).

llm.c has no config file. What the flags mean, from ``train_gpt2.cu``'s ``main`` (every
option is ``-x value``, one dash and one or two letters) and ``train_gpt2.py``'s parser:

- ``-b`` / ``--batch_size`` is the micro-batch of one GPU, ``-t`` / ``--sequence_length``
  the sequence length; ``-d`` / ``--total_batch_size`` counts *tokens* per optimizer step,
  so the global batch is ``-d / -t`` sequences (stated only when ``-t`` divides ``-d``).
- ``-x`` / ``--num_iterations`` is the step count (``-x -1``, the default, is one epoch);
  ``-n`` checkpoints every that many steps and ``-nk`` keeps that many; ``-v`` /
  ``--val_loss_every`` evaluates every that many steps; ``-z`` / ``--zero_stage`` is the ZeRO
  stage.
- ``-e d12`` (``gpt2:d12``) builds a GPT-2 of that depth with the widths of
  ``gpt2_set_hyperparameters`` and ``gpt3:c768`` a GPT-3 of that width
  (``gpt3_set_hyperparameters``), with GPT-2's 50,257-token vocabulary; any other ``-e`` is
  a checkpoint file, whose dimensions are not on the command line. ``--model`` of the
  PyTorch script names the same ``d12`` depths or a Hugging Face ``gpt2`` checkpoint.
- ``--dtype bfloat16`` trains in bf16 (autocast) and ``--compile 1`` compiles the model;
  ``--flash 1`` picks PyTorch's scaled-dot-product attention, not the flash-attn package.

Only ``train_gpt2cu`` (``train_gpt2fp32cu``) and ``train_gpt2.py`` have their flags read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Fact, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format, flags_only, no_file
from trainlint.sources.base.table import JobField, facts_for

name = "llm-c"
role: Role = "entrypoint"

# gpt2_set_hyperparameters: depth → (channels, heads); gpt3_set_hyperparameters: channels →
# (depth, head size). Both at llm.c f1e2ace, train_gpt2.cu.
GPT2_DEPTHS = {6: (384, 6), 12: (768, 12), 24: (1024, 16), 36: (1280, 20), 48: (1600, 25),
               60: (1920, 30), 72: (2880, 30), 84: (3456, 36)}  # fmt: skip
GPT3_WIDTHS = {384: (6, 64), 768: (12, 64), 1024: (24, 64), 1536: (24, 96), 2048: (24, 128),
               2560: (32, 80), 4096: (32, 128), 5140: (40, 128), 12288: (96, 128)}  # fmt: skip
GPT2_NAMES = {"gpt2": 12, "gpt2-medium": 24, "gpt2-large": 36, "gpt2-xl": 48}
VOCAB = 50257


def dimensions(descriptor: Any) -> dict[str, int] | None:
    """``d12``/``gpt2:d12``/``gpt3:c768``/``gpt2-medium`` → the model's dimensions; None for
    a checkpoint file or anything else."""
    text = n.to_str(descriptor) or ""
    depth = re.fullmatch(r"(?:gpt2:)?d(\d+)", text)
    width = re.fullmatch(r"gpt3:c(\d+)", text)
    if depth and int(depth.group(1)) in GPT2_DEPTHS:
        layers = int(depth.group(1))
        hidden, heads = GPT2_DEPTHS[layers]
    elif text in GPT2_NAMES:
        layers = GPT2_NAMES[text]
        hidden, heads = GPT2_DEPTHS[layers]
    elif width and int(width.group(1)) in GPT3_WIDTHS:
        hidden = int(width.group(1))
        layers, head_size = GPT3_WIDTHS[hidden]
        heads = hidden // head_size
    else:
        return None
    return {"layers": layers, "hidden": hidden, "heads": heads, "ffn_hidden": 4 * hidden,
            "vocab": VOCAB}  # fmt: skip


def _model(value: Any, where: Location) -> list[Fact]:
    found = dimensions(value)
    return [Fact(f"/model/{key}", size, where) for key, size in (found or {}).items()]


def _on(value: Any) -> bool | None:
    """``--compile 1``: an integer switch."""
    number = n.to_int(value)
    return None if number is None else number != 0


_MICRO = [JobField("/training/micro_batch_size", n.positive_int)]
_SEQ = [JobField("/model/seq_len", n.positive_int)]
_STEPS = [JobField("/training/max_steps", n.positive_int)]
_EVAL = [JobField("/eval/every_steps", n.positive_int)]
_ZERO = [JobField("/training/parallelism/zero_stage", n.to_int)]
BINARY: dict[str, list[JobField]] = {
    "-b": _MICRO,
    "-t": _SEQ,
    "-x": _STEPS,
    "-n": [JobField("/checkpoint/every_steps", n.positive_int)],
    "-nk": [JobField("/checkpoint/keep_last", n.positive_int)],
    "-v": _EVAL,
    "-z": _ZERO,
}
SCRIPT: dict[str, list[JobField]] = {
    "--batch_size": _MICRO,
    "--sequence_length": _SEQ,
    "--num_iterations": _STEPS,
    "--val_loss_every": _EVAL,
    "--zero_stage": _ZERO,
    "--dtype": [JobField("/training/precision", n.precision)],
    "--compile": [JobField("/training/compile", _on)],
}
# -d / --total_batch_size (tokens) and -e / --model (dimensions) are read by ``together``.
_TOKENS = ("-d", "--total_batch_size")
_LENGTH = ("-t", "--sequence_length")
_MODEL = ("-e", "--model")

ENTRYPOINTS = re.compile(r"(?:^|/)train_gpt2(?:fp32)?cu$|(?:^|/)train_gpt2\.py$")


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """Facts for one flag of llm.c's trainers; [] for a flag they do not know."""
    return facts_for(BINARY.get(flag) or SCRIPT.get(flag) or [], value, location)


def together(stated: Mapping[str, tuple[Any, Location]]) -> list[Fact]:
    """The global batch (tokens per step over the sequence length) and the model's dimensions."""
    facts: list[Fact] = []
    tokens = next((stated[f] for f in _TOKENS if f in stated), None)
    length = next((n.positive_int(stated[f][0]) for f in _LENGTH if f in stated), None)
    total = n.positive_int(tokens[0]) if tokens is not None else None
    if tokens is not None and total is not None and length and total % length == 0:
        facts.append(Fact("/training/global_batch_size", total // length, tokens[1]))
    model = next((stated[f] for f in _MODEL if f in stated), None)
    return facts + (_model(*model) if model is not None else [])


recognise = no_file  # configured on the command line only
parse = flags_only(name)


def keys() -> dict[str, list[str]]:
    """Every flag this format reads → the job-model pointers it sets (docs/formats.md)."""
    described = {flag: [f.pointer for f in fields] for flag, fields in {**BINARY, **SCRIPT}.items()}
    dims = ["/model/layers", "/model/hidden", "/model/heads", "/model/ffn_hidden", "/model/vocab"]
    return {
        **described,
        "-d / --total_batch_size (tokens), with -t / --sequence_length": [
            "/training/global_batch_size"
        ],
        "-e / --model d12, gpt2:d12, gpt3:c768, gpt2-medium": dims,
    }


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=(
        "train_gpt2cu -b 64 -t 1024 ... (flags on a launch line)",
        "train_gpt2.py --batch_size 32 ...",
    ),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(cli_facts, entrypoints=ENTRYPOINTS, together=together, single_dash=True),
)
