"""Ultralytics YOLO training: the ``yolo [task] train key=value ...`` command line,
``YOLO("yolov8n.pt").train(epochs=..., ...)`` calls in Python (read with ``ast``, never
imported), and a cfg YAML (``yolo train cfg=custom.yaml``: a copy of
``ultralytics/cfg/default.yaml``).

What the settings mean, read from Ultralytics' code (``ultralytics/engine/trainer.py``,
``BaseTrainer``, and ``ultralytics/cfg/default.yaml`` of release 8.3):

- Every setting is a key of ``cfg/default.yaml``; ``check_dict_alignment`` stops the run on
  any other key, so a near-miss of a known key is a typo (TL903). ``key=value`` words of the
  command line are settings, never file names: ``data=coco.yaml`` and ``model=yolov8n.pt``
  name a dataset and weights Ultralytics finds in its own package or downloads.
- ``batch`` is the batch of all GPUs together (``_setup_train`` gives each rank ``batch //
  world_size``); the optimizer steps every ``accumulate = max(round(nbs / batch), 1)``
  batches (``nbs``, the nominal batch, 64 by default), so the global batch is ``batch x
  accumulate``. ``batch=-1`` or a fraction is AutoBatch: a size chosen at run time, unknown.
- ``device=0,1,2,3`` (or a list) trains on those GPUs of one node: Ultralytics starts its own
  DDP processes. ``cpu``/``mps`` hold no GPU; an unset device takes the first GPU available,
  not a count the file states.
- ``amp`` (default true) trains with ``torch.autocast`` in float16 and a GradScaler; ``amp=False``
  trains in float32.
- After every epoch ``save_model`` overwrites ``last.pt`` (and ``best.pt``): one checkpoint per
  epoch, two files kept. ``save_period=N`` (N > 0) also writes ``epochN.pt`` every N epochs,
  which are never removed. ``save=False`` saves only after the last epoch.
- ``time`` caps the run at that many hours and overrides ``epochs`` (the epoch count is then
  recomputed at run time). ``val`` validates after every epoch. ``imgsz`` is the side of the
  square training image.

Defaults (``Document.defaults``), from ``cfg/default.yaml``: ``epochs`` 100, ``batch`` 16 (a
global batch of 64 through ``nbs``), ``imgsz`` 640, ``workers`` 8, ``seed`` 0, ``amp`` true
(fp16), a checkpoint every epoch keeping ``last.pt`` and ``best.pt``, validation every epoch.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from trainlint.errors import SourceError
from trainlint.job import Location, UnknownKey
from trainlint.sources.base import (
    Document,
    DocumentDefault,
    Fact,
    Input,
    ProgramArgument,
    Role,
    top_of,
)
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format
from trainlint.sources.base.typos import near_misses
from trainlint.sources.python.arguments import script_arguments
from trainlint.sources.python.calls import Context
from trainlint.sources.python.literal import UNKNOWN, Positions, literal
from trainlint.sources.python.walk import Scan, scan
from trainlint.sources.structured import MAX_BYTES, KeyPath, Tree, check_size, flat
from trainlint.sources.structured.located import tree_locator

name = "ultralytics"
role: Role = "config"

Settings = Mapping[str, tuple[Any, Location]]
"""Each setting a file or launch line states → (its value, where it is written); a value
that is no literal (a Python name or expression) is ``UNKNOWN``."""
Reader = Callable[[Any, Location, Settings], list[Fact]]
"""A setting's value, where it is written and the other settings → its facts."""

