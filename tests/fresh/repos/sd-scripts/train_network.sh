#!/bin/bash
# trainlint stand-in: the command of docs/train_network.md ("Running the Training"), its
# line breaks escaped and the model placeholder given a value.
accelerate launch --num_cpu_threads_per_process 1 train_network.py \
 --pretrained_model_name_or_path="stable-diffusion-v1-5/stable-diffusion-v1-5" \
 --dataset_config="my_dataset_config.toml" \
 --output_dir="output" \
 --output_name="my_lora" \
 --save_model_as=safetensors \
 --network_module=networks.lora \
 --network_dim=16 \
 --network_alpha=1 \
 --learning_rate=1e-4 \
 --optimizer_type="AdamW8bit" \
 --lr_scheduler="constant" \
 --sdpa \
 --max_train_epochs=10 \
 --save_every_n_epochs=1 \
 --mixed_precision="fp16" \
 --gradient_checkpointing
