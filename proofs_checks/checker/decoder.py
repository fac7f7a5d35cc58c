"""Check kinds of the decoder claims (docs/decoders.md): ``causal-count`` — the count and
length formulas of the causal schedule recomputed and the referenced run recounted, beside
P2's count on the same model — and ``causal-twin`` — two causal models with different
canonical forms that give exactly the same outputs on every basis query I(u_i, x_j) of
any length, so the d² basis queries alone never determine a model with H ≥ 2 heads."""

from __future__ import annotations

from fractions import Fraction

from .parse import boolean, integer, listed, matrix, only, rat, require, string
from .qt import element, same_element
from .run import run_of
from .run_causal import (canonical, causal_model, count, length, outputs,
                         schedule_queries)


def p2_count(d, H0):
    """P2's published count 4H₀d² − 2H₀ + 1 (the same model, queries read at the last token)."""
    return 4 * H0 * d * d - 2 * H0 + 1


def check_causal_count(c, checks=()):
    """The formulas at (d, H₀, mode, residual), and the run's transcript recounted."""
    only(c, ("kind", "d", "H0", "mode", "residual", "queries", "max_length", "outputs",
             "p2_queries", "run"), "causal-count")
    d = integer(c["d"], "causal-count.d", 1, 16)
    H0 = integer(c["H0"], "causal-count.H0", 1, 8)
    mode = string(c["mode"], "causal-count.mode")
    require(mode in ("copy-count", "residue", "slopes"), f"causal-count: unknown mode {mode!r}")
    residual = boolean(c["residual"], "causal-count.residual")
    q, n = count(d, mode), length(H0, mode, residual)
    require(c["queries"] == q, f"causal-count: {c['queries']} queries recorded, the formula "
            f"gives {q}")
    require(c["max_length"] == n, f"causal-count: length {c['max_length']} recorded, the "
            f"formula gives {n}")
    require(c["outputs"] == q * n, "causal-count: outputs ≠ queries × length")
    require(c["p2_queries"] == p2_count(d, H0), "causal-count: P2's count misstated")
    r = run_of(checks, c["run"], "causal-count")
    require(r.get("learner") == "causal" and r.get("dim") == d and
            r.get("params", {}).get("H0") == H0 and r["params"].get("mode") == mode and
            r["params"].get("residual") is residual,
            "causal-count: the run is not a causal run at these sizes")
    tr = r.get("transcript")
    listed(tr, "causal-count run transcript")
    require(len(tr) == q and all(isinstance(e, dict) and len(e.get("tokens", ())) == n
                                 for e in tr),
            f"causal-count: the run's transcript is not {q} queries of length {n}")
    return (f"causal d={d} H0={H0} {mode}{' residual' if residual else ''}: {q} queries of "
            f"length {n} ({q * n} outputs) against P2's {p2_count(d, H0)} on the same model; "
            f"the run's transcript recounted")


def check_causal_twin(c, checks=()):
    """Both models reproduce every recorded output of the d² basis queries; canonical forms
    differ; and on the distinguishing query their outputs differ."""
    only(c, ("kind", "dim", "H0", "U", "X", "first", "second", "transcript", "distinguishing"),
         "causal-twin")
    d = integer(c["dim"], "causal-twin.dim", 2, 8)
    H0 = integer(c["H0"], "causal-twin.H0", 2, 8)
    U = matrix(c["U"], "causal-twin.U", d, d)
    X = matrix(c["X"], "causal-twin.X", d, d)
    a = causal_model(c["first"], d, "causal-twin.first", H0)
    b = causal_model(c["second"], d, "causal-twin.second", H0)
    require(canonical(*a) != canonical(*b), "causal-twin: the two models are the same model")
    basis = schedule_queries(U, X, H0, "slopes", False)      # the d² basis families
    n = length(H0, "copy-count", False)
    want = [[q[0]] + [q[1]] * (n - 1) for q in basis]
    tr = c["transcript"]
    listed(tr, "causal-twin.transcript")
    require(len(tr) == d * d, "causal-twin: not the d² basis queries")
    for k, entry in enumerate(tr):
        only(entry, ("tokens", "answer"), f"causal-twin.transcript[{k}]")
        require(entry["tokens"] == [[_fmt(x) for x in t] for t in want[k]],
                f"causal-twin.transcript[{k}]: not basis query {k}")
        listed(entry["answer"], f"causal-twin.transcript[{k}].answer", n)
        answers = [element(e, f"causal-twin.transcript[{k}].answer[{p}]")
                   for p, e in enumerate(entry["answer"])]
        require(len(answers) == n, f"causal-twin.transcript[{k}]: not {n} outputs")
        for what, m in (("first", a), ("second", b)):
            for p, (got, ans) in enumerate(zip(outputs(m, want[k]), answers)):
                require(same_element(got, ans), f"causal-twin: the {what} model does not give "
                        f"output {p + 1} of basis query {k}")
    dq = c["distinguishing"]
    listed(dq, "causal-twin.distinguishing", 16)
    from .qt import tokens_of
    toks = tokens_of(dq, d, "causal-twin.distinguishing")
    require(any(not same_element(x, y) for x, y in zip(outputs(a, toks), outputs(b, toks))),
            "causal-twin: the models agree on the distinguishing query")
    return (f"d={d}, H={H0}: two causal models with different canonical forms give the same "
            f"{d * d * n} outputs on all {d * d} basis queries (length {n}) and differ on a "
            f"query with {len({tuple(t) for t in toks})} distinct tokens: the basis queries "
            f"alone do not determine the model; matching queries are needed")


