"""Inexact backends prove less, and say so (docs/design.md §8): certified ball arithmetic,
error bars on every mp/float result, named inexact failures, input honesty."""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from flint import arb

import exactattn as ea
from exactattn.arith.ball import BallBackend, BallField, ball
from exactattn.arith.mp import MIN_DPS, MPBackend
from exactattn.arith.numbers import exact_fraction
from exactattn.errors import IllConditioned, LearningFailure, UnresolvedHeads
from exactattn.learners.result.compare import parameter_error
from exactattn.learners.p2.enclosure import enclosure_contains
from exactattn.learners.p1.low_rank import learn_low_rank, random_low_rank_head
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.result.precision import (FLOAT64_PRECISION, OraclePrecision,
                                          infer_precision)
from exactattn.learners.p1.single_head import learn_single_head
from exactattn.models.attention import AttentionHead, MultiHeadAttention, random_multi_head
from exactattn.oracles.oracle import Additive, Oracle


def _truth(model):
    return [(h.W, h.v) for h in model.canonical().heads]


# ---------------------------------------------------------------------- the ball field
def test_ball_zero_test_refuses_to_decide_and_pivots_only_on_nonzero_balls():
    f = BallField()
    with BallBackend(100).working():
        assert f.is_zero(arb(0, 1e-3)) and not f.is_zero(arb(1, 1e-3))
        assert f.pivot([arb(0, 1), arb("0.5", "0.1"), arb(-2, 3)]) == 1
        assert f.pivot([arb(0, 1), arb(1, 2)]) is None


def test_ball_roots_enclose_the_roots_of_every_member():
    f = BallField()
    with BallBackend(120).working():
        # (1 + 2m)(1 + 3m) = 1 + 5m + 6m², coefficients widened by 1e-12
        coeffs = [arb(1), ball(5, Fraction(1, 10 ** 12)), ball(6, Fraction(1, 10 ** 12))]
        roots, ok = f.roots(coeffs)
        assert ok and len(roots) == 2
        rng = random.Random(0)
        for _ in range(20):   # members of the balls: their roots lie in the enclosures
            b = 5 + rng.uniform(-1, 1) * 1e-12
            c = 6 + rng.uniform(-1, 1) * 1e-12
            disc = mpmath.sqrt(mpmath.mpf(b) ** 2 - 4 * c)
            exact = sorted([(-b - disc) / (2 * c), (-b + disc) / (2 * c)])
            for (r, _), x in zip(roots, exact):
                assert r.contains(ball(x))
        # radii too wide to separate the two roots: refused, not guessed
        wide = [arb(1), ball(5, Fraction(1, 10)), ball(6, Fraction(1, 10))]
        assert f.roots(wide)[1] is False


def test_verified_solve_contains_every_member_solution():
    f = BallField()
    rng = random.Random(1)
    with BallBackend(100).working():
        A = [[Fraction(rng.randint(-9, 9), 7) + (i == j) * 5 for j in range(3)] for i in range(3)]
        b = [Fraction(rng.randint(-9, 9), 3) for _ in range(3)]
        r = Fraction(1, 10 ** 8)
        x = f.solve([[ball(a, r) for a in row] for row in A], [ball(c, r) for c in b])
        import sympy
        for _ in range(10):
            Ap = [[a + r * Fraction(rng.randint(-100, 100), 100) for a in row] for row in A]
            bp = [c + r * Fraction(rng.randint(-100, 100), 100) for c in b]
            sol = sympy.Matrix(Ap).LUsolve(sympy.Matrix(bp))
            for xi, si in zip(x, sol):
                assert xi.contains(ball(Fraction(int(si.p), int(si.q))))
        # a singular member in the box: not certified
        assert f.solve([[ball(1, r), ball(1, r)], [ball(1, r), ball(1, r)]], [arb(1), arb(1)]) \
            is None


