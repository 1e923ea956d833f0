"""The known parse traps of ../shared/corpus/PATTERNS.md, each on the real corpus file."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import CORPUS
from trainlint.read import read_file
from trainlint.sources.base import Document, Skipped

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")


def read(relative: str) -> Document:
    doc = read_file(CORPUS / relative)
    assert isinstance(doc, Document)
    return doc


def values(doc: Document) -> dict[str, Any]:
    return {fact.pointer: fact.value for fact in doc.facts}


def test_template_json_with_sed_placeholders_is_a_template_not_an_error() -> None:
    """A script fills it in with sed before the launch: no TL901 on its own; the error is
    kept, located, for a job that would reference the template itself."""
    doc = read_file(CORPUS / "deepspeed/training__data_efficiency__gpt_finetuning__finetune__"
                    "ds_config_gpt2-medium_2clmetrics_TEMPLATE.json")  # fmt: skip
    assert isinstance(doc, Skipped) and doc.reason.startswith("template (by its name")
    assert doc.error is not None and doc.error.line > 1 and "invalid JSON" in doc.error.message


def test_gpt_neox_flow_yaml_with_comments_true_and_kebab_keys() -> None:
    doc = read("gpt-neox/configs__finetuning_configs__6-9B.yml")
    assert doc.format == "gpt-neox" and not doc.errors
    facts = {f.pointer: f for f in doc.facts}
    assert facts["/training/max_steps"].value == 143000  # "train-iters", kebab-case
    assert facts["/training/max_steps"].location.line == 74


def test_deepspeed_auto_values_are_unknown_and_float_integers_are_read() -> None:
    doc = read("transformers/tests__deepspeed__ds_config_zero3.json")
    facts = values(doc)
    assert doc.format == "deepspeed" and facts["/training/parallelism/zero_stage"] == 3
    assert "/training/micro_batch_size" not in facts  # "auto": the trainer decides


def test_interpolations_are_not_literal_values() -> None:
    for relative in ("nemo", "lightning-hydra-template", "torchtune", "olmo"):
        for path in sorted((CORPUS / relative).iterdir()):
            doc = read_file(path)
            assert isinstance(doc, Document)
            literal = [f.pointer for f in doc.facts if isinstance(f.value, str) and "${" in f.value]
            assert literal == [], f"{path.name}: {literal}"


def test_yaml_11_underscore_ints_and_string_floats() -> None:
    doc = read("axolotl/examples__alst__llama3-8b-deepspeed-alst.yaml")
    assert values(doc)["/model/seq_len"] == 500_000  # sequence_len: 500_000
    assert not doc.errors  # learning_rate: 2e-5 is a YAML 1.1 string, harmlessly


def test_fractional_save_steps_stay_a_fraction_of_the_run() -> None:
    doc = read("alignment-handbook/recipes__smollm3__sft__mid.yaml")
    assert values(doc)["/checkpoint/every_steps"] == 0.05


def test_multi_document_yaml_reads_every_document() -> None:
    doc = read("kubeflow-trainer/examples__yaml__04-volcano-integration.yaml")
    assert doc.format == "kubernetes" and not doc.errors
    assert any(f.location.line >= 66 for f in doc.facts)  # facts from the second document
