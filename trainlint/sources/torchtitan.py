"""torchtitan TOML job configs (``train_configs/llama3_8b.toml``), old and new section layouts.

torchtitan moved keys between releases: ``[training] batch_size`` became ``local_batch_size``,
the parallel degrees moved from ``[training]`` to ``[parallelism]``, ``[checkpoint]
enable_checkpoint`` became ``enable`` and ``[training] compile`` became ``[compile] enable``.
Both layouts are read, so a config means the same whichever release it was written for.

Default (``Document.defaults``): no ``[training] seed`` draws a random seed each run;
located at the top of the file.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from trainlint.discover import OTHER_TOOLS_TOML
from trainlint.job import Location, UnknownKey
from trainlint.sources.base import Document, Fact, Input, Role, seed_default, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe, facts_from_table
from trainlint.sources.structured import KeyPath, Tree
from trainlint.sources.structured.toml import load_toml

name = "torchtitan"
role: Role = "config"

_HEADER = re.compile(r"^\s*\[(job|training|parallelism|checkpoint|metrics|activation_checkpoint)\]",
                     re.MULTILINE)  # fmt: skip


def _degree(value: Any) -> int | None:
    """A parallel degree: 1 means off, and -1 ("the leftover ranks") is not a number yet."""
    return n.positive_int(value)


def _sharded(value: Any) -> str | None:
    degree = n.to_int(value)
    return "fsdp" if degree is not None and (degree == -1 or degree > 1) else None


def _checkpoints(value: Any) -> str | None:
    flag = n.to_bool(value)
    return None if flag is None else "steps" if flag else "no"


def _not(value: Any) -> bool | None:
    flag = n.to_bool(value)
    return None if flag is None else not flag


def _async(value: Any) -> bool | None:
    text = n.to_str(value)
    return None if text is None else text.strip().lower() != "disabled"


def _recompute(value: Any) -> bool | None:
    text = n.to_str(value)
    return None if text is None else text.strip().lower() in {"selective", "full"}


def _fp8(value: Any) -> str | None:
    """``converters = ["float8"]`` (or ``"mx"``) trains the linear layers in 8-bit floats."""
    items = n.string_list(value) or []
    return "fp8" if any(item.strip().lower() in {"float8", "mx"} for item in items) else None


# Every flavor torchtitan's model registries define (torchtitan/models/<name>/__init__.py, the
# TOML-era and current ones) whose dimensions the catalog holds → that catalog model. The
# attention variants (``8B_flex``, ``debugmodel_varlen_attn``, ``_irope``, ``_non_fused_qkv``)
# share their base flavor's weights. Flavors left out are mixture-of-experts models the catalog
# does not hold (llama4 17bx16e/17bx128e, deepseek_v3 236B, gpt_oss, qwen3_5, kimi_k2_7, the
# MoE debug models): their name stays ``name-flavor``, a model the estimator does not know.
FLAVORS: dict[tuple[str, str], str] = {
    ("llama3", "debugmodel"): "torchtitan-llama3-debugmodel",
    ("llama3", "1b"): "torchtitan-llama3-1B",
    ("llama3", "3b"): "torchtitan-llama3-3B",
    ("llama3", "8b"): "Llama-3.1-8B",
    ("llama3", "70b"): "Llama-3.1-70B",
    ("llama3", "405b"): "Llama-3.1-405B",
    ("llama2", "7b"): "Llama-2-7B",
    ("llama2", "13b"): "Llama-2-13B",
    ("llama2", "70b"): "Llama-2-70B",
    ("qwen3", "debugmodel"): "torchtitan-qwen3-debugmodel",
    ("qwen3", "0.6b"): "Qwen3-0.6B",
    ("qwen3", "1.7b"): "Qwen3-1.7B",
    ("qwen3", "4b"): "Qwen3-4B",
    ("qwen3", "8b"): "Qwen3-8B",
    ("qwen3", "14b"): "Qwen3-14B",
    ("qwen3", "32b"): "Qwen3-32B",
    ("qwen3", "30b-a3b"): "Qwen3-30B-A3B",
    ("qwen3", "235b-a22b"): "Qwen3-235B-A22B",
    ("deepseek_v3", "16b"): "DeepSeek-V2-Lite",  # V2-Lite's dimensions exactly
    ("deepseek_v3", "671b"): "DeepSeek-V3",
}
_VARIANT = re.compile(r"_(flex(_attn)?|varlen(_attn)?|irope|non_fused_qkv)$")


def flavor_model(model: str, flavor: str | None) -> str:
    """The catalog name of torchtitan's ``[model] name``/``flavor``, else ``name-flavor``."""
    if flavor is None:
        return model
    base = _VARIANT.sub("", flavor.strip().lower())
    return FLAVORS.get((model.strip().lower(), base), f"{model}-{flavor}")


