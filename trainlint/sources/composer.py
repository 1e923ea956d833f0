"""Composer / llm-foundry training YAML (``composer train/train.py yamls/pretrain/mpt-1b.yaml``):
one OmegaConf mapping per run, its top-level keys the fields of llm-foundry's ``TrainConfig``,
with ``variables:`` holding the values other keys copy through ``${variables.*}``.

What the keys mean, read from llm-foundry's ``llmfoundry/utils/config_utils.py`` and
``scripts/train/train.py`` and Composer's ``Trainer`` and ``Time`` (composer/core/time.py):

- Durations and intervals (``max_duration``, ``eval_interval``, ``save_interval``,
  ``console_log_interval``) are Composer ``Time`` strings: ``24800ba`` batches (optimizer
  steps), ``1ep`` epochs, ``26000000000tok`` tokens, ``100000sp`` samples, ``0.1dur`` a
  fraction of ``max_duration``; a bare integer is epochs. Tokens become steps through
  ``global_train_batch_size x max_seq_len`` (every sample is ``max_seq_len`` tokens in
  llm-foundry's concatenated text loaders), samples through ``global_train_batch_size``.
- ``global_train_batch_size`` is the global batch; ``device_train_microbatch_size`` the
  micro-batch per GPU, or ``auto`` (Composer searches for the largest that fits at run time:
  stated, value unknown). Accumulation is ``global / (micro x GPUs)``
  (``calculate_batch_size_info``), so it is left to derivation.
- ``precision``: ``amp_bf16`` (llm-foundry's default), ``amp_fp16``, ``amp_fp8``, ``fp32``.
- ``fsdp_config`` trains with FSDP; its ``sharding_strategy`` (``FULL_SHARD`` unless written)
  sets the ZeRO-like stage.
- Composer saves checkpoints only with a ``save_folder``: ``save_interval`` (``1000ba``
  when unset, TrainConfig's default) then applies, and ``save_num_checkpoints_to_keep`` (-1:
  all) bounds what is kept; without one nothing is saved.
- Evaluation runs only with an ``eval_loader`` (or ``eval_loaders``/``icl_tasks``).
- llm-foundry refuses a top-level key TrainConfig does not have ("Unused parameter ... found
  in cfg"), so a near-miss of a known key is a typo (TL903).

Defaults (``Document.defaults``), from ``TrainConfig``: ``precision`` amp_bf16 and, with a
``save_folder``, ``save_interval`` 1000ba. ``seed`` has no default (TrainConfig requires it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Document, DocumentDefault, Fact, Input, Role, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe
from trainlint.sources.structured import KeyPath, Tree, flat, interpolation
from trainlint.sources.structured.located import (
    Locate,
    fact,
    mapping_at,
    table_facts,
    tree_locator,
)

name = "composer"
role: Role = "config"

_TIME = re.compile(
    r"^\s*(?P<number>[0-9][0-9_]*(?:\.[0-9]+)?(?:e[0-9]+)?)\s*(?P<unit>ep|ba|sp|tok|dur)\s*$"
)


@dataclass(frozen=True)
class Time:
    """A Composer ``Time``: an amount and its unit (ep, ba, sp, tok, dur)."""

    amount: float
    unit: str


def parse_time(value: Any) -> Time | None:
    """``24800ba`` → Time(24800, "ba"); a bare integer is epochs (``Time.from_input``); zero
    or less is no interval at all."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Time(float(value), "ep") if value > 0 else None
    match = _TIME.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    amount = n.positive_float(match["number"].replace("_", ""))
    return None if amount is None else Time(amount, match["unit"])


def _in(unit: str) -> Any:
    """A converter reading a Time only in ``unit`` (batches as whole steps)."""

    def convert(value: Any) -> int | float | None:
        time = parse_time(value)
        if time is None or time.unit != unit:
            return None
        return time.amount if unit == "ep" else n.positive_int(int(time.amount))

    return convert


def _precision(value: Any) -> str | None:
    """``amp_bf16`` → bf16, ``amp_fp8`` → fp8, ``fp32`` → fp32."""
    text = n.to_str(value)
    return n.precision(text.strip().lower().removeprefix("amp_")) if text else None


def _microbatch(value: Any) -> int | None:
    return None if str(value).strip().lower() == "auto" else n.positive_int(value)


_SHARDING_STAGE = {"full_shard": 3, "hybrid_shard": 3, "_hybrid_shard_zero2": 2,
                   "shard_grad_op": 2, "no_shard": 0}  # fmt: skip


