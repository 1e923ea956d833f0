"""Real configs from ../shared/corpus: recognition per source, and labelled facts asserted exactly.

Each ``corpus_labels/<source>.yaml`` holds ``formats`` (what a file of that source may be read
as: a llama-factory folder also holds DeepSpeed and accelerate files) and ``labels`` (files with
their key facts). The corpus is read in place and never copied into this repository.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import CORPUS
from trainlint.read import read_file
from trainlint.sources.base import Document

LABELS = Path(__file__).parent / "corpus_labels"
SPECS: dict[str, dict[str, Any]] = {
    path.stem: yaml.safe_load(path.read_text()) for path in sorted(LABELS.glob("*.yaml"))
}
SUFFIXES = {".yaml", ".yml", ".json", ".toml", ".py", ".sh"}
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in SUFFIXES) if CORPUS.is_dir() else []


def last_values(doc: Document) -> dict[str, Any]:
    """What each pointer ends up as within the document (later facts win, as in assembly)."""
    return {fact.pointer: fact.value for fact in doc.facts}


@needs_corpus
def test_recognition_rate_and_coverage_table(capsys: pytest.CaptureFixture[str]) -> None:
    seen: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    misses = []
    for path in corpus_files():
        source = path.parent.name
        allowed = set(SPECS.get(source, {}).get("formats", []))
        doc = read_file(path)
        seen[source] += 1
        if isinstance(doc, Document) and doc.format in allowed:
            hits[source] += 1
        else:
            why = doc.format if isinstance(doc, Document) else doc.reason
            misses.append(f"{source}/{path.name}: {why}")
    with capsys.disabled():
        print("\ncorpus recognition by source")
        for source in sorted(seen):
            print(f"  {source:<28} {hits[source]:>3}/{seen[source]:<3}")
        print(f"  {'total':<28} {sum(hits.values()):>3}/{sum(seen.values())}")
        for miss in misses:
            print(f"  miss: {miss}")
    assert sum(hits.values()) >= 0.95 * sum(seen.values()), misses


LABELLED = [(source, label) for source, spec in SPECS.items() for label in spec.get("labels", [])]
LABEL_IDS = [label["file"] for _, label in LABELLED]


@needs_corpus
@pytest.mark.parametrize(("source", "label"), LABELLED, ids=LABEL_IDS)
def test_labelled_facts(source: str, label: dict[str, Any]) -> None:
    doc = read_file(CORPUS / label["file"])
    assert isinstance(doc, Document) and not doc.errors, label["file"]
    assert doc.format == label["format"]
    values = last_values(doc)
    expected = label.get("facts", {})
    assert {pointer: values.get(pointer) for pointer in expected} == expected
    lines = {f.pointer: f.location.line for f in doc.facts}
    for pointer, line in label.get("lines", {}).items():
        assert lines.get(pointer) == line, pointer


@needs_corpus
def test_at_least_forty_labelled_files_across_every_source() -> None:
    sources = {path.name for path in CORPUS.iterdir() if path.is_dir()}
    labelled = {source for source, _ in LABELLED}
    assert len(LABELLED) >= 40
    assert sources <= labelled, f"sources without labels: {sorted(sources - labelled)}"
