"""Modular images of Q(t) for the fast exact engine (docs/design.md §2 "fast exact").

The map Z[t] → F_p, t ↦ τ (p a random large prime, τ random) sends every oracle answer
num(t)/den(t) to num(τ)/den(τ) ∈ F_p.  The learner runs its field operations there
(python-flint ``fmpz_mod`` / ``fmpz_mod_poly``), reads exponents k of poles t^k back by a
discrete log (p − 1 is smooth, so Pohlig–Hellman is cheap) checked against a window
bounded by the answers' exponent spans, rebuilds rationals by rational reconstruction, and then
certifies the result exactly in Q(t).  A bad (p, τ) can only make the modular step fail or
give a model that the exact certification rejects, never a wrong certified answer.
"""

from __future__ import annotations

import random

from flint import fmpz

from ..errors import ExactAttnError
from .expfield import ExpElement
from .fields import PrimeField, rational_reconstruction

__all__ = ["ModularImage", "BadReduction", "random_prime", "rational_reconstruction"]


class BadReduction(ExactAttnError, ArithmeticError):
    """The chosen (p, τ) is unlucky for this data (a denominator vanishes mod p, the
    discrete-log table collides...): retry with another prime."""


_SMALL_PRIMES = [q for q in range(3, 2048) if fmpz(q).is_prime()]


def random_prime(bits: int, rng: random.Random):
    """A random prime p ≥ 2^(bits−1) with p − 1 = 2·∏ q_i smooth (q_i < 2048), and the
    distinct prime factors of p − 1.  Smoothness makes discrete logs cheap (Pohlig–Hellman)
    for every window, so pole exponents k of any size are read back exactly."""
    while True:
        factors = [2]
        n = 2
        while n.bit_length() < bits:
            q = rng.choice(_SMALL_PRIMES)
            factors.append(q)
            n *= q
        if fmpz(n + 1).is_prime():
            return n + 1, sorted(set(factors))


class ModularImage:
    """The reduction Q(t_{L*}) → F_p, t_{L*} = e^{1/L*} ↦ τ (docs/design.md §2 fast exact).

    τ is a primitive root of F_p (p − 1 smooth), so every z ∈ F_p* is τ^k for a unique
    k mod p − 1, found by Pohlig–Hellman (python-flint ``discrete_log``)."""

    def __init__(self, field: PrimeField, L: int, rng: random.Random, factors):
        self.field = field
        self.L = L
        p = field.p
        while True:
            tau = field.ctx(rng.randrange(2, p - 1))
            if all(not (tau ** ((p - 1) // q)).is_one() for q in factors):
                break
        self.tau = tau
        self._B, self._baby, self._giant, self._capacity = 1, [1], [1], 0

    def power(self, K: int) -> int:
        """τ^K mod p for 0 ≤ K, from two tables (baby steps τ^lo, giant steps τ^(hi·B)):
        one multiplication instead of a modular exponentiation per term."""
        if K >= self._capacity:
            self._build_tables(max(K + 1, 2 * self._capacity))
        hi, lo = divmod(K, self._B)
        return self._baby[lo] * self._giant[hi] % self.field.p

    def _build_tables(self, capacity: int):
        P = self.field.p
        B = 1
        while B * B < capacity:
            B *= 2
        tau = int(self.tau)
        baby = [1] * B
        for i in range(1, B):
            baby[i] = baby[i - 1] * tau % P
        step = baby[B - 1] * tau % P
        giant = [1] * (capacity // B + 1)
        for i in range(1, len(giant)):
            giant[i] = giant[i - 1] * step % P
        self._B, self._baby, self._giant, self._capacity = B, baby, giant, B * len(giant)

    def _value(self, poly, scale: int) -> int:
        """Σ c_k τ^(scale·k) mod p for a sparse polynomial with rational c_k."""
        P = self.field.p
        acc = 0
        power = self.power
        for (k,), c in zip(poly.monoms(), poly.coeffs()):
            q = int(c.q)
            if q == 1:
                acc += int(c.p) * power(scale * int(k))
            elif q % P:
                acc += int(c.p) * power(scale * int(k)) * pow(q, -1, P)
            else:
                raise BadReduction(f"a coefficient's denominator is divisible by the "
                                   f"{P.bit_length()}-bit prime")
        return acc % P

    def image(self, e: ExpElement):
        """num(τ^(L*/L))/den(τ^(L*/L)) in F_p; BadReduction if the denominator vanishes."""
        if self.L % e.L:
            raise ValueError(f"element over L={e.L} does not embed in L*={self.L}")
        P = self.field.p
        scale = self.L // e.L
        den = self._value(e.den, scale)
        if den == 0:
            raise BadReduction(f"an answer's denominator vanishes modulo the "
                               f"{P.bit_length()}-bit prime")
        return self.field.ctx(self._value(e.num, scale) * pow(den, -1, P))

    def dlog(self, z, window: int):
        """k with τ^k = z and |k| ≤ window, or None (docs/design.md §2: bounded discrete log)."""
        if z.is_zero():
            return None
        order = self.field.p - 1
        k = int(self.tau.discrete_log(z)) % order
        if k > order // 2:
            k -= order
        return k if abs(k) <= window and self.tau ** k == z else None
