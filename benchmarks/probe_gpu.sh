#!/usr/bin/env bash
# Synthetic probes of three model sizes on one device (trainlint probe, world size 1), and a
# table of estimated vs measured step time and peak memory in docs/accuracy.md.
#
# On a GPU machine: GPT-2-shaped models of 124M, 350M and 1.3B parameters (seq 1024, micro-batch
# 8, bf16, AdamW), written to the GPU section. Without CUDA it runs tiny models on the CPU and
# writes the CPU section (the CPU figures check the pipeline, not the estimator).
#
#   benchmarks/probe_gpu.sh            # auto: cuda when available
#   benchmarks/probe_gpu.sh --device cpu
set -euo pipefail
cd "$(dirname "$0")/.."
exec python benchmarks/probe_accuracy.py "$@"
