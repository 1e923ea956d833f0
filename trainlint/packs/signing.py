"""OPA bundle signing: ``.signatures.json`` holding one JWT over every file's hash.

Format (OPA management-bundles docs, "Signing"; ``v1/bundle/{sign,verify,hash}.go``)::

    .signatures.json = {"signatures": ["<JWT>"]}       exactly one JWT
    JWT payload      = {"files": [{"name", "hash", "algorithm"}], "keyid"?, "scope"?}
    JWT header       = {"alg", "kid"?}                  ``kid`` and ``keyid`` carry --key-id

File hashes are hex digests (``SHA-256`` when signing). Structured files (``data.json``,
``data.yaml``, ``.manifest``, ``*signatures.json``) are hashed over OPA's normal form, so the
signature is independent of whitespace and key order: objects as ``{`` + sorted
``"key":value`` pairs joined by ``,`` + ``}``, arrays ``[a,b]``, numbers as written, strings as
Go's ``encoding/json`` writes them with HTML escaping off. Every other file is hashed as bytes.
Python package files (``__init__.py``, ``py.typed``: ``is_python_file``) are neither signed
nor checked, so a pip-installable pack verifies once installed. Verification
(``verify_bundle``) refuses a bad JWT signature, a key id or scope that does not
match (OPA compares the scope exactly: none means none), a file missing from the signature, a
file whose hash differs, and a signed file missing from the bundle.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from trainlint.errors import PolicyError
from trainlint.packs.bundle import (
    MAX_JSON_DEPTH,
    SIGNATURES,
    check_depth,
    load_json,
    read_bundle,
    read_directory,
)
from trainlint.writing import replace_file

Algorithm = Literal["RS256", "ES256", "HS256"]
ALGORITHMS: tuple[Algorithm, ...] = ("RS256", "ES256", "HS256")
HASH_ALGORITHM = "SHA-256"
_HASHES = {
    "MD5": "md5",
    "SHA-1": "sha1",
    "SHA-224": "sha224",
    "SHA-256": "sha256",
    "SHA-384": "sha384",
    "SHA-512": "sha512",
    "SHA-512-224": "sha512_224",
    "SHA-512-256": "sha512_256",
}
_STRUCTURED = ("data.json", "data.yaml", ".manifest")


def sign(
    directory: Path,
    key: str | bytes,
    algorithm: str,
    key_id: str | None = None,
    scope: str | None = None,
) -> Path:
    """Write ``directory/.signatures.json`` over every file of the bundle directory."""
    alg = _algorithm(algorithm)
    files = read_directory(directory)
    files.pop(SIGNATURES, None)
    listed = [
        {"name": name, "hash": file_hash(name, content), "algorithm": HASH_ALGORITHM}
        for name, content in sorted(files.items())
        if not is_python_file(name)
    ]
    payload: dict[str, Any] = {"files": listed}
    if key_id:
        payload["keyid"] = key_id  # OPA writes the deprecated claim too
    if scope:
        payload["scope"] = scope
    headers = {"kid": key_id} if key_id else None
    try:
        token = jwt.encode(payload, _signing_key(key, alg), algorithm=alg, headers=headers)
    except (jwt.PyJWTError, ValueError, TypeError) as exc:
        raise PolicyError(f"cannot sign with this {alg} key: {exc}") from None
    target = directory / SIGNATURES
    replace_file(target, json.dumps({"signatures": [token]}, indent=1) + "\n")
    return target


def verify_bundle(
    path: Path,
    key: str | bytes,
    algorithm: str | None = None,
    key_id: str | None = None,
    scope: str | None = None,
) -> None:
    """Check a bundle's signature and every file's hash; PolicyError saying what is wrong."""
    files = read_bundle(path)
    token = _token(files.pop(SIGNATURES, None), path)
    alg = _algorithm(algorithm) if algorithm else infer_algorithm(key)
    payload = _decode(token, key, alg, path)
    _check_claims(token, payload, key_id, scope, path)
    problems = differences(files, _listed(payload, path))
    if problems:
        raise PolicyError(f"{path}: {problems[0]}")


def differences(files: dict[str, bytes], listed: dict[str, dict[str, str]]) -> list[str]:
    """How the bundle's ``files`` (signatures left out) differ from what the signature lists:
    one sentence per file added, changed or removed since signing. Python package files
    are neither signed nor checked (``is_python_file``)."""
    remaining = {name: entry for name, entry in listed.items() if not is_python_file(name)}
    found = []
    for name, content in sorted(files.items()):
        if is_python_file(name):
            continue
        entry = remaining.pop(name, None)
        if entry is None:
            found.append(f"{name} is not in the bundle signature (added after signing?)")
        elif file_hash(name, content, entry["algorithm"]) != entry["hash"].lower():
            found.append(f"{name} does not match its signed hash (changed after signing?)")
    if remaining:
        found.append(f"signed file(s) missing from the bundle: {', '.join(sorted(remaining))}")
    return found


PYTHON_SUFFIXES = (".py", ".pyc", ".pyi")


def is_python_file(name: str) -> bool:
    """A file that makes a bundle folder a pip-installable Python package (``__init__.py``,
    ``py.typed``), not part of the policy: trainlint never reads it from a pack, and an
    entry point's Python has already run when its bundle is verified, so a signature could
    not vouch for it. Signing leaves these out and verification skips them, so a pack
    signed as a bundle still verifies once packaged and installed (pip's hashes cover the
    Python)."""
    base = name.rsplit("/", 1)[-1]
    return base.endswith(PYTHON_SUFFIXES) or base == "py.typed"


def is_signed(path: Path) -> bool:
    return SIGNATURES in read_bundle(path)


@dataclass(frozen=True)
class SignatureState:
    """What ``pack inspect`` and ``pack build`` know of a bundle's signature without the key
    (the files against the hashes it lists), and with it (``verified``)."""

    signed: bool
    problems: tuple[str, ...] = ()
    verified: bool = False

    @property
    def matches(self) -> bool:
        return self.signed and not self.problems

    def describe(self) -> str:
        if not self.signed:
            return "no"
        if self.problems:
            return f"yes, but the signature does not match: {'; '.join(self.problems)}"
        if self.verified:
            return "yes, verified with the key"
        return "yes, files match the signature (pass --key to verify who signed it)"


def signature_state(path: Path, key: bytes | None = None) -> SignatureState:
    """The bundle's signature checked against its files; with ``key`` the JWT too (a bad key
    or claim is a problem, not an error: inspect reports it)."""
    files = read_bundle(path)
    raw = files.pop(SIGNATURES, None)
    if raw is None:
        return SignatureState(signed=False)
    if key is not None:
        try:
            verify_bundle(path, key)
        except PolicyError as exc:
            return SignatureState(True, (str(exc).removeprefix(f"{path}: "),))
        return SignatureState(True, verified=True)
    return SignatureState(True, tuple(differences(files, _unverified_listing(raw, path))))


def _unverified_listing(raw: bytes, path: Path) -> dict[str, dict[str, str]]:
    """The files the signature lists, read without checking who signed it."""
    token = _token(raw, path)
    try:
        payload = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise PolicyError(f"{path}: {SIGNATURES}: malformed JWT: {exc}") from None
    return _listed(payload, path)


def refresh_for_build(directory: Path, key: bytes | None, algorithm: str | None) -> bool:
    """Before ``pack build``: a signature that no longer matches the files is signed again
    with ``key`` (keeping its key id and scope; the algorithm defaults to the old one), or
    refused, so no build ships a bundle whose signature fails. True when it re-signed."""
    state = signature_state(directory)
    if state.matches or not state.signed:
        return False
    if key is None:
        raise PolicyError(
            f"{directory}: {SIGNATURES} does not match the files ({'; '.join(state.problems)}); "
            "sign again (`trainlint pack sign`) or build with --key to re-sign"
        )
    token = _token((directory / SIGNATURES).read_bytes(), directory)
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    alg = algorithm or header.get("alg") or infer_algorithm(key)
    sign(directory, key, alg, header.get("kid") or claims.get("keyid"), claims.get("scope"))
    return True


def file_hash(name: str, content: bytes, algorithm: str = HASH_ALGORITHM) -> str:
    """The hex digest OPA computes for a bundle file (normal form for structured files)."""
    if algorithm not in _HASHES:
        raise PolicyError(f"{name}: unsupported hashing algorithm {algorithm!r}")
    digest = hashlib.new(_HASHES[algorithm])
    digest.update(normal_form(content, name) if _structured(name) else content)
    return digest.hexdigest()


def _structured(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base in _STRUCTURED or base.endswith("signatures.json")


def normal_form(content: bytes, name: str = "") -> bytes:
    """OPA's hashing walk of a JSON document, as bytes (nesting bounded before it is parsed)."""
    try:
        text = content.decode("utf-8-sig")
        check_depth(text, name, MAX_JSON_DEPTH)
        value = json.loads(
            text,
            parse_int=_Number,
            parse_float=_Number,
            parse_constant=_no_constant,
        )
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
        raise PolicyError(f"{name}: cannot hash as JSON: {exc}") from None
    parts: list[str] = []
    _walk(value, parts)
    return "".join(parts).encode("utf-8")


