"""Copy-count rational interpolation (P2; docs/design.md §4.3), written once for every field.

For the family I(u, x) — queries [(x+u) repeated m times, x] — the output is

    G(m) = K + Σ_h c_h / (1 + m z_h),   z_h = exp(uᵀW_h x),  c_h = −v_h·u,  K = v·(x+u),

a rational function of type (H*, H*).  :func:`fit_rational` finds the reduced
(lowest-degree) P/Q with Q(0) = 1 through the samples, trying n = 0, 1, …, H₀ and
accepting the first n whose (2n+1)-point linearised system is nonsingular and whose
solution reproduces *every* sample (the samples beyond 2n+1 are held out).  A lower type
cannot fit by accident: two distinct functions of types (n, n) and (H*, H*), n < H* ≤ H₀,
agree on at most n + H* < 2H₀ + 1 points.  :func:`poles_and_residues` turns P/Q into the
(z_h, c_h) and K.

A *field* supplies ``zero``, ``one``, ``from_int``, ``is_zero``, ``pivot(column)`` and
``roots(coeffs)``; elements use Python operators.  Implemented by
:class:`~exactattn.arith.fields.PrimeField` (exact, F_p) and
:class:`~exactattn.arith.fields.RealField` (mp/float).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import NotAttention

__all__ = ["RationalFit", "fit_rational", "poles_and_residues", "solve_family",
           "solve_linear", "poly_eval", "poly_values"]


def poly_eval(coeffs, m, field):
    acc = field.zero
    for c in reversed(coeffs):
        acc = acc * m + c
    return acc


def poly_values(coeffs, points, field):
    """[Σ coeffs[i] m^i for m in points] (P2, copy-count family; docs/design.md §4.3): the
    field's own multipoint evaluation when it has one (F_p: ``PrimeField.values``, in
    python-flint), else Horner at each point."""
    own = getattr(field, "values", None)
    if own is not None:
        return own(coeffs, points)
    return [poly_eval(coeffs, m, field) for m in points]


def solve_linear(field, A, b):
    """Gaussian elimination with the field's pivot rule; None if singular.  A field with a
    solver of its own uses it instead (F_p: ``PrimeField.solve`` in python-flint; the ball
    field's verified solver)."""
    own = getattr(field, "solve", None)
    if own is not None:
        return own(A, b)
    n = len(A)
    M = [list(row) + [bi] for row, bi in zip(A, b)]
    for col in range(n):
        piv = field.pivot([M[r][col] for r in range(col, n)])
        if piv is None:
            return None
        piv += col
        M[col], M[piv] = M[piv], M[col]
        inv = field.one / M[col][col]
        for r in range(col + 1, n):
            f = M[r][col] * inv
            M[r] = [a - f * c for a, c in zip(M[r], M[col])]
    x = [field.zero] * n
    for r in range(n - 1, -1, -1):
        acc = M[r][n]
        for c in range(r + 1, n):
            acc = acc - M[r][c] * x[c]
        x[r] = acc / M[r][r]
    return x


@dataclass
class RationalFit:
    """G = P/Q, Q(0) = 1, of type (n, n); coefficient lists low → high."""

    P: list
    Q: list
    n: int


def _try_degree(field, ms, ys, n):
    """Solve P(m_i) − y_i Q(m_i) = 0 on the first 2n+1 samples (unknowns p_0..p_n, q_1..q_n)."""
    rows, rhs = [], []
    for m, y in zip(ms[: 2 * n + 1], ys[: 2 * n + 1]):
        powers = [field.one]
        for _ in range(n):
            powers.append(powers[-1] * m)
        minus_y = -y
        rows.append(powers + [minus_y * pw for pw in powers[1:]])
        rhs.append(y)
    sol = solve_linear(field, rows, rhs)
    if sol is None:
        return None
    return RationalFit(sol[: n + 1], [field.one] + sol[n + 1:], n)


def _fits_all(field, fit, ms, ys) -> bool:
    """Q(m_i) ≠ 0 and P(m_i) = y_i Q(m_i) at every sample.  On an exact field the first
    2n+1 samples satisfy the equation by construction (the solved square system is those
    equations), so only Q is evaluated there."""
    used = 2 * fit.n + 1 if field.exact else 0
    qs = poly_values(fit.Q, ms, field)
    if any(field.is_zero(q) for q in qs):
        return False
    ps = poly_values(fit.P, ms[used:], field)
    return all(field.is_zero(p - y * q) for p, y, q in zip(ps, ys[used:], qs[used:]))


def fit_rational(field, ms, ys, max_degree: int, hint: int | None = None) -> RationalFit:
    """Reduced rational interpolant of type ≤ (max_degree, max_degree) with Q(0) = 1 (P2;
    docs/design.md §4.3).  Raises NotAttention when no type ≤ H₀ fits every sample.

    On F_p with a word-size prime and the nodes 0…N−1 (every copy-count family) the field's
    ``rational_fit`` (:func:`exactattn.arith.fields.euclid_fit`, extended Euclid) returns
    the same fit in one pass; the linearised systems below serve larger primes and the reals.

    ``hint`` (e.g. the pole count of a previous family) is tried first: a type-n solution
    from a *nonsingular* system that fits every sample is already reduced, because a
    lower type n' < n would make the n-system singular (multiply P and Q by any
    S with deg S ≤ n − n', S(0) = 1)."""
    if len(ms) != len(ys) or len(ms) < 2 * max_degree + 1:
        raise ValueError(f"need {2 * max_degree + 1} samples for type ({max_degree}, {max_degree})")
    own = getattr(field, "rational_fit", None)
    if own is not None and ms == list(range(len(ms))):
        got = own(ys, max_degree)
        if got is not NotImplemented:
            if got is None:
                _no_fit(len(ys), max_degree)
            return RationalFit(*got)
    ms = [field.from_int(m) if isinstance(m, int) else m for m in ms]
    if hint is not None and 0 <= hint <= max_degree:
        fit = _try_degree(field, ms, ys, hint)
        if fit is not None and _fits_all(field, fit, ms, ys):
            return fit
    for n in range(max_degree + 1):
        fit = _try_degree(field, ms, ys, n)
        if fit is not None and _fits_all(field, fit, ms, ys):
            return fit
    _no_fit(len(ys), max_degree)


def _no_fit(samples: int, max_degree: int):
    raise NotAttention(
        f"the copy-count samples are not a rational function of type ≤ ({max_degree}, "
        f"{max_degree}): the oracle is not attention with ≤ {max_degree} heads",
        samples=samples, bound=max_degree)


def _roots_among(field, Q, n, candidates):
    """Q's roots as ``field.roots`` gives them, when n distinct ones lie among ``candidates``
    (then Q, of degree n, is their product times its leading coefficient: every root is
    simple and found); else None.  One multipoint evaluation instead of a factorisation."""
    values = poly_values(Q, candidates, field)
    found = {}
    for r, q in zip(candidates, values):
        if field.is_zero(q):
            found.setdefault(int(r), r)
    if len(found) != n:
        return None
    return [(found[k], 1) for k in sorted(found, key=lambda k: (k != 0, -k))], True


def poles_and_residues(field, fit: RationalFit, candidates=None):
    """From G = P/Q: K and [(z_h, c_h)] with G = K + Σ c_h/(1 + m z_h) (P2; docs/design.md §4.3).

    Q's roots r_h = −1/z_h must be simple and lie in the field; c_h = z_h·P(r_h)/Q'(r_h).
    ``candidates`` (an exact field only: a matching family's −1/(z_a z_b)) are tried first
    (:func:`_roots_among`); the roots, and so the result, are those of ``field.roots``."""
    n = fit.n
    if n == 0:
        return fit.P[0], []
    found = _roots_among(field, fit.Q, n, candidates) if candidates and field.exact else None
    roots, complete = found or field.roots(fit.Q)
    if not complete or any(mult != 1 for _, mult in roots) or len(roots) != n:
        raise NotAttention(
            f"the interpolated denominator of degree {n} does not split into {n} distinct "
            f"factors 1 + m·z_h: not attention", degree=n, roots_found=len(roots))
    dQ = [c * field.from_int(i) for i, c in enumerate(fit.Q)][1:]
    rs = [r for r, _ in roots]
    heads = []
    for r, Pr, dQr in zip(rs, poly_values(fit.P, rs, field), poly_values(dQ, rs, field)):
        z = -(field.one / r)
        c = z * Pr / dQr
        if field.is_zero(c):
            raise NotAttention("a pole with zero residue in a reduced interpolant", pole=str(z))
        heads.append((z, c))
    K = fit.P[n] / fit.Q[n] if len(fit.P) > n else field.zero
    return K, heads


def solve_family(field, ys, max_degree: int, hint: int | None = None, candidates=None):
    """Samples G(0..2H₀) of one copy-count family → (K, [(z_h, c_h)]) (P2; docs/design.md
    §4.3); ``candidates``: roots of Q to try first (:func:`poles_and_residues`)."""
    ms = list(range(len(ys)))
    fit = fit_rational(field, ms, ys, max_degree, hint)
    return poles_and_residues(field, fit, candidates)
