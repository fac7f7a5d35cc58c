"""Answers as their heads' parts, expanded only when asked (docs/design.md §2, "lazy exact
answers"; the algebra of P2's copy-count family, made the evaluator's hot path).

Queries with the same distinct tokens z_1, …, z_n (the final token last) differ only in the
multiplicities μ = (μ_1, …, μ_n); P2's copy-count family [(x+u) × m, x] is μ = (m, 1).  Each
head's softmax average is N_h/D_h with

    D_h = Σ_i μ_i t^{k_hi},   N_h = Σ_i a_hi μ_i t^{k_hi}    (k_hi = L·s_hi, shifted to min 0),

and the answer is (1/D_a) Σ_h N_h/D_h = N(t, μ)/(D_a·D(t, μ)) with D = Π_h D_h and
N = Σ_h N_h Π_{g≠h} D_g.  A :class:`TokenGroup` holds the per-head data (k_hi, a_hi), L and
D_a of one model on one set of distinct tokens — the integer score and value products, no
polynomial arithmetic; an answer is a :class:`PackedElement`, the group and μ.  Nothing is
expanded on the hot path:

* **zero** is decided from the lowest and the highest t-coefficient of N (O(nH) integers);
  only when both vanish is N expanded (``polynomials``), and a zero answer is the exact zero;
* **equality** of two packed answers: groups with the same L, D_a and the same multiset of
  per-head data at the same μ give the same element (the value is a function of those
  alone); anything else is the ExpElement comparison of the expanded polynomials;
* **images in F_p** come from the heads (:meth:`TokenGroup.image_weights`);
* the exponent span is the group's (D has every choice's exponent, with positive
  coefficients).

The polynomials, when asked for (printing, certificates, arithmetic, equality beyond the
shortcut), are the direct evaluation's: each head as two sparse polynomials, summed as
num·den_h + num_h·den over den·den_h (an order-independent expansion).  No float is used
anywhere here.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from operator import mul

from flint import fmpq

from .expfield import ExpElement, R, check_product, poly

__all__ = ["TokenGroup", "PackedElement", "GROUP_TERMS", "GROUP_TOKENS", "grouped",
           "head_polynomials"]

#: images in F_p without expanding the answer: two-token answers (P2's copy-count families)
#: at every H through polynomials in μ₁/μ₂ of degree H; others through the heads' weights
#: (one per μ-monomial, C(n+H−1, H) of them) for at most GROUP_TOKENS distinct tokens and
#: GROUP_TERMS monomials; larger answers (many distinct tokens, each once) take the
#: polynomials' image.
GROUP_TERMS = 1 << 12
GROUP_TOKENS = 8

_NUM = ExpElement.__dict__["num"]
_DEN = ExpElement.__dict__["den"]
_L = ExpElement.__dict__["L"]
_RED = ExpElement.__dict__["_reduced"]


def grouped(n: int, H: int) -> bool:
    """Whether answers with n distinct tokens on H heads take their images in F_p from the
    heads' data, unexpanded (docs/design.md §2.1): n = 2 at every H (polynomials in μ₁/μ₂,
    :meth:`~.modular.ModularImage.images`), otherwise at most GROUP_TOKENS tokens and
    C(n+H−1, H) ≤ GROUP_TERMS weights (:meth:`TokenGroup.image_weights`)."""
    return 1 <= H and (n == 2 or (n <= GROUP_TOKENS and comb(n + H - 1, H) <= GROUP_TERMS))


def head_polynomials(heads, mult, Da: int):
    """(num, den) of (1/D_a) Σ_h N_h/D_h at multiplicities ``mult`` (P2's softmax average
    per head, docs/design.md §2): each head's N_h, D_h as sparse polynomials (terms with
    equal exponents merged), then num·D_h + N_h·den over den·D_h head by head.  TooLarge
    before FLINT is asked for more than MAX_TERMS terms."""
    parts = []
    for ks, vals in heads:
        hn, hd = {}, {}
        for k, a, mu in zip(ks, vals, mult):
            hn[k] = hn.get(k, 0) + mu * a
            hd[k] = hd.get(k, 0) + mu
        parts.append((poly({k: fmpq(c, Da) for k, c in hn.items()}), poly(hd)))
    # the expanded answer has up to Π_h (terms of head h) terms: refuse before FLINT is
    # asked for more than it can allocate (an abort, not an exception)
    check_product(*(len(hd) for _, hd in parts),
                  span=sum(int(hd.degrees()[0]) for _, hd in parts), what="this answer")
    num, den = poly({}), poly({0: 1})
    for hnum, hden in parts:
        num, den = num * hden + hnum * den, den * hden
    return num, den


class TokenGroup:
    """The answers (1/D_a) Σ_h N_h/D_h of every query with these distinct tokens, for one
    model (module docstring).  ``scores[h][i]`` = k_hi (integers, t = e^{1/L}) and
    ``values[h][i]`` = a_hi (integers over D_a): the direct evaluation's per-head data."""

    __slots__ = ("n", "H", "L", "Da", "heads", "weighable", "_twin", "_key", "_span", "_ends")

    def __init__(self, scores, values, L: int, Da: int):
        n, H = len(scores[0]), len(scores)
        self.n, self.H, self.L, self.Da, self._twin, self._key = n, H, L, Da, None, None
        lows = [min(ks) for ks in scores]
        highs = [max(ks) for ks in scores]
        #: per head (k_hi − min_i k_hi, a_hi): D_h and N_h themselves
        self.heads = tuple([(tuple([k - lo for k in ks]) if lo else tuple(ks), tuple(vals))
                            for ks, vals, lo in zip(scores, values, lows)])
        self._span = sum(highs) - sum(lows)
        #: whether images come from the heads' data, unexpanded (:func:`grouped`)
        self.weighable = grouped(n, H)
        self._ends = None

    def span(self) -> int:
        """The exponent span of every member: D has every choice's exponent (its
        coefficients are positive), from 0 to Σ_h max_i k_hi, and N's lie among them."""
        return self._span

    def nonzero(self, mult) -> bool:
        """True when N(t, μ) ≠ 0 is shown by its lowest or its highest t-coefficient:
        Σ_h A_h Π_{g≠h} B_g with B_h = Σ μ_i and A_h = Σ a_hi μ_i over head h's tokens at
        that end (every other term of N has a larger, resp. smaller, exponent).  False
        means undecided, not zero."""
        if self._ends is None:
            self._ends = _end_tokens(self.heads)
        for ends in self._ends:
            num, den = 0, 1
            for idx, (_, vals) in zip(ends, self.heads):
                B = A = 0
                for i in idx:
                    B += mult[i]
                    A += vals[i] * mult[i]
                num, den = num * B + A * den, den * B
            if num:
                return True
        return False

    def polynomials(self, mult):
        """(num, den) of the member at ``mult``, expanded (:func:`head_polynomials`)."""
        return head_polynomials(self.heads, mult, self.Da)

    def image_weights(self, powers, P: int):
        """(w_N, w_D): N and D at t = τ as polynomials in μ mod P, one weight per
        μ-monomial α (sorted compositions of H), from ``powers[h][i]`` = τ^(k_hi) mod P:
        D = Π_h D_h and N = Σ_h N_h Π_{g≠h} D_g expanded in μ alone (:func:`_product` at
        t = τ — a ring homomorphism, so the value of the expanded polynomials).  A
        member's image is then one short dot product with V(μ) (:meth:`image`).  (Two-token
        groups, the copy-count families', take polynomials in μ₁/μ₂ instead:
        :meth:`~exactattn.arith.modular.ModularImage._binary_polynomials`.)"""
        radix = self.H + 1
        state = _product([[(radix ** i, p, a * p) for i, (a, p) in enumerate(zip(vals, pw))]
                          for (_, vals), pw in zip(self.heads, powers)], P)
        codes = _compositions(self.n, self.H)
        return ([state.get(c, (0, 0))[1] for c in codes], [state.get(c, (0, 0))[0] for c in codes])

    def image(self, weights, mult, P: int):
        """(N(τ, μ) mod P, D(τ, μ) mod P) from :meth:`image_weights`."""
        V = _monomial_row(self.n, self.H, mult)
        wN, wD = weights
        return sum(map(mul, V, wN)) % P, sum(map(mul, V, wD)) % P

    def member(self, mult) -> ExpElement:
        """The answer at multiplicities ``mult`` (each ≥ 1): a :class:`PackedElement`, or the
        exact zero (as the direct evaluation gives it) when N(t, μ) vanishes — decided by
        :meth:`nonzero`, else by the expanded numerator."""
        mult = tuple(mult)
        if not self.nonzero(mult) and self.polynomials(mult)[0].is_zero():
            return ExpElement(R.from_dict({}), None, 1)
        return PackedElement._make(self, mult)

    def same_as(self, other) -> bool:
        """Equal L, D_a and the same multiset of per-head data (k_h·, a_h·): then equal
        multiplicities give equal answers (each is a function of those alone).  False
        means "not shown": the caller compares the elements."""
        if self is other or self._twin is other:
            return True
        same = (self.n == other.n and self.L == other.L and self.Da == other.Da
                and self.sorted_heads() == other.sorted_heads())
        if same:
            self._twin = other
        return same

    def sorted_heads(self):
        """The per-head data (k_h·, a_h·) as a sorted tuple: the answers' values depend on
        the heads as a multiset (P2, canonical heads; :meth:`same_as`)."""
        if self._key is None:
            self._key = tuple(sorted(self.heads))
        return self._key


