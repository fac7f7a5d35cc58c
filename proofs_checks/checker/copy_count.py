"""Check kinds ``copy-count`` and ``rational-form``: the P2 copy-count family
G(m) = K + Σ c_h/(1 + m z_h) in Q(t) and as N/D in (m, z, c, K)."""

from __future__ import annotations

import math
from fractions import Fraction

from .parse import heads, integer, only, require, vector
from .poly import padd, pconst, pmul, poly_from, pvar
from .qt import attention, dot, element, is_canonical, lmul, same_element


def check_copy_count(c, checks=()):
    """Attention on [(x+u)×m, x] = K + Σ_h c_h/(1 + m z_h) in Q(t) for m = 0…2H, and the
    recorded values are those outputs (P2 copy-count family)."""
    only(c, ("kind", "dim", "model", "u", "x", "m_values", "values"), "copy-count")
    dim = integer(c.get("dim"), "copy-count.dim", 1, 16)
    model = heads(c.get("model"), dim, "copy-count.model", 8)
    require(is_canonical(model), "copy-count: the model is not canonical (repeated W or a zero "
            "v): its H is its number of canonical heads")
    u, x = vector(c.get("u"), "copy-count.u", dim), vector(c.get("x"), "copy-count.x", dim)
    ms = c.get("m_values")
    require(ms == list(range(2 * len(model) + 1)), "copy-count: m_values must be 0 … 2H")
    values = c.get("values")
    require(isinstance(values, list) and len(values) == len(ms), "copy-count: one value per m")
    a = [p + q for p, q in zip(x, u)]
    scores = [dot(u, [dot(row, x) for row in W]) for W, _ in model]
    L = 1
    for s in scores:
        L = L * s.denominator // math.gcd(L, s.denominator)
    K = sum((dot(v, a) for _, v in model), Fraction(0))
    for m, y in zip(ms, values):
        # K + Σ_h c_h / (1 + m t^{k_h}), c_h = −v_h·u
        num, den = {0: K} if K else {}, {0: Fraction(1)}
        for (W, v), s in zip(model, scores):
            dh = padd({0: Fraction(1)}, {int(s * L): Fraction(m)})
            ch = -dot(v, u)
            num = padd(lmul(num, dh), lmul({0: ch} if ch else {}, den))
            den = lmul(den, dh)
        got = attention(model, [a] * m + [x])
        require(same_element(got, (num, den, L)), f"copy-count: identity fails at m={m}")
        require(same_element(got, element(y, f"copy-count.values[{m}]")),
                f"copy-count: recorded value at m={m} is not the attention output")
    return f"copy-count d={dim} H={len(model)}: G(m) = K + Σ c_h/(1+m z_h) at m={ms}"


def check_rational_form(c, checks=()):
    """G = N/D with D = Π(1 + m z_h), N = K·D + Σ_h c_h Π_{g≠h}(1 + m z_g), in (m, z, c, K)."""
    only(c, ("kind", "H", "numerator", "denominator"), "rational-form")
    H = integer(c.get("H"), "rational-form.H")
    require(1 <= H <= 6, "rational-form: H out of range")
    names = ["m"] + [f"z{h}" for h in range(1, H + 1)] + [f"c{h}" for h in range(1, H + 1)] + ["K"]
    n = len(names)
    N = poly_from(c.get("numerator"), names, "rational-form.numerator")
    D = poly_from(c.get("denominator"), names, "rational-form.denominator")
    one = pconst(1, n)

    def lin(h):  # 1 + m z_h
        return padd(one, pmul(pvar(0, n), pvar(1 + h, n)))
    want_D = one
    for h in range(H):
        want_D = pmul(want_D, lin(h))
    want_N = pmul(pvar(n - 1, n), want_D)
    for h in range(H):
        term = pvar(1 + H + h, n)
        for g in range(H):
            if g != h:
                term = pmul(term, lin(g))
        want_N = padd(want_N, term)
    require(D == want_D, "rational-form: denominator ≠ Π(1 + m z_h)")
    require(N == want_N, "rational-form: numerator ≠ K·D + Σ c_h Π_{g≠h}(1 + m z_g)")
    require(max(e[0] for e in N) == H == max(e[0] for e in D), "rational-form: not of type (H, H)")
    return f"rational-form H={H}: G = N/D with D = Π(1 + m z_h), degrees ({H},{H}) in m"
