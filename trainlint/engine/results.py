"""The findings contract, enforced the same way for every backend.

Engines differ in how they print numbers (regopy writes ``0.3`` where regorus writes
``0.30000000000000004``; either may write ``2`` or ``2.0``) and give sets back as JSON arrays in
their own order. Normalising here makes every backend return identical Python values, so a
report never depends on which engine ran.
"""

from __future__ import annotations

import json
import re
from typing import Any

from trainlint.errors import PolicyError

_SIGNIFICANT_DIGITS = 12
_MAX_EXACT_INT = 2**53


def findings_by_rule(rules_doc: Any) -> dict[str, list[dict[str, Any]]]:
    """``data.trainlint.rules`` → {package: sorted findings}; packages without findings skipped."""
    if not isinstance(rules_doc, dict):
        return {}
    result: dict[str, list[dict[str, Any]]] = {}
    for package, document in sorted(rules_doc.items()):
        if isinstance(document, dict) and "findings" in document:
            result[package] = _findings(package, document["findings"])
    return result


def normalise(value: Any) -> Any:
    """JSON value with floats cut to 12 significant digits and integral floats made ints."""
    if isinstance(value, float):
        rounded = float(f"{value:.{_SIGNIFICANT_DIGITS}g}")
        exact = rounded.is_integer() and abs(rounded) < _MAX_EXACT_INT
        return int(rounded) if exact else rounded
    if isinstance(value, list):
        return [normalise(item) for item in value]
    if isinstance(value, dict):
        return {key: normalise(item) for key, item in value.items()}
    return value


def clean_error(text: str) -> str:
    """An engine's error text without the Rust backtrace that RUST_BACKTRACE=1 appends."""
    return text.split("Stack backtrace:", 1)[0].strip()


_REGORUS_LOCATION = re.compile(r"-->\s*(?P<where>\S+:\d+:\d+)")
_REGORUS_MESSAGE = re.compile(r"^error:\s*(?P<message>.+)$", re.MULTILINE)


def one_line(text: str) -> str:
    """``file:line:col: message`` from a rustc-style diagnostic, else the first lines joined."""
    cleaned = clean_error(text)
    where = _REGORUS_LOCATION.search(cleaned)
    message = _REGORUS_MESSAGE.search(cleaned)
    if where and message:
        return f"{where['where']}: {message['message'].strip()}"
    lines = [line.strip() for line in cleaned.splitlines() if line.strip()]
    return "; ".join(lines[:4]) or "unknown error"


def _findings(package: str, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise PolicyError(f"rule {package}: 'findings' must be a set of objects")
    findings = [_finding(package, item) for item in value]
    return sorted(findings, key=_sort_key)


def _finding(package: str, item: Any) -> dict[str, Any]:
    """Check one finding against the contract: message, pointer, optional waste."""
    if not isinstance(item, dict):
        raise PolicyError(f"rule {package}: a finding must be an object, got {item!r}")
    for key in ("message", "pointer"):
        if not isinstance(item.get(key), str):
            raise PolicyError(f"rule {package}: finding {item!r} needs a string {key!r}")
    finding: dict[str, Any] = normalise(item)
    if "waste" in finding:
        finding["waste"] = _waste(package, finding["waste"])
    return finding


def _waste(package: str, waste: Any) -> dict[str, float]:
    """Waste is always both figures, as floats, so reports can sum them without checks."""
    keys = ("gpu_hours", "usd")
    if not isinstance(waste, dict) or not all(_is_number(waste.get(key)) for key in keys):
        raise PolicyError(f"rule {package}: waste must be {{gpu_hours: number, usd: number}}")
    return {key: float(waste[key]) for key in keys}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _sort_key(finding: dict[str, Any]) -> tuple[str, str, str]:
    return finding["pointer"], finding["message"], json.dumps(finding, sort_keys=True)
