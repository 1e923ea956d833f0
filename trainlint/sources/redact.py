"""Secret redaction for values taken from scripts and manifests (DESIGN §3: ``env``).

A value is withheld when its *name* looks secret (``HF_TOKEN``, ``--wandb_api_key``) or the
value itself is shaped like a credential (``hf_…``, ``sk-…``, ``ghp_…``, AWS key ids, long
hex or base64 runs). Redacted values become the literal string ``"<redacted>"``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from trainlint.sources.base import Fact

REDACTED = "<redacted>"

# "token" and "key" only as whole word parts: HF_TOKEN, --hub-token, WANDB_KEY, but not
# max_tokens, TOKENIZERS_PARALLELISM or keyword.
_SECRET_WORDS = (
    r"(?<![a-z])(?:token|key)(?![a-z])|secret|passw(?:or)?d|passwd|api[_-]?key|access[_-]?key"
    r"|private[_-]?key|credential"
)
_SECRET_NAME = re.compile(_SECRET_WORDS, re.IGNORECASE)
_PREFIXED = re.compile(
    r"(?:hf_|sk-|sk_live_|ghp_|gho_|ghs_|ghu_|ghr_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA)"
    r"[A-Za-z0-9_\-]{12,}"
)
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_BASE64 = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
# Pieces shorter than the shortest credential (a prefix and 12 characters: ``hf_`` + 12) are
# never secret, so they are not even matched: most pieces of a command line are short.
_PIECE = re.compile(r"[^\s\"'=,;:@]{15,}")
_NAMED_VALUE = re.compile(
    rf"(?P<name>[\w.\-]*(?:{_SECRET_WORDS})[\w.\-]*)"
    r"(?P<sep>=|\s+)(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"']+)",
    re.IGNORECASE,
)


def secret_name(name: str) -> bool:
    """``HF_TOKEN``, ``WANDB_API_KEY``, ``--hub-token``: names whose values are secrets."""
    return _SECRET_NAME.search(name) is not None


def secret_value(value: str) -> bool:
    """Whether a whole value is shaped like a credential."""
    text = value.strip().strip("\"'")
    if _PREFIXED.fullmatch(text) or _HEX.fullmatch(text):
        return True
    if "/" in text or not _BASE64.fullmatch(text):
        return False
    classes = (r"[a-z]", r"[A-Z]", r"[0-9]")
    return all(re.search(c, text) for c in classes) and _entropy(text) >= 4.4


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character: random tokens score ~4.6+, run names ~4.2."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def redact_value(name: str, value: str) -> str:
    """``value`` unless the name or the value looks secret (a URL keeps all but its password)."""
    if secret_name(name) or secret_value(value):
        return REDACTED
    return _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", value)


# user:password@ in a URL (postgres://u:p@host, https://u:p@host).
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][\w+.\-]*://[^\s/:@]+:)[^\s/@]+@")


def redact_text(text: str) -> str:
    """A command line with the values of secret-named options/variables, passwords in URLs
    and token-shaped pieces replaced by ``<redacted>``."""
    if "://" in text:
        text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    if _SECRET_NAME.search(text):  # a cheap test first: _NAMED_VALUE backtracks on each word
        text = _NAMED_VALUE.sub(_named, text)
    return _PIECE.sub(lambda m: REDACTED if secret_value(m.group(0)) else m.group(0), text)


def _named(match: re.Match[str]) -> str:
    value = match.group("value")
    if value.startswith("-") or value.startswith("$") or value == REDACTED:
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{REDACTED}"


def redact_fact(fact: Fact) -> Fact:
    """Secret-named env/tag values and token-shaped text never leave the sources: every
    fact of every format passes here (sources/__init__.read_document)."""
    value = fact.value
    if fact.pointer.startswith(("/env/", "/tags/")) and isinstance(value, str):
        safe: Any = redact_value(fact.pointer.rsplit("/", 1)[-1], value)
    else:
        safe = _scrub(value)
    return fact if safe == value else Fact(fact.pointer, safe, fact.location)


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value
