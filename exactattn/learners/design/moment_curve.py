"""The moment-curve design of Theorem A (docs/design.md §12; docs/evidence.md §2b).

**Theorem A.** Let M be canonical with H heads, H₀ ≥ 1 a bound and L = H + H₀.  Ask the d
single-token queries [e₁] … [e_d] and, for k = 1 … n, the family
[(x_k + u_k) × m, x_k], m = 1 … L − 1.  If (i) every linear hyperplane of Rᵈ holds at most γ
of the u_k, (ii) every non-zero d×d matrix Δ has u_kᵀΔx_k = 0 for at most β of the k, and
(iii) n > γ + (L − 1)β, then every model with at most H₀ heads (real parameters) that gives
M's answers on these queries has M's canonical form.

**The design.** The moment curve u(λ) = (λ^i)_{i<d}, x(λ) = (λ^{dj})_{j<d} at distinct
rationals λ, written in homogeneous coordinates (λ = p/q: u = (p^i q^{d−1−i}),
x = (p^{dj} q^{d(d−1)−dj}), integer tokens; positive multiples change neither count below).  A hyperplane a·u(λ) = 0 is a non-zero polynomial of degree ≤ d − 1 in λ, so
γ = d − 1 (Vandermonde); u(λ)ᵀΔx(λ) = Σ_ij Δ_ij λ^{i+dj} has the d² entries of Δ as the
coefficients of distinct powers λ^0 … λ^{d²−1}, so β = d² − 1.  Hence
n = (L − 1)(d² − 1) + d families suffice, d + n(L − 1) queries of length ≤ L.

The points are the rationals of smallest height first: 0, 1, −1, 1/2, −1/2, 2, −2, 1/3, −1/3,
…, ordered by max(|p|, q) for λ = p/q.  An answer's exponents are L·uᵀW x, whose size grows
as height^{d²−1}; about n rationals have height ≤ √n, against n/2 for integers, so the
exponents have about half the bits (503 against 917 at (d, H, H₀) = (8, 4, 6)).  A product
grid u = (λ^i), x = (μ^j) has smaller numbers still but needs (L(d−1)+1)((L−1)(d−1)+1)
families (4,544 against 575 at d = 8, L = 10): the moment curve at small-height rationals
asks the fewest queries *and* the fewest answer bits (queries × bits; docs/design.md §12
gives the measurement, ``python benchmarks/bench_certify.py``).
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

__all__ = ["DESIGN", "gamma", "beta", "families_needed", "design_count", "design_max_length",
           "points", "height", "u_of", "x_of", "family_queries", "unit_queries", "design_queries"]

#: the name a certificate records for this design
DESIGN = "moment-curve"


def gamma(d: int) -> int:
    """(i): a hyperplane of Rᵈ holds at most d − 1 of the u(λ) (Vandermonde)."""
    return d - 1


def beta(d: int) -> int:
    """(ii): u(λ)ᵀΔx(λ), a non-zero polynomial of degree ≤ d² − 1, has at most d² − 1 roots."""
    return d * d - 1


def families_needed(d: int, H: int, H0: int) -> int:
    """(iii): the least n with n > γ + (L − 1)β, L = H + H₀: (L − 1)(d² − 1) + d."""
    L = H + H0
    return gamma(d) + (L - 1) * beta(d) + 1


def design_count(d: int, H: int, H0: int) -> int:
    """Queries of the design: d single-token queries and L − 1 per family."""
    return d + families_needed(d, H, H0) * (H + H0 - 1)


def design_max_length(H: int, H0: int) -> int:
    """The longest design query: (L − 1) copies of x + u, then x."""
    return H + H0


def height(lam) -> int:
    """max(|p|, q) of λ = p/q in lowest terms."""
    lam = Fraction(lam)
    return max(abs(lam.numerator), lam.denominator)


def points(n: int) -> list:
    """The first n design points: distinct rationals by increasing height max(|p|, q), within a
    height by |λ|, then λ > 0 first: 0, 1, −1, 1/2, −1/2, 2, −2, 1/3, −1/3, 2/3, −2/3, ….
    """
    out, h = [Fraction(0)], 1
    while len(out) < n:
        level = {Fraction(s * p, q) for p in range(1, h + 1) for q in range(1, h + 1)
                 for s in (1, -1) if max(p, q) == h and gcd(p, q) == 1}
        out += sorted(level, key=lambda f: (abs(f), f < 0))
        h += 1
    return out[:n]


def u_of(lam, d: int) -> list:
    """u(λ) = q^{d−1}·(1, λ, …, λ^{d−1}) = (p^i q^{d−1−i})_i for λ = p/q: the moment curve in
    homogeneous coordinates, integer tokens (a positive multiple changes no hyperplane count)."""
    lam = Fraction(lam)
    p, q = lam.numerator, lam.denominator
    return [Fraction(p ** i * q ** (d - 1 - i)) for i in range(d)]


def x_of(lam, d: int) -> list:
    """x(λ) = q^{d(d−1)}·(1, λ^d, …, λ^{d(d−1)}) = (p^{dj} q^{d(d−1)−dj})_j: u(λ)ᵀΔx(λ) is
    q^{d²−1}·Σ Δ_ij λ^{i+dj}, with the zeros of the affine curve's."""
    lam = Fraction(lam)
    p, q = lam.numerator, lam.denominator
    return [Fraction(p ** (d * j) * q ** (d * (d - 1 - j))) for j in range(d)]


def family_queries(lam, d: int, samples: int) -> list:
    """[(x + u) × m, x] for m = 1 … samples, at the design point λ."""
    u, x = u_of(lam, d), x_of(lam, d)
    y = [a + b for a, b in zip(x, u)]
    return [[list(y) for _ in range(m)] + [list(x)] for m in range(1, samples + 1)]


def unit_queries(d: int) -> list:
    """[e₁] … [e_d]: they fix v = Σ_h v_h, hence K and G(0) of every family."""
    return [[[Fraction(int(i == j)) for j in range(d)]] for i in range(d)]


def design_queries(d: int, H: int, H0: int, lams=None) -> list:
    """Every query of Theorem A's design, in order: the unit queries, then each family."""
    lams = points(families_needed(d, H, H0)) if lams is None else lams
    out = unit_queries(d)
    for lam in lams:
        out += family_queries(lam, d, H + H0 - 1)
    return out
