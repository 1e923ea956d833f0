"""Small real projects to fix: a SLURM launch and a Hugging Face config, written by the test,
checked and fixed through the CLI as a user runs it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from trainlint.cli import main

SLURM = """\
#!/bin/bash
#SBATCH --job-name=sft
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=24:00:00
#SBATCH --comment="team=nlp project=llama"
set -euo pipefail

# Left over from debugging a hang last week.
export NCCL_DEBUG=INFO
export OMP_NUM_THREADS=8

torchrun --standalone --nproc_per_node=8 train.py \\
    --config sft.yaml \\
    --output_dir /checkpoints/sft
"""

CONFIG = """\
# Supervised fine-tuning (HF TrainingArguments keys).
model_name_or_path: meta-llama/Meta-Llama-3-8B
max_seq_length: 2048
bf16: true
gradient_checkpointing: true   # saves memory
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
dataloader_num_workers: 4
max_steps: 2000
save_strategy: steps
save_steps: 500
save_total_limit: 3
logging_steps: 1   # per-step curve while tuning
report_to:
  - wandb
seed: 42
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8", newline="")


def check(root: Path, *flags: str) -> Result:
    """``trainlint check FLAGS`` on ``root``, text format (the test runs from ``root``)."""
    return CliRunner().invoke(main, ["check", "--format", "json", *flags, str(root)])


def project(root: Path, slurm: str = SLURM, config: str = CONFIG) -> None:
    write(root, {"train.slurm": slurm, "sft.yaml": config})


def texts(root: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(root.iterdir()) if p.is_file()}
