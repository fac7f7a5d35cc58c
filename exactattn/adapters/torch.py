"""PyTorch ``nn.MultiheadAttention`` as a value oracle and its ground-truth heads
(docs/design.md §9); see :mod:`exactattn.oracles.adapters.torch` for the orientation
W_h = W_k,hᵀ W_q,h/√d_head, v_h = (W_o[:, h] W_v,h)ᵀ r and the treatment of biases."""

from ..oracles.adapters.torch import (AttentionWeights, constant_offset, heads, load, oracle,
                                      state_of)

__all__ = ["oracle", "heads", "constant_offset", "load", "state_of", "AttentionWeights"]
