"""Bad input never breaks a run: every limit is a clear TL901 finding, never a crash or a hang.

Files: size, YAML alias expansion, nesting depth, invalid UTF-8, binary content, unreadable
files, symlink loops, FIFOs and devices (never opened), a directory named like a config.
Packs: a rule that never finishes is stopped by the watchdog with a PolicyError (tar slip, link
members and huge members are covered in tests/packs/test_bundle.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import trainlint.read
from tests.fast_loop import engines
from tests.hang import within
from trainlint.discover import discover
from trainlint.engine import available_engines, create_engine, watchdog
from trainlint.errors import PolicyError
from trainlint.lint import CheckOptions, check
from trainlint.packs import load_builtin_pack, load_pack
from trainlint.read import Workspace, read_file
from trainlint.sources.base import Document, Skipped
from trainlint.sources.structured import MAX_DEPTH

HF_CONFIG = b"learning_rate: 2.0e-5\nper_device_train_batch_size: 8\nnum_train_epochs: 3\n"


def _errors(doc: Document | Skipped) -> list[tuple[int, int, str]]:
    """A file's errors: a TL901 of ours, or the error a skipped file keeps for a job that
    would reference it (a limit hit on a file that shows no training is nobody's error)."""
    errors = doc.errors if isinstance(doc, Document) else [doc.error] if doc.error else []
    return [(e.line, e.column, e.message) for e in errors]


def test_oversized_config_names_its_size_and_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trainlint.read, "MAX_BYTES", 1024)
    path = tmp_path / "train.yaml"
    path.write_bytes(HF_CONFIG * 100)
    [(line, _, message)] = _errors(read_file(path))
    assert line == 1
    assert "(7,300 bytes)" in message and "over the 0.0 MiB (1,024 bytes) limit" in message


def test_oversized_dataset_is_not_claimed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trainlint.read, "MAX_BYTES", 1024)
    path = tmp_path / "alpaca_data.json"
    path.write_text("[" + ",".join(['{"instruction": "x", "output": "y"}'] * 100) + "]")
    assert isinstance(read_file(path), Skipped)


def test_billion_laughs_is_bounded(tmp_path: Path) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for index in range(8):
        name, previous = chr(ord("b") + index), chr(ord("a") + index)
        lines.append(f"{name}: &{name} [{','.join([f'*{previous}'] * 9)}]")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    [(_, _, message)] = _errors(within(20, lambda: read_file(path)))
    assert "too many nodes" in message


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        (
            "deep.yaml",
            "a:\n" + "".join(f"{'  ' * i}k{i}:\n" for i in range(1, 80)) + "  x: 1\n",
            66,
        ),
        ("deep.json", '{"a": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}", 1),
        ("flow.yaml", "a: " + "[" * 100_000 + "]" * 100_000 + "\n", 1),
        ("deep.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n", 1),
    ],
)
def test_nesting_depth_is_bounded(tmp_path: Path, name: str, content: str, line: int) -> None:
    path = tmp_path / name
    path.write_text(content)
    [(found, _, message)] = _errors(read_file(path))
    assert "nest" in message and found == line


def test_invalid_utf8_names_the_byte_offset_and_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_bytes(HF_CONFIG + b"run_name: caf\xe9\n")
    doc = read_file(path)
    [(line, column, message)] = _errors(doc)
    offset = len(HF_CONFIG) + len(b"run_name: caf")
    assert f"byte offset {offset}" in message and "0xe9" in message
    assert (line, column) == (4, len("run_name: caf") + 1)
    assert isinstance(doc, Document) and doc.facts  # a stray byte does not lose the config


