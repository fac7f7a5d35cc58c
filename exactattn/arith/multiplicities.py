"""Answers as polynomials in t and the token multiplicities (docs/design.md §2, "batched exact
evaluation"; the algebra of P2's copy-count family, made the evaluator's hot path).

Queries with the same distinct tokens z_1, …, z_n (the final token last) differ only in the
multiplicities μ = (μ_1, …, μ_n); P2's copy-count family [(x+u) × m, x] is μ = (m, 1).  Each
head's softmax average is Σ_i μ_i a_i t^{k_i} / Σ_i μ_i t^{k_i}, so the answer of every such
query is N(t, μ) / (D_a · D(t, μ)) with two integer polynomials, homogeneous of degree H in μ,

    D = Π_h D_h,   N = Σ_h N_h Π_{g≠h} D_g,   D_h = Σ_i μ_i t^{k_hi},   N_h = Σ_i a_hi μ_i t^{k_hi},

computed once per group (Python integers, merged head by head) and stored as two integer matrices C_N, C_D (μ-monomials × t-exponents, python-flint ``fmpz_mat``).  A member's coefficients are then one row
product in C, V(μ)·C, with V(μ) the values μ^α: no polynomial arithmetic per query.

:class:`PackedElement` is an :class:`~exactattn.arith.expfield.ExpElement` that keeps those
two integer rows and builds its python-flint polynomials only when asked (``num``, ``den``,
any arithmetic).  The polynomials it builds are exactly those of the direct evaluation (the
same expansion, coefficients N/D_a over D; tests/test_multiplicities.py), so certificates
and every result are unchanged.  Equality of two packed elements with the same exponents,
L and D_a and equal rows is decided on the rows (equal rows: equal elements); otherwise it
is the ExpElement equality.  No float is used anywhere here.
"""

from __future__ import annotations

from operator import mul

from flint import fmpq, fmpz_mat

from .expfield import ExpElement, R, check_product

__all__ = ["TokenGroup", "PackedElement", "GROUP_TERMS", "GROUP_TOKENS", "grouped"]

#: a group is built only for at most GROUP_TOKENS distinct tokens and n^H ≤ GROUP_TERMS
#: choices (the (t, μ)-terms); larger queries (many distinct tokens, each once) are
#: evaluated directly.
GROUP_TERMS = 1 << 12
GROUP_TOKENS = 8

_NUM = ExpElement.__dict__["num"]
_DEN = ExpElement.__dict__["den"]
_L = ExpElement.__dict__["L"]
_RED = ExpElement.__dict__["_reduced"]


def grouped(n: int, H: int) -> bool:
    """Whether queries with n distinct tokens on H heads are evaluated through a group."""
    return 1 <= H and n <= GROUP_TOKENS and n ** H <= GROUP_TERMS


