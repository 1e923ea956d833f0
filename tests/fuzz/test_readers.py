"""Every reader fuzzed with hypothesis for a fixed budget: no exception escapes, no call hangs.

The documented contract (sources.read_document, read.read_file): bad input becomes a
Document holding a TL901 ParseError, or a Skipped saying why no format reads the file;
nothing raises.
Inputs: arbitrary text under each candidate suffix, arbitrary text forced into each format,
arbitrary bytes, real fixtures (tests/sources/fixtures) mutated byte-wise, and every value of
the Kubernetes, Hydra and SkyPilot fixtures replaced by a value of another type. The budget
(examples x deadline) keeps the module well under 30 s.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from trainlint.read import read_file
from trainlint.sources import all_sources, read_document
from trainlint.sources.base import Document, Input, Skipped

FIXTURES = sorted(
    p for p in (Path(__file__).parents[1] / "sources" / "fixtures").rglob("*") if p.is_file()
)
SUFFIXES = ["yaml", "yml", "json", "toml", "sh", "slurm", "py", ""]
FORMATS = [source.name for source in all_sources()]

FUZZ = settings(
    max_examples=examples(60),
    deadline=2000,
    derandomize=True,  # a fixed budget in CI: the same examples every run
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Text that looks like configs: keys, separators, brackets, anchors, quotes and shell syntax,
# so the parsers get past their first byte more often than with uniform characters.
CONFIG_ALPHABET = st.sampled_from(
    [*"abcdefxyz_019 :-,.[]{}\"'&*!|>#=$()\\\n\t", "\x00", "\ufeff", "é", "\u2028"]
)
config_text = st.one_of(st.text(), st.text(CONFIG_ALPHABET, max_size=400))


def _check(doc: Document | Skipped) -> None:
    assert isinstance(doc, (Document, Skipped))
    errors = doc.errors if isinstance(doc, Document) else [doc.error] if doc.error else []
    for error in errors:
        assert error.line >= 1 and error.column >= 1 and error.message
    if isinstance(doc, Skipped) and doc.workload is not None:
        assert doc.workload.location.line >= 1 and doc.workload.kind


@pytest.mark.parametrize("suffix", SUFFIXES)
@FUZZ
@given(text=config_text)
def test_read_document_any_text(suffix: str, text: str) -> None:
    name = f"fuzz.{suffix}" if suffix else "fuzz"
    _check(read_document(Input(name, text)))


@pytest.mark.parametrize("fmt", FORMATS)
@settings(FUZZ, max_examples=examples(30))
@given(text=config_text, suffix=st.sampled_from(["yaml", "json"]))
def test_each_format_forced_on_any_text(fmt: str, text: str, suffix: str) -> None:
    _check(read_document(Input(f"fuzz.{suffix}", text), forced=fmt))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["run.sh", "empty.toml", "train.py"])
def test_format_forced_on_a_file_it_cannot_read_is_a_parse_error(fmt: str, name: str) -> None:
    """The repo config's `formats:` can force any format on any file: a shell script forced to
    be a YAML format is a TL901, never an exception."""
    text = "#!/bin/bash\necho hi\n" if name.endswith(".sh") else ""
    doc = read_document(Input(name, text), forced=fmt)
    _check(doc)


def test_read_file_turns_a_reader_crash_into_tl901(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last line of defence: a bug in a reader is a TL901 naming it, not a crashed run."""
    import trainlint.read

    def crash(*args: object, **kwargs: object) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr(trainlint.read, "read_document", crash)
    path = tmp_path / "run.sh"
    path.write_text("#!/bin/bash\n")
    doc = read_file(path)
    assert isinstance(doc, Document) and "internal error" in doc.errors[0].message


def _read_bytes(name: str, data: bytes) -> Document | Skipped:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        return read_file(path)


@settings(FUZZ, max_examples=examples(100))
@given(data=st.binary(max_size=2000), suffix=st.sampled_from(SUFFIXES))
def test_read_file_any_bytes(data: bytes, suffix: str) -> None:
    _check(_read_bytes(f"fuzz.{suffix}" if suffix else "fuzz", data))


@st.composite
def mutated_fixture(draw: st.DrawFn) -> tuple[str, bytes]:
    fixture = draw(st.sampled_from(FIXTURES))
    data = bytearray(fixture.read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["delete", "insert", "flip", "repeat"]))
        if kind == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "repeat":
            data[at:at] = data[at : at + draw(st.integers(1, 64))] * draw(st.integers(2, 8))
    return fixture.name, bytes(data)


@settings(FUZZ, max_examples=examples(100))
@given(case=mutated_fixture())
def test_mutated_fixtures(case: tuple[str, bytes]) -> None:
    name, data = case
    _check(_read_bytes(name, data))


def test_fixtures_are_there() -> None:
    assert len(FIXTURES) >= 10


STRUCTURED = sorted(
    path
    for folder in ("kubernetes", "hydra", "skypilot")
    for path in (Path(__file__).parents[1] / "sources" / "fixtures" / folder).rglob("*.yaml")
)
CONFUSING = [None, ["x"], {"x": 1}, 7]


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path of a loaded document, the document itself first."""
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _places(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _places(child, (*path, index))


def _replaced(docs: list[Any], index: int, path: tuple[Any, ...], value: Any) -> list[Any]:
    docs = copy.deepcopy(docs)
    node = docs[index]
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return docs


@pytest.mark.parametrize("fixture", STRUCTURED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_value_of_a_manifest_or_config_replaced_by_another_type(fixture: Path) -> None:
    """Type confusion, exhaustively: each value of each document becomes null, a list, a
    mapping and a number in turn (``runtimeRef.name: [x]`` was a TypeError), and the file is
    read again; the header comments are kept (``# @package``)."""
    text = fixture.read_text()
    header = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))
    docs = list(yaml.safe_load_all(text))
    name = fixture.relative_to(fixture.parents[1]).as_posix()
    for index, doc in enumerate(docs):
        for path in list(_places(doc))[1:]:
            for value in CONFUSING:
                mutated = header + yaml.safe_dump_all(_replaced(docs, index, path, value))
                _check(read_document(Input(name, mutated)))
    _check(read_document(Input(name, header)))  # the header alone: an empty config
