"""What a transcript fixes of one copy-count family (P2, copy-count family; docs/design.md
§4.3, §11): its rational function G(m) = K + Σ_p c_p/(1 + m e^{σ_p}), read exactly.

The family I(u, x) with u = Σ a_i u_i and x = Σ b_j x_j (a, b coordinates in the bases U, X)
asks [(x+u) × m, x] for m = 1…2H₀; its m = 0 sample is v·x (the query q₀ for x = x₁, else
known once v is). Any model with ≤ H₀ heads that gives these 2H₀ + 1 samples has the same G
(two type-(≤H₀, ≤H₀) functions that agree at 2H₀ + 1 points where both denominators are
positive are equal), hence the same reduced partial fractions: the poles e^{σ_p} with
non-zero residues c_p, and K. For a head (W, v_h) the score at the family is
σ = uᵀW x = aᵀ S b with S = U W Xᵀ, and its residue −v_h·u = −aᵀ r with r = U v_h: linear in
S and r, which is what makes the answer fibre (:mod:`.fibre`) a finite union of explicit
pieces.

:func:`read_family` reads G from the samples (modular images and reconstruction, as the
learner does) and accepts it only if G reproduces every sample exactly in Q(t);
:meth:`FamilyFunction.reproduces` is that exact check. Only families whose poles are powers
e^{k/L} and whose residues and K are rational are read (the transcript of a rational model):
anything else is :class:`~exactattn.errors.NotAttention`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from ...arith import get_backend
from ...arith.expfield import ExpElement
from ...arith.modular import BadReduction
from ...errors import LearningFailure, NotAttention
from .engines import exponent_window, make_engine, prime_sizes
from .interpolation import solve_family

__all__ = ["FamilyFunction", "read_family", "family_queries"]


@dataclass(frozen=True)
class FamilyFunction:
    """G of the family I(Σ a_i u_i, Σ b_j x_j): K and the poles (σ_p, c_p) sorted by σ_p
    (P2, copy-count family): G(m) = K + Σ_p c_p/(1 + m e^{σ_p})."""

    a: tuple
    b: tuple
    K: Fraction
    poles: tuple

    def value(self, m: int) -> ExpElement:
        """G(m) exactly in Q(t)."""
        out = ExpElement.from_rational(self.K)
        for s, c in self.poles:
            z = ExpElement.t_power(s.numerator, s.denominator)
            out = out + ExpElement.from_rational(c) / (1 + m * z)
        return out

    def reproduces(self, samples) -> bool:
        """G(m) = samples[m] exactly in Q(t) for every m (samples[0] may be a rational)."""
        for m, y in enumerate(samples):
            y = y if isinstance(y, ExpElement) else ExpElement.from_rational(Fraction(y))
            if self.value(m) != y:
                return False
        return True


def family_queries(U, X, a, b, H0: int):
    """The queries [(x+u) × m, x], m = 1…2H₀, of I(Σ a_i u_i, Σ b_j x_j) (P2, copy-count
    family), and (u, x)."""
    d = len(U)
    u = [sum((Fraction(a[i]) * U[i][k] for i in range(d)), Fraction(0)) for k in range(d)]
    x = [sum((Fraction(b[j]) * X[j][k] for j in range(d)), Fraction(0)) for k in range(d)]
    xu = [p + q for p, q in zip(x, u)]
    return [[list(xu) for _ in range(m)] + [list(x)] for m in range(1, 2 * H0 + 1)], u, x


def read_family(a, b, samples, H0: int, rng: random.Random) -> FamilyFunction:
    """The reduced G of one family from its 2H₀ + 1 samples G(0…2H₀) (samples[0] a rational,
    the others ExpElements), exactly: interpolation on modular images up the prime ladder
    (docs/design.md §2.2), accepted only when G reproduces every sample exactly in Q(t).
    NotAttention when no type ≤ (H₀, H₀) fits, or the poles or residues are not those of a
    rational model."""
    g0 = Fraction(samples[0])
    answers = [y for y in samples[1:]]
    if not all(isinstance(y, ExpElement) for y in answers):
        raise TypeError("read_family needs the exact answers (ExpElement) of m = 1…2H0")
    window = exponent_window(answers)
    last = None
    for bits in prime_sizes(answers, window=window):
        try:
            engine = make_engine(get_backend("exact"), answers, rng, bits, 2 * H0 + 1, verify=True,
                                 window=window)
            ys = [engine.constant(g0)] + [engine.sample(y) for y in answers]
            K, heads = solve_family(engine.field, ys, H0)
            poles = tuple(sorted((engine.score(z), engine.scalar(c)) for z, c in heads))
            fam = FamilyFunction(tuple(a), tuple(b), engine.scalar(K), poles)
        except (BadReduction, LearningFailure) as e:
            last = e
            continue
        if len({s for s, _ in poles}) == len(poles) and all(c != 0 for _, c in poles) \
                and fam.reproduces([g0] + answers):
            return fam
        last = NotAttention("the interpolant read on a prime image does not reproduce the "
                            "family's samples exactly in Q(t)")
    raise NotAttention(f"the family's samples are not those of a rational model with ≤ {H0} "
                       f"heads ({last})", a=[str(x) for x in a], b=[str(x) for x in b])
