"""The PyTorch adapter on real nn.MultiheadAttention modules (docs/design.md §9).

Skipped where torch is absent (it is an extra); CI installs the CPU build."""

import importlib.util
import json
import random
from fractions import Fraction

import pytest

import exactattn as ea
from exactattn.adapters import torch as eat
from exactattn.cli.main import main

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="could not import 'torch': not installed (the torch "
                                       "extra; CI installs the CPU build)")


class _Torch:
    """torch, imported when a test first uses it (not when the suite is collected: the
    import costs a second or two in every process that collects this file)."""

    def __getattr__(self, name):
        if name.startswith("_"):         # pytest probes objects for its own markers
            raise AttributeError(name)
        import torch as module
        return getattr(module, name)


torch = _Torch()


def _layer(E, H, seed, bias=False, grid=8, scale=4, dtype=None, batch_first=True):
    """A layer whose weights are small dyadic rationals k/grid·scale (exact, small exponents)."""
    dtype = torch.float64 if dtype is None else dtype
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(E, H, batch_first=batch_first, bias=bias).to(dtype)
    with torch.no_grad():
        for name, p in mha.named_parameters():
            if "bias" not in name:
                p.copy_(torch.round(p * grid) / grid * scale)
    return mha.eval()


def _queries(E, count=6, seed=0):
    rng = random.Random(seed)
    return [[[rng.randint(-3, 3) for _ in range(E)] for _ in range(rng.randint(1, 4))]
            for _ in range(count)]


def _transposed(model):
    """The orientation a user tries first, W_q,hᵀ W_k,h: the planted bug."""
    return ea.MultiHeadAttention([ea.AttentionHead([list(c) for c in zip(*h.W)], h.v)
                                  for h in model.heads])


SHAPES = [(4, 1), (2, 2), (3, 3), (8, 2)]   # d_head = 4, 1, 1, 4: perfect squares


@pytest.mark.parametrize("E,H", SHAPES)
def test_forward_pass_is_the_exact_heads(E, H):
    """torch's float64 forward pass agrees with the exact model W_h = W_kᵀW_q/√d_h,
    v_h = (W_o,h W_v,h)ᵀ r to rounding; the transposed orientation does not."""
    mha = _layer(E, H, seed=E + H)
    r = [Fraction(1, 2)] + [Fraction(-1)] * (E - 1)
    truth = eat.heads(mha, r, canonical=False)
    assert truth.is_rational and len(truth.heads) == H
    o = eat.oracle(mha, r)
    worst, worst_t = 0.0, 0.0
    for X in _queries(E):
        exact = float(truth(X, "exact"))
        y = o(X)
        assert isinstance(y, float)
        worst = max(worst, abs(y - exact) / (1 + abs(exact)))
        worst_t = max(worst_t, abs(float(_transposed(truth)(X, "exact")) - exact))
    assert worst < 1e-12
    assert worst_t > 1e-3          # the check tells the two orientations apart
    assert o.backend.name == "float" and o.probe is not None and o.queries == 6


def test_non_square_head_dimension_gives_mp_heads():
    mha = _layer(2, 1, seed=3)     # d_head = 2: 1/√2 is irrational
    truth = eat.heads(mha, [1, 0], dps=40)
    assert not truth.is_rational
    X = [[1, 2], [0, -1], [2, 1]]
    assert abs(eat.oracle(mha, [1, 0])(X) - float(truth(X, "mp", dps=40))) < 1e-12


@pytest.mark.parametrize("E,H", SHAPES[:3])
def test_recovered_exactly_from_the_weights(E, H):
    """The ground truth from the weights is learned exactly (P2 count) and compares equal."""
    mha = _layer(E, H, seed=10 + H)
    truth = eat.heads(mha, [1] * E)
    res = ea.learn_multi_head(ea.Oracle(truth), E, heads=len(truth.heads), seed=1)
    c = res.compare(truth)
    assert c.exact and c.equal and c.max_error == 0
    assert res.queries == 4 * len(truth.heads) * E * E - 2 * len(truth.heads) + 1


@pytest.mark.parametrize("E,H", SHAPES[:3])
def test_recovered_from_the_float_forward_pass_or_named_failure(E, H):
    """From torch's own float64 answers: a result whose error bar (when the result carries
    one) contains the true error against the exact weights, or a named LearningFailure."""
    mha = _layer(E, H, seed=20 + H)
    truth = eat.heads(mha, [1] * E)
    try:
        res = ea.learn_multi_head(eat.oracle(mha, [1] * E), E, heads=len(truth.heads),
                                  seed=0, backend="float")
    except ea.LearningFailure as e:
        assert e.reason and e.reason != "learning-failure"
        return
    err = res.compare(truth).max_error
    assert err < float("inf")
    assert res.error_bar is not None                   # every float result carries one
    assert err <= res.error_bar.bound


