"""The copy-count interpolation in F_p (exactattn/learners/p2/interpolation.py, P2 §4;
docs/design.md §4.3): the fit reproduces every sample, a lower type is found when it exists,
poles and residues are read back exactly, and F_p's multipoint evaluation is Horner's."""

import random

import pytest
from hypothesis import given, settings, strategies as st

from exactattn.arith.fields import PrimeField
from exactattn.errors import NotAttention
from exactattn.learners.p2.interpolation import (fit_rational, poles_and_residues, poly_eval,
                                                 poly_values, solve_family)

F = PrimeField((1 << 61) - 1)          # a Mersenne prime


class SystemsField(PrimeField):
    """F_p fitting by the linearised systems (as for the ladder's primes above 2^63): the
    reference that the extended-Euclid fit of a word-size prime must agree with."""

    def rational_fit(self, ys, max_degree):
        return NotImplemented


F_SYS = SystemsField(F.p)
BOTH = pytest.mark.parametrize("field", [F, F_SYS], ids=["euclid", "systems"])


def _horner(coeffs, m):
    acc = F.zero
    for c in reversed(coeffs):
        acc = acc * m + c
    return acc


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, F.p - 1), min_size=1, max_size=9),
       st.lists(st.integers(0, F.p - 1), max_size=12))
def test_multipoint_evaluation_is_horner(coeffs, points):
    cs = [F.ctx(c) for c in coeffs]
    pts = [F.ctx(m) for m in points]
    assert F.values(cs, pts) == [_horner(cs, m) for m in pts]
    assert poly_values(cs, pts, F) == [poly_eval(cs, m, F) for m in pts]


def _samples(rng, n, count):
    """G(m) = K + Σ c_h/(1 + m z_h) at m = 0 … count − 1, with n distinct poles z_h and
    nonzero residues (redrawn while a denominator vanishes)."""
    while True:
        K = F.ctx(rng.randrange(F.p))
        heads = {}
        while len(heads) < n:
            heads[rng.randrange(1, F.p)] = rng.randrange(1, F.p)
        zs = [(F.ctx(z), F.ctx(c)) for z, c in heads.items()]
        dens = [[1 + m * z for z, _ in zs] for m in range(count)]
        if all(not d.is_zero() for row in dens for d in row):
            return K, zs, [K + sum((c / d for (_, c), d in zip(zs, row)), F.zero)
                           for row in dens]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(0, 4), st.integers(0, 2))
def test_poles_and_residues_are_read_back_exactly(seed, n, extra):
    """From 2H₀ + 1 samples of a function of type n ≤ H₀ = n + extra: the same K, poles and
    residues (the type is the lowest that fits every sample)."""
    K, heads, ys = _samples(random.Random(seed), n, 2 * (n + extra) + 1)
    got_K, got = solve_family(F, ys, n + extra)
    assert got_K == K and sorted(map(tuple, got), key=str) == sorted(heads, key=str)


@BOTH
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 6), H0=st.integers(1, 4))
def test_the_fit_reproduces_every_sample(field, seed, H0):
    """Arbitrary samples (no rational function behind them): whatever type ≤ H₀ is returned
    fits every sample with Q(m) ≠ 0, checked here by Horner; or NotAttention."""
    rng = random.Random(seed)
    ys = [F.ctx(rng.randrange(F.p)) for _ in range(2 * H0 + 1)]
    ms = list(range(len(ys)))
    try:
        fit = fit_rational(field, ms, ys, H0)
    except NotAttention:
        return
    for m, y in zip(ms, ys):
        q = _horner(fit.Q, F.ctx(m))
        assert not q.is_zero() and _horner(fit.P, F.ctx(m)) == y * q


