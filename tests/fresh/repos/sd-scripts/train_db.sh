#!/bin/bash
# trainlint stand-in: the DreamBooth command of docs/train_db_README-zh.md, its line breaks
# escaped and its placeholders given values (the dataset config is not in the repository).
accelerate launch --num_cpu_threads_per_process 1 train_db.py \
    --pretrained_model_name_or_path="stabilityai/stable-diffusion-2" \
    --dataset_config="/data/dreambooth/dataset.toml" \
    --output_dir="output" \
    --output_name="my_db" \
    --save_model_as=safetensors \
    --prior_loss_weight=1.0 \
    --max_train_steps=1600 \
    --learning_rate=1e-6 \
    --optimizer_type="AdamW8bit" \
    --xformers \
    --mixed_precision="fp16" \
    --cache_latents \
    --gradient_checkpointing