_PARALLEL = {
    "data_parallel_shard_degree": [JobField("/training/parallelism/strategy", _sharded)],
    "tensor_parallel_degree": [JobField("/training/parallelism/tensor", _degree)],
    "pipeline_parallel_degree": [JobField("/training/parallelism/pipeline", _degree)],
    "context_parallel_degree": [JobField("/training/parallelism/context", _degree)],
}
_OFFLOAD = [
    JobField("/training/parallelism/offload_params", n.to_bool),
    JobField("/training/parallelism/offload_optimizer", n.to_bool),
]

TABLE: dict[KeyPath, list[JobField]] = {
    ("job", "description"): [JobField("/name", n.to_str)],
    ("training", "batch_size"): [JobField("/training/micro_batch_size", n.positive_int)],
    ("training", "local_batch_size"): [JobField("/training/micro_batch_size", n.positive_int)],
    ("training", "global_batch_size"): [JobField("/training/global_batch_size", n.positive_int)],
    ("training", "seq_len"): [JobField("/model/seq_len", n.positive_int)],
    ("training", "steps"): [JobField("/training/max_steps", n.positive_int)],
    ("training", "mixed_precision_param"): [JobField("/training/precision", n.precision)],
    ("training", "dtype"): [JobField("/training/precision", n.precision)],
    ("model", "converters"): [
        JobField("/training/precision", _fp8),
        JobField("/features/fp8", lambda value: "precision" if _fp8(value) else None),
    ],
    ("training", "seed"): [JobField("/training/seed", n.to_int)],
    ("training", "enable_cpu_offload"): _OFFLOAD,
    ("training", "compile"): [JobField("/training/compile", n.to_bool)],
    ("compile", "enable"): [JobField("/training/compile", n.to_bool)],
    **{("training", key): fields for key, fields in _PARALLEL.items()},
    **{("experimental", "pipeline_parallel_degree"): _PARALLEL["pipeline_parallel_degree"]},
    **{("parallelism", key): fields for key, fields in _PARALLEL.items()},
    ("checkpoint", "enable_checkpoint"): [JobField("/checkpoint/strategy", _checkpoints)],
    ("checkpoint", "enable"): [JobField("/checkpoint/strategy", _checkpoints)],
    ("checkpoint", "keep_latest_k"): [JobField("/checkpoint/keep_last", n.positive_int)],
    ("checkpoint", "async_mode"): [JobField("/checkpoint/async", _async)],
    ("checkpoint", "model_weights_only"): [JobField("/checkpoint/save_optimizer", _not)],
    ("metrics", "log_freq"): [JobField("/logging/every_steps", n.positive_int)],
    ("activation_checkpoint", "mode"): [JobField("/training/activation_checkpointing", _recompute)],
    ("profiling", "enable_profiling"): [
        JobField("/logging/profiler/enabled", n.to_bool),
        JobField("/logging/profiler/scheduled", n.when_true(True)),  # a trace every profile_freq
    ],
    ("optimizer", "name"): n.optimizer_fields(),
}

KNOWN: dict[str, frozenset[str]] = {
    "job": frozenset({"config_file", "dump_folder", "description", "use_for_integration_test",
                      "print_args", "print_config"}),
    "model": frozenset({"name", "flavor", "tokenizer_path", "hf_assets_path", "converters",
                        "print_after_conversion", "norm_type"}),
    "training": frozenset({
        "dataset", "dataset_path", "batch_size", "local_batch_size", "global_batch_size",
        "seq_len", "max_norm", "steps", "warmup_steps", "enable_cpu_offload", "dtype",
        "mixed_precision_param", "mixed_precision_reduce", "compile", "gc_freq", "gc_debug",
        "seed", "deterministic", "data_parallel_degree", "data_parallel_shard_degree",
        "data_parallel_replicate_degree", "tensor_parallel_degree", "pipeline_parallel_degree",
        "disable_loss_parallel", "fsdp_reshard_after_forward", "enable_async_tensor_parallel",
        "enable_compiled_autograd", "context_parallel_degree", "fp8_linear",
    }),
    "parallelism": frozenset({
        "data_parallel_replicate_degree", "enable_compiled_autograd",
        "data_parallel_shard_degree", "fsdp_reshard_after_forward", "tensor_parallel_degree",
        "disable_loss_parallel", "enable_async_tensor_parallel", "pipeline_parallel_degree",
        "pipeline_parallel_split_points", "pipeline_parallel_layers_per_stage",
        "pipeline_parallel_schedule", "pipeline_parallel_schedule_csv",
        "pipeline_parallel_microbatch_size", "context_parallel_degree",
        "context_parallel_rotate_method", "expert_parallel_degree",
        "expert_tensor_parallel_degree",
    }),
    "checkpoint": frozenset({
        "enable_checkpoint", "enable", "folder", "interval_type", "interval",
        "model_weights_only", "export_dtype", "create_seed_checkpoint", "async_mode",
        "keep_latest_k", "load_step", "exclude_from_loading", "initial_load_path",
        "initial_load_model_only", "initial_load_in_hf", "last_save_model_only",
        "last_save_in_hf", "enable_first_step_checkpoint",
    }),
    "metrics": frozenset({"log_freq", "enable_tensorboard", "disable_color_printing",
                          "save_tb_folder", "save_for_all_ranks", "enable_wandb", "rank_0_only"}),
    "profiling": frozenset({"enable_profiling", "save_traces_folder", "profile_freq",
                            "enable_memory_snapshot", "save_memory_snapshot_folder"}),
    "optimizer": frozenset({"name", "lr", "beta1", "beta2", "eps", "weight_decay",
                            "implementation", "early_step_in_backward", "fused"}),
    "activation_checkpoint": frozenset({"mode", "selective_ac_option",
                                        "per_op_sac_force_recompute_mm_shapes_by_fqns"}),
    "compile": frozenset({"enable", "components", "backend"}),
}  # fmt: skip
SECTIONS = frozenset({*KNOWN, "lr_scheduler", "float8", "mx", "comm", "memory_estimation",
                      "fault_tolerance", "experimental", "validation"})  # fmt: skip