@BOTH
def test_a_sample_beyond_the_square_system_is_checked(field):
    """Type 1 on the first three samples, the fifth changed: the type-1 solution fits the
    three it was solved on but not the fifth, so it must be refused (a planted check that
    skips the samples past the square system returns it).  Type 2 then is S·(P₁, Q₁) with
    S(4) = 0, so Q vanishes at the fifth sample and is refused too (a planted check that
    skips Q(m) ≠ 0 returns it): no type ≤ 2 fits."""
    K, heads, ys = _samples(random.Random(7), 1, 5)
    assert fit_rational(field, list(range(5)), ys, 2, hint=1).n == 1
    ys[4] = ys[4] + 1
    with pytest.raises(NotAttention, match="not a rational function of type"):
        fit_rational(field, list(range(5)), ys, 2, hint=1)


def _structured(rng, H0, kind):
    """Samples at m = 0…N−1, N = 2H₀+1…2H₀+3, of the kinds that decide a fit: a type-n
    function (K = 0 allowed), one with a polynomial part, one whose pole sits on a node,
    one sample changed, or no function at all."""
    N = 2 * H0 + 1 + rng.randrange(3)
    n = rng.randrange(H0 + 2)
    K = F.ctx(rng.randrange(F.p)) if rng.randrange(3) else F.zero
    zs = [F.ctx(rng.randrange(1, F.p)) for _ in range(n)]
    cs = [F.ctx(rng.randrange(1, F.p)) for _ in range(n)]
    if kind == "node-pole" and zs:
        zs[0] = -F.one / F.ctx(rng.randrange(1, N))
    slope = F.ctx(rng.randrange(1, F.p)) if kind == "polynomial" else F.zero
    ys = []
    for m in range(N):
        dens = [1 + m * z for z in zs]
        ys.append(K + slope * m + sum((c / d for c, d in zip(cs, dens) if not d.is_zero()),
                                      F.zero))
    if kind == "changed":
        ys[rng.randrange(N)] += F.ctx(rng.randrange(1, F.p))
    if kind == "random":
        ys = [F.ctx(rng.randrange(F.p)) for _ in range(N)]
    return ys


def _fit_or_refusal(field, ys, H0, hint):
    try:
        fit = fit_rational(field, list(range(len(ys))), ys, H0, hint)
    except NotAttention as e:
        return str(e)
    return fit.P, fit.Q, fit.n


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 10 ** 9), H0=st.integers(1, 5),
       kind=st.sampled_from(["function", "polynomial", "node-pole", "changed", "random"]),
       hint=st.sampled_from([None, 0, 1, 2, 3]))
def test_the_euclid_fit_is_the_linearised_systems_fit(seed, H0, kind, hint):
    """docs/design.md §4.3: on every kind of samples the extended-Euclid fit returns the very
    P, Q and n that the linearised systems accept first, or refuses exactly when they do."""
    ys = _structured(random.Random(seed), H0, kind)
    assert _fit_or_refusal(F, ys, H0, hint) == _fit_or_refusal(F_SYS, ys, H0, hint)


def test_extra_samples_beyond_the_type_are_held_to_the_fit():
    """Seven samples of a type-3 function asked as type ≤ 1: the Euclid denominator has
    degree above 1 and no type-1 fit exists (a planted fit that skips the degree check
    returns one)."""
    K, heads, ys = _samples(random.Random(5), 3, 7)
    for field in (F, F_SYS):
        with pytest.raises(NotAttention, match="not a rational function of type"):
            fit_rational(field, list(range(7)), ys, 1)
        assert fit_rational(field, list(range(7)), ys, 3).n == 3


def _flint_roots(field, coeffs):
    """python-flint's general root finder, the reference of PrimeField.roots."""
    from flint import nmod_poly
    if field.p < 1 << 63:
        return [(field.ctx(int(r)), m) for r, m in nmod_poly(coeffs, field.p).roots()]
    return sorted(field.poly_ctx(coeffs).roots(), key=lambda rm: (int(rm[0]) != 0, -int(rm[0])))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([62, 127]), st.integers(1, 10 ** 30), st.integers(0, 10 ** 30),
       st.integers(0, 10 ** 30), st.sampled_from(["split", "double", "any"]))
