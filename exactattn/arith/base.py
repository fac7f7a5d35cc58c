"""The arithmetic interface every algorithm is written against (docs/design.md §2).

Like mpmath's contexts (mp / fp / iv), a backend bundles a number domain and the few
operations the learners need.  Two kinds of numbers appear:

* **scalars** — model parameters, token entries, scores, logs and residues (exact: ``Fraction``;
  mp: ``mpf``; float: ``float``; symbolic: sympy expressions);
* **elements** — oracle outputs, which live in the exponential field (exact: ``ExpElement``
  in Q(t); otherwise the same type as scalars).

Elements support ``+ − × ÷`` through Python operators; the backend supplies what operators
cannot: ``exp`` of a score, an exact (or tolerance-based, for mp/float) zero test, ``log``,
certified sign, conversion for display, and small dense linear algebra over scalars.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction

__all__ = ["Backend"]


_VALUE_TYPES = frozenset((int, Fraction))


class Backend(ABC):
    """One arithmetic context (docs/design.md §2)."""

    name: str = "abstract"
    exact: bool = False

    # ------------------------------------------------------------------ numbers
    @abstractmethod
    def scalar(self, x, where: str = "value"):
        """Convert an input number to this backend's scalar, or raise naming `where`."""

    def element(self, x):
        """A field element from a scalar (identity unless the field is bigger)."""
        return x

    @property
    def zero(self):
        return self.element(self.scalar(0))

    @property
    def one(self):
        return self.element(self.scalar(1))

    @abstractmethod
    def exp(self, score):
        """exp of a scalar score, as a field element."""

    @abstractmethod
    def is_zero(self, a) -> bool:
        """Zero test: exact on exact backends, |a| ≤ tolerance otherwise."""

    def eq(self, a, b) -> bool:
        return self.is_zero(a - b)

    @abstractmethod
    def log(self, a):
        """Natural log of a positive element, as a scalar."""

    @abstractmethod
    def to_mpf(self, a, dps: int = 30):
        """mpmath value, for display and comparison."""

    def to_float(self, a) -> float:
        return float(self.to_mpf(a, 20))

    def sign(self, a) -> int:
        v = self.to_mpf(a, 30)
        return (v > 0) - (v < 0)

    # ------------------------------------------------------------------ attention
    def prepare_head(self, W, v):
        """Backend-specific form of one head's parameters (cached by the models)."""
        return ([[self.scalar(x, f"W[{i}][{j}]") for j, x in enumerate(r)]
                 for i, r in enumerate(W)],
                [self.scalar(x, f"v[{i}]") for i, x in enumerate(v)])

    def tokens(self, tokens):
        """Token entries converted to scalars; errors name the token and entry."""
        return [[self.scalar(x, f"token {n}, entry {i}") for i, x in enumerate(tok)]
                for n, tok in enumerate(tokens)]

    def prepare_tokens(self, tokens):
        """A query in the form :meth:`attention` takes: converted (:meth:`tokens`), then
        prepared (:meth:`prepare_clean`)."""
        return self.prepare_clean(self.tokens(tokens))

    def prepare_clean(self, tokens):
        """Tokens already converted by :meth:`tokens`, in the form :meth:`attention` takes
        (by default the rows themselves); nothing is converted again."""
        return tokens

    def caches_row(self, row) -> bool:
        """Whether a row of raw entries converts by its value alone, so equal rows may share
        one conversion (:func:`~exactattn.models.attention.clean_query`): ints (not bools)
        and Fractions.  A float is not: equal in value to an int, it is refused on the exact
        path, and a shared conversion would let it through."""
        return _VALUE_TYPES.issuperset(map(type, row))

    @staticmethod
    def distinct_tokens(tokens):
        """(distinct tokens with the final token last, multiplicities): repeated tokens share
        one softmax score, so a copy-count query [(x+u) × m, x] costs two rows."""
        counts = {}
        get = counts.get
        prev = key = None
        for tok in tokens:
            if tok is not prev:                 # a repeated token object: the same key
                prev, key = tok, tuple(tok)
            counts[key] = get(key, 0) + 1
        last = tuple(tokens[-1])
        n_last = counts.pop(last)
        return [*counts, last], [*counts.values(), n_last]

    def softmax_mean(self, scores, values):
        """Σ_i e^{s_i} a_i / Σ_i e^{s_i} as a field element (the attention average)."""
        num, den = self.zero, self.zero
        for s, a in zip(scores, values):
            w = self.exp(s)
            num = num + w * self.element(a)
            den = den + w
        return num / den

    def attention(self, tokens, heads):
        """Σ_h f_h(X) at the final token for prepared tokens and heads (docs/design.md §1)."""
        xN = tokens[-1]
        total = self.zero
        for W, v in heads:
            Wx = [sum((w * x for w, x in zip(row, xN)), self.scalar(0)) for row in W]
            scores = [sum((a * b for a, b in zip(tok, Wx)), self.scalar(0)) for tok in tokens]
            values = [sum((a * b for a, b in zip(tok, v)), self.scalar(0)) for tok in tokens]
            total = total + self.softmax_mean(scores, values)
        return total

    # ------------------------------------------------------------------ linear algebra
    @abstractmethod
    def solve(self, A, B):
        """X with A X = B for square A (lists of rows of scalars); raises on singular A."""

    def solve_columns(self, A, columns):
        """[y_j with A y_j = c_j for each c_j in ``columns``]: one :meth:`solve` with the
        columns side by side (the recovery steps solve one basis matrix for many
        right-hand sides; a solve per column repeats the elimination)."""
        columns = list(columns)
        if not columns:
            return []
        return self.transpose(self.solve(A, self.transpose(columns)))

    def basis_solver(self, U, X):
        """The solves of P2's reconstruction for the bases U, X (P2, step 5; docs/design.md
        §4.3): an object with ``left(B)`` = U⁻¹B and ``both(S)`` = W with U W Xᵀ = S, asked
        for many B and S.  By default each is :meth:`solve` (two for ``both``); the exact
        backend inverts U and X once in integers."""
        return _BasisSolves(self, U, X)

    def inv(self, A):
        n = len(A)
        I = [[self.scalar(int(i == j)) for j in range(n)] for i in range(n)]
        return self.solve(A, I)

    def matmul(self, A, B):
        zero = self.scalar(0)
        return [[sum((A[i][k] * B[k][j] for k in range(len(B))), zero)
                 for j in range(len(B[0]))] for i in range(len(A))]

    @staticmethod
    def transpose(A):
        return [list(r) for r in zip(*A)]

    def __repr__(self):
        return f"<exactattn backend {self.name}>"


class _BasisSolves:
    """:meth:`Backend.basis_solver` by the backend's own :meth:`~Backend.solve`."""

    def __init__(self, be, U, X):
        self.be, self.U, self.X = be, U, X

    def left(self, B):
        return self.be.solve(self.U, B)

    def both(self, S):
        be = self.be
        return be.transpose(be.solve(self.X, be.transpose(be.solve(self.U, S))))
