"""Value normalizers shared by the sources: one spelling per meaning in the job model."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

_PRECISIONS = {
    "bf16": "bf16", "bfloat16": "bf16", "bf16-mixed": "bf16", "bf16-true": "bf16-true",
    "fp16": "fp16", "float16": "fp16", "16": "fp16", "16-mixed": "fp16", "half": "fp16",
    "fp32": "fp32", "float32": "fp32", "32": "fp32", "32-true": "fp32", "no": "fp32",
    "false": "fp32",  # accelerate's unquoted `mixed_precision: no` is YAML 1.1 false
    "16-true": "fp16-true", "fp16-true": "fp16-true",  # pure 16-bit: no fp32 master copy
    "64": "fp64", "64-true": "fp64",
    "fp8": "fp8", "float8": "fp8",
}  # fmt: skip

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def to_bool(value: Any) -> bool | None:
    """YAML, JSON and shell spellings of a boolean; anything else is unknown."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


# Integers a job's JSON can carry to every engine (64-bit): a 400-digit count is no count.
_INT_LIMIT = 2**63


def to_int(value: Any) -> int | None:
    """An integer, accepting float-looking ones (``1e9``, ``8.0``); ``"auto"`` and a number
    beyond 64 bits are unknown."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) < _INT_LIMIT else None
    number = to_float(value)
    if number is None or not number.is_integer() or abs(number) >= _INT_LIMIT:
        return None
    return int(number)


def to_float(value: Any) -> float | None:
    """A float; unknown for text that is none and for an integer too large for a float."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            return float(value)
        return float(str(value).replace("_", ""))
    except (ValueError, OverflowError):
        return None


def positive_int(value: Any) -> int | None:
    """Counts and intervals: HF's ``max_steps: -1`` and ``0`` mean "not set"."""
    number = to_int(value)
    return number if number is not None and number > 0 else None


def positive_float(value: Any) -> float | None:
    number = to_float(value)
    return number if number is not None and number > 0 else None


def when_true(result: Any) -> Callable[[Any], Any]:
    """A converter giving ``result`` for a true flag (``bf16: true`` → ``"bf16"``), else unknown."""
    return lambda value: result if to_bool(value) is True else None


def image_side(value: Any) -> int | None:
    """A square training resolution in pixels: ``512``, ``"512,512"`` or ``[768, 768]``;
    unknown for a non-square ``"1024,768"`` (no one side describes it)."""
    sides = value if isinstance(value, list) else str(value).replace(" ", "").split(",")
    found = {positive_int(side) for side in sides} if sides else {None}
    return found.pop() if len(found) == 1 else None


def to_str(value: Any) -> str | None:
    return None if value is None or isinstance(value, (dict, list)) else str(value)


def precision(value: Any) -> str | None:
    """``bf16``/``fp16``/``fp32``/``fp8`` from any framework's spelling."""
    return _PRECISIONS.get(str(value).strip().lower()) if value is not None else None


def string_list(value: Any) -> list[str] | None:
    """HF's ``report_to`` style: a list, a comma list, or one name; ``none`` means empty."""
    if isinstance(value, list):
        items = [str(v) for v in value]
    elif isinstance(value, str):
        items = [part.strip() for part in value.split(",") if part.strip()]
    else:
        return None
    return [item for item in items if item.lower() != "none"]


def tag_key(key: str) -> str:
    """Cost-tag keys: lower-case, ``-`` → ``_`` (DESIGN §3)."""
    return key.strip().lower().replace("-", "_")


def flag_key(flag: str) -> str:
    """argparse's dest: ``--save-steps`` and ``--save_steps`` name one option, ``save_steps``."""
    return flag.lstrip("-").replace("-", "_")


# Optimizer spellings (HF ``optim``, DeepSpeed ``optimizer.type``, torch class paths, axolotl,
# torchtune components) → (family, 8-bit, experimental). Experimental: no long track record
# at scale, or a custom kernel that may not build everywhere (TL501 wants a fallback).
_OPTIMIZERS: dict[str, tuple[str, bool, bool]] = {
    "adamw": ("adamw", False, False), "adam": ("adamw", False, False),
    "adamw_torch": ("adamw", False, False), "adamw_torch_fused": ("adamw", False, False),
    "adamw_hf": ("adamw", False, False), "adamw_apex_fused": ("adamw", False, False),
    "fusedadam": ("adamw", False, False), "deepspeedcpuadam": ("adamw", False, False),
    "adamw_bnb_8bit": ("adamw", True, False), "adamw_8bit": ("adamw", True, False),
    "paged_adamw_8bit": ("adamw", True, False), "paged_adamw_32bit": ("adamw", False, False),
    "adamw8bit": ("adamw", True, False), "pagedadamw8bit": ("adamw", True, False),
    "adamw_torch_4bit": ("adamw", True, True), "adamw_torch_8bit": ("adamw", True, False),
    "onebitadam": ("adamw", False, True), "zerooneadam": ("adamw", False, True),
    "adafactor": ("adafactor", False, False),
    "sgd": ("sgd", False, False), "lion": ("lion", False, True),
    "lion_8bit": ("lion", True, True), "paged_lion_8bit": ("lion", True, True),
    "lamb": ("lamb", False, False), "fusedlamb": ("lamb", False, False),
    "onebitlamb": ("lamb", False, True),
    "muon": ("muon", False, True), "sophia": ("sophia", False, True),
    "sophiag": ("sophia", False, True), "schedule_free_adamw": ("adamw", False, True),
    "galore_adamw": ("adamw", False, True), "galore_adamw_8bit": ("adamw", True, True),
    "apollo_adamw": ("adamw", False, True), "ademamix": ("adamw", False, True),
    "adopt": ("adamw", False, True), "rmsprop": ("rmsprop", False, False),
}  # fmt: skip


