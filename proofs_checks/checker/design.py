"""Check kind ``design``: Theorem A's design certificate (docs/design.md §12; docs/evidence.md
§2b) — every model with at most H₀ heads (real parameters) that gives M's answers on the
design has M's canonical form.

A record ``{"kind": "design", "design": "moment-curve", "dim": d, "H0": H₀, "points": [λ…],
"samples": S, "model": [heads], "answers": [elements]}`` (optionally ``"truth"``, the oracle's
model when a claim knows it: its canonical form must be M's) is checked from itself alone (S ≥
L − 1 samples per family: a learner's transcript that asks more is a design too):

(a) M is canonicalised here (:func:`.qt.read_canonical`) and H is its number of canonical heads,
    L = H + H₀;
(b) the points are distinct rationals; γ = d − 1 and β = d² − 1 are derived from the design's
    definition (u(λ) = (λ^i), x(λ) = (λ^{dj}), written homogeneously as integer vectors
    q^{d−1}u and q^{d(d−1)}x for λ = p/q: a hyperplane is a polynomial of degree ≤ d − 1 in λ,
    uᵀΔx a polynomial of degree ≤ d² − 1 whose coefficients are the entries of Δ), never read;
    condition (iii) n > γ + (L − 1)β is checked;
(c) every query is rebuilt from the points — [e₁] … [e_d], then for each λ in order
    [(x + u) × m, x], m = 1 … S with S ≥ L − 1 — and M's answer to it is compared exactly with the
    recorded one in Q(t).
"""

from __future__ import annotations

from fractions import Fraction

from .parse import integer, listed, only, rat, require, string
from .qt import attention, element, read_canonical, same_element

DESIGNS = ("moment-curve",)
MAX_DIM = 16
MAX_H0 = 8
#: the most families a design record may hold (the design at d = 16, L = 16 needs 3,841)
MAX_POINTS = 4096
#: the most bits of a point's power λ^(d²−1) (an integer point below 2^16 at d = 16)
MAX_POWER_BITS = 255 * 17
PROVES = ("every model with ≤ H0 heads (real parameters) that gives these answers has M's "
          "canonical form (Theorem A)")


def gamma(d: int) -> int:
    """(i) for the moment curve: at most d − 1 of the u(λ) on one hyperplane (Vandermonde)."""
    return d - 1


def beta(d: int) -> int:
    """(ii) for the moment curve: u(λ)ᵀΔx(λ) = Σ Δ_ij λ^(i+dj) vanishes at ≤ d² − 1 points."""
    return d * d - 1


def _u(lam, d):
    """q^(d−1)·(λ^i)_i for λ = p/q (homogeneous coordinates: the same hyperplane counts)."""
    p, q = lam.numerator, lam.denominator
    return [Fraction(p ** i * q ** (d - 1 - i)) for i in range(d)]


def _x(lam, d):
    """q^(d(d−1))·(λ^(dj))_j: uᵀΔx = q^(d²−1)·Σ Δ_ij λ^(i+dj), the same zeros."""
    p, q = lam.numerator, lam.denominator
    return [Fraction(p ** (d * j) * q ** (d * (d - 1 - j))) for j in range(d)]


def queries(d, samples, lams):
    """The design's queries rebuilt from its points."""
    out = [[[Fraction(int(i == j)) for j in range(d)]] for i in range(d)]
    for lam in lams:
        u, x = _u(lam, d), _x(lam, d)
        y = [a + b for a, b in zip(x, u)]
        out += [[y] * m + [x] for m in range(1, samples + 1)]
    return out


def check_design(c, checks=()):
    """Theorem A's certificate: conditions (i)–(iii) for the recorded points, every query
    rebuilt, every recorded answer M's exactly in Q(t)."""
    only(c, ("kind", "design", "dim", "H0", "points", "samples", "model", "answers"), "design",
         optional=("truth",))
    name = string(c["design"], "design.design")
    require(name in DESIGNS, f"design: unknown design {name!r:.40} (known: {', '.join(DESIGNS)})")
    d = integer(c["dim"], "design.dim", 1, MAX_DIM)
    H0 = integer(c["H0"], "design.H0", 1, MAX_H0)
    M = read_canonical(c["model"], d, "design.model", max_heads=MAX_H0)
    H = len(M)
    require(H <= MAX_H0, f"design: M has {H} canonical heads (at most {MAX_H0})")
    truth = ""
    if "truth" in c:
        T = read_canonical(c["truth"], d, "design.truth", max_heads=MAX_H0)
        require(T == M, "design: M is not the canonical form of the recorded true model")
        truth = "; M = the canonical form of the true model"
    L = H + H0
    lams = [rat(p, f"design.points[{k}]")
            for k, p in enumerate(listed(c["points"], "design.points", MAX_POINTS))]
    require(len(set(lams)) == len(lams), "design: a repeated point λ (the points must be "
            "distinct)")
    bits = max((lam.numerator.bit_length() + lam.denominator.bit_length() for lam in lams),
               default=0)
    require((d * d - 1) * bits <= MAX_POWER_BITS, f"design: a point of {bits} bits: its powers "
            f"up to λ^{d * d - 1} would exceed {MAX_POWER_BITS} bits, refused")
    g, b, n = gamma(d), beta(d), len(lams)
    require(n > g + (L - 1) * b, f"design: {n} families, but Theorem A needs n > γ + (L−1)β = "
            f"{g} + {L - 1}·{b} = {g + (L - 1) * b} (d={d}, H={H}, H0={H0})")
    S = integer(c["samples"], "design.samples", 0, 2 * MAX_H0)
    require(S >= L - 1, f"design: {S} samples per family, but Theorem A needs L − 1 = {L - 1}")
    expected = queries(d, S, lams)
    answers = listed(c["answers"], "design.answers")
    require(len(answers) == len(expected), f"design: {len(answers)} answers but the design "
            f"rebuilt from the points has {len(expected)} queries")
    for k, (q, a) in enumerate(zip(expected, answers)):
        require(same_element(attention(M, q), element(a, f"design.answers[{k}]")),
                f"design: M does not give recorded answer {k} exactly in Q(t)")
    return (f"design {name} d={d} H={H} H0={H0}: {n} distinct points > γ + (L−1)β = "
            f"{g} + {L - 1}·{b} (γ = d−1, β = d²−1 derived); {len(expected)} queries rebuilt "
            f"(max length {S + 1}), every answer M's exactly in Q(t){truth} — {PROVES}")
