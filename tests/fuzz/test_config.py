"""The repository config loader fuzzed with hypothesis: only ConfigError escapes, and what it
loads stays within the node budget checked files get.

``find_config`` reads ``.trainlint.yaml``/``.yml``/``.toml`` and
``pyproject.toml`` from a repository, which in CI is an untrusted pull request. Inputs:
arbitrary text, configs built from the real keys with values of every YAML type (aliases
included), TOML tables, and ``extend`` chains (loops, missing and malformed bases). The
budget (examples x deadline) keeps the module well under 30 s.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from tests.fuzz.test_readers import FUZZ
from trainlint.config import RepoConfig, find_config
from trainlint.errors import ConfigError
from trainlint.sources.structured import MAX_NODES

KEYS = [
    "extend", "formats", "select", "extend-select", "extend_select", "ignore", "per-file-ignores",
    "fail-on", "waivers", "baseline", "packs", "params", "rule", "path", "reason", "approved-by",
    "expires", "estimate", "checkpoint-too-frequent", "min_interval_s", "mfu", "url", "sha256",
    "name", "TL201", "**/*.sh", "hf-trainer",
]  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
    st.sampled_from(["TL2", "error", "2026-01-01", "base.yaml", "../base.yaml", "/etc/passwd",
                     "~/.aws/credentials", "hf-trainer", "https://x.invalid/p.tar.gz"]),
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=24,
)
CONFIGS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6)
YAML_TEXT = st.lists(
    st.sampled_from([*"abcxyz019 :-,.[]{}\"'&*!|>#=\n\t", "extend: ", "&a ", "*a", "params: "]),
    max_size=80,
).map("".join)


@st.composite
def aliased(draw: st.DrawFn) -> str:
    """YAML whose anchors are reused ``width`` times per level: a small multiplication (a
    real bomb is the config reader's own test); the loaded config must count what it holds."""
    levels, width = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    lines = ["a0: &a0 [x]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append(f"params: {{estimate: {{mfu: *a{levels}}}}}")
    return "\n".join(lines) + "\n"


def _nodes(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(_nodes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return 1 + sum(_nodes(v) for v in value)
    return 1


def _load(files: dict[str, str]) -> None:
    """Write ``files`` into a fresh folder and find its config: a RepoConfig within the node
    budget, or a ConfigError that says why."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, text in files.items():
            (root / name).write_text(text)
        try:
            config = find_config(root)
        except ConfigError as exc:
            assert str(exc)
            return
        assert isinstance(config, RepoConfig)
        assert _nodes(config.model_dump()) <= MAX_NODES


@pytest.mark.parametrize("name", [".trainlint.yaml", ".trainlint.toml", "pyproject.toml"])
@FUZZ
@given(text=st.one_of(st.text(max_size=300), YAML_TEXT))
def test_any_text_as_a_config_is_a_config_or_a_config_error(name: str, text: str) -> None:
    _load({name: text})


def _toml(data: dict[str, Any], table: str) -> str:
    """A TOML rendering of scalar and list values (what the generator draws for TOML)."""
    lines = [f"[{table}]"] if table else []
    for key, value in data.items():
        if isinstance(value, dict | type(None)):
            continue
        lines.append(f'"{key}" = {_toml_value(value)}')
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, int | float):
        return repr(value).replace("inf", "inf")
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@settings(FUZZ, max_examples=examples(80))
@given(data=CONFIGS, base=st.one_of(st.none(), CONFIGS), form=st.sampled_from(["yaml", "toml"]))
def test_built_configs_and_extend_chains(
    data: dict[str, Any], base: dict[str, Any] | None, form: str
) -> None:
    files: dict[str, str] = {}
    if base is not None:
        data = {**data, "extend": "base.yaml"}
        files["base.yaml"] = yaml.safe_dump(base)
    if form == "yaml":
        files[".trainlint.yaml"] = yaml.safe_dump(data)
    else:
        files[".trainlint.toml"] = _toml(data, "")
    _load(files)


@settings(FUZZ, max_examples=examples(30))
@given(text=aliased())
def test_aliases_load_within_the_node_budget(text: str) -> None:
    _load({".trainlint.yaml": text})


@settings(FUZZ, max_examples=examples(30))
@given(data=CONFIGS)
def test_pyproject_tables(data: dict[str, Any]) -> None:
    _load({"pyproject.toml": _toml(data, "tool.trainlint")})


@pytest.mark.parametrize(
    "files",
    [
        {".trainlint.yaml": "extend: .trainlint.yaml\n"},  # extends itself
        {".trainlint.yaml": "extend: b.yaml\n", "b.yaml": "extend: .trainlint.yaml\n"},
        {".trainlint.yaml": "extend: b.yaml\nparams: [1]\n", "b.yaml": "params: {x: 1}\n"},
        {".trainlint.yaml": "extend: b.yaml\nparams: {x: 1}\n", "b.yaml": "params: [1]\n"},
        {".trainlint.yaml": "extend: b.yaml\nparams: {x: [1]}\n", "b.yaml": "params: {x: 1}\n"},
        {".trainlint.yaml": "extend: [b.yaml]\n"},
        {".trainlint.yaml": "extend: b.yaml\n", "b.yaml": "- 1\n"},
    ],
)
def test_malformed_extend_chains_are_config_errors(files: dict[str, str]) -> None:
    _load(files)