def _fsdp_stage(config: Any) -> int | None:
    """FSDP sharding in ZeRO terms (FULL_SHARD when ``sharding_strategy`` is unset)."""
    if not isinstance(config, dict):
        return None
    return _SHARDING_STAGE.get(str(config.get("sharding_strategy") or "full_shard").lower())


def _fsdp(config: Any) -> str | None:
    return "fsdp" if isinstance(config, dict) else None


def _on(value: Any) -> bool | None:
    return isinstance(value, dict) or None


def _reporters(value: Any) -> list[str] | None:
    return sorted(str(key) for key in value) if isinstance(value, dict) and value else None


# Keys whose meaning depends on no other key: read in a file and as ``key=value`` overrides.
TABLE: dict[KeyPath, list[JobField]] = {
    ("run_name",): [JobField("/name", n.to_str)],
    ("seed",): [JobField("/training/seed", n.to_int)],
    ("max_seq_len",): [JobField("/model/seq_len", n.positive_int)],
    ("global_train_batch_size",): [JobField("/training/global_batch_size", n.positive_int)],
    ("device_train_microbatch_size",): [JobField("/training/micro_batch_size", _microbatch)],
    ("max_duration",): [
        JobField("/training/epochs", _in("ep")),
        JobField("/training/max_steps", _in("ba")),
    ],
    ("precision",): [JobField("/training/precision", _precision)],
    ("fsdp_config",): [
        JobField("/training/parallelism/strategy", _fsdp),
        JobField("/training/parallelism/zero_stage", _fsdp_stage),
    ],
    ("fsdp_config", "activation_checkpointing"): [
        JobField("/training/activation_checkpointing", n.to_bool)
    ],
    ("console_log_interval",): [JobField("/logging/every_steps", _in("ba"))],
    ("compile_config",): [JobField("/training/compile", _on)],
    ("loggers",): [JobField("/logging/reporters", _reporters)],
    ("model", "pretrained_model_name_or_path"): [JobField("/model/name", n.to_str)],
    ("model", "d_model"): [JobField("/model/hidden", n.positive_int)],
    ("model", "n_heads"): [JobField("/model/heads", n.positive_int)],
    ("model", "n_layers"): [JobField("/model/layers", n.positive_int)],
    ("model", "vocab_size"): [JobField("/model/vocab", n.positive_int)],
    ("train_loader", "num_workers"): [JobField("/data/num_workers", n.to_int)],
    ("train_loader", "pin_memory"): [JobField("/data/pin_memory", n.to_bool)],
    ("train_loader", "prefetch_factor"): [JobField("/data/prefetch_factor", n.positive_int)],
    ("train_loader", "persistent_workers"): [JobField("/data/persistent_workers", n.to_bool)],
    ("optimizer", "name"): n.optimizer_fields(),
}

# llm-foundry's TrainConfig fields (llmfoundry/utils/config_utils.py): the closed top-level set.
KNOWN_KEYS = flat.words(
    """
model tokenizer optimizer scheduler train_loader device_train_batch_size device_eval_batch_size
max_duration eval_interval max_seq_len seed precision code_paths max_split_size_mb
expandable_segments cuda_load_lazy dist_timeout fsdp_config eval_loader eval_loaders icl_tasks
icl_tasks_str eval_gauntlet eval_gauntlet_str icl_subset_num_batches icl_seq_len loggers
progress_bar log_to_console python_log_level console_log_interval log_config callbacks algorithms
save_folder save_latest_filename save_overwrite save_weights_only save_filename save_interval
save_num_checkpoints_to_keep load_path load_weights_only load_strict_model_weights
load_ignore_keys save_ignore_keys device_train_microbatch_size global_train_batch_size
eval_subset_num_batches eval_first compile_config metadata run_name autoresume profiler
variables n_gpus device_train_grad_accum parallelism_config tp_config
"""
)
# Keys of llm-foundry's TrainConfig that no other tool writes at the top level.
CLAIMS = frozenset({"train_loader", "fsdp_config", "eval_loader", "icl_tasks", "eval_gauntlet"})
# The registry names of llm-foundry's model builders: a class, not a model.
_BUILDERS = re.compile(r"(?:hf|mpt)_(?:causal_lm|t5|prefix_lm)\b|\w+_causal_lm")
_DEFAULT_SAVE_INTERVAL = 1000  # TrainConfig.save_interval = '1000ba'


