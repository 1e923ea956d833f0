"""``trainlint pack init|build|inspect|sign|verify`` end to end through click."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.conftest import EXAMPLES
from tests.packs.keys import rsa_pair
from trainlint import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli.main, list(args), catch_exceptions=False)


@pytest.fixture()
def keys(tmp_path: Path) -> tuple[Path, Path]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_file, public_file = tmp_path / "private.pem", tmp_path / "public.pem"
    private_file.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    public_file.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private_file, public_file


def test_init_build_inspect(tmp_path: Path) -> None:
    pack = tmp_path / "acme"
    result = run("pack", "init", "acme", "--dir", str(pack))
    assert result.exit_code == 0 and "Wrote pack 'acme'" in result.output
    archive = tmp_path / "acme.tar.gz"
    result = run("pack", "build", str(pack), "-o", str(archive))
    assert result.exit_code == 0 and "(6 files), sha256 " in result.output
    result = run("pack", "inspect", str(archive))
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "pack      acme 0.1.0 (revision 0.1.0)"
    assert "signed    no" in lines
    assert "  ACME001    max-gpus-per-job               warning" in lines
    assert "  max_gpus_per_job.max_gpus = 64" in lines
    assert "locks" not in lines
    desc = json.loads(run("pack", "inspect", str(pack), "--format", "json").output)
    assert desc["roots"] == [
        "trainlint/rules/max_gpus_per_job",
        "trainlint/params/max_gpus_per_job",
    ]
    assert desc["locks"] is None and desc["rules"][0]["id"] == "ACME001"


def test_inspect_shows_locks(tmp_path: Path) -> None:
    pack = tmp_path / "acme"
    run("pack", "init", "acme", "--dir", str(pack))
    manifest = json.loads((pack / ".manifest").read_text())
    manifest["roots"].append("trainlint/locks")
    (pack / ".manifest").write_text(json.dumps(manifest))
    (pack / "trainlint" / "locks").mkdir(parents=True)
    locks = {"params": {"checkpoint_too_frequent": ["max_overhead"]}}
    (pack / "trainlint" / "locks" / "data.json").write_text(json.dumps(locks))
    lines = run("pack", "inspect", str(pack)).output.splitlines()
    assert lines[lines.index("locks") + 1] == '  params.checkpoint_too_frequent = ["max_overhead"]'


def test_init_defaults_to_a_folder_named_after_the_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run("pack", "init", "acme").exit_code == 0
    assert (tmp_path / "acme" / ".manifest").is_file()
    result = run("pack", "init", "acme")
    assert result.exit_code == 2 and "not an empty directory" in result.output


def test_sign_build_verify_and_refuse_tampering(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    private, public = keys
    pack = tmp_path / "acme"
    run("pack", "init", "acme", "--dir", str(pack))
    result = run("pack", "sign", str(pack), "--key", str(private), "--algorithm", "RS256",
                 "--key-id", "release")  # fmt: skip
    assert result.exit_code == 0 and ".signatures.json" in result.output
    archive = tmp_path / "acme.tar.gz"
    run("pack", "build", str(pack), "-o", str(archive))
    assert "signed    yes, files match the signature" in run("pack", "inspect", str(archive)).output
    result = run("pack", "verify", str(archive), "--key", str(public))
    assert result.exit_code == 0 and "signature verified" in result.output
    rule = pack / "max_gpus_per_job.rego"
    rule.write_text(rule.read_text().replace("> params.max_gpus", ">= 100000"))
    result = run("pack", "verify", str(pack), "--key", str(public), "--algorithm", "RS256")
    assert result.exit_code == 2
    assert "max_gpus_per_job.rego does not match its signed hash" in result.output


def test_verify_refuses_an_unsigned_pack(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    pack = tmp_path / "acme"
    run("pack", "init", "acme", "--dir", str(pack))
    result = run("pack", "verify", str(pack), "--key", str(keys[1]))
    assert result.exit_code == 2 and "is not signed" in result.output


def test_hs256_secret_file(tmp_path: Path) -> None:
    pack, secret = tmp_path / "acme", tmp_path / "secret"
    secret.write_text("a shared secret of at least thirty-two bytes!\n")
    run("pack", "init", "acme", "--dir", str(pack))
    assert (
        run("pack", "sign", str(pack), "--key", str(secret), "--algorithm", "HS256").exit_code == 0
    )
    assert run("pack", "verify", str(pack), "--key", str(secret)).exit_code == 0


def test_cli_spells_the_signing_algorithms_of_the_signing_module() -> None:
    from trainlint.cli import SIGNING_ALGORITHMS
    from trainlint.packs.signing import ALGORITHMS

    assert tuple(ALGORITHMS) == SIGNING_ALGORITHMS


def _signed_then_edited(tmp_path: Path, private: Path) -> Path:
    """A pack signed (key id and scope set), then one rule edited: the release mistake."""
    pack = tmp_path / "acme"
    run("pack", "init", "acme", "--dir", str(pack))
    signed = run("pack", "sign", str(pack), "--key", str(private), "--algorithm", "RS256",
                 "--key-id", "release", "--scope", "write")  # fmt: skip
    assert signed.exit_code == 0, signed.output
    rule = pack / "max_gpus_per_job.rego"
    rule.write_text(rule.read_text().replace("> params.max_gpus", ">= 100000"))
    return pack


def test_build_refuses_a_signature_the_files_no_longer_match(
    tmp_path: Path, keys: tuple[Path, Path]
) -> None:
    pack = _signed_then_edited(tmp_path, keys[0])
    archive = tmp_path / "acme.tar.gz"
    result = run("pack", "build", str(pack), "-o", str(archive))
    assert result.exit_code == 2
    assert ".signatures.json does not match the files" in result.output
    assert "max_gpus_per_job.rego does not match its signed hash" in result.output
    assert "--key" in result.output
    assert not archive.exists()


def test_build_with_key_re_signs_keeping_key_id_and_scope(
    tmp_path: Path, keys: tuple[Path, Path]
) -> None:
    private, public = keys
    pack = _signed_then_edited(tmp_path, private)
    archive = tmp_path / "acme.tar.gz"
    result = run("pack", "build", str(pack), "-o", str(archive), "--key", str(private))
    assert result.exit_code == 0, result.output
    assert "Re-signed" in result.output
    verified = run("pack", "verify", str(archive), "--key", str(public),
                   "--key-id", "release", "--scope", "write")  # fmt: skip
    assert verified.exit_code == 0, verified.output


def test_inspect_says_when_the_signature_does_not_match(
    tmp_path: Path, keys: tuple[Path, Path]
) -> None:
    pack = _signed_then_edited(tmp_path, keys[0])
    lines = run("pack", "inspect", str(pack)).output.splitlines()
    signed = next(line for line in lines if line.startswith("signed"))
    assert "signature does not match" in signed and "max_gpus_per_job.rego" in signed
    desc = json.loads(run("pack", "inspect", str(pack), "--format", "json").output)
    assert desc["signed"] is True and desc["signature_matches"] is False


def test_inspect_with_the_key_verifies_the_signature(
    tmp_path: Path, keys: tuple[Path, Path]
) -> None:
    private, public = keys
    pack = tmp_path / "acme"
    run("pack", "init", "acme", "--dir", str(pack))
    run("pack", "sign", str(pack), "--key", str(private), "--algorithm", "RS256")
    unchecked = run("pack", "inspect", str(pack)).output
    assert "signed    yes, files match the signature" in unchecked
    verified = run("pack", "inspect", str(pack), "--key", str(public)).output
    assert "signed    yes, verified with the key" in verified
    other = tmp_path / "other.pem"
    other.write_bytes(rsa_pair()[1])
    refused = run("pack", "inspect", str(pack), "--key", str(other)).output
    assert "signature does not match: signature does not verify with this key" in refused


def test_add_rule_writes_everything_pack_test_needs(tmp_path: Path) -> None:
    pack = tmp_path / "acme"
    run("pack", "init", "acme", "--dir", str(pack))
    added = run("pack", "add-rule", "max-nodes", "--dir", str(pack))
    assert added.exit_code == 0, added.output
    assert "Added rule ACME002 (max-nodes)" in added.output
    for rel in ("max_nodes.rego", "max_nodes_test.rego", "tests/cases/ACME002.yaml",
                "trainlint/params/max_nodes/data.json"):  # fmt: skip
        assert (pack / rel).is_file(), rel
    roots = json.loads((pack / ".manifest").read_text())["roots"]
    assert {"trainlint/rules/max_nodes", "trainlint/params/max_nodes"} <= set(roots)
    tested = run("pack", "test", str(pack))
    assert tested.exit_code == 0, tested.output
    assert "ACME002 #0" in tested.output and "0 failed" in tested.output
    again = run("pack", "add-rule", "max-hours", "--dir", str(pack))
    assert "Added rule ACME003 (max-hours)" in again.output
    desc = json.loads(run("pack", "inspect", str(pack), "--format", "json").output)
    assert [(r["id"], r["slug"]) for r in desc["rules"]] == [
        ("ACME001", "max-gpus-per-job"),
        ("ACME002", "max-nodes"),
        ("ACME003", "max-hours"),
    ]


def test_add_rule_keeps_roots_that_already_hold_the_rule(tmp_path: Path) -> None:
    """The example org pack owns all of trainlint/params: only the rule's package is added."""
    pack = tmp_path / "org-pack"
    shutil.copytree(EXAMPLES / "org-pack", pack)
    before = json.loads((pack / ".manifest").read_text())["roots"]
    assert run("pack", "add-rule", "max-nodes", "--dir", str(pack)).exit_code == 0
    after = json.loads((pack / ".manifest").read_text())["roots"]
    assert after == [*before, "trainlint/rules/max_nodes"]
    assert run("pack", "test", str(pack)).exit_code == 0


@pytest.mark.parametrize(
    ("name", "complaint"),
    [("max-gpus-per-job", "already has a rule"), ("Max_Nodes", "lower-case hyphenated slug")],
)
def test_add_rule_refuses_a_taken_or_malformed_name(
    tmp_path: Path, name: str, complaint: str
) -> None:
    pack = tmp_path / "acme"
    run("pack", "init", "acme", "--dir", str(pack))
    result = run("pack", "add-rule", name, "--dir", str(pack))
    assert result.exit_code == 2 and complaint in result.output
