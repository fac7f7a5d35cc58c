"""``run`` records of the economy and adaptive schedules (beyond the papers; docs/design.md §10):
the schedule rebuilt from U, X, H₀, the recorded single-visible directions and pair
coefficients, and the recovered model; its genericity conditions evaluated at that model.

The schedule is adaptive: after column 1 its queries depend on the answers through the model
they determine (which rows are matched by one query, the dual or the residue path, the
directions b with v_g·b = 0).  As for P1's probes (:mod:`.run_single_head`), every such
decision is re-taken here from the recovered model, which (b) then confirms reproduces every
answer; the learner's random choices (the directions' mixing, the pair coefficients α, β, the
internal order of the heads) are part of the recorded draw and are checked to be of the form
the learner's rule produces.  The blocks, in order:

* ``q0`` = [x₁]; ``first-family`` I(u₁, x₁), m = 1…2H₀; ``column-1`` I(u_i, x₁), i ≥ 2, m = 1…2H₀
  (economy, H known) or 1…2H (adaptive, H read from the first family);
* per row i ≥ 2 (H ≥ 2): ``matching`` [(x₁+u₁+u_i), x₁] when H ≤ 6 and the values |s_a(u₁) +
  s_b(u_i)| are pairwise distinct and non-zero and every c_a(u₁) + c_b(u_i) ≠ 0, else
  ``matching-family`` I(u₁+u_i, x₁), m = 1…2H−1;
* columns j ≥ 2, dual path (H ≤ d, independent v_h): ``single-visible`` [(x_j + b), x_j] for every
  direction b of every head, then ``pair`` I(α b_a + β b_g, x_j), m = 1…3, for a < g; residue
  path: ``residue-family`` I(u_i, x_j), m = 1…2H−1, and ``residue-matching`` I(u_i, x₁+x_j) for
  a row whose residues c_h(u_i) = −v_h·u_i repeat.

Here s_h(u, x) = uᵀW_h x (the score) and c_h(u) = −v_h·u (the residue), read off the model.
"""

from __future__ import annotations

import itertools

from .linalg import det, rank
from .parse import integer, listed, matrix, require, vector
from .run_multi_head import ASSUMED, dot, score

MAX_H0 = 16   # the adaptive runs of economy-count go up to H0 = 2H = 10
#: the learner tries the H! pairings of one-query matching up to this many heads
MAX_ONE_QUERY_HEADS = 6

PROVES = ("the learner maps these answers to this model; any oracle with ≤ H0 heads giving "
          "the same answers is this model or has this draw (U, X, the directions, α, β) in "
          "its own bad set" + ASSUMED)


def add(a, b):
    return [p + q for p, q in zip(a, b)]


class Queries:
    """The rebuilt schedule: its queries in order, each tagged with its block."""

    def __init__(self):
        self.queries, self.blocks = [], []

    def ask(self, tokens, block):
        self.queries.append([list(t) for t in tokens])
        self.blocks.append(block)

    def family(self, u, x, ms, block):
        """I(u, x) at the copy counts ms: [(x + u) × m, x]."""
        xu = add(x, u)
        for m in ms:
            self.ask([xu] * m + [x], block)

    def per_block(self) -> dict:
        out = {}
        for b in self.blocks:
            out[b] = out.get(b, 0) + 1
        return out