def test_float32_module_and_dtype():
    mha64 = _layer(4, 1, seed=5, scale=1)
    mha32 = _layer(4, 1, seed=5, scale=1, dtype=torch.float32)
    r = [1, 0, 0, 0]
    assert eat.heads(mha32, r) == eat.heads(mha64, r)      # the same exact weights
    X = [[1, 2, 0, -1], [0, 1, 1, 2]]
    exact = float(eat.heads(mha64, r)(X, "exact"))
    y32 = eat.oracle(mha32, r)(X)
    y64 = eat.oracle(mha32, r, dtype=torch.float64)(X)
    assert abs(y32 - exact) < 1e-5 and abs(y64 - exact) < 1e-13
    assert abs(y32 - exact) > abs(y64 - exact)
    assert next(mha32.parameters()).dtype == torch.float32  # the user's layer is untouched


def test_batch_first_false():
    a = _layer(3, 3, seed=7)
    b = _layer(3, 3, seed=7, batch_first=False)
    X = [[1, 0, 2], [2, 1, -1]]
    assert abs(eat.oracle(a, [1, 1, 1])(X) - eat.oracle(b, [1, 1, 1])(X)) < 1e-14


def test_biases_enter_as_documented():
    mha = _layer(4, 1, seed=8, bias=True)
    with torch.no_grad():
        mha.in_proj_bias.copy_(torch.round(torch.randn(12) * 8) / 8 + 1)
        mha.out_proj.bias.copy_(torch.round(torch.randn(4) * 8) / 8)
    r = [1, -1, 0, 2]
    with pytest.raises(ValueError, match="query bias"):
        eat.oracle(mha, r)
    with pytest.raises(ValueError, match="query bias"):
        eat.heads(mha, r)
    with torch.no_grad():
        mha.in_proj_bias[:4] = 0     # the key and value biases stay
    c = eat.constant_offset(mha, r)
    assert c != 0
    truth = eat.heads(mha, r)
    o = eat.oracle(mha, r)
    X = [[1, 2, 0, -1], [0, 1, 1, 2], [1, 1, 1, 1]]
    exact = float(truth(X, "exact"))
    assert abs(o(X) - exact) < 1e-12
    with torch.no_grad():     # what the oracle removed: the raw answer is offset by c exactly
        raw = float(mha(*(torch.tensor([X], dtype=torch.float64),) * 3)[0][0, -1]
                    @ torch.tensor(r, dtype=torch.float64))
    assert abs(raw - exact - float(c)) < 1e-12


def test_refusals():
    r = [1, 0, 0, 0]
    with pytest.raises(ValueError, match="add_bias_kv"):
        eat.heads(torch.nn.MultiheadAttention(4, 2, batch_first=True, add_bias_kv=True), r)
    with pytest.raises(ValueError, match="add_zero_attn"):
        eat.oracle(torch.nn.MultiheadAttention(4, 2, add_zero_attn=True), r)
    with pytest.raises(ValueError, match="eval"):
        eat.oracle(torch.nn.MultiheadAttention(4, 2, dropout=0.1), r)
    with pytest.raises(ValueError, match="readout"):
        eat.heads(_layer(4, 2, seed=0), [1, 0])
    with pytest.raises(ValueError, match="num_heads"):
        eat.heads(eat.state_of(_layer(4, 2, seed=0)), r)


def test_a_plain_callable_may_answer_with_a_0d_tensor():
    mha = _layer(2, 2, seed=9)

    def f(tokens):
        X = torch.tensor([tokens], dtype=torch.float64)
        with torch.no_grad():
            return mha(X, X, X)[0][0, -1, 0]        # a 0-d tensor
    o = ea.Oracle(f)
    assert o([[1, 0], [0, 1]]) == pytest.approx(eat.oracle(mha, [1, 0])([[1, 0], [0, 1]]))
    assert o.backend.name == "float"