class TokenGroup:
    """The answers N(t, μ)/(D_a D(t, μ)) of every query with these distinct tokens, for one
    model (module docstring).  ``scores[h][i]`` = k_hi (integers, t = e^{1/L}) and
    ``values[h][i]`` = a_hi (integers over D_a): the direct evaluation's per-head data.

    The expansion is the product over heads, merged as it goes (Python integers, exact):
    a term is μ^α t^E with α_i counting the heads that took token i; in D its coefficient
    is the number of such choices, in N the sum over them of Σ_h a_{h, c_h}."""

    __slots__ = ("n", "H", "L", "Da", "heads", "cells", "_base", "_E", "_CN", "_CD", "_twin")

    def __init__(self, scores, values, L: int, Da: int):
        n, H = len(scores[0]), len(scores)
        self.n, self.H, self.L, self.Da, self._twin = n, H, L, Da, None
        # the answers have as many terms as the direct evaluation's: the same refusal
        check_product(*(len(set(ks)) for ks in scores),
                      span=sum(max(ks) - min(ks) for ks in scores), what="this answer")
        #: per head (k_hi − min_i k_hi, a_hi): D_h and N_h themselves
        self.heads = tuple((tuple(k - min(ks) for k in ks), tuple(vals))
                           for ks, vals in zip(scores, values))
        self._base = (H + 1) ** n
        #: {E·base + code of α: (coefficient in D, coefficient in N)} — N and D exactly
        self.cells = _expand(self.heads, H + 1, self._base)
        self._E = None

    @property
    def E(self):
        """The t-exponents of D (sorted): the columns of C_N and C_D."""
        if self._E is None:
            self._matrices()
        return self._E

    def _matrices(self):
        """C_N and C_D as python-flint matrices (μ-monomials × E), built on first use."""
        base = self._base
        self._E = E = sorted({key // base for key in self.cells})
        col = {e: j for j, e in enumerate(E)}
        row = _compositions(self.n, self.H)[1]
        CD, CN = fmpz_mat(len(row), len(E)), fmpz_mat(len(row), len(E))
        # entry by entry: far cheaper than python-flint's list constructor (few are nonzero)
        for key, (cd, cn) in self.cells.items():
            e, code = divmod(key, base)
            i, j = row[code], col[e]
            CD[i, j] = cd
            if cn:
                CN[i, j] = cn
        self._CD, self._CN = CD, CN

    def span(self) -> int:
        """The exponent span of every member: D has every choice's exponent (its
        coefficients are positive), from 0 to Σ_h max_i k_hi, and N's lie among them."""
        return sum(max(ks) for ks, _ in self.heads)

    def image_weights(self, powers, P: int):
        """(w_N, w_D): N and D at t = τ as polynomials in μ mod P, one weight per
        μ-monomial α (the rows of C_N, C_D), from ``powers[h][i]`` = τ^(k_hi) mod P:
        D = Π_h D_h and N = Σ_h N_h Π_{g≠h} D_g expanded in μ alone (:func:`_product`, as
        :func:`_expand` but at t = τ — a ring homomorphism, so the value of the expanded
        polynomials).  A
        member's image is then one short dot product with V(μ) (:meth:`image`)."""
        if self.n == 2:                      # a copy-count family's group: [z1 × m, z2]
            return _binary_weights(self.heads, powers, P)
        radix = self.H + 1
        state = _product([[(radix ** i, p, a * p) for i, (a, p) in enumerate(zip(vals, pw))]
                          for (_, vals), pw in zip(self.heads, powers)], P)
        codes = _compositions(self.n, self.H)[0]
        return ([state.get(c, (0, 0))[1] for c in codes], [state.get(c, (0, 0))[0] for c in codes])

    def image(self, weights, mult, P: int):
        """(N(τ, μ) mod P, D(τ, μ) mod P) from :meth:`image_weights`."""
        V = _monomial_row(self.n, self.H, tuple(mult))[0]
        wN, wD = weights
        return sum(map(mul, V, wN)) % P, sum(map(mul, V, wD)) % P

    def member(self, mult) -> ExpElement:
        """The answer at multiplicities ``mult`` (each ≥ 1): a :class:`PackedElement`, or the
        exact zero (as the direct evaluation gives it) when N(t, μ) vanishes."""
        if self._E is None:
            self._matrices()
        V = _monomial_row(self.n, self.H, tuple(mult))[1]
        rowN = V * self._CN
        if rowN.is_zero():
            return ExpElement(R.from_dict({}), None, 1)
        return PackedElement._make(self, tuple(mult), rowN, V * self._CD)

    def same_as(self, other) -> bool:
        """Equal polynomials N, D and equal L, D_a: then equal multiplicities give equal
        answers (the rows are equal)."""
        if self is other or self._twin is other:
            return True
        same = (self.n == other.n and self.H == other.H and self.L == other.L
                and self.Da == other.Da and self.cells == other.cells)
        if same:
            self._twin = other
        return same


def _expand(heads, radix: int, base: int):
    """{E·base + code of α: (coefficient in D, coefficient in N)}: the product of the heads'
    factors D_h = Σ_i μ_i t^{k_hi} (:func:`_product`; the code of α is Σ_i α_i · radix^i <
    base, so one integer key E·base + code stands for the term μ^α t^E)."""
    return _product([[(k * base + radix ** i, 1, a) for i, (k, a) in enumerate(zip(ks, vals))]
                     for ks, vals in heads])


def _product(factors, modulus=None):
    """D = Π_h D_h and N = Σ_h N_h Π_{g≠h} D_g, expanded factor by factor and merged as it
    goes, as {key: (coefficient in D, coefficient in N)}: factor h is a list of terms
    (key step, w, a·w), D_h = Σ w·X^step and N_h = Σ a·w·X^step (keys add as exponents
    multiply).  With ``modulus`` the coefficients are reduced after each factor."""
    state = {0: (1, 0)}
    for steps in factors:
        new = {}
        get = new.get
        for key, (cd, cn) in state.items():
            for step, w, aw in steps:
                k2 = key + step
                old = get(k2)
                if old is None:
                    new[k2] = (cd * w, cn * w + cd * aw)
                else:
                    new[k2] = (old[0] + cd * w, old[1] + cn * w + cd * aw)
        state = new if modulus is None else \
            {key: (cd % modulus, cn % modulus) for key, (cd, cn) in new.items()}
    return state


def _binary_weights(heads, powers, P: int):
    """:meth:`TokenGroup.image_weights` for two distinct tokens, as dense coefficient lists
    in μ₁ (μ₁^j μ₂^(H−j), j = 0…H): D ← D·D_h and N ← N·D_h + D·N_h head by head, with
    D_h = τ^(k_h1) μ₁ + τ^(k_h2) μ₂ and N_h = a_h1 τ^(k_h1) μ₁ + a_h2 τ^(k_h2) μ₂ — the same
    expansion as :func:`_product`, without its keys; returned in the rows' order (the sorted
    codes j + (H−j)(H+1), that is j from H down to 0)."""
    D, N = [1], [0]
    for (_, (a1, a2)), (p1, p2) in zip(heads, powers):
        w1, w2 = a1 * p1, a2 * p2
        newD, newN = [0] * (len(D) + 1), [0] * (len(D) + 1)
        for j, (d, n) in enumerate(zip(D, N)):
            newD[j + 1] += d * p1
            newD[j] += d * p2
            newN[j + 1] += n * p1 + d * w1
            newN[j] += n * p2 + d * w2
        D = [x % P for x in newD]
        N = [x % P for x in newN]
    return N[::-1], D[::-1]


def _parts(n: int, H: int):
    """Every α ∈ ℕ^n with Σ α_i = H."""
    if n == 1:
        yield (H,)
        return
    for a in range(H + 1):
        for rest in _parts(n - 1, H - a):
            yield (a,) + rest


_COMPOSITIONS = {}
_MONOMIALS = {}


def _compositions(n: int, H: int):
    """(the compositions α of H into n parts as sorted codes Σ α_i (H+1)^i, code → row)."""
    hit = _COMPOSITIONS.get((n, H))
    if hit is None:
        codes = sorted(sum(a * (H + 1) ** i for i, a in enumerate(alpha))
                       for alpha in _parts(n, H))
        hit = (codes, {c: r for r, c in enumerate(codes)})
        _COMPOSITIONS[(n, H)] = hit
    return hit


def _monomial_row(n: int, H: int, mult):
    """(μ^α) over the sorted compositions α (the rows of C_N and C_D), as Python integers
    and as a 1-row fmpz_mat, cached."""
    key = (n, H, mult)
    V = _MONOMIALS.get(key)
    if V is None:
        vals = []
        for code in _compositions(n, H)[0]:
            v = 1
            for m in mult:
                code, a = divmod(code, H + 1)
                if a:
                    v *= m ** a
            vals.append(v)
        V = (vals, fmpz_mat(1, len(vals), vals))
        if len(_MONOMIALS) > 1 << 16:
            _MONOMIALS.clear()
        _MONOMIALS[key] = V
    return V


def _lazy(slot):
    """A property reading and writing ExpElement's ``slot`` (num or den) once the element
    has built its polynomials."""
    def get(self):
        self._build()
        return slot.__get__(self)

    def set(self, value):
        self._build()
        slot.__set__(self, value)
    return property(get, set)


class PackedElement(ExpElement):
    """An ExpElement N(t, μ)/(D_a D(t, μ)) of a :class:`TokenGroup`, kept as its two integer
    coefficient rows until its python-flint polynomials are asked for (module docstring)."""

    __slots__ = ("_group", "_mult", "_rowN", "_rowD")

    @classmethod
    def _make(cls, group, mult, rowN, rowD):
        e = cls.__new__(cls)
        e._group, e._mult, e._rowN, e._rowD = group, mult, rowN, rowD
        _L.__set__(e, group.L)
        _RED.__set__(e, False)
        return e

    # ------------------------------------------------------------------ lazy polynomials
    def _build(self):
        g = self._group
        if g is None:
            return
        Da = g.Da
        num = R.from_dict({(e,): fmpq(c, Da) for e, c in zip(g.E, self._rowN.entries()) if c})
        den = R.from_dict({(e,): c for e, c in zip(g.E, self._rowD.entries())})
        _NUM.__set__(self, num)
        _DEN.__set__(self, den)
        self._group = None

    num = _lazy(_NUM)
    den = _lazy(_DEN)

    @property
    def packed(self):
        """(group, μ, N-row, D-row) while the element is unbuilt, else None."""
        g = self._group
        return None if g is None else (g, self._mult, self._rowN, self._rowD)

    # ------------------------------------------------------------------ cheap queries
    def exponent_span(self) -> int:
        g = self._group
        if g is None:
            return super().exponent_span()
        return g.span()

    def __eq__(self, other):
        if type(other) is PackedElement and self._group is not None \
                and other._group is not None and self._group.same_as(other._group) \
                and self._rowN == other._rowN and self._rowD == other._rowD:
            return True
        return super().__eq__(other)

    __hash__ = ExpElement.__hash__

