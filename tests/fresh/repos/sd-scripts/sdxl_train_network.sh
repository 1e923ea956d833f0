#!/bin/bash
# trainlint stand-in: the command of docs/sdxl_train_network.md, its line breaks escaped and
# the model placeholder given a value; the dataset config is config_README-en.md's SDXL example.
accelerate launch --num_cpu_threads_per_process 1 sdxl_train_network.py \
 --pretrained_model_name_or_path="stabilityai/stable-diffusion-xl-base-1.0" \
 --dataset_config="my_sdxl_dataset_config.toml" \
 --output_dir="output" \
 --output_name="my_sdxl_lora" \
 --save_model_as=safetensors \
 --network_module=networks.lora \
 --network_dim=32 \
 --network_alpha=16 \
 --learning_rate=1e-4 \
 --unet_lr=1e-4 \
 --text_encoder_lr1=1e-5 \
 --text_encoder_lr2=1e-5 \
 --optimizer_type="AdamW8bit" \
 --lr_scheduler="constant" \
 --max_train_epochs=10 \
 --save_every_n_epochs=1 \
 --mixed_precision="bf16" \
 --gradient_checkpointing \
 --cache_text_encoder_outputs \
 --cache_latents
