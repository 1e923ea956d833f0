"""OPA bundle signing: sign a directory, build it, verify either; tampering is refused."""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.packs.keys import pem_pair
from tests.packs.test_bundle import write_pack
from trainlint.errors import PolicyError
from trainlint.packs.bundle import build
from trainlint.packs.signing import file_hash, normal_form, sign, verify_bundle


@pytest.fixture(scope="module")
def rsa_keys() -> tuple[bytes, bytes]:
    return pem_pair(rsa.generate_private_key(public_exponent=65537, key_size=2048))


@pytest.fixture(scope="module")
def ec_keys() -> tuple[bytes, bytes]:
    return pem_pair(ec.generate_private_key(ec.SECP256R1()))


def _keys(
    algorithm: str, rsa_keys: tuple[bytes, bytes], ec_keys: tuple[bytes, bytes]
) -> tuple[bytes, bytes]:
    secret = b"a shared secret of at least thirty-two bytes!"
    return {"RS256": rsa_keys, "ES256": ec_keys, "HS256": (secret, secret)}[algorithm]


@pytest.mark.parametrize("algorithm", ["RS256", "ES256", "HS256"])
def test_signed_directory_and_built_bundle_verify(
    tmp_path: Path, algorithm: str, rsa_keys: tuple[bytes, bytes], ec_keys: tuple[bytes, bytes]
) -> None:
    private, public = _keys(algorithm, rsa_keys, ec_keys)
    root = write_pack(tmp_path / "p")
    sign(root, private, algorithm, key_id="release")
    verify_bundle(root, public, algorithm)
    verify_bundle(root, public)  # the algorithm follows from the key
    archive = tmp_path / "p.tar.gz"
    build(root, archive)
    verify_bundle(archive, public, algorithm, key_id="release")


