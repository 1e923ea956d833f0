#!/bin/bash
# trainlint stand-in: the SE-ResNet34 on ImageNet, 4 GPUs, AMP command of hfdocs/source/training_script.mdx, verbatim.
./distributed_train.sh 4 --data-dir /data/imagenet --model seresnet34 --sched cosine --epochs 150 --warmup-epochs 5 --lr 0.4 --reprob 0.5 --remode pixel --batch-size 256 --amp -j 4
