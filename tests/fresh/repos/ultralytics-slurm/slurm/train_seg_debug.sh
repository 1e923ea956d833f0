#!/bin/bash
#SBATCH --job-name=yolov8s-seg
#SBATCH --gpus=2
#SBATCH --cpus-per-task=16
#SBATCH --output=logs/%x-%j.out

source ~/venvs/ultralytics/bin/activate

# Left on while chasing a DDP hang.
export NCCL_DEBUG=INFO

yolo segment train model=yolov8s-seg.pt data=datasets/wildlife-seg.yaml epochs=50 imgsz=640 batch=32 device=0,1
