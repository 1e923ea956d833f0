"""Switches given as bare flags (Megatron-LM's ``--log-params-norm``): removed, whole line or
word, and left alone when the flag takes a value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fix.helpers import check, texts, write

MEGATRON = """\
#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=12:00:00

torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 24 --hidden-size 2048 --num-attention-heads 16 \\
    --seq-length 2048 --max-position-embeddings 2048 \\
    --micro-batch-size 4 --global-batch-size 256 \\
    --train-iters 20000 --lr 3e-4 --bf16 \\
{flags}    --log-interval 100
"""


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ("    --log-params-norm \\\n", ""),
        ("    --log-num-zeros-in-grad --log-params-norm \\\n", ""),
        ("    --log-params-norm --use-flash-attn \\\n", "    --use-flash-attn \\\n"),
        ("    --use-flash-attn --log-params-norm \\\n", "    --use-flash-attn \\\n"),
    ],
)
def test_per_step_diagnostics_flags_removed(in_tmp: Path, flags: str, expected: str) -> None:
    write(in_tmp, {"pretrain.slurm": MEGATRON.format(flags=flags)})
    check(in_tmp, "--fix", "--select", "TL306")
    assert texts(in_tmp)["pretrain.slurm"] == MEGATRON.format(flags=expected)


DS_CONFIG = """\
{
  "train_micro_batch_size_per_gpu": "auto",
  "bf16": {"enabled": true},
  "steps_per_print": 100,
  "wall_clock_breakdown": true
}
"""
TRAIN = """\
# trainlint: gpu=H100 gpus=8
model_name_or_path: meta-llama/Llama-3.1-8B
per_device_train_batch_size: 4
max_steps: 10000
bf16: true
save_steps: 500
save_total_limit: 2
deepspeed: ds_config.json
output_dir: out
"""


def test_profiler_switched_off_where_it_is_a_literal_true(in_tmp: Path) -> None:
    """DeepSpeed's wall_clock_breakdown: true becomes false; the other ``true`` stays."""
    write(in_tmp, {"train.yaml": TRAIN, "ds_config.json": DS_CONFIG})
    check(in_tmp, "--fix", "--select", "TL304")
    assert texts(in_tmp)["ds_config.json"] == DS_CONFIG.replace(
        '"wall_clock_breakdown": true', '"wall_clock_breakdown": false'
    )


def test_profiler_left_alone_when_it_is_not_a_switch(in_tmp: Path) -> None:
    """Lightning's ``profiler: simple`` names a profiler: which value turns it off is the
    user's choice (None, or removing the key), so no fix is offered."""
    lightning = """\
# trainlint: gpu=A100-80GB gpus=4
trainer:
  accelerator: gpu
  devices: 4
  precision: bf16-mixed
  max_steps: 50000
  profiler: simple
model:
  class_path: mypkg.LitModel
"""
    write(in_tmp, {"config.yaml": lightning})
    result = check(in_tmp, "--fix", "--select", "TL304")
    assert texts(in_tmp) == {"config.yaml": lightning}
    assert '"TL304"' in result.stdout
