"""A causal PyTorch ``nn.MultiheadAttention`` as a decoder oracle (docs/decoders.md §PyTorch;
docs/design.md §9): one forward pass ``mha(X, X, X, attn_mask=M)`` with a causal mask, read
out by r at every position, is one query answered by N numbers.

The model is the one :mod:`.torch` derives (W_h = W_k,hᵀ W_q,h/√d_head, v_h = (W_o[:, h]
W_v,h)ᵀ r, the value and output biases' constant subtracted), under a causal mask, with
optional ALiBi slopes added as common decoder code adds them: a float mask of shape
(num_heads, N, N) with entry −s_h·(i − j) for j ≤ i and −∞ above the diagonal (torch adds a
float mask to the scaled scores q·k/√d_head, so s_h is exactly the model's slope).

A user's own mask (``attn_mask``, an N_max × N_max boolean or float tensor, sliced to each
query's length) must be causal — every entry above the diagonal masked (True / −∞), every
other entry 0 / False — or it is refused with a one-line ValueError; so is ``is_causal``
without a mask, which torch itself refuses.

The oracle declares the precision of its dtype (:func:`.torch._precision`), so the
inexact causal learner's error bar (:mod:`exactattn.learners.decoder.inexact`) holds at the
precision torch computes in, or its failure names the precision that would be needed.
"""

from __future__ import annotations



from .torch import (AttentionWeights, _FORMATS, _formats, _precision, _readout, _torch,
                    constant_offset, heads)

__all__ = ["causal_oracle", "causal_model", "alibi_mask", "check_causal_mask"]

#: what a failure at the declared precision suggests (behind the float format's own remedy)
REMEDY = ("scores of about 0.05 put the poles near 1, where float64 answers do not separate "
          "them: larger weights (or inputs) certify (docs/decoders.md §7)")


def causal_model(mha, readout, slopes=None, dps: int = 50):
    """The ground-truth :class:`~exactattn.models.decoder.CausalAttention` of the layer read
    out by r, one head per torch head, with ``slopes`` (one per head, or one shared)."""
    from ..models.decoder import CausalAttention
    mh = heads(mha, readout, dps=dps, canonical=False)
    return CausalAttention(mh.heads, slopes, dim=mh.dim)


def alibi_mask(torch, N, slopes, H, dtype, device=None):
    """The float mask (H, N, N): −s_h·(i − j) for j ≤ i, −∞ above the diagonal."""
    i = torch.arange(N, device=device).unsqueeze(1)
    j = torch.arange(N, device=device).unsqueeze(0)
    dist = (i - j).to(dtype)
    s = torch.tensor([float(x) for x in slopes], dtype=dtype, device=device).view(H, 1, 1)
    mask = -s * dist
    return mask.masked_fill((j > i).unsqueeze(0), float("-inf"))


def check_causal_mask(torch, mask):
    """Refuse (ValueError) a mask that is not exactly causal (module docstring)."""
    if mask.dim() != 2 or mask.shape[0] != mask.shape[1]:
        raise ValueError(f"attn_mask must be a square N×N mask, got shape {tuple(mask.shape)}")
    n = mask.shape[0]
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    if mask.dtype == torch.bool:
        masked = mask
    else:
        masked = torch.isneginf(mask)
        if bool((~torch.isneginf(mask) & (mask != 0)).any()):
            raise ValueError("attn_mask has finite nonzero entries (a bias): pass ALiBi slopes "
                             "with slopes= instead, the mask must be 0 / −inf")
    if not bool((masked == upper).all()):
        i, j = [int(x) for x in (masked != upper).nonzero()[0]]
        what = "sees" if j > i else "does not see"
        raise ValueError(f"attn_mask is not causal: position {i + 1} {what} position {j + 1}; a "
                         f"decoder oracle needs position i to see exactly positions 1 … i")


def causal_oracle(mha, readout, slopes=None, attn_mask=None, dtype=None, **oracle_args):
    """A counting, no-peek :class:`~exactattn.oracles.causal.CausalOracle` answering
    [rᵀ out_1 − c, …, rᵀ out_N − c] from one causal forward pass (module docstring)."""
    from ..oracles.causal import CausalOracle
    torch = _torch()
    _formats(torch)
    w = AttentionWeights.of(mha)
    w.check_query_bias()
    if mha.training and mha.dropout > 0:
        raise ValueError("the layer is in training mode with dropout: call mha.eval() first")
    param = next(iter(mha.parameters()))
    dtype = param.dtype if dtype is None else dtype
    fmt = _FORMATS.get(dtype)
    if fmt is None:
        raise ValueError(f"dtype {dtype} is not a real floating-point type")
    if dtype != param.dtype:
        import copy
        mha = copy.deepcopy(mha).to(dtype)
    if attn_mask is not None:
        check_causal_mask(torch, attn_mask)
    if slopes is not None:
        slopes = [slopes] * w.H if not isinstance(slopes, (list, tuple)) else list(slopes)
        if len(slopes) != w.H:
            raise ValueError(f"{len(slopes)} slopes for {w.H} heads")
    r_exact = _readout(readout, w.E)
    r = torch.tensor([float(x) for x in r_exact], dtype=torch.float64)
    c_exact = constant_offset(mha, r_exact)
    offset = float(c_exact)
    batch_first = bool(getattr(mha, "batch_first", False))

    def query(tokens):
        N = len(tokens)
        X = torch.tensor([[float(x) for x in tok] for tok in tokens], dtype=dtype)
        X = X.unsqueeze(0) if batch_first else X.unsqueeze(1)
        if slopes is not None:
            mask = alibi_mask(torch, N, slopes, w.H, dtype)
        elif attn_mask is not None:
            if N > attn_mask.shape[0]:
                raise ValueError(f"a query of {N} tokens is longer than attn_mask "
                                 f"({attn_mask.shape[0]})")
            mask = attn_mask[:N, :N]
        else:
            mask = torch.nn.Transformer.generate_square_subsequent_mask(N, dtype=dtype)
        with torch.no_grad():
            out, _ = mha(X, X, X, attn_mask=mask, need_weights=False)
        seq = out[0] if batch_first else out[:, 0]
        return [float(row.to(torch.float64) @ r) - offset for row in seq]

    query.__name__ = f"torch_causal_{type(mha).__name__}"
    o = CausalOracle(query, dim=w.E, **oracle_args)
    o.declared_precision = _precision(fmt, c_exact, REMEDY)
    return o