# The keys of ultralytics/cfg/default.yaml (8.3 and the main branch of 00033e8, whose loss
# options p_drop...fitness_prior are new), and those of earlier 8.x releases a config written
# then may still hold (label_smoothing, save_hybrid, hide_labels...).
KNOWN_KEYS = flat.words(
    """
task mode model data epochs time patience batch imgsz save save_period cache device workers
project name exist_ok pretrained optimizer verbose seed deterministic single_cls rect cos_lr
close_mosaic resume amp fraction profile freeze multi_scale compile overlap_mask mask_ratio
dropout val split save_json conf iou max_det half dnn plots end2end source vid_stride
stream_buffer visualize augment agnostic_nms classes retina_masks embed show save_frames
save_txt save_conf save_crop show_labels show_conf show_boxes line_width format keras optimize
int8 dynamic simplify opset workspace nms lr0 lrf momentum weight_decay warmup_epochs
warmup_momentum warmup_bias_lr box cls cls_pw dfl pose kobj rle angle nbs hsv_h hsv_s hsv_v
degrees translate scale shear perspective flipud fliplr bgr mosaic mixup cutmix copy_paste
copy_paste_mode auto_augment erasing cfg tracker label_smoothing save_hybrid hide_labels
hide_conf line_thickness boxes v5loader crop_fraction p_drop obj objectness obj_target cls_target
cls_ce cls_ls o2o_topk2 ood_scoring ood_end2end fitness_branch fitness_prior
"""
)
# Keys only a training cfg of Ultralytics holds (not a dataset YAML's path/train/val/names,
# nor a model YAML's nc/scales/backbone/head).
_TRAIN_MARKS = frozenset({
    "imgsz", "save_period", "close_mosaic", "mosaic", "hsv_h", "hsv_s", "hsv_v", "fliplr",
    "flipud", "warmup_epochs", "warmup_bias_lr", "nbs", "overlap_mask", "mask_ratio", "cos_lr",
    "copy_paste", "mixup", "lr0", "lrf", "box", "dfl", "single_cls", "patience",
})  # fmt: skip
_RUN_KEYS = frozenset({"epochs", "imgsz", "batch", "save_period", "close_mosaic"})
# YOLOv5's hyp.*.yaml and opt.yaml share keys with Ultralytics; these are YOLOv5's alone.
_YOLOV5 = frozenset({
    "anchor_t", "iou_t", "fl_gamma", "obj_pw", "anchors", "hyp", "noval", "nosave",
    "noautoanchor", "image_weights", "sync_bn", "local_rank", "evolve", "weights", "batch_size",
})  # fmt: skip

_MODELS = frozenset({"YOLO", "RTDETR", "YOLOWorld", "YOLOE", "NAS"})
_PY_HINT = re.compile(r"\bultralytics\b")
_TRAIN_CALL = re.compile(r"\.train\s*\(")

_DEFAULT_NBS = 64  # cfg/default.yaml: nbs
_DEFAULT_BATCH = 16


def recognise(file: Input) -> float:
    """0.95 for Python calling ``.train(`` on an Ultralytics model (``YOLO(...)``, read with
    ``ast``: a torch module's ``model.train()`` beside it is not one); 0.9 for a YAML holding
    two of Ultralytics' training keys, one of them a run setting; 0 otherwise."""
    if file.suffix == "py":
        text = file.text[:MAX_BYTES]
        if not (_PY_HINT.search(text) and _TRAIN_CALL.search(text)):
            return 0.0
        return 0.95 if _read_python(file.path, file.text).trains else 0.0
    if file.suffix not in ("yaml", "yml"):
        return 0.0
    keys = {str(key) for key in file.mapping}
    if keys & _YOLOV5 or not keys & _RUN_KEYS:
        return 0.0
    return 0.9 if len(keys & _TRAIN_MARKS) >= 2 else 0.0


def parse(file: Input) -> Document:
    doc = Document(file.path, name, recognise(file), role)
    if file.suffix == "py":
        return _parse_python(file, doc)
    tree = file.trees[0] if file.trees else Tree({})
    data = tree.data if isinstance(tree.data, dict) else {}
    locate = tree_locator(tree, file.path)
    settings = {str(key): (value, locate((str(key),))) for key, value in data.items()}
    doc.facts = settings_facts(settings)
    doc.unknown_keys = near_misses(tree, KNOWN_KEYS, name, file.path)
    doc.defaults = _defaults(top_of(file.path))
    if "save_dir" in settings:  # the trainer writes every setting and its save_dir
        doc.purpose = "the record of a finished run (Ultralytics' args.yaml)"
    return doc