# ---------------------------------------------------------------------- enclosures hold
@pytest.mark.parametrize("mode", ["adversarial", "random"])
def test_multi_head_enclosure_contains_truth_under_noise_within_tau(mode):
    model = random_multi_head(2, 2, seed=1, kind="real")
    tau = Fraction(1, 10 ** 20)
    orc = Oracle(model, backend="mp", dps=40, noise=Additive(tau, mode, 3))
    res = learn_multi_head(orc, 2, heads=2, seed=0)
    bar = res.error_bar
    assert bar.method == "ball" and bar.rigorous and not bar.precision.relative
    assert tau < bar.precision.eta < tau * (1 + Fraction(1, 10 ** 6))
    assert enclosure_contains(
        type("E", (), {"heads": bar.enclosure, "prec_bits": bar.details["prec_bits"]})(),
        _truth(model))
    assert parameter_error(model, res.heads, dps=80) <= bar.bound


def test_shrunk_radius_loses_the_truth(monkeypatch):
    """Planted bug: balls 10⁶ times too narrow.  Adversarial noise then moves the answers
    outside them, and the run either fails or its enclosure misses the true heads."""
    model = random_multi_head(2, 2, seed=1, kind="real")
    tau = Fraction(1, 10 ** 20)
    orig = OraclePrecision.radius
    monkeypatch.setattr(OraclePrecision, "radius", lambda self, y: orig(self, y) / 10 ** 6)
    orc = Oracle(model, backend="mp", dps=40, noise=Additive(tau, "adversarial", 3))
    try:
        res = learn_multi_head(orc, 2, heads=2, seed=0)
    except LearningFailure:
        return
    bar = res.error_bar
    enc = type("E", (), {"heads": bar.enclosure, "prec_bits": bar.details["prec_bits"]})()
    assert not enclosure_contains(enc, _truth(model))


def test_single_head_and_low_rank_enclosures_contain_truth_under_noise():
    head = ea.random_head(3, seed=2, kind="real")
    tau = Fraction(1, 10 ** 25)
    res = learn_single_head(Oracle(head, backend="mp", dps=40,
                                   noise=Additive(tau, "adversarial", 1)), 3)
    (W, v), = res.error_bar.enclosure
    with BallBackend(200).working():
        assert all(b.contains(ball(x)) for rb, rx in zip(W, head.W) for b, x in zip(rb, rx))
        assert all(b.contains(ball(x)) for b, x in zip(v, head.v))
    low = random_low_rank_head(4, 2, seed=3, kind="real")
    res = learn_low_rank(Oracle(low, backend="mp", dps=40,
                                noise=Additive(tau, "adversarial", 1)), 4, rank=2)
    assert parameter_error(low, res.heads, dps=80) <= res.error_bar.bound


def test_single_head_shrunk_radius_loses_the_truth(monkeypatch):
    head = ea.random_head(3, seed=2, kind="real")
    tau = Fraction(1, 10 ** 25)
    orig = OraclePrecision.radius
    monkeypatch.setattr(OraclePrecision, "radius", lambda self, y: orig(self, y) / 10 ** 6)
    res = learn_single_head(Oracle(head, backend="mp", dps=40,
                                   noise=Additive(tau, "adversarial", 1)), 3, validate=0)
    assert not parameter_error(head, res.heads, dps=80) <= res.error_bar.bound


# ---------------------------------------------------------------------- float64 oracles
def test_float64_oracle_at_default_settings():
    """A float64 oracle (answers of 53 bits) behind the mp backend at its default dps 50: the
    precision is inferred from the answers and the result carries a valid bar."""
    model = random_multi_head(2, 2, seed=1, kind="real")
    inner = Oracle(model, backend="float")
    res = learn_multi_head(Oracle(lambda t: float(inner(t)), dim=2, backend="mp"), 2, heads=2,
                           seed=0)
    assert res.error_bar.precision.eta == FLOAT64_PRECISION
    assert "float64" in res.error_bar.precision.source
    assert parameter_error(model, res.heads, dps=60) <= res.error_bar.bound
    res = learn_multi_head(Oracle(model, backend="float"), 2, heads=2, seed=0)
    assert parameter_error(model, res.heads) <= res.error_bar.bound
    # the printed bar and the JSON one are rounded up: never below the certified bound
    bound = exact_fraction(res.error_bar.bound)
    printed = str(res.error_bar).split()[0].lstrip("±")
    assert bound <= Fraction(printed) <= bound * Fraction(101, 100)
    assert bound <= Fraction(res.error_bar.summary()["bound"])


