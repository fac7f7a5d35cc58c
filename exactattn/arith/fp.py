"""float64 backend on numpy (docs/design.md §2 "float"): kept only for comparison, to show where
floating point breaks.  Never used on the exact path."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from ..errors import QueryError, SingularSystem
from .numbers import to_rational
from .base import Backend

__all__ = ["FloatBackend"]


class FloatBackend(Backend):
    """numpy float64 (docs/design.md §2 float)."""

    name = "float"
    exact = False

    def __init__(self, tolerance: float = 1e-9):
        self.tolerance = float(tolerance)

    def scalar(self, x, where: str = "value") -> float:
        """x as a float64; nan / inf (and magnitudes beyond float64) are refused naming
        ``where``."""
        if isinstance(x, bool):
            raise TypeError(f"{where}: {x!r} is a bool, not a number")
        try:
            if isinstance(x, numbers.Real) and not isinstance(x, (numbers.Integral, Fraction)):
                return _finite(float(x), x, where)
            try:
                q = to_rational(x, where)
            except ValueError:
                return _finite(float(x), x, where)
            return _finite(q.numerator / q.denominator, x, where)
        except OverflowError:
            raise ValueError(f"{where}: {x} is beyond the float64 range") from None

    def exp(self, score):
        return math.exp(score)

    def is_zero(self, a) -> bool:
        return abs(a) <= self.tolerance

    def log(self, a):
        if a <= 0:
            raise ValueError(f"log of a non-positive value {a}")
        return math.log(a)

    def to_mpf(self, a, dps: int = 30):
        import mpmath
        return mpmath.mpf(float(a))

    def to_float(self, a) -> float:
        return float(a)

    def prepare_head(self, W, v):
        return (np.array([[self.scalar(x, f"W[{i}][{j}]") for j, x in enumerate(r)]
                          for i, r in enumerate(W)], dtype=np.float64),
                np.array([self.scalar(x, f"v[{i}]") for i, x in enumerate(v)], dtype=np.float64))

    def prepare_clean(self, tokens):
        return np.array(tokens, dtype=np.float64)

    def attention(self, X, heads) -> float:
        """F(X) in float64 (softmax shifted by its largest score); a query whose scores or
        values leave float64's range is refused (QueryError), not answered nan or inf."""
        total = 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            for W, v in heads:
                s = X @ (W @ X[-1])
                w = np.exp(s - s.max())
                total += float(w @ (X @ v) / w.sum())
        if not math.isfinite(total):
            raise QueryError("float64 overflows on this query (a score or value beyond "
                             "±1.8e308, the answer would be nan or inf): use the mp or exact "
                             "backend, or smaller tokens")
        return total

    def solve(self, A, B):
        try:
            X = np.linalg.solve(np.array(A, dtype=np.float64), np.array(B, dtype=np.float64))
        except np.linalg.LinAlgError:
            raise SingularSystem(f"singular {len(A)}×{len(A)} system in float64") from None
        return X.tolist()

    def matmul(self, A, B):
        return (np.array(A, dtype=np.float64) @ np.array(B, dtype=np.float64)).tolist()


def _finite(f: float, x, where) -> float:
    if not math.isfinite(f):
        raise ValueError(f"{where}: {x} is not a finite float64 number (nan and inf are refused)")
    return f