# --- what the settings state ------------------------------------------------------------


def _value(value: Any) -> Any:
    return None if value is UNKNOWN else value


def _stated(pointer: str, value: Any, where: Location) -> Fact:
    """A fact, None when the setting is stated with a value trainlint cannot know (it then
    blocks the framework's default)."""
    return Fact(pointer, value, where)


def settings_facts(settings: Settings) -> list[Fact]:
    """The facts of Ultralytics' settings, however they are written."""
    facts: list[Fact] = []
    for key, reader in _READERS.items():
        if key in settings:
            value, where = settings[key]
            facts += reader(_value(value), where, settings)
    return facts


def _epochs(value: Any, where: Location, settings: Settings) -> list[Fact]:
    if "time" in settings and _hours(settings["time"][0]) is not None:
        return [_stated("/training/epochs", None, where)]  # ``time`` overrides epochs
    epochs = n.positive_int(value)
    return [_stated("/training/epochs", None if epochs is None else float(epochs), where)]


def _hours(value: Any) -> float | None:
    return n.positive_float(_value(value))


def _time(value: Any, where: Location, settings: Settings) -> list[Fact]:
    hours = _hours(value)
    return [] if hours is None else [Fact("/resources/time_limit_s", hours * 3600, where)]


def _accumulate(batch: int, settings: Settings) -> int | None:
    """``BaseTrainer._setup_train``: ``max(round(nbs / batch), 1)`` batches per step."""
    nbs = n.positive_int(_value(settings["nbs"][0])) if "nbs" in settings else _DEFAULT_NBS
    return None if nbs is None else max(round(nbs / batch), 1)


def _batch(value: Any, where: Location, settings: Settings) -> list[Fact]:
    """An integer batch of all GPUs, accumulated to ``nbs``; -1 or a fraction is AutoBatch."""
    batch = value if isinstance(value, int) and not isinstance(value, bool) else n.to_int(value)
    accumulate = None if batch is None or batch < 1 else _accumulate(batch, settings)
    if isinstance(value, float) or batch is None or accumulate is None:
        return [_stated("/training/global_batch_size", None, where),
                _stated("/training/grad_accum_steps", None, where)]  # fmt: skip
    return [
        Fact("/training/global_batch_size", batch * accumulate, where),
        Fact("/training/grad_accum_steps", accumulate, where),
    ]


def _image_size(value: Any, where: Location, settings: Settings) -> list[Fact]:
    """``imgsz=640`` (a square side); ``[h, w]`` only when square."""
    sides = value if isinstance(value, list) else [value]
    sizes = {n.positive_int(side) for side in sides}
    size = sizes.pop() if len(sizes) == 1 else None
    return [_stated("/data/image_size", size, where)]


_DEVICE_WORD = re.compile(r"(?:cuda:)?\d+|-1")


