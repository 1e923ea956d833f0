"""trainlint annotations: the x-trainlint block and # trainlint: comments, one meaning each."""

from __future__ import annotations

from trainlint.sources import read_document
from trainlint.sources.base import Document, Input


def read(name: str, text: str) -> Document:
    doc = read_document(Input(name, text))
    assert isinstance(doc, Document)
    return doc


def located(doc: Document) -> dict[str, tuple[object, int, int]]:
    return {f.pointer: (f.value, f.location.line, f.location.column) for f in doc.facts}


def test_block_in_a_config() -> None:
    text = (
        "save_steps: 100\n"
        "x-trainlint:\n"
        "  gpu: a100-80gb\n"
        "  gpus: 8\n"
        "  spot: true\n"
        "  budget_usd: 500\n"
        "  tags: {Cost-Center: ml-42}\n"
        "  fallback.flash-attn: sdpa\n"
    )
    facts = located(read("sft.yaml", text))
    assert facts["/resources/gpu/model"] == ("A100-80GB", 3, 3)
    assert facts["/resources/gpus_per_node"] == (8, 4, 3)
    assert facts["/resources/spot"] == (True, 5, 3)
    assert facts["/budget/usd"] == (500.0, 6, 3)
    assert facts["/tags/cost_center"] == ("ml-42", 7, 10)
    assert facts["/fallbacks/flash-attn"] == ("sdpa", 8, 3)


def test_comment_in_a_script_and_in_yaml() -> None:
    script = "#!/bin/bash\n# trainlint: gpu=H100 gpus=8 tag.team=nlp\ntorchrun train.py\n"
    facts = located(read("run.sh", script))
    assert facts["/resources/gpu/model"] == ("H100-SXM", 2, 14)
    assert facts["/resources/gpus_per_node"] == (8, 2, 23)
    assert facts["/tags/team"] == ("nlp", 2, 30)
    yaml_facts = located(read("sft.yaml", "save_steps: 10  # trainlint: dataset_tokens=2e9\n"))
    assert yaml_facts["/training/dataset_tokens"] == (2_000_000_000, 1, 30)


def test_annotation_mistakes_are_parse_errors_at_their_line() -> None:
    doc = read(
        "sft.yaml", "save_steps: 10\nx-trainlint:\n  gpuz: 8\n  colour: red\n  gpus: eight\n"
    )
    assert [(e.line, e.message) for e in doc.errors] == [
        (3, "unknown trainlint annotation key 'gpuz'; did you mean 'gpu'?"),  # gpu, gpus: a tie
        (4, "unknown trainlint annotation key 'colour'; known keys: gpu, gpus, nodes, params, "
         "dataset_tokens, dataset_samples, spot, budget_usd, budget_gpu_hours, runs, tag.<name>, "
         "fallback.<name>"),
        (5, "invalid value 'eight' for trainlint annotation 'gpus'"),
    ]  # fmt: skip
    assert [f.pointer for f in doc.facts] == ["/checkpoint/every_steps"]  # the rest still read
    comment = read(
        "run.sh", "#!/bin/bash\n# trainlint: budget_usdd=5 fallbak.fp8=bf16\ntorchrun t.py\n"
    )
    assert [e.message.rsplit("; ", 1)[-1] for e in comment.errors] == [
        "did you mean 'budget_usd'?",
        "did you mean 'fallback.fp8'?",
    ]


def test_ignore_comments_are_not_annotations() -> None:
    doc = read("run.sh", "#!/bin/bash\ntorchrun t.py  # trainlint: ignore[TL401] shared box\n")
    assert doc.unknown_keys == []


def test_annotations_win_within_their_file() -> None:
    doc = read("run.sh", "#!/bin/bash\n# trainlint: gpus=4\ntorchrun --nproc_per_node 8 t.py\n")
    assert [f.value for f in doc.facts if f.pointer == "/resources/gpus_per_node"][-1] == 4
