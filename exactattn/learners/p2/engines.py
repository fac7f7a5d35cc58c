"""Where a learner's field operations run (docs/design.md §2): the fast exact engine (modular images
of Q(t), then exact lifting) or the real engine (mp / float directly).

An engine turns oracle answers into field elements (``sample``), rational constants into
field elements (``constant``), and field results back into backend scalars: ``score`` for a
pole z = e^{score}, ``scalar`` for a residue or constant.
"""

from __future__ import annotations

import random
from fractions import Fraction
from math import lcm, prod

from ...arith.expfield import ExpElement
from ...arith.fields import RealField, prime_field
from ...arith.modular import BadReduction, ModularImage, random_prime
from ...errors import LearningFailure, NotAttention
from .ladder_primes import LADDER_FACTORS

__all__ = ["ModularEngine", "RealEngine", "make_engine", "PRIME_BITS", "prime_sizes",
           "ladder_prime", "ExponentsTooLarge",
           "exponent_window", "STRUCTURAL", "repeated_structural"]


class ExponentsTooLarge(LearningFailure):
    """The answers' exponents are too large for every prime of the modular ladder."""

    reason = "exponents-too-large"


#: the prime sizes of the modular ladder (docs/design.md §2 fast exact): every modular mishap
#: — a denominator or pivot that vanishes mod p, a discrete log outside its window, a wrong or
#: failed rational reconstruction — is retried at the next size before a failure is named.
PRIME_BITS = (62, 127, 255, 511, 1023, 2047)

_PRIMES = {}


#: failures whose reason does not depend on the prime's size: pole exponents are read back
#: exactly in their window, and a residue is zero or not; a second prime rules out an unlucky
#: one (reconstruction-dependent failures — not-attention, certification — climb the ladder)
STRUCTURAL = ("colliding-poles", "invisible-head")


def repeated_structural(reasons) -> bool:
    """The last two prime sizes failed with the same structural reason (``reasons``: the
    attempts so far, each a reason string or a dict with an "outcome")."""
    last = [r["outcome"] if isinstance(r, dict) else r for r in reasons[-2:]]
    return len(last) == 2 and last[0] == last[1] and last[0] in STRUCTURAL


def ladder_prime(bits: int):
    """The prime of the ladder at ``bits`` bits, with the factors of p − 1: drawn once per
    process from a generator seeded by the size (deterministic, so results do not depend
    on what ran before); the randomness of each run is in τ."""
    if bits not in _PRIMES:
        factors = LADDER_FACTORS.get(bits)
        if factors is None:
            _PRIMES[bits] = random_prime(bits, random.Random(bits))
        else:                                   # the same prime, precomputed
            _PRIMES[bits] = (1 + prod(factors), sorted(factors))
    return _PRIMES[bits]


def prime_sizes(answers, sizes=None, window=None):
    """The ladder sizes (default PRIME_BITS) able to read every pole exponent back: a
    discrete log is unique only when p − 1 > 2·window (the answers' largest exponent span)."""
    window = (window or _window(answers))[1]
    return tuple(b for b in (PRIME_BITS if sizes is None else sizes)
                 if 1 << (b - 1) > 2 * window + 1)


def exponent_window(answers):
    """(L*, W, S): the common L of the answers, their largest exponent span + 1 (the
    discrete-log window) and the sum S of their spans (for the failure bound)."""
    return _window(answers)


