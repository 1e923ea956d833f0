"""End-to-end CLI tests on the bundled examples and on broken input, with golden output."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner, Result

from tests.conftest import EXAMPLES, REPO
from trainlint import cli
from trainlint.engine import available_engines

Golden = Callable[[str, str], None]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli.main, list(args), catch_exceptions=False)


@pytest.fixture
def examples(in_tmp: Path) -> Path:
    """A copy of examples/ in the working directory, so reported paths are stable."""
    shutil.copytree(EXAMPLES, in_tmp / "examples")
    return in_tmp / "examples"


def finding_ids(result: Result) -> set[tuple[str, str, int, int]]:
    data = json.loads(result.output)
    return {(f["rule"], f["file"], f["line"], f["column"]) for f in data["findings"]}


def test_check_examples_text_golden(examples: Path, golden: Golden) -> None:
    result = run("check", "examples")
    assert result.exit_code == 1
    golden("check_examples.txt", result.output)


def test_check_examples_reports_the_acceptance_findings(examples: Path) -> None:
    result = run("check", "examples", "--format", "json")
    found = finding_ids(result)
    assert ("TL201", "examples/llama3-sft/train.slurm", 20, 5) in found
    assert ("TL301", "examples/llama3-sft/configs/sft.yaml", 17, 1) in found
    assert ("TL302", "examples/llama3-sft/train.slurm", 14, 8) in found
    assert {rule for rule, *_ in found} >= {"TL201", "TL301", "TL302", "TL401"}


def test_json_output_validates_against_the_schema(examples: Path) -> None:
    result = run("check", "examples", "--format", "json")
    schema = json.loads((REPO / "schemas" / "findings.schema.json").read_text())
    document = json.loads(result.output)
    jsonschema.validate(document, schema)
    assert document["version"] == 1 and document["findings"] and document["jobs"]
    assert all(
        f["waste"] is None or set(f["waste"]) == {"gpu_hours", "usd"} for f in document["findings"]
    )


def test_output_file(examples: Path) -> None:
    result = run("check", "examples", "--format", "json", "--output", "report.json")
    assert result.exit_code == 1 and result.output == ""
    assert json.loads(Path("report.json").read_text())["findings"]


@pytest.mark.parametrize("engine", available_engines())
def test_every_engine_gives_the_same_report(examples: Path, engine: str) -> None:
    default = run("check", "examples", "--format", "json").output
    assert run("check", "examples", "--format", "json", "--engine", engine).output == default


def test_broken_files_are_tl901_and_the_rest_is_still_checked(in_tmp: Path) -> None:
    shutil.copytree(EXAMPLES / "llama3-sft", in_tmp / "repo")
    (in_tmp / "repo" / "broken.yaml").write_text("save_steps: 10\nlogging_steps: [1, 2\nseed: 3\n")
    (in_tmp / "repo" / "truncated.json").write_text('{\n  "zero_optimization": {\n    "stage": ')
    result = run("check", "repo", "--format", "json")
    assert result.exit_code == 1
    found = finding_ids(result)
    assert ("TL901", "repo/broken.yaml", 3, 5) in found
    assert ("TL901", "repo/truncated.json", 3, 14) in found
    assert {"TL201", "TL302"} <= {rule for rule, *_ in found}


def test_broken_referenced_file_is_reported_in_its_job(in_tmp: Path) -> None:
    shutil.copytree(EXAMPLES / "llama3-sft", in_tmp / "repo")
    (in_tmp / "repo" / "configs" / "ds_zero3.json").write_text(
        '{"zero_optimization": {"stage": 3,}}'
    )
    data = json.loads(run("check", "repo", "--format", "json").output)
    tl901 = [f for f in data["findings"] if f["rule"] == "TL901"]
    assert [(f["file"], f["job"]) for f in tl901] == [
        ("repo/configs/ds_zero3.json", "repo/train.slurm")
    ]


def test_show_lists_facts_with_provenance(examples: Path) -> None:
    result = run("show", "examples")
    assert result.exit_code == 0
    jobs = {job["id"]: job for job in json.loads(result.output)["jobs"]}
    llama = jobs["examples/llama3-sft/train.slurm"]
    assert llama["checkpoint"]["every_steps"] == 10
    assert llama["provenance"]["/checkpoint/every_steps"] == {
        "file": "examples/llama3-sft/train.slurm",
        "line": 20,
        "column": 5,
    }
    assert (
        llama["provenance"]["/logging/every_steps"]["file"]
        == "examples/llama3-sft/configs/sft.yaml"
    )
    assert llama["training"]["parallelism"]["zero_stage"] == 3
    assert llama["estimates"]["params"] > 7e9
    assert {s["path"] for s in llama["sources"]} == {
        "examples/llama3-sft/train.slurm",
        "examples/llama3-sft/configs/sft.yaml",
        "examples/llama3-sft/configs/ds_zero3.json",
    }
    assert (
        "examples/llama3-sft/configs/sft.yaml" not in jobs
    )  # referenced: part of the script's job


def test_show_yaml(examples: Path) -> None:
    result = run("show", "examples", "--format", "yaml")
    assert result.exit_code == 0 and "provenance:" in result.output


def test_rules_and_version() -> None:
    listed = run("rules").output
    for rule in ("TL101", "TL201", "TL301", "TL302", "TL401", "TL901"):
        assert rule in listed
    assert run("--version").output.startswith("trainlint, version ")


def test_select_ignore_and_fail_on(examples: Path) -> None:
    only = finding_ids(run("check", "examples", "--format", "json", "--select", "TL3"))
    assert only and {rule[:3] for rule, *_ in only} == {"TL3"}
    rest = finding_ids(
        run("check", "examples", "--format", "json", "--ignore", "TL3,missing-cost-tags")
    )
    assert not {rule for rule, *_ in rest} & {"TL301", "TL302", "TL401"}
    assert run("check", "examples", "--select", "TL301", "--fail-on", "error").exit_code == 0


def test_clean_directory_exits_zero(in_tmp: Path) -> None:
    (in_tmp / "notes.yaml").write_text("hello: world\n")
    result = run("check", ".")
    assert result.exit_code == 0 and "No findings" in result.output


def test_usage_errors_exit_two(in_tmp: Path) -> None:
    assert run("check", "does-not-exist").exit_code == 2
    assert run("check", "--format", "xml").exit_code == 2


def test_crash_writes_a_report_and_exits_three(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(cli.checking, "run_check", explode)
    result = CliRunner().invoke(cli.main, ["check", "."])
    assert result.exit_code == 3
    report = Path(result.output.rsplit("written to ", 1)[1].strip())
    assert "RuntimeError: boom" in report.read_text()
    report.unlink()


def test_readme_sample_output_is_the_golden_output() -> None:
    golden = (REPO / "tests" / "golden" / "check_examples.txt").read_text()
    assert golden in (REPO / "README.md").read_text()


def test_an_unknown_selector_is_a_usage_error(examples: Path) -> None:
    result = CliRunner().invoke(cli.main, ["check", "examples", "--select", "TL2O1"])
    assert result.exit_code == 2 and "unknown rule selector 'TL2O1'" in result.output


def test_a_problem_in_a_shared_config_is_reported_once(in_tmp: Path) -> None:
    script = "#!/bin/bash\ntorchrun --nproc_per_node 2 train.py --config shared.yaml\n"
    (in_tmp / "a.sh").write_text(script)
    (in_tmp / "b.sh").write_text(script)
    shared = "per_device_train_batch_size: 4\nsave_step: 5\ndeepspeed: gone.json\n"
    (in_tmp / "shared.yaml").write_text(shared)
    data = json.loads(run("check", ".", "--format", "json").output)
    located = [(f["rule"], f["file"], f["line"]) for f in data["findings"] if f["rule"] >= "TL9"]
    assert sorted(located) == [("TL903", "shared.yaml", 2), ("TL904", "shared.yaml", 3)]
    assert {job["id"] for job in data["jobs"]} == {"a.sh", "b.sh"}


def test_a_closed_pipe_is_not_a_crash(in_tmp: Path) -> None:
    """``trainlint show | head``: more output than a pipe holds, and the reader leaves early."""
    import os
    import subprocess
    import sys

    for index in range(40):
        (in_tmp / f"cfg{index}.yaml").write_text(f"save_steps: {index + 1}\nlogging_steps: 1\n")
    reader = subprocess.Popen(
        ["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    writer = subprocess.run(
        [sys.executable, "-m", "trainlint", "show", "."], stdout=reader.stdin,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    reader.wait()
    assert "internal error" not in writer.stderr
    assert writer.returncode == 0
