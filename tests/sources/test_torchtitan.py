"""torchtitan TOML: the positioned TOML reader, exact facts for the old and new section layouts,
recognition (a pyproject.toml is not a training config), typos, invalid TOML, discovery."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from trainlint.catalog import resolve_model
from trainlint.discover import discover
from trainlint.errors import SourceError
from trainlint.lint import load_jobs
from trainlint.sources import read_document, torchtitan
from trainlint.sources.base import Document, Input, Skipped
from trainlint.sources.structured.toml import load_toml

FIXTURES = Path(__file__).parent / "fixtures" / "torchtitan"


def read(name: str) -> Document:
    path = FIXTURES / name
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document) and not doc.errors
    return doc


def rows(doc: Document) -> list[tuple[str, Any, int, int]]:
    return [(f.pointer, f.value, f.location.line, f.location.column) for f in doc.facts]


OPTIMIZER = [
    ("/training/optimizer/name", "AdamW"), ("/training/optimizer/family", "adamw"),
    ("/training/optimizer/eight_bit", False), ("/training/optimizer/experimental", False),
]  # fmt: skip


def test_published_llama3_8b_layout() -> None:
    doc = read("llama3_8b.toml")
    assert doc.format == "torchtitan"
    assert rows(doc) == [
        ("/name", "Llama 3 8B training", 6, 1),
        ("/training/micro_batch_size", 1, 32, 1),
        ("/model/seq_len", 8192, 33, 1),
        ("/training/max_steps", 1000, 35, 1),
        ("/training/compile", False, 36, 1),
        ("/training/parallelism/strategy", "fsdp", 41, 1),  # shard degree -1: the rest
        ("/training/parallelism/tensor", 2, 42, 1),
        ("/training/parallelism/pipeline", 1, 43, 1),
        ("/training/parallelism/context", 1, 44, 1),
        ("/checkpoint/strategy", "steps", 47, 1),
        ("/checkpoint/async", False, 52, 1),
        ("/checkpoint/save_optimizer", True, 50, 1),
        ("/logging/every_steps", 10, 14, 1),
        ("/training/activation_checkpointing", True, 55, 1),
        ("/logging/profiler/enabled", True, 9, 1),
        ("/logging/profiler/scheduled", True, 9, 1),
        *[(pointer, value, 24, 1) for pointer, value in OPTIMIZER],
        ("/model/name", "Llama-3.1-8B", 19, 1),  # llama3 + flavor 8B
        ("/checkpoint/every_steps", 500, 49, 1),
        ("/logging/reporters", ["tensorboard"], 15, 1),
    ]
    assert doc.unknown_keys == []


def test_newer_layout_local_batch_compile_section_and_float8() -> None:
    doc = read("llama3_8b_new.toml")
    assert rows(doc) == [
        ("/name", "Llama 3 8B training", 3, 1),
        ("/training/micro_batch_size", 3, 17, 1),
        ("/training/global_batch_size", 96, 18, 1),
        ("/model/seq_len", 8192, 19, 1),
        ("/training/max_steps", 1000, 21, 1),
        ("/training/precision", "bf16", 23, 1),
        ("/training/precision", "fp8", 14, 1),  # converters = ["float8"] wins
        ("/features/fp8", "precision", 14, 1),
        ("/training/compile", True, 42, 1),
        ("/training/parallelism/strategy", "fsdp", 28, 1),
        ("/training/parallelism/tensor", 1, 29, 1),
        ("/training/parallelism/pipeline", 1, 30, 1),
        ("/training/parallelism/context", 1, 31, 1),
        ("/checkpoint/strategy", "steps", 46, 1),
        ("/checkpoint/keep_last", 5, 48, 1),
        ("/checkpoint/async", True, 49, 1),
        ("/logging/every_steps", 2, 6, 1),
        ("/training/activation_checkpointing", False, 34, 1),
        *[(pointer, value, 37, 1) for pointer, value in OPTIMIZER],
        ("/model/name", "Llama-3.1-8B", 11, 1),
        ("/checkpoint/every_steps", 250, 47, 1),
        ("/logging/reporters", [], 7, 1),
    ]


def test_interval_in_seconds_and_typos() -> None:
    text = (
        "[job]\ndescription = 'x'\n[training]\nsteps = 10\nlocal_batchsize = 2\n"
        "[checkpoint]\ninterval_type = 'seconds'\ninterval = 600\n[metrics]\nlog_freq = 1\n"
    )
    doc = torchtitan.parse(Input("t.toml", text))
    values = {f.pointer: f.value for f in doc.facts}
    assert values["/checkpoint/every_seconds"] == 600
    assert "/checkpoint/every_steps" not in values
    assert [(u.key, u.suggestion, u.line, u.column) for u in doc.unknown_keys] == [
        ("local_batchsize", "local_batch_size", 5, 1)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[job]\ndump_folder = 'o'\n[training]\nsteps = 1\n[model]\nname = 'llama3'\n", 0.95),
        ("[project]\nname = 'x'\n[tool.ruff]\nline-length = 100\n", 0.0),
        ("[job]\n[training]\n", 0.0),  # two sections only
    ],
)
def test_recognition(text: str, expected: float) -> None:
    assert torchtitan.recognise(Input("c.toml", text)) == expected


def test_recognition_needs_the_toml_suffix_and_sniffs_before_parsing() -> None:
    assert torchtitan.recognise(Input("c.yaml", "job: {}\ntraining: {}\n")) == 0.0
    assert torchtitan.recognise(Input("pyproject.toml", "[project\nname = 1\n")) == 0.0


def test_invalid_torchtitan_toml_is_a_located_parse_error() -> None:
    doc = read_document(Input("bad.toml", "[job]\ndescription = 'x'\n[training]\nsteps = \n"))
    assert isinstance(doc, Document) and doc.format == "unknown"
    [error] = doc.errors
    assert (error.line, error.message.startswith("invalid TOML")) == (4, True)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[model]\nname = 'llama3'\n\n[training\nsteps = 1000\n\n[optimizer]\nname = 'x'\n", 4),
        ("[job]\ndescription = 'x'\n[model]\nname = 'llama3'\n[training\nsteps = 1000\n", 5),
    ],
)
def test_an_unclosed_header_is_a_parse_error_on_its_line(text: str, line: int) -> None:
    """``[training`` unclosed used to hide the file: the sniff counted only closed headers."""
    doc = read_document(Input("train_configs/llama3_8b.toml", text))
    assert isinstance(doc, Document) and doc.format == "unknown"
    [error] = doc.errors
    assert error.message.startswith("invalid TOML") and error.line == line


def test_an_invalid_toml_that_is_no_training_config_is_skipped() -> None:
    """Like any other tool's broken file: not TL901 unless a job references it."""
    doc = read_document(Input("settings.toml", "title = 'not a training config'\nowner = \n"))
    assert isinstance(doc, Skipped) and doc.error is not None and doc.error.line == 2


@pytest.mark.parametrize("name", ["pyproject.toml", "Cargo.toml", "ruff.toml"])
def test_other_tools_toml_is_never_read_even_when_invalid(name: str, tmp_path: Path) -> None:
    assert isinstance(read_document(Input(name, "[tool.ruff\nline-length = 3\n")), Skipped)
    (tmp_path / name).write_text("[tool.ruff\n")
    assert discover([tmp_path]) == []


def test_valid_non_training_toml_is_not_claimed() -> None:
    assert isinstance(read_document(Input("config.toml", "[server]\nport = 8080\n")), Skipped)


def test_toml_files_are_discovery_candidates(tmp_path: Path) -> None:
    (tmp_path / "llama3_8b.toml").write_text("[job]\n")
    assert [p.name for p in discover([tmp_path])] == ["llama3_8b.toml"]


def test_spans_of_headers_dotted_quoted_inline_and_arrays_of_tables() -> None:
    tree = load_toml(
        "[job]\na.'b c' = 1\n[[x.y]]\nq = [1, {r = 2}]\n[[x.y]]\n\"q\" = 3\n[x.y.z]\nw = 4\n"
    )
    assert tree.data == {"job": {"a": {"b c": 1}},
                         "x": {"y": [{"q": [1, {"r": 2}]}, {"q": 3, "z": {"w": 4}}]}}  # fmt: skip
    assert tree.span(("job",)) == (1, 2)
    assert tree.span(("job", "a", "b c")) == (2, 3)
    assert tree.span(("x", "y", 0, "q", 1, "r")) == (4, 10)
    assert tree.span(("x", "y", 1)) == (5, 3)
    assert tree.span(("x", "y", 1, "q")) == (6, 1)
    assert tree.span(("x", "y", 1, "z", "w")) == (8, 1)


NAMES = st.text("abcxyz_-", min_size=1, max_size=6) | st.text(min_size=1, max_size=5)
SCALARS = st.one_of(
    st.booleans(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=12),
    st.floats(allow_nan=False, allow_infinity=False),
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=12,
)


def _walk(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += _walk(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _walk(child, (*path, index))
    return found


@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(NAMES, VALUES, max_size=5))
def test_toml_tree_round_trip_locates_every_path(data: dict[str, Any]) -> None:
    text = tomlkit.dumps(data)
    tree = load_toml(text)
    assert tree.data == data
    lines = text.count("\n") + 1
    for path in _walk(data):
        assert path in tree.spans, path
        line, column = tree.spans[path]
        assert 1 <= line <= lines and column >= 1


@settings(max_examples=examples(150))
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_source_error(text: str) -> None:
    try:
        load_toml(text)
        file = Input("x.toml", "[job]\n[training]\n[model]\n" + text)
        torchtitan.recognise(file)
        torchtitan.parse(file)
    except SourceError:
        pass


@pytest.mark.parametrize(
    ("model", "flavor", "params"),
    [
        ("llama3", "405B", 405_853_388_800),  # the Llama 3.1 405B card's 405B
        ("llama3", "8B_flex", 8_030_261_248),
        ("llama3", "1B", 1_498_482_688),  # untied, unlike Llama 3.2 1B on the Hub
        ("llama3", "debugmodel", 6_163_712),
        ("llama3", "debugmodel_varlen_attn", 6_163_712),
        ("llama2", "7B", 6_738_415_616),
        ("qwen3", "30B-A3B", None),  # MoE: the catalog's own count, checked below
        ("qwen3", "debugmodel_non_fused_qkv", 31_987_968),
        ("deepseek_v3", "16B", 15_706_484_224),  # DeepSeek-V2-Lite's dimensions
        ("deepseek_v3", "671B", 671_026_419_200),
    ],
)
def test_every_flavor_torchtitan_defines_resolves(
    model: str, flavor: str, params: int | None
) -> None:
    """``[model] name``/``flavor`` as torchtitan's registries spell them reach a catalog model."""
    text = f'[job]\n[model]\nname = "{model}"\nflavor = "{flavor}"\n[training]\nsteps = 10\n'
    (fact,) = [
        f for f in torchtitan.parse(Input("t.toml", text)).facts if f.pointer == "/model/name"
    ]
    entry = resolve_model(str(fact.value))
    assert entry is not None
    assert params is None or entry.params == params


def test_every_flavor_table_entry_is_a_catalog_model() -> None:
    assert all(resolve_model(name) is not None for name in torchtitan.FLAVORS.values())


def test_a_flavor_the_catalog_lacks_keeps_name_and_flavor() -> None:
    assert torchtitan.flavor_model("llama4", "17bx16e") == "llama4-17bx16e"


# torchtitan's own train_configs (fixtures/torchtitan/MANIFEST.tsv).
@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("llama3_405b.toml", "Llama-3.1-405B"),
        ("llama3_debug_model.toml", "torchtitan-llama3-debugmodel"),
        ("deepseek_v3_16b.toml", "DeepSeek-V2-Lite"),
    ],
)
def test_published_configs_name_a_catalog_model(
    name: str, model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's parameter count comes from the catalog, so memory and cost are estimated."""
    (tmp_path / name).write_text((FIXTURES / name).read_text())
    monkeypatch.chdir(tmp_path)  # a path under a test_* folder reads as an evaluation file
    (job,) = load_jobs([Path(".")])
    entry = resolve_model(model)
    assert job.model.name == model and entry is not None
    assert (job.estimates.params, job.estimates.sources["params"]) == (entry.params, "catalog")
