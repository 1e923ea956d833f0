"""The builtins policy code may not call: none reads the environment or reaches the network.

OPA restricts builtins with a capabilities file; neither embedded engine takes one, so modules
are scanned before they are compiled, and a pack that calls one of ``DENIED`` is refused with a
PolicyError naming the file and line. What each engine does today (regorus 0.13, regopy 1.5.2):

- ``opa.runtime``: regopy returns the process environment in ``env`` (in CI, the token);
  regorus leaves ``env`` out, but the engines must agree;
- ``http.send``: a stub returning undefined in both, which a later release may implement;
- ``net.lookup_ip_addr``: DNS in OPA; unknown to regorus, undefined in regopy.

Rego has no dynamic call: a builtin is called by writing its name, as dotted segments or
bracketed strings, and the engines accept spaces, comments and escapes between them
(``opa["run\\u0074ime"]()``, ``opa[`runtime`]()``, ``opa. # note`` + newline + ``runtime()``).
So every root name of ``DENIED`` (``opa``, ``http``, ``net``) in the code outside comments and
strings is followed to its next segment, decoded; a denied segment, or one that cannot be read
as a plain name or string (``opa[k]``), refuses the module. The scan errs towards refusing:
``x.opa.runtime`` counts too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from trainlint.errors import PolicyError

DENIED = ("opa.runtime", "http.send", "net.lookup_ip_addr")
WHY = "policy code sees no environment and makes no network call"

_ROOTS = {root: {name.split(".", 1)[1] for name in DENIED if name.startswith(root + ".")}
          for root in {name.split(".", 1)[0] for name in DENIED}}  # fmt: skip
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_RAW = r"`[^`]*`"
# Left to right: a comment, a string, a raw string, or a name. An unterminated string matches
# nothing, so its text is scanned as code.
_TOKEN = re.compile(rf"#[^\n]*|{_STRING}|{_RAW}|(?P<name>[A-Za-z_]\w*)")
_GAP = r"(?:\s|#[^\n]*(?![^\n]))*"  # spaces and whole comments (no backtracking into one)
_SEGMENT = re.compile(
    rf"{_GAP}(?:\.{_GAP}(?P<dot>[A-Za-z_]\w*)|\[{_GAP}(?P<key>{_STRING}|{_RAW}){_GAP}\]"
    rf"|(?P<other>[.\[]))"
)


def refuse_denied_calls(modules: dict[str, str], trusted: Iterable[str] = ()) -> None:
    """PolicyError when a module (file -> source) names a denied builtin; ``trusted`` sources
    (trainlint's own) are not scanned."""
    skip = frozenset(trusted)
    for file, source in sorted(modules.items()):
        if source in skip:
            continue
        found = denied_call(source)
        if found is not None:
            name, line = found
            raise PolicyError(f"{file}:{line}: calls {name}, which trainlint refuses: {WHY}")


def denied_call(source: str) -> tuple[str, int] | None:
    """The first denied builtin a Rego source may call, with its 1-based line; None if none."""
    for match in _TOKEN.finditer(source):
        root = match["name"]
        if root not in _ROOTS:
            continue
        segment = _next_segment(source, match.end())
        if segment is None:  # the name alone: a variable, not a call of a builtin
            continue
        if segment == "" or segment in _ROOTS[root]:
            shown = f"{root}.{segment}" if segment else f"{root}[...]"
            return shown, source.count("\n", 0, match.start()) + 1
    return None


def _next_segment(source: str, at: int) -> str | None:
    """The reference segment after position ``at``: its name, "" when it cannot be read
    (a variable key, a bad escape), None when no segment follows."""
    segment = _SEGMENT.match(source, at)
    if segment is None:
        return None
    if segment["dot"] is not None:
        return segment["dot"]
    key = segment["key"]
    if key is None:
        return ""
    if key.startswith("`"):
        return key[1:-1]
    try:
        value = json.loads(key)
    except ValueError:
        return ""
    return value if isinstance(value, str) else ""
