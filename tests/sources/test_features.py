"""Experimental kernels, precisions and extensions read as ``/features/<name>`` facts (TL501),
each located at the key, flag or call that turns it on."""

from __future__ import annotations

import pytest

from tests.sources.helpers import located
from trainlint.sources import read_document
from trainlint.sources.base import Document, Input


def features(path: str, text: str) -> dict[str, tuple[str, int, int]]:
    doc = read_document(Input(path, text))
    assert isinstance(doc, Document)
    return {
        pointer: value
        for pointer, value in located(doc).items()
        if pointer.startswith(("/features/", "/fallbacks/"))
    }


def test_hf_attention_and_liger() -> None:
    text = (
        "model_name_or_path: m\nattn_implementation: flash_attention_2\nuse_liger_kernel: true\n"
        "per_device_train_batch_size: 4\nsave_steps: 10\n"
    )
    assert features("sft.yaml", text) == {
        "/features/flash-attn": ("kernel", 2, 1),
        "/features/liger": ("kernel", 3, 1),
    }


@pytest.mark.parametrize("value", ["sdpa", "eager", "flex_attention"])
def test_pytorch_attention_is_no_feature(value: str) -> None:
    text = f"attn_implementation: {value}\nper_device_train_batch_size: 4\nsave_steps: 10\n"
    assert features("sft.yaml", text) == {}


def test_axolotl_kernels_fp8_and_annotated_fallback() -> None:
    text = (
        "base_model: m\n# trainlint: fallback.flash-attn=sdpa\nadapter: lora\nmicro_batch_size: 2\n"
        "flash_attention: true\nliger_rms_norm: true\nfp8: true\n"
        "plugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
    )
    assert features("lora.yml", text) == {
        "/features/flash-attn": ("kernel", 5, 1),
        "/features/liger": ("kernel", 6, 1),
        "/features/fp8": ("precision", 7, 1),
        "/fallbacks/flash-attn": ("sdpa", 2, 14),
    }


def test_axolotl_switches_turned_off_are_no_features() -> None:
    text = "base_model: m\nadapter: lora\nmicro_batch_size: 2\nflash_attention: false\nfp8: false\n"
    assert features("lora.yml", text) == {}


@pytest.mark.parametrize(("value", "expected"), [("fa2", True), ("auto", False), ("sdpa", False)])
def test_llama_factory_flash_attn(value: str, expected: bool) -> None:
    text = f"model_name_or_path: m\nstage: sft\nfinetuning_type: lora\nflash_attn: {value}\n"
    assert ("/features/flash-attn" in features("sft.yaml", text)) is expected


def test_llama_factory_unsloth_and_liger() -> None:
    text = (
        "model_name_or_path: m\nstage: sft\nfinetuning_type: lora\nuse_unsloth: true\n"
        "enable_liger_kernel: true\n"
    )
    assert features("sft.yaml", text) == {
        "/features/unsloth": ("kernel", 4, 1),
        "/features/liger": ("kernel", 5, 1),
    }


def test_accelerate_fp8() -> None:
    text = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\n"
    assert features("accelerate.yaml", text) == {"/features/fp8": ("precision", 3, 1)}


def test_megatron_flags() -> None:
    text = (
        "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --use-flash-attn "
        "--fp8-format hybrid --bf16\n"
    )
    found = features("run.sh", text)
    assert found["/features/flash-attn"][0] == "kernel"
    assert found["/features/fp8"][0] == "precision"


def test_python_imports_extensions_and_guarded_fallback() -> None:
    text = (
        "from torch.utils.cpp_extension import load\n"
        "from transformers import TrainingArguments\n"
        "try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n"
        "from liger_kernel.transformers import apply_liger_kernel_to_llama\n"
        "ext = load(name='k', sources=['k.cu'])\n"
        "args = TrainingArguments(output_dir='o', per_device_train_batch_size=8)\n"
    )
    assert features("train.py", text) == {
        "/features/flash-attn": ("kernel", 4, 5),
        "/fallbacks/flash-attn": ("except ImportError", 5, 1),
        "/features/liger": ("kernel", 7, 1),
        "/features/custom-cuda": ("extension", 8, 7),
    }


def test_axolotl_sdp_attention_next_to_flash_attention_is_its_fallback() -> None:
    text = "base_model: m\nmicro_batch_size: 2\nflash_attention: true\nsdp_attention: true\n"
    assert features("lora.yml", text) == {
        "/features/flash-attn": ("kernel", 3, 1),
        "/fallbacks/flash-attn": ("sdp_attention", 4, 1),
    }
