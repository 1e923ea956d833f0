"""``trainlint estimate``: the readable table on the examples, the JSON document and its schema,
a source for every number, and the unknown inputs a partial job names."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner, Result

from tests.conftest import EXAMPLES, REPO
from trainlint import cli
from trainlint.estimate_view import fmt

Golden = Callable[[str, str], None]
NOT_ESTIMATES = {"sources", "unknown", "assumed", "ranges"}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli.main, list(args), catch_exceptions=False)


@pytest.fixture
def examples(in_tmp: Path) -> Path:
    shutil.copytree(EXAMPLES, in_tmp / "examples")
    return in_tmp / "examples"


@pytest.fixture
def partial(in_tmp: Path) -> Path:
    """A launcher that names neither the model, the GPU nor the run length."""
    job = in_tmp / "partial"
    job.mkdir()
    (job / "run.sh").write_text(
        "#!/usr/bin/env bash\n"
        "torchrun --nproc-per-node 2 train.py --per_device_train_batch_size 4 --save_steps 100\n"
    )
    return job


def numbers(value: Any, path: str = "") -> Iterator[str]:
    """Dotted paths of the non-null numbers in an estimates document."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not (path == "" and key in NOT_ESTIMATES):
                yield from numbers(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from numbers(item, f"{path}.{index}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path


def ranged(estimates: dict[str, Any]) -> Iterator[str]:
    """Dotted paths of the numbers ``ranges`` bounds: each end carries its point's source."""
    for pointer, (low, high) in estimates["ranges"].items():
        point = estimates
        for part in pointer.strip("/").split("/"):
            point = point[part]
        assert low <= point <= high, pointer
        yield pointer.strip("/").replace("/", ".")


def has_source(path: str, sources: dict[str, str]) -> bool:
    """The path or one of its prefixes (``alternatives`` covers ``alternatives.0.usd``)."""
    parts = path.split(".")
    return any(".".join(parts[:end]) in sources for end in range(len(parts), 0, -1))


def test_examples_text_golden(examples: Path, golden: Golden) -> None:
    result = run("estimate", "examples")
    assert result.exit_code == 0
    golden("estimate_examples.txt", result.output)


def test_examples_text_shows_every_section_with_sources(examples: Path) -> None:
    output = run("estimate", "examples").output
    for heading in ("Memory per GPU", "Run", "Checkpoint", "Cheaper alternatives"):
        assert f"  {heading}\n" in output
    assert "examples/llama3-sft/train.slurm" in output
    assert " GB " in output and "GiB" not in output and "$" in output
    assert all(source in output for source in ("declared", "catalog", "estimated", "default"))


def test_json_validates_and_every_number_has_a_source(examples: Path) -> None:
    result = run("estimate", "examples", "--format", "json")
    assert result.exit_code == 0
    document = json.loads(result.output)
    schema = json.loads((REPO / "schemas" / "estimate.schema.json").read_text())
    jsonschema.validate(document, schema)
    assert [job["id"] for job in document["jobs"]] == [
        "examples/gpt2-finetune/run.sh",
        "examples/llama3-sft/train.slurm",
    ]
    for job in document["jobs"]:
        estimates = job["estimates"]
        assert estimates["memory"]["total_bytes"] and estimates["run"]["usd"]
        found = [*numbers(estimates), *ranged(estimates)]
        lacking = [p for p in found if not has_source(p, estimates["sources"])]
        assert lacking == [], f"{job['id']}: numbers without a source: {lacking}"


def test_partial_job_names_its_unknown_inputs(partial: Path) -> None:
    text = run("estimate", "partial").output
    assert "Unknown inputs" in text
    assert "model.params" in text and "x-trainlint: params" in text
    assert "x-trainlint: gpu" in text
    document = json.loads(run("estimate", "partial", "--format", "json").output)
    schema = json.loads((REPO / "schemas" / "estimate.schema.json").read_text())
    jsonschema.validate(document, schema)
    estimates = document["jobs"][0]["estimates"]
    assert "model.params" in estimates["unknown"]
    assert estimates["memory"]["total_bytes"] is None
    assert all(has_source(p, estimates["sources"]) for p in numbers(estimates))


def test_missing_path_is_a_usage_error(in_tmp: Path) -> None:
    result = CliRunner().invoke(cli.main, ["estimate", "nowhere"])
    assert result.exit_code == 2
    assert "path does not exist: nowhere" in result.output


def test_empty_directory_says_so(in_tmp: Path) -> None:
    result = run("estimate", ".")
    assert result.exit_code == 0 and "no training jobs found" in result.output
    assert json.loads(run("estimate", ".", "--format", "json").output) == {"jobs": []}


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("storage_bytes", 337270972416.0, "337 GB"),
        ("storage_bytes", 3e12, "3.0 TB"),
        ("step_time_s", 0.05644373700923077, "0.0564 s"),
        ("save_s", 112.4, "1.9 min"),
        ("hours", 9.399649172204471, "9.4 h"),
        ("gpu_hours", 75.19719337763577, "75.2 GPU-h"),
        ("usd", 12263.19, "$12,263.19"),
        ("utilization", 0.27534799575805663, "27.5%"),
        ("overhead_fraction", 0.0299, "3.0%"),
        ("steps", 20000, "20,000"),
        ("params", 8030261248, "8,030,261,248"),
        ("gpu", "H100-SXM", "H100-SXM"),
    ],
)
def test_human_units(field: str, value: Any, shown: str) -> None:
    assert fmt(field, value) == shown


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("memory.gpu_bytes", 80 * 2**30, "80 GB"),  # an H100 80 GB, not "80.00 GiB" / "86 GB"
        ("memory.total_bytes", 7309971456.0, "6.8 GB"),
        ("memory_fixes.total_bytes", 141 * 2**30, "141 GB"),
        ("checkpoint.size_bytes", 112e9, "112 GB"),  # storage: decimal, as TL201 writes it
    ],
)
def test_gpu_memory_as_vendors_name_it(key: str, value: float, shown: str) -> None:
    assert fmt(key.rsplit(".", 1)[-1], value, key) == shown


