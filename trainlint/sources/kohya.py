"""kohya-ss/sd-scripts: the flags of its training scripts (``accelerate launch
train_network.py --network_dim 16 ...``), its ``--config_file`` TOML of the same options and
its ``--dataset_config`` TOML (``[general]``, ``[[datasets]] batch_size, resolution``).

What the options mean, from ``library/train_util.py``'s parsers and ``library/config_util.py``:

- ``train_batch_size`` is the batch of one GPU; a dataset config's ``batch_size`` (and
  ``resolution``) takes its place (the docs: the config's value is given priority), so the
  flag counts only without ``--dataset_config``. ``resolution`` is ``512`` or ``"512,512"``.
- ``max_train_steps`` (default 1600) is the step count unless ``max_train_epochs`` is given.
- ``save_every_n_steps`` / ``save_every_n_epochs`` save the model that often (unset: only at
  the end); ``save_last_n_epochs`` keeps that many epoch saves, ``save_last_n_steps`` keeps the
  saves of that many last steps (``save_last_n_steps / save_every_n_steps`` saves).
- ``mixed_precision`` (default ``no``: fp32) is passed to ``Accelerator`` itself;
  ``optimizer_type`` (``AdamW8bit``...) or ``use_8bit_adam`` the optimizer; ``xformers`` swaps
  attention for xformers' kernel; ``network_module = "networks.lora"`` with ``network_dim`` is
  a LoRA of that rank.
- ``--config_file`` TOML: ``read_config_from_file`` flattens its sections (any names) into one
  namespace under the flags, so a flag on the launch line wins over it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from trainlint.discover import OTHER_TOOLS_TOML
from trainlint.job import Location, UnknownKey
from trainlint.sources.base import Document, DocumentDefault, Fact, Input, Reference, Role, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format
from trainlint.sources.base.table import JobField, facts_for
from trainlint.sources.keys.kohya import KNOWN_KEYS, MARKS
from trainlint.sources.structured import Tree
from trainlint.sources.structured.toml import load_toml

name = "kohya"
role: Role = "config"


def _lora(value: Any) -> str | None:
    return "lora" if (n.to_str(value) or "").strip().lower() in _LORA_MODULES else None


_LORA_MODULES = {"networks.lora", "networks.lora_flux", "networks.lora_sd3", "networks.lora_fa",
                 "networks.dylora", "networks.lora_lumina", "networks.lora_hunyuan_image",
                 "networks.lora_anima"}  # fmt: skip

OPTIONS: dict[str, list[JobField]] = {
    "max_train_steps": [JobField("/training/max_steps", n.positive_int)],
    "max_train_epochs": [JobField("/training/epochs", n.positive_int)],
    "gradient_accumulation_steps": [JobField("/training/grad_accum_steps", n.positive_int)],
    "save_every_n_steps": [JobField("/checkpoint/every_steps", n.positive_int)],
    "save_every_n_epochs": [JobField("/checkpoint/every_epochs", n.positive_int)],
    "save_last_n_epochs": [JobField("/checkpoint/keep_last", n.positive_int)],
    "mixed_precision": [JobField("/training/precision", n.precision)],
    "gradient_checkpointing": [JobField("/training/activation_checkpointing", n.to_bool)],
    "xformers": [JobField("/features/xformers", n.when_true("kernel"))],
    "pretrained_model_name_or_path": [JobField("/model/name", n.to_str)],
    "optimizer_type": n.optimizer_fields(),
    "network_module": [JobField("/model/peft/method", _lora)],
    "network_dim": [JobField("/model/peft/rank", n.positive_int)],
    "seed": [JobField("/training/seed", n.to_int)],
    "max_data_loader_n_workers": [JobField("/data/num_workers", n.to_int)],
    "log_with": [JobField("/logging/reporters", n.string_list)],
    "validate_every_n_steps": [JobField("/eval/every_steps", n.positive_int)],
}
# Read only without a dataset config, whose values take their place (``_dataset_options``).
DATASET_OPTIONS: dict[str, list[JobField]] = {
    "train_batch_size": [JobField("/training/micro_batch_size", n.positive_int)],
    "resolution": [JobField("/data/image_size", n.image_side)],
}
_PAIRED = ("save_last_n_steps", "save_every_n_steps")

ENTRYPOINTS = re.compile(
    r"(?:^|/)(?:train_network|train_db|train_textual_inversion(?:_XTI)?|train_control_net"
    r"|train_controlnet|(?:sdxl|sd3|flux|lumina|anima|hunyuan_image)_train\w*)\.py$"
)


def _option_facts(key: str, value: Any, where: Location) -> list[Fact]:
    if key == "use_8bit_adam":
        value, key = ("AdamW8bit" if n.to_bool(value) is True else None), "optimizer_type"
    return facts_for(OPTIONS.get(key, []), value, where)


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """Facts for one flag of a kohya training script (the batch and resolution: ``together``)."""
    return _option_facts(n.flag_key(flag), value, location)


def _stated_facts(stated: Mapping[str, tuple[Any, Location]]) -> list[Fact]:
    """What only several options state: the batch and resolution when no dataset config takes
    their place, and the saves kept by ``save_last_n_steps`` over ``save_every_n_steps``."""
    facts: list[Fact] = []
    if "dataset_config" not in stated:
        for key, fields in DATASET_OPTIONS.items():
            if key in stated:
                facts += facts_for(fields, *stated[key])
    window, every = (n.positive_int(stated[k][0]) if k in stated else None for k in _PAIRED)
    if window and every and window % every == 0:
        facts.append(Fact("/checkpoint/keep_last", window // every, stated[_PAIRED[0]][1]))
    return facts


def together(stated: Mapping[str, tuple[Any, Location]]) -> list[Fact]:
    return _stated_facts({n.flag_key(flag): value for flag, value in stated.items()})


def cli_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """sd-scripts' fp32 (``mixed_precision`` ``no``), random seed and 8 workers, beside the
    first flag the launch line gives the script."""
    return _defaults(facts[0].location) if facts else []


def _defaults(where: Location) -> list[DocumentDefault]:
    return [
        DocumentDefault("/training/precision", "fp32", "mixed_precision", where),
        DocumentDefault("/training/seed", None, "seed", where),
        DocumentDefault("/data/num_workers", 8, "max_data_loader_n_workers", where),
    ]


# --- the TOML files -------------------------------------------------------------------------


@lru_cache(maxsize=16)
def _tree(text: str) -> Tree:
    return load_toml(text)


def _flattened(tree: Tree) -> dict[str, tuple[Any, tuple[str, ...]]]:
    """Option → (value, its key path): sections merged as ``read_config_from_file`` does."""
    found: dict[str, tuple[Any, tuple[str, ...]]] = {}
    for key, value in tree.data.items():
        if isinstance(value, dict):
            found |= {inner: (v, (key, inner)) for inner, v in value.items()}
        else:
            found[key] = (value, (key,))
    return found


def _is_dataset_config(data: Mapping[str, Any]) -> bool:
    datasets = data.get("datasets")
    return (
        isinstance(datasets, list)
        and all(isinstance(d, dict) for d in datasets)
        and any(
            isinstance(d.get("subsets"), list) or "batch_size" in d or "resolution" in d
            for d in datasets
        )
    )


def recognise(file: Input) -> float:
    """A TOML of sd-scripts' options (three of its distinctive names, in any sections) or a
    dataset config (``[[datasets]]`` with subsets, a batch size or a resolution)."""
    if file.suffix != "toml" or file.path.rsplit("/", 1)[-1] in OTHER_TOOLS_TOML:
        return 0.0
    tree = _tree(file.text)  # raises SourceError (TL901) when invalid
    if _is_dataset_config(tree.data):
        return 0.9
    return 0.9 if len(MARKS & set(_flattened(tree))) >= 3 else 0.0


def parse(file: Input) -> Document:
    tree = _tree(file.text)
    doc = Document(file.path, name, recognise(file), role)
    if _is_dataset_config(tree.data):
        doc.facts = _dataset_facts(tree, file.path)
        return doc
    options = _flattened(tree)
    located = {key: (value, _at(tree, path, file.path)) for key, (value, path) in options.items()}
    for key, (value, where) in located.items():
        doc.facts += _option_facts(key, value, where)
    doc.facts += _stated_facts(located)
    doc.references = _references(located)
    doc.unknown_keys = _near_misses(tree, options, file.path)
    doc.defaults = _defaults(Location(file=file.path, line=1, column=1))
    return doc


def _at(tree: Tree, path: tuple[str | int, ...], file: str) -> Location:
    line, column = tree.span(path)
    return Location(file=file, line=line, column=column)


def _references(located: Mapping[str, tuple[Any, Location]]) -> list[Reference]:
    """``dataset_config = "dataset.toml"``: the dataset config this run reads."""
    value, where = located.get("dataset_config", (None, None))
    text = n.to_str(value)
    return [Reference(text, where, "config")] if text and where is not None else []


def _near_misses(tree: Tree, options: Mapping[str, Any], file: str) -> list[UnknownKey]:
    sections = {key for key, value in tree.data.items() if isinstance(value, dict)}
    found = typos.near_misses(tree, KNOWN_KEYS | sections, name, file)
    for section in sections:
        found += typos.near_misses(tree, KNOWN_KEYS, name, file, (section,))
    return found


def _dataset_facts(tree: Tree, file: str) -> list[Fact]:
    """The batch and resolution every dataset trains at (``[general]`` fills in a dataset's
    missing one); nothing when the datasets differ."""
    general = tree.data.get("general")
    general = general if isinstance(general, dict) else {}
    facts: list[Fact] = []
    for key, fields in (("batch_size", DATASET_OPTIONS["train_batch_size"]),
                        ("resolution", DATASET_OPTIONS["resolution"])):  # fmt: skip
        values, where = set(), None
        for index, dataset in enumerate(tree.data["datasets"]):
            path: tuple[str | int, ...] = ("datasets", index, key)
            if key not in dataset and key in general:
                path = ("general", key)
            raw = dataset.get(key, general.get(key))
            values.add(repr(raw))
            where = where or (_at(tree, path, file) if raw is not None else None)
        if len(values) == 1 and where is not None:
            facts += facts_for(fields, raw, where)
    return facts


def keys() -> dict[str, list[str]]:
    """Every option this format reads → the job-model pointers it sets (docs/formats.md)."""
    described = {key: [f.pointer for f in fields] for key, fields in OPTIONS.items()}
    return described | {
        "use_8bit_adam": ["/training/optimizer/name", "/training/optimizer/eight_bit"],
        "train_batch_size, resolution (without dataset_config)": [
            "/training/micro_batch_size", "/data/image_size"],
        "save_last_n_steps / save_every_n_steps": ["/checkpoint/keep_last"],
        "dataset_config": ["(reference)"],
        "[[datasets]] batch_size, resolution (the same in every dataset; [general] fills in)": [
            "/training/micro_batch_size", "/data/image_size"],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=(
        "config.toml (--config_file)",
        "dataset_config.toml (--dataset_config)",
        "train_network.py --network_dim 16 ... (flags on a launch line)",
    ),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(cli_facts, entrypoints=ENTRYPOINTS, defaults=cli_defaults, together=together),
)
