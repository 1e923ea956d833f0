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

# Names whose values are credentials: a token or key *of a credential kind* (HF_TOKEN,
# --hub_token, WANDB_API_KEY, AWS_SECRET_ACCESS_KEY), any password or secret, and an
# environment variable in the *_TOKEN / *_KEY convention. Not any name with "key" or "token"
# in it: --input_key, data.prompt_key and --mm_use_im_patch_token name columns and switches.
_QUALIFIERS = (
    r"hf|hub|huggingface|hugging[_-]?face[_-]?hub|auth|access|api|bearer|github|gh|gitlab|slack"
    r"|wandb|refresh|session|secret|oauth|id|personal|registry|npm|pypi|jwt|discord|telegram"
    r"|openai|anthropic|comet|neptune|mlflow[_-]?tracking|private|encryption|signing|license"
    r"|master|client|service[_-]?account|storage|account|ssh|deploy|webhook|bot|app"
)
_SECRET_WORDS = (
    rf"(?:^|[._-])(?:{_QUALIFIERS})[_-]?(?:token|key)s?$|^-*(?:token|api[_-]?key|apikey)$"
    r"|apikey|api[_-]key|secret|passw(?:or)?d|passwd|passphrase|credential|private[_-]?key"
    r"|access[_-]?key"
)
_SECRET_NAME = re.compile(_SECRET_WORDS, re.IGNORECASE)
_ENV_CONVENTION = re.compile(r"^[A-Z][A-Z0-9_]*_(?:TOKEN|KEY|PAT)$")
# Values no credential takes: switches, numbers, and references to other variables.
_PLAIN = re.compile(r"(?i:true|false|yes|no|on|off|none|null|auto)|[-+]?[\d.]+(?:e[-+]?\d+)?|\$.*")
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
    r"(?P<name>--?[\w.\-]+|\b[A-Za-z_][\w.\-]*)"
    r"(?P<sep>=|\s+)(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"']+)",
)


def secret_name(name: str) -> bool:
    """``HF_TOKEN``, ``WANDB_API_KEY``, ``--hub-token``, ``DB_PASSWORD``: names whose values
    are secrets; ``--input_key``, ``TOKENIZERS_PARALLELISM``, ``max_tokens`` are not."""
    parts = name.lstrip("-").rsplit(".", 2)
    last = "_".join(parts[-2:])  # ``--logger.wandb.key`` → ``wandb_key``
    return _SECRET_NAME.search(last) is not None or _ENV_CONVENTION.match(parts[-1]) is not None


def _plain(value: str) -> bool:
    """A value no credential takes: empty, a switch, a number, a ``$VARIABLE``."""
    text = value.strip().strip("\"'")
    return not text or _PLAIN.fullmatch(text) is not None


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
    if (secret_name(name) and not _plain(value)) or secret_value(value):
        return REDACTED
    return _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", value)


# user:password@ in a URL (postgres://u:p@host, https://u:p@host).
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][\w+.\-]*://[^\s/:@]+:)[^\s/@]+@")


def redact_text(text: str) -> str:
    """A command line with the values of secret-named options/variables, passwords in URLs
    and token-shaped pieces replaced by ``<redacted>``."""
    if "://" in text:
        text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    if _SECRET_HINT.search(text):  # a cheap test first: _NAMED_VALUE runs on each word
        text = _NAMED_VALUE.sub(_named, text)
    return _PIECE.sub(lambda m: REDACTED if secret_value(m.group(0)) else m.group(0), text)


_SECRET_HINT = re.compile(r"(?i)token|key|secret|passw|passphrase|credential|_pat\b")


def _named(match: re.Match[str]) -> str:
    value = match.group("value")
    if not secret_name(match.group("name")) or value.startswith("-") or value == REDACTED:
        return match.group(0)
    if _plain(value):
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