def gpu_count(value: Any) -> int | None:
    """``0``, ``"0,1,2,3"``, ``[0, 1]``, ``"cuda:0"``, ``-1`` (one idle GPU) → GPUs; None for
    ``cpu``/``mps``, an unset device or anything unknown."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return 1 if value >= -1 else None
    items = value if isinstance(value, list) else str(value).strip("[]() ").split(",")
    words = [str(item).strip() for item in items if str(item).strip()]
    if not words or not all(_DEVICE_WORD.fullmatch(word) for word in words):
        return None
    return len(words)


def _device(value: Any, where: Location, settings: Settings) -> list[Fact]:
    """Only a count of CUDA devices; an unset device or ``cpu`` states none."""
    count = gpu_count(value)
    return [] if count is None else [Fact("/resources/gpus_per_node", count, where)]


def _precision(value: Any, where: Location, settings: Settings) -> list[Fact]:
    amp = n.to_bool(value)
    precision = None if amp is None else "fp16" if amp else "fp32"
    return [_stated("/training/precision", precision, where)]


def _save_period(value: Any, where: Location, settings: Settings) -> list[Fact]:
    """``epochN.pt`` every N epochs, all kept; else ``last.pt`` every epoch (two files kept)."""
    period = n.to_int(value)
    if period is None or _saves_off(settings):
        return []
    if period > 0:  # every epochN.pt stays: no retention limit
        return [
            Fact("/checkpoint/every_epochs", float(period), where),
            Fact("/checkpoint/strategy", "epoch", where),
            _stated("/checkpoint/keep_last", None, where),
        ]
    return [
        Fact("/checkpoint/every_epochs", 1.0, where),
        Fact("/checkpoint/strategy", "epoch", where),
        Fact("/checkpoint/keep_last", 2, where),
    ]


def _saves_off(settings: Settings) -> bool:
    return "save" in settings and n.to_bool(_value(settings["save"][0])) is False


def _save(value: Any, where: Location, settings: Settings) -> list[Fact]:
    """``save=False``: only the last epoch's weights are written."""
    return [Fact("/checkpoint/strategy", "no", where)] if n.to_bool(value) is False else []


def _val(value: Any, where: Location, settings: Settings) -> list[Fact]:
    on = n.to_bool(value)
    return [] if on is None else [Fact("/eval/strategy", "epoch" if on else "no", where)]


_WEIGHTS = re.compile(r"(?:yolo|rtdetr)[\w.-]*", re.IGNORECASE)


def model_name(value: Any) -> str | None:
    """``yolov8n.pt`` / ``yolo11s-seg.yaml`` / ``weights/yolov8m.pt`` → ``yolov8n`` ...; a
    file of the user's own (``runs/.../best.pt``) names no model."""
    text = n.to_str(value)
    if not text:
        return None
    stem = text.rsplit("/", 1)[-1]
    stem = re.sub(r"\.(?:pt|yaml|yml|pth|onnx)$", "", stem, flags=re.IGNORECASE)
    return stem if _WEIGHTS.fullmatch(stem) else None


def _model(value: Any, where: Location, settings: Settings) -> list[Fact]:
    named = model_name(value)
    return [] if named is None else [Fact("/model/name", named, where)]


def _simple(pointer: str, convert: Callable[[Any], Any]) -> Reader:
    def read(value: Any, where: Location, settings: Settings) -> list[Fact]:
        return [_stated(pointer, convert(value), where)]

    return read


def _optimizer(value: Any, where: Location, settings: Settings) -> list[Fact]:
    """``optimizer=auto`` picks SGD or AdamW from the run length at run time: unknown."""
    text = n.to_str(value)
    if not text or text.strip().lower() == "auto":
        return []
    return [Fact(f"/training/optimizer/{part}", got, where)
            for part, convert in (("name", n.to_str), ("family", n.optimizer_family))
            if (got := convert(text)) is not None]  # fmt: skip


def _compile(value: Any, where: Location, settings: Settings) -> list[Fact]:
    """``compile=True`` or a mode name (``max-autotune``) compiles; ``False`` does not."""
    on = n.to_bool(value)
    if on is None and isinstance(value, str) and value.strip():
        on = True
    return [] if on is None else [Fact("/training/compile", on, where)]


_READERS: dict[str, Reader] = {
    "epochs": _epochs, "time": _time, "batch": _batch, "imgsz": _image_size,
    "device": _device, "workers": _simple("/data/num_workers", n.to_int),
    "amp": _precision, "save_period": _save_period, "save": _save, "val": _val,
    "model": _model, "seed": _simple("/training/seed", n.to_int), "optimizer": _optimizer,
    "compile": _compile,
}  # fmt: skip