def test_binary_file_is_not_parsed(tmp_path: Path) -> None:
    path = tmp_path / "weights.yaml"
    path.write_bytes(b"PK\x03\x04\x00\x00" + os.urandom(2000))
    [(line, _, message)] = _errors(read_file(path))
    assert line == 1 and message.startswith("binary file (NUL byte at offset 4)")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_bytes(HF_CONFIG)
    path.chmod(0)
    try:
        [(_, _, message)] = _errors(read_file(path))
    finally:
        path.chmod(0o644)
    assert message == "cannot read file: Permission denied"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_symlink_loops_neither_hang_nor_crash(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_bytes(HF_CONFIG)
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..")  # a directory loop
    found = within(10, lambda: discover([tmp_path]))
    assert found == [tmp_path / "train.yaml"]
    named = tmp_path / "a.yaml"
    assert within(10, lambda: discover([named])) == [named]
    [(line, _, message)] = _errors(Workspace(root=tmp_path).load(named))
    assert (line, message) == (1, "symlink loop; not read")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifo_is_never_opened(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_bytes(HF_CONFIG)
    fifo = tmp_path / "jobs.yaml"
    os.mkfifo(fifo)
    os.mkfifo(tmp_path / "launch")  # no suffix: the shebang sniff must not open it either
    assert within(10, lambda: discover([tmp_path])) == [tmp_path / "train.yaml"]
    assert within(10, lambda: discover([fifo])) == [fifo]
    [(_, _, message)] = _errors(within(10, lambda: read_file(fifo)))
    assert message == "not a regular file (a FIFO); not read"


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_device_is_never_opened() -> None:
    [(_, _, message)] = _errors(within(10, lambda: read_file(Path("/dev/zero"))))
    assert message == "not a regular file (a character device); not read"


def test_directory_named_like_a_config(tmp_path: Path) -> None:
    (tmp_path / "conf.yaml").mkdir()
    (tmp_path / "conf.yaml" / "train.yaml").write_bytes(HF_CONFIG)
    assert discover([tmp_path]) == [tmp_path / "conf.yaml" / "train.yaml"]
    [(_, _, message)] = _errors(read_file(tmp_path / "conf.yaml"))
    assert message == "not a regular file (a directory); not read"


def test_check_reports_every_bad_file_and_goes_on(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trainlint.read, "MAX_BYTES", 4096)
    (in_tmp / "train.yaml").write_bytes(HF_CONFIG)
    (in_tmp / "big.yaml").write_bytes(HF_CONFIG * 100)
    (in_tmp / "bin.yaml").write_bytes(b"\x00\x01\x02")
    (in_tmp / "latin.yaml").write_bytes(HF_CONFIG + b"run_name: caf\xe9\n")
    report = within(60, lambda: check([Path(".")], CheckOptions(select=["TL901"])))
    assert sorted((f.rule, f.file, f.line) for f in report.findings) == [
        ("TL901", "big.yaml", 1),  # a training config (its head says so) over the limit
        ("TL901", "latin.yaml", 4),
    ]  # bin.yaml shows no training: skipped, never an error on its own
    skipped = {f.path: f.reason for f in report.files if f.outcome == "skipped"}
    assert skipped["bin.yaml"].startswith("binary file (NUL byte at offset 0)")


SLOW_RULE = """\
# METADATA
# title: sample-rule
# description: Loops for ages when input.slow is set.
# custom:
#   id: X001
#   severity: warning
#   category: governance
#   remediation: Do the other thing.
package trainlint.rules.sample_rule

import rego.v1

findings contains {"message": "m", "pointer": ""} if {
\tinput.slow
\tn := numbers.range(1, 99999)
\tcount([1 | some i in n; some j in n; i == 0 - j]) > 0
}

findings contains {"message": "quick", "pointer": ""} if input.quick
"""


@pytest.mark.parametrize("engine", engines())
def test_a_rule_that_never_finishes_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    monkeypatch.setattr(watchdog, "EVAL_TIMEOUT_S", 1.0)
    (tmp_path / "sample_rule.rego").write_text(SLOW_RULE)
    compiled = create_engine(engine, load_pack(tmp_path))
    assert isinstance(compiled, watchdog.GuardedEngine)
    with pytest.raises(PolicyError, match=r"did not finish within 1 s"):
        within(30, lambda: compiled.evaluate({"slow": True}))
    # the next job gets a fresh worker
    assert compiled.evaluate({"quick": True}) == {
        "sample_rule": [{"message": "quick", "pointer": ""}]
    }
    compiled.close()


@pytest.mark.parametrize("engine", available_engines())
def test_builtin_rules_run_in_process(engine: str) -> None:
    assert not isinstance(create_engine(engine, load_builtin_pack()), watchdog.GuardedEngine)


def test_a_symlink_loop_named_on_the_command_line_is_a_tl901(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from trainlint.cli import main

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "a"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("a:1:1: TL901 [error] symlink loop; not read")
