"""Arbitrary-precision backend on mpmath (docs/design.md §2 "mp").

Each backend owns a private ``mpmath.MPContext`` at the requested ``dps`` so that two
backends at different precisions never disturb each other (or mpmath's global ``mp``).
The zero test uses ``tolerance`` (default 10^(−dps·3/4)); it is a property of this
approximate backend and never used on the exact path.
"""

from __future__ import annotations

from fractions import Fraction
import numbers

import mpmath
from mpmath.ctx_mp_python import _mpf

from ..errors import SingularSystem
from .numbers import to_rational
from .base import _VALUE_TYPES, Backend

__all__ = ["MPBackend", "MIN_DPS"]

#: the one minimum of dps for every command and API: below float64's ~16 digits the mp
#: backend has no use here
MIN_DPS = 15
#: the most decimal digits a backend works at (the command line's --dps limit): beyond it one
#: multiplication costs more than a whole run at the default precision
MAX_DPS = 10_000


class MPBackend(Backend):
    """mpmath reals at ``dps`` decimal digits (docs/design.md §2 mp)."""

    name = "mp"
    exact = False

    def __init__(self, dps: int = 50, tolerance=None):
        if not isinstance(dps, int) or isinstance(dps, bool) or not MIN_DPS <= dps <= MAX_DPS:
            raise ValueError(f"dps must be an integer in {MIN_DPS}..{MAX_DPS}, got {dps!r}")
        self.ctx = mpmath.MPContext()
        self.ctx.dps = dps
        self.dps = dps
        self.tolerance = self.ctx.mpf(10) ** (-(dps * 3 // 4)) if tolerance is None \
            else self.ctx.mpf(tolerance)
        # per (heads, tokens) scores and values, per (heads, final token) W_h x_N; each
        # entry keeps its heads alive, so an id is not reused while it is cached
        self._groups, self._finals = {}, {}

    def scalar(self, x, where: str = "value"):
        """x at full precision (an mpf of another context or a sympy Float keeps all its
        digits; a decimal string is read at this backend's dps); nan / inf are refused
        naming ``where``."""
        ctx = self.ctx
        if isinstance(x, ctx.mpf):
            return _finite(x, where)
        if isinstance(x, _mpf) or hasattr(x, "_mpf_"):
            # an mpf of another context (global mp or another backend), or a sympy Float:
            # convert directly; going through float would keep 53 bits only
            return _finite(ctx.mpf(x), where)
        if isinstance(x, bool):
            raise TypeError(f"{where}: {x!r} is a bool, not a number")
        if isinstance(x, str):
            try:
                return _finite(ctx.mpf(x.strip()), where)
            except ValueError:
                raise ValueError(f"{where}: {x!r} is not a number") from None
        if isinstance(x, numbers.Real) and not isinstance(x, (numbers.Integral, Fraction)):
            return _finite(ctx.mpf(float(x)), where)
        try:
            q = to_rational(x, where)
        except ValueError:
            import sympy
            if isinstance(x, sympy.Basic) and x.is_real and x.is_number:
                return ctx.mpf(str(sympy.N(x, self.dps + 10)))
            raise
        return ctx.mpf(q.numerator) / q.denominator

    def exp(self, score):
        return self.ctx.exp(score)

    def with_dps(self, dps: int) -> "MPBackend":
        """This backend at another precision (the same tolerance rule)."""
        return self if dps == self.dps else MPBackend(dps)

    def is_zero(self, a) -> bool:
        return abs(a) <= self.tolerance

    def log(self, a):
        if a <= 0:
            raise ValueError(f"log of a non-positive value {a}")
        return self.ctx.log(a)

    def to_mpf(self, a, dps: int = 30):
        with mpmath.workdps(max(dps, self.dps)):
            return mpmath.mpf(a)

    def softmax_mean(self, scores, values, mult=None):
        """Σ μ_i e^{s_i} a_i / Σ μ_i e^{s_i}, shifted by max s for stability."""
        m = max(scores)
        ws = [self.ctx.exp(s - m) * (1 if mult is None else mult[i])
              for i, s in enumerate(scores)]
        return self.ctx.fdot(ws, values) / self.ctx.fsum(ws)

    def prepare_clean(self, tokens):
        """(distinct tokens with the final token last, multiplicities, their keys), as
        :meth:`Backend.distinct_tokens` on the exact backend; a token's key is its entries'
        ``_mpf_`` tuples (sign, mantissa, exponent, bits: one per value), hashed by Python
        itself rather than by mpf's own hash, the costliest step of a query otherwise."""
        counts, rows = {}, {}
        prev = key = None
        for tok in tokens:
            if tok is not prev:                 # a repeated token object: the same key
                prev, key = tok, tuple([x._mpf_ for x in tok])
                rows.setdefault(key, tok)
            counts[key] = counts.get(key, 0) + 1
        n_last = counts.pop(key)
        keys = (*counts, key)
        return [rows[k] for k in keys], [*counts.values(), n_last], keys

    def caches_row(self, row) -> bool:
        """:meth:`Backend.caches_row`, and mpf entries of any context (their conversion,
        a rounding to this dps, depends on their value alone)."""
        return all(t in _VALUE_TYPES or issubclass(t, _mpf) for t in set(map(type, row)))

    def attention(self, prepared, heads):
        """Σ_h softmax(X W_h x_N)·(X v_h) at dps (docs/design.md §2 mp).  The per-head
        scores and values depend on the distinct tokens only, not on their multiplicities:
        they are cached per (heads, distinct tokens) — a copy-count family's queries share
        them — and W_h x_N per (heads, final token), as on the exact backend; every number
        is the same ``fdot`` as without the caches."""
        tokens, mult, keys = prepared
        total = self.ctx.mpf(0)
        for scores, values in self._scored(tokens, keys, heads):
            total += self.softmax_mean(scores, values, mult)
        return total

    def _scored(self, tokens, keys, heads):
        key = (id(heads), keys)
        hit = self._groups.get(key)
        if hit is not None and hit[0] is heads:
            return hit[1]
        fdot = self.ctx.fdot
        out = [([fdot(tok, Wx) for tok in tokens], [fdot(tok, v) for tok in tokens])
               for Wx, (_, v) in zip(self._final(tokens[-1], keys[-1], heads), heads)]
        _bounded_put(self._groups, key, (heads, out))
        return out

    def _final(self, xN, xN_key, heads):
        """[W_h x_N for each head] at dps, cached per (heads, final token)."""
        key = (id(heads), xN_key)
        hit = self._finals.get(key)
        if hit is not None and hit[0] is heads:
            return hit[1]
        fdot = self.ctx.fdot
        out = [[fdot(row, xN) for row in W] for W, _ in heads]
        _bounded_put(self._finals, key, (heads, out))
        return out

    def solve(self, A, B):
        """X with A X = B: mpmath's ``lu_solve`` column by column, with A's LU factors
        computed once (``lu_solve`` itself factors A again for every column: at the same
        working precision, 10 bits above dps, the same numbers)."""
        ctx = self.ctx
        cols = []
        prec = ctx.prec
        try:
            ctx.prec += 10
            LU, p = ctx.LU_decomp(ctx.matrix(A), overwrite=True, use_cache=False)
            for j in range(len(B[0])):
                b = ctx.L_solve(LU, ctx.matrix([r[j] for r in B]), p)
                cols.append(ctx.U_solve(LU, b))
        except ZeroDivisionError:
            raise SingularSystem(f"singular {len(A)}×{len(A)} system at dps={self.dps}") from None
        finally:
            ctx.prec = prec
        return [[c[i] for c in cols] for i in range(len(A))]

    def matmul(self, A, B):
        C = self.ctx.matrix(A) * self.ctx.matrix(B)
        return [[C[i, j] for j in range(C.cols)] for i in range(C.rows)]

    def __repr__(self):
        return f"<exactattn backend mp dps={self.dps}>"


#: entries kept per cache of :class:`MPBackend` before it is emptied
CACHE_ENTRIES = 4096


def _bounded_put(cache: dict, key, value):
    if len(cache) >= CACHE_ENTRIES:
        cache.clear()
    cache[key] = value


def _finite(x, where):
    if not mpmath.isfinite(x):
        raise ValueError(f"{where}: {x} is not a finite number (nan and inf are refused)")
    return x
