#!/usr/bin/env bash
# Stand-in: the README's "Training / Fast setup" command (README.md lines 485-493 at b8931f7),
# written as a script so the launch line is read; the placeholders are variables.
OUTPUT_DIR=${OUTPUT_DIR:?}
DATASET=${DATASET:?}

python dinov2/run/train/train.py \
    --nodes 4 \
    --config-file dinov2/configs/train/vitl16_short.yaml \
    --output-dir "$OUTPUT_DIR" \
    train.dataset_path=ImageNet:split=TRAIN:root=$DATASET:extra=$DATASET