def _window(answers):
    elems = [a for a in answers if isinstance(a, ExpElement)]
    L = lcm(1, *{e.L for e in elems})
    spans = [(L // e.L) * e.exponent_span() for e in elems]
    return L, max(spans, default=0) + 1, sum(spans)


class ModularEngine:
    """Q(t) → F_p, t_{L*} ↦ τ; poles read back by a bounded discrete log, residues by rational
    reconstruction (docs/design.md §2 fast exact).  The caller certifies the result exactly.

    ``bits`` picks the ladder's prime of that size; ``verify=False`` lets the images trust
    their cache of exponent sets (see :mod:`exactattn.arith.modular`)."""

    def __init__(self, answers, bits: int, rng: random.Random, samples_per_family: int = 3,
                 verify: bool = True, window=None):
        elems = [a for a in answers if isinstance(a, ExpElement)]
        self.L, self.window, self.degree_total = window or _window(elems)
        self.bits = bits
        p, factors = ladder_prime(bits)
        if p - 1 <= 2 * self.window:
            raise BadReduction(f"a {bits}-bit prime cannot hold the discrete-log window "
                               f"±{self.window}")
        self.field = prime_field(p)
        self.image = ModularImage(self.field, self.L, rng, factors, verify=verify,
                                  window=self.window)
        self.samples_per_family = samples_per_family

    def sample(self, answer):
        if not isinstance(answer, ExpElement):
            raise TypeError("the exact engine needs ExpElement answers")
        return self.image.image(answer)

    def sample_many(self, answers):
        """``[self.sample(a) for a in answers]``, a family at once
        (:meth:`~exactattn.arith.modular.ModularImage.images`)."""
        if not all(isinstance(a, ExpElement) for a in answers):
            raise TypeError("the exact engine needs ExpElement answers")
        return self.image.images(answers)

    def constant(self, q: Fraction):
        if q.denominator % self.field.p == 0:
            raise BadReduction(f"a rational's denominator is divisible by the {self.bits}-bit "
                               f"prime")
        return self.field.ctx(q.numerator) / self.field.ctx(q.denominator)

    def score(self, z) -> Fraction:
        """log z for z = τ^k: k/L* exactly, or NotAttention if z is no power of τ in the
        window."""
        k = self.image.dlog(z, self.window)
        if k is None:
            raise NotAttention(
                f"a pole is not e^(k/{self.L}) for any |k| ≤ {self.window} (the answers' "
                f"exponent span): not attention on these rational queries", L=self.L)
        return Fraction(k, self.L)

    def scalar(self, c) -> Fraction:
        f = self.field.lift(c)
        if f is None:
            raise BadReduction(f"rational reconstruction failed at {self.bits} bits")
        return f

    @property
    def failure_bound(self):
        """A union bound on Pr[τ is unlucky], as a Fraction D/p.  The F_p computation relies
        on the images of finitely many nonzero elements of Q(t) being nonzero: the answers'
        denominators, the pivots of each family's interpolation system (determinants of
        size ≤ 2H₀+1 in the samples; the Euclid fit of a word-size prime accepts and
        refuses exactly as those systems do, docs/design.md §4.3) and the differences of
        distinct poles.  Each has a
        numerator of degree ≤ (2H₀+2)·S, S the sum of the answers' exponent spans, and a
        polynomial of degree D has ≤ D roots among the p choices of τ.  (A prime dividing
        a rational denominator is not counted: it raises BadReduction.)  An unlucky τ can
        only cause a retry or a failed certification, never a wrong certified answer."""
        return Fraction(max(1, self.degree_total) * (self.samples_per_family + 1), self.field.p)

    def describe(self):
        return {"engine": "modular", "prime_bits": self.field.p.bit_length(), "L": self.L,
                "dlog_window": self.window, "failure_bound": str(self.failure_bound)}


class RealEngine:
    """mp / float: the answers are already field elements (docs/design.md §2 mp, float)."""

    def __init__(self, backend, tolerance=None):
        self.backend = backend
        self.field = RealField(backend, tolerance)

    def sample(self, answer):
        return answer

    def sample_many(self, answers):
        return list(answers)

    def constant(self, q):
        return self.backend.scalar(q)

    def score(self, z):
        if z <= 0:
            raise NotAttention(f"a pole z = {z} is not positive, so not e^score",
                               pole=str(z))
        return self.backend.log(z)

    def scalar(self, c):
        return c

    def describe(self):
        return {"engine": self.backend.name, "tolerance": str(self.field.tolerance)}


def make_engine(backend, answers, rng, bits=127, samples_per_family=3, verify=True,
                window=None):
    """The engine for a backend: modular images for exact, the reals otherwise."""
    if backend.name == "exact":
        return ModularEngine(answers, bits, rng, samples_per_family, verify, window)
    return RealEngine(backend, real_tolerance(backend))


def real_tolerance(backend, precision=None):
    """The interpolation zero-test tolerance of the real engine: η^(1/2) for the precision η
    (the oracle's, or the backend's own; :mod:`exactattn.learners.result.precision`)."""
    from ..result.precision import approximate_tolerances, backend_precision
    prec = precision or backend_precision(backend)
    return backend.scalar(approximate_tolerances(prec)["interpolation"])