def test_signature_payload_is_opas(tmp_path: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    root = write_pack(tmp_path / "p")
    sign(root, rsa_keys[0], "RS256", key_id="k1", scope="write")
    document = json.loads((root / ".signatures.json").read_text())
    assert list(document) == ["signatures"] and len(document["signatures"]) == 1
    token = document["signatures"][0]
    assert jwt.get_unverified_header(token)["kid"] == "k1"
    payload = jwt.decode(token, rsa_keys[1], algorithms=["RS256"])
    assert payload["keyid"] == "k1" and payload["scope"] == "write"
    names = [entry["name"] for entry in payload["files"]]
    assert names == [
        ".manifest",
        "sample_rule.rego",
        "sample_rule_test.rego",
        "trainlint/params/sample_rule/data.json",
    ]
    rego = next(e for e in payload["files"] if e["name"] == "sample_rule.rego")
    raw = (root / "sample_rule.rego").read_bytes()
    assert rego == {
        "name": "sample_rule.rego",
        "hash": hashlib.sha256(raw).hexdigest(),
        "algorithm": "SHA-256",
    }


def test_json_files_are_hashed_in_opas_normal_form() -> None:
    document = b'\xef\xbb\xbf{ "b": [1, 2.50, 1e3, "x<y&z"],\n  "a": {"d": true, "c": null} }'
    assert normal_form(document) == b'{"a":{"c":null,"d":true},"b":[1,2.50,1e3,"x<y&z"]}'
    escapes = json.dumps({"s": 'tab\t nl\n quote" back\\ \x01 \u2028 é'}).encode()
    assert (
        normal_form(escapes) == '{"s":"tab\\t nl\\n quote\\" back\\\\ \\u0001 \\u2028 é"}'.encode()
    )
    expected = hashlib.sha256(b'{"a":{"c":null,"d":true},"b":[1,2.50,1e3,"x<y&z"]}').hexdigest()
    assert file_hash("x/data.json", document) == expected
    assert file_hash(".manifest", document) == expected
    assert file_hash("notes.json", document) == hashlib.sha256(document).hexdigest()


def test_reformatted_json_still_verifies(tmp_path: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    root = write_pack(tmp_path / "p")
    sign(root, rsa_keys[0], "RS256")
    data = root / "trainlint" / "params" / "sample_rule" / "data.json"
    data.write_text('{\n    "limit":   3\n}\n')
    manifest = json.loads((root / ".manifest").read_text())
    (root / ".manifest").write_text(json.dumps(dict(reversed(manifest.items())), indent=4))
    verify_bundle(root, rsa_keys[1])


@pytest.fixture()
def signed(tmp_path: Path, rsa_keys: tuple[bytes, bytes]) -> Path:
    root = write_pack(tmp_path / "p")
    sign(root, rsa_keys[0], "RS256")
    return root


def test_rule_edited_after_signing_is_refused(signed: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    rule = signed / "sample_rule.rego"
    rule.write_text(rule.read_text().replace("limit", "limit * 100"))
    with pytest.raises(
        PolicyError, match=re.escape("sample_rule.rego does not match its signed hash")
    ):
        verify_bundle(signed, rsa_keys[1])


def test_data_changed_after_signing_is_refused(signed: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    data = signed / "trainlint" / "params" / "sample_rule" / "data.json"
    data.write_text('{"limit": 3000}')
    with pytest.raises(PolicyError, match=re.escape("sample_rule/data.json does not match")):
        verify_bundle(signed, rsa_keys[1])


def test_file_added_after_signing_is_refused(signed: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    (signed / "backdoor.rego").write_text("package trainlint.rules.backdoor\n")
    with pytest.raises(
        PolicyError, match=re.escape("backdoor.rego is not in the bundle signature")
    ):
        verify_bundle(signed, rsa_keys[1])


def test_python_package_files_are_neither_signed_nor_checked(
    signed: Path, rsa_keys: tuple[bytes, bytes]
) -> None:
    """Packaging a signed bundle for pip (``__init__.py``, ``py.typed``) keeps it verified;
    a policy file added beside them is still refused."""
    (signed / "__init__.py").write_text("from importlib.resources import files\n")
    (signed / "py.typed").write_text("")
    (signed / "trainlint" / "__init__.py").write_text("")
    verify_bundle(signed, rsa_keys[1])
    sign(signed, rsa_keys[0], "RS256")
    token = json.loads((signed / ".signatures.json").read_text())["signatures"][0]
    names = [f["name"] for f in jwt.decode(token, options={"verify_signature": False})["files"]]
    assert not [name for name in names if name.endswith((".py", "py.typed"))]
    (signed / "extra.rego").write_text("package trainlint.rules.extra\n")
    with pytest.raises(PolicyError, match=re.escape("extra.rego is not in the bundle signature")):
        verify_bundle(signed, rsa_keys[1])


def test_file_removed_after_signing_is_refused(signed: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    (signed / "sample_rule_test.rego").unlink()
    with pytest.raises(
        PolicyError, match=re.escape("missing from the bundle: sample_rule_test.rego")
    ):
        verify_bundle(signed, rsa_keys[1])


def test_wrong_key_is_refused(signed: Path, ec_keys: tuple[bytes, bytes]) -> None:
    other = pem_pair(rsa.generate_private_key(public_exponent=65537, key_size=2048))[1]
    with pytest.raises(PolicyError, match="signature does not verify with this key"):
        verify_bundle(signed, other)
    with pytest.raises(PolicyError, match="signed with RS256, expected ES256"):
        verify_bundle(signed, ec_keys[1])
    with pytest.raises(PolicyError, match="signed with RS256, expected HS256"):
        verify_bundle(signed, b"secret", "HS256")


def test_tampered_tarball_is_refused(
    signed: Path, tmp_path: Path, rsa_keys: tuple[bytes, bytes]
) -> None:
    archive = tmp_path / "p.tar.gz"
    build(signed, archive)
    tampered = tmp_path / "tampered.tar.gz"
    with tarfile.open(archive) as source, tarfile.open(tampered, "w:gz") as target:
        for info in source.getmembers():
            member = source.extractfile(info)
            assert member is not None, info.name  # the pack archive holds files only
            content = member.read()
            if info.name == "/sample_rule.rego":
                content = content.replace(b"limit", b"limit * 100")
                info.size = len(content)
            target.addfile(info, io.BytesIO(content))
    verify_bundle(archive, rsa_keys[1])
    with pytest.raises(
        PolicyError, match=re.escape("sample_rule.rego does not match its signed hash")
    ):
        verify_bundle(tampered, rsa_keys[1])


def test_key_id_and_scope_must_match(tmp_path: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    root = write_pack(tmp_path / "p")
    sign(root, rsa_keys[0], "RS256", key_id="release", scope="write")
    verify_bundle(root, rsa_keys[1], key_id="release", scope="write")
    with pytest.raises(PolicyError, match="signed with key id 'release', expected 'other'"):
        verify_bundle(root, rsa_keys[1], key_id="other", scope="write")
    with pytest.raises(PolicyError, match="scope 'write' is not None"):
        verify_bundle(root, rsa_keys[1])  # OPA compares the scope exactly


def test_unsigned_and_malformed_signatures(tmp_path: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    root = write_pack(tmp_path / "p")
    with pytest.raises(PolicyError, match=r"not signed \(no \.signatures\.json\)"):
        verify_bundle(root, rsa_keys[1])
    sign(root, rsa_keys[0], "RS256")
    token = json.loads((root / ".signatures.json").read_text())["signatures"][0]
    (root / ".signatures.json").write_text(json.dumps({"signatures": [token, token]}))
    with pytest.raises(PolicyError, match="exactly one JWT"):
        verify_bundle(root, rsa_keys[1])
    (root / ".signatures.json").write_text('{"signatures": ["not.a.jwt"]}')
    with pytest.raises(PolicyError, match="malformed JWT"):
        verify_bundle(root, rsa_keys[1])


def test_bad_algorithm_and_key_are_clear(tmp_path: Path, rsa_keys: tuple[bytes, bytes]) -> None:
    root = write_pack(tmp_path / "p")
    with pytest.raises(PolicyError, match="unsupported signing algorithm 'none'"):
        sign(root, rsa_keys[0], "none")
    with pytest.raises(PolicyError, match="RS256 needs a PEM private key"):
        sign(root, b"just a secret", "RS256")
