"""The causal query schedule (docs/decoders.md §schedule): one causal query per copy-count
family, read at every position.

For a family I(u, x) of P2's schedule (docs/design.md §4.3) the causal query is
[x − u, x, x, …, x] of length n: position k + 1 sees x − u once and x k times with x the query
token, so its output is

    G̃(k) = v·x − Σ_h (v_h·u) / (1 + k e^{uᵀW_h x}),   k = 0 … n − 1

(plus w·x, and w·(x − u) at k = 0, with a residual read-out): the whole family, with P2's
poles e^{uᵀW_h x} and residues −v_h·u, in one query.  With one shared ALiBi slope s the copy
count k becomes S_k = Σ_{i=1}^{k} e^{i s}; with distinct known slopes every head keeps its own
S_k and the heads are told apart by their slopes (:mod:`.family`).

Counts (:func:`causal_count`): the copy-count schedule asks P2's 2d² − 1 families (the basis
families and the matching families, :data:`~exactattn.learners.p2.schedule.STRUCTURE`), one
query each, of length 2H₀ + 1 (2H₀ + 2 with a residual, whose k = 0 output is off the rational
curve); the residue schedule drops P2's d(d − 1) row-matching families I(u_i, x_1 + x_j) —
the heads of row u_i share their residues −v_h·u_i — and asks d² + d − 1; the distinct-slope
schedule asks only the d² basis families I(u_i, x_j) (the slopes label the heads, so no
matching family is needed), of length 2^{H+1} − 1 (+1 with a residual).  The d² basis
families alone never suffice for H ≥ 2 heads without slopes: permuting the heads' labels in
one row u_i changes the model and none of their answers (the ``causal-count`` claim's twin).
"""

from __future__ import annotations

from ..p2.schedule import Family, Schedule

__all__ = ["CausalSchedule", "causal_count", "causal_length", "MODES"]

#: "copy-count": no slopes or one shared slope, P2's families; "residue": the same families
#: without P2's row-matching families I(u_i, x_1 + x_j) — heads of a row matched by their
#: residues −v_h·u_i, which do not depend on x (docs/design.md §10); "slopes": distinct known
#: slopes per head
MODES = ("copy-count", "residue", "slopes")


def causal_length(H0: int, mode: str = "copy-count", residual: bool = False) -> int:
    """The length of every causal query: 2H₀ + 1 samples of a type-(H₀, H₀) rational function
    (copy-count), or 2^{H+1} − 1 for the exponential sums of H distinct slopes (H = H₀); one
    more with a residual read-out (its k = 0 output is off the curve)."""
    n = 2 ** (H0 + 1) - 1 if mode == "slopes" else 2 * H0 + 1
    return n + (1 if residual else 0)


def causal_count(d: int, H0: int, mode: str = "copy-count", residual: bool = False):
    """(queries, max length, outputs read) of the causal schedule: 2d² − 1 queries (P2's
    families), d² + d − 1 (residue matching) or d² (distinct slopes), each of length
    :func:`causal_length`, every output read."""
    queries = {"copy-count": 2 * d * d - 1, "residue": d * d + d - 1, "slopes": d * d}[mode]
    n = causal_length(H0, mode, residual)
    return queries, n, queries * n


class CausalSchedule:
    """The causal families for bases U, X (module docstring)."""

    def __init__(self, U, X, H0: int, mode: str = "copy-count", residual: bool = False):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.U, self.X, self.H0 = [list(u) for u in U], [list(x) for x in X], H0
        self.d, self.mode, self.residual = len(self.U), mode, residual
        if mode == "copy-count":
            self.families = Schedule(U, X, H0).families
        elif mode == "residue":
            self.families = [f for f in Schedule(U, X, H0).families
                             if not (f.matches and len(f.x_key) > 1)]
        else:
            self.families = [Family((i,), (j,), tuple(self.U[i]), tuple(self.X[j]))
                             for j in range(self.d) for i in range(self.d)]
        self.length = causal_length(H0, mode, residual)

    def query(self, fam):
        """[x − u, x × (n − 1)]: the copies are one list object (converted once)."""
        x = list(fam.x)
        return [[a - b for a, b in zip(fam.x, fam.u)]] + [x] * (self.length - 1)

    def queries(self):
        return [self.query(f) for f in self.families]

    @property
    def count(self) -> int:
        return len(self.families)

    @property
    def max_length(self) -> int:
        return self.length
