"""Hydra composition: defaults lists from the repo's files, overrides, interpolation, cycles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from tests.sources.helpers import near_misses, values
from trainlint.assemble import assemble
from trainlint.sources import hydra, lightning, read_document
from trainlint.sources.base import Document, Input
from trainlint.sources.structured.located import Unknown
from trainlint.sources.structured.omegaconf import resolve, split_template

CONF = Path(__file__).parent / "fixtures" / "hydra" / "conf"


def read(relative: str) -> Document:
    path = CONF / relative
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document)
    return doc


def relative(file: str) -> str:
    return Path(file).relative_to(CONF).as_posix()


def where(doc: Document) -> dict[str, tuple[Any, str, int, int]]:
    """pointer → (value, file relative to the fixture folder, line, column)."""
    return {
        f.pointer: (f.value, relative(f.location.file), f.location.line, f.location.column)
        for f in doc.facts
    }


def test_defaults_merge_and_each_fact_points_at_the_winning_key() -> None:
    doc = read("config.yaml")
    assert (doc.format, doc.role) == ("hydra", "entrypoint")
    assert where(doc) == {
        "/training/seed": (7, "config.yaml", 9, 1),
        "/training/precision": ("bf16", "trainer/gpu.yaml", 5, 1),  # gpu.yaml over base.yaml
        "/training/max_steps": (5000, "config.yaml", 13, 3),  # ${steps}
        "/logging/every_steps": (250, "config.yaml", 15, 3),  # ${trainer.val_check_interval}
        "/eval/every_steps": (250, "trainer/base.yaml", 5, 1),
        "/eval/strategy": ("steps", "trainer/base.yaml", 5, 1),
        "/resources/gpus_per_node": (8, "trainer/gpu.yaml", 4, 1),
        "/checkpoint/every_steps": (500, "callbacks/ckpt.yaml", 3, 3),
        "/checkpoint/strategy": ("steps", "callbacks/ckpt.yaml", 3, 3),
        "/checkpoint/keep_last": (3, "callbacks/ckpt.yaml", 4, 3),
    }


def test_resolver_interpolation_stays_unknown() -> None:
    assert "/resources/nodes" not in where(read("config.yaml"))  # ${oc.env:NODES}


def test_group_files_are_references_at_their_entry_lines() -> None:
    refs = [(r.path, r.location.line, r.role) for r in read("config.yaml").references]
    # `optional local: default` does not exist and is optional: no reference.
    assert refs == [
        ("trainer/gpu.yaml", 3, "member"),
        ("callbacks/ckpt.yaml", 4, "member"),
        ("loop/a.yaml", 5, "member"),
    ]


def test_override_in_an_experiment_swaps_the_choice_and_a_missing_group_is_referenced() -> None:
    doc = read("with_experiment.yaml")
    assert where(doc) == {
        "/training/precision": ("fp32", "trainer/base.yaml", 4, 1),
        "/eval/every_steps": (250, "trainer/base.yaml", 5, 1),
        "/eval/strategy": ("steps", "trainer/base.yaml", 5, 1),
        "/resources/gpus_per_node": (2, "experiment/big.yaml", 6, 3),
    }
    assert [r.path for r in doc.references] == [
        "trainer/base.yaml", "experiment/big.yaml", "missing_group/nothing.yaml",
    ]  # fmt: skip


def test_a_cycle_in_defaults_ends() -> None:
    doc = read("loop/a.yaml")
    assert doc.facts == [] and [r.path for r in doc.references] == ["b.yaml"]
    path = CONF / "loop" / "a.yaml"
    tree = Input(str(path), path.read_text()).trees[0]
    root, group = hydra.placement(path, tree.data)
    merged = hydra.compose(root, path, tree, group, group).merged
    assert merged.data == {"loop": {"y": 2, "x": 1}}


def test_a_group_file_alone_is_read_in_its_package() -> None:
    doc = read("trainer/gpu.yaml")
    assert doc.role == "entrypoint"  # it composes base.yaml, so its view wins in its job
    assert read("trainer/base.yaml").role == "config"
    assert where(doc)["/resources/gpus_per_node"] == (8, "trainer/gpu.yaml", 4, 1)
    assert [r.path for r in doc.references] == ["base.yaml"]


def test_the_primary_config_wins_in_the_assembled_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CONF)
    jobs = assemble([Path("with_experiment.yaml")])
    job = jobs[0]
    assert job.resources.gpus_per_node == 2
    assert job.training.precision == "fp32"
    assert {s.path for s in job.sources} >= {"trainer/base.yaml", "experiment/big.yaml"}
    assert [m.path for m in job.missing_references] == ["missing_group/nothing.yaml"]


def test_a_group_file_job_keeps_its_own_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CONF)
    job = assemble([Path("trainer/gpu.yaml")])[0]
    assert (job.resources.gpus_per_node, job.training.precision) == (8, "bf16")
    assert job.provenance["/resources/gpus_per_node"].file == "trainer/gpu.yaml"


def test_flattened_group_files(tmp_path: Path) -> None:
    (tmp_path / "configs__train.yaml").write_text(
        "defaults:\n  - trainer: gpu\n  - _self_\ntrainer:\n  max_epochs: 3\n"
    )
    (tmp_path / "configs__trainer__gpu.yaml").write_text("accelerator: gpu\ndevices: 4\n")
    path = tmp_path / "configs__train.yaml"
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document) and doc.format == "hydra"
    facts = {f.pointer: (f.value, Path(f.location.file).name, f.location.line) for f in doc.facts}
    assert facts == {
        "/training/epochs": (3.0, "configs__train.yaml", 5),
        "/resources/gpus_per_node": (4, "configs__trainer__gpu.yaml", 2),
    }
    assert [r.path for r in doc.references] == ["configs__trainer__gpu.yaml"]


def test_typo_in_a_trainer_group_file(tmp_path: Path) -> None:
    (tmp_path / "trainer").mkdir()
    path = tmp_path / "trainer" / "fast.yaml"
    path.write_text("_target_: lightning.pytorch.Trainer\ndevicse: 2\nmax_epochs: 1\n")
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document) and near_misses(doc) == [("devicse", "devices", 2)]


def test_recognition() -> None:
    train = (CONF / "config.yaml").read_text()
    assert hydra.recognise(Input("config.yaml", train)) == 0.9
    assert lightning.recognise(Input("config.yaml", train)) == 0.6  # hydra wins
    assert hydra.recognise(Input("m.yaml", "_target_: a.B\nx: 1\n")) == 0.85
    assert hydra.recognise(Input("p.yaml", "out: ${hydra:runtime.output_dir}\n")) == 0.8
    nemo = "defaults:\n  - _self_\ntrainer:\n  devices: 1\nexp_manager: {}\n"
    assert hydra.recognise(Input("megatron_gpt_config.yaml", nemo)) == 0.3
    assert hydra.recognise(Input("a.yaml", "save_steps: 10\n")) == 0.0


def test_interpolation_forms() -> None:
    data = {
        "a": {"b": 2, "c": "${.b}", "d": "${a.b}x${a.c}", "e": "${..top}"},
        "top": 5,
        "whole": "${a}",
        "cyc1": "${cyc2}",
        "cyc2": "${cyc1}",
        "env": "${oc.env:HOME}",
        "math": "${eval:'${a.b} * 2'}",
        "broken": "${a.b",
        "missing": "${nope.here}",
    }
    out = resolve(data)
    assert out["a"]["c"] == 2 and out["a"]["d"] == "2x2"
    assert out["a"]["e"] == 5 and out["whole"]["d"] == "2x2"
    for key in ("cyc1", "cyc2", "env", "math", "broken", "missing"):
        assert isinstance(out[key], Unknown), key


_REFS = st.sampled_from(["a", "a.b", "b", ".a", "..b", "c.d.e", "oc.env:X", "a:b", ""])
_TEMPLATES = st.lists(
    st.one_of(st.text(max_size=4), _REFS.map(lambda r: "${" + r + "}")), max_size=4
).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]),
                       st.one_of(values(), _TEMPLATES,
                                 st.dictionaries(st.sampled_from(["b", "d", "e"]),
                                                 st.one_of(_TEMPLATES, values()), max_size=3)),
                       max_size=4))  # fmt: skip
def test_resolver_never_raises_and_ends(data: dict[str, Any]) -> None:
    resolve(data)


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=30))
def test_template_splitting_never_raises(text: str) -> None:
    pieces = split_template(text)
    assert (
        pieces is None
        or "".join(p if kind == "text" else "${" + p + "}" for kind, p in pieces) == text
    )


_ENTRIES = st.one_of(
    st.sampled_from(["_self_", "default", "gpu", "../x", "/abs", None, 3]),
    st.dictionaries(
        st.sampled_from(["trainer", "override /trainer", "optional local", "g@pkg", "/x", "a b c"]),
        st.one_of(st.sampled_from(["gpu", "default", "???", "../../etc"]), st.none(),
                  st.lists(st.sampled_from(["gpu", "default"]), max_size=2)),
        min_size=1, max_size=1),
)  # fmt: skip


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_ENTRIES, max_size=6), st.lists(_ENTRIES, max_size=4), values())
def test_random_defaults_lists_never_raise(
    tmp_path_factory: pytest.TempPathFactory, top: list[Any], gpu: list[Any], extra: Any
) -> None:
    folder = tmp_path_factory.mktemp("conf")
    (folder / "trainer").mkdir()
    (folder / "trainer" / "gpu.yaml").write_text(yaml.safe_dump({"defaults": gpu, "x": extra}))
    (folder / "trainer" / "default.yaml").write_text("defaults:\n  - gpu\ndevices: 2\n")
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump({"defaults": top, "trainer": {"devices": extra}}))
    hydra.parse(Input(str(path), path.read_text()))
