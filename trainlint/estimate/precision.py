"""Numeric formats and optimizers: bytes per parameter and which peak FLOP/s a job runs at.

Both are tables, so new formats or optimizers are new rows, not new code. Byte counts follow
the ZeRO paper (§3.1): mixed precision keeps 16-bit weights and gradients plus an fp32 master
copy inside the optimizer; fp32 training has no master copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Precision:
    """How a training precision stores parameters and which tensor-core peak it uses."""

    name: str
    compute: str  # key of GpuSpec.tflops
    weight_bytes: int  # working weights, and gradients, per parameter
    master_bytes: int  # fp32 master weights held by the optimizer (0 without one)
    state_bytes: int  # bytes per optimizer-state element: fp32, or 16-bit in pure 16-bit runs


PRECISIONS: dict[str, Precision] = {
    # Mixed precision: 16-bit weights/grads, fp32 master and states (ZeRO §3.1, K = 12 for Adam).
    "bf16": Precision("bf16", "bf16", 2, 4, 4),
    "fp16": Precision("fp16", "fp16", 2, 4, 4),
    # fp8 (Transformer Engine) keeps bf16 weights and an fp32 master; only the GEMMs run in fp8.
    "fp8": Precision("fp8", "fp8", 2, 4, 4),
    # fp32: PyTorch leaves TF32 matmuls off by default, so plain fp32 runs at the fp32 peak;
    # a job that enables TF32 says "tf32".
    "fp32": Precision("fp32", "fp32", 4, 0, 4),
    "tf32": Precision("tf32", "tf32", 4, 0, 4),
    # Pure 16-bit (Lightning "bf16-true", torchtune): no master copy, states in the param dtype.
    "bf16-true": Precision("bf16-true", "bf16", 2, 0, 2),
    "fp16-true": Precision("fp16-true", "fp16", 2, 0, 2),
}

_SPELLINGS: dict[str, str] = {
    "bf16mixed": "bf16",
    "bfloat16": "bf16",
    "fp16mixed": "fp16",
    "16mixed": "fp16",
    "16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "32": "fp32",
    "32true": "fp32",
    "float32": "fp32",
    "full": "fp32",
    "bf16true": "bf16-true",
    "bf16pure": "bf16-true",
    "purebf16": "bf16-true",
    "fp16true": "fp16-true",
    "16true": "fp16-true",
    "float8": "fp8",
    "fp8mixed": "fp8",
}


def parse_precision(text: str | None) -> Precision | None:
    """The precision a config names, in any common spelling; None when unrecognised."""
    if not text:
        return None
    key = re.sub(r"[\s\-_]", "", text.strip().lower())
    canonical = _SPELLINGS.get(key, key)
    return PRECISIONS.get(canonical)


@dataclass(frozen=True)
class OptimizerSpec:
    """An optimizer's per-parameter state: ``slots`` state tensors of the state dtype."""

    name: str
    slots: int
    eight_bit: bool = False

    def state_bytes(self, precision: Precision) -> float:
        """Optimizer-state bytes per trainable parameter, the fp32 master copy excluded."""
        per_slot = 1 if self.eight_bit else precision.state_bytes
        return float(self.slots * per_slot)

    def k(self, precision: Precision) -> float:
        """ZeRO's K: master copy plus states, bytes per parameter (12 for mixed-precision Adam)."""
        return precision.master_bytes + self.state_bytes(precision)


# Matched as substrings of the lower-cased name, first match wins. SGD is assumed to use
# momentum (one buffer); Adafactor's factored second moment is O(rows + cols), taken as 0.
_OPTIMIZERS: tuple[tuple[str, int], ...] = (
    ("adafactor", 0),
    ("adam", 2),
    ("lamb", 2),
    ("lion", 1),
    ("muon", 1),
    ("sgd", 1),
)

ADAM = OptimizerSpec("adam", 2)


def parse_optimizer(
    name: str | None, family: str | None = None, eight_bit: bool | None = None
) -> OptimizerSpec | None:
    """The optimizer a config names (name, else family); None when unrecognised."""
    for text in (name, family):
        if not text:
            continue
        lowered = text.lower()
        for key, slots in _OPTIMIZERS:
            if key in lowered:
                quantized = bool(eight_bit) or "8bit" in lowered or "8_bit" in lowered
                return OptimizerSpec(key, slots, quantized)
    return None
