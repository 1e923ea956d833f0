#!/usr/bin/env bash
#SBATCH --job-name=gpt2-tickets
#SBATCH --nodes=1
#SBATCH --gres=gpu:8
#SBATCH --constraint=a100-80gb
#SBATCH --time=12:00:00
#SBATCH --account=support-ml
#SBATCH --comment="team=support-ml,project=ticket-triage"
# Fine-tune GPT-2 small on our support tickets.
set -euo pipefail

export CUDA_LAUNCH_BLOCKING=1

srun torchrun --nproc-per-node 8 --nnodes 1 finetune.py \
    --model_name_or_path openai-community/gpt2 \
    --per_device_train_batch_size 8 \
    --gradient_accumulation_steps 1 \
    --max_steps 20000 \
    --max_seq_length 1024 \
    --bf16 \
    --save_steps 1000 \
    --save_total_limit 2 \
    --logging_steps 50 \
    --output_dir out/gpt2-tickets
