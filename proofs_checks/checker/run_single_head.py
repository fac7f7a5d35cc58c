"""``run`` records of the single-head learner (P1 Thm 4.1; docs/design.md §4.1): the d queries
[e_i], then [(u_k + e_j), e_j] for k, j = 1…d with the probes u_k rebuilt here from v (the
schedule is adaptive once: the probes depend on v, which the first d answers reveal)."""

from __future__ import annotations

from fractions import Fraction

from .linalg import det
from .parse import integer, require

NAME = "single-head"
PARAMS = ("holdout",)
VECTORS = ()
PROVES = ("any single head giving these answers is this head (v from the [e_i], then every "
          "u_kᵀW e_j by the sigmoid inversion, W = P⁻¹(P W))")


def unit(d, i):
    return [Fraction(int(k == i)) for k in range(d)]


def probes(v):
    """The learner's probe rule: p = first index of largest |v_p|; u_k = e_k when
    2|v_k| ≥ |v_p|, otherwise e_k ± e_p with the sign of v_k·v_p (≥ 0 → +)."""
    d = len(v)
    p = max(range(d), key=lambda i: abs(v[i]))
    out = []
    for k in range(d):
        u = unit(d, k)
        if 2 * abs(v[k]) < abs(v[p]):
            u[p] = Fraction(1 if v[k] * v[p] >= 0 else -1)
        out.append(u)
    return out


def read(dim, params, vectors):
    integer(params["holdout"], "run.params.holdout", 0, 0)   # held-out queries are not rebuilt
    return {"dim": dim, "max_heads": 1}


def schedule(run, recovered):
    d = run["dim"]
    require(len(recovered) == 1, "run: a single-head run recovers exactly one head")
    v = list(recovered[0][1])
    out = [[unit(d, i)] for i in range(d)]
    for u in probes(v):
        for j in range(d):
            e = unit(d, j)
            out.append([[a + b for a, b in zip(u, e)], e])
    return out


def describe(run):
    return "(P1 Thm 4.1)"


def genericity(run, recovered):
    v = list(recovered[0][1])
    require(any(v), "run: v = 0 (W is not identifiable)")
    P = probes(v)
    require(all(sum((a * b for a, b in zip(u, v)), Fraction(0)) != 0 for u in P),
            "run: a probe has u·v = 0")
    require(det(P) != 0, "run: the probes are not a basis")
    return ["v ≠ 0", f"u_k·v ≠ 0 for {len(P)} probes", "det P ≠ 0"]
