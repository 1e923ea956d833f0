"""Megatron-LM command-line flags (``pretrain_gpt.py --micro-batch-size 1 --save-interval 1000``).

Megatron-LM has no config file: scripts pass everything as argparse flags, usually gathered in
bash arrays (``GPT_MODEL_ARGS=(--num-layers 96 ...)``) that the shell reader expands in place.
This format reads no file of its own; it reads the flags of any program a launch line runs
(``Format.flags``), after the formats before it in name order (hf-trainer), so ``--seed`` and
``--bf16`` keep one meaning. A file the repo config forces on it is a TL901.

``--exit-duration-in-mins`` is the job's time limit only where no scheduler states one: an
``#SBATCH --time`` in the same script wins, since it is what ends the allocation.
``--log-num-zeros-in-grad`` and ``--log-params-norm`` are per-step diagnostics (each its own
entry under ``/logging/per_step_diagnostics``, located at its flag); ``--eval-iters`` is the
number of batches each evaluation runs.
"""

from __future__ import annotations

from typing import Any

from trainlint.catalog import resolve_model
from trainlint.job import Location
from trainlint.sources.base import Fact, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format, flag_keys, flags_only, no_file
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


def _granularity(value: Any) -> str | None:
    """``--recompute-granularity full|selective``: the recompute mode as Megatron names it."""
    text = (n.to_str(value) or "").strip().lower()
    return text if text in {"full", "selective"} else None


def _one_pass(value: Any) -> float | None:
    """``--train-samples N`` is the run: one pass over N samples, so steps = N / global batch."""
    return 1.0 if n.positive_int(value) is not None else None


# Vocabulary sizes of the tokenizers ``--tokenizer-type`` names with a fixed vocabulary file:
# GPT-2's encoder.json (50,257), BERT's uncased (30,522) and cased (28,996) WordPiece files,
# Llama 2's tokenizer.model (32,000). Megatron pads the embedding table to a multiple of
# ``--make-vocab-size-divisible-by`` (128) x tensor parallel: under 0.1% of the parameters.
TOKENIZER_VOCAB = {
    "gpt2bpetokenizer": 50257,
    "bertwordpiecelowercase": 30522,
    "bertwordpiececase": 28996,
    "llama2tokenizer": 32000,
}


def tokenizer_vocab(value: Any) -> int | None:
    """The vocabulary of a tokenizer named by its Megatron type (``GPT2BPETokenizer``) or by
    the catalog model it belongs to (``meta-llama/Meta-Llama-3-8B``, a Hub id NeMo and
    ``--tokenizer-model`` take); None for any other (a file path, ``HuggingFaceTokenizer``).
    NeMo and GPT-NeoX read their tokenizer keys with it."""
    text = (n.to_str(value) or "").strip()
    if text.lower() in TOKENIZER_VOCAB:
        return TOKENIZER_VOCAB[text.lower()]
    model = resolve_model(text) if text else None
    return model.vocab if model is not None else None


_FP8 = [
    JobField("/training/precision", _any_value("fp8")),
    JobField("/features/fp8", _any_value("precision")),  # fp8 on top of --bf16
]
_FP8_SWITCH = [  # Megatron's older --fp8-e4m3 / --fp8-hybrid switches
    JobField("/training/precision", n.when_true("fp8")),
    JobField("/features/fp8", n.when_true("precision")),
]


FLAGS: dict[str, list[JobField]] = {
    "micro-batch-size": [JobField("/training/micro_batch_size", n.positive_int)],
    "global-batch-size": [JobField("/training/global_batch_size", n.positive_int)],
    "train-iters": [JobField("/training/max_steps", n.positive_int)],
    "train-samples": [
        JobField("/training/dataset_samples", n.positive_int),
        JobField("/training/epochs", _one_pass),
    ],
    "seq-length": [JobField("/model/seq_len", n.positive_int)],
    "num-layers": [JobField("/model/layers", n.positive_int)],
    "hidden-size": [JobField("/model/hidden", n.positive_int)],
    "ffn-hidden-size": [JobField("/model/ffn_hidden", n.positive_int)],
    "num-attention-heads": [JobField("/model/heads", n.positive_int)],
    "num-query-groups": [JobField("/model/kv_heads", n.positive_int)],
    "vocab-size": [JobField("/model/vocab", n.positive_int)],
    "tokenizer-type": [JobField("/model/vocab", tokenizer_vocab)],
    "tokenizer-model": [JobField("/model/vocab", tokenizer_vocab)],
    "tensor-model-parallel-size": [JobField("/training/parallelism/tensor", n.positive_int)],
    "pipeline-model-parallel-size": [JobField("/training/parallelism/pipeline", n.positive_int)],
    "context-parallel-size": [JobField("/training/parallelism/context", n.positive_int)],
    "expert-model-parallel-size": [JobField("/training/parallelism/expert", n.positive_int)],
    "sequence-parallel": [JobField("/training/parallelism/sequence_parallel", n.to_bool)],
    "use-distributed-optimizer": [  # optimizer state sharded over data-parallel ranks: ZeRO-1
        JobField("/training/parallelism/zero_stage", n.when_true(1))
    ],
    "use-torch-fsdp2": [JobField("/training/parallelism/strategy", n.when_true("fsdp"))],
    "use-megatron-fsdp": [JobField("/training/parallelism/strategy", n.when_true("fsdp"))],
    "save-interval": [JobField("/checkpoint/every_steps", n.positive_int)],
    "no-save-optim": [JobField("/checkpoint/save_optimizer", _not)],
    "log-interval": [JobField("/logging/every_steps", n.positive_int)],
    "eval-interval": [JobField("/eval/every_steps", n.positive_int)],
    "eval-iters": [JobField("/eval/iters", n.to_int)],
    "log-num-zeros-in-grad": [
        JobField("/logging/per_step_diagnostics/num_zeros_in_grad", n.to_bool)
    ],
    "log-params-norm": [JobField("/logging/per_step_diagnostics/params_norm", n.to_bool)],
    "fp16": [JobField("/training/precision", n.when_true("fp16"))],
    "bf16": [JobField("/training/precision", n.when_true("bf16"))],
    "fp8-format": _FP8,
    "fp8": _FP8,  # TransformerConfig.fp8, the name --fp8-format sets
    "fp8-e4m3": _FP8_SWITCH,
    "fp8-hybrid": _FP8_SWITCH,
    "use-flash-attn": [JobField("/features/flash-attn", n.when_true("kernel"))],
    # Megatron turns --recompute-activations into --recompute-granularity selective
    # (arguments.py): only the attention core is recomputed (Korthikanti et al. 2022).
    "recompute-activations": [
        JobField("/training/activation_checkpointing", n.to_bool),
        JobField("/training/recompute", n.when_true("selective")),
    ],
    "recompute-granularity": [
        JobField("/training/activation_checkpointing", lambda v: bool(_granularity(v)) or None),
        JobField("/training/recompute", _granularity),
    ],
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
    return flag_keys(FLAGS)


recognise = no_file  # configured on the command line only
parse = flags_only(name)


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