def _end_tokens(heads):
    """(per head, the tokens at the lowest exponent 0; per head, those at the highest)."""
    low, high = [], []
    for ks, _ in heads:
        top = max(ks)
        low.append([i for i, k in enumerate(ks) if k == 0])
        high.append([i for i, k in enumerate(ks) if k == top])
    return low, high


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
    """The compositions α of H into n parts as sorted codes Σ α_i (H+1)^i (the order of the
    weights), cached."""
    codes = _COMPOSITIONS.get((n, H))
    if codes is None:
        codes = _COMPOSITIONS[(n, H)] = sorted(sum(a * (H + 1) ** i for i, a in enumerate(alpha))
                                               for alpha in _parts(n, H))
    return codes


def _monomial_row(n: int, H: int, mult):
    """(μ^α) over the sorted compositions α (the weights' order), cached."""
    key = (n, H, mult)
    V = _MONOMIALS.get(key)
    if V is None:
        V = []
        for code in _compositions(n, H):
            v = 1
            for m in mult:
                code, a = divmod(code, H + 1)
                if a:
                    v *= m ** a
            V.append(v)
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
    """An ExpElement (1/D_a) Σ_h N_h/D_h of a :class:`TokenGroup` at multiplicities μ, kept as
    the group and μ until its python-flint polynomials are asked for (module docstring).
    A packed element is never zero (:meth:`TokenGroup.member`).  Built, it keeps its group:
    every ExpElement operation that changes num, den or L preserves the value, and the
    shortcuts apply while L is still the group's."""

    __slots__ = ("_group", "_mult", "_built")

    @classmethod
    def _make(cls, group, mult):
        e = cls.__new__(cls)
        e._group, e._mult, e._built = group, mult, False
        _L.__set__(e, group.L)
        _RED.__set__(e, False)
        return e

    # ------------------------------------------------------------------ lazy polynomials
    def _build(self):
        if self._built:
            return
        num, den = self._group.polynomials(self._mult)
        _NUM.__set__(self, num)
        _DEN.__set__(self, den)
        self._built = True

    num = _lazy(_NUM)
    den = _lazy(_DEN)

    @property
    def packed(self):
        """(group, μ) while the element is over its group's L, else None."""
        g = self._group
        return (g, self._mult) if _L.__get__(self) == g.L else None

    def __reduce__(self):
        """Pickled as its group and μ while over the group's L (the group is integers), else
        as the ExpElement it has become."""
        if self.packed is not None:
            return (PackedElement._make, (self._group, self._mult))
        return super().__reduce__()

    # ------------------------------------------------------------------ cheap queries
    def exponent_span(self) -> int:
        if self._built:
            return super().exponent_span()
        return self._group.span()

    def is_zero(self) -> bool:
        return False

    def is_rational(self) -> bool:
        """True without expanding for one distinct token (each head's softmax gives it
        weight 1: the answer is Σ_h a_h / D_a, P2's constant F([x]) = v·x); otherwise
        decided on the polynomials."""
        if self.packed is not None and self._group.n == 1:
            return True
        return super().is_rational()

    def as_rational(self) -> Fraction:
        """Σ_h a_h / D_a for one distinct token (:meth:`is_rational`), unexpanded."""
        if self.packed is not None and self._group.n == 1:
            return Fraction(sum(vals[0] for _, vals in self._group.heads), self._group.Da)
        return super().as_rational()

    def __eq__(self, other):
        if type(other) is PackedElement and self._mult == other._mult \
                and self.packed is not None and other.packed is not None \
                and self._group.same_as(other._group):
            return True
        return super().__eq__(other)

    __hash__ = ExpElement.__hash__
