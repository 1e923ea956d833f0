"""Scaling efficiency in every probe mode: from tokens/s when the job states its tokens per
step, else from the step times and the samples each rank took (issue 21 item 6)."""

from __future__ import annotations

import shutil
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from trainlint.catalog import approximately
from trainlint.lint import check
from trainlint.probe import scaling

FIXTURES = Path(__file__).parent / "fixtures"


def _size(
    median_s: float, samples: float | None, tokens_per_s: float | None = None
) -> dict[str, Any]:
    step = {"median": median_s, "p10": median_s, "p90": median_s, "cv": 0.0}
    return {"step_time_s": step, "samples_per_step": samples, "tokens_per_s": tokens_per_s}


def test_same_per_rank_batch_gives_t1_over_tn() -> None:
    """The issue's plain DDP script: 1.5 ms per step on 1 rank, 8.7 ms on 2, no tokens."""
    sizes = {"1": _size(0.0015, 4.0), "2": _size(0.0087, 4.0)}
    scaling(sizes)
    assert sizes["2"]["scaling_efficiency"] == pytest.approx(0.0015 / 0.0087)  # ~17%
    assert sizes["2"]["scaling_basis"] == "step_time"
    assert sizes["1"]["scaling_efficiency"] == pytest.approx(1.0)


def test_a_batch_split_across_ranks_compares_samples_per_second() -> None:
    """A script that halves its per-rank batch at 2 ranks: half the work in 0.6 of the time
    is 1/0.6 / 2 = 83% efficiency, not t1/t2 = 167%."""
    sizes = {"1": _size(1.0, 8.0), "2": _size(0.6, 4.0)}
    scaling(sizes)
    assert sizes["2"]["scaling_efficiency"] == pytest.approx((4 / 0.6) / (8 / 1.0))
    assert sizes["2"]["scaling_basis"] == "samples"


def test_tokens_per_second_come_first_and_unknown_batches_stay_unknown() -> None:
    sizes = {"1": _size(1.0, 4.0, 100.0), "2": _size(1.5, 4.0, 160.0)}
    scaling(sizes)
    assert sizes["2"]["scaling_efficiency"] == pytest.approx(0.8)
    assert sizes["2"]["scaling_basis"] == "tokens"
    unknown = {"1": _size(1.0, None), "2": _size(1.5, 4.0)}
    scaling(unknown)
    assert unknown["2"]["scaling_efficiency"] is None and unknown["2"]["scaling_basis"] is None


@pytest.mark.slow  # torch on gloo: the job's own script at world sizes 1 and 2
@pytest.mark.skipif(find_spec("torch") is None, reason="needs torch")
def test_entrypoint_probe_of_a_plain_ddp_script_measures_scaling(tmp_path: Path) -> None:
    """The fixture states no batch or sequence length, so no tokens are counted; the ranks
    count 4 samples per step at their model's forward at both sizes, so the efficiency is
    t(1) / t(2), and TL103 reports it (its threshold raised so that any measured value fires)."""
    from trainlint.probe import probe

    for name in ("run.sh", "train_tiny.py"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    params = "params:\n  multi-gpu-unmeasured:\n    min_scaling_efficiency: 100\n"
    (tmp_path / ".trainlint.yaml").write_text(params)
    _, m = probe(tmp_path / "run.sh", world_sizes=[1, 2], mode="entrypoint", device="cpu",
                 warmup=2, steps=5, timeout_s=120)  # fmt: skip
    one, two = m.world_sizes["1"], m.world_sizes["2"]
    assert one.tokens_per_s is None and two.tokens_per_s is None
    assert one.samples_per_step == two.samples_per_step == 4
    assert one.step_time_s is not None and two.step_time_s is not None
    assert two.scaling_basis == "step_time"
    efficiency = two.scaling_efficiency
    assert efficiency is not None
    assert efficiency == pytest.approx(one.step_time_s.median / two.step_time_s.median)
    assert any(note.startswith("scaling efficiency at 2 = ") and "t(1) / t(2)" in note
               for note in m.notes)  # fmt: skip
    (message,) = [f.message for f in check([tmp_path]).findings if f.rule == "TL103"]
    shown = f"{approximately(efficiency * 100)}%"
    assert message.startswith(f"measured scaling efficiency at 2 GPUs is {shown}")
