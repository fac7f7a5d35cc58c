"""The fields the learners' algorithms run over (P2 copy-count interpolation is written once
against this small interface): ``zero``, ``one``, ``from_int``, ``is_zero``, ``pivot(column)``
and ``roots(coeffs)``, elements with Python operators.

* :class:`PrimeField` — F_p, the image of Q(t) under t ↦ τ in the fast exact engine
  (:mod:`.modular`): exact zero test, first-nonzero pivot.
* :class:`RealField` — the reals of an mp or float backend: tolerance-based zero test,
  largest-magnitude pivot.
"""

from __future__ import annotations

import functools
from fractions import Fraction
from math import isqrt

from flint import fmpz_mod_ctx, fmpz_mod_mat, fmpz_mod_poly_ctx, nmod_mat, nmod_poly


__all__ = ["PrimeField", "RealField", "prime_field", "rational_reconstruction"]


def _isolated_roots(ctx, coeffs):
    """The complex roots of Σ coeffs[i] m^i (mpf coefficients of mpmath context ``ctx``,
    coeffs[0] ≠ 0) as mpc of ``ctx``: isolated by flint's ``acb_poly.roots`` at twice the
    context's precision and refined to a relative accuracy of 2^−(prec+16) (|root| is at
    least |c₀| / (|c₀| + max_{i≥1} |c_i|)), then rounded to the context; None when flint
    cannot isolate them (a multiple or nearly multiple root)."""
    from flint import acb_poly, ctx as flint_ctx
    from .ball import ball, midpoint_mpf
    old = flint_ctx.prec
    flint_ctx.prec = 2 * ctx.prec + 64
    try:
        cs = [ball(c) for c in coeffs]
        c0 = abs(cs[0])
        lower = c0 / (c0 + max(abs(c) for c in cs[1:]))
        if not lower > 0:
            return None
        tol = (lower * 2 ** -(ctx.prec + 16)).mid()
        try:
            found = acb_poly(cs).roots(tol=tol)
        except (ValueError, ArithmeticError):
            return None
        return [ctx.mpc(midpoint_mpf(r.real, ctx), midpoint_mpf(r.imag, ctx)) for r in found]
    finally:
        flint_ctx.prec = old


