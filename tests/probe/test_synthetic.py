"""The synthetic worker, run at world size 1 on gloo in a child Python process (torchrun runs
are in test_cli_probe.py). Never in this process: a native extension imported earlier in the
test session (regopy's) makes a later ``import torch`` abort."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("needs torch (trainlint[probe])", allow_module_level=True)

CFG: dict[str, Any] = {
    "layers": 2, "hidden": 32, "heads": 4, "kv_heads": 2, "ffn_hidden": 64, "vocab": 97,
    "seq_len": 16, "micro_batch": 2, "grad_accum": 2, "precision": "bf16",
    "optimizer": "adafactor", "ckpt": True, "parallelism": "fsdp", "device": "cpu",
    "warmup": 1, "steps": 3, "checkpoint": True,
}  # fmt: skip


def in_child(script: str, tmp_path: Path) -> Any:
    """Run ``script`` as one gloo rank; it prints one JSON line, returned parsed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0",
           "WORLD_SIZE": "1", "LOCAL_RANK": "0", "OMP_NUM_THREADS": "1"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # torch in a child process
def test_one_rank_measures_steps_memory_and_a_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    (tmp_path / "cfg.json").write_text(json.dumps(CFG))
    code = in_child(
        f"""
        import json
        from trainlint.probe import synthetic
        print(synthetic.main(["--config", "cfg.json", "--out", {str(out)!r}]))
        """,
        tmp_path,
    )
    assert code == 0
    result = json.loads(out.read_text())
    assert result["oom"] is False and result["world_size"] == 1
    step = result["step_time_s"]
    assert 0 < step["p10"] <= step["median"] <= step["p90"] and step["cv"] >= 0
    tokens = CFG["micro_batch"] * CFG["seq_len"] * CFG["grad_accum"]
    assert result["tokens_per_s"] == pytest.approx(tokens / step["median"])
    assert result["peak_memory"][0]["rss_bytes"] > 0
    assert result["peak_memory_bytes"] == result["peak_memory"][0]["rss_bytes"]
    assert result["checkpoint"]["size_bytes"] > 0 and result["checkpoint"]["save_s"] >= 0
    # CPU decisions: fp32, and DDP over gloo instead of FSDP
    assert result["precision"] == "fp32" and result["parallelism"] == "ddp"
    assert result["hardware"]["gpu"] == "cpu"
    assert not (tmp_path / "result-checkpoint").exists()  # the timed save is deleted


@pytest.mark.slow  # torch in a child process
def test_out_of_memory_is_a_result(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    exits = in_child(
        f"""
        import json, os, pathlib
        import torch
        from trainlint.probe import synthetic

        def boom(*_, **__):
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

        exits = []
        synthetic.Decoder.forward = boom
        os._exit = exits.append
        try:
            synthetic.run(json.loads({json.dumps(json.dumps(CFG))}), pathlib.Path({str(out)!r}))
        except Exception:
            pass  # _exit is patched out: the code goes on past it and fails
        print(json.dumps(exits))
        """,
        tmp_path,
    )
    assert exits == [3]  # synthetic.OOM_EXIT: torchrun then stops the other ranks
    assert json.loads(out.read_text())["oom"] is True
    assert (tmp_path / "result.json.rank0.oom").is_file()


@pytest.mark.slow  # torch in a child process
def test_step_stats_and_optimizers(tmp_path: Path) -> None:
    found = in_child(
        """
        import json, torch
        from trainlint.probe import synthetic
        params = [torch.nn.Parameter(torch.zeros(2))]
        print(json.dumps({
            "stats": synthetic.step_stats([1.0, 2.0, 3.0, 4.0, 5.0]),
            "sgd": type(synthetic.make_optimizer("sgd", params)).__name__,
            "adamw": type(synthetic.make_optimizer("lion", params)).__name__,
            "oom": synthetic.is_oom(torch.cuda.OutOfMemoryError("x")),
            "not_oom": synthetic.is_oom(RuntimeError("shape mismatch")),
        }))
        """,
        tmp_path,
    )
    assert found["stats"]["median"] == 3.0 and found["stats"]["p10"] == pytest.approx(1.4)
    assert found["stats"]["p90"] == pytest.approx(4.6)
    assert (found["sgd"], found["adamw"]) == ("SGD", "AdamW")
    assert found["oom"] is True and found["not_oom"] is False