def _defaults(where: Location) -> list[DocumentDefault]:
    """``cfg/default.yaml``'s values for what the file leaves unset."""
    accumulate = max(round(_DEFAULT_NBS / _DEFAULT_BATCH), 1)
    return [
        DocumentDefault("/training/epochs", 100.0, "epochs", where),
        DocumentDefault("/training/global_batch_size", _DEFAULT_BATCH * accumulate, "batch", where),
        DocumentDefault("/training/grad_accum_steps", accumulate, "batch", where),
        DocumentDefault("/data/image_size", 640, "imgsz", where),
        DocumentDefault("/data/num_workers", 8, "workers", where),
        DocumentDefault("/training/seed", 0, "seed", where),
        DocumentDefault("/training/precision", "fp16", "amp", where),
        DocumentDefault("/checkpoint/every_epochs", 1.0, "save_period", where),
        DocumentDefault("/checkpoint/strategy", "epoch", "save_period", where),
        DocumentDefault("/checkpoint/keep_last", 2, "save_period", where),
        DocumentDefault("/eval/strategy", "epoch", "val", where),
    ]


# --- Python: YOLO(...).train(...) ---------------------------------------------------------


@dataclass(frozen=True)
class _PythonReading:
    trains: bool = False  # a ``.train(...)`` of an Ultralytics model was found
    facts: list[Fact] = field(default_factory=list)
    unknown_keys: list[UnknownKey] = field(default_factory=list)
    defaults: list[DocumentDefault] = field(default_factory=list)
    arguments: dict[str, ProgramArgument] = field(default_factory=dict)


def _parse_python(file: Input, doc: Document) -> Document:
    reading = _read_python(file.path, file.text)
    doc.facts, doc.unknown_keys = list(reading.facts), list(reading.unknown_keys)
    doc.defaults, doc.arguments = list(reading.defaults), dict(reading.arguments)
    return doc


@lru_cache(maxsize=8)
def _read_python(path: str, text: str) -> _PythonReading:
    """The settings of each ``YOLO(...).train(...)`` call, and the script's own argument
    definitions (``--epochs`` of an argparse script passing ``epochs=args.epochs``), through
    which a launch line's flags are read. A keyword whose value is no literal states nothing
    here, and Ultralytics' default for it does not apply either. Cached: the registry
    recognises, then parses."""
    check_size(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError) as error:
        raise SourceError(f"Python syntax error: {error}") from error
    found = scan(tree)
    positions = Positions(text)
    models = _model_variables(found)
    trained = [(call, weights) for call, _ in found.calls
               if (weights := _trained_model(call, models, found)) is not None]  # fmt: skip
    if not trained:
        return _PythonReading()
    facts: list[Fact] = []
    unknown: list[UnknownKey] = []
    framework: list[DocumentDefault] = []
    for call, weights in trained:
        settings = _call_settings(call, weights, path, positions)
        known = {key: value for key, value in settings.items() if value[0] is not UNKNOWN}
        facts += settings_facts(known)
        unknown += _keyword_typos(call, path, positions)
        hidden = set(settings) - set(known)
        framework = framework or [
            default for default in _defaults(_at(path, positions, call))
            if default.key not in hidden
        ]  # fmt: skip
    argument_defaults, arguments = script_arguments(Context(path, positions, found), tree)
    return _PythonReading(True, facts, unknown, argument_defaults + framework, arguments)


def _at(path: str, positions: Positions, node: ast.AST) -> Location:
    line, column = positions.of(node)
    return Location(file=path, line=line, column=column)


def _is_model_class(call: ast.expr, found: Scan) -> bool:
    if not isinstance(call, ast.Call):
        return False
    full = found.full_name(call.func)
    return full.rsplit(".", 1)[-1] in _MODELS and full.startswith("ultralytics")


def _model_variables(found: Scan) -> dict[str, ast.Call]:
    """``model = YOLO("yolov8n.pt")``: variable → the constructor call."""
    models: dict[str, ast.Call] = {}
    for assign, _conditional in found.assigns:
        value = assign.value
        if isinstance(value, ast.Call) and _is_model_class(value, found):
            for target in assign.targets:
                if isinstance(target, ast.Name):
                    models[target.id] = value
    return models


