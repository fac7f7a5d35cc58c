"""Exact backend: scalars in Q, oracle outputs in Q(e^{1/L}) ≅ Q(t) (docs/design.md §2).

Model evaluation takes the scores and values of a query's distinct tokens from python-flint
integer matrix products (one per query shape, cached per model and tokens as a
:class:`~.multiplicities.TokenGroup`) and answers with the group at the query's
multiplicities, a :class:`~.multiplicities.PackedElement`: each head's softmax average
f_h = Σ_i μ_i a_i t^{k_i} / Σ_i μ_i t^{k_i} (k_i = L·s_i) is expanded into sparse polynomials
only when they are asked for, summed over one common L without a gcd (a gcd of large sparse
polynomials can cost seconds).  Equality in Q(t) is by cross-multiplication (or numerators
over equal denominators), so the unreduced form is exact.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd
from operator import mul

from flint import fmpq, fmpq_mat, fmpz_mat

from ..errors import SingularSystem
from .numbers import to_rational
from .base import Backend
from .expfield import ExpElement, exp_rational
from .multiplicities import TokenGroup

__all__ = ["ExactBackend"]


def _fmpq(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def _frac(q: fmpq) -> Fraction:
    return Fraction(int(q.p), int(q.q))


def _cached_per_heads(cache: dict, limit: int, heads, extra, build):
    """``build()``, cached per list of prepared heads (a model's, kept per backend) and
    ``extra``: the cache keeps the list alive, so its id is not reused; it is emptied beyond
    ``limit`` entries."""
    key = (id(heads), extra)
    hit = cache.get(key)
    if hit is not None and hit[0] is heads:
        return hit[1]
    value = build()
    if len(cache) > limit:
        cache.clear()
    cache[key] = (heads, value)
    return value


_STACKS = {}


def _stacked(heads):
    """The heads as two integer matrices with common denominators, cached per tuple of
    prepared heads: [W_1ᵀ | … | W_Hᵀ] (d × Hd) over D_W and (v_1 … v_H) (d × H) over D_v —
    one integer product per query instead of two rational ones per head."""
    def build():
        d, H = heads[0][0].nrows(), len(heads)
        WT = fmpq_mat(d, H * d, [W[a, b] for b in range(d) for W, _ in heads for a in range(d)])
        V = fmpq_mat(d, H, [v[i, 0] for i in range(d) for _, v in heads])
        return (*WT.numer_denom(), *V.numer_denom())
    return _cached_per_heads(_STACKS, 64, heads, None, build)


_GROUPS = {}


def _products(X, heads):
    """The integer score and value products of one query (docs/design.md §2): S (head-major,
    S[h·n + i] = D·s_hi with D = D_x² D_W), A (token-major, A[i·H + h] = D_x D_v·v_h·x_i)."""
    n, d, H = X.nrows(), X.ncols(), len(heads)
    WTz, Dw, Vz, Dv = _stacked(heads)
    Xz, Dx = X.numer_denom()
    xN = fmpz_mat(1, d, [Xz[n - 1, j] for j in range(d)])
    # row h of M: (W_h x_N)ᵀ (times Dx·Dw); scores Sᵀ = M Xᵀ (times D = Dx²·Dw)
    M = fmpz_mat(H, d, (xN * WTz).entries())
    S = [int(q) for q in (M * Xz.transpose()).entries()]
    A = (Xz * Vz).entries()
    return S, A, n, H, int(Dx) ** 2 * int(Dw), int(Dx), int(Dv)


#: at most this many H·d² multiplications, a query of integer tokens is scored in Python
#: integers (:func:`_products_ints`): below it, python-flint's per-call cost dominates
SMALL_PRODUCTS = 256
_INTS = {}


def _integer_heads(heads):
    """The heads as Python integers, cached per list of prepared heads: per head the rows of
    D_W·W_h and D_v·v_h, with D_W and D_v (the common denominators of :func:`_stacked`)."""
    def build():
        WTz, Dw, Vz, Dv = _stacked(heads)
        d, H = WTz.nrows(), len(heads)
        Ws = [[[int(WTz[b, h * d + a]) for b in range(d)] for a in range(d)] for h in range(H)]
        vs = [[int(Vz[i, h]) for i in range(d)] for h in range(H)]
        return Ws, int(Dw), vs, int(Dv)
    return _cached_per_heads(_INTS, 64, heads, "ints", build)


def _products_ints(order, heads):
    """:func:`_products` for integer tokens (D_x = 1), in Python integers: S[h·n + i] =
    x_iᵀ (D_W W_h) x_N and A[i·H + h] = x_i·(D_v v_h) — the same products
    (tests/test_multiplicities.py compares the two)."""
    Ws, Dw, vs, Dv = _integer_heads(heads)
    xN = order[-1]
    S = []
    for Wh in Ws:
        y = [sum(map(mul, row, xN)) for row in Wh]
        S.extend([sum(map(mul, x, y)) for x in order])
    A = [sum(map(mul, v, x)) for x in order for v in vs]
    return S, A, len(order), len(heads), Dw, 1, Dv


_FINALS = {}


def _products_integer(order, heads):
    """:func:`_products` for integer tokens (D_x = 1) of a large model: the heads' scores
    against the final token, M = (W_h x_N)_h (H × d, times D_W), are cached per model and
    final token — the schedules end many families in one token (P2: 2d − 1 final tokens for
    2d² − d families), so a family costs the H·d·n and n·d·H products, not the d·Hd one —
    and the query's tokens go to FLINT as integers, not through fmpq."""
    WTz, Dw, Vz, Dv = _stacked(heads)
    d, H, xN = WTz.nrows(), len(heads), order[-1]
    M = _cached_per_heads(_FINALS, 4096, heads, xN,
                          lambda: fmpz_mat(H, d, (fmpz_mat(1, d, xN) * WTz).entries()))
    Xz = fmpz_mat(len(order), d, [x for key in order for x in key])
    S = [int(q) for q in (M * Xz.transpose()).entries()]
    return S, (Xz * Vz).entries(), len(order), H, int(Dw), 1, int(Dv)


def _token_group(prepared, heads):
    """The TokenGroup of a query's distinct tokens for these heads, from the integer
    products: of integer tokens in Python integers (a small model, :func:`_products_ints`)
    or python-flint's with the final token's scores cached (:func:`_products_integer`),
    otherwise python-flint's matrix products (:func:`_products`)."""
    order = prepared.order
    if all(type(x) is int for key in order for x in key):
        if len(heads) * len(order[-1]) ** 2 <= SMALL_PRODUCTS:
            return TokenGroup(*_per_head(*_products_ints(order, heads)))
        return TokenGroup(*_per_head(*_products_integer(order, heads)))
    return TokenGroup(*_per_head(*_products(prepared.matrix(), heads)))


def _per_head(S, A, n, H, D, Dx, Dv):
    """(scores per head, values per head, L, D_a) from :func:`_products`: k_hi = L·s_hi
    (integers, L = D / gcd(D, S)) and a_hi = D_a·v_h·x_i (integers, D_a = D_x D_v)."""
    g = gcd(D, *S)
    scores = [[q // g for q in S[h * n:(h + 1) * n]] for h in range(H)]
    values = [[int(a) for a in A[h::H]] for h in range(H)]
    return scores, values, D // g, Dx * Dv


class Prepared:
    """A query's distinct tokens (``order``, tuples, the final token last) and their
    multiplicities (``mult``); ``matrix()`` is the tokens as an fmpq matrix (built once)."""

    __slots__ = ("order", "mult", "_X")

    def __init__(self, order, mult):
        self.order, self.mult, self._X = order, mult, None

    def matrix(self):
        if self._X is None:
            d = len(self.order[-1])
            self._X = fmpq_mat(len(self.order), d, [x if type(x) is int else _fmpq(x)
                                                     for key in self.order for x in key])
        return self._X

    def __len__(self):
        return sum(self.mult)


class ExactBackend(Backend):
    """Exact rational scalars, exact elements of Q(t) (docs/design.md §2 exact)."""

    name = "exact"
    exact = True

    def scalar(self, x, where: str = "value") -> Fraction:
        return to_rational(x, where)

    def element(self, x) -> ExpElement:
        if isinstance(x, ExpElement):
            return x
        return ExpElement.from_rational(to_rational(x, "element"))

    def exp(self, score) -> ExpElement:
        return exp_rational(to_rational(score, "score"))

    def is_zero(self, a) -> bool:
        return self.element(a).is_zero()

    def log(self, a):
        return self.element(a).log()

    def sign(self, a) -> int:
        return self.element(a).sign()

    def to_mpf(self, a, dps: int = 30):
        import mpmath
        if isinstance(a, Fraction):
            with mpmath.workdps(dps):
                return mpmath.mpf(a.numerator) / a.denominator
        return self.element(a).to_mpf(dps)

    # ------------------------------------------------------------------ fast attention
    def prepare_head(self, W, v):
        d = len(W)
        Wm = fmpq_mat(d, d, [_fmpq(self.scalar(x, f"W[{i}][{j}]"))
                             for i, r in enumerate(W) for j, x in enumerate(r)])
        vm = fmpq_mat(d, 1, [_fmpq(self.scalar(x, f"v[{i}]")) for i, x in enumerate(v)])
        return Wm, vm

    def prepare_clean(self, tokens):
        """Distinct tokens (the final token last) with multiplicities: repeated tokens share
        one softmax score, so the copy-count queries cost two rows (:class:`Prepared`)."""
        order, mult = self.distinct_tokens(tokens)
        return Prepared(tuple(order), tuple(mult))

    def tokens(self, tokens):
        """Token entries as exact rationals, each token a tuple: Python ints stay ints (fast
        to hash and to load into flint), everything else becomes a Fraction; errors name the
        entry.  Repeated tokens (the copy-count queries) are converted once and shared; a
        token of ints is its own tuple, not a copy."""
        out, seen = [], {}
        for n, tok in enumerate(tokens):
            key = tuple(tok)
            row = seen.get(key)
            if row is None:
                row = seen[key] = key if all(type(x) is int for x in key) else \
                    tuple([x if type(x) is int else self._entry(x, n, i)
                           for i, x in enumerate(key)])
            out.append(row)
        return out

    def _entry(self, x, n, i):
        x = self.scalar(x, f"token {n}, entry {i}")
        return x.numerator if x.denominator == 1 else x

    def attention(self, prepared, heads) -> ExpElement:
        """Σ_h Σ_i softmax(X W_h x_N)_i · v_h·x_i exactly in Q(t) (docs/design.md §1–2).

        Queries with the same distinct tokens share one :class:`~.multiplicities.TokenGroup`
        (the heads' integer scores and values, cached per model and tokens); the answer is
        the group at the query's multiplicities, a :class:`~.multiplicities.PackedElement`
        whose polynomials are expanded only when asked for — then exactly
        :meth:`direct`'s."""
        return self._group(prepared, heads).member(prepared.mult)

    def agrees(self, prepared, heads, answer) -> bool:
        """Whether the model's answer on the prepared query equals ``answer`` exactly (the
        certification's test).  When ``answer`` is packed at the query's own multiplicities
        and its group has the same L, D_a and per-head data as this model's group for the
        query's tokens, the two are equal without expanding either (the same function of
        those); otherwise the elements are compared."""
        group = self._group(prepared, heads)
        packed = getattr(answer, "packed", None)
        if packed is not None and packed[1] == prepared.mult and group.same_as(packed[0]):
            return True
        return group.member(prepared.mult) == answer

    def _group(self, prepared, heads):
        """The query's TokenGroup for these heads, cached per (heads, distinct tokens)."""
        return _cached_per_heads(_GROUPS, 4096, heads, prepared.order,
                                 lambda: _token_group(prepared, heads))

    def direct(self, prepared, heads) -> ExpElement:
        """The answer by polynomial arithmetic in Q(t), expanded now (docs/design.md §2):
        each head is Σ μ_i a_i t^{k_i} / Σ μ_i t^{k_i} over the distinct tokens with
        multiplicities μ_i (k_i = L·s_i, shifted to be ≥ 0), and the heads are summed as
        num·den_h + num_h·den over den·den_h (:func:`~.multiplicities.head_polynomials`) —
        an order-independent expansion, so two models with the same heads give identical
        (num, den)."""
        group = _token_group(prepared, heads)
        return ExpElement(*group.polynomials(prepared.mult), group.L)

    # ------------------------------------------------------------------ linear algebra
    def solve(self, A, B):
        n = len(A)
        Am = fmpq_mat(n, n, [_fmpq(self.scalar(x)) for r in A for x in r])
        m = len(B[0])
        Bm = fmpq_mat(n, m, [_fmpq(self.scalar(x)) for r in B for x in r])
        try:
            Xm = Am.solve(Bm)
        except ZeroDivisionError:
            raise SingularSystem(f"singular {n}×{n} system (exact rank {Am.rank()})") from None
        return [[_frac(Xm[i, j]) for j in range(m)] for i in range(n)]

    def basis_solver(self, U, X):
        """:meth:`Backend.basis_solver` in integers: U⁻¹ = N_U/δ_U and X⁻ᵀ = N_X/δ_X once
        (python-flint), then U⁻¹B and U⁻¹ S X⁻ᵀ as integer matrix products over one
        denominator — the same rationals as two solves per S, about 8× faster at d = 16."""
        return _IntegerBasisSolves(self, U, X)

    def matmul(self, A, B):
        n, k, m = len(A), len(B), len(B[0])
        Am = fmpq_mat(n, k, [_fmpq(self.scalar(x)) for r in A for x in r])
        Bm = fmpq_mat(k, m, [_fmpq(self.scalar(x)) for r in B for x in r])
        C = Am * Bm
        return [[_frac(C[i, j]) for j in range(m)] for i in range(n)]


class _IntegerBasisSolves:
    """:meth:`ExactBackend.basis_solver`: the inverses' integer numerators and denominators,
    made once; every result entry is one Fraction of an integer product over δ."""

    def __init__(self, be, U, X):
        self.be = be
        self.U, self.dU = self._inverse(U)
        self.XT, self.dX = None, None
        self._X = X

    def _inverse(self, A):
        n = len(A)
        M = fmpq_mat(n, n, [_fmpq(self.be.scalar(x)) for r in A for x in r])
        try:
            num, den = M.inv().numer_denom()
        except ZeroDivisionError:
            raise SingularSystem(f"singular {n}×{n} system (exact rank {M.rank()})") from None
        return num, int(den)

    def _integers(self, B):
        n, m = len(B), len(B[0])
        num, den = fmpq_mat(n, m, [_fmpq(self.be.scalar(x)) for r in B for x in r]).numer_denom()
        return num, int(den)

    def left(self, B):
        num, den = self._integers(B)
        return _over(self.U * num, self.dU * den)

    def both(self, S):
        if self.XT is None:
            XI, self.dX = self._inverse(self._X)
            self.XT = XI.transpose()
        num, den = self._integers(S)
        return _over(self.U * num * self.XT, self.dU * den * self.dX)


def _over(P, D: int):
    """The integer matrix P over the denominator D, as rows of Fractions."""
    return [[Fraction(int(P[i, j]), D) for j in range(P.ncols())] for i in range(P.nrows())]