# ---------------------------------------------------------------------- files and the CLI
def test_from_torch_cli(tmp_path, capsys):
    mha = _layer(4, 2, seed=11)
    r = [1, 0, 0, 0]
    sd, mod = tmp_path / "sd.pt", tmp_path / "mod.pt"
    torch.save(mha.state_dict(), sd)
    torch.save(mha, mod)
    truth = eat.heads(mha, r)
    for argv in (["model", "from-torch", str(sd), "--heads", "2", "--readout", "e0"],
                 ["model", "from-torch", str(mod), "--readout", "1,0,0,0"]):
        assert main(argv) == 0
        assert ea.model_from_json(capsys.readouterr().out) == truth
    assert main(["model", "from-torch", str(sd), "--readout", "e0"]) == 2
    assert "--heads" in capsys.readouterr().err
    assert main(["model", "from-torch", str(mod), "--heads", "4", "--readout", "e0"]) == 2
    capsys.readouterr()

    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = _layer(4, 2, seed=1), _layer(4, 1, seed=2)
    two = tmp_path / "two.pt"
    torch.save(Two().state_dict(), two)
    assert main(["model", "from-torch", str(two), "--heads", "1", "--readout", "e1"]) == 2
    assert "--prefix" in capsys.readouterr().err
    assert main(["model", "from-torch", str(two), "--heads", "1", "--readout", "e1",
                 "--prefix", "b."]) == 0
    out = json.loads(capsys.readouterr().out)
    assert ea.model_from_json(out) == eat.heads(_layer(4, 1, seed=2), [0, 1, 0, 0])
    assert main(["model", "from-torch", str(tmp_path / "none.pt"), "--readout", "e0"]) == 2


def test_threads_are_restored():
    before = torch.get_num_threads()
    o = eat.oracle(_layer(2, 2, seed=1), [1, 1], threads=1)
    o([[1, 0], [0, 1]])
    assert torch.get_num_threads() == before


# ---------------------------------------------------------------------- the dtype's precision
from exactattn.learners.result.precision import (FLOAT32_PRECISION, FLOAT64_PRECISION,  # noqa: E402
                                                 declared_precision, infer_precision)


def _outcome(mha, H, r, declare=None):
    """(result or LearningFailure, truth) of the multi-head learner on the layer's own forward
    pass; ``declare`` overrides the declared precision (the planted bug)."""
    truth = eat.heads(mha, r)
    o = eat.oracle(mha, r)
    if declare is not None:
        o.declared_precision = declare
    try:
        return ea.learn_multi_head(o, len(r), heads=H, seed=0), truth
    except ea.LearningFailure as e:
        return e, truth


def _dishonest(outcome, truth):
    """Why an outcome on a float32 attention layer is not honest (None if it is): a result
    must hold the true heads inside its error bar; a failure must be a precision failure
    (never "not attention … certain") that names float32's η and the float64 fix."""
    if isinstance(outcome, ea.LearningFailure):
        if isinstance(outcome, ea.NotAttention) or "certain" in str(outcome):
            return f"{outcome.reason}: {outcome}"
        if outcome.reason not in ("ill-conditioned", "unresolved-heads"):
            return f"unexpected failure {outcome.reason}"
        if outcome.details["precision"]["eta"] != f"{float(FLOAT32_PRECISION):.3g}" or \
                "float64" not in str(outcome):
            return f"the failure does not name float32's precision and the fix: {outcome}"
        return None
    err = outcome.compare(truth).max_error
    if not err <= outcome.error_bar.bound:
        return f"true error {err} outside the error bar {outcome.error_bar}"
    return None


@pytest.mark.parametrize("H", [1, 2])
@pytest.mark.slow
def test_default_float32_layer_is_never_certainly_not_attention(H):
    """A default float32 nn.MultiheadAttention (torch's own init and dtype, several seeds) is
    read at float32's precision: a result inside its error bar, or a named precision failure
    with the fix (docs/models.md, Float32 layers)."""
    r = [1, 0, 0, 0]
    for seed in range(4):
        torch.manual_seed(seed)
        mha = torch.nn.MultiheadAttention(4, H, batch_first=True).eval()
        assert next(mha.parameters()).dtype == torch.float32
        assert declared_precision(eat.oracle(mha, r)).eta == FLOAT32_PRECISION
        outcome, truth = _outcome(mha, H, r)
        assert _dishonest(outcome, truth) is None, (seed, _dishonest(outcome, truth))


def test_float32_layer_read_at_float64_precision_is_caught():
    """The planted bug: the same layers declared float64-precise (the adapter before it read
    the dtype) end in "not-attention … certain" — the check above sees it."""
    r = [1, 0, 0, 0]
    bad = []
    for seed in range(4):
        torch.manual_seed(seed)
        mha = torch.nn.MultiheadAttention(4, 1, batch_first=True).eval()
        outcome, truth = _outcome(mha, 1, r, declare={"format": "float64"})
        bad.append(_dishonest(outcome, truth))
    assert sum(b is not None and "certain" in b for b in bad) >= 2, bad