@lru_cache(maxsize=16)
def _tree(text: str) -> Tree:
    return load_toml(text)


def recognise(file: Input) -> float:
    """A TOML file with torchtitan's sections: ``[training]`` or ``[parallelism]`` beside
    ``[job]``/``[model]``/``[checkpoint]``/``[metrics]``.

    The only TOML reader, so it also stands for TOML itself: an invalid ``.toml`` is a parse
    error (TL901) as an invalid ``.yaml`` or ``.json`` is, except the files of other tools
    (``pyproject.toml``, ``Cargo.toml``, ...), which are never read."""
    if file.suffix != "toml" or file.path.rsplit("/", 1)[-1] in OTHER_TOOLS_TOML:
        return 0.0
    data = _tree(file.text).data  # raises SourceError (TL901) when invalid
    if len(set(_HEADER.findall(file.text))) < 2:
        return 0.0
    sections = {key for key, value in data.items() if isinstance(value, dict)}
    hits = len(sections & SECTIONS)
    return 0.95 if hits >= 3 and sections & {"training", "parallelism"} else 0.0


def parse(file: Input) -> Document:
    tree = _tree(file.text)
    doc = Document(file.path, name, recognise(file), role)
    facts = facts_from_table(tree, TABLE, file.path)
    doc.facts = facts + _model_name(tree, file.path) + _interval(tree, file.path)
    doc.facts += _reporters(tree, file.path)
    doc.unknown_keys = _near_misses(tree, file.path)
    # no seed: torchtitan draws a random one each run
    doc.defaults = [seed_default(None, "[training] seed", file.path)]
    return doc


def _at(tree: Tree, path: KeyPath, file: str) -> Location:
    line, column = tree.span(path)
    return Location(file=file, line=line, column=column)


def _model_name(tree: Tree, file: str) -> list[Fact]:
    """``[model] name = "llama3"``, ``flavor = "405B"`` → ``Llama-3.1-405B`` (``FLAVORS``)."""
    model = tree.data.get("model")
    if not isinstance(model, dict) or not n.to_str(model.get("name")):
        return []
    value = flavor_model(str(model["name"]), n.to_str(model.get("flavor")))
    return [Fact("/model/name", value, _at(tree, ("model", "name"), file))]


def _interval(tree: Tree, file: str) -> list[Fact]:
    """``[checkpoint] interval`` counts steps, or seconds under the old ``interval_type``."""
    checkpoint = tree.data.get("checkpoint")
    if not isinstance(checkpoint, dict) or "interval" not in checkpoint:
        return []
    every = n.positive_int(checkpoint["interval"])
    if every is None:
        return []
    seconds = str(checkpoint.get("interval_type", "steps")).lower() == "seconds"
    pointer = "/checkpoint/every_seconds" if seconds else "/checkpoint/every_steps"
    return [Fact(pointer, every, _at(tree, ("checkpoint", "interval"), file))]


def _reporters(tree: Tree, file: str) -> list[Fact]:
    metrics = tree.data.get("metrics")
    if not isinstance(metrics, dict):
        return []
    flags = {"enable_tensorboard": "tensorboard", "enable_wandb": "wandb"}
    present = [key for key in flags if key in metrics]
    if not present:
        return []
    reporters = [flags[key] for key in present if n.to_bool(metrics[key])]
    return [Fact("/logging/reporters", reporters, _at(tree, ("metrics", present[0]), file))]


def _near_misses(tree: Tree, file: str) -> list[UnknownKey]:
    found = typos.near_misses(tree, SECTIONS, name, file)
    for section, known in KNOWN.items():
        found += typos.near_misses(tree, known, name, file, (section,))
    return found


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "model.name + model.flavor": ["/model/name"],
        "checkpoint.interval (+ interval_type)": [
            "/checkpoint/every_steps", "/checkpoint/every_seconds"],
        "metrics.enable_tensorboard, metrics.enable_wandb": ["/logging/reporters"],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("train_configs/llama3_8b.toml", "debug_model.toml"),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
