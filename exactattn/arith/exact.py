"""Exact backend: scalars in Q, oracle outputs in Q(e^{1/L}) ≅ Q(t) (DESIGN §2).

Model evaluation uses python-flint matrices for the scores and builds each head's softmax
average directly as a ratio of polynomials in t: with integer exponents k_i = L·s_i,
f_h = Σ_i a_i t^{k_i} / Σ_i t^{k_i}.  The heads are summed over one common L without a
gcd (measured: a gcd at (d, H) = (16, 8) costs ~20 ms, the sum ~3 ms); equality in Q(t)
is by cross-multiplication, so the unreduced form is exact.
"""

from __future__ import annotations

from fractions import Fraction
from math import lcm

from flint import fmpq, fmpq_mat, fmpq_poly

from ..errors import SingularSystem
from ..numbers import to_rational
from .base import Backend
from .expfield import ExpElement, exp_rational

__all__ = ["ExactBackend"]


def _fmpq(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def _frac(q: fmpq) -> Fraction:
    return Fraction(int(q.p), int(q.q))


class ExactBackend(Backend):
    """Exact rational scalars, exact elements of Q(t) (DESIGN §2 exact)."""

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

    def prepare_tokens(self, tokens):
        n, d = len(tokens), len(tokens[0])
        return fmpq_mat(n, d, [_fmpq(self.scalar(x, f"token {k}, entry {i}"))
                               for k, tok in enumerate(tokens) for i, x in enumerate(tok)])

    def attention(self, X, heads) -> ExpElement:
        """Σ_h Σ_i softmax(X W_h x_N)_i · v_h·x_i exactly in Q(t) (DESIGN §1–2)."""
        n = X.nrows()
        xN = fmpq_mat(X.ncols(), 1, [X[n - 1, j] for j in range(X.ncols())])
        per_head = []
        L = 1
        for W, v in heads:
            s = X * (W * xN)
            a = X * v
            scores = [s[i, 0] for i in range(n)]
            for q in scores:
                L = lcm(L, int(q.q))
            per_head.append((scores, [a[i, 0] for i in range(n)]))
        num, den = fmpq_poly([0]), fmpq_poly([1])
        for scores, values in per_head:
            ks = [int(q * L) for q in scores]
            low = min(ks)
            size = max(ks) - low + 1
            hn, hd = [fmpq(0)] * size, [0] * size
            for k, a in zip(ks, values):
                hn[k - low] += a
                hd[k - low] += 1
            hnum, hden = fmpq_poly(hn), fmpq_poly(hd)
            if hden == den:
                num = num + hnum
            else:
                num, den = num * hden + hnum * den, den * hden
        return ExpElement(num, den, L)

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

    def matmul(self, A, B):
        n, k, m = len(A), len(B), len(B[0])
        Am = fmpq_mat(n, k, [_fmpq(self.scalar(x)) for r in A for x in r])
        Bm = fmpq_mat(k, m, [_fmpq(self.scalar(x)) for r in B for x in r])
        C = Am * Bm
        return [[_frac(C[i, j]) for j in range(m)] for i in range(n)]
