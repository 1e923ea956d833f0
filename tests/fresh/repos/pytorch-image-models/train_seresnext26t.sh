#!/bin/bash
# trainlint stand-in: the SE-ResNeXt26-T, 2 GPUs, no AMP command of hfdocs/source/training_script.mdx, verbatim.
./distributed_train.sh 2 --data-dir /imagenet/ --model seresnext26t_32x4d --lr 0.1 --warmup-epochs 5 --epochs 160 --weight-decay 1e-4 --sched cosine --reprob 0.4 --remode pixel -b 112
