"""Modular images of Q(t) for the fast exact engine (docs/design.md §2 "fast exact").

The map Z[t] → F_p, t ↦ τ (p a random large prime, τ random) sends every oracle answer
num(t)/den(t) to num(τ)/den(τ) ∈ F_p.  The learner runs its field operations there
(python-flint ``fmpz_mod`` / ``fmpz_mod_mat``), reads exponents k of poles t^k back by a
discrete log (p − 1 is smooth, so Pohlig–Hellman is cheap) checked against a window
bounded by the answers' exponent spans, rebuilds rationals by rational reconstruction, and then
certifies the result exactly in Q(t).  A bad (p, τ) can only make the modular step fail or
give a model that the exact certification rejects, never a wrong certified answer.

Evaluating a sparse polynomial Σ c_k t^k at τ is one integer matrix product inside
python-flint: the coefficient row (``fmpq_mat``, cleared of denominators in C) times a
column of the powers τ^k.  The answers of one copy-count family share their exponents, so
the column is built once per exponent set and reused (``verify=True`` compares the exponent
list of every polynomial with the cached one; ``verify=False`` trusts the cache key — the
number of terms and the lowest and highest exponent — which is cheaper and can only give a
wrong image, caught later: images never decide anything that the exact certification
does not re-check, and a failure is named only after a verified run).
"""

from __future__ import annotations

import random
from math import prod

from flint import fmpq_mat, fmpz, fmpz_mat

from ..errors import ExactAttnError
from .expfield import ExpElement
from .fields import PrimeField, rational_reconstruction

__all__ = ["ModularImage", "BadReduction", "random_prime", "lucas_certified",
           "rational_reconstruction"]


class BadReduction(ExactAttnError, ArithmeticError):
    """The chosen (p, τ) is unlucky or too small for this data (a denominator vanishes mod
    p, a discrete log leaves its window, a reconstruction fails...): retry at a larger
    prime (docs/design.md §2 fast exact)."""


_SMALL_PRIMES = [q for q in range(3, 2048) if fmpz(q).is_prime()]
_PRIMORIAL = fmpz(2)
for _q in _SMALL_PRIMES:
    _PRIMORIAL *= _q



