#!/bin/bash
# trainlint stand-in: docs/train_network_advanced.md's --config_file, with the options of
# docs/sdxl_train_network.md's command moved into sdxl_lora.toml (as --output_config writes it).
accelerate launch --num_cpu_threads_per_process 1 sdxl_train_network.py --config_file=sdxl_lora.toml
