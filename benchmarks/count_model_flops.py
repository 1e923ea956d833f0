"""Forward FLOPs per sample of the diffusion and speech models in the catalog's
``sample_models`` (trainlint/catalog/data/models.json), counted, not quoted.

Each model is built from its published config on meta tensors (no weights, no download) and one
forward pass is counted with ``torch.utils.flop_counter.FlopCounterMode`` (2 FLOPs per
multiply-add, attention matmuls included). The printed parameter counts equal the model cards'
(SDXL's UNet 2,567,463,684; Flux.1's transformer 11,901,408,320), which checks the configs.

Needs torch, diffusers and transformers, which trainlint does not depend on:

    pip install --target /tmp/flops-lib diffusers transformers numpy
    PYTHONPATH=/tmp/flops-lib python benchmarks/count_model_flops.py
"""

from __future__ import annotations

from typing import Any

import torch
from diffusers import FluxTransformer2DModel, SD3Transformer2DModel, UNet2DConditionModel
from torch.utils.flop_counter import FlopCounterMode
from transformers import (
    HubertConfig,
    HubertForCTC,
    Wav2Vec2Config,
    Wav2Vec2ForCTC,
    WhisperConfig,
    WhisperForConditionalGeneration,
)

_SD1_BLOCKS = {
    "down_block_types": ["CrossAttnDownBlock2D"] * 3 + ["DownBlock2D"],
    "up_block_types": ["UpBlock2D"] + ["CrossAttnUpBlock2D"] * 3,
    "block_out_channels": [320, 640, 1280, 1280],
    "layers_per_block": 2,
}
SD15 = {**_SD1_BLOCKS, "cross_attention_dim": 768, "attention_head_dim": 8}
SD21 = {
    **_SD1_BLOCKS,
    "cross_attention_dim": 1024,
    "attention_head_dim": [5, 10, 20, 20],
    "use_linear_projection": True,
}
SDXL = {
    "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
    "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
    "block_out_channels": [320, 640, 1280],
    "layers_per_block": 2,
    "cross_attention_dim": 2048,
    "attention_head_dim": [5, 10, 20],
    "transformer_layers_per_block": [1, 2, 10],
    "use_linear_projection": True,
    "addition_embed_type": "text_time",
    "addition_time_embed_dim": 256,
    "projection_class_embeddings_input_dim": 2816,
}
# Whisper: d_model, layers (encoder = decoder), heads, FFN, mel bins, vocabulary.
WHISPER = {
    "small": (768, 12, 12, 3072, 80, 51865),
    "medium": (1024, 24, 16, 4096, 80, 51865),
    "large-v3": (1280, 32, 20, 5120, 128, 51866),
}
LARGE_AUDIO = {
    "hidden_size": 1024,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "intermediate_size": 4096,
    "do_stable_layer_norm": True,
    "feat_extract_norm": "layer",
}


def flops(model: torch.nn.Module, *args: Any, **kwargs: Any) -> int:
    """FLOPs of one ``model(*args, **kwargs)`` call."""
    with FlopCounterMode(display=False) as counter:
        model(*args, **kwargs)
    return int(counter.get_total_flops())


def params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def unet(config: dict[str, Any], side: int, text: tuple[int, int], sdxl: bool = False) -> None:
    with torch.device("meta"):
        model = UNet2DConditionModel(in_channels=4, out_channels=4, **config).eval()
        latent = torch.randn(1, 4, side // 8, side // 8)
        context = torch.randn(1, *text)
        extra: dict[str, Any] = {}
        if sdxl:
            pooled, time_ids = torch.randn(1, 1280), torch.randn(1, 6)
            extra["added_cond_kwargs"] = {"text_embeds": pooled, "time_ids": time_ids}
        count = flops(model, latent, torch.tensor([10]), context, **extra)
    print(f"UNet at {side} px: {params(model):,} params, {count:.4e} FLOPs")


def sd3_medium() -> None:
    with torch.device("meta"):
        model = SD3Transformer2DModel(
            sample_size=128,
            patch_size=2,
            in_channels=16,
            num_layers=24,
            attention_head_dim=64,
            num_attention_heads=24,
            joint_attention_dim=4096,
            caption_projection_dim=1536,
            pooled_projection_dim=2048,
            out_channels=16,
            pos_embed_max_size=192,
        ).eval()
        latent, text = torch.randn(1, 16, 128, 128), torch.randn(1, 333, 4096)
        pooled, step = torch.randn(1, 2048), torch.tensor([10])
        count = flops(model, latent, text, pooled, step)
    print(f"SD3 medium at 1024 px: {params(model):,} params, {count:.4e} FLOPs")


def flux() -> None:
    image, text = 4096, 512
    with torch.device("meta"):
        model = FluxTransformer2DModel(guidance_embeds=True).eval()
        inputs = {
            "hidden_states": torch.randn(1, image, 64),
            "encoder_hidden_states": torch.randn(1, text, 4096),
            "pooled_projections": torch.randn(1, 768),
            "timestep": torch.tensor([1.0]),
            "img_ids": torch.zeros(image, 3),
            "txt_ids": torch.zeros(text, 3),
            "guidance": torch.tensor([3.5]),
        }
        count = flops(model, **inputs)
    print(f"Flux.1 at 1024 px: {params(model):,} params, {count:.4e} FLOPs")


def whisper(decoder_tokens: int = 128) -> None:
    for name, (width, layers, heads, ffn, mels, vocab) in WHISPER.items():
        config = WhisperConfig(
            d_model=width,
            encoder_layers=layers,
            decoder_layers=layers,
            encoder_attention_heads=heads,
            decoder_attention_heads=heads,
            encoder_ffn_dim=ffn,
            decoder_ffn_dim=ffn,
            num_mel_bins=mels,
            vocab_size=vocab,
        )
        with torch.device("meta"):
            model = WhisperForConditionalGeneration(config).eval()
            features = torch.randn(1, mels, 3000)  # a 30 s window
            tokens = torch.zeros(1, decoder_tokens, dtype=torch.long)
            count = flops(model, input_features=features, decoder_input_ids=tokens)
        print(f"Whisper {name}: {params(model):,} params, {count:.4e} FLOPs per 30 s window")


def speech_encoders(seconds: int = 10) -> None:
    models = (
        ("wav2vec2 base", Wav2Vec2ForCTC, Wav2Vec2Config()),
        ("wav2vec2 large", Wav2Vec2ForCTC, Wav2Vec2Config(**LARGE_AUDIO)),
        ("HuBERT base", HubertForCTC, HubertConfig()),
        ("HuBERT large", HubertForCTC, HubertConfig(**LARGE_AUDIO)),
    )
    for name, cls, config in models:
        config.vocab_size = 32
        with torch.device("meta"):
            model = cls(config).eval()  # eval: no layer drop
            audio = torch.randn(1, 16_000 * seconds)
            count = flops(model, audio)
        head = config.hidden_size * 32 + 32  # the CTC head, not the pretrained model's
        print(f"{name}: {params(model) - head:,} params, {count:.4e} FLOPs per {seconds} s")


if __name__ == "__main__":
    unet(SD15, 512, (77, 768))
    unet(SD15, 256, (77, 768))
    unet(SD21, 768, (77, 1024))
    unet(SD21, 512, (77, 1024))
    unet(SDXL, 1024, (77, 2048), sdxl=True)
    unet(SDXL, 512, (77, 2048), sdxl=True)
    sd3_medium()
    flux()
    whisper()
    speech_encoders()
