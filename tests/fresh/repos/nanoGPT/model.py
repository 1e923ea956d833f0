"""Stand-in for nanoGPT's model.py (a trainlint fixture, not the original): the model
definition only, with the configuration dataclass and its defaults."""

from dataclasses import dataclass

from torch import nn


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
