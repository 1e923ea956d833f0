"""A short, fixed budget of the atheris harness (skipped when atheris is not installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

HARNESSES = ["atheris_readers.py", "atheris_inputs.py"]


@pytest.mark.slow  # a fuzzer in a subprocess, ~6 s a harness; the hypothesis fuzz tests stay fast
@pytest.mark.parametrize("harness", HARNESSES)
def test_atheris_finds_no_crash_in_a_short_run(tmp_path: Path, harness: str) -> None:
    """The file readers; the repository config, pack manifests and data, shell expansion."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name(harness)), "-runs=1500",
         "-max_total_time=8", "-seed=1", f"-artifact_prefix={tmp_path}/"],
        capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
