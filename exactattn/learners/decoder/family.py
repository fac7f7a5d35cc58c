"""One causal query's outputs → the family's constant, poles and residues (docs/decoders.md
§recovery), in the field of an engine (exact: F_p images of Q(t); mp / float: the reals).

* copy-count (no slope, or one shared slope s): G̃(k) = K + Σ_h c_h / (1 + S_k z_h) with
  S_k = k (no slope) or S_k = Σ_{i=1}^{k} e^{i s}; P2's rational interpolation
  (:func:`~exactattn.learners.p2.interpolation.fit_rational`, nodes S_k) and partial fractions
  (:func:`~exactattn.learners.p2.interpolation.poles_and_residues`) give K, z_h, c_h;
* distinct known slopes s_1 … s_H (r_h = e^{s_h}): 1 + S_h(k) z_h = α_h (1 + γ_h r_h^k), so
  D(k) = Π_h (1 + γ_h r_h^k) = Σ_A (Π_{h∈A} γ_h) ρ_A^k (ρ_A = Π_{h∈A} r_h) and
  N(k) = D(k) G̃(k) lies in the span of the ρ_A^k too: one square linear system in the
  2^{H+1} − 1 coefficients (d_∅ = 1) from as many samples (:func:`solve_slopes`); γ_h is the
  coefficient of ρ_{h}^k, every other coefficient must be the product of its γ's (checked),
  z_h = γ_h (r_h − 1) / ((1 + γ_h) r_h), and K, c_h solve a linear system checked on every
  sample.  The ρ_A must be distinct (a named failure otherwise).

With a residual read-out the k = 0 output is off the curve: the fit uses k ≥ 1 and
G̃(0) = K + Σ c_h − w·u gives w·u.
"""

from __future__ import annotations

from ...errors import InvisibleHead, LearningFailure, NotAttention
from ..p2.interpolation import fit_rational, poles_and_residues, solve_linear

__all__ = ["copy_count_nodes", "solve_copy_count", "solve_slopes", "DependentSlopes"]


class DependentSlopes(LearningFailure):
    """Distinct-slope recovery needs the products ρ_A = Π_{h∈A} e^{s_h} over subsets of heads
    to be distinct; these slopes have a subset-sum coincidence (docs/decoders.md)."""

    reason = "dependent-slopes"


def copy_count_nodes(field, r, ks):
    """S_k for k in ``ks``: k itself (a Python int, so the interpolation takes its fast path on
    the nodes 0 … n − 1) when ``r`` is None (no slope), else Σ_{i=1}^{k} r^i in the field."""
    if r is None:
        return list(ks)
    out, acc, power, k0 = [], field.zero, field.one, 0
    for k in ks:
        while k0 < k:
            power = power * r
            acc = acc + power
            k0 += 1
        out.append(acc)
    return out


def solve_copy_count(field, ys, nodes, H0, hint=None):
    """(K, [(z_h, c_h)]) of G̃ = K + Σ c_h/(1 + S z_h) through the samples at ``nodes``;
    ``hint``: the type tried first (:func:`~exactattn.learners.p2.interpolation.fit_rational`)."""
    nodes = list(nodes)
    fit = fit_rational(field, nodes, list(ys), H0, hint)
    return poles_and_residues(field, fit)


def _subsets(H):
    return range(1 << H)


def solve_slopes(field, ys, ks, rs):
    """(K, [(z_h, c_h)] in the order of ``rs``) of G̃(k) = K + Σ_h c_h/(1 + S_h(k) z_h) with
    known r_h = e^{s_h} (module docstring); ``ys`` the samples at k in ``ks``."""
    H = len(rs)
    n_unknowns = 2 ** (H + 1) - 1
    if len(ys) < n_unknowns:
        raise ValueError(f"need {n_unknowns} samples for {H} distinct slopes")
    rho = []
    for A in _subsets(H):
        p = field.one
        for h in range(H):
            if A >> h & 1:
                p = p * rs[h]
        rho.append(p)
    rows, rhs = [], []
    for k, y in zip(ks[:n_unknowns], ys[:n_unknowns]):
        powers = [_power(field, p, k) for p in rho]
        rows.append([powers[A] * y for A in _subsets(H) if A] + [-powers[A] for A in _subsets(H)])
        rhs.append(-y)
    sol = solve_linear(field, rows, rhs)
    if sol is None:
        raise DependentSlopes(
            "the exponential-sum system of a family is singular: two subsets of heads have the "
            "same slope sum, or a head is invisible; distinct-slope recovery needs subset sums "
            "of the slopes to differ", heads=H)
    d = [field.one] + sol[:2 ** H - 1]
    gamma = [d[1 << h] for h in range(H)]
    for A in _subsets(H):
        want = field.one
        for h in range(H):
            if A >> h & 1:
                want = want * gamma[h]
        if not field.is_zero(d[A] - want):
            raise NotAttention("a family's denominator is not a product of one factor "
                               "1 + S_h(k) z_h per slope: not attention with these slopes")
    zs = []
    for h, (g, r) in enumerate(zip(gamma, rs)):
        if field.is_zero(g) or field.is_zero(field.one + g):
            raise InvisibleHead(f"the head with slope number {h + 1} shows no pole in a family "
                                f"(v_h·u = 0 or a degenerate pole)", head=h + 1)
        zs.append(g * (r - field.one) / ((field.one + g) * r))
    return _constant_and_residues(field, ys, ks, rs, zs)


def _power(field, p, k):
    out = field.one
    for _ in range(k):
        out = out * p
    return out


def _constant_and_residues(field, ys, ks, rs, zs):
    """K and c_h from the first H + 1 samples, then every sample checked."""
    H = len(zs)
    coeff = []
    for k in ks:
        row = [field.one]
        for r, z in zip(rs, zs):
            S = copy_count_nodes(field, r, [k])[0]
            den = field.one + S * z
            if field.is_zero(den):
                raise NotAttention("a pole lies on a sample: not attention")
            row.append(field.one / den)
        coeff.append(row)
    sol = solve_linear(field, coeff[:H + 1], list(ys[:H + 1]))
    if sol is None:
        raise InvisibleHead("the residues of a distinct-slope family are not determined "
                            "(two heads' terms coincide)")
    for row, y in zip(coeff, ys):
        got = field.zero
        for a, b in zip(row, sol):
            got = got + a * b
        if not field.is_zero(got - y):
            raise NotAttention("a distinct-slope family does not reproduce its samples: not "
                               "attention with these slopes")
    for h, c in enumerate(sol[1:]):
        if field.is_zero(c):
            raise InvisibleHead(f"the head with slope number {h + 1} has residue 0 in a family "
                                f"(v_h·u = 0)", head=h + 1)
    return sol[0], list(zip(zs, sol[1:]))