def _fmt(q):
    return f"{q.numerator}" if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


# ------------------------------------------------------------------ the claims' sizes
def _runs(checks):
    return [c for c in checks if isinstance(c, dict) and c.get("kind") == "run"]


def _run_is(r, d, H0, mode, residual, slopes):
    p = r.get("params", {})
    return (r.get("learner") == "causal" and r.get("dim") == d and "model" in r and
            p.get("H0") == H0 and p.get("mode") == mode and p.get("residual") is residual and
            p.get("slopes") == slopes)


def params_causal_count(p, checks):
    """Per (d, H), in order, a plain causal run of P2's families and one of the residue
    schedule (each with its true model), one count per run and a causal design at H₀ = H;
    and the twin at its (d, H)."""
    require(set(p) == {"d,H", "twin d,H"}, "params: expected {d,H; twin d,H}")
    grid = [(d, H, m) for d, H in p["d,H"] for m in ("copy-count", "residue")]
    runs = _runs(checks)
    require(len(runs) == len(grid) and all(_run_is(r, d, H, m, False, [])
                                           for r, (d, H, m) in zip(runs, grid)),
            "params: the runs are not a P2-family and a residue causal run per (d, H), in order")
    index = [k for k, c in enumerate(checks) if isinstance(c, dict) and c.get("kind") == "run"]
    counts = [c for c in checks if isinstance(c, dict) and c.get("kind") == "causal-count"]
    require([c.get("run") for c in counts] == index, "params: count k does not refer to run k")
    designs = [(c.get("dim"), c.get("H0")) for c in checks
               if isinstance(c, dict) and c.get("kind") == "causal-design"]
    require(designs == [tuple(x) for x in p["d,H"]],
            "params: not one causal design per (d, H), at H0 = H, in order")
    twins = [c for c in checks if isinstance(c, dict) and c.get("kind") == "causal-twin"]
    require(len(twins) == 1 and [twins[0].get("dim"), twins[0].get("H0")] == p["twin d,H"],
            "params: one causal twin at the twin's (d, H)")


def params_alibi(p, checks):
    """One run (with its true model) per shared-slope (d, H, s), then per distinct-slope
    (d, slopes), in order, each recorded with its known slopes."""
    require(set(p) == {"shared d,H,slope", "distinct d,slopes"}, "params: expected the shared "
            "and distinct slope grids")
    want = [(d, H, "copy-count", [s]) for d, H, s in p["shared d,H,slope"]] + \
        [(d, len(sl), "slopes", sl) for d, sl in p["distinct d,slopes"]]
    runs = _runs(checks)
    require(len(runs) == len(want) == len(checks) and
            all(_run_is(r, d, H, m, False, sl) for r, (d, H, m, sl) in zip(runs, want)),
            "params: the runs are not one ALiBi run per grid point, in order")


def params_residual(p, checks):
    """One residual run (with its true model) per (d, H), then per (d, H, shared slope)."""
    require(set(p) == {"d,H", "alibi d,H,slope"}, "params: expected {d,H; alibi d,H,slope}")
    want = [(d, H, []) for d, H in p["d,H"]] + [(d, H, [s]) for d, H, s in p["alibi d,H,slope"]]
    runs = _runs(checks)
    require(len(runs) == len(want) == len(checks) and
            all(_run_is(r, d, H, "copy-count", True, sl) for r, (d, H, sl) in zip(runs, want)),
            "params: the runs are not one residual run per grid point, in order")


#: claim id → its sizes check (added to :data:`.claims.PARAMS`)
PARAMS = {"causal-count": params_causal_count, "alibi": params_alibi,
          "residual": params_residual}


