"""``run`` records of the causal learner (docs/decoders.md): decoder oracles read at every
position, with optional ALiBi slopes and a residual read-out.

The record is checked from itself alone, with the standard library:

(a) the causal schedule is rebuilt from the recorded U, X, H₀, mode and residual flag — one
    query [x − u, x × (n − 1)] per family, P2's 2d² − 1 families (this checker's copy,
    :func:`.run_multi_head.families`) or the d² basis families for distinct slopes — and the
    transcript must be exactly that schedule;
(b) every output of every query, position by position (the prefix read at its last token,
    ALiBi biases slope·(p − i), plus w·x_p), is reproduced exactly in Q(t) by the recovered
    model (:func:`.qt.attention` with slopes) and by the true model when given, whose
    canonical form (heads grouped by (W, slope)) must equal the recovered one;
(c) genericity at the recovered model: P2's conditions of the same families
    (:func:`.run_multi_head.violations`) for the copy-count modes; det U, det X, every head
    visible at every u_i and distinct subset sums of the slopes for distinct slopes.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from . import run_multi_head
from .linalg import det
from .parse import boolean, integer, listed, matrix, only, rat, require, string, vector
from .qt import attention, element, same_element, tokens_of

NAME = "causal"
PARAMS = ("H0", "mode", "residual", "slopes")
VECTORS = ("U", "X")
MAX_H0 = 8
#: distinct slopes: the exponential-sum system has 2^{H+1} − 1 unknowns
MAX_SLOPE_HEADS = 5
PROVES = ("the learner maps these outputs to this causal model; any oracle with ≤ H0 heads "
          "(and these slopes) giving the same outputs is this model or has this draw in its "
          "own bad set (Theorem 1 of docs/evidence.md, carried over in docs/decoders.md §5: a "
          "proof sketch assumed here, not checked); a causal design certificate proves it")
#: what a run with exactly H0 recovered heads proves (Lemma B)
PROVES_LEMMA_B = ("every causal model with ≤ H0 heads (and these slopes) that gives these "
                  "outputs is this model (Lemma B of docs/evidence.md, carried over in "
                  "docs/decoders.md §5: one head per separated visible pole, rows and columns "
                  "tied by the matching, the residues or the slopes)")


def length(H0, mode, residual):
    """The causal query length (docs/decoders.md): 2H₀+1 or 2^{H+1}−1, +1 with a residual."""
    n = 2 ** (H0 + 1) - 1 if mode == "slopes" else 2 * H0 + 1
    return n + (1 if residual else 0)


def count(d, mode):
    """The number of causal queries: 2d² − 1 (P2's families), d² + d − 1 (residue matching)
    or d² (distinct slopes)."""
    return {"copy-count": 2 * d * d - 1, "residue": d * d + d - 1, "slopes": d * d}[mode]


def families(d, mode):
    """(u_key, x_key, matches) in order: P2's families, those without the row-matching
    families I(u_i, x_1 + x_j) (residue), or the basis families, j outer (slopes)."""
    if mode == "copy-count":
        return run_multi_head.families(d)
    if mode == "residue":
        return [f for f in run_multi_head.families(d) if not (f[2] and len(f[1]) > 1)]
    return [((i,), (j,), None) for j in range(d) for i in range(d)]


def schedule_queries(U, X, H0, mode, residual):
    n = length(H0, mode, residual)
    out = []
    for uk, xk, _ in families(len(U), mode):
        u, x = run_multi_head.combo(U, uk), run_multi_head.combo(X, xk)
        out.append([[a - b for a, b in zip(x, u)]] + [list(x) for _ in range(n - 1)])
    return out


def causal_model(data, dim, where, max_heads):
    """(heads [(W, v)], slopes [Fraction], residual tuple or None) of a recorded model."""
    only(data, ("heads", "residual"), where)
    listed(data["heads"], f"{where}.heads", max_heads)
    heads, slopes = [], []
    for h, hd in enumerate(data["heads"]):
        only(hd, ("W", "v", "slope"), f"{where}.heads[{h}]")
        W = matrix(hd["W"], f"{where}.heads[{h}].W", dim, dim)
        heads.append((tuple(map(tuple, W)), tuple(vector(hd["v"], f"{where}.heads[{h}].v",
                                                         dim))))
        slopes.append(rat(hd["slope"], f"{where}.heads[{h}].slope"))
    w = data["residual"]
    w = None if w is None else tuple(vector(w, f"{where}.residual", dim))
    return heads, slopes, w


def canonical(heads, slopes, w):
    """Heads grouped by (W, slope), v summed, zero sums dropped; the residual (None if 0)."""
    groups = {}
    for (W, v), s in zip(heads, slopes):
        key = (W, s)
        groups[key] = tuple(a + b for a, b in zip(groups[key], v)) if key in groups else v
    kept = frozenset((W, s, v) for (W, s), v in groups.items() if any(v))
    return kept, (w if w is not None and any(w) else None)


def outputs(model, toks):
    """The outputs at every position of a causal model on one query, each (num, den, L)."""
    heads, slopes, w = model
    biased = any(slopes)
    out = []
    for p in range(1, len(toks) + 1):
        num, den, L = attention(heads, toks[:p], slopes if biased else None)
        if w is not None:
            c = sum((a * b for a, b in zip(w, toks[p - 1])), Fraction(0))
            num = dict(num)
            for k, q in den.items():
                num[k] = num.get(k, 0) + c * q
            num = {k: q for k, q in num.items() if q}
        out.append((num, den, L))
    return out


def check(c, checks=()):
    """The whole check of a causal run record (module docstring)."""
    only(c, ("kind", "learner", "dim", "params", "vectors", "transcript", "recovered"), "run",
         optional=("model",))
    dim = integer(c["dim"], "run.dim", 1, 16)
    p = only(c["params"], PARAMS, "run.params")
    mode = string(p["mode"], "run.params.mode")
    require(mode in ("copy-count", "residue", "slopes"),
            f"run.params.mode: unknown mode {mode!r}")
    H0 = integer(p["H0"], "run.params.H0", 1, MAX_SLOPE_HEADS if mode == "slopes" else MAX_H0)
    residual = boolean(p["residual"], "run.params.residual")
    listed(p["slopes"], "run.params.slopes", H0)
    known = [rat(s, f"run.params.slopes[{k}]") for k, s in enumerate(p["slopes"])]
    if mode == "slopes":
        require(len(known) == H0 and len(set(known)) == H0,
                "run.params.slopes: distinct-slope mode needs H0 distinct slopes")
    else:
        require(len(known) <= 1, "run.params.slopes: copy-count mode has at most one slope")
    vec = only(c["vectors"], VECTORS, "run.vectors")
    U = matrix(vec["U"], "run.vectors.U", dim, dim)
    X = matrix(vec["X"], "run.vectors.X", dim, dim)
    expected = schedule_queries(U, X, H0, mode, residual)
    rec = causal_model(c["recovered"], dim, "run.recovered", H0)
    heads, slopes, w = rec
    require(len({(W, s) for (W, _), s in zip(heads, slopes)}) == len(heads)
            and all(any(v) for _, v in heads), "run: the recovered heads are not canonical "
            "(a repeated (W, slope) or a zero v)")
    allowed = set(known) if known else {Fraction(0)}
    require(all(s in allowed for s in slopes), "run: a recovered head's slope is not one of "
            "the known slopes")
    require(residual or w is None, "run: a residual read-out recovered without the residual "
            "flag")
    models = [("recovered model", rec)]
    truth = ""
    if "model" in c:
        true = causal_model(c["model"], dim, "run.model", 64)
        require(canonical(*true) == canonical(*rec), "run: the recovered causal model ≠ the "
                "canonical form of the true model")
        models.append(("true model", true))
        truth = "; canonical form of the true model"
    tr = c["transcript"]
    listed(tr, "run.transcript")
    require(len(tr) == len(expected), f"run.transcript: {len(tr)} queries but the causal "
            f"schedule rebuilt from the recorded vectors has {len(expected)}")
    n_out = 0
    for k, entry in enumerate(tr):
        only(entry, ("tokens", "answer"), f"run.transcript[{k}]")
        toks = tokens_of(entry["tokens"], dim, f"run.transcript[{k}].tokens")
        require(toks == expected[k], f"run.transcript[{k}]: the query is not query {k} of "
                f"the causal schedule rebuilt from the recorded vectors")
        listed(entry["answer"], f"run.transcript[{k}].answer")
        require(len(entry["answer"]) == len(toks), f"run.transcript[{k}]: {len(entry['answer'])}"
                f" outputs for {len(toks)} positions")
        answers = [element(a, f"run.transcript[{k}].answer[{p}]")
                   for p, a in enumerate(entry["answer"])]
        for what, m in models:
            for p, (got, want) in enumerate(zip(outputs(m, toks), answers)):
                require(same_element(got, want), f"run: the {what} does not reproduce output "
                        f"{p + 1} of query {k} exactly in Q(t)")
        n_out += len(answers)
    conditions = genericity(U, X, H0, mode, known, heads)
    n = length(H0, mode, residual)
    slope_text = f" slope{'s' if len(known) > 1 else ''} {','.join(map(str, known))}" \
        if known else ""
    return (f"run causal d={dim} H0={H0} {mode}{slope_text}"
            f"{' residual' if residual else ''}: transcript = the causal schedule rebuilt from "
            f"the recorded vectors ({len(expected)} queries of length {n}); {n_out} outputs "
            f"re-checked exactly in Q(t){truth}; generic for the recovered model: "
            f"{', '.join(conditions)} — {PROVES_LEMMA_B if len(heads) == H0 else PROVES}")


def genericity(U, X, H0, mode, known, heads):
    """The conditions at the recovered model (module docstring, (c)); Rejected if one fails."""
    if mode == "residue":
        return _residue_genericity(U, X, H0, heads)
    if mode == "copy-count":
        bad = run_multi_head.violations(heads, U, X, H0)
        require(not bad, f"run: the draw is not generic for the recovered model "
                f"({', '.join(bad[:4])}{' …' if len(bad) > 4 else ''} vanish)")
        fams = run_multi_head.families(len(U))
        return [f"pole count {len(heads)} ≤ H0={H0}", "det U ≠ 0", "det X ≠ 0",
                f"separated poles in {len(fams)} families",
                f"unique matching in {sum(1 for f in fams if f[2])} matching families"]
    require(det(U) != 0 and det(X) != 0, "run: det U or det X vanishes")
    for a, (_, v) in enumerate(heads):
        for i, u in enumerate(U):
            require(sum(p * q for p, q in zip(u, v)) != 0,
                    f"run: head {a + 1} is invisible at u{i + 1} (v·u = 0)")
    sums = [sum(s for s, bit in zip(known, bits) if bit)
            for bits in itertools.product((0, 1), repeat=len(known))]
    require(len(set(sums)) == len(sums), "run: two subsets of the slopes have the same sum")
    return ["det U ≠ 0", "det X ≠ 0", f"{len(heads)} heads visible at {len(U)} u's",
            f"{len(sums)} distinct subset sums of the slopes"]


def _residue_genericity(U, X, H0, heads):
    """The residue schedule's conditions: det U, det X, separated poles in every family,
    every head visible at every u, distinct residues v_a·u_i ≠ v_b·u_i (the row matching),
    and a unique column matching through I(u_1 + u_i, x_1)."""
    H = len(heads)
    require(H <= H0, f"run: pole count {H} > H0 = {H0}")
    require(det(U) != 0 and det(X) != 0, "run: det U or det X vanishes")
    score, dot, combo = run_multi_head.score, run_multi_head.dot, run_multi_head.combo
    fams = families(len(U), "residue")
    for uk, xk, match in fams:
        u, x = combo(U, uk), combo(X, xk)
        s = [score(W, u, x) for W, _ in heads]
        require(len(set(s)) == H, f"run: two poles collide in family {run_multi_head.name(uk, xk)}")
        r = [dot(v, u) for _, v in heads]
        require(all(r), f"run: a head is invisible at {uk} (v·u = 0)")
        if match:
            (u1, x1), (u2, x2) = match
            s1 = [score(W, combo(U, u1), combo(X, x1)) for W, _ in heads]
            s2 = [score(W, combo(U, u2), combo(X, x2)) for W, _ in heads]
            for a, b, c in itertools.product(range(H), repeat=3):
                require((a, b) == (c, c) or s1[a] + s2[b] != s1[c] + s2[c],
                        f"run: the matching in {run_multi_head.name(uk, xk)} is not unique")
    for u in U:
        r = [dot(v, u) for _, v in heads]
        require(len(set(r)) == H, "run: two heads share a residue at some u_i (residue "
                "matching is ambiguous)")
    return [f"pole count {H} ≤ H0={H0}", "det U ≠ 0", "det X ≠ 0",
            f"separated poles in {len(fams)} families", f"distinct residues at {len(U)} u's",
            f"unique matching in {sum(1 for f in fams if f[2])} matching families"]
