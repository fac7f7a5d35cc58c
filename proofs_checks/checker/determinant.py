"""Check kind ``determinant``: the linearised copy-count interpolation determinant (P2)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

from .linalg import det
from .parse import fmt, integer, listed, only, rat, require, vector
from .poly import degree, padd, pconst, peval, pmul, poly_from, ppow, pscale, pvar


def _copy_count_matrix(H, z, c, K, sign=1):
    """Row m = 0..2H: [D(m)·m^j]_{j≤H} ++ [−P(m)·m^j]_{1≤j≤H}, D = Π(1+m z_h),
    P = G·D = K·D + Σ_h c_h Π_{g≠h}(1+m z_g)  (the cleared linearised system)."""
    rows = []
    for m in range(2 * H + 1):
        Dm = math.prod((1 + m * zh for zh in z), start=Fraction(1))
        Pm = K * Dm + sum((c[h] * math.prod((1 + m * z[g] for g in range(H) if g != h),
                                            start=Fraction(1)) for h in range(H)), Fraction(0))
        rows.append([Dm * m ** j for j in range(H + 1)] + [-Pm * m ** j for j in range(1, H + 1)])
    return rows


def check_determinant(c, checks=()):
    """The linearised interpolation determinant (P2 copy-count interpolation): factors
    multiply out, closed form, degree, nonzero witness, and equal to the matrix determinant
    at the witness and at points chosen here, for several K."""
    only(c, ("kind", "H", "determinant", "constant", "factors", "degree", "witness", "value"),
         "determinant")
    H = integer(c.get("H"), "determinant.H")
    require(1 <= H <= 6, "determinant: H out of range")
    names = [f"z{h}" for h in range(1, H + 1)] + [f"c{h}" for h in range(1, H + 1)]
    n = len(names)
    p = poly_from(c.get("determinant"), names, "determinant.determinant")
    require(p, "determinant: the determinant polynomial is zero")
    # factorisation: constant · Π factor^mult multiplies out to p
    const = rat(c.get("constant"), "determinant.constant")
    prod = pconst(const, n)
    for k, f in enumerate(listed(c["factors"], "determinant.factors", 64)):
        require(isinstance(f, dict) and set(f) == {"factor", "multiplicity"}, f"factor {k}")
        fp = poly_from(f["factor"], names, f"determinant.factors[{k}]")
        # a multiplicity is bounded by the degree of the polynomial it factors
        mult = integer(f["multiplicity"], "determinant.multiplicity", 1, max(degree(p), 1))
        prod = pmul(prod, ppow(fp, mult, n))
    require(prod == p, "determinant: the factors do not multiply out to the determinant")
    # closed form (−1)^{H(H−1)/2} Π_{k≤2H} k! · Π c_h z_h · Π_{a<b} (z_a − z_b)^2
    closed = pconst((-1) ** (H * (H - 1) // 2) * math.prod(math.factorial(k) for k in range(1, 2 * H + 1)), n)
    for h in range(H):
        closed = pmul(closed, pmul(pvar(h, n), pvar(H + h, n)))
    for a in range(H):
        for b in range(a + 1, H):
            diff = padd(pvar(a, n), pscale(pvar(b, n), -1))
            closed = pmul(closed, pmul(diff, diff))
    require(closed == p, "determinant: differs from the closed form "
            "(−1)^{H(H−1)/2} Π k! Π c_h z_h Π (z_a − z_b)²")
    require(c.get("degree") == degree(p) == 2 * H + H * (H - 1),
            f"determinant: degree {c.get('degree')} ≠ 2H + H(H−1)")
    # the polynomial is the determinant of the matrix, for any K: witness plus points chosen here
    wit = vector(c.get("witness"), "determinant.witness", n)
    val = rat(c.get("value"), "determinant.value")
    require(val != 0 and peval(p, wit) == val, "determinant: value at the witness is wrong or zero")
    rng = random.Random(20260803 + H)
    points = [wit + [Fraction(0)], wit + [Fraction(7, 3)]] + \
        [[Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(n + 1)] for _ in range(3)]
    for pt in points:
        M = _copy_count_matrix(H, pt[:H], pt[H:2 * H], pt[2 * H])
        require(det(M) == peval(p, pt[:n]), f"determinant: matrix determinant ≠ polynomial at {pt}")
    return (f"determinant H={H}: degree {degree(p)}, nonzero at the witness ({fmt(val)}), equals "
            f"the matrix determinant at {len(points)} points (any K) and the closed form")
