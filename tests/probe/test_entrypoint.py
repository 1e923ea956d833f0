"""Entrypoint mode: the job's own command runs under the bootstrap and is stopped after
warmup + steps (tiny real training script on CPU/gloo, world sizes 1 and 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from trainlint.job import Job, Launcher, Location
from trainlint.lint import load_jobs
from trainlint.probe.entrypoint import EntrypointError, command_for, run_entrypoint, summarize
from trainlint.probe.launch import RunLength
from trainlint.probe.result import WorldSizeResult

FIXTURES = Path(__file__).parent / "fixtures"
WARMUP, STEPS = 2, 5
# Only the child processes import torch: checking for it without importing it keeps this
# process clear of torch (importing torch after regopy aborts the interpreter).
needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason="needs torch")


def _job(command: str) -> Job:
    where = Location(file=str(FIXTURES / "run.sh"), line=1, column=1)
    return Job(
        id="tests/probe/fixtures/run.sh",
        sources=[],
        launcher=Launcher(kind="python", command=command),
        provenance={"/launcher/command": where},
    )


def _left_behind(marker: Path) -> list[int]:
    """Our processes whose environment still names this probe's result folder."""
    needle = f"TRAINLINT_PROBE_DIR={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_command_from_a_launch_script() -> None:
    job = load_jobs([FIXTURES / "run.sh"])[0]
    argv, _ = command_for(job, 1)
    assert argv[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert argv[-1] == "train_tiny.py" and argv[argv.index("--nproc_per_node") + 1] == "1"
    assert "--standalone" in argv
    slurm = _job("srun --ntasks 8 torchrun --nproc-per-node=$GPUS --nnodes 2 train.py --lr 1")
    argv, _ = command_for(slurm, 2)
    assert "srun" not in argv and "--nproc-per-node=2" in argv and argv[-3:] == [
        "train.py", "--lr", "1"]  # fmt: skip
    assert argv[argv.index("--nnodes") + 1] == "1"
    with pytest.raises(EntrypointError, match="no launch command"):
        command_for(Job(id="x.yaml", sources=[]), 1)
    with pytest.raises(EntrypointError, match="unset variables"):
        command_for(_job("python train.py --data $NOT_SET_ANYWHERE_42"), 1)


@pytest.mark.slow  # torch runs, one of them distributed
@needs_torch
def test_world_sizes_one_and_two(tmp_path: Path) -> None:
    job = load_jobs([FIXTURES / "run.sh"])[0]
    for world in (1, 2):
        block = run_entrypoint(job, world, RunLength(WARMUP, STEPS, 90), tmp_path)
        folder = tmp_path / f"entrypoint-w{world}"
        assert block["oom"] is False and block["steps"] == STEPS
        assert block["step_source"] == "optimizer"
        assert [r["rank"] for r in block["peak_memory"]] == list(range(world))
        WorldSizeResult.model_validate(block)  # the measurement file's per-size shape
        assert all(r["steps"] == STEPS for r in block["ranks"])
        timing = block["step_time_s"]
        assert 0 < timing["p10"] <= timing["median"] <= timing["p90"] < 5
        assert block["data_wait_fraction"] > 0 and block["peak_memory_bytes"] > 0
        assert block["tokens_per_s"] is None  # the fixture job states no batch or seq len
        log = (folder / "run.log").read_text()
        assert "finished all steps" not in log and block["seconds"] < 60
        assert not _left_behind(folder)


@pytest.mark.slow  # a torch run
@needs_torch
def test_step_api_with_a_custom_optimizer(tmp_path: Path) -> None:
    job = _job("python train_tiny.py --optimizer custom --call-step")
    block = run_entrypoint(job, 1, RunLength(WARMUP, STEPS, 60), tmp_path)
    assert block["step_source"] == "api" and block["steps"] == STEPS
    assert block["data_wait_fraction"] > 0
    assert not _left_behind(tmp_path / "entrypoint-w1")


@pytest.mark.slow  # a torch run
@needs_torch
def test_log_regex_fallback(tmp_path: Path) -> None:
    job = _job("python train_tiny.py --optimizer custom --log-every 1")
    block = run_entrypoint(
        job, 1, RunLength(WARMUP, STEPS, 60), tmp_path, step_regex=r"step (\d+) loss"
    )
    assert block["step_source"] == "log" and block["steps"] == STEPS
    assert block["step_time_s"]["median"] > 0
    log = (tmp_path / "entrypoint-w1" / "run.log").read_text()
    assert f"step {WARMUP + STEPS - 1} loss" in log and f"step {WARMUP + STEPS + 1} " not in log


@pytest.mark.slow  # waits out a 3 s timeout
def test_a_hanging_job_times_out_without_orphans(tmp_path: Path) -> None:
    job = _job("python hang.py")
    with pytest.raises(EntrypointError, match="timed out after 3 s") as caught:
        run_entrypoint(job, 1, RunLength(WARMUP, STEPS, 3), tmp_path)
    assert "hanging" in str(caught.value)
    assert not _left_behind(tmp_path / "entrypoint-w1")


def test_bootstrap_is_inert_without_the_probe_dir(tmp_path: Path) -> None:
    """No TRAINLINT_PROBE_DIR: nothing loaded; the environment's own sitecustomize still runs."""
    (tmp_path / "sitecustomize.py").write_text("import os\nos.environ['CHAINED'] = 'yes'\n")
    bootstrap = Path(__file__).parents[2] / "trainlint" / "probe" / "bootstrap"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINLINT_PROBE")}
    env["PYTHONPATH"] = os.pathsep.join([str(bootstrap), str(tmp_path)])
    code = "import os, sys; print(os.environ['CHAINED'], 'trainlint.probe.hooks' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["yes", "False"]
    env["TRAINLINT_PROBE_DIR"] = str(tmp_path)  # probing: hooks loaded, torch still not
    code = "import sys; print('trainlint.probe.hooks' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "False"]


def test_an_out_of_memory_rank_makes_the_block_oom() -> None:
    results = [
        {"rank": 0, "oom": True, "step_times_s": [], "memory": {"reserved_bytes": 80}},
        {"rank": 1, "oom": False, "step_times_s": [0.1], "memory": {"reserved_bytes": 70}},
    ]
    block = summarize(results, _job("python train.py"), 2)
    assert block["oom"] is True and block["step_time_s"] is None
    assert block["peak_memory_bytes"] == 80
    WorldSizeResult.model_validate(block)