class _Number(str):
    """A JSON number kept as written (Go's json.Number under UseNumber)."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _walk(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        out.append("{")
        for index, key in enumerate(sorted(value)):
            out.append("," if index else "")
            out.extend((_go_string(key), ":"))
            _walk(value[key], out)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for index, item in enumerate(value):
            out.append("," if index else "")
            _walk(item, out)
        out.append("]")
    elif isinstance(value, _Number):
        out.append(str(value))
    elif isinstance(value, str):
        out.append(_go_string(value))
    else:
        out.append({True: "true", False: "false", None: "null"}[value])


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b",
            "\f": "\\f", "\u2028": "\\u2028", "\u2029": "\\u2029"}  # fmt: skip


def _go_string(text: str) -> str:
    """A string as Go's json.Encoder writes it with SetEscapeHTML(false)."""
    out = ['"']
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20:
            out.append(f"\\u{ord(char):04x}")
        elif 0xD800 <= ord(char) <= 0xDFFF:  # a lone surrogate decodes to U+FFFD in Go
            out.append("\ufffd")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _algorithm(name: str) -> Algorithm:
    if name not in ALGORITHMS:
        raise PolicyError(f"unsupported signing algorithm {name!r} (use {', '.join(ALGORITHMS)})")
    return name


def infer_algorithm(key: str | bytes) -> Algorithm:
    """RS256 for an RSA PEM key, ES256 for an EC one, HS256 for anything else (a secret)."""
    public = _public_key(key)
    if public is None:
        return "HS256"
    if isinstance(public, rsa.RSAPublicKey):
        return "RS256"
    if isinstance(public, ec.EllipticCurvePublicKey):
        return "ES256"
    raise PolicyError("the key is neither RSA nor EC: pass --algorithm")