def _trained_model(call: ast.Call, models: Mapping[str, ast.Call], found: Scan) -> ast.Call | None:
    """The ``YOLO(...)`` call whose ``.train(...)`` ``call`` is, else None."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "train":
        return None
    owner = func.value
    if isinstance(owner, ast.Name):
        return models.get(owner.id)
    return owner if isinstance(owner, ast.Call) and _is_model_class(owner, found) else None


def _call_settings(
    call: ast.Call, weights: ast.Call, path: str, positions: Positions
) -> dict[str, tuple[Any, Location]]:
    """The ``train`` keywords, and the weights ``YOLO(...)`` loads as ``model``."""
    settings: dict[str, tuple[Any, Location]] = {}
    first = weights.args[0] if weights.args else None
    given = next((kw.value for kw in weights.keywords if kw.arg == "model"), first)
    if given is not None:
        settings["model"] = (literal(given), _at(path, positions, given))
    for keyword in call.keywords:
        if keyword.arg is not None:
            settings[keyword.arg] = (literal(keyword.value), _at(path, positions, keyword))
    return settings


def _keyword_typos(call: ast.Call, path: str, positions: Positions) -> list[UnknownKey]:
    spans: dict[KeyPath, tuple[int, int]] = {(): positions.of(call)}
    data: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is not None:
            data[keyword.arg] = None
            spans[(keyword.arg,)] = positions.of(keyword)
    return near_misses(Tree(data, spans), KNOWN_KEYS, name, path)


# --- the command line ---------------------------------------------------------------------


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """The settings that need no other: everything but ``epochs``/``batch`` (read together)."""
    if flag in ("epochs", "batch", "save_period") or flag not in _READERS:
        return []
    return _READERS[flag](value, location, {})


def together(stated: Mapping[str, tuple[Any, Location]]) -> list[Fact]:
    """``epochs`` (unless ``time``), ``batch`` (with ``nbs``) and ``save_period`` (with
    ``save``), which depend on other settings of the line."""
    settings = {key: value for key, value in stated.items() if not key.startswith("-")}
    facts = [
        fact
        for key in ("epochs", "batch", "save_period")
        if key in settings
        for fact in _READERS[key](settings[key][0], settings[key][1], settings)
    ]
    if "epochs" not in settings and "time" in settings and _hours(settings["time"][0]):
        facts.append(_stated("/training/epochs", None, settings["time"][1]))  # a cfg's epochs too
    return facts


def cli_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """Ultralytics' defaults for a ``yolo train`` line, beside the first setting it states."""
    return _defaults(facts[0].location) if facts else []


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return {
        "epochs (unless time is set)": ["/training/epochs"],
        "time (hours)": ["/resources/time_limit_s"],
        "batch x max(round(nbs / batch), 1); -1 or a fraction: AutoBatch, unknown": [
            "/training/global_batch_size",
            "/training/grad_accum_steps",
        ],
        "imgsz": ["/data/image_size"],
        "device (0,1,2,3 or a list)": ["/resources/gpus_per_node"],
        "workers": ["/data/num_workers"],
        "amp (false: fp32, else fp16)": ["/training/precision"],
        "save_period, save": [
            "/checkpoint/every_epochs",
            "/checkpoint/strategy",
            "/checkpoint/keep_last",
        ],
        "val": ["/eval/strategy"],
        "model (yolov8n.pt → yolov8n)": ["/model/name"],
        "seed": ["/training/seed"],
        "optimizer (not auto)": ["/training/optimizer/name", "/training/optimizer/family"],
        "compile": ["/training/compile"],
        "cfg=FILE on the yolo command line": ["(reference)"],
    }


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("yolo detect train k=v ...", "train.py calling YOLO(...).train()", "cfg.yaml"),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(
        cli_facts,
        entrypoints=re.compile(r"(?:^|/)yolo$"),
        defaults=cli_defaults,
        together=together,
        key_values=True,
        config_keys=frozenset({"cfg"}),
    ),
)
