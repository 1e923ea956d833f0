"""YAML/JSON readers: exact key positions, clear errors at the right line, bounded input."""

from __future__ import annotations

import json

import pytest
import tree_sitter
import tree_sitter_json
import tree_sitter_toml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from trainlint.errors import SourceError
from trainlint.sources.structured import MAX_DEPTH, Columns, Tagged, load_json, load_yaml
from trainlint.sources.structured.toml import load_toml


def test_yaml_keys_and_items_have_their_positions() -> None:
    tree = load_yaml("a: 1\nb:\n  c: [1, 2]\n  d:\n    - e: x\n")[0]
    assert tree.data == {"a": 1, "b": {"c": [1, 2], "d": [{"e": "x"}]}}
    assert tree.spans[("a",)] == (1, 1)
    assert tree.spans[("b", "c")] == (3, 3)
    assert tree.spans[("b", "c", 1)] == (3, 10)
    assert tree.spans[("b", "d", 0, "e")] == (5, 7)


def test_yaml_is_loaded_safely() -> None:
    tree = load_yaml("a: !!python/object/apply:os.system ['echo pwned']\n")[0]
    assert tree.data == {"a": Tagged("!!python/object/apply:os.system", ["echo pwned"])}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("script: !reference [.setup, script]\n", Tagged("!reference", [".setup", "script"])),
        ("Name: !Sub '${AWS::StackName}-x'\n", Tagged("!Sub", "${AWS::StackName}-x")),
        (
            "pw: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\n",
            Tagged("!vault", "$ANSIBLE_VAULT;1.1;AES256\n6162\n"),
        ),
        (
            "model: !new:torch.nn.Linear\n  in_features: !ref <dim>\n",
            Tagged("!new:torch.nn.Linear", {"in_features": Tagged("!ref", "<dim>")}),
        ),
        (
            "emoji: !!python/name:material.extensions.emoji.twemoji\n",
            Tagged("!!python/name:material.extensions.emoji.twemoji", ""),
        ),
        ("s: !!set {a: null}\n", Tagged("!!set", {"a": None})),
    ],
)
def test_custom_tags_are_kept_opaque_never_constructed(text: str, expected: Tagged) -> None:
    """Valid YAML of other tools (GitLab CI, CloudFormation, Ansible, HyperPyYAML, mkdocs)."""
    tree = load_yaml(text)[0]
    assert list(tree.data.values()) == [expected]


def test_a_tagged_mapping_keeps_the_positions_of_its_keys() -> None:
    tree = load_yaml("top:\n  m: !new:x.Y\n    depth: 3\n")[0]
    assert tree.spans[("top", "m", "depth")] == (3, 5)


def test_yaml_multi_document_and_merge_keys() -> None:
    trees = load_yaml("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2\n---\nz: 3\n")
    assert trees[0].data["child"] == {"x": 1, "y": 2}
    assert trees[1].data == {"z": 3}


def test_yaml_error_reports_its_line() -> None:
    with pytest.raises(SourceError) as error:
        load_yaml("ok: 1\nlist: [1, 2\nnext: 3\n")
    assert error.value.line == 3
    assert "invalid YAML" in error.value.message


def test_yaml_alias_bomb_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    with pytest.raises(SourceError, match="too many nodes"):
        load_yaml("\n".join(lines) + "\n")


def test_deep_nesting_is_bounded() -> None:
    with pytest.raises(SourceError, match="nesting"):
        load_yaml("x: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n")
    with pytest.raises(SourceError, match="nesting"):
        load_json("[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5))


def test_json_positions_count_characters_not_bytes() -> None:
    tree = load_json('{"é": 1,\n  "b": {"c": [10, {"d": 2}]}}')
    assert tree.spans[("é",)] == (1, 2)
    assert tree.spans[("b", "c", 1, "d")] == (2, 20)


@pytest.mark.parametrize(
    ("text", "line"),
    [('{\n  "a": 1,\n  "b": ', 3), ('{"a": GB_SIZE}', 1), ('{\n "a": 1\n "b": 2\n}', 3)],
)
def test_json_error_reports_its_line(text: str, line: int) -> None:
    with pytest.raises(SourceError) as error:
        load_json(text)
    assert error.value.line == line


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values, st.integers(min_value=0, max_value=4))
@settings(max_examples=examples(150), deadline=None)
def test_json_round_trips_with_a_position_for_every_key(value: object, indent: int) -> None:
    text = json.dumps(value, indent=indent or None, ensure_ascii=False)
    tree = load_json(text)
    assert tree.data == value
    lines = text.split("\n")
    for path, _ in tree.items():
        line, column = tree.span(path)
        assert 1 <= line <= len(lines)
        assert 1 <= column <= len(lines[line - 1]) + 1


@given(st.text(max_size=300))
@settings(max_examples=examples(300), deadline=None)
def test_arbitrary_text_never_raises_anything_but_source_error(text: str) -> None:
    for load in (load_yaml, load_json):
        try:
            load(text)
        except SourceError as error:
            assert error.line >= 1 and error.column >= 1


def _naive_point(source: bytes, start: int) -> tuple[int, int]:
    """Line and column of a byte offset, from the text itself: decode what precedes it."""
    before = source[:start]
    line_start = before.rfind(b"\n") + 1
    return before.count(b"\n") + 1, len(before[line_start:].decode("utf-8")) + 1


def _nodes(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [node, *(n for child in node.children for n in _nodes(child))]


_GRAMMARS = {
    "json": tree_sitter.Language(tree_sitter_json.language()),
    "toml": tree_sitter.Language(tree_sitter_toml.language()),
}
# Lines of 1- to 4-byte characters, long enough that columns past the first few matter.
words = st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=12), max_size=30)


@given(words, st.sampled_from(["json", "toml"]), st.integers(min_value=0, max_value=2))
@settings(max_examples=examples(200), deadline=None)
def test_columns_are_code_points_as_decoding_the_line_counts_them(
    strings: list[str], grammar: str, indent: int
) -> None:
    array = json.dumps(strings, ensure_ascii=False, indent=indent or None)
    text = array if grammar == "json" else f"# é\nkey = {array.replace(chr(10), ' ')}\n"
    columns = Columns(text)
    root = tree_sitter.Parser(_GRAMMARS[grammar]).parse(columns.source).root_node
    for node in _nodes(root):
        assert columns.point(node) == _naive_point(columns.source, node.start_byte)


def test_a_two_megabyte_single_line_json_array_is_read_with_its_positions() -> None:
    images = [
        {"file_name": f"ADE_train_{i:08d}.jpg", "width": 683, "id": i, "height": 512}
        for i in range(28_000)
    ]
    images[-1]["file_name"] = "ADE_trâin_ü.jpg"  # one multi-byte line: columns are not bytes
    text = json.dumps({"images": images, "ñ": [1]}, ensure_ascii=False)
    assert len(text.encode()) > 2_000_000 and "\n" not in text
    tree = load_json(text)
    assert tree.data["images"][-1]["id"] == 27_999
    for path in [("images", 27_999, "height"), ("ñ", 0)]:
        key = json.dumps(path[-1]) if isinstance(path[-1], str) else "1"
        offset = text.rindex(key)
        assert tree.spans[path] == (1, offset + 1)


def test_toml_positions_on_a_long_multibyte_line() -> None:
    text = "[t]\nxs = [" + ", ".join(f'"é{i}"' for i in range(3000)) + "]\n"
    tree = load_toml(text)
    assert tree.spans[("t", "xs", 2999)] == (2, text.index('"é2999"') - len("[t]\n") + 1)
