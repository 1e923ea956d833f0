"""Secret redaction for values taken from scripts and manifests (DESIGN §3: ``env``).

A value is withheld when its *name* looks secret (``HF_TOKEN``, ``--wandb_api_key``,
``DB_PASS``, ``REDIS_AUTH``, ``GH_CREDS``, ``hfToken``) or the value itself is shaped like a
credential (``hf_…``, ``sk-…``, ``ghp_…``, AWS key ids, JWTs, private keys, long hex or base64
runs); inside a longer value the credential part of a URL (``user:password@``, a Slack,
Discord or Teams webhook's path, a ``?token=``/``&sig=`` query value) is withheld and the rest
kept. Redacted values become the literal string ``"<redacted>"``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
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
# Names of passwords and other authenticators, as a word of the name (DB_PASS, REDIS_AUTH,
# GH_CREDS, SENTRY_DSN): their values are secret even when they look like numbers.
_PASSWORD_WORDS = (
    r"passw(?:or)?d|passwd|passphrase|credential|(?:^|[._-])pass$|(?:^|[._-])pw$"
    r"|(?:^|[._-])(?:auth|authorization|basic[_-]?auth)$|(?:^|[._-])creds?(?:$|[._-])"
    r"|(?:^|[._-])(?:dsn|cookies?|webhooks?(?:[_-]url)?|conn(?:ection)?[_-]?str(?:ing)?)$"
)
_SECRET_WORDS = (
    rf"(?:^|[._-])(?:{_QUALIFIERS})[_-]?(?:token|key)s?$|^-*(?:token|api[_-]?key|apikey)$"
    r"|apikey|api[_-]key|secret|private[_-]?key|access[_-]?key"
)
_SECRET_NAME = re.compile(rf"{_SECRET_WORDS}|{_PASSWORD_WORDS}", re.IGNORECASE)
_PASSWORD_NAME = re.compile(_PASSWORD_WORDS, re.IGNORECASE)
_ENV_CONVENTION = re.compile(r"^[A-Z][A-Z0-9_]*_(?:TOKEN|KEY|PAT)$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Values no credential takes: switches, numbers (token ids: PAD_TOKEN=0), references to
# other variables (a whole ``$NAME``, ``${NAME}`` or ``$(...)``; not a password that starts
# with ``$``, nor ``${NAME:-default}``, whose default is a literal). A password's value is
# never plain for being a number.
_SWITCH = re.compile(
    r"(?i:true|false|yes|no|on|off|none|null|auto)|\$(?:[A-Za-z_]\w*|\{[A-Za-z_]\w*\}|\(.*\))"
)
_NUMBER = re.compile(r"[-+]?[\d.]+(?:e[-+]?\d+)?")
_PREFIXED = re.compile(
    r"(?:hf_|sk-|sk_live_|sk_test_|rk_live_|ghp_|gho_|ghs_|ghu_|ghr_|github_pat_|glpat-|glptt-"
    r"|xox[abeprs]-|xapp-|AKIA|ASIA|AIza|npm_|pypi-|dckr_pat_|r8_|gsk_)"
    r"[A-Za-z0-9_\-]{12,}"
)
_JWT = re.compile(r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}")
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_BASE64 = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
# Pieces shorter than the shortest credential (a prefix and 12 characters: ``hf_`` + 12) are
# never secret, so they are not even matched: most pieces of a command line are short.
_PIECE = re.compile(r"[^\s\"'=,;:@]{15,}")
# A name and its separator; the value is found after it, never consumed with it, so every word
# is tried as a name in turn: a switch before a secret (``--push_to_hub --hub_token x``) or an
# option's ``NAME=value`` operand (``mpirun -x DB_PASS=x``) cannot hide the pair after it. A
# name starts a word or follows ``=,;:`` or a quote, so each try ends where the next may start.
_NAMED_VALUE = re.compile(
    r"(?<![^\s\"'=,;:])(?P<name>--?[\w.\-]+|[A-Za-z_][\w.\-]*)(?P<sep>=|\s+)(?=\S)"
)
_UNQUOTED = re.compile(r"[^\s\"']*")


@lru_cache(maxsize=4096)
def secret_name(name: str) -> bool:
    """``HF_TOKEN``, ``WANDB_API_KEY``, ``--hub-token``, ``DB_PASS``, ``hfToken``: names whose
    values are secrets; ``--input_key``, ``TOKENIZERS_PARALLELISM``, ``max_tokens`` are not."""
    return _name_matches(_SECRET_NAME, name) or _ENV_CONVENTION.match(_last(name)) is not None


def _password_name(name: str) -> bool:
    return _name_matches(_PASSWORD_NAME, name)


def _last(name: str) -> str:
    return name.lstrip("-").rsplit(".", 1)[-1]


def _name_matches(pattern: re.Pattern[str], name: str) -> bool:
    """The last two dotted parts of the name in snake case (``--logger.wandb.key`` →
    ``wandb_key``, ``myHfToken`` → ``my_Hf_Token``)."""
    parts = name.lstrip("-").rsplit(".", 2)
    last = _CAMEL.sub("_", "_".join(parts[-2:]))
    return pattern.search(last) is not None


def _plain(value: str, password: bool = False) -> bool:
    """A value no credential takes: empty, a switch, a ``$VARIABLE``, or a number (a token
    id) unless it is a password's."""
    text = value.strip().strip("\"'")
    if not text or _SWITCH.fullmatch(text):
        return True
    return not password and _NUMBER.fullmatch(text) is not None