@pytest.mark.parametrize("d", range(3, 9))
def test_two_heads_1e4_apart_on_float64_are_never_one_head(d):
    base = random_multi_head(d, 1, seed=d, kind="real").heads[0]
    W2 = [[x + (1e-4 if i == j else 0) for j, x in enumerate(r)] for i, r in enumerate(base.W)]
    model = MultiHeadAttention([base, AttentionHead(W2, [0.5 * x + 0.1 for x in base.v])])
    try:
        res = learn_multi_head(Oracle(model, backend="float"), d, heads=2, seed=0)
    except (UnresolvedHeads, IllConditioned):
        return
    assert len(res.heads) == 2 and parameter_error(model, res.heads) <= res.error_bar.bound


@pytest.mark.parametrize("seed", range(8))
def test_d1_h3_float_is_three_heads_within_the_bar_or_named(seed):
    model = random_multi_head(1, 3, seed=seed, kind="real")
    try:
        res = learn_multi_head(Oracle(model, backend="float"), 1, heads=3, seed=0)
    except (UnresolvedHeads, IllConditioned):
        return
    assert len(res.heads) == 3
    assert parameter_error(model, res.heads) <= res.error_bar.bound


def test_fewer_heads_than_told_is_unresolved_heads():
    model = random_multi_head(2, 1, seed=4, kind="real")
    with pytest.raises(UnresolvedHeads) as e:
        learn_multi_head(Oracle(model, backend="mp", dps=30), 2, heads=2, seed=0)
    assert e.value.reason == "unresolved-heads" and e.value.details["heads"] == 2


def test_asked_accuracy_below_the_bar_is_ill_conditioned_with_needed_precision():
    model = random_multi_head(2, 2, seed=1, kind="real")
    with pytest.raises(IllConditioned) as e:
        learn_multi_head(Oracle(model, backend="mp", dps=30), 2, heads=2, seed=0,
                         oracle_precision=Fraction(1, 10 ** 12), accuracy=Fraction(1, 10 ** 9))
    assert e.value.reason == "ill-conditioned" and e.value.details["needed_precision"]
    assert float(e.value.details["needed_precision"]) < 1e-12


def test_precision_inference_rules():
    assert infer_precision(None, [0.5, 1.25]).eta == FLOAT64_PRECISION
    be = MPBackend(40)
    third = be.ctx.mpf(1) / 3
    p = infer_precision(Oracle(lambda t: 0, dim=1, backend=be), [third])
    assert p.eta == Fraction(1, 10 ** 37)
    p = infer_precision(None, [third], Fraction(1, 10 ** 9))
    assert p.source == "stated" and p.eta == Fraction(1, 10 ** 9)
    with pytest.raises(ValueError):
        infer_precision(None, [third], 2)


# ---------------------------------------------------------------------- input honesty
@pytest.mark.parametrize("backend", ["mp", "float"])
def test_non_finite_numbers_are_one_line_errors_naming_the_entry(backend):
    orc = Oracle(lambda t: float("nan"), dim=2, backend=backend)
    with pytest.raises(ea.OracleError, match="oracle answer") as e:
        orc([[1, 0]])
    assert isinstance(e.value.__cause__, ValueError)
    orc = Oracle(random_multi_head(2, 1, seed=1, kind="real"), backend=backend)
    with pytest.raises(ValueError, match="token 0, entry 1"):
        orc([[1.0, float("inf")]])
    bad = MultiHeadAttention([AttentionHead([[float("nan"), 0], [0, 0]], [1, 1])])
    with pytest.raises(ValueError, match=r"W\[0\]\[0\]"):
        Oracle(bad, backend=backend)([[1, 0]])


def test_real_entries_read_at_full_precision_and_one_dps_minimum():
    be = MPBackend(50)
    text = "0.12345678901234567890123456789012345678901234567"
    assert be.scalar(text) == be.ctx.mpf(text)
    assert abs(be.scalar(text) - be.scalar(float(text))) > 1e-20
    with pytest.raises(ValueError, match=str(MIN_DPS)):
        MPBackend(MIN_DPS - 1)
    from exactattn.cli.main import main
    for cmd in (["learn", "multi-head", "--dim", "2", "--backend", "mp"],
                ["noise", "single-head", "--dim", "2"]):
        with pytest.raises(SystemExit) as e:
            main(cmd + ["--dps", str(MIN_DPS - 1)])
        assert e.value.code == 2