def rational_reconstruction(a: int, p: int):
    """The fraction r/s with |r|, s ≤ √(p/2) and r ≡ a·s (mod p), or None (Wang's method)."""
    bound = isqrt(p // 2)
    r0, r1 = p, a % p
    s0, s1 = 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        s0, s1 = s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound:
        return None
    f = Fraction(r1, s1)
    if (f.numerator - a * f.denominator) % p:
        return None
    return f


def _quadratic_roots(p: int, c, b, a):
    """The roots of a·m² + b·m + c over F_p (python-flint ``fmpz_mod``), p ≡ 3 mod 4
    and a ≠ 0, as :meth:`PrimeField.roots` returns them: the discriminant Δ's square root is
    Δ^((p+1)/4) when Δ is a square (checked by squaring it back); Δ = 0 gives one root of
    multiplicity 2, a non-square none.  Powers in python-flint (a 62-bit modular power
    costs about 0.5 µs there, 10 µs in Python integers)."""
    disc = b * b - 4 * a * c
    inv = (2 * a).inverse()
    if disc.is_zero():
        return [(-b * inv, 2)], True
    s = disc ** ((p + 1) // 4)
    if s * s != disc:
        return [], False
    r1, r2 = (-b + s) * inv, (-b - s) * inv
    return [(r, 1) for r in sorted((r1, r2), key=_flint_order)], True


def _flint_order(r):
    """python-flint's order of a polynomial's roots: 0 first, then descending as integers."""
    return not r.is_zero(), -int(r)


@functools.lru_cache(maxsize=64)
def _nodes(p: int, n: int):
    """For the nodes 0…n−1 of F_p (p < 2^63): M(m) = Π (m − i) and the inverse of the
    Vandermonde matrix [i^j] (coefficients of the interpolating polynomial from its values)."""
    M = nmod_poly([1], p)
    for i in range(n):
        M *= nmod_poly([-i % p, 1], p)
    V = nmod_mat([[pow(i, j, p) for j in range(n)] for i in range(n)], p)
    return M, V.inv()


def euclid_fit(p: int, ys, max_degree: int):
    """The reduced rational function P/Q with Q(0) = 1 and deg P, deg Q ≤ ``max_degree``
    through the points (i, ys[i]), i = 0…N−1, over F_p (p < 2^63), or None when there is
    none (P2, copy-count family; docs/design.md §4.3).

    Rational function reconstruction by the extended Euclidean algorithm (von zur Gathen and
    Gerhard, *Modern Computer Algebra*, §5.7): Y interpolates the samples, M = Π (m − i), and
    the remainder sequence of (M, Y) stops at the first r_j of degree ≤ max_degree, where
    r_j ≡ t_j·Y mod M.  Every solution of r ≡ t·Y mod M with deg r ≤ max_degree and
    deg t ≤ N − max_degree − 1 is α·(r_j, t_j) for a polynomial α (their Lemma 5.15).  So a
    fit exists iff t_j has degree ≤ max_degree and no root among the nodes, and it is then
    r_j/t_j, already coprime (a common factor would be a unit mod M, giving a solution of
    lower degree).  Returns (P, Q, n) as int lists of length n + 1, n = max(deg P, deg Q):
    the fit that solving the linearised (2n+1)-systems for n = 0, 1, … accepts first
    (:func:`exactattn.learners.p2.interpolation.fit_rational`; the same P, Q and n, found in
    one pass instead of one solve per n)."""
    N = len(ys)
    M, Vinv = _nodes(p, N)
    Y = nmod_poly((Vinv * nmod_mat([[int(y)] for y in ys], p)).entries(), p)
    r0, r1, t0, t1 = M, Y, nmod_poly([], p), nmod_poly([1], p)
    while r1.degree() > max_degree:
        q, rem = divmod(r0, r1)
        r0, r1, t0, t1 = r1, rem, t1, t0 - q * t1
    r, t = r1, t1
    if t.degree() > max_degree or t.gcd(M).degree() > 0:      # a root of t among the nodes
        return None
    # r_j, t_j are now coprime: g = gcd(r_j, t_j) divides t_j, so is a unit mod M, and
    # (r_j/g, t_j/g) would be a solution of lower degree than α·(r_j, t_j)
    inv = pow(int(t.coeffs()[0]), -1, p)
    n = max(r.degree(), t.degree())
    P = [int(c) * inv % p for c in r.coeffs()]
    Q = [int(c) * inv % p for c in t.coeffs()]
    return P + [0] * (n + 1 - len(P)), Q + [0] * (n + 1 - len(Q)), n


class PrimeField:
    """F_p as a field for the backend-generic interpolation (exact zero test)."""

    exact = True

    def __init__(self, p: int):
        self.p = int(p)
        self.ctx = fmpz_mod_ctx(self.p)
        self.poly_ctx = fmpz_mod_poly_ctx(self.p)
        self.zero = self.ctx(0)
        self.one = self.ctx(1)

    def from_int(self, n: int):
        return self.ctx(n)

    def is_zero(self, a) -> bool:
        return a.is_zero()

    def pivot(self, column) -> int | None:
        """Index of a usable pivot (first nonzero), or None."""
        for i, a in enumerate(column):
            if not a.is_zero():
                return i
        return None

    def solve(self, A, b):
        """x with A x = b over F_p (python-flint ``fmpz_mod_mat``), or None when A is
        singular modulo p."""
        n = len(A)
        M = fmpz_mod_mat(n, n, [a for row in A for a in row], self.ctx)
        try:
            x = M.solve(fmpz_mod_mat(n, 1, list(b), self.ctx))
        except ZeroDivisionError:
            return None
        return [x[i, 0] for i in range(n)]

    def values(self, coeffs, points):
        """[Σ coeffs[i] m^i for m in points] in F_p: one multipoint evaluation in
        python-flint (``fmpz_mod_poly``); the copy-count fit's checks and residues (P2,
        copy-count family; docs/design.md §4.3)."""
        if not points:
            return []
        # the points as they come (elements of this field or ints): converting them to int
        # first cost more than the evaluation saved (21 against 13 µs at 64 points)
        return self.poly_ctx(list(coeffs)).multipoint_evaluate(list(points))

    def roots(self, coeffs):
        """Roots in F_p of Σ coeffs[i] m^i with multiplicities; (roots, all_in_field), the
        roots in python-flint's order (0 first, then descending as integers).  A quadratic at p ≡ 3 mod 4
        (every prime of the modular ladder) by :func:`_quadratic_roots`, about 10× faster
        than python-flint's general root finder at 62 bits; word-size primes otherwise use
        ``nmod_poly`` (about 3× faster than ``fmpz_mod_poly``)."""
        if len(coeffs) == 3 and self.p % 4 == 3:
            c, b, a = (self.ctx(x) for x in coeffs)
            if not a.is_zero():
                return _quadratic_roots(self.p, c, b, a)
        P = self._poly(coeffs)
        rts = list(P.roots())
        if self.p < 1 << 63:
            rts = [(self.ctx(int(r)), mult) for r, mult in rts]
        found = sum(mult for _, mult in rts)
        return rts, found == P.degree()

    def _poly(self, coeffs):
        """Σ coeffs[i] m^i as a python-flint polynomial: ``nmod_poly`` at word-size primes
        (about 3× faster than ``fmpz_mod_poly``), ``fmpz_mod_poly`` above."""
        if self.p < 1 << 63:
            return nmod_poly([int(c) for c in coeffs], self.p)
        return self.poly_ctx(list(coeffs))

    def rational_fit(self, ys, max_degree: int):
        """The copy-count fit through (i, ys[i]), i = 0…N−1 (:func:`euclid_fit`) as field
        elements (P, Q, n); None when none of type ≤ (max_degree, max_degree) exists.
        Word-size primes only: NotImplemented for larger ones (the caller solves the
        linearised systems instead)."""
        if self.p >= 1 << 63:
            return NotImplemented
        got = euclid_fit(self.p, ys, max_degree)
        if got is None:
            return None
        P, Q, n = got
        return [self.ctx(c) for c in P], [self.ctx(c) for c in Q], n

    def paired_roots(self, Q, Q_sum, zs):
        """For each z in ``zs``, r·z with r the root of gcd(Q(z·m), Q_sum(m)) when that gcd is
        linear; None as soon as one is not (P2, matching families; the candidate roots of
        :func:`exactattn.learners.p2.recovery._paired`).  One composition and one gcd per z
        in python-flint, about 5× cheaper than its root finder on Q at degree 8."""
        P, S = self._poly(Q), self._poly(Q_sum)
        out = []
        for z in zs:
            g = P.compose(self._poly([0, z])).gcd(S)
            if g.degree() != 1:
                return None
            c0, c1 = (self.ctx(int(c)) for c in g.coeffs())
            out.append(-c0 / c1 * z)
        return out

    def lift(self, a):
        """Rational reconstruction of a ∈ F_p, or None."""
        return rational_reconstruction(int(a), self.p)

    def __repr__(self):
        return f"PrimeField(p of {self.p.bit_length()} bits)"



@functools.lru_cache(maxsize=16)
def prime_field(p: int) -> PrimeField:
    """The PrimeField of p, made once per process (its python-flint contexts test p for
    primality when made: about 0.5 ms at the ladder's large sizes, per modular run)."""
    return PrimeField(p)


class RealField:
    """The reals of an mp or float backend, as a field for interpolation (tolerance-based)."""

    exact = False

    def __init__(self, backend, tolerance=None):
        self.backend = backend
        self.zero = backend.scalar(0)
        self.one = backend.scalar(1)
        self.tolerance = backend.tolerance if tolerance is None else tolerance

    def from_int(self, n):
        return self.backend.scalar(n)

    def is_zero(self, a) -> bool:
        return abs(a) <= self.tolerance

    def pivot(self, column):
        best = max(range(len(column)), key=lambda i: abs(column[i]), default=None)
        if best is None or abs(column[best]) <= self.tolerance:
            return None
        return best

    def roots(self, coeffs):
        """Real roots of Σ coeffs[i] m^i; (roots with multiplicity 1, all_real): a root counts
        as real when its imaginary part is within the tolerance (relative to max(1, |r|))."""
        n = len(coeffs) - 1
        while n > 0 and self.is_zero(coeffs[n]):
            n -= 1
        if n == 0:
            return [], True
        if self.backend.name == "mp":
            ctx = self.backend.ctx
            rts = _isolated_roots(ctx, coeffs[: n + 1])
            if rts is None:                 # not isolated (a near-double root): mpmath's
                try:                        # iteration, as close as it gets
                    rts = ctx.polyroots(list(reversed(coeffs[: n + 1])), maxsteps=200,
                                        extraprec=4 * ctx.prec)
                except ctx.NoConvergence:
                    return [], False
            scale = max(1, max(abs(r) for r in rts))
            real = [ctx.re(r) for r in rts if abs(ctx.im(r)) <= self.tolerance * scale]
        else:
            import numpy as np
            rts = np.roots(list(reversed([float(c) for c in coeffs[: n + 1]])))
            real = [float(r.real) for r in rts if abs(r.imag) <= self.tolerance * max(1.0, abs(r))]
        return [(r, 1) for r in real], len(real) == n