def test_quadratic_roots_are_the_general_root_finders(bits, a, r1, r2, kind):
    """A quadratic's roots at p ≡ 3 mod 4 (by the discriminant's square root): the same
    roots, multiplicities, order (0 first, then descending) and completeness flag as python-flint's
    general root finder, for polynomials that split, have a double root, or are arbitrary
    (half of them irreducible).  A planted wrong square-root exponent, a skipped check that
    Δ is a square, or a lost multiplicity fails here."""
    from exactattn.learners.p2.engines import ladder_prime
    p = ladder_prime(bits)[0]
    field = PrimeField(p)
    assert p % 4 == 3
    a %= p
    a = a or 1
    r2 = r1 if kind == "double" else r2
    if kind == "any":
        coeffs = [r1 % p, r2 % p, a]
    else:
        coeffs = [a * r1 * r2 % p, -a * (r1 + r2) % p, a]
    got, complete = field.roots([field.ctx(c) for c in coeffs])
    want = _flint_roots(field, coeffs)
    assert got == want
    assert complete == (sum(m for _, m in want) == 2)
    if kind != "any":
        assert sorted(int(r) for r, m in got for _ in range(m)) == sorted([r1 % p, r2 % p])


def test_a_quadratic_with_no_root_in_the_field_is_refused():
    """m² + 1 has no root mod p ≡ 3 mod 4 (−1 is not a square): the fit's denominator does
    not split, so the family is not attention."""
    field = PrimeField((1 << 61) - 1)
    assert field.roots([field.one, field.zero, field.one]) == ([], False)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 5), st.integers(0, 6),
       st.sampled_from(["all", "one missing", "none"]))
def test_candidate_roots_give_the_root_finders_result(seed, n, extra, which):
    """A matching family's roots tried first among candidates (P2 step 4): with every root
    among them (plus others, repeated) the poles and residues are exactly those of the
    general root finder, in its order; with one root missing, or none, it falls back to it.
    A planted acceptance of fewer roots than the degree, or another order, fails here."""
    rng = random.Random(seed)
    K, heads, ys = _samples(rng, n, 2 * n + 1)
    fit = fit_rational(F, list(range(len(ys))), ys, n)
    roots = [-(F.one / z) for z, _ in heads]
    others = [F.ctx(rng.randrange(1, F.p)) for _ in range(extra)]
    if which == "all":
        cands = roots + others + roots[:1]
    elif which == "one missing":
        cands = roots[1:] + others
    else:
        cands = others
    rng.shuffle(cands)
    assert poles_and_residues(F, fit, cands) == poles_and_residues(F, fit)
    assert solve_family(F, ys, n, None, cands) == solve_family(F, ys, n)


@pytest.mark.parametrize("bits", [62, 127])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 9), n=st.integers(1, 6))
def test_paired_roots_are_the_roots_of_q(bits, seed, n):
    """Q = Π(1 + m w_a), Q_sum = Π(1 + m z_a w_a): paired_roots gives Q's roots −1/w_a in the
    order of the z_a (word-size and larger primes).  When two heads share the solved family's
    pole z (z_0 = z_1), Q(z m) and Q_sum have both factors in common: the gcd is not linear,
    and the answer is None (a root finder then decides)."""
    from exactattn.learners.p2.engines import ladder_prime
    field = PrimeField(ladder_prime(bits)[0])
    rng = random.Random(seed)
    ws = [field.ctx(rng.randrange(2, field.p)) for _ in range(n)]
    zs = [field.ctx(rng.randrange(2, field.p)) for _ in range(n)]

    def prod(rs):
        Q = [field.one]
        for r in rs:                                  # Q · (1 + m r)
            Q = [a + r * b for a, b in zip(Q + [field.zero], [field.zero] + Q)]
        return Q
    got = field.paired_roots(prod(ws), prod([z * w for z, w in zip(zs, ws)]), zs)
    assert got == [-field.one / w for w in ws]
    if n >= 2:
        same = [zs[0]] + zs[:1] + zs[2:]
        assert field.paired_roots(prod(ws), prod([z * w for z, w in zip(same, ws)]),
                                  same) is None