def recognise(file: Input) -> float:
    """``max_duration`` with a Composer dataloader, FSDP config or ``variables`` block, or
    any key llm-foundry alone writes."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    keys = set(file.mapping)
    if CLAIMS & keys and ("max_duration" in keys or "model" in keys):
        return 0.95
    if "max_duration" in keys and "variables" in keys and "global_train_batch_size" in keys:
        return 0.9
    return 0.0


def parse(file: Input) -> Document:
    return read_tree(file.trees[0] if file.trees else Tree({}), file.path)


def read_tree(written: Tree, path: str) -> Document:
    """A Composer training mapping's Document (a file, or the ``parameters`` of an mcli run
    YAML re-rooted at that key)."""
    tree = interpolation.resolved(written)
    data = tree.data if isinstance(tree.data, dict) else {}
    locate = tree_locator(tree, path)
    doc = Document(path, name, 0.95, role)
    data = {**data, "save_folder": _save_folder(written, tree)}
    doc.facts = table_facts(data, TABLE, locate) + derived(data, locate)
    doc.unknown_keys = typos.near_misses(written, KNOWN_KEYS, name, path)
    doc.defaults = _defaults(data, locate)
    return doc


UNKNOWN_FOLDER = "(unknown)"


def _save_folder(written: Tree, resolved: Tree) -> Any:
    """The save folder: absent or null is none; an interpolation the file cannot resolve
    (``${oc.env:SAVE_DIR}``) is a folder of unknown name, never none."""
    folder = written.data.get("save_folder") if isinstance(written.data, dict) else None
    if folder is None or folder == "":
        return None
    value = resolved.data.get("save_folder") if isinstance(resolved.data, dict) else None
    return value or UNKNOWN_FOLDER


@dataclass(frozen=True)
class _Steps:
    """What turns a Composer Time into optimizer steps."""

    global_batch: int | None
    seq_len: int | None
    max_steps: int | None

    def of(self, time: Time) -> int | None:
        if time.unit == "ba":
            return n.positive_int(int(time.amount))
        if time.unit == "sp" and self.global_batch:
            return n.positive_int(int(time.amount // self.global_batch))
        if time.unit == "tok" and self.global_batch and self.seq_len:
            return n.positive_int(int(time.amount // (self.global_batch * self.seq_len)))
        if time.unit == "dur" and self.max_steps:
            return n.positive_int(round(time.amount * self.max_steps))
        return None


def _steps(data: dict[str, Any]) -> _Steps:
    batch = n.positive_int(data.get("global_train_batch_size"))
    seq = n.positive_int(data.get("max_seq_len"))
    base = _Steps(batch, seq, None)
    duration = parse_time(data.get("max_duration"))
    total = base.of(duration) if duration is not None and duration.unit != "dur" else None
    return _Steps(batch, seq, total)


def derived(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """Facts that combine keys: run length in tokens or samples, evaluation, checkpoints and
    the feed-forward width."""
    steps = _steps(data)
    return [
        *_run_length(data, steps, locate),
        *_evaluation(data, steps, locate),
        *_checkpoints(data, steps, locate),
        *_retention(data, locate),
        *_ffn_hidden(data, locate),
        *model_name(data, locate),
        *_auto_microbatch(data, locate),
    ]


def _auto_microbatch(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """``device_train_microbatch_size: auto``: Composer picks it at run time, so the
    micro-batch is stated with its value unknown (never a guess)."""
    if str(data.get("device_train_microbatch_size")).strip().lower() != "auto":
        return []
    return [Fact("/training/micro_batch_size", None, locate(("device_train_microbatch_size",)))]


def _run_length(data: dict[str, Any], steps: _Steps, locate: Locate) -> list[Fact]:
    """``max_duration`` in tokens or samples, as steps (batches and epochs are in TABLE)."""
    duration = parse_time(data.get("max_duration"))
    if duration is None or duration.unit not in ("tok", "sp"):
        return []
    return fact("/training/max_steps", steps.max_steps, locate(("max_duration",)))


def _evaluates(data: dict[str, Any]) -> bool:
    return any(data.get(key) for key in ("eval_loader", "eval_loaders", "icl_tasks"))


def _evaluation(data: dict[str, Any], steps: _Steps, locate: Locate) -> list[Fact]:
    """Every ``eval_interval`` when there is something to evaluate."""
    interval = parse_time(data.get("eval_interval"))
    if interval is None or not _evaluates(data):
        return []
    where = locate(("eval_interval",))
    if interval.unit == "ep":
        return fact("/eval/strategy", "epoch", where)
    every = steps.of(interval)
    return fact("/eval/every_steps", every, where) + fact(
        "/eval/strategy", "steps" if every else None, where
    )


def _checkpoints(data: dict[str, Any], steps: _Steps, locate: Locate) -> list[Fact]:
    """No ``save_folder``: nothing saved. Else every ``save_interval`` (the default is a
    Document default)."""
    if not data.get("save_folder"):
        return fact("/checkpoint/strategy", "no", locate(("max_duration",)))
    interval = parse_time(data.get("save_interval"))
    if interval is None:
        return []
    where = locate(("save_interval",))
    if interval.unit == "ep":
        return fact("/checkpoint/every_epochs", interval.amount, where) + fact(
            "/checkpoint/strategy", "epoch", where
        )
    every = steps.of(interval)
    return fact("/checkpoint/every_steps", every, where) + fact(
        "/checkpoint/strategy", "steps" if every else None, where
    )


def _retention(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """``save_num_checkpoints_to_keep`` n ≥ 1 (-1, the default, keeps every checkpoint)."""
    if not data.get("save_folder"):
        return []
    keep = n.positive_int(data.get("save_num_checkpoints_to_keep"))
    return fact("/checkpoint/keep_last", keep, locate(("save_num_checkpoints_to_keep",)))


def _ffn_hidden(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """MPT's feed-forward width: ``expansion_ratio x d_model`` (a GELU MLP, not gated)."""
    model = mapping_at(data, ("model",))
    ratio = n.positive_int(model.get("expansion_ratio"))
    hidden = n.positive_int(model.get("d_model"))
    if ratio is None or hidden is None:
        return []
    return fact("/model/ffn_hidden", ratio * hidden, locate(("model", "expansion_ratio")))


