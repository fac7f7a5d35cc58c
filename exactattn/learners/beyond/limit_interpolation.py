"""Copy-count interpolation with a known limit K (docs/design.md §10, "Fewer samples per
family"): once v is known, K = v·(x + u) = G(∞) and G(0) = v·x are known for every family
I(u, x), so R(m) = G(m) − K = Σ_h c_h/(1 + m z_h) is a rational function P/Q with deg P ≤ n − 1,
deg Q = n, Q(0) = 1 — 2n unknowns instead of P2's 2n + 1, hence 2H − 1 new samples beside the
known R(0) = −v·u instead of 2H.

:func:`fit_with_limit` is the analogue of :func:`.interpolation.fit_rational`: it tries
n = 0, 1, …, max_degree and accepts the first n whose 2n-point linearised system is nonsingular
and whose solution reproduces every sample (the others are held out); a lower type cannot fit by
accident for the same reason as there (two distinct such functions of types n' < n agree at
fewer than n + n' + 1 ≤ 2n points).  The result is handed to
:func:`.interpolation.poles_and_residues` as G = (K·Q + P)/Q.
"""

from __future__ import annotations

from ...errors import NotAttention
from ..p2.interpolation import RationalFit, poles_and_residues, poly_eval, solve_linear

__all__ = ["fit_with_limit", "solve_family_with_limit"]


def _try(field, ms, rs, n):
    """P(m_i) − r_i Q(m_i) = 0 on the first 2n samples; unknowns p_0..p_{n−1}, q_1..q_n."""
    rows, rhs = [], []
    for m, r in zip(ms[: 2 * n], rs[: 2 * n]):
        pw = [field.one]
        for _ in range(n):
            pw.append(pw[-1] * m)
        rows.append(pw[:n] + [-(r * x) for x in pw[1:]])
        rhs.append(r)
    sol = solve_linear(field, rows, rhs)
    if sol is None:
        return None
    return sol[:n], [field.one] + sol[n:]


def _fits(field, P, Q, ms, rs) -> bool:
    for m, r in zip(ms, rs):
        q = poly_eval(Q, m, field)
        if field.is_zero(q) or not field.is_zero(poly_eval(P, m, field) - r * q):
            return False
    return True


def fit_with_limit(field, ms, rs, max_degree: int, hint: int | None = None):
    """(P, Q, n): R = P/Q through every sample (m_i, r_i), deg P ≤ n − 1, Q(0) = 1, n minimal
    (docs/design.md §10).  Raises NotAttention when no n ≤ max_degree fits."""
    if len(ms) != len(rs) or len(ms) < 2 * max_degree:
        raise ValueError(f"need {2 * max_degree} samples for {max_degree} poles with a known limit")
    ms = [field.from_int(m) if isinstance(m, int) else m for m in ms]
    order = ([hint] if hint is not None and 0 <= hint <= max_degree else []) + \
        list(range(max_degree + 1))
    for n in order:
        got = _try(field, ms, rs, n)
        if got is not None and _fits(field, *got, ms, rs):
            return got[0], got[1], n
    raise NotAttention(
        f"the copy-count samples minus the known limit K are not Σ c_h/(1 + m z_h) with ≤ "
        f"{max_degree} poles: not attention with these heads", samples=len(rs), bound=max_degree)


def solve_family_with_limit(field, K, ys, max_degree: int, hint: int | None = None):
    """Samples G(0), G(1), … of one family and its known limit K → [(z_h, c_h)]
    (docs/design.md §10; residues and poles as in P2's copy-count family)."""
    rs = [y - K for y in ys]
    P, Q, n = fit_with_limit(field, list(range(len(ys))), rs, max_degree, hint)
    full = [K * q for q in Q]
    for i, p in enumerate(P):
        full[i] = full[i] + p
    _, heads = poles_and_residues(field, RationalFit(full, Q, n))
    return heads