def _optimizer_key(value: Any) -> str | None:
    """``torch.optim.AdamW``, ``bitsandbytes.optim.PagedAdamW8bit``, ``adamw_torch`` → table key."""
    text = to_str(value)
    if not text:
        return None
    key = text.rsplit(".", 1)[-1].strip().lower().replace("-", "_")
    for candidate in (key, key.replace("_", "")):
        if candidate in _OPTIMIZERS:
            return candidate
    return None


def optimizer_family(value: Any) -> str | None:
    key = _optimizer_key(value)
    return _OPTIMIZERS[key][0] if key else None


def optimizer_eight_bit(value: Any) -> bool | None:
    key = _optimizer_key(value)
    return _OPTIMIZERS[key][1] if key else None


def optimizer_experimental(value: Any) -> bool | None:
    key = _optimizer_key(value)
    return _OPTIMIZERS[key][2] if key else None


def optimizer_fields(pointer_prefix: str = "/training/optimizer") -> list[Any]:
    """The job fields one optimizer name is read into: name, family, 8-bit, experimental."""
    from trainlint.sources.base.table import JobField

    return [
        JobField(f"{pointer_prefix}/name", to_str),
        JobField(f"{pointer_prefix}/family", optimizer_family),
        JobField(f"{pointer_prefix}/eight_bit", optimizer_eight_bit),
        JobField(f"{pointer_prefix}/experimental", optimizer_experimental),
    ]


# Seconds per field: SLURM MM, MM:SS, HH:MM:SS and D-HH[:MM[:SS]]; Lightning DD:HH:MM:SS.
_CLOCK_WEIGHTS: dict[int | str, tuple[int, ...]] = {
    1: (60,), 2: (60, 1), 3: (3600, 60, 1), 4: (86400, 3600, 60, 1), "dash": (3600, 60, 1),
}  # fmt: skip
_DURATION_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400}


def duration_seconds(value: Any) -> float | None:
    """Wall-clock limits in any spelling → seconds: SLURM ``D-HH:MM:SS``/``HH:MM:SS``/``MM``,
    Lightning ``DD:HH:MM:SS`` and ``{days, hours, minutes, seconds}``, ``90m``/``2h``/``1d``,
    and plain seconds (numbers). 0 or negative means no limit (unknown)."""
    if isinstance(value, dict):
        units = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}
        total = sum((to_float(value.get(unit)) or 0.0) * seconds for unit, seconds in units.items())
        return total or None
    number = to_float(value)
    if number is not None:
        return number if number > 0 else None
    text = (to_str(value) or "").strip().lower()
    if text and text[-1].isalpha():
        unit = text.lstrip("0123456789. ")
        amount = to_float(text[: len(text) - len(unit)])
        factor = _DURATION_UNITS.get(unit.strip())
        return amount * factor if amount and factor else None
    return _clock_seconds(text)


def _clock_seconds(text: str) -> float | None:
    """``D-HH:MM:SS`` (SLURM) and ``DD:HH:MM:SS`` (Lightning) and their shorter forms."""
    days, dash, clock = text.partition("-")
    if not dash:
        days, clock = "0", days
    parts = clock.split(":")
    if not days.isdigit() or not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 4:
        return None
    numbers = [int(p) for p in parts]
    weights = _CLOCK_WEIGHTS["dash" if dash else len(parts)]
    total = int(days) * 86400 + sum(n * w for n, w in zip(numbers, weights, strict=False))
    return float(total) if total > 0 else None


def is_interpolation(value: Any) -> bool:
    """An OmegaConf/Hydra ``${...}`` string: a reference, never a literal value."""
    return isinstance(value, str) and "${" in value


def command_line_literal(text: str) -> Any:
    """A ``KEY VALUE`` / ``key=value`` word as yacs and ``OmegaConf.from_cli`` read it: a
    Python literal (``literal_eval``), else the string; None past 200 characters."""
    if len(text) > 200:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
