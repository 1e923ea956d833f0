"""GPU and model names as configs, schedulers and tools write them reach the catalog entry they
mean (vision, diffusion and speech models too: torchvision, timm, Hub ids, weight files);
quantized checkpoints, which load with their weights already quantized, do not."""

from __future__ import annotations

import pytest

from trainlint.catalog import resolve_gpu, resolve_model, resolve_sample_model


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM"),  # nvidia-smi --query-gpu=name
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),  # nvidia-smi
        ("NVIDIA A100 80GB PCIe", "A100-80GB"),  # nvidia-smi on the PCIe card
        ("NVIDIA-A100-SXM4-80GB", "A100-80GB"),  # nvidia.com/gpu.product node label
        ("A100-SXM-80GB", "A100-80GB"),
        ("gpu_8x_a100_80gb_sxm4", "A100-80GB"),  # Lambda instance type
        ("gpu_8x_h100_sxm5", "H100-SXM"),  # Lambda instance type
        ("gpu:nvidia_a100-sxm4-80gb:8", "A100-80GB"),  # SLURM Gres type
        ("H100 80GB HBM3", "H100-SXM"),
    ],
)
def test_gpu_names_as_written_resolve(spelling: str, name: str) -> None:
    gpu = resolve_gpu(spelling)
    assert gpu is not None and gpu.name == name


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "Llama-3.1-8B"),
        # torchtune's recipes/configs/llama3_3/70B_lora.yaml: Llama 3.3 70B is Llama 3.1 70B's
        # architecture, retrained
        ("meta-llama/Llama-3.3-70B-Instruct", "Llama-3.1-70B"),
        ("/tmp/Llama-3.3-70B-Instruct/", "Llama-3.1-70B"),
        # axolotl's examples/archived/tiny-llama/pretrain.yml, litgpt's config_hub
        ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "TinyLlama-1.1B"),
        ("checkpoints/TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T", "TinyLlama-1.1B"),
        ("tiny-llama-1.1b", "TinyLlama-1.1B"),  # litgpt pretrain's model_name
    ],
)
def test_model_names_as_written_resolve(spelling: str, name: str) -> None:
    entry = resolve_model(spelling)
    assert entry is not None and entry.name == name


@pytest.mark.parametrize(
    "spelling",
    ["unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit", "Qwen/Qwen2.5-7B-Instruct-AWQ"],
)
def test_quantized_checkpoints_stay_unknown(spelling: str) -> None:
    assert resolve_model(spelling) is None


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("resnet50", "ResNet-50"),  # torchvision, timm
        ("resnet50.a1_in1k", "ResNet-50"),  # timm with its pretrained tag
        ("microsoft/resnet-50", "ResNet-50"),  # Hugging Face
        ("vit_base_patch16_224", "ViT-B/16"),  # timm: "base" is a size, not noise
        ("vit_large_patch16_224", "ViT-L/16"),
        ("yolov8n.pt", "YOLOv8n"),  # Ultralytics weights
        ("yolo11x.yaml", "YOLO11x"),  # Ultralytics model config
        ("COCO-InstanceSegmentation/mask_rcnn_R_50_FPN_3x.yaml", "Mask R-CNN R50-FPN"),
        ("configs/mask_rcnn/mask-rcnn_r50_fpn_1x_coco.py", "Mask R-CNN R50-FPN"),  # mmdet
        ("stabilityai/stable-diffusion-xl-base-1.0", "SDXL UNet"),
        ("/models/sd_xl_base_1.0.safetensors", "SDXL UNet"),  # kohya's checkpoint path
        ("runwayml/stable-diffusion-v1-5", "SD 1.5 UNet"),
        ("stabilityai/stable-diffusion-2-1-base", "SD 2.1-base UNet"),
        ("black-forest-labs/FLUX.1-dev", "Flux.1 DiT"),
        ("openai/whisper-large-v3", "Whisper large"),
        ("facebook/wav2vec2-large", "wav2vec2 large"),
        ("facebook/wav2vec2-base", "wav2vec2 base"),
    ],
)
def test_sample_model_names_as_written_resolve(spelling: str, name: str) -> None:
    entry = resolve_sample_model(spelling)
    assert entry is not None and entry.name == name