def secret_value(value: str) -> bool:
    """Whether a whole value is shaped like a credential."""
    text = value.strip().strip("\"'")
    if _PREFIXED.fullmatch(text) or _HEX.fullmatch(text) or _JWT.fullmatch(text):
        return True
    if _PRIVATE_KEY.search(text):
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
    """``value`` unless the name or the value looks secret; a longer value keeps all but its
    credential parts (a URL's password, a webhook's path, a token-shaped piece)."""
    if (secret_name(name) and not _plain(value, _password_name(name))) or secret_value(value):
        return REDACTED
    return redact_text(value)


# user:password@ in a URL (postgres://u:p@host, https://u:p@host).
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][\w+.\-]*://[^\s/:@]+:)[^\s/@]+@")
# Webhook URLs whose path is the credential: everything after the fixed prefix is withheld.
_WEBHOOK = re.compile(
    r"(?P<keep>https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|(?:[\w-]+\.)?discord(?:app)?\.com/api/webhooks/"
    r"|[\w.-]+\.webhook\.office\.com/webhookb2/"
    r"|chat\.googleapis\.com/v1/spaces/))[^\s\"'<>]+",
    re.IGNORECASE,
)
# A URL query parameter holding a credential (?token=, &sig= of a SAS URL, X-Amz-Signature).
_QUERY_SECRET = re.compile(r"(?P<keep>[?&](?P<name>[\w.\-]+)=)(?P<value>[^&#\s\"']+)")
_QUERY_SECRET_NAMES = frozenset({
    "sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
    "x-goog-signature", "x-goog-credential", "code", "auth", "key",
})  # fmt: skip


def _query(match: re.Match[str]) -> str:
    name = match.group("name")
    if name.lower() in _QUERY_SECRET_NAMES or secret_name(name):
        return f"{match.group('keep')}{REDACTED}"
    return match.group(0)


def redact_text(text: str) -> str:
    """A command line with the values of secret-named options/variables, the credential parts
    of URLs and token-shaped pieces replaced by ``<redacted>``."""
    if "://" in text:
        text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
        text = _WEBHOOK.sub(lambda m: f"{m.group('keep')}{REDACTED}", text)
        if "?" in text:
            text = _QUERY_SECRET.sub(_query, text)
    if _SECRET_HINT.search(text):  # a cheap test first: _NAMED_VALUE runs on each word
        text = _named_values(text)
    if "-----BEGIN" in text:
        text = _PEM.sub(REDACTED, text)
    return _PIECE.sub(lambda m: REDACTED if secret_value(m.group(0)) else m.group(0), text)


_SECRET_HINT = re.compile(r"(?i)token|key|secret|pass|pw|auth|cred|dsn|cookie|webhook|conn|_pat\b")
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
                  re.DOTALL)  # fmt: skip


def _named_values(text: str) -> str:
    """``text`` with the value of each secret-named option or variable withheld. Linear: a
    secret name's value is measured once and never scanned again for names."""
    pieces: list[str] = []
    done = skip = 0
    for match in _NAMED_VALUE.finditer(text):
        start, name = match.end(), match.group("name")
        if start < skip or not secret_name(name):
            continue
        skip = _value_end(text, start)
        value = text[start:skip]
        if not value.startswith(("-", REDACTED)) and not _plain(value, _password_name(name)):
            pieces += (text[done:start], REDACTED)
            done = skip
    return "".join([*pieces, text[done:]]) if pieces else text


def _value_end(text: str, start: int) -> int:
    """Where the value starting at ``start`` ends: its closing quote (the end of the text
    when there is none), else the end of the word."""
    quote = text[start]
    if quote in "\"'":
        end = text.find(quote, start + 1)
        return len(text) if end < 0 else end + 1
    match = _UNQUOTED.match(text, start)
    return match.end() if match else start


def redact_fact(fact: Fact) -> Fact:
    """Secret-named env/tag values and token-shaped text never leave the sources: every
    fact of every format passes here (sources/__init__.read_document)."""
    value = fact.value
    prefix = next((p for p in ("/env/", "/tags/") if fact.pointer.startswith(p)), None)
    if prefix is not None and isinstance(value, str):
        name = fact.pointer[len(prefix) :]  # a name holding "/" is one name, not its tail
        last = name.rsplit("/", 1)[-1]
        safe: Any = redact_value(name if secret_name(name) else last, value)
    else:
        safe = _scrub(value)
    return fact if safe == value else Fact(fact.pointer, safe, fact.location)


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value
