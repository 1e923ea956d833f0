"""The skypilot format: accelerators in every spelling, nodes, spot, labels, envs and secrets,
the ``run:`` block read as bash at its real positions in the YAML file, container paths mapped
back through ``file_mounts``, recognition, typos, and robustness on random tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS
from tests.fast_loop import examples
from trainlint.errors import SourceError
from trainlint.sources import finish, skypilot
from trainlint.sources.base import Document, Input
from trainlint.sources.shell import embedded

FIXTURES = Path(__file__).parent / "fixtures" / "skypilot"


def read(text: str, name: str = "task.yaml") -> Document:
    file = Input(name, text)
    return finish(skypilot.parse(file), file)


def values(doc: Document) -> dict[str, Any]:
    return {f.pointer: f.value for f in doc.facts}


def where(doc: Document, pointer: str) -> tuple[int, int]:
    found = [(f.location.line, f.location.column) for f in doc.facts if f.pointer == pointer]
    assert found, pointer
    return found[-1]


def test_fixture_facts_and_references_are_exact() -> None:
    doc = read((FIXTURES / "task.yaml").read_text())
    rows = [
        (f.pointer, f.value, f.location.line, f.location.column)
        for f in doc.facts
        if f.pointer != "/launcher/command"
    ]
    assert rows == [
        ("/name", "sft-llama", 2, 1),
        ("/resources/nodes", 2, 11, 1),
        ("/resources/spot", True, 6, 3),
        ("/resources/placement/accelerator", "H100", 5, 3),  # as written, for the fleet's pools
        ("/resources/gpu/model", "H100-SXM", 5, 3),
        ("/resources/gpu/memory_bytes", 85899345920, 5, 3),
        ("/resources/gpus_per_node", 8, 5, 3),
        ("/resources/world_size", 16, 5, 3),
        ("/env/MODEL", "meta-llama/Llama-3.1-8B", 14, 3),
        ("/env/CONFIG_NAME", "sft", 15, 3),
        ("/env/WANDB_API_KEY", "<redacted>", 16, 3),
        ("/tags/team", "nlp", 8, 5),
        ("/tags/cost_center", "llm-research", 9, 5),
        ("/env/NCCL_DEBUG", "WARN", 33, 10),  # the run script's export, at its column
        ("/launcher/kind", "torchrun", 35, 3),
        ("/launcher/entrypoint", "train.py", 39, 5),
        ("/training/parallelism/strategy", "deepspeed", 41, 5),
        ("/training/grad_accum_steps", 4, 42, 5),
    ]  # HF_TOKEN is a secret: its name is known, never a value
    assert [(r.path, r.role, r.location.line, r.location.column) for r in doc.references] == [
        ("configs/sft.yaml", "config", 40, 5),  # /configs/${CONFIG_NAME}.yaml via file_mounts
        ("ds/zero3.json", "deepspeed", 41, 5),  # relative: in the workdir
    ]
    assert values(doc)["/launcher/command"].startswith(
        "torchrun --nnodes=$SKYPILOT_NUM_NODES --nproc_per_node=$SKYPILOT_NUM_GPUS_PER_NODE"
    )
    assert doc.role == "entrypoint" and doc.unknown_keys == []


@pytest.mark.parametrize(
    ("accelerators", "model", "count"),
    [
        ("H100:8", "H100-SXM", 8),
        ("A100-80GB:8", "A100-80GB", 8),
        ("L4", "L4", 1),
        ("{A100: 1, V100: 1}", "A100-40GB", 1),  # alternatives: the first
        ("[L4:1, H100:1]", "L4", 1),
        ("'H200:8'", "H200", 8),
        ("{H100: null}", "H100-SXM", 1),
        ("{H100:8, A100-80GB:8}", "H100-SXM", 8),  # flow style: YAML keys "H100:8"
        ("tpu-v4-8", None, 1),  # not a GPU the catalog knows: the count still holds
        ("H100:0.5", "H100-SXM", None),  # a fraction of a GPU is no per-node count
    ],
)
def test_accelerator_spellings(accelerators: str, model: str | None, count: int | None) -> None:
    doc = read(f"resources:\n  accelerators: {accelerators}\nrun: python train.py\n")
    found = values(doc)
    assert found.get("/resources/gpu/model") == model
    assert found.get("/resources/gpus_per_node") == count
    assert found.get("/resources/world_size") == count  # num_nodes defaults to 1


def test_any_of_takes_the_first_alternative_with_accelerators() -> None:
    text = (
        "resources:\n  any_of:\n    - cloud: gcp\n    - accelerators: A100:4\n"
        "    - accelerators: H100:8\nnum_nodes: 3\nrun: python train.py\n"
    )
    doc = read(text)
    assert values(doc)["/resources/gpu/model"] == "A100-40GB"
    assert values(doc)["/resources/world_size"] == 12
    assert where(doc, "/resources/gpus_per_node") == (4, 7)


def test_skypilot_variables_resolve_to_the_tasks_own_size() -> None:
    text = (
        "resources:\n  accelerators: A100:8\n"
        "run: |\n  NP=$(($SKYPILOT_NUM_GPUS_PER_NODE * $SKYPILOT_NUM_NODES))\n"
        "  accelerate launch --num_processes $NP --num_machines $SKYPILOT_NUM_NODES train.py\n"
    )
    found = values(read(text))
    assert found["/resources/world_size"] == 8  # declared, and the launch agrees
    assert found["/resources/nodes"] == 1  # num_nodes defaults to 1: --num_machines 1
    assert found["/launcher/kind"] == "accelerate"


def test_launcher_counts_do_not_override_the_allocation() -> None:
    text = "resources: {accelerators: H100:8}\nrun: torchrun --nproc_per_node=4 train.py\n"
    doc = read(text)
    assert values(doc)["/resources/gpus_per_node"] == 8
    assert where(doc, "/resources/gpus_per_node") == (1, 13)


def test_plain_and_quoted_run_strings_are_located_on_the_key_line() -> None:
    doc = read("resources: {accelerators: L4}\nrun: torchrun --standalone train.py\n")
    assert where(doc, "/launcher/kind") == (2, 6)
    assert where(doc, "/launcher/entrypoint") == (2, 28)
    doc = read('resources: {accelerators: L4}\nrun: "torchrun train.py"\n')
    assert where(doc, "/launcher/entrypoint") == (2, 16)


def test_run_block_positions_survive_blank_lines_and_deeper_indentation() -> None:
    text = (
        "resources:\n  accelerators: L4:1\nrun: |-\n\n"
        "      cd src\n        # a comment\n      torchrun \\\n"
        "          --nproc_per_node=1 train.py --logging_steps 5\n"
    )
    doc = read(text)
    assert where(doc, "/launcher/kind") == (7, 7)
    assert where(doc, "/logging/every_steps") == (8, 39)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("run: |", (2, 3)),
        ("run: >-", (2, 3)),
        ("run: python x.py", (1, 6)),
        ("run:    'python x.py'", (1, 10)),
        ('"run": python x.py', (1, 8)),
    ],
)
def test_value_origin(line: str, expected: tuple[int, int]) -> None:
    assert embedded.value_origin(f"{line}\n  python x.py\n", 1, 1) == expected


def test_value_origin_unknown_when_the_key_line_does_not_match() -> None:
    assert embedded.value_origin("a: 1\n", 5, 1) is None
    assert embedded.value_origin("run\n", 1, 1) is None
    assert embedded.value_origin("run: |\n\n", 1, 1) is None


def test_file_mount_mapping() -> None:
    data: dict[str, Any] = {
        "workdir": "./mistral",
        "file_mounts": {
            "/configs": "./configs/",
            "/data": "gs://bucket",
            "/ckpt": {"name": "bucket", "mode": "MOUNT"},
            "~/.config/x.yaml": "local_x.yaml",
        },
    }
    assert skypilot.local_path("/configs/a/b.yaml", data) == "configs/a/b.yaml"
    assert skypilot.local_path("/configs", data) == "configs"
    assert skypilot.local_path("~/.config/x.yaml", data) == "local_x.yaml"
    assert skypilot.local_path("/data/x.yaml", data) is None  # a bucket
    assert skypilot.local_path("/ckpt/x.yaml", data) is None
    assert skypilot.local_path("/etc/x.yaml", data) is None  # the image's own file
    assert skypilot.local_path("qlora.yaml", data) == "mistral/qlora.yaml"
    assert skypilot.local_path("qlora.yaml", {"workdir": {"url": "https://x"}}) is None
    assert skypilot.local_path("qlora.yaml", {}) == "qlora.yaml"


def test_secrets_and_null_envs_give_no_value() -> None:
    text = (
        "envs:\n  HF_TOKEN:\n  STEPS: 10\n  FLAG: true\n"
        "secrets:\n  WANDB_API_KEY: abcdef0123456789\n"
        "resources: {accelerators: L4}\nrun: python train.py --max_steps $STEPS\n"
    )
    doc = read(text)
    found = values(doc)
    assert found["/env/STEPS"] == "10" and found["/env/FLAG"] == "true"
    assert "/env/HF_TOKEN" not in found and "/env/WANDB_API_KEY" not in found
    assert found["/training/max_steps"] == 10  # envs are in scope in run:
    assert "abcdef0123456789" not in repr(doc)


def test_near_misses_at_top_level_and_in_resources() -> None:
    doc = read("num_node: 2\nresources:\n  accelerator: H100:8\n  use_spots: true\nrun: x\n")
    found = [(u.key, u.suggestion, u.line, u.column) for u in doc.unknown_keys]
    assert found == [
        ("num_node", "num_nodes", 1, 1),
        ("accelerator", "accelerators", 3, 3),
        ("use_spots", "use_spot", 4, 3),
    ]


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("resources:\n  accelerators: H100:8\nrun: |\n  python x.py\n", 0.95),
        ("num_nodes: 2\nsetup: pip install x\n", 0.9),
        ("resources:\n  use_spot: true\n", 0.8),
        ("run: python x.py\n", 0.0),  # a bare run string says nothing about SkyPilot
        ("run:\n  dir: outputs/${now:%Y}\n", 0.0),  # Hydra's run: is a mapping
        ("num_nodes: 1\ndevices: 8\n", 0.0),  # litgpt / Lightning
        ("apiVersion: v1\nkind: Pod\nresources: {accelerators: x}\nrun: x\n", 0.0),
    ],
)
def test_recognition(text: str, score: float) -> None:
    assert skypilot.recognise(Input("t.yaml", text)) == score
    assert skypilot.recognise(Input("t.json", '{"run": "x", "num_nodes": 1}')) == 0.0


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
def test_corpus_tasks_have_no_near_misses() -> None:
    for path in sorted((CORPUS / "skypilot").iterdir()):
        file = Input(path.name, path.read_text())
        if skypilot.recognise(file) > 0:
            assert skypilot.parse(file).unknown_keys == [], path.name


_KEYS = st.sampled_from([
    "name", "resources", "accelerators", "num_nodes", "use_spot", "labels", "envs", "secrets",
    "file_mounts", "workdir", "run", "setup", "any_of", "ordered", "cloud", "source", "mode",
])  # fmt: skip
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 64), st.floats(allow_nan=True),
    st.text(max_size=20), st.sampled_from([
        "H100:8", "A100-80GB:x", ":", "L4:", "torchrun --nproc_per_node=$SKYPILOT_NUM_GPUS_PER_NODE"
        " t.py --config /configs/a.yaml", "./configs", "/configs", "gs://b", "$((1/0))",
    ]),
)  # fmt: skip
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=25,
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_KEYS, _VALUES, max_size=8), st.sampled_from(["|", ">", ""]))
def test_random_tasks_never_raise(data: dict[str, Any], style: str) -> None:
    text = yaml.safe_dump(data)
    if style and isinstance(data.get("run"), str):
        block = "\n".join("  " + line for line in data["run"].splitlines()) or "  x"
        text += f"run: {style}\n{block}\n"
    file = Input("random.yaml", text)
    try:
        if skypilot.recognise(file) > 0:
            finish(skypilot.parse(file), file)
    except SourceError:
        pass


def test_run_block_overrides_reach_the_config_it_mounts(tmp_path: Path) -> None:
    from trainlint.assemble import assemble
    from trainlint.discover import discover
    from trainlint.read import Workspace

    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "8B-lora.yaml").write_text(
        "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\nbatch_size: 2\n"
    )
    (tmp_path / "task.yaml").write_text(
        "resources:\n  accelerators: H100:8\nfile_mounts:\n  /configs: ./configs\nrun: |\n"
        "  tune run lora_finetune_distributed --config /configs/8B-lora.yaml batch_size=16\n"
    )
    job = assemble(discover([tmp_path]), Workspace(root=tmp_path))[0]
    assert job.training.micro_batch_size == 16
    where = job.provenance["/training/micro_batch_size"]
    assert (where.file.endswith("task.yaml"), where.line, where.column) == (True, 6, 69)