def test_cli_summary_prints_each_relation_as_it_is():
    from exactattn.cli.learn import _inexact_how
    o = {"max_error": 1.5e-8, "max_error_text": "1.5e-8", "tolerance": 1e-9, "accuracy": 1e-9,
         "error_bar_value": 2e-8,
         "error_bar": {"bound": "2e-8", "rigorous": True,
                       "precision": {"eta": "1e-14", "source": "stated"}}}
    line = _inexact_how(o)
    assert "1.5e-8 ≤ error bar" in line and "> accuracy" in line and "≤ accuracy" not in line
    o["error_bar_value"], o["error_bar"]["bound"] = 1e-8, "1e-8"
    assert "1.5e-8 > error bar" in _inexact_how(o)


@settings(max_examples=40, deadline=None)
@given(zs=st.lists(st.fractions(min_value=Fraction(1, 1000), max_value=1000,
                                max_denominator=1000), min_size=1, max_size=5, unique=True),
       dps=st.sampled_from([20, 50, 120]))
def test_mp_roots_of_a_copy_count_denominator_are_its_poles(zs, dps):
    """RealField.roots on mp (flint-isolated, refined, rounded to the context): the roots
    of Q(m) = Π (1 + m z_h) are −1/z_h to the context's precision, all found real."""
    from exactattn.arith.fields import RealField
    from exactattn.arith.mp import MPBackend
    be = MPBackend(dps)
    ctx = be.ctx
    Q = [ctx.mpf(1)]
    for z in zs:                                   # Q ← Q·(1 + m z)
        zz = ctx.mpf(z.numerator) / z.denominator
        Q = [a + zz * b for a, b in zip(Q + [ctx.mpf(0)], [ctx.mpf(0)] + Q)]
    roots, complete = RealField(be).roots(Q)
    assert complete and len(roots) == len(zs)
    want = sorted(-1 / (ctx.mpf(z.numerator) / z.denominator) for z in zs)
    got = sorted(r for r, _ in roots)
    for a, b in zip(got, want):
        assert abs(a - b) <= abs(b) * ctx.mpf(10) ** (-(dps * 3 // 4))


# ---------------------------------------------------------------------- the quantity named
def test_an_ill_conditioned_failure_names_the_family_being_solved():
    """ill_conditioned_quantity reads the family from the ball engine's pole counts, in the
    order the recovery solves them (the families ending in x₁ first), and names the quantity
    of each failure kind; none says "not attention"."""
    from exactattn.errors import NotAttention, SingularSystem
    from exactattn.learners.p2.inexact import ill_conditioned_quantity
    from exactattn.learners.p2.matching import key_label
    from exactattn.learners.p2.schedule import Schedule
    S = Schedule([[1, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], 2)
    order = [f for f in S.families if f.ends_in_x1] + \
        [f for f in S.families if not f.ends_in_x1]
    for k in (1, len([f for f in order if f.ends_in_x1]) + 1, len(order)):
        fam = order[k - 1]
        label = f"I(u{key_label(fam.u_key)}, x{key_label(fam.x_key)})"
        e = NotAttention("does not split: not attention", degree=2, roots_found=0,
                         pole_counts=[2] * (k - 1) + [0])
        what, family, local = ill_conditioned_quantity(e, S)
        assert family == label and f"{label} (family {k} of {len(order)} in the order solved)" in what
        assert "poles" in what and local
    kinds = {"residue": NotAttention("a pole with zero residue", pole="3", pole_counts=[0]),
             "interpolation": NotAttention("not rational: not attention", samples=5, bound=2,
                                           pole_counts=[0]),
             "matching": NotAttention("matching I(u2, x1): no candidate", family="I(u2, x1)",
                                      candidates=0),
             "bases": SingularSystem("singular")}
    for word, e in kinds.items():
        what = ill_conditioned_quantity(e, S)[0]
        assert word in what and "not attention" not in what, (word, what)