LLAMA_70B = """\
# trainlint: gpu=H100 gpus=1024
model_name_or_path: meta-llama/Meta-Llama-3-70B
max_seq_length: 4096
per_device_train_batch_size: 1
max_steps: 100000
save_strategy: steps
save_steps: 100
"""


def _checkpoint(folder: Path) -> dict[str, Any]:
    result = run("estimate", str(folder), "--format", "json")
    assert result.exit_code == 0, result.output
    estimates: dict[str, Any] = json.loads(result.output)["jobs"][0]["estimates"]
    return {**estimates["checkpoint"], "step_time_s": estimates["step_time_s"]}


def test_an_org_tl201_threshold_moves_the_suggested_interval(in_tmp: Path) -> None:
    """The suggestion aims under TL201's threshold as the org sets it, not a copy of it."""
    (in_tmp / "train.yaml").write_text(LLAMA_70B)
    default = _checkpoint(in_tmp)
    (in_tmp / "org").mkdir()
    tl201 = {"checkpoint_too_frequent": {"max_overhead_fraction": 0.01}}
    (in_tmp / "org" / "data.json").write_text(json.dumps({"trainlint": {"params": tl201}}))
    (in_tmp / ".trainlint.toml").write_text('[[packs]]\npath = "org"\n')
    org = _checkpoint(in_tmp)
    assert org["suggested_every_steps"] > default["suggested_every_steps"]
    assert org["suggested_every_steps"] > org["optimal_every_steps"]  # the target decides
    saving = org["save_s"] / (org["suggested_every_steps"] * org["step_time_s"] + org["save_s"])
    assert 0.0099 < saving <= 0.01


def test_estimate_and_findings_name_gpu_memory_the_same(examples: Path) -> None:
    """The same H100 was "80.00 GiB" in ``estimate`` and "86 GB" in TL107's message."""
    estimate = run("estimate", "examples/llama3-sft/train.slurm").output
    check = run("check", "examples/llama3-sft").output
    assert "GPU memory                     80 GB " in estimate
    assert "of the 80 GB of each H100-SXM" in check


def _rows(output: str, label: str) -> list[str]:
    lines = [" ".join(line.split()) for line in output.splitlines()]
    return [line for line in lines if line.startswith(label)]


def test_computed_numbers_are_marked_estimated(examples: Path) -> None:
    """The memory total rests on the assumed optimizer, but the formulas computed it: it reads
    ``estimated``; only a number that is itself a default reads ``default``."""
    output = run("estimate", "examples/llama3-sft/train.slurm").output
    assert _rows(output, "total 24 GB") == ["total 24 GB estimated"]
    assert [row.split()[-1] for row in _rows(output, "cost ")] == [
        "estimated",
        "estimated",
    ]  # run, per 1,000 steps
    assert _rows(output, "overhead 1.0 GB") == ["overhead 1.0 GB default"]


def test_ranges_are_shown_beside_their_number() -> None:
    """``Estimates.ranges`` (``{JSON pointer: [low, high]}``) is rendered where it exists."""
    from trainlint.estimate_view import render_text
    from trainlint.job import Job

    job = Job.model_validate({"id": "j.yaml", "sources": [], "estimates": {
        "run": {"usd": 100.0, "steps": 10}, "sources": {"run.usd": "default"}}})  # fmt: skip
    ranged = job.estimates.model_copy(update={"ranges": {"/run/usd": [40.0, 160.0]}})
    text = render_text([job.model_copy(update={"estimates": ranged})])
    assert _rows(text, "cost") == ["cost $100.00 ($40.00 \N{EN DASH} $160.00) estimated"]
    assert _rows(render_text([job]), "cost") == ["cost $100.00 estimated"]


def test_unknown_inputs_come_last_with_how_to_declare_them(partial: Path) -> None:
    lines = run("estimate", "partial").output.rstrip().splitlines()
    heading = lines.index("  Unknown inputs (declare them to complete the estimate)")
    assert heading > 0 and all(line.startswith("    ") for line in lines[heading + 1 :])
    assert any("resources.gpu.model" in line and "gpu" in line for line in lines[heading + 1 :])
