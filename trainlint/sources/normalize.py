"""Value normalizers shared by the sources: one spelling per meaning in the job model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_PRECISIONS = {
    "bf16": "bf16", "bfloat16": "bf16", "bf16-mixed": "bf16", "bf16-true": "bf16",
    "fp16": "fp16", "float16": "fp16", "16": "fp16", "16-mixed": "fp16", "half": "fp16",
    "fp32": "fp32", "float32": "fp32", "32": "fp32", "32-true": "fp32", "no": "fp32",
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


def to_int(value: Any) -> int | None:
    """An integer, accepting float-looking ones (``1e9``, ``8.0``); ``"auto"`` is unknown."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    number = to_float(value)
    return int(number) if number is not None and number.is_integer() else None


def to_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).replace("_", ""))
    except ValueError:
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