def model_name(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """``model.name`` when it names a model rather than one of llm-foundry's builders."""
    model = mapping_at(data, ("model",))
    written = n.to_str(model.get("name"))
    if not written or "pretrained_model_name_or_path" in model or _BUILDERS.fullmatch(written):
        return []
    return fact("/model/name", written, locate(("model", "name")))


def _defaults(data: dict[str, Any], locate: Locate) -> list[DocumentDefault]:
    """TrainConfig's precision, and its save interval when a save folder is set."""
    top = locate(("max_duration",))
    defaults = [DocumentDefault("/training/precision", "bf16", "precision", top)]
    if data.get("save_folder"):
        where = locate(("save_folder",))
        defaults.append(
            DocumentDefault(
                "/checkpoint/every_steps", _DEFAULT_SAVE_INTERVAL, "save_interval", where
            )
        )
    return defaults


def _eval_override(value: Any, location: Location) -> list[Fact]:
    """``eval_interval=0`` turns periodic evaluation off (llm-foundry's quick start runs it so);
    ``500ba`` evaluates every 500 steps, ``1ep`` every epoch. The config's eval_loader is not
    known here, so a positive interval is read as written."""
    if value in (0, "0") or (isinstance(value, str) and _ZERO.match(value)):
        return fact("/eval/strategy", "no", location)
    interval = parse_time(value)
    if interval is None or interval.unit not in ("ba", "ep"):
        return []
    if interval.unit == "ep":
        return fact("/eval/strategy", "epoch", location)
    return fact("/eval/every_steps", n.positive_int(int(interval.amount)), location) + fact(
        "/eval/strategy", "steps", location
    )


_ZERO = re.compile(r"^\s*0+(?:\.0*)?\s*(?:ep|ba|sp|tok|dur)?\s*$")


def override_facts(key: str, value: Any, location: Location) -> list[Fact]:
    """``max_duration=100ba`` after ``composer train.py cfg.yaml``: the keys of TABLE, and
    ``eval_interval``."""
    if key == "eval_interval":
        return _eval_override(value, location)
    nested: Any = value
    for part in reversed(key.split(".")):
        nested = {part: nested}
    return table_facts(nested, TABLE, lambda _: location)


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "max_duration in tok (/ global_train_batch_size x max_seq_len) or sp": [
            "/training/max_steps"
        ],
        "eval_interval (ba/tok/sp/dur/ep; with an eval_loader)": [
            "/eval/every_steps", "/eval/strategy"],
        "save_interval (ba/tok/sp/dur/ep; with a save_folder, else no checkpoints)": [
            "/checkpoint/every_steps", "/checkpoint/every_epochs", "/checkpoint/strategy"],
        "save_num_checkpoints_to_keep (with a save_folder)": ["/checkpoint/keep_last"],
        "model.name (a model, not an llm-foundry builder)": ["/model/name"],
        "model.expansion_ratio x model.d_model": ["/model/ffn_hidden"],
        "${variables.*} interpolations": ["(resolved before reading)"],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("scripts/train/yamls/pretrain/mpt-1b.yaml", "yamls/finetune/llama3-8b.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    overrides=override_facts,
    claims=CLAIMS,
)
