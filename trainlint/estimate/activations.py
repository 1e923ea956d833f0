"""Activation memory per GPU, Korthikanti et al. 2022 (arXiv:2205.05198), cost-model §2.

Symbols: s sequence length, b micro-batch, h hidden, a heads, L layers, t tensor-parallel size,
p pipeline size, v vocabulary. Activations are 16-bit (2 bytes), dropout masks 1 byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Recompute = Literal["none", "selective", "full"]


@dataclass(frozen=True)
class Layout:
    """How activations are split: tensor size, sequence parallelism, pipeline size."""

    tensor: int = 1
    sequence_parallel: bool = False
    pipeline: int = 1


def layer_bytes(  # noqa: PLR0913 - a formula, in its own variables
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int | None = None,
    *,
    layout: Layout | None = None,
    recompute: Recompute = "none",
    flash: bool = False,
) -> float | None:
    """Bytes one transformer layer keeps for the backward pass, Korthikanti Table 2.

    ========================================  =============================
    no parallelism                            sbh(34 + 5as/h)
    tensor parallel                           sbh(10 + 24/t + 5as/(ht))
    tensor + sequence parallel                (sbh/t)(34 + 5as/h)
    selective recomputation                   the 5as/h term dropped
    full recomputation                        2sbh (the layer input only)
    ========================================  =============================

    Flash/SDPA attention keeps no a·s² scores either, so it also drops 5as/h (not in the
    paper; cost-model §2). None when the attention term is needed and ``heads`` is unknown.
    """
    lay = layout or Layout()
    sbh = float(seq_len) * micro_batch * hidden
    if recompute == "full":
        return 2.0 * sbh
    if recompute == "selective" or flash:
        attention = 0.0
    elif heads is None:
        return None
    else:
        attention = 5.0 * heads * seq_len / hidden
    t = max(1, lay.tensor)
    if t == 1 or lay.sequence_parallel:
        return sbh * (34.0 + attention) / t
    return sbh * (10.0 + 24.0 / t + attention / t)


def extra_bytes(
    seq_len: int, micro_batch: int, hidden: int, vocab: int | None, layout: Layout | None = None
) -> tuple[float, float]:
    """Bytes outside the layers (Korthikanti Eq. 5's extra terms), as (first stage, last stage).

    The first stage keeps the input-embedding dropout mask and output, s·b·h per micro-batch in
    flight (p of them under 1F1B); the last stage keeps the final LayerNorm input and the output
    projection input, 4·s·b·h, and the fp32 logits for the cross-entropy, 4·s·b·v/t (the
    vocabulary-parallel output layer). Without sequence parallelism the s·b·h terms are
    replicated across the tensor group; with it they are divided by t. With p = 1 both fall
    on the one stage: 5·s·b·h + 4·s·b·v (over t), the paper's extra term.
    """
    lay = layout or Layout()
    t = max(1, lay.tensor)
    split = t if lay.sequence_parallel else 1
    sbh = float(seq_len) * micro_batch * hidden
    logits = 4.0 * seq_len * micro_batch * vocab / t if vocab else 0.0
    first = sbh * max(1, lay.pipeline) / split
    last = 4.0 * sbh / split + logits
    if lay.pipeline <= 1:
        return first + last, first + last
    return first, last


def per_gpu_bytes(  # noqa: PLR0913 - a formula, in its own variables
    seq_len: int,
    micro_batch: int,
    hidden: int,
    layers: int,
    heads: int | None = None,
    vocab: int | None = None,
    *,
    layout: Layout | None = None,
    recompute: Recompute = "none",
    flash: bool = False,
) -> float | None:
    """Peak activation bytes on the most loaded GPU for one micro-batch.

    1F1B pipelines (Korthikanti Eq. 5): the first stage holds p micro-batches of L/p layers,
    i.e. L layers' worth whatever p is (assuming at least p micro-batches per step); the last
    stage holds one micro-batch of L/p layers plus the logits. The result is the larger.
    """
    lay = layout or Layout()
    one = layer_bytes(
        seq_len, micro_batch, hidden, heads, layout=lay, recompute=recompute, flash=flash
    )
    if one is None:
        return None
    first_extra, last_extra = extra_bytes(seq_len, micro_batch, hidden, vocab, lay)
    p = max(1, lay.pipeline)
    first = layers * one + first_extra
    last = layers / p * one + last_extra
    return max(first, last)
