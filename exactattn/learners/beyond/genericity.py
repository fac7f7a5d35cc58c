"""Genericity of one run of the economy, adaptive or multi-head low-rank schedule at the
recovered model (docs/design.md §10, beyond P2): the conditions under which the learner,
fed that model's answers on the schedule it asked, returns that model — evaluated exactly at
the run's draw (U, X, the single-visible directions, the pair coefficients α, β).  The
symbolic form of the dual-path conditions, for the Schwartz–Zippel bound, is
:mod:`exactattn.analysis.economy_genericity`; the stdlib checker evaluates the same
conditions itself (``proofs_checks/checker/run_economy.py``).

* det U, det X ≠ 0; in every I(u_i, x₁) separated poles s_a ≠ s_b (s_h = u_iᵀW_h x₁) and
  visible heads v_h·u_i ≠ 0;
* a row matched by a matching family I(u₁+u_i, x₁): visible heads at u₁+u_i and P2's unique
  matching (a row matched by one query satisfied the exact one-query condition when asked);
* dual path: every direction b of head a has v_g·b = 0 (g ≠ a) and v_a·b ≠ 0, head a's d
  directions are a basis, each pair vector α b_a + β b_g has distinct non-zero residues and
  separated poles at every column where its family was asked;
* residue path: separated poles in every I(u_i, x_j), unique matching where a row's residues
  repeat;
* low rank, skeleton columns: the measured columns of W_h have rank W_h, and F_h C_h is
  invertible.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from flint import fmpq, fmpq_mat

from ...arith.rational_vectors import dot as _dot

__all__ = ["economy_violations", "statement", "BEYOND"]


def _mat(rows):
    return fmpq_mat(len(rows), len(rows[0]),
                    [fmpq(Fraction(x).numerator, Fraction(x).denominator) for r in rows for x in r])


def _det(rows) -> bool:
    return _mat(rows).det() != 0


def _score(W, u, x):
    """uᵀ W x exactly, W x computed once per (head matrix, x) while a statement is made
    (:func:`economy_violations` empties the cache, which keeps each W alive so its id is
    not reused)."""
    key = (id(W), tuple(x))
    got = _COLUMNS.get(key)
    if got is None:
        Wx = _matrix_of(W) * _mat([[e] for e in x])
        got = _COLUMNS[key] = (W, [Fraction(int(q.p), int(q.q)) for q in Wx.entries()])
    return _dot(u, got[1])


def _matrix_of(W):
    """W as an fmpq matrix, made once per head matrix while a statement is made (in
    ``_COLUMNS`` beside its columns, under the key (id(W), None))."""
    key = (id(W), None)
    got = _COLUMNS.get(key)
    if got is None:
        got = _COLUMNS[key] = (W, _mat(W))
    return got[1]


_COLUMNS = {}


def _add(a, b):
    return [Fraction(p) + Fraction(q) for p, q in zip(a, b)]


def _unique_matching(s1, s2) -> bool:
    H = len(s1)
    return all(s1[a] + s2[b] != s1[c] + s2[c]
               for a, b, c in itertools.product(range(H), repeat=3) if (a, b) != (c, c))


def _separated(heads, u, x) -> bool:
    s = [_score(W, u, x) for W, _ in heads]
    return len(set(s)) == len(s)


def _column_one(heads, U, X, methods, out):
    for name, M in (("U", U), ("X", X)):
        if not _det(M):
            out.append(f"det {name} = 0")
    x1 = X[0]
    for i, u in enumerate(U):
        if not _separated(heads, u, x1):
            out.append(f"poles collide in I(u{i + 1},x1)")
        if any(_dot(v, u) == 0 for _, v in heads):
            out.append(f"a head is invisible at u{i + 1}")
    for i, method in enumerate(methods, 1):
        if method == "matching-family":
            u = _add(U[0], U[i])
            s1 = [_score(W, U[0], x1) for W, _ in heads]
            s2 = [_score(W, U[i], x1) for W, _ in heads]
            if any(_dot(v, u) == 0 for _, v in heads) or not _unique_matching(s1, s2):
                out.append(f"matching in I(u1+u{i + 1},x1) is not unique")


def _dual(heads, X, dirs, pair_columns, out):
    singles = dirs["singles"]
    pairs = dirs["pairs"]
    vs = [v for _, v in heads]
    for a, S in enumerate(singles):
        if any(_dot(vs[g], b) != 0 for b in S for g in range(len(vs)) if g != a) or \
                any(_dot(vs[a], b) == 0 for b in S):
            out.append(f"a direction of head {a + 1} does not see it alone")
        if not _det(S + [u for key, u in pairs.items() if a in key]):   # its d directions
            out.append(f"the directions of head {a + 1} are not a basis")
    for (a, g), u in pairs.items():
        ra, rg = _dot(vs[a], u), _dot(vs[g], u)
        if ra == 0 or rg == 0 or ra == rg:
            out.append(f"the pair family of heads {a + 1}, {g + 1} has equal or zero residues")
        for j in pair_columns:
            if not _separated([heads[a], heads[g]], u, X[j]):
                out.append(f"the pair family of heads {a + 1}, {g + 1} has colliding poles "
                           f"at x{j + 1}")


def _residue(heads, U, X, out):
    for j in range(1, len(X)):
        for i, u in enumerate(U):
            if not _separated(heads, u, X[j]):
                out.append(f"poles collide in I(u{i + 1},x{j + 1})")
            res = [_dot(v, u) for _, v in heads]
            if len(set(res)) != len(res):
                s1 = [_score(W, u, X[0]) for W, _ in heads]
                s2 = [_score(W, u, X[j]) for W, _ in heads]
                if not _unique_matching(s1, s2):
                    out.append(f"matching in I(u{i + 1},x1+x{j + 1}) is not unique")


def _skeleton(heads, X, dirs, start, take, out):
    for a, (W, _) in enumerate(heads):
        cols = [[_dot(row, X[j]) for row in W] for j in range(start)]
        r = _mat(W).rank() if W else 0
        if _mat(cols).rank() != r:
            out.append(f"the measured columns of head {a + 1} do not span its column space")
        elif r:
            C, k = [], 0
            for c in cols:                      # the prefix-greedy basis the learner keeps
                if _mat(C + [c]).rank() > k:
                    C.append(c)
                    k += 1
            F = dirs["singles"][a][:take[a]]
            if not _det([[_dot(f, c) for c in C] for f in F]):
                out.append(f"the skeleton block F_h C_h of head {a + 1} is singular")


def economy_violations(result) -> list:
    """Every condition of the module docstring that fails at the run's draw for the recovered
    model (exact): [] when the draw is generic for it."""
    _COLUMNS.clear()
    try:
        return _violations(result)
    finally:
        _COLUMNS.clear()


def _violations(result) -> list:
    ex = result.extra
    U, X, d = ex["U"], ex["X"], result.dim
    heads = [(result.heads[k].W, result.heads[k].v) for k in ex.get("head_order", [])]
    out = []
    if len(heads) != len(result.heads):
        return ["the run recorded no internal head order"]
    _column_one(heads, U, X, ex.get("matching", []), out)
    dirs = ex.get("directions")
    if dirs is not None:
        full = ex.get("full_columns", d)
        take = ex.get("skeleton_take")
        columns = range(1, full) if take is not None else range(1, d)
        _dual(heads, X, dirs, columns, out)
        if take is not None and full < d:
            _skeleton(heads, X, dirs, full, take, out)
    elif d > 1 and heads:
        _residue(heads, U, X, out)
    return out


#: the beyond-P2 multi-head schedules (their ``LearnResult.algorithm``)
BEYOND = ("multi-head-economy", "multi-head-adaptive", "multi-head-low-rank")


def statement(result, H0) -> str:
    """The exact ``proves`` text of a beyond-P2 run (economy, adaptive, multi-head low rank)."""
    N, name = result.queries, result.algorithm[len("multi-head-"):]
    head = (f"the recovered model reproduces all {N} answers of the {name} schedule (beyond "
            f"P2) exactly in Q(t)")
    bad = economy_violations(result)
    if bad:
        shown = "; ".join(bad[:3]) + (" …" if len(bad) > 3 else "")
        return (f"{head}, but the draw is not generic for it ({shown}): the learner maps these "
                f"answers to it, and other models with ≤ {H0} heads may give the same answers")
    r = result.extra.get("rank_given")
    among = (f" whose heads have rank ≤ {r} (a promise: entries outside the skeleton are not "
             f"measured)" if name == "low-rank" and r is not None else "")
    dual = result.extra.get("directions") is not None
    draw = "(U, X, the single-visible directions, α, β)" if dual else "(U, X)"
    conditions = "det U ≠ 0, det X ≠ 0, separated poles, visible heads, unique matching"
    if dual:
        conditions += ", directions that see one head each, distinct pair residues"
    if result.extra.get("skeleton_take") is not None:
        conditions += ", invertible skeleton blocks"
    return (f"{head} and the draw {draw} is generic for it ({conditions}): the learner "
            f"maps these answers to this model, so any oracle with ≤ {H0} heads{among} giving "
            f"the same answers is this model or has this draw in its own bad set (a proper "
            f"algebraic set for a canonical model: for a fixed oracle chosen independently of "
            f"the draw, probability 0 for continuous draws; Schwartz–Zippel bounds in the "
            f"claim economy-prob1; the step to this is the analogue of Theorem 1 of "
            f"docs/evidence.md, a proof sketch, assumed)")
