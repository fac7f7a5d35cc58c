"""``run`` records of the multi-head learner (P2; docs/design.md §4.3): the schedule rebuilt
from U, X and H₀, and its genericity conditions evaluated at the recovered model.

The schedule is generated from :data:`STRUCTURE`, this checker's own copy of the declarative
structure of the library's Schedule (the P2-count certificate must record the same
structure, from which :mod:`.count` derives the count polynomial).
"""

from __future__ import annotations

import itertools
from .linalg import det
from .parse import integer, matrix, require

NAME = "multi-head"
PARAMS = ("H0",)
VECTORS = ("U", "X")
MAX_H0 = 8
#: what a multi-head run record with fewer heads than H0 rests on and does not check
ASSUMED = ("; the step from 'generic at the recovered model' to this is Theorem 1 of "
           "docs/evidence.md, a proof sketch assumed here, not checked — twins with more "
           "heads can give these answers at every draw, and a design certificate (Theorem A, "
           "docs/design.md §12) decides whether the oracle is this model")
PROVES = ("the learner maps these answers to this model; any oracle with ≤ H0 heads giving "
          "the same answers is this model or has this draw in its own bad set" + ASSUMED)
#: what a run record with exactly H0 canonical heads proves (Lemma B, docs/evidence.md §2b)
PROVES_LEMMA_B = ("every model with ≤ H0 heads (real parameters) that gives these answers is "
                  "this model (Lemma B: H0 separated visible poles in every family, the "
                  "matchings tied by score additivity, all checked above)")


def proves(run, recovered):
    """Lemma B when the run found exactly H₀ canonical heads, else :data:`PROVES`."""
    return PROVES_LEMMA_B if len(recovered) == run["H0"] else PROVES

#: the checker's copy of the schedule structure (1-based indices; see exactattn's schedule)
STRUCTURE = {
    "initial": [{"tokens": [{"x": [1]}]}],
    "blocks": [
        {"loops": [["i", 1, "d"]], "families": [{"u": ["i"], "x": [1]}]},
        {"loops": [["i", 2, "d"]],
         "families": [{"u": [1, "i"], "x": [1], "matches": [[[1], [1]], [["i"], [1]]]}]},
        {"loops": [["j", 2, "d"], ["i", 1, "d"]],
         "families": [{"u": ["i"], "x": ["j"]},
                      {"u": ["i"], "x": [1, "j"], "matches": [[["i"], [1]], [["i"], ["j"]]]}]},
    ],
    "samples": {"m": [1, "2*H0"], "query": "[(x+u) × m, x]", "length": "m+1"},
}


def _key(combo, env):
    return tuple(env[c] - 1 if isinstance(c, str) else c - 1 for c in combo)


def families(d, structure=STRUCTURE):
    """The families in order as (u_key, x_key, matches), 0-based index tuples; a key (0, i)
    means u_1 + u_{i+1}; matches is None or the keys of the two paired families."""
    out = []
    for block in structure["blocks"]:
        names = [lp[0] for lp in block["loops"]]
        ranges = [range(d if lp[1] == "d" else lp[1], (d if lp[2] == "d" else lp[2]) + 1)
                  for lp in block["loops"]]
        for point in itertools.product(*ranges):
            env = dict(zip(names, point))
            for fam in block["families"]:
                m = fam.get("matches")
                m = None if m is None else tuple((_key(u, env), _key(x, env)) for u, x in m)
                out.append((_key(fam["u"], env), _key(fam["x"], env), m))
    return out


def combo(rows, key):
    out = list(rows[key[0]])
    for k in key[1:]:
        out = [a + b for a, b in zip(out, rows[k])]
    return out


def schedule_queries(U, X, H0):
    """q₀ = [x_1], then for every family m = 1 … 2H₀: [(x+u) × m, x]."""
    out = [[list(X[0])]]
    for uk, xk, _ in families(len(U)):
        u, x = combo(U, uk), combo(X, xk)
        a = [p + q for p, q in zip(x, u)]
        out += [[list(a) for _ in range(m)] + [list(x)] for m in range(1, 2 * H0 + 1)]
    return out


def read(dim, params, vectors):
    H0 = integer(params["H0"], "run.params.H0", 1, MAX_H0)
    U = matrix(vectors["U"], "run.vectors.U", dim, dim)
    X = matrix(vectors["X"], "run.vectors.X", dim, dim)
    return {"dim": dim, "H0": H0, "U": U, "X": X, "max_heads": H0}


def schedule(run, recovered):
    return schedule_queries(run["U"], run["X"], run["H0"])


def describe(run):
    return f"H0={run['H0']}"


def score(W, u, x):
    """uᵀ W x."""
    return sum(u[i] * W[i][j] * x[j] for i in range(len(u)) for j in range(len(x))
               if u[i] and x[j])


def dot(a, b):
    return sum(p * q for p, q in zip(a, b))


def violations(model, U, X, H0=None):
    """Every genericity condition of docs/design.md §4.3 that fails at (U, X) for `model`
    (canonical heads): names like those of the bad-set polynomials."""
    d, H = len(U), len(model)
    out = []
    if H0 is not None and H > H0:
        out.append(f"pole count {H} > H0 = {H0}")
    if det(U) == 0:
        out.append("det U")
    if det(X) == 0:
        out.append("det X")
    seen_u = []
    for uk, xk, match in families(d):
        u, x = combo(U, uk), combo(X, xk)
        s = [score(W, u, x) for W, _ in model]
        for a, b in itertools.combinations(range(H), 2):
            if s[a] == s[b]:
                out.append(f"poles {name(uk, xk)} heads {a + 1},{b + 1}")
        if uk not in seen_u:
            seen_u.append(uk)
            for a, (_, v) in enumerate(model):
                if dot(v, u) == 0:
                    out.append(f"visible head {a + 1} at {_combo('u', uk)}")
        if match:
            (u1, x1), (u2, x2) = match
            s1 = [score(W, combo(U, u1), combo(X, x1)) for W, _ in model]
            s2 = [score(W, combo(U, u2), combo(X, x2)) for W, _ in model]
            for a, b, c in itertools.product(range(H), repeat=3):
                if (a, b) != (c, c) and s1[a] + s2[b] == s1[c] + s2[c]:
                    out.append(f"matching {name(uk, xk)} ({a + 1},{b + 1})~{c + 1}")
    return out


def _combo(letter, key):
    return "+".join(f"{letter}{i + 1}" for i in key)


def name(uk, xk):
    return f"I({_combo('u', uk)},{_combo('x', xk)})"


def genericity(run, recovered):
    bad = violations(recovered, run["U"], run["X"], run["H0"])
    require(not bad, f"run: the draw is not generic for the recovered model ({', '.join(bad[:4])}"
            f"{' …' if len(bad) > 4 else ''} vanish)")
    d, H = run["dim"], len(recovered)
    fams = families(d)
    matching = sum(1 for f in fams if f[2])
    return [f"pole count {H} ≤ H0={run['H0']}", "det U ≠ 0", "det X ≠ 0",
            f"separated poles in {len(fams)} families",
            f"{H} heads visible at {len({f[0] for f in fams})} u's",
            f"unique matching in {matching} matching families"]
