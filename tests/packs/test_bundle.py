"""OPA bundles: the manifest, data.json placement, roots, safe extraction and ``build``."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from trainlint import __version__
from trainlint.errors import PolicyError
from trainlint.packs import load_builtin_pack, load_pack
from trainlint.packs.bundle import Limits, build, check_version, read_archive, root_contains

RULE = """\
# METADATA
# title: sample-rule
# description: Something worth knowing.
# custom:
#   id: X001
#   severity: warning
#   category: governance
#   remediation: Do the other thing.
package trainlint.rules.sample_rule

import rego.v1

findings contains {"message": "m", "pointer": ""} if {
	input.x > data.trainlint.params.sample_rule.limit
}
"""
TEST = """\
package trainlint.rules.sample_rule

import rego.v1

test_fires if count(findings) == 1 with input as {"x": 5}
"""
METADATA = {"name": "sample", "version": "1.2.0", "description": "A sample pack."}
MANIFEST: dict[str, object] = {
    "revision": "7",
    "roots": ["trainlint/rules/sample_rule", "trainlint/params/sample_rule"],
    "metadata": METADATA,
}


def write_pack(root: Path, manifest: dict[str, object] | None = MANIFEST) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if manifest is not None:
        (root / ".manifest").write_text(json.dumps(manifest))
    (root / "sample_rule.rego").write_text(RULE)
    (root / "sample_rule_test.rego").write_text(TEST)
    params = root / "trainlint" / "params" / "sample_rule"
    params.mkdir(parents=True)
    (params / "data.json").write_text('{"limit": 3}')
    return root


def make_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, content in members:
            info.size = len(content) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(content) if info.isreg() else None)
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def test_builtin_pack_has_a_manifest() -> None:
    pack = load_builtin_pack()
    assert pack.manifest is not None and pack.name == "builtin"
    assert pack.manifest.roots == ["trainlint"]
    assert pack.manifest.revision == __version__  # bump the manifest with the version
    assert pack.manifest.info.version == __version__
    assert pack.origin.endswith("builtin")


def test_directory_pack_reads_manifest_and_nested_data(tmp_path: Path) -> None:
    pack = load_pack(write_pack(tmp_path / "p"))
    assert pack.name == "sample" and pack.origin == str(tmp_path / "p")
    assert pack.manifest and pack.manifest.revision == "7"
    assert pack.data == {"trainlint": {"params": {"sample_rule": {"limit": 3}}}}
    assert list(pack.modules) == ["sample_rule.rego"]
    assert list(pack.tests) == ["sample_rule_test.rego"]


def test_data_files_merge_and_conflicts_name_the_file(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p", None)
    (root / "data.json").write_text('{"trainlint": {"params": {"other": {"a": 1}}}}')
    assert load_pack(root).data["trainlint"]["params"] == {
        "other": {"a": 1},
        "sample_rule": {"limit": 3},
    }
    (root / "data.json").write_text('{"trainlint": {"params": {"sample_rule": {"limit": 9}}}}')
    with pytest.raises(
        PolicyError, match=r"data\.json: data at /trainlint/params/sample_rule/limit"
    ):
        load_pack(root)


def test_nested_data_json_may_hold_any_value(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p", None)
    (root / "lists" / "names").mkdir(parents=True)
    (root / "lists" / "names" / "data.json").write_text('["a", "b"]')
    assert load_pack(root).data["lists"] == {"names": ["a", "b"]}


def test_package_outside_the_roots_is_refused(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p", {**MANIFEST, "roots": ["trainlint/params"]})
    with pytest.raises(
        PolicyError, match=r"sample_rule\.rego: package trainlint\.rules\.sample_rule"
    ):
        load_pack(root)


def test_data_outside_the_roots_is_refused(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    (root / "data.json").write_text('{"trainlint": {"locks": {"x": 1}}}')
    with pytest.raises(PolicyError, match="data at /trainlint/locks is outside the manifest roots"):
        load_pack(root)


def test_overlapping_roots_are_refused(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p", {**MANIFEST, "roots": ["trainlint", "trainlint/rules"]})
    with pytest.raises(PolicyError, match="overlap"):
        load_pack(root)


def test_root_semantics_are_segment_wise() -> None:
    assert root_contains("", "anything/at/all")
    assert root_contains("a/b", "a/b/c") and root_contains("a/b", "a/b")
    assert not root_contains("a/b", "a/bc") and not root_contains("a/b/c", "a/b")


def test_invalid_manifest_names_the_key(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p", {"revision": 3, "roots": "trainlint"})
    with pytest.raises(PolicyError, match=r"\.manifest: revision: .*roots"):
        load_pack(root)
    (root / ".manifest").write_text("{not json")
    with pytest.raises(PolicyError, match=r"\.manifest: invalid JSON"):
        load_pack(root)


def test_min_trainlint_version() -> None:
    from trainlint.packs.bundle import Manifest

    needs = Manifest(metadata={"min_trainlint_version": "1.4"})
    check_version(needs, "1.4.0", "p")
    check_version(needs, "2.0.1", "p")
    with pytest.raises(
        PolicyError, match=r"p: pack needs trainlint >= 1\.4; this is trainlint 1\.3\.9"
    ):
        check_version(needs, "1.3.9", "p")
    with pytest.raises(PolicyError, match=r"needs trainlint >= 1\.4"):
        check_version(needs, "1.3+local", "p")  # a local build is judged by its release


def test_too_new_pack_is_refused_on_load(tmp_path: Path) -> None:
    metadata = {**METADATA, "min_trainlint_version": "999.0"}
    root = write_pack(tmp_path / "p", {**MANIFEST, "metadata": metadata})
    with pytest.raises(PolicyError, match=re.escape("needs trainlint >= 999.0")):
        load_pack(root)


@pytest.mark.parametrize(
    ("name", "complaint"),
    [
        ("sub/policy.manifest", "as the bundle manifest"),
        ("x_signatures.json", "as signatures"),
        ("conf/data.yaml", "data.json only"),
    ],
)
def test_lookalike_files_are_refused(tmp_path: Path, name: str, complaint: str) -> None:
    root = write_pack(tmp_path / "p")
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text("{}")
    with pytest.raises(PolicyError, match=complaint):
        load_pack(root)


def test_symlink_in_a_pack_directory_is_refused(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    os.symlink(tmp_path / "elsewhere.rego", root / "link.rego")
    with pytest.raises(PolicyError, match=re.escape("'link.rego' is a symbolic link")):
        load_pack(root)


def test_build_is_deterministic_and_loads_like_the_directory(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"x")
    (root / ".git").mkdir()
    first, second = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    build(root, first)
    os.utime(root / "sample_rule.rego", (1_000_000, 1_000_000))
    build(root, second)
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes()[4:8] == b"\0\0\0\0"  # gzip header mtime
    with tarfile.open(first) as tar:
        infos = tar.getmembers()
    assert [i.name for i in infos] == [
        "/.manifest",
        "/sample_rule.rego",
        "/sample_rule_test.rego",
        "/trainlint/params/sample_rule/data.json",
    ]
    assert {(i.mtime, i.uid, i.gid, i.mode, i.uname, i.type) for i in infos} == {
        (0, 0, 0, 0o644, "", tarfile.REGTYPE)
    }
    from_dir, from_tar = load_pack(root), load_pack(first)
    assert from_tar.origin == str(first)
    for field in ("name", "modules", "tests", "data", "rules", "manifest"):
        assert getattr(from_tar, field) == getattr(from_dir, field), field


def test_build_skips_its_own_output_and_refuses_a_broken_pack(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    build(root, root / "out.tar.gz")
    names = build(root, root / "out.tar.gz")
    assert "out.tar.gz" not in names
    (root / "broken.rego").write_text("no package here")
    with pytest.raises(PolicyError, match="no package declaration"):
        build(root, tmp_path / "never.tar.gz")
    assert not (tmp_path / "never.tar.gz").exists()


def test_hand_made_tarball_without_leading_slashes_loads(tmp_path: Path) -> None:
    archive = make_tar(
        tmp_path / "hand.tar.gz",
        [
            (member("./sample_rule.rego"), RULE.encode()),
            (member("trainlint/params/sample_rule/data.json"), b'{"limit": 1}'),
            (member("trainlint", tarfile.DIRTYPE), b""),
        ],
    )
    pack = load_pack(archive)
    assert pack.name == "hand" and pack.manifest is None
    assert pack.data["trainlint"]["params"]["sample_rule"] == {"limit": 1}


@pytest.mark.parametrize(
    ("info", "complaint"),
    [
        (member("../evil.rego"), "climbs out of the bundle"),
        (member("a/../../evil.rego"), "climbs out of the bundle"),
        (member("//etc/passwd"), "absolute path"),
        (member("C:/evil.rego"), "absolute path"),
        (member("a\\..\\evil.rego"), "backslash"),
        (member("link.rego", tarfile.SYMTYPE, "/etc/passwd"), "is a link"),
        (member("hard.rego", tarfile.LNKTYPE, "sample_rule.rego"), "is a link"),
        (member("dev", tarfile.CHRTYPE), "device or FIFO"),
        (member("blk", tarfile.BLKTYPE), "device or FIFO"),
        (member("fifo", tarfile.FIFOTYPE), "device or FIFO"),
    ],
)
def test_unsafe_members_are_refused_by_name(
    tmp_path: Path, info: tarfile.TarInfo, complaint: str
) -> None:
    archive = make_tar(tmp_path / "bad.tar.gz", [(info, b"x")])
    with pytest.raises(PolicyError, match=re.escape(repr(info.name))) as error:
        load_pack(archive)
    assert complaint in str(error.value)


def test_size_and_count_limits(tmp_path: Path) -> None:
    members = [(member(f"f{i}.txt"), b"0123456789") for i in range(5)]
    archive = make_tar(tmp_path / "big.tar.gz", members)
    assert len(read_archive(archive)) == 5
    with pytest.raises(
        PolicyError, match=re.escape("member 'f0.txt' is 10 bytes, over the 9-byte limit")
    ):
        read_archive(archive, Limits(member_bytes=9))
    with pytest.raises(
        PolicyError, match=re.escape("member 'f2.txt' takes the bundle past 25 bytes")
    ):
        read_archive(archive, Limits(total_bytes=25))
    with pytest.raises(
        PolicyError, match=re.escape("member 'f3.txt' is past the limit of 3 files")
    ):
        read_archive(archive, Limits(members=3))


def test_gzip_bomb_is_stopped(tmp_path: Path) -> None:
    # A pax header is read whole by tarfile before any member size can be checked: 32 MiB of
    # it inflate from a few KiB, and the inflating reader stops the read past the limit.
    archive = tmp_path / "bomb.tar.gz"
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, 32 * 1024 * 1024
    with gzip.open(archive, "wb") as stream:
        stream.write(header.tobuf(tarfile.USTAR_FORMAT))
        for _ in range(32):
            stream.write(b"1" * 1024 * 1024)
    assert archive.stat().st_size < 256 * 1024
    with pytest.raises(PolicyError, match=r"bomb\.tar\.gz: inflates past"):
        read_archive(archive, Limits(total_bytes=1024))


def test_duplicate_members_and_garbage_are_refused(tmp_path: Path) -> None:
    archive = make_tar(
        tmp_path / "dup.tar.gz", [(member("a.rego"), b"x"), (member("/a.rego"), b"y")]
    )
    with pytest.raises(PolicyError, match="appears twice"):
        read_archive(archive)
    (tmp_path / "junk.tar.gz").write_bytes(b"not gzip at all")
    with pytest.raises(PolicyError, match=re.escape("not a readable .tar.gz bundle")):
        load_pack(tmp_path / "junk.tar.gz")


def test_missing_pack(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="policy pack not found"):
        load_pack(tmp_path / "nope.tar.gz")


@pytest.mark.skipif(shutil.which("opa") is None, reason="the opa binary is not installed")
def test_opa_reads_what_we_build(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    archive = tmp_path / "p.tar.gz"
    build(root, archive)
    inspected = subprocess.run(
        ["opa", "inspect", "--format", "json", str(archive)],
        check=True,
        capture_output=True,
        text=True,
    )
    assert json.loads(inspected.stdout)["manifest"]["revision"] == "7"
    subprocess.run(["opa", "build", "-b", str(archive), "-o", str(tmp_path / "re.tar.gz")],
                   check=True)  # fmt: skip


def test_origin_names_the_source_in_errors(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    url = "https://packs.example.com/sample.tar.gz"
    assert load_pack(root, origin=url).origin == url
    (root / "broken.rego").write_text("no package")
    with pytest.raises(PolicyError, match=re.escape(f"{url}/broken.rego: no package declaration")):
        load_pack(root, origin=url)
