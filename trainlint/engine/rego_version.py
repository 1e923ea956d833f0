"""Rego v0 and v1 modules in one engine, as OPA reads a bundle.

OPA 1.0 parses Rego v1 (``deny contains msg if {...}``); a bundle's ``.manifest`` may declare
``rego_version: 0`` or per-file ``file_rego_versions``, and conftest reads ``--rego-version v0``
policies (``deny[msg] {...}``). ``Pack.rego_versions`` holds what the manifest (or
``--rego-v0``) declares for each module; ``Pack.rego_fallback`` (conftest mode) reads a module
of no declared version as v0 when it does not parse as v1.

regorus parses v0 itself (``Engine.set_rego_v0``, read when a module is added), so each module
is added under its own version: engine support, no rewriting of the source. regopy (rego-cpp)
has no v0 parser, and worse, it reads a v0 partial set rule ``deny[msg] {...}`` as a partial
object without a word, so a v0 module is refused on regopy rather than misread.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from trainlint.errors import PolicyError
from trainlint.packs import Pack

V0_HINT = (
    'a Rego v0 module? declare it in the pack\'s .manifest ("rego_version": 0) or pass --rego-v0'
)
_IMPORTS_V1 = re.compile(r"^[ \t]*import[ \t]+rego\.v1\b", re.MULTILINE)
_V0_RULE = re.compile(
    r"^[ \t]*(?:default[ \t]+)?[A-Za-z_]\w*(?:\[[^\]\n]*\])?(?:[ \t]*:?=[^{\n]*)?[ \t]*\{",
    re.MULTILINE,
)
"""A rule head followed straight by its body, with no ``if``: v0's ``deny[msg] {`` or
``allow {`` (v1 requires ``if``; a v1 object literal never starts a line with a name)."""


def version_of(pack: Pack, file: str) -> int | None:
    """The module's declared Rego version; None when conftest mode is to find it out."""
    declared = pack.rego_versions.get(file)
    if declared is not None:
        return declared
    return None if pack.rego_fallback else 1


def imports_v1(source: str) -> bool:
    """``import rego.v1``: the module parses the same as v0 or v1."""
    return _IMPORTS_V1.search(source) is not None


def looks_v0(source: str) -> bool:
    """Whether the module has a rule body without ``if`` (for engines without a v0 parser)."""
    return not imports_v1(source) and _V0_RULE.search(_without_comments(source)) is not None


def add_module(engine: Any, add: Callable[[str, str], Any], name: str, source: str,
               version: int | None) -> None:  # fmt: skip
    """``add(name, source)`` on a regorus engine under the module's Rego version; ``None``
    tries v1, then v0, and a module that parses as neither reports both errors."""
    if version is not None:
        with _parser(engine, version):
            _with_hint(add, name, source, version)
        return
    try:
        add(name, source)
    except PolicyError as as_v1:
        with _parser(engine, 0):
            try:
                add(name, source)
            except PolicyError as as_v0:
                raise PolicyError(f"{as_v0} (read as Rego v0; as Rego v1: {as_v1})") from None


def refuse_v0(pack: Pack, engine_name: str) -> None:
    """PolicyError for a module an engine without a v0 parser would misread."""
    for file, source in sorted(pack.modules.items()):
        version = version_of(pack, file)
        v0 = version == 0 and not imports_v1(source)
        if v0 or (version is None and looks_v0(source)):
            raise PolicyError(
                f"{engine_name}: {pack.name}/{file} is Rego v0, which {engine_name} cannot parse "
                "(it reads `deny[msg] {...}` as an object); use --engine regorus"
            )


@contextmanager
def _parser(engine: Any, version: int) -> Iterator[None]:
    """regorus reads v0 while the flag is set: set it for one module, then back to v1."""
    engine.set_rego_v0(version == 0)
    try:
        yield
    finally:
        engine.set_rego_v0(False)


def _with_hint(add: Callable[[str, str], Any], name: str, source: str, version: int) -> None:
    """A v1 parse error on a module that looks v0 says how to declare it."""
    try:
        add(name, source)
    except PolicyError as exc:
        if version == 1 and looks_v0(source):
            raise PolicyError(f"{exc} ({V0_HINT})") from None
        raise


def _without_comments(source: str) -> str:
    return re.sub(r"#[^\n]*", "", source)
