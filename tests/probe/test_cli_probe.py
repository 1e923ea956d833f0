"""``trainlint probe`` end to end on CPU (gloo, world sizes 1 and 2, a tiny nanoGPT-style
job), and ``trainlint check`` reading what it wrote: measured step time, TL103, TL902."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.probe.test_result import TINY, tiny_job
from trainlint.cli import main
from trainlint.lint import check, load_jobs
from trainlint.measurement import read_measurement
from trainlint.probe.result import Measurement


def _needs_torch() -> None:
    """Skip without torch; never import it here (see test_synthetic.py's docstring)."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("needs torch (trainlint[probe])")


def test_check_does_not_import_torch() -> None:
    code = (
        "import sys, trainlint.cli, trainlint.lint, trainlint.measurement, trainlint.probe, "
        "trainlint.schema; assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_world_sizes_must_be_integers(tmp_path: Path) -> None:
    path = tiny_job(tmp_path)
    result = CliRunner().invoke(main, ["probe", str(path), "--world-sizes", "1,two"])
    assert result.exit_code == 2 and "comma-separated integers" in result.output


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    _needs_torch()
    path = tiny_job(tmp_path_factory.mktemp("tiny"))
    result = CliRunner().invoke(
        main,
        ["probe", str(path), "--world-sizes", "1,2", "--warmup", "1", "--steps", "3",
         "--device", "cpu", "--timeout", "120"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = path.parent / ".trainlint" / "measurements" / "train.py.json"
    assert str(written) in result.output
    return path, written


def _rewrite(written: Path, change: dict[str, Any]) -> None:
    data = json.loads(written.read_text())
    for size, entry in change.items():
        data["world_sizes"][size].update(entry)
    written.write_text(json.dumps(data))


def _findings(path: Path, rule: str) -> list[str]:
    return [f.message for f in check([path.parent]).findings if f.rule == rule]


@pytest.mark.slow  # torch on gloo, world sizes 1 and 2 (the probed fixture)
def test_probe_writes_a_valid_measurement(probed: tuple[Path, Path]) -> None:
    _, written = probed
    data = read_measurement(written)
    m = Measurement.model_validate(data)
    assert set(m.world_sizes) == {"1", "2"} and m.mode == "synthetic"
    assert m.hardware is not None and m.hardware.gpu == "cpu"
    assert m.workload is not None and m.workload.precision == "fp32"
    assert m.world_sizes["1"].scaling_efficiency == 1.0
    two = m.world_sizes["2"]
    assert two.step_time_s is not None and two.tokens_per_s and len(two.peak_memory) == 2
    assert two.checkpoint is not None and two.checkpoint.size_bytes > 0


@pytest.mark.slow  # the probed fixture: torch on gloo
def test_check_uses_the_measurement(probed: tuple[Path, Path]) -> None:
    path, written = probed
    measured = read_measurement(written)["world_sizes"]["2"]["step_time_s"]["median"]
    job = load_jobs([path.parent])[0]
    assert job.measurements["fresh"] is True
    assert job.estimates.sources["step_time_s"] == "measured"
    assert job.estimates.step_time_s == pytest.approx(measured)

    _rewrite(written, {"2": {"scaling_efficiency": 0.95}})
    assert _findings(path, "TL103") == []
    _rewrite(written, {"2": {"scaling_efficiency": 0.4, "tokens_per_s": 80.0},
                       "1": {"tokens_per_s": 100.0}})  # fmt: skip
    (message,) = _findings(path, "TL103")
    assert "measured scaling efficiency at 2 GPUs is 40%" in message
    assert "80 tokens/s against 100 on 1 GPU" in message
    assert _findings(path, "TL902") == []

    path.write_text(TINY.replace("batch_size = 2", "batch_size = 4"))
    (stale,) = _findings(path, "TL902")
    assert "micro_batch_size changed" in stale
    assert load_jobs([path.parent])[0].estimates.sources["step_time_s"] != "measured"


@pytest.mark.slow  # runs a torch training script
def test_entrypoint_mode_delegates_and_merges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs_torch()
    from trainlint.probe import entrypoint, probe

    calls: list[int] = []

    def fake(*args: Any) -> dict[str, Any]:
        world = args[1]  # (job, world_size, length, workdir)
        calls.append(world)
        step = {"median": 1.0, "p10": 1.0, "p90": 1.0, "cv": 0.0}
        rate = 100.0 * world * (0.8 if world > 1 else 1)
        return {"step_time_s": step, "tokens_per_s": rate, "peak_memory_bytes": 1,
                "oom": False, "data_wait_fraction": 0.1 * world}  # fmt: skip

    monkeypatch.setattr(entrypoint, "run_entrypoint", fake)
    path = tiny_job(tmp_path)
    written, m = probe(path, world_sizes=[1, 2], mode="entrypoint", device="cpu")
    assert calls == [1, 2] and m.mode == "entrypoint" and m.workload is None
    assert m.world_sizes["2"].scaling_efficiency == pytest.approx(0.8)
    assert m.data_wait_fraction == pytest.approx(0.2)
    assert m.hardware is not None and m.hardware.gpu == "cpu"
    assert read_measurement(written)["fingerprint"] == m.fingerprint