def random_prime(bits: int, rng: random.Random):
    """A random prime p of exactly ``bits`` bits with p − 1 = 2·∏ q_i smooth (q_i < 2048),
    and the prime factors of p − 1 with multiplicity (a list).  Smoothness makes discrete
    logs cheap (Pohlig–Hellman) for every window, so pole exponents k of any size are read
    back.  Candidates with a factor below 2048 are discarded by one gcd before the
    primality test."""
    if bits < 16:
        raise ValueError(f"prime size {bits} bits is too small (need ≥ 16)")
    while True:
        factors = [2]
        n = 2
        while n.bit_length() < bits - 11:
            q = rng.choice(_SMALL_PRIMES)
            factors.append(q)
            n *= q
        # the last factor brings n + 1 to exactly `bits` bits
        lo, hi = -(-(1 << (bits - 1)) // n), ((1 << bits) - 2) // n
        last = [q for q in _SMALL_PRIMES if lo <= q <= hi]
        if not last:
            continue
        q = rng.choice(last)
        cand = fmpz(n * q + 1)
        if cand.gcd(_PRIMORIAL) == 1 and cand.is_probable_prime() \
                and lucas_certified(int(cand), factors + [q]):
            return int(cand), sorted(factors + [q])


def lucas_certified(n: int, factors) -> bool:
    """A proof that n is prime from the complete factorisation of n − 1 (``factors``, with
    multiplicity; the Lucas test in the form of Brillhart, Lehmer and Selfridge): for every
    prime q | n − 1 some base a with a^(n−1) ≡ 1 and a^((n−1)/q) ≢ 1 (mod n).  Then the order
    of the units of Z/n is divisible by every prime power dividing n − 1, so there are n − 1
    of them and n is prime.  Bases 2, 3, … are tried per q (most q accept a = 2); Fermat's
    test fails at once for a composite n.  (FLINT's general primality proof takes about 1 s
    at 2047 bits; this, about one modular power per prime factor.)"""
    if prod(factors) != n - 1 or n < 3:
        return False
    N, m = fmpz(n), n - 1
    checked = {}
    for q in sorted(set(factors)):
        for a in range(2, 2 + _LUCAS_BASES):
            if a not in checked:
                checked[a] = pow(fmpz(a), m, N) == 1
                if not checked[a]:
                    return False                # Fermat: n is composite
            if pow(fmpz(a), m // q, N) != 1:
                break
        else:
            return False
    return True


#: bases tried per prime factor before a candidate is given up (a prime n has φ(q)/q of
#: them fail per q; a rejected prime only means the next candidate)
_LUCAS_BASES = 64


class ModularImage:
    """The reduction Q(t_{L*}) → F_p, t_{L*} = e^{1/L*} ↦ τ (docs/design.md §2 fast exact).

    Exponents are read back only in a window |k| ≤ W, so only k mod M is needed for some
    M | p − 1 with M > 2W + 1: M is made of the largest prime factors of p − 1, τ is drawn
    at random until g = τ^((p−1)/M) has order exactly M, and z = τ^k gives k mod M by
    Pohlig–Hellman in ⟨g⟩ (a few exponentiations and small tables, whatever the size of p).
    ``window=None`` takes M = p − 1 (τ a primitive root)."""

    def __init__(self, field: PrimeField, L: int, rng: random.Random, factors,
                 verify: bool = True, window: int | None = None):
        self.field = field
        self.L = L
        self.verify = verify
        p = field.p
        self._subgroup(sorted(factors, reverse=True), window)
        M, qs = self._M, sorted(set(self._Mfactors))
        while True:
            tau = field.ctx(rng.randrange(2, p - 1))
            g = tau ** ((p - 1) // M)
            if all(not (g ** (M // q)).is_one() for q in qs):
                break
        self.tau, self._g = tau, g
        self._columns = {}
        self._groups = {}
        self._plan = None

    def _subgroup(self, factors, window):
        """M = a product of the largest prime factors of p − 1 exceeding 2·window + 1."""
        need = None if window is None else 2 * window + 2
        M, used = 1, []
        for q in factors:
            if need is not None and M >= need:
                break
            M *= q
            used.append(q)
        if need is not None and M < need:
            raise BadReduction(f"a {self.field.p.bit_length()}-bit prime cannot hold the "
                               f"discrete-log window ±{window}")
        self._M, self._Mfactors = M, used

    # ------------------------------------------------------------------ powers of τ
    def power(self, K: int) -> int:
        """τ^K mod p for K ≥ 0: one modular exponentiation in python-flint (about 0.8 µs at
        62 bits, 20× Python's ``pow``; cheaper than baby-step/giant-step tables, whose
        building cost more than the powers a run asks for, and which grew with K)."""
        return int(self.tau ** K)

    def _column(self, poly, scale: int, n: int):
        """The column (τ^(scale·k))_k over the exponents of ``poly`` (cached per exponent set)."""
        key = (scale, n, int(poly.degrees()[0]), int(poly.monomial(n - 1)[0]))
        cached = self._columns.get(key)
        if cached is not None and not self.verify:
            return cached[1]
        exps = [int(m[0]) for m in poly.monoms()]
        if cached is not None and cached[0] == exps:
            return cached[1]
        col = fmpz_mat(n, 1, [self.power(scale * k) for k in exps])
        if len(self._columns) > 4096:
            self._columns.clear()
        self._columns[key] = (exps, col)
        return col

    def _value(self, poly, scale: int) -> int:
        """Σ c_k τ^(scale·k) mod p for a sparse polynomial with rational c_k: one integer
        row-times-column product in python-flint."""
        n = len(poly)
        if n == 0:
            return 0
        P = self.field.p
        col = self._column(poly, scale, n)
        num, den = fmpq_mat(1, n, poly.coeffs()).numer_denom()
        if den % P == 0:
            raise BadReduction(f"a coefficient's denominator is divisible by the "
                               f"{P.bit_length()}-bit prime")
        return int((num * col)[0, 0]) * pow(int(den), -1, P) % P

    def image(self, e: ExpElement):
        """num(τ^(L*/L))/den(τ^(L*/L)) in F_p; BadReduction if the denominator vanishes."""
        if self.L % e.L:
            raise ValueError(f"element over L={e.L} does not embed in L*={self.L}")
        P = self.field.p
        scale = self.L // e.L
        packed = getattr(e, "packed", None)
        if packed is not None and packed[0].weighable and packed[0].Da % P:
            # else: as the polynomials' image
            return self._packed_image(packed, scale)
        den = self._value(e.den, scale)
        if den == 0:
            raise BadReduction(f"an answer's denominator vanishes modulo the "
                               f"{P.bit_length()}-bit prime")
        return self.field.ctx(self._value(e.num, scale) * pow(den, -1, P))

    def _per_group(self, group, scale: int, kind: str, build):
        """``build()`` once per (group, scale, kind): the cache keeps the group alive, so its
        id is not reused; it is emptied beyond 4096 entries."""
        key = (id(group), scale, kind)
        cached = self._groups.get(key)
        if cached is None or cached[0] is not group:
            cached = (group, build())
            if len(self._groups) > 4096:
                self._groups.clear()
            self._groups[key] = cached
        return cached[1]

    def _weights(self, group, scale: int):
        """The weights of a group at t ↦ τ^scale, computed once per group: the powers
        τ^(scale·k_hi), then N/D_a and D at τ as polynomials in μ
        (:meth:`~.multiplicities.TokenGroup.image_weights`; N's weights times D_a⁻¹)."""
        def build():
            P = self.field.p
            powers = [[self.power(scale * k) for k in ks] for ks, _ in group.heads]
            wN, wD = group.image_weights(powers, P)
            inv_Da = pow(group.Da, -1, P)
            return [w * inv_Da % P for w in wN], wD
        return self._per_group(group, scale, "weights", build)

    def _packed_parts(self, packed, weights):
        """(N(τ, μ)/D_a, D(τ, μ)) mod p of a packed answer from its group's weights;
        BadReduction when D vanishes."""
        group, mult = packed
        P = self.field.p
        num, den = group.image(weights, mult, P)
        if den == 0:
            raise BadReduction(f"an answer's denominator vanishes modulo the "
                               f"{P.bit_length()}-bit prime")
        return num, den

    def _packed_image(self, packed, scale: int):
        """The image of a :class:`~.multiplicities.PackedElement` from its group's heads: a
        two-token answer through :meth:`_pair_images`; otherwise the powers τ^(scale·k_hi)
        and the weights of N and D at τ as polynomials in μ once per group
        (:meth:`~.multiplicities.TokenGroup.image_weights`), then one short dot product per
        answer; the same value as the polynomials' image, N/D_a over D at τ."""
        if packed[0].n == 2:
            out = [None]
            self._pair_images([(0, packed, scale)], out)
            return out[0]
        num, den = self._packed_parts(packed, self._weights(packed[0], scale))
        ctx = self.field.ctx
        return ctx(num) / ctx(den)

    def _binary_polynomials(self, group, scale: int):
        """N/D_a and D of a two-token group at t ↦ τ^scale as polynomials in r = μ₁/μ₂ over
        F_p (python-flint ``fmpz_mod_poly``), once per group: D(r) = Π_h (τ^{k_h1} r + τ^{k_h2})
        and N(r) = Σ_h (a_h1 τ^{k_h1} r + a_h2 τ^{k_h2}) Π_{g≠h} (τ^{k_g1} r + τ^{k_g2}),
        built head by head as N ← N·D_h + D·N_h, D ← D·D_h.  N(μ₁, μ₂) and D(μ₁, μ₂) are
        μ₂^H times these at r, so their ratio is the answer's image."""
        def build():
            P, make = self.field.p, self.field.poly_ctx
            N, D = make([0]), make([1])
            for (ks, (a1, a2)) in group.heads:
                p1, p2 = self.power(scale * ks[0]), self.power(scale * ks[1])
                Dh = make([p2, p1])
                N, D = N * Dh + D * make([a2 * p2 % P, a1 * p1 % P]), D * Dh
            return N * pow(group.Da, -1, P), D
        return self._per_group(group, scale, "pair", build)

    def images(self, elems):
        """``[self.image(e) for e in elems]``, a copy-count family at once: the answers of a
        two-token group (the family's) through :meth:`_binary_polynomials`, evaluated at
        every r = μ₁/μ₂ in one multipoint evaluation in C; other packed answers through the
        group's weights (looked up once per group) with their denominators inverted together
        (one modular inversion, Montgomery's trick); anything else as :meth:`image`."""
        P = self.field.p
        out, nums, dens, where, pairs = [None] * len(elems), [], [], [], []
        last = weights = checked = None
        for i, e in enumerate(elems):
            packed = getattr(e, "packed", None)
            if packed is None:
                out[i] = self.image(e)
                continue
            group = packed[0]       # e.L is the group's L: the checks are the group's
            if group is not checked:
                if not group.weighable or group.Da % P == 0 or self.L % group.L:
                    out[i] = self.image(e)      # as image() does it, or its error
                    continue
                checked = group
            if group.n == 2:
                pairs.append((i, packed, self.L // group.L))
                continue
            key = (packed[0], e.L)
            if key != last:
                last, weights = key, self._weights(packed[0], self.L // e.L)
            num, den = self._packed_parts(packed, weights)
            nums.append(num)
            dens.append(den)
            where.append(i)
        ctx = self.field.ctx
        for i, num, inv in zip(where, nums, _inverses(dens, P)):
            out[i] = ctx(num * inv % P)
        self._pair_images(pairs, out)
        return out

    def _pair_images(self, pairs, out):
        """The images of two-token answers [(index, (group, μ), scale)], a run of one group
        at a time: N/D_a and D evaluated at every r = μ₁ μ₂⁻¹ at once."""
        P = self.field.p
        start = 0
        while start < len(pairs):
            group, scale = pairs[start][1][0], pairs[start][2]
            stop = start
            while stop < len(pairs) and pairs[stop][1][0] is group and pairs[stop][2] == scale:
                stop += 1
            run = pairs[start:stop]
            N, D = self._binary_polynomials(group, scale)
            points = [m1 if m2 == 1 else m1 * pow(m2, -1, P) % P for _, (_, (m1, m2)), _ in run]
            for (i, _, _), n, d in zip(run, N.multipoint_evaluate(points),
                                       D.multipoint_evaluate(points)):
                if d == 0:
                    raise BadReduction(f"an answer's denominator vanishes modulo the "
                                       f"{P.bit_length()}-bit prime")
                out[i] = n / d
            start = stop

    def dlog(self, z, window: int):
        """k with τ^k = z and |k| ≤ window, or None (docs/design.md §2: bounded discrete log;
        Pohlig–Hellman in the subgroup of order M > 2·window + 1)."""
        if z.is_zero():
            return None
        M = self._M
        if 2 * window + 1 >= M:
            raise BadReduction(f"the discrete-log window ±{window} does not fit the subgroup "
                               f"of order {M}")
        h = z ** ((self.field.p - 1) // M)  # = g^k
        k, mod = 0, 1
        for q, e, qe, cofactor, inv, c_inv, table, crt in self._pohlig_hellman():
            if c_inv is None:                       # γ has order q, so c ≠ 0 (never reached)
                return None
            x = self._prime_power_log(inv, h ** cofactor, q, e, c_inv, table)
            if x is None:
                return None
            k = k + mod * ((x - k) * crt % qe)      # CRT
            mod *= qe
        k %= mod
        if k > mod // 2:
            k -= mod
        return k if abs(k) <= window and self.tau ** k == z else None

    def _pohlig_hellman(self):
        """What every discrete log at this τ shares, per prime power q^e of M (made once):
        q, e, q^e, M/q^e, the inverse of g_q = g^(M/q^e), c⁻¹ mod q for γ = g_q^(q^(e−1)) = γ₀^c
        (None if c = 0), the digit table of γ₀ and the CRT coefficient (Π of the earlier
        prime powers)⁻¹ mod q^e."""
        if self._plan is None:
            p, M, plan, mod = self.field.p, self._M, [], 1
            for q, e in _multiplicities(self._Mfactors):
                qe = q ** e
                gq = self._g ** (M // qe)
                table = _digit_table(p, q)[1]
                c = table.get(int(gq ** (q ** (e - 1))))
                inv = gq.inverse() if hasattr(gq, "inverse") else self.field.one / gq
                plan.append((q, e, qe, M // qe, inv, pow(c, -1, q) if c else None, table,
                             pow(mod, -1, qe)))
                mod *= qe
            self._plan = plan
        return self._plan

    def _prime_power_log(self, inv, hq, q, e, c_inv, table):
        """x mod q^e with g_q^x = hq, g_q of order q^e (digit by digit; ``inv`` = g_q⁻¹).  The
        digits are read in the subgroup of order q through the process-wide table of a fixed
        element γ₀ of order q (:func:`_digit_table`, built once per (p, q), not once per τ):
        γ = g_q^(q^(e−1)) is γ₀^c, and a digit read as γ₀^δ is δ·c⁻¹ mod q."""
        x = 0
        for j in range(e):
            hj = hq if e == 1 else (inv ** x * hq) ** (q ** (e - 1 - j))
            d = table.get(int(hj))
            if d is None:
                return None
            x += (d * c_inv % q) * q ** j
        return x


#: (p, q) → (γ₀, {γ₀^δ: δ}) for the discrete logs' digits; p − 1 has at most a few hundred
#: prime factors below 2048, and a process uses the ladder's six primes
_DIGIT_TABLES = {}
_DIGIT_TABLES_LIMIT = 2048


def _digit_table(p: int, q: int):
    """A fixed element γ₀ of order q in F_p^* (the first of 2, 3, … whose ((p−1)/q)-th power
    is not 1) and the table {γ₀^δ mod p: δ} for δ < q, once per process."""
    key = (p, q)
    got = _DIGIT_TABLES.get(key)
    if got is None:
        x = 2
        while True:
            gamma0 = pow(x, (p - 1) // q, p)
            if gamma0 != 1:
                break
            x += 1
        table, acc = {}, 1
        for delta in range(q):
            table[acc] = delta
            acc = acc * gamma0 % p
        if len(_DIGIT_TABLES) >= _DIGIT_TABLES_LIMIT:
            _DIGIT_TABLES.clear()
        got = _DIGIT_TABLES[key] = (gamma0, table)
    return got


def _inverses(xs, P: int):
    """[x⁻¹ mod P for x in xs] (each x ≠ 0 mod P) with one modular inversion: prefix
    products, the inverse of the whole product, then back (Montgomery's trick)."""
    prefix, acc = [], 1
    for x in xs:
        prefix.append(acc)
        acc = acc * x % P
    inv = pow(acc, -1, P) if xs else 1
    out = [0] * len(xs)
    for i in range(len(xs) - 1, -1, -1):
        out[i] = inv * prefix[i] % P
        inv = inv * xs[i] % P
    return out


def _multiplicities(factors):
    out = {}
    for q in factors:
        out[q] = out.get(q, 0) + 1
    return sorted(out.items())