# ------------------------------------------------------------------ Theorem A for decoders
def check_causal_design(c, checks=()):
    """Theorem A with one causal query per family (docs/decoders.md §6): M canonicalised by
    (W, slope), one shared slope at most, H its canonical heads, L = H + H₀; the points
    distinct, γ = d − 1 and β = d² − 1 derived from the design's definition, n > γ + (L−1)β;
    every query rebuilt ([e_i], then [x(λ) − u(λ), x(λ) × (length − 1)] with length ≥ L, one
    more with a residual) and every recorded output M's exactly in Q(t)."""
    from .design import DESIGNS, MAX_POWER_BITS, _u, _x, beta, gamma
    only(c, ("kind", "design", "dim", "H0", "points", "length", "model", "answers"),
         "causal-design")
    require(string(c["design"], "causal-design.design") in DESIGNS,
            "causal-design: unknown design")
    d = integer(c["dim"], "causal-design.dim", 1, 16)
    H0 = integer(c["H0"], "causal-design.H0", 1, 8)
    M = causal_model(c["model"], d, "causal-design.model", 8)
    kept, w = canonical(*M)
    H = len(kept)
    slopes = {s for _, s, _ in kept}
    require(len(slopes) <= 1, "causal-design: the design covers one shared slope, not "
            "distinct slopes")
    L = H + H0
    lams = [rat(p, f"causal-design.points[{k}]")
            for k, p in enumerate(listed(c["points"], "causal-design.points", 4096))]
    require(len(set(lams)) == len(lams), "causal-design: a repeated point λ")
    bits = max((lam.numerator.bit_length() + lam.denominator.bit_length() for lam in lams),
               default=0)
    require((d * d - 1) * bits <= MAX_POWER_BITS, "causal-design: a point too large, refused")
    g, b, n = gamma(d), beta(d), len(lams)
    require(n > g + (L - 1) * b, f"causal-design: {n} families, but Theorem A needs n > γ + "
            f"(L−1)β = {g + (L - 1) * b}")
    length_ = integer(c["length"], "causal-design.length", 1, 64)
    need = L + (1 if w is not None else 0)
    require(length_ >= need, f"causal-design: queries of length {length_}, but Theorem A with "
            f"one causal query per family needs {need}")
    expected = [[[Fraction(int(i == j)) for j in range(d)]] for i in range(d)]
    for lam in lams:
        u, x = _u(lam, d), _x(lam, d)
        expected.append([[p - q for p, q in zip(x, u)]] + [list(x)] * (length_ - 1))
    answers = listed(c["answers"], "causal-design.answers")
    require(len(answers) == len(expected), f"causal-design: {len(answers)} answers for "
            f"{len(expected)} rebuilt queries")
    n_out = 0
    for k, (q, ans) in enumerate(zip(expected, answers)):
        listed(ans, f"causal-design.answers[{k}]")
        require(len(ans) == len(q), f"causal-design: answer {k} has {len(ans)} outputs for "
                f"{len(q)} positions")
        for p, (got, a) in enumerate(zip(outputs(M, q), ans)):
            require(same_element(got, element(a, f"causal-design.answers[{k}][{p}]")),
                    f"causal-design: M does not give output {p + 1} of query {k} exactly")
        n_out += len(ans)
    return (f"causal design d={d} H={H} H0={H0}: {n} distinct points > γ + (L−1)β = "
            f"{g} + {L - 1}·{b} (γ = d−1, β = d²−1 derived); {len(expected)} queries of length "
            f"≤ {length_} rebuilt, {n_out} outputs M's exactly in Q(t) — every causal oracle "
            f"with ≤ H0 heads giving them is M (Theorem A, one query per family)")


def params_causal_certify(p, checks):
    """A stand-alone causal design certificate: one causal-design record, its d, H, H₀."""
    require(len(checks) == 1 and checks[0].get("kind") == "causal-design",
            "params: exactly one causal-design record")
    rec = checks[0]
    require(set(p) == {"dim", "H", "H0"} and p["dim"] == rec.get("dim") and
            p["H0"] == rec.get("H0"), "params: expected {dim, H, H0} of the record")
    M = causal_model(rec.get("model"), p["dim"], "causal-design.model", 8)
    require(p["H"] == len(canonical(*M)[0]), "params: H is not M's canonical head count")


PARAMS["causal-certify"] = params_causal_certify


#: the decoder claims' tables of records (added to :data:`.claims.RECORDS`): kind → how many
#: records of that kind the sizes imply, exactly
RECORDS = {
    "causal-count": lambda p: {"run": 2 * len(p["d,H"]), "causal-count": 2 * len(p["d,H"]),
                               "causal-design": len(p["d,H"]), "causal-twin": 1},
    "alibi": lambda p: {"run": len(p["shared d,H,slope"]) + len(p["distinct d,slopes"])},
    "residual": lambda p: {"run": len(p["d,H"]) + len(p["alibi d,H,slope"])},
    "causal-certify": lambda p: {"causal-design": 1},
}
