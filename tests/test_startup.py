"""A one-file check imports only what it needs (issue 9: the pre-commit start-up budget).

Timings are benchmarks (benchmarks/bench_scale.py), never assertions; what a test can hold
steady is the set of modules a small run loads. Each module below is needed only by some runs:
archives (tarfile), many files (multiprocessing), unknown keys (rapidfuzz), a .gitignore
(pathspec), an invalid TOML file (tomlkit), the probe (torch), remote packs (httpx).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

NOT_NEEDED = ["tarfile", "multiprocessing", "concurrent.futures", "rapidfuzz", "pathspec",
              "tomlkit", "torch", "httpx", "trainlint.probe", "trainlint.diff"]  # fmt: skip

SCRIPT = """
import json, sys
from trainlint.cli import main
try:
    main(["check", sys.argv[1]])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def _loaded_after_check(path: Path) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path)], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("run.sh", "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --max_steps 1000\n"),
        # Each run is a new Python process (~0.4 s): the other formats only in the full run.
        pytest.param(
            "train.yaml",
            "model_name_or_path: gpt2\nper_device_train_batch_size: 8\n",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "job.toml",
            '[training]\nsteps = 1000\n[job]\ndescription = "x"\n',
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_one_file_check_imports_nothing_it_does_not_need(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    loaded = _loaded_after_check(path)
    assert "trainlint.lint" in loaded  # the check ran
    assert [m for m in NOT_NEEDED if m in loaded] == []


def test_the_optional_modules_still_load_when_needed(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("ignored/\n")
    sft = "model_name_or_path: gpt2\nper_device_train_batch_size: 4\nsave_strategy: steps\n"
    (tmp_path / "sft.yaml").write_text(sft + "save_step: 500\n")  # a near miss: TL903
    (tmp_path / "bad.toml").write_text("[training]\nsteps = \n")
    loaded = _loaded_after_check(tmp_path)
    assert {"pathspec", "rapidfuzz", "tomlkit"} <= loaded
