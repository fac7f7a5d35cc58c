"""Float decoders (docs/decoders.md): the inexact causal learner on answer balls, and a causal
nn.MultiheadAttention through the adapter — a result inside its certified error bar, or a
named failure saying what precision is needed, never "not attention".

The torch tests are skipped where torch is absent (an extra; CI installs the CPU build)."""

import importlib.util
import itertools
from fractions import Fraction as F

import pytest

from exactattn.errors import IllConditioned, LearningFailure
from exactattn.learners.decoder.inexact import learn_causal_inexact
from exactattn.models.decoder import random_causal
from exactattn.oracles.causal import CausalOracle

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="could not import 'torch': not installed")


def _true_error(found, truth):
    """max |Δ| over entries, heads paired by the best permutation."""
    def flat(h):
        return [x for r in h.W for x in r] + list(h.v)
    return min(max(abs(float(a) - float(b)) for h1, h2 in zip(p, truth.heads)
                   for a, b in zip(flat(h1), flat(h2)))
               for p in itertools.permutations(found.heads))


@pytest.mark.parametrize("H, kw", [(2, {}), (1, {"residual": True}), (2, {"slopes": F(1, 2)})])
def test_float_answers_give_a_certified_bar_that_holds(H, kw):
    m = random_causal(2, H, seed=3, slopes=kw.get("slopes"), residual=kw.get("residual", False))
    oracle = CausalOracle(lambda q: [float(y) for y in m(q, "mp", 30)], dim=2, backend="float")
    res = learn_causal_inexact(oracle, 2, heads=H, seed=1, **kw)
    bar = float(res.error_bar.bound)
    assert res.error_bar.rigorous and _true_error(res.model, m.canonical()) <= bar < 1e-2
    if kw.get("residual"):
        assert max(abs(float(a) - float(b)) for a, b in zip(res.model.residual, m.residual)) <= bar


def test_too_coarse_answers_are_ill_conditioned_with_the_precision_needed():
    m = random_causal(2, 2, seed=3)
    oracle = CausalOracle(lambda q: [float(f"{float(y):.6g}") for y in m(q, "mp", 30)], dim=2,
                          backend="float")
    with pytest.raises(IllConditioned) as e:
        learn_causal_inexact(oracle, 2, heads=2, seed=1, precision="1e-6")
    assert e.value.reason == "ill-conditioned" and "significant digits" in str(e.value)
    assert "not attention" not in str(e.value)


def _layer(torch, E, H, scale):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(E, H, bias=False).double().eval()
    with torch.no_grad():
        for p in mha.parameters():
            p.mul_(scale)
    return mha


@needs_torch
@pytest.mark.parametrize("slopes", [None, [F(1, 2), F(1, 4)]])
def test_causal_torch_layer_inside_its_error_bar(slopes):
    import torch
    from exactattn.adapters.torch_causal import causal_model, causal_oracle
    mha = _layer(torch, 2, 2, 4)
    truth = causal_model(mha, [1, 1], slopes)
    oracle = causal_oracle(mha, [1, 1], slopes=slopes, backend="float")
    q = [[0.5, -1.0], [0.25, 0.75], [1.0, 0.5]]
    assert max(abs(float(a) - b) for a, b in zip(truth(q, "mp", 30), oracle(q))) < 1e-14
    res = learn_causal_inexact(oracle, 2, heads=2, slopes=slopes, seed=1)
    assert _true_error(res.model, truth.canonical()) <= float(res.error_bar.bound)


@needs_torch
def test_causal_torch_layer_too_coarse_is_a_named_failure_not_not_attention():
    import torch
    from exactattn.adapters.torch_causal import causal_oracle
    with pytest.raises(LearningFailure) as e:
        learn_causal_inexact(causal_oracle(_layer(torch, 4, 2, 4), [1] * 4, backend="float"),
                             4, heads=2, seed=1)
    assert e.value.reason == "ill-conditioned" and "significant digits" in str(e.value)


@needs_torch
def test_a_mask_that_is_not_causal_is_refused():
    import torch
    from exactattn.adapters.torch_causal import causal_oracle
    mha = _layer(torch, 2, 2, 1)
    full = torch.zeros(4, 4)
    with pytest.raises(ValueError, match="not causal: position 1 sees position 2"):
        causal_oracle(mha, [1, 1], attn_mask=full)
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    o = causal_oracle(mha, [1, 1], attn_mask=causal, backend="float")
    assert len(o([[1.0, 0.0], [0.0, 1.0]])) == 2