def test_float32_layer_in_float64_is_certified():
    """The fix the failure names: the same float32 layer run in float64 is learned, the true
    error inside the certified bar."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(4, 1, batch_first=True).eval()
    r = [1, 0, 0, 0]
    o = eat.oracle(mha, r, dtype=torch.float64)
    assert declared_precision(o).eta == FLOAT64_PRECISION
    res = ea.learn_multi_head(o, 4, heads=1, seed=0)
    assert res.error_bar.rigorous
    assert res.compare(eat.heads(mha, r)).max_error <= res.error_bar.bound


def test_declared_precision_of_each_dtype_and_bias():
    r = [1, 0, 0, 0]
    mha = _layer(4, 1, seed=5, scale=1, dtype=torch.float32)
    for dtype, eta in ((torch.float64, Fraction(2 ** 8, 2 ** 52)),
                       (torch.float32, Fraction(2 ** 8, 2 ** 23)),
                       (torch.float16, Fraction(1, 4)), (torch.bfloat16, Fraction(2))):
        p = declared_precision(eat.oracle(mha, r, dtype=dtype))
        assert p.eta == eta and p.relative
        # every dtype names the weights' exact route; only the shorter formats say float64
        assert "from-torch" in p.remedy and "input_scale=" in p.remedy
        assert ("run its forward pass in float64" in p.remedy) == (dtype != torch.float64)
    with pytest.raises(ValueError, match="floating-point"):
        eat.oracle(mha, r, dtype=torch.int32)
    biased = _layer(4, 1, seed=8, bias=True, dtype=torch.float32)
    with torch.no_grad():
        biased.in_proj_bias.copy_(torch.tensor([0.0] * 4 + [0.5] * 8))
        biased.out_proj.bias.copy_(torch.full((4,), 0.25))
    c = eat.constant_offset(biased, r)
    assert c != 0
    assert declared_precision(eat.oracle(biased, r)).eta == FLOAT32_PRECISION * (1 + abs(c))


def test_float32_answers_through_a_plain_function_are_float32():
    """A float32 oracle wrapped in a lambda (the declaration lost) is still read as float32
    from its answers; float64 answers and a few short dyadic ones stay float64."""
    torch.manual_seed(1)
    o = eat.oracle(torch.nn.MultiheadAttention(4, 1, batch_first=True).eval(), [1, 0, 0, 0])
    rng = random.Random(0)
    answers = [o([[rng.gauss(0, 0.5) for _ in range(4)] for _ in range(3)]) for _ in range(5)]
    assert infer_precision(None, answers).eta == FLOAT32_PRECISION
    o64 = eat.oracle(_layer(4, 1, seed=5, scale=1), [1, 0, 0, 0])
    answers64 = [o64([[rng.gauss(0, 0.5) for _ in range(4)] for _ in range(3)])
                 for _ in range(5)]
    assert infer_precision(None, answers64).eta == FLOAT64_PRECISION
    assert infer_precision(None, [0.5, 1.25, 0.0]).eta == FLOAT64_PRECISION


def test_a_contradiction_is_certain_only_when_every_family_has_h_poles(monkeypatch):
    """Three heads of a default float32 layer (E = 3), answered exactly, at a stated η = 3e-5:
    the three poles crowd within the balls, each family fits one pole only, and the matching
    then fails — ill-conditioned, not "certain".  Planted: the old rule (no pole-count
    condition) calls it certainly not attention."""
    from exactattn.learners.p2 import inexact
    torch.manual_seed(0)
    truth = eat.heads(torch.nn.MultiheadAttention(3, 3, batch_first=True).eval(),
                      [1, 0, 0], dps=30)

    def run():
        return ea.learn_multi_head(ea.Oracle(truth, backend="float"), 3, heads=3, seed=0,
                                   oracle_precision=3.05e-5)
    with pytest.raises(ea.LearningFailure) as e:
        run()
    assert e.value.reason == "ill-conditioned" and "certain" not in str(e.value)
    monkeypatch.setattr(inexact, "_contradiction", lambda e, heads: isinstance(
        e, ea.NotAttention) and heads is not None and e.details.get("candidates") == 0)
    with pytest.raises(ea.NotAttention, match="certain"):
        run()


# ---------------------------------------------------------------------- a default layer
def _default(E=4, H=2, seed=0):
    """torch's own nn.MultiheadAttention(E, H) (Xavier init, zero biases), in float64."""
    torch.manual_seed(seed)
    return torch.nn.MultiheadAttention(E, H).double().eval()