def _public_key(key: str | bytes) -> Any:
    """The public key of a PEM key (public or private), None when ``key`` is no PEM."""
    raw = key.encode() if isinstance(key, str) else key
    if b"-----BEGIN" not in raw:
        return None
    try:
        if b"PRIVATE KEY" in raw:
            return serialization.load_pem_private_key(raw, password=None).public_key()
        return serialization.load_pem_public_key(raw)
    except (ValueError, TypeError) as exc:
        raise PolicyError(f"cannot read the PEM key: {exc}") from None


def _signing_key(key: str | bytes, alg: Algorithm) -> Any:
    raw = key.encode() if isinstance(key, str) else key
    if alg == "HS256":
        return raw
    try:
        return serialization.load_pem_private_key(raw, password=None)
    except (ValueError, TypeError) as exc:
        raise PolicyError(f"{alg} needs a PEM private key: {exc}") from None


def _token(raw: bytes | None, path: Path) -> str:
    if raw is None:
        raise PolicyError(f"{path}: bundle is not signed (no {SIGNATURES})")
    try:
        document = load_json(raw, f"{path}: {SIGNATURES}")
        tokens = document["signatures"]
    except (TypeError, KeyError):
        raise PolicyError(f'{path}: {SIGNATURES} is not {{"signatures": [JWT]}}') from None
    if not isinstance(tokens, list) or len(tokens) != 1 or not isinstance(tokens[0], str):
        raise PolicyError(f"{path}: {SIGNATURES} must hold exactly one JWT (as OPA requires)")
    return tokens[0]


def _decode(token: str, key: str | bytes, alg: Algorithm, path: Path) -> dict[str, Any]:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise PolicyError(f"{path}: {SIGNATURES}: malformed JWT: {exc}") from None
    except RecursionError:  # a header nesting thousands of levels
        raise PolicyError(f"{path}: {SIGNATURES}: malformed JWT: nested too deeply") from None
    if header.get("alg") != alg:
        raise PolicyError(f"{path}: signed with {header.get('alg')}, expected {alg}")
    verify_key = key.encode() if isinstance(key, str) and alg == "HS256" else key
    if alg != "HS256":
        verify_key = _public_key(key)
        if verify_key is None:
            raise PolicyError(f"{alg} needs a PEM public key to verify with")
    try:
        payload = jwt.decode(token, verify_key, algorithms=[alg], options={"verify_aud": False})
    except jwt.InvalidSignatureError:
        raise PolicyError(f"{path}: signature does not verify with this key") from None
    except jwt.PyJWTError as exc:
        raise PolicyError(f"{path}: signature refused: {exc}") from None
    except RecursionError:
        raise PolicyError(f"{path}: signature refused: its payload nests too deeply") from None
    return payload


def _check_claims(
    token: str, payload: dict[str, Any], key_id: str | None, scope: str | None, path: Path
) -> None:
    if key_id:
        named = jwt.get_unverified_header(token).get("kid") or payload.get("keyid")
        if named and named != key_id:
            raise PolicyError(f"{path}: signed with key id {named!r}, expected {key_id!r}")
    if (payload.get("scope") or "") != (scope or ""):
        raise PolicyError(f"{path}: signature scope {payload.get('scope')!r} is not {scope!r}")


def _listed(payload: dict[str, Any], path: Path) -> dict[str, dict[str, str]]:
    entries = payload.get("files")
    if not isinstance(entries, list):
        raise PolicyError(f"{path}: the signature lists no files")
    listed: dict[str, dict[str, str]] = {}
    for entry in entries:
        fields = ("name", "hash", "algorithm")
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in fields):
            raise PolicyError(f"{path}: malformed file entry in the signature: {entry!r}")
        listed[entry["name"].lstrip("/")] = entry
    return listed
