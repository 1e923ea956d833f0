"""Vision, diffusion and speech jobs: work counted per sample (an image, an audio clip).

A language model's work is 6·N per token; a convnet's, a diffusion UNet's or a speech encoder's
is not a function of its parameters, so the catalog states each model's forward FLOPs per sample
at a reference input (``catalog.SampleModel``) and the job's input size scales it: images by
pixels, audio by seconds. Training costs about three forward passes: the backward pass computes
gradients for activations and for weights, about twice the forward's FLOPs (Kaplan et al. 2020,
arXiv:2001.08361 §2.1: 2N forward, 6N training; Hobbhahn & Sevilla 2021, "What's the backward-
forward FLOP ratio for neural networks?", epoch.ai: 2:1 for most layers and batch sizes).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainlint.catalog import GpuSpec, SampleModel
from trainlint.estimate.ledger import Sourced, derived
from trainlint.estimate.precision import Precision
from trainlint.job import Source

TRAINING_PASSES = 3.0
"""Training FLOPs per sample over forward FLOPs: forward plus a backward of twice its cost."""


@dataclass(frozen=True)
class SampleWork:
    """A per-sample model and the training FLOPs of one sample at the job's input."""

    model: SampleModel
    flops_per_sample: Sourced[float]


def sample_work(
    model: SampleModel,
    size: Sourced[float] | None,
    assumed: dict[str, str | int | float | bool],
) -> SampleWork:
    """Training FLOPs per sample on ``model``: TRAINING_PASSES forward passes at the job's
    input ``size`` (pixels of the side, or seconds: stated, or the framework's default, named
    in ``assumed``), else at the model's reference input, a guess named in ``assumed`` too."""
    pointer = "data.image_size" if model.scaling == "pixels" else "data.audio_seconds"
    reference = model.image_size if model.scaling == "pixels" else model.audio_seconds
    source: Source = "default" if size is None else size.source
    if model.scaling == "fixed":
        source = "catalog"
    elif size is None and reference is not None:
        assumed[pointer] = reference
    elif size is not None and size.source == "default":
        assumed[pointer] = size.value
    value = None if size is None else size.value
    forward = model.forward_flops_at(
        value if model.scaling == "pixels" else None, value if model.scaling == "seconds" else None
    )
    return SampleWork(model, Sourced(TRAINING_PASSES * forward, derived("catalog", source)))


def compute_format(precision: Precision, work: SampleWork | None, gpu: GpuSpec | None) -> str:
    """The peak a job's GEMMs and convolutions run at: the precision's, except fp32 convnets
    on a GPU with TF32, whose convolutions cuDNN runs in TF32 by default
    (``torch.backends.cudnn.allow_tf32`` is True; PyTorch "CUDA semantics", TensorFloat-32).
    Matrix multiplications stay fp32 (``allow_tf32`` for matmul is False since 1.12), so
    transformers and UNets keep the fp32 peak."""
    fmt = precision.compute
    convnet = work is not None and work.model.family == "convnet"
    if fmt == "fp32" and convnet and gpu is not None and gpu.peak_flops("tf32"):
        return "tf32"
    return fmt
