"""Pack ``data.json`` and ``.manifest`` reading fuzzed with hypothesis: only PolicyError
escapes, and the data a pack loads never nests past ``bundle.MAX_JSON_DEPTH``.

A repository's config can list packs, so their files are untrusted. Inputs: arbitrary bytes
and text as either file, manifests and data built from the real keys with values of every
JSON type, data.json files in nested folders (``trainlint/params/data.json``), deep nesting
around the limit, and each pack layered over the builtin one (the merge is where a later
pack meets locked parameters). The budget keeps the module well under 30 s.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from tests.fuzz.test_readers import FUZZ
from trainlint.errors import PolicyError
from trainlint.packs import Pack, load_builtin_pack, load_pack, pack_from_files
from trainlint.packs.bundle import MAX_JSON_DEPTH
from trainlint.packs.layering import layer

KEYS = [
    "revision", "roots", "metadata", "name", "version", "description", "min_trainlint_version",
    "rego_version", "file_rego_versions", "trainlint", "params", "locks", "rules",
    "checkpoint_too_frequent", "min_interval_s", "estimate", "mfu", "prices", "H100", "lib",
    "extra", "severity", "off", "",
]  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10),
    st.sampled_from(["", "/", "trainlint", "extra", "lib", "0.0.1", "99.0", "error", "off"]),
)  # fmt: skip
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=30,
)
FOLDERS = st.sampled_from(["", "trainlint", "trainlint/params", "trainlint/params/x", "extra"])
MODULE = b"package extra\n\nallowed := true\n"
BUILTIN = load_builtin_pack()


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _check(files: dict[str, bytes]) -> None:
    """Load ``files`` as a pack and layer it over the builtin one: a Pack whose data stays
    within the depth limit, or a PolicyError that says why."""
    try:
        pack = pack_from_files(files, "fuzz", "fuzz")
    except PolicyError as exc:
        assert str(exc)
        return
    assert isinstance(pack, Pack) and _depth(pack.data) <= MAX_JSON_DEPTH
    try:
        layered, _, _ = layer([BUILTIN, pack])
    except PolicyError as exc:
        assert str(exc)
        return
    assert _depth(layered.data) <= MAX_JSON_DEPTH + 1


@st.composite
def nested(draw: st.DrawFn) -> bytes:
    """JSON nesting around the limit, with the brackets sometimes inside strings."""
    levels = draw(st.sampled_from([MAX_JSON_DEPTH - 3, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 5000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    inner = draw(st.sampled_from(["1", '"[[[{"', "[]"]))
    return (opener * levels + inner + closer * levels).encode()


@settings(FUZZ, max_examples=examples(80))
@given(manifest=st.one_of(st.binary(max_size=200), JSON_VALUES.map(json.dumps).map(str.encode),
                          nested()),
       data=st.one_of(st.binary(max_size=200), JSON_VALUES.map(json.dumps).map(str.encode),
                      nested()))  # fmt: skip
def test_any_manifest_and_data(manifest: bytes, data: bytes) -> None:
    _check({".manifest": manifest, "data.json": data, "extra/extra.rego": MODULE})


@st.composite
def manifests(draw: st.DrawFn) -> dict[str, Any]:
    """Manifests of the real keys: roots, metadata and versions of every JSON type."""
    fields = draw(st.dictionaries(st.sampled_from(KEYS[:9]), JSON_VALUES, max_size=5))
    if draw(st.booleans()):
        fields["roots"] = draw(st.lists(st.sampled_from(["", "extra", "trainlint", "a/b"]),
                                        max_size=3))  # fmt: skip
    return fields


@settings(FUZZ, max_examples=examples(80))
@given(manifest=st.one_of(st.none(), manifests()),
       data=st.dictionaries(FOLDERS, JSON_VALUES, max_size=3))  # fmt: skip
def test_built_manifests_and_data_in_nested_folders(
    manifest: dict[str, Any] | None, data: dict[str, Any]
) -> None:
    files = {"extra/extra.rego": MODULE}
    if manifest is not None:
        files[".manifest"] = json.dumps(manifest).encode()
    for folder, value in data.items():
        files[f"{folder}/data.json" if folder else "data.json"] = json.dumps(value).encode()
    _check(files)


@settings(FUZZ, max_examples=examples(20))
@given(manifest=manifests(), data=JSON_VALUES)
def test_a_pack_directory_on_disk(manifest: dict[str, Any], data: Any) -> None:
    """The same through ``load_pack``, which reads the folder itself."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "pack"
        (root / "extra").mkdir(parents=True)
        (root / ".manifest").write_text(json.dumps(manifest))
        (root / "data.json").write_text(json.dumps(data))
        (root / "extra" / "extra.rego").write_bytes(MODULE)
        try:
            pack = load_pack(root)
        except PolicyError as exc:
            assert str(exc)
            return
        assert _depth(pack.data) <= MAX_JSON_DEPTH