def test_input_scale_asks_f_of_cx_exactly():
    """oracle(input_scale=c) answers F(cX) bit for bit; c must be a power of two (c·x is then
    exact in floating point): 3, 0, −2 and True are refused."""
    mha = _default()
    r = [1, 0, 0, 0]
    plain, scaled = eat.oracle(mha, r), eat.oracle(mha, r, input_scale=4)
    for X in _queries(4):
        assert scaled(X) == plain([[4 * x for x in t] for t in X])
    assert eat.oracle(mha, r, input_scale=Fraction(1, 2))([[2, 0, 0, 0]]) == \
        plain([[1, 0, 0, 0]])
    for bad in (3, 0, -2, True, 0.3):
        with pytest.raises(ValueError, match="power of two"):
            eat.oracle(mha, r, input_scale=bad)


def test_unscale_maps_heads_and_bar_back():
    """Heads learned from F(cX) are (c²W, c·v): unscale returns (W, v) exactly and divides the
    bar by min(c, c²) (both W and v errors shrink at least that much)."""
    truth = eat.heads(_layer(4, 1, seed=3), [1, 0, 0, 0])
    for c in (4, Fraction(1, 2)):
        scaled = [(([[c * c * x for x in row] for row in h.W]), [c * x for x in h.v])
                  for h in truth.heads]
        model, bound = eat.unscale(scaled, c)
        assert model.head_set() == truth.head_set() and bound is None

        class Result:
            heads = [ea.AttentionHead(W, v) for W, v in scaled]
            error_bar = type("Bar", (), {"bound": Fraction(1)})()
        assert eat.unscale(Result, c)[1] == 1 / min(c, c * c)


def test_suggested_scale_follows_the_scores():
    """typical_score grows as the product of the query and key weights: doubling every input
    projection multiplies the scores by 4 and halves the suggested c (c²·score ≈ 1)."""
    mha = _default()
    s, c = eat.typical_score(mha), eat.suggested_scale(mha)
    assert 0.02 < s < 0.5 and c == 4 and 0.5 <= c * c * s <= 4
    with torch.no_grad():
        mha.in_proj_weight.mul_(2)
    assert eat.typical_score(mha) == pytest.approx(4 * s, rel=1e-9)
    assert eat.suggested_scale(mha) == 2


def test_default_layer_learned_from_its_forward_pass_within_its_certified_bar():
    """The target of docs/models.md: a default nn.MultiheadAttention(4, 2), float64 forward
    pass, learned at the suggested input scale c = 4 (resample=True) — a certified ball
    enclosure, the true heads (exact, from the weights) inside it."""
    mha = _default()
    r = [1, 0, 0, 0]
    c = eat.suggested_scale(mha)
    res = ea.learn_multi_head(eat.oracle(mha, r, input_scale=c), 4, heads=2, seed=0,
                              resample=True, max_attempts=10)
    model, bound = eat.unscale(res, c)
    truth = eat.heads(mha, r)
    assert res.error_bar.rigorous
    assert ea.parameter_error(truth, model.heads) <= bound < 1e-2


def test_default_layer_at_c_1_is_told_exactly_why():
    """At c = 1 the same layer fails by name, saying which quantity (the poles of one named
    copy-count family), the scale that fixes it and the weights' exact route with its
    commands; never "not attention", never a limit of ours."""
    mha = _default()
    from exactattn.errors import IllConditioned
    with pytest.raises(IllConditioned) as e:
        ea.learn_multi_head(eat.oracle(mha, [1, 0, 0, 0]), 4, heads=2, seed=0)
    text, d = str(e.value), e.value.details
    assert "poles" in d["quantity"] and d["family"].startswith("I(u")
    assert f"copy-count family {d['family']}" in text
    assert "input_scale=4" in text and "unscale(result, 4)" in text
    assert "exactattn model from-torch mha.pt --readout e0 > m.json && exactattn learn " \
           "multi-head --model m.json" in text
    assert "not attention" not in text.lower() and "computed up to" not in text
    assert "computed up to" in d["first_order"]     # the limit stays in the details


def test_from_torch_then_learn_without_backend(tmp_path, capsys):
    """`model from-torch` of a default layer (d_head = 2: √2 makes the heads real) feeds
    `learn --model` with no --backend: mp is chosen, the heads are recovered."""
    mha = _default()
    pt, m = tmp_path / "mha.pt", tmp_path / "m.json"
    torch.save(mha.float(), pt)
    assert main(["model", "from-torch", str(pt), "--readout", "e0"]) == 0
    m.write_text(capsys.readouterr().out)
    assert main(["learn", "multi-head", "--model", str(m), "--quiet", "--json"]) == 0
    o = json.loads(capsys.readouterr().out)
    assert o["backend"] == "mp" and o["recovered"] is True
