"""Worker processes change the speed of a check, never its report (issue 9)."""

from __future__ import annotations

import multiprocessing
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES
from trainlint import parallel
from trainlint.cli import main
from trainlint.lint import CheckOptions, check
from trainlint.report import names, renderer

COPIES = 125  # two jobs each: 250 jobs in 500 files, above parallel.THRESHOLD

needs_fork = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="workers need fork"
)


def make_corpus(root: Path) -> Path:
    """Variants of the two example jobs, so that the findings differ from job to job."""
    script = (EXAMPLES / "gpt2-finetune" / "run.sh").read_text()
    for index in range(COPIES):
        gpus = (1, 2, 4, 8)[index % 4]
        variant = re.sub(r"gpu:8", f"gpu:{gpus}", script)
        variant = variant.replace("--nproc-per-node 8", f"--nproc-per-node {gpus}")
        variant = variant.replace("--save_steps 1000", f"--save_steps {10 + 7 * index}")
        job = root / f"team{index % 7}" / f"gpt2-{index:03d}"
        job.mkdir(parents=True)
        (job / "run.sh").write_text(variant)
        shutil.copytree(EXAMPLES / "llama3-sft", root / f"team{index % 7}" / f"llama-{index:03d}")
    return root


def reports(workers: int) -> tuple[str, str]:
    report = check([Path("corpus")], CheckOptions(workers=workers))
    assert len(report.jobs) == 2 * COPIES and not report.errors
    return renderer("json")(report), renderer("sarif")(report)


@pytest.mark.slow  # 250 jobs checked three times, with worker processes
@needs_fork
def test_reports_are_byte_identical_across_runs_and_worker_counts(in_tmp: Path) -> None:
    make_corpus(in_tmp / "corpus")
    one = reports(1)
    assert '"rule"' in one[0]  # the corpus has findings to compare
    assert reports(2) == one
    cli = CliRunner().invoke(main, ["check", "corpus", "--format", "json", "--jobs", "2"])
    assert cli.exit_code == 1 and cli.output == one[0]


def test_worker_count() -> None:
    forked = "fork" in multiprocessing.get_all_start_methods()
    assert parallel.worker_count(parallel.THRESHOLD - 1) == 1
    assert parallel.worker_count(5, setting=1) == 1
    assert parallel.worker_count(1, setting=4) == 1  # never more workers than items
    if forked:
        assert parallel.worker_count(10, setting=2) == 2
        assert 1 <= parallel.worker_count(parallel.THRESHOLD) <= parallel.MAX_WORKERS


def test_format_names_need_no_import() -> None:
    """The CLI lists the formats from the file names; each must be a module with a renderer."""
    assert names() and all(callable(renderer(name)) for name in names())