# ---------------------------------------------------------------------- reading
def read_common(dim, params, vectors):
    """H₀, the bases, the internal head order and the recorded directions (not yet checked
    against the model: :func:`internal` and :func:`directions` do that)."""
    H0 = integer(params["H0"], "run.params.H0", 1, MAX_H0)
    order = listed(params["head_order"], "run.params.head_order", MAX_H0)
    order = [integer(k, f"run.params.head_order[{n}]", 0, MAX_H0 - 1) for n, k in enumerate(order)]
    singles = listed(vectors["singles"], "run.vectors.singles", MAX_H0)
    singles = [matrix(S, f"run.vectors.singles[{a}]", None, dim) for a, S in enumerate(singles)]
    coef = listed(vectors["coefficients"], "run.vectors.coefficients", MAX_H0 * (MAX_H0 - 1) // 2)
    coef = [vector(c, f"run.vectors.coefficients[{k}]", 2) for k, c in enumerate(coef)]
    return {"dim": dim, "H0": H0, "order": order, "singles": singles, "coefficients": coef,
            "U": matrix(vectors["U"], "run.vectors.U", dim, dim),
            "X": matrix(vectors["X"], "run.vectors.X", dim, dim), "max_heads": H0}


def internal(run, recovered):
    """The recovered heads in the learner's internal order (that of I(u₁, x₁)'s poles)."""
    order = run["order"]
    require(sorted(order) == list(range(len(recovered))),
            f"run: head_order {order} is not a permutation of the {len(recovered)} recovered heads")
    return [recovered[k] for k in order]


# ---------------------------------------------------------------------- the rules
def column(heads, u, x):
    """The heads of I(u, x) as (score, residue) = (uᵀW_h x, −v_h·u)."""
    return [(score(W, u, x), -dot(v, u)) for W, v in heads]


def one_query_condition(ref, fam) -> bool:
    """The learner's rule for one-query matching: the |s_a + s'_b| pairwise distinct and
    non-zero, every c_a + c'_b ≠ 0 (then at most one pairing fits the answer in Q(t))."""
    es = [abs(s + t) for s, _ in ref for t, _ in fam]
    if 0 in es or len(set(es)) != len(es):
        return False
    return all(c + e != 0 for _, c in ref for _, e in fam)


def column_one(q, U, X, H0, known, heads):
    """q₀, the column-1 families and the matching across u; returns the method of each row."""
    d, H, x1 = len(U), len(heads), X[0]
    q.ask([x1], "q0")
    for i in range(d):
        n = 2 * H0 if (i == 0 or known) else 2 * H
        q.family(U[i], x1, range(1, n + 1), "first-family" if i == 0 else "column-1")
    methods = []
    if H < 2:
        return methods
    ref = column(heads, U[0], x1)
    for i in range(1, d):
        if H <= MAX_ONE_QUERY_HEADS and one_query_condition(ref, column(heads, U[i], x1)):
            q.ask([add(x1, add(U[0], U[i])), x1], "matching")
            methods.append("one-query")
        else:
            q.family(add(U[0], U[i]), x1, range(1, 2 * H), "matching-family")
            methods.append("matching-family")
    return methods


def dual_path(heads, d) -> bool:
    """The learner's choice: the dual path iff 1 ≤ H ≤ d and the v_h are independent."""
    H = len(heads)
    return 1 <= H <= d and rank([list(v) for _, v in heads]) == H


def directions(run, heads):
    """(singles, pairs) from the record: d − H + 1 directions per head and one pair vector
    α b_a + β b_g (b = the head's first direction) per a < g, in the learner's order."""
    d, H = run["dim"], len(heads)
    singles, coef = run["singles"], run["coefficients"]
    require(len(singles) == H and all(len(S) == d - H + 1 for S in singles),
            f"run: the dual path needs {d - H + 1} single-visible directions for each of the "
            f"{H} heads")
    combos = list(itertools.combinations(range(H), 2))
    require(len(coef) == len(combos), f"run: {len(coef)} pair coefficients for {len(combos)} pairs")
    pairs = {}
    for (a, g), (al, be) in zip(combos, coef):
        pairs[(a, g)] = add([al * x for x in singles[a][0]], [be * x for x in singles[g][0]])
    return singles, pairs


def dual_rows(singles, pairs, a):
    """Head a's d directions: its single-visible ones, then its pair vectors (g ≠ a)."""
    return singles[a] + [pairs[tuple(sorted((a, g)))] for g in range(len(singles)) if g != a]


def dual_column(q, x, singles, pairs, take=None, block="single-visible"):
    """One column x_j of the dual path: the single-visible probes (the first take[a] of head a;
    all when take is None) and, for a full column, the pair families."""
    for a, basis in enumerate(singles):
        for b in basis[: None if take is None else take[a]]:
            q.ask([add(x, b), x], block)
    if take is None:
        for u in pairs.values():
            q.family(u, x, (1, 2, 3), "pair")


def residue_columns(q, U, X, heads):
    """Columns j ≥ 2 on the residue path (H > d or dependent v_h)."""
    d, H = len(U), len(heads)
    for j in range(1, d):
        for i in range(d):
            q.family(U[i], X[j], range(1, 2 * H), "residue-family")
            res = [-dot(v, U[i]) for _, v in heads]
            if len(set(res)) != len(res):
                q.family(U[i], add(X[0], X[j]), range(1, 2 * H), "residue-matching")


def no_directions(run):
    require(not run["singles"] and not run["coefficients"],
            "run: directions recorded but the schedule has no dual columns for this model")


def economy_schedule(run, recovered, known):
    """The whole economy / adaptive schedule; fills run["q"], run["heads"], run["path"]."""
    d, H0 = run["dim"], run["H0"]
    heads = internal(run, recovered)
    q = Queries()
    run["methods"] = column_one(q, run["U"], run["X"], H0, known, heads)
    run["path"] = None
    if d > 1 and heads and dual_path(heads, d):
        singles, pairs = directions(run, heads)
        for j in range(1, d):
            dual_column(q, run["X"][j], singles, pairs)
        run["path"], run["dual"] = "dual", (singles, pairs)
    else:
        no_directions(run)
        if d > 1 and heads:
            residue_columns(q, run["U"], run["X"], heads)
            run["path"] = "residue"
    run["q"], run["heads"] = q, heads
    return q.queries


# ---------------------------------------------------------------------- genericity
def separated(s):
    return len(set(s)) == len(s)


def unique_matching(s1, s2):
    """P2's rule: s1_a + s2_b ≠ s1_c + s2_c for (a, b) ≠ (c, c)."""
    H = len(s1)
    return all(s1[a] + s2[b] != s1[c] + s2[c]
               for a, b, c in itertools.product(range(H), repeat=3) if (a, b) != (c, c))


def scores(heads, u, x):
    return [score(W, u, x) for W, _ in heads]


def visible(heads, u):
    return all(dot(v, u) != 0 for _, v in heads)


def column_one_conditions(run, heads):
    """det U, det X; column 1 separated and visible; each row's matching unique."""
    U, X, d, H = run["U"], run["X"], run["dim"], len(heads)
    require(H <= run["H0"], f"run: {H} heads recovered but the bound is H0 = {run['H0']}")
    require(det(U) != 0, "run: det U = 0")
    require(det(X) != 0, "run: det X = 0")
    x1 = X[0]
    for i in range(d):
        require(separated(scores(heads, U[i], x1)),
                f"run: the draw is not generic for the recovered model (poles collide in "
                f"I(u{i + 1},x1))")
        require(visible(heads, U[i]), f"run: the draw is not generic for the recovered model "
                f"(a head is invisible at u{i + 1})")
    out = [f"pole count {H} ≤ H0={run['H0']}", "det U ≠ 0", "det X ≠ 0",
           f"separated poles and {H} visible heads in the {d} column-1 families"]
    one = run["methods"].count("one-query")
    for i, method in enumerate(run["methods"], 1):
        if method == "matching-family":
            u = add(U[0], U[i])
            require(visible(heads, u) and unique_matching(scores(heads, U[0], x1),
                                                          scores(heads, U[i], x1)),
                    f"run: the draw is not generic for the recovered model (matching "
                    f"I(u1+u{i + 1},x1) is not unique or a head is invisible there)")
    if run["methods"]:
        out.append(f"{one} rows matched by one query (|e_ab| distinct and ≠ 0, C_ab ≠ 0)")
    if len(run["methods"]) > one:
        out.append(f"unique matching in {len(run['methods']) - one} matching families")
    return out


def dual_conditions(run, heads, pair_columns):
    """The directions are of the learner's form for this model and every pair family it asks
    (at the columns ``pair_columns``) is generic."""
    d, H = run["dim"], len(heads)
    singles, pairs = run["dual"]
    vs = [list(v) for _, v in heads]
    for a, S in enumerate(singles):
        for b in S:
            require(all(dot(vs[g], b) == 0 for g in range(H) if g != a),
                    f"run: a direction of head {a + 1} is seen by another head (v_g·b ≠ 0)")
            require(dot(vs[a], b) != 0, f"run: a direction of head {a + 1} does not see it "
                    f"(v_a·b = 0)")
        require(det(dual_rows(singles, pairs, a)) != 0,
                f"run: the {d} directions of head {a + 1} are not a basis")
    for (a, g), u in pairs.items():
        ra, rg = -dot(vs[a], u), -dot(vs[g], u)
        require(ra != 0 and rg != 0 and ra != rg,
                f"run: the pair family of heads {a + 1}, {g + 1} has residues {ra}, {rg} "
                f"(they must be distinct and non-zero)")
        for j in pair_columns:
            require(separated(scores([heads[a], heads[g]], u, run["X"][j])),
                    f"run: the draw is not generic for the recovered model (the pair family of "
                    f"heads {a + 1}, {g + 1} has colliding poles at x{j + 1})")
    return [f"{H} independent v_h", f"{sum(len(S) for S in singles)} single-visible "
            f"directions (each sees its head alone)", f"{H} bases of {d} directions",
            f"{len(pairs)} pair families with distinct residues, separated poles at "
            f"{len(pair_columns)} columns"]


def residue_conditions(run, heads):
    U, X, d = run["U"], run["X"], run["dim"]
    n = 0
    for j in range(1, d):
        for i in range(d):
            require(separated(scores(heads, U[i], X[j])),
                    f"run: the draw is not generic for the recovered model (poles collide in "
                    f"I(u{i + 1},x{j + 1}))")
            res = [-dot(v, U[i]) for _, v in heads]
            if not separated(res):
                n += 1
                require(unique_matching(scores(heads, U[i], X[0]), scores(heads, U[i], X[j])),
                        f"run: the draw is not generic for the recovered model (matching "
                        f"I(u{i + 1},x1+x{j + 1}) is not unique)")
    return [f"separated poles in {d * (d - 1)} residue families",
            f"unique matching in {n} residue-matching families"]


def economy_genericity(run, recovered):
    heads = run["heads"]
    out = column_one_conditions(run, heads)
    if run["path"] == "dual":
        out += dual_conditions(run, heads, range(1, run["dim"]))
    elif run["path"] == "residue":
        out += residue_conditions(run, heads)
    return out


class Variant:
    """The checker module of one variant (the ``run.py`` dispatch interface)."""

    PARAMS = ("H0", "head_order")
    VECTORS = ("U", "X", "singles", "coefficients")
    PROVES = PROVES

    def __init__(self, variant):
        self.variant = variant
        self.NAME = f"multi-head-{variant}"
        self.known = variant == "economy"

    def read(self, dim, params, vectors):
        return read_common(dim, params, vectors)

    def schedule(self, run, recovered):
        return economy_schedule(run, recovered, self.known)

    def genericity(self, run, recovered):
        return economy_genericity(run, recovered)

    def describe(self, run):
        return f"H0={run['H0']} ({run['path'] or 'column 1 only'} path)"


ECONOMY = Variant("economy")
ADAPTIVE = Variant("adaptive")

