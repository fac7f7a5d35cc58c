"""Small exact linear algebra over Q: determinants and unique solutions by elimination."""

from __future__ import annotations

from fractions import Fraction


def det(M) -> Fraction:
    """Determinant by Gaussian elimination over Q."""
    A = [list(map(Fraction, r)) for r in M]
    n, sign, out = len(A), 1, Fraction(1)
    for c in range(n):
        p = next((r for r in range(c, n) if A[r][c] != 0), None)
        if p is None:
            return Fraction(0)
        if p != c:
            A[c], A[p], sign = A[p], A[c], -sign
        out *= A[c][c]
        for r in range(c + 1, n):
            f = A[r][c] / A[c][c]
            if f:
                A[r] = [a - f * b for a, b in zip(A[r], A[c])]
    return sign * out


def solve_unique(A, b):
    """The unique x with A x = b (A may have more rows than columns); None if not unique or
    inconsistent."""
    rows = [list(map(Fraction, r)) + [Fraction(y)] for r, y in zip(A, b)]
    n = len(A[0])
    piv = 0
    for c in range(n):
        p = next((r for r in range(piv, len(rows)) if rows[r][c] != 0), None)
        if p is None:
            return None
        rows[piv], rows[p] = rows[p], rows[piv]
        rows[piv] = [a / rows[piv][c] for a in rows[piv]]
        for r in range(len(rows)):
            if r != piv and rows[r][c]:
                f = rows[r][c]
                rows[r] = [a - f * q for a, q in zip(rows[r], rows[piv])]
        piv += 1
    if any(r[-1] != 0 for r in rows[n:]):
        return None
    return [rows[i][-1] for i in range(n)]


def rank(M) -> int:
    """Rank by Gaussian elimination over Q."""
    A = [list(map(Fraction, r)) for r in M]
    rk, rows = 0, len(A)
    for c in range(len(A[0]) if A else 0):
        p = next((r for r in range(rk, rows) if A[r][c] != 0), None)
        if p is None:
            continue
        A[rk], A[p] = A[p], A[rk]
        for r in range(rk + 1, rows):
            f = A[r][c] / A[rk][c]
            if f:
                A[r] = [a - f * b for a, b in zip(A[r], A[rk])]
        rk += 1
    return rk
