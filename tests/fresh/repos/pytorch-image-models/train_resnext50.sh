#!/bin/bash
# trainlint stand-in: the ResNeXt50-32x4d, 8 GPUs, AMP command of hfdocs/source/training_script.mdx, verbatim.
./distributed_train.sh 8 --data-dir /imagenet --model resnext50_32x4d --lr 0.6 --warmup-epochs 5 --epochs 240 --weight-decay 1e-4 --sched cosine --reprob 0.4 --recount 3 --remode pixel --aa rand-m7-mstd0.5-inc1 -b 192 -j 6 --amp --dist-bn reduce
