"""The claims a certificate may name, their references and statements, the sizes their
checks must cover, and the sympy records written for the reader."""

from __future__ import annotations

from fractions import Fraction

from .decoder import PARAMS as DECODER_PARAMS
from .decoder import RECORDS as DECODER_RECORDS
from .noisy_multi import params_p2_approx
from .noisy_single import params_p1_t61
from .transformer import params_p1_transformer, params_p2_transformer
from .qt import element, read_canonical, same_element
from .parse import heads, multiset, rat, require, same_json

FORMAT = "exactattn-certificate"
VERSION = 1

#: claim id -> (reference, statement, kinds that its certificate must contain)
CLAIMS = {
    "P1-T4.1": ("P1 Thm 4.1",
                "a single head (W, v) is learned exactly from d²+d value queries of length ≤ 2",
                {"count", "run"}),
    "P1-T5.1": ("P1 Thm 5.1",
                "low rank: exact skeleton with d+r(2d−r) queries (rank revealed with ≤ 2r+1 "
                "more); P1's nuclear-norm baseline from O(rd) projections, success rate against m",
                {"count", "run"}),
    "P1-P7.1": ("P1 Prop 7.1",
                "multi-head parameters are not identifiable: (W, v1+v2), (W, v1)+(W, v2) and "
                "+(W', 0) are one function; the learner returns one canonical form",
                {"same-function", "run"}),
    "P2-rational": ("P2 copy-count interpolation",
                    "G(m) = K + Σ c_h/(1+m z_h) is type (H,H), poles −1/z_h, residues c_h/z_h; "
                    "2H+1 samples determine it (det ≠ 0)",
                    {"determinant", "copy-count", "rational-form"}),
    "P2-count": ("P2 query count",
                 "multi-head learning uses exactly 4Hd²−2H+1 queries of length ≤ 2H+1 "
                 "(H0 for a bound H0 ≥ H)",
                 {"count", "count-derivation", "count-fit", "run"}),
    "P2-prob1": ("P2 probability one",
                 "the bad set is a proper algebraic set (measure zero); Pr[fail] ≤ D/|S| for "
                 "entries from S; every failure lies in the bad set",
                 {"bad-set"}),
    "P2-canonical": ("P2 canonical heads",
                     "heads with equal W merge (v summed), zero-sum groups drop; the learner "
                     "returns exactly this canonical form",
                     {"run", "same-function", "count"}),
    "P2-nonunique": ("P2 probability one (non-uniqueness lemma)",
                     "a two-head model can give exactly the answers of a one-head model on the "
                     "whole schedule from (U, X) and differ elsewhere: identifiability holds "
                     "with probability one, not always",
                     {"non-unique", "run"}),
    # a user's own run (`exactattn learn ... --certificate FILE`)
    "run": ("docs/design.md §8",
            "consistency-and-genericity certificate of one exact learner run: the transcript is the "
            "learner's schedule, the recovered model reproduces every answer, and the draw is "
            "generic for it",
            {"run"}),
    # approximate-oracle claims: re-derived by rational
    # interval arithmetic (checker/interval.py)
    "P1-T6.1": ("P1 Thm 6.1",
                "answers within ±τ: d²+d queries of length ≤ 2 give ‖Ŵ−W‖_F ≤ ε_W, ‖v̂−v‖ ≤ ε_v "
                "with τ = O(min{μ, ε_v/√d, μ ε_W/(B²d)}); error linear in τ",
                {"noisy-single-head"}),
    "P2-approx": ("P2 approximate-oracle bound",
                  "answers within ±τ: multi-head parameter error ≤ C·τ·(1+o(1)) as τ → 0, with "
                  "the model- and query-dependent C computed (and attained)",
                  {"noisy-multi-head"}),
    # one-layer Transformer claims: exact in Q(t), ReLU signs
    # certified by interval arithmetic (checker/transformer.py)
    "P1-transformer": ("P1 one-layer reduction",
                       "a one-head Transformer with a bias-free ReLU FFN is recovered up to "
                       "functional equivalence from antisymmetric and length-1 queries",
                       {"run", "transformer", "transformer-condition"}),
    "P2-transformer": ("P2 Transformer extension",
                       "a one-layer Transformer with a bias-free ReLU FFN is recovered up to "
                       "functional equivalence: exact agreement on the transcript and on fresh "
                       "sequences", {"run", "transformer", "transformer-condition"}),
    # beyond the papers (docs/design.md §10)
    "floor": ("beyond the papers: dimension floor",
              "certified: the answers of every exact schedule here (rebuilt from the recorded "
              "draw) have a Jacobian of full rank H(d²+d) modulo p (multi-head low rank: rank "
              "H(r(2d−r)+d) over the factors Q, K, v); argued, not proved: H(d²+d) real-valued "
              "answers are necessary for a learner exactly correct on an open set of models "
              "whose queries depend continuously on earlier answers",
              {"floor"}),
    "economy-count": ("beyond the papers: economy schedule",
                      "exact canonical heads from 1+2Hd+(d−1)(1+Hd+H(H−1)/2) queries (H ≤ d, H "
                      "known); adaptive H* costs 2(H0−H) more; counts derived from the block "
                      "structure",
                      {"economy-count", "run"}),
    "economy-prob1": ("beyond the papers: economy genericity",
                      "the economy schedule's generic run (exact, structure count) fails only on "
                      "a proper algebraic set: Pr ≤ D/min|S|; every failure is named, no wrong "
                      "model", {"economy-prob1"}),
    "P2-unique": ("beyond the papers: certified uniqueness",
                  "the answer fibre of a P2 transcript (every canonical model with ≤ H0 heads "
                  "giving its answers) is computed exactly; extra copy-count families shrink it "
                  "to one model, the oracle, with no probability or genericity theorem",
                  {"fibre"}),
    # beyond the papers: decoder oracles (docs/decoders.md)
    "causal-count": ("beyond the papers: causal decoder oracles",
                     "with a causal mask and an output at every position one query is a whole "
                     "copy-count family: exact canonical heads from 2d²−1 queries of length "
                     "2H0+1 (d²+d−1 with residue matching; P2: 4H0d²−2H0+1); the d² basis "
                     "queries alone do not suffice",
                     {"run", "causal-count", "causal-twin", "causal-design"}),
    "alibi": ("beyond the papers: ALiBi position biases",
              "known rational ALiBi slopes: one shared slope replaces the copy count k by "
              "S_k = Σ_{i≤k} e^{is}; distinct slopes label the heads (d² queries of length "
              "2^{H+1}−1); recovered exactly",
              {"run"}),
    "residual": ("beyond the papers: residual read-out",
                 "a residual read-out w·x_p is recovered with the heads from the same 2d²−1 "
                 "causal queries, one position longer (2H0+2)",
                 {"run"}),
    # a user's own run with --certify-unique (beyond P2, answer fibres)
    "unique": ("docs/design.md §11",
               "certified uniqueness of one exact run: every canonical model with at most H0 "
               "heads that gives the transcript's answers is the recovered model (the answer "
               "fibre, re-derived from the transcript)",
               {"fibre"}),
    "design-unique": ("beyond the papers: Theorem A",
                      "every oracle with ≤ H0 heads that gives M's answers on the moment-curve "
                      "design ((L−1)(d²−1)+d families of L−1 samples, L = H + H0, and d "
                      "single-token queries) is M: the result of every schedule certified in "
                      "polynomial time, the lemma's twin returned as itself",
                      {"design"}),
    "query-complexity": ("beyond the papers: query complexity",
                         "certified recovery of H heads in dimension d, told H0 ≥ H: at least "
                         "the floor H(d²+d) queries for every learner with real answers (Sard), "
                         "at most the design learner's d + (2H0−1)((H+H0−1)(d²−1)+d), each run "
                         "certified by Theorem A; exactly 2H at d = 1",
                         {"design"}),
    # a user's own `exactattn certify --certificate FILE` (Theorem A, docs/design.md §12)
    "certify": ("Theorem A (docs/design.md §12)",
                "Theorem A: every model with at most H0 heads (real parameters) that gives M's "
                "answers on the moment-curve design (d single-token queries and n > γ + (L−1)β "
                "families of L−1 samples, L = H + H0) has M's canonical form",
                {"design"}),
    # a user's own `exactattn learn causal --design-certificate FILE` (docs/decoders.md §6)
    "causal-certify": ("Theorem A (docs/decoders.md §6)",
                       "Theorem A for decoder oracles: every causal model with at most H0 heads "
                       "(and M's slope and read-out) that gives M's outputs on the d "
                       "single-token queries and one causal query per moment-curve family "
                       "(n > γ + (L−1)β, L = H + H0) has M's canonical form",
                       {"causal-design"}),
}


#: the claims of a user's own certificate (`learn --certificate`, `learn --certify-unique
#: --certificate`, `certify --certificate`): no registered claim, no sizes
USER_CLAIMS = ("run", "unique", "certify", "causal-certify")

#: query-complexity's quick grid: d ≤ 3, 1 ≤ H ≤ H0 ≤ 3
_QC_QUICK = [[d, H, H0] for d in (1, 2, 3) for H0 in (1, 2, 3) for H in range(1, H0 + 1)]

#: the checker's own copy of every claim's sizes, as its certificate records them (the claim's
#: quick and full parameters without seeds): a certificate must carry exactly the parameters of
#: the size it is labelled with (a test compares this copy with the library's, so they cannot
#: drift).  ``run`` (a user's own run) has no sizes.
SIZES = {
    "P1-T4.1": {"quick": {"d": [1, 2, 3]}, "full": {"d": [1, 2, 3, 4, 5, 6]}},
    "P1-T5.1": {"quick": {"d": [3, 4], "r": [1, 2]}, "full": {"d": [4, 8], "r": [1, 2, 3]}},
    "P1-P7.1": {"quick": {"d": 2, "N": [1, 2, 3]}, "full": {"d": 3, "N": [1, 2, 3, 4]}},
    "P2-rational": {"quick": {"H": [1, 2, 3], "d": 2}, "full": {"H": [1, 2, 3, 4], "d": 2}},
    "P2-count": {"quick": {"d": [1, 2, 3], "H": [1, 2], "d,H extra": [[6, 1]],
                           "enumerated d,H0": [40, 3]},
                 "full": {"d": [1, 2, 3, 4, 5], "H": [1, 2, 3, 4],
                          "d,H extra": [[6, 1], [8, 1], [10, 1]], "enumerated d,H0": [40, 10]}},
    "P2-prob1": {"quick": {"d,H,box,trials": [[1, 3, 40, 400], [2, 3, 910, 400]]},
                 "full": {"d,H,box,trials": [[1, 3, 40, 10000], [2, 2, 240, 10000],
                                             [2, 3, 910, 10000]]}},
    "P2-canonical": {"quick": {"d": 2, "H0": [2, 5]}, "full": {"d": 3, "H0": [2, 5, 6]}},
    "P2-nonunique": {"quick": {"d": 2, "H0": 2, "box": 1000},
                     "full": {"d": 2, "H0": 2, "box": 1000}},
    "floor": {"quick": {"d,H": [[2, 1], [2, 2], [3, 2]],
                        "schedules": ["P1", "P2", "economy", "adaptive"],
                        "low-rank d,H,r": [[3, 2, 1]]},
              "full": {"d,H": [[2, 1], [3, 1], [2, 2], [3, 2], [4, 3], [8, 4]],
                       "schedules": ["P1", "P2", "economy", "adaptive"],
                       "low-rank d,H,r": [[4, 2, 1], [4, 3, 2], [6, 3, 2]]}},
    "economy-count": {"quick": {"d,H": [[2, 2], [3, 2], [4, 3], [8, 4], [2, 3]]},
                      "full": {"d,H": [[2, 2], [3, 2], [3, 3], [4, 2], [4, 3], [5, 3], [6, 4],
                                       [8, 4], [2, 3], [3, 4], [10, 5]]}},
    "P2-unique": {"quick": {"d,H,H0": [[1, 1, 3], [2, 1, 2], [2, 2, 3], [3, 2, 2]],
                            "lemma d,H0,box": [2, 2, 1000], "lemma seed": 3,
                            "prob1 d,H,draws": [[1, 3, 5], [2, 3, 5]]},
                  "full": {"d,H,H0": [[1, 1, 3], [1, 2, 3], [2, 1, 2], [2, 1, 3], [2, 2, 3],
                                      [2, 3, 3], [3, 1, 2], [3, 2, 2], [3, 3, 3]],
                           "lemma d,H0,box": [2, 2, 1000], "lemma seed": 3,
                           "prob1 d,H,draws": [[1, 3, 50], [2, 2, 50], [2, 3, 50]]}},
    "design-unique": {"quick": {"d,H,H0": [[2, 1, 2], [3, 1, 3], [3, 2, 3], [4, 2, 3]],
                                "schedules": ["p2", "economy", "adaptive"],
                                "lemma d,H0,box": [2, 2, 1000], "lemma seed": 3,
                                "search d,H,H0": [[2, 1, 2]]},
                      "full": {"d,H,H0": [[2, 1, 2], [2, 1, 3], [3, 1, 3], [3, 2, 3], [4, 2, 3],
                                          [4, 3, 5], [8, 2, 4], [8, 4, 6]],
                               "schedules": ["p2", "economy", "adaptive"],
                               "lemma d,H0,box": [2, 2, 1000], "lemma seed": 3,
                               "search d,H,H0": [[1, 1, 3], [2, 1, 2], [2, 2, 3]]}},
    "query-complexity": {"quick": {"d,H,H0": _QC_QUICK},
                         "full": {"d,H,H0": _QC_QUICK + [[4, 1, 1], [4, 2, 2], [4, 2, 3],
                                                         [4, 3, 3]]}},
    "P1-T6.1": {"quick": {"d": [2, 3], "taus": "1e-4,1e-8,1e-12,1e-16",
                          "modes": ["adversarial", "random", "worst-case"], "dps": 40},
                "full": {"d": [2, 4, 8], "taus": "1e-3,1e-6,1e-10,1e-15,1e-20,1e-25",
                         "modes": ["adversarial", "random", "worst-case"], "dps": 50}},
    "P2-approx": {"quick": {"dH": [[2, 2]], "taus": "1e-12,1e-18,1e-24",
                            "modes": ["adversarial", "worst-case"],
                            "ball_taus": "1e-24,1e-18,1e-14,1e-12,1e-10,1e-9,1e-8,1e-7,1e-6,"
                                         "1e-5,1e-4,1e-3", "dps": 30},
                  "full": {"dH": [[2, 2], [3, 2], [3, 3]],
                           "taus": "1e-10,1e-15,1e-20,1e-25,1e-30",
                           "ball_taus": "1e-40,1e-30,1e-25,1e-20,1e-16,1e-14,1e-12,1e-11,"
                                        "1e-10,1e-9,1e-8,1e-7,1e-6,1e-5,1e-4,1e-3",
                           "modes": ["adversarial", "random", "worst-case"], "dps": 50}},
    "P1-transformer": {"quick": {"d": [1, 2, 3], "k": [2, 4], "fresh": 100},
                       "full": {"d": [1, 2, 3, 4, 5], "k": [2, 4, 6], "fresh": 100}},
    "P2-transformer": {"quick": {"d": [2, 3], "H": [1, 2], "k": [2], "fresh": 100},
                       "full": {"d": [2, 3, 4], "H": [1, 2, 3], "k": [2, 4], "fresh": 100}},
    "economy-prob1": {"quick": {"d,H,box,trials": [[2, 2, 1000, 40]]},
                      "full": {"d,H,box,trials": [[2, 2, 1000, 200], [3, 2, 1000, 100],
                                                  [2, 2, 40, 200]]}},
    "causal-count": {"quick": {"d,H": [[2, 1], [2, 2], [3, 2], [4, 3]], "twin d,H": [2, 2]},
                     "full": {"d,H": [[2, 1], [2, 2], [3, 2], [4, 3], [6, 3], [8, 4]],
                              "twin d,H": [3, 2]}},
    "alibi": {"quick": {"shared d,H,slope": [[2, 2, "1/2"], [3, 2, "1/4"]],
                        "distinct d,slopes": [[2, ["1/2", "1/4"]], [2, ["1/2", "1/4", "1/8"]]]},
              "full": {"shared d,H,slope": [[2, 2, "1/2"], [3, 2, "1/4"], [4, 3, "1/2"]],
                       "distinct d,slopes": [[2, ["1/2", "1/4"]], [3, ["1/2", "1/4", "1/8"]],
                                             [4, ["1/2", "1/4"]]]}},
    "residual": {"quick": {"d,H": [[2, 1], [3, 2]], "alibi d,H,slope": [[2, 2, "1/2"]]},
                 "full": {"d,H": [[2, 1], [3, 2], [4, 3]],
                          "alibi d,H,slope": [[2, 2, "1/2"], [3, 2, "1/4"]]}},
}

#: the Monte Carlo of each sampled claim: its first seed (trial k has seed first + k, for every
#: k below the size's draw count) and its family-wise level α
MONTE_CARLO = {"P2-prob1": {"first_seed": 0, "alpha": Fraction(1, 1000)},
               "economy-prob1": {"first_seed": 1000, "alpha": Fraction(1, 1000)}}


def check_size(cid, size, params):
    """The certificate's parameters are exactly those of the size it is labelled with."""
    table = SIZES.get(cid)
    if table is None:
        require(cid in USER_CLAIMS, f"{cid}: the checker has no sizes for this claim")
        return
    require(size in table, f"size must be one of {sorted(table)}")
    require(same_json(params, table[size]), f"params are not the {size} sizes of {cid} "
            f"(the checker's copy: {json_text(table[size])})")


def json_text(x):
    """Short text of a size table for a message."""
    import json
    return json.dumps(x, ensure_ascii=False)[:200]


def _monte_carlo_of(cid, first, alpha, where):
    mc = MONTE_CARLO[cid]
    require(type(first) is int and first == mc["first_seed"],
            f"params: {where}: the Monte Carlo's first seed must be {mc['first_seed']}")
    require(rat(alpha, f"{where}.alpha") == mc["alpha"],
            f"params: {where}: α must be {mc['alpha']}")


def _of(checks, kind):
    return [c for c in checks if isinstance(c, dict) and c.get("kind") == kind]


def _int_list(x, where):
    require(isinstance(x, list) and x and all(type(a) is int and 1 <= a <= 64 for a in x),
            f"params: {where} must be a non-empty list of small positive integers")
    return x


def _covers(counts, formula, grid, key):
    """The counts of `formula` are exactly one per grid point, in order."""
    got = [tuple(c["params"].get(k) for k in key) for c in counts
           if c.get("formula") == formula and isinstance(c.get("params"), dict)]
    require(got == grid, f"params: the {formula} counts do not cover the grid {grid}")


def _runs_have_models(runs, n, learner):
    require(len(runs) == n and all(r.get("learner") == learner and "model" in r for r in runs),
            f"params: expected {n} {learner} runs, each with its true model")


def params_p1_t41(p, checks):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d"}, "params: expected {d}")
    ds = _int_list(p["d"], "d")
    _covers(_of(checks, "count"), "single-head", [(d,) for d in ds], ("d",))
    _runs_have_models(_of(checks, "run"), len(ds), "single-head")


def params_p1_t51(p, checks):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d", "r"}, "params: expected {d, r}")
    grid = [(d, r) for d in _int_list(p["d"], "d") for r in _int_list(p["r"], "r") if r <= d]
    for name in ("low-rank-skeleton", "low-rank-revealing"):
        _covers(_of(checks, "count"), name, grid, ("d", "r"))
    _runs_have_models(_of(checks, "run"), 2 * len(grid), "low-rank")


def params_p1_p71(p, checks, symbolic):
    """The certificate's sizes are exactly those its checks cover; A, B, C are three different
    raw parameterisations with 1, 2, 3 heads, and the learner ran on each."""
    require(set(p) == {"d", "N"}, "params: expected {d, N}")
    sf = _of(checks, "same-function")
    require(len(sf) == 1 and sf[0].get("dim") == p["d"], "params: one same-function check at d")
    models = sf[0].get("models")
    require(isinstance(models, dict) and {"A", "B", "C"} <= set(models) and
            [len(models[k]) if isinstance(models[k], list) else None for k in "ABC"] == [1, 2, 3],
            "params: models A, B, C with 1, 2, 3 heads")
    runs = _of(checks, "run")
    require([r.get("params", {}).get("H0") for r in runs] == [1, 2, 3] and
            all(r.get("model") == models[k] for r, k in zip(runs, "ABC")),
            "params: one multi-head run per model A, B, C with H0 = 1, 2, 3")
    _recovered_are_the_runs(sf[0], runs, [f"recovered from {k}" for k in "ABC"])
    require(len(symbolic) == 1 and symbolic[0].get("token_lengths") == _int_list(p["N"], "N"),
            "params: N ≠ the token lengths of the symbolic proof")


def _recovered_are_the_runs(sf, runs, names):
    """The same-function record's recovered entries are exactly `names`, entry k the heads run
    k recovered (compared as canonical forms: a re-parameterisation is not what was recovered)."""
    models, d = sf["models"], sf.get("dim")
    require(sorted(k for k in models if k.startswith("recovered")) == sorted(names),
            f"params: the recovered models are not {', '.join(names)}")
    for name, r in zip(names, runs):
        require(read_canonical(models[name], d, f"same-function.{name}") ==
                read_canonical(r.get("recovered"), d, "run.recovered"),
                f"params: {name!r} is not the heads its run recovered")


def params_p2_rational(p, checks, symbolic):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"H", "d"}, "params: expected {H, d}")
    Hs = _int_list(p["H"], "H")
    require([c.get("H") for c in _of(checks, "determinant")] == Hs, "params: H ≠ determinant H")
    require([c.get("H") for c in _of(checks, "rational-form")] == Hs, "params: H ≠ rational-form H")
    require([_canonical_heads(c) for c in _of(checks, "copy-count")] == Hs,
            "params: H ≠ the copy-count models' canonical heads")
    require([s.get("H") for s in symbolic] == Hs, "params: H ≠ symbolic H")
    require(all(s.get("d") == p["d"] for s in symbolic), "params: d ≠ the symbolic proof's d")


def _canonical_heads(record, key="model"):
    """The number of canonical heads of a record's true model (its H), 0 without one."""
    data = record.get(key)
    return 0 if data is None else len(read_canonical(data, record.get("dim"), f"{key}"))


def _runs_match_grid(checks, grid):
    """Run k is the multi-head run at grid point k = (d, H, H0): its dimension d, H0, a true model
    with exactly H canonical heads; and count k refers to it."""
    index = [i for i, c in enumerate(checks) if isinstance(c, dict) and c.get("kind") == "run"]
    got = [(checks[i].get("dim"), _canonical_heads(checks[i]), checks[i]["params"].get("H0"))
           for i in index]
    require(got == grid, "params: the runs are not one per (d, H, H0) of the grid, in order, "
            "each with a true model of exactly H canonical heads")
    counts = [c for c in _of(checks, "count") if c.get("formula") == "multi-head"]
    require([c.get("run") for c in counts] == index,
            "params: count k does not refer to run k of the grid")


def _p2_count_grid(p):
    """The (d, H, H0) of P2-count's sizes, in order: H0 = H and H + 1 for every (d, H)."""
    grid = [(d, H, H0) for d in p["d"] for H in p["H"] for H0 in (H, H + 1)]
    return grid + [(d, H, H0) for d, H in p["d,H extra"] for H0 in (H, H + 1)]


def after_p2_count(p, checks):
    """After every record is checked on its own: the runs are tied to the grid's (d, H, H0)."""
    _runs_match_grid(checks, _p2_count_grid(p))


def params_p2_count(p, checks, symbolic):
    """The certificate's sizes are exactly those its checks cover: one multi-head run per
    (d, H, H0), tied to its H by its true model, one count per run, and the one symbolic
    record."""
    require(len(symbolic) == 1, f"params: P2-count records exactly one symbolic result, not "
            f"{len(symbolic)}")
    require(set(p) == {"d", "H", "d,H extra", "enumerated d,H0"},
            "params: expected {d, H, d,H extra, enumerated d,H0}")
    extra = p["d,H extra"]
    require(isinstance(extra, list) and all(isinstance(x, list) and len(x) == 2 for x in extra),
            "params: d,H extra must be a list of [d, H]")
    _int_list(p["d"], "d"), _int_list(p["H"], "H")
    grid = _p2_count_grid(p)
    _covers(_of(checks, "count"), "multi-head", [(d, H0) for d, _, H0 in grid], ("d", "H0"))
    _runs_have_models(_of(checks, "run"), len(grid), "multi-head")
    der = _of(checks, "count-derivation")
    require(len(der) == 1, "params: one count derivation")
    en = (der[0].get("enumerated") or {}) if isinstance(der[0], dict) else {}
    require(_int_list(p["enumerated d,H0"], "enumerated d,H0") == [en.get("d"), en.get("H0")],
            "params: the enumerated schedules do not cover d, H0 ≤ enumerated d,H0")
    fits = _of(checks, "count-fit")
    require([f.get("quantity") for f in fits] == ["queries", "max_length"],
            "params: the count fits are not one of the queries, then one of the lengths")
    points = {(d, H0) for d, _, H0 in grid}
    for f in fits:
        got = [tuple(x[:2]) if isinstance(x, list) else None for x in f.get("points") or ()]
        require(len(got) == len(points) and set(got) == set(points),
                f"params: the {f['quantity']} fit's points are not each measured (d, H0) of "
                f"the grid exactly once")


def params_p2_prob1(p, checks):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d,H,box,trials"}, "params: expected {d,H,box,trials}")
    want = p["d,H,box,trials"]
    got = [[c.get("dim"), c.get("H"), c.get("box"), (c.get("monte_carlo") or {}).get("trials")]
           for c in _of(checks, "bad-set")]
    require(got == want, "params: configurations ≠ the bad-set checks")
    require(all(rat(c.get("bound"), "bound") <= Fraction(1, 20) for c in _of(checks, "bad-set")),
            "params: every configuration must have D/|S| ≤ 1/20 (a bound that can be violated)")
    for k, c in enumerate(_of(checks, "bad-set")):
        mc = c.get("monte_carlo") or {}
        _monte_carlo_of("P2-prob1", mc.get("first_seed"), mc.get("alpha"),
                        f"configuration {k}")


def _raw_model(sf, d):
    """The same-function record's "raw" model, which must be genuinely non-canonical: a group
    of heads with equal W and a non-zero v-sum (merged) and one with a zero v-sum (dropped)."""
    models = sf.get("models")
    require(isinstance(models, dict) and "raw" in models,
            "params: the same-function record has no \"raw\" model")
    raw = heads(models["raw"], d, "same-function.raw")
    groups = {}
    for W, v in raw:
        groups.setdefault(W, []).append(v)
    sums = [(len(vs), any(map(sum, zip(*vs)))) for vs in groups.values()]
    require(any(n >= 2 and nonzero for n, nonzero in sums) and
            any(not nonzero for _, nonzero in sums),
            "params: the raw model is not non-canonical (it needs heads with equal W that merge "
            "and a group with zero v-sum that drops)")
    return multiset(raw)


def params_p2_canonical(p, checks):
    """The certificate's sizes are exactly those its checks cover; every run's true model is
    the same-function record's raw, non-canonical model (the learner is shown merging and
    dropping)."""
    require(set(p) == {"d", "H0"}, "params: expected {d, H0}")
    H0s = _int_list(p["H0"], "H0")
    runs = _of(checks, "run")
    require([r.get("params", {}).get("H0") for r in runs] == H0s and
            all(r.get("dim") == p["d"] and "model" in r for r in runs), "params: d, H0")
    sf = _of(checks, "same-function")
    require(len(sf) == 1, "params: one same-function record")
    raw = _raw_model(sf[0], p["d"])
    require(all(multiset(heads(r["model"], p["d"], "run.model")) == raw for r in runs),
            "params: a run's true model is not the raw (non-canonical) model of the "
            "same-function record")
    require([c["params"] for c in _of(checks, "count")] == [{"d": p["d"], "H0": min(H0s)}],
            "params: the count is not that of the smallest H0")
    _recovered_are_the_runs(sf[0], runs, [f"recovered H0={h}" for h in H0s])


def params_floor(p, checks):
    """Every (d, H) × schedule (P1 only for H = 1) has one floor check, in order, then every
    low-rank (d, H, r)."""
    require(set(p) == {"d,H", "schedules", "low-rank d,H,r"},
            "params: expected {d,H, schedules, low-rank d,H,r}")
    want = [[d, H, s, None] for d, H in p["d,H"] for s in p["schedules"] if s != "P1" or H == 1]
    want += [[d, H, "low-rank", r] for d, H, r in p["low-rank d,H,r"]]
    got = [[c.get("dim"), _canonical_heads(c), c.get("schedule"), c.get("rank")]
           for c in _of(checks, "floor")]
    require(got == want, "params: the floor checks do not cover (d, H) × schedules and the "
                         "low-rank (d, H, r)")


def params_economy_count(p, checks):
    """Every (d, H) has an economy (H0 = H) and an adaptive (H0 = 2H) count, in order."""
    require(set(p) == {"d,H"}, "params: expected {d,H}")
    want = [[d, H, v, H if v == "economy" else 2 * H] for d, H in p["d,H"]
            for v in ("economy", "adaptive")]
    got = [[c["params"].get("d"), c["params"].get("H"), c.get("variant"), c["params"].get("H0")]
           for c in _of(checks, "economy-count")]
    require(got == want, "params: the economy counts do not cover (d, H) × {economy, adaptive}")
    runs = _of(checks, "run")
    require([[r.get("dim"), r.get("learner")] for r in runs] ==
            [[d, f"multi-head-{v}"] for d, _, v, _ in want] and all("model" in r for r in runs),
            "params: one run per count, each of its variant and with its true model")



def params_economy_prob1(p, checks):
    """One economy-prob1 record per (d, H, box, trials), in order."""
    require(set(p) == {"d,H,box,trials"}, "params: expected {d,H,box,trials}")
    got = [[c.get("dim"), c.get("heads"), c.get("box"), c.get("trials")]
           for c in _of(checks, "economy-prob1")]
    require(got == [list(x) for x in p["d,H,box,trials"]] and len(got) == len(checks),
            "params: the Monte Carlo records do not cover (d, H, box, trials)")
    for k, c in enumerate(checks):
        _monte_carlo_of("economy-prob1", c.get("first_seed"), c.get("alpha"), f"configuration {k}")


def params_p2_nonunique(p, checks):
    """The lemma at d = 2, H0 = 2, with the learner's run on the two-head oracle."""
    require(set(p) == {"d", "H0", "box"} and p["d"] == 2 and p["H0"] == 2,
            "params: expected d=2, H0=2 and the box")
    nu, runs = _of(checks, "non-unique"), _of(checks, "run")
    require(len(nu) == 1 and len(runs) == 1, "params: one non-unique record and one run")


def params_run(p, checks):
    """A stand-alone run certificate: one run record, its learner and dimension as params."""
    require(len(checks) == 1 and checks[0].get("kind") == "run", "params: exactly one run record")
    require(set(p) == {"learner", "dim"} and p["learner"] == checks[0].get("learner") and
            p["dim"] == checks[0].get("dim"), "params: expected {learner, dim} of the run")


def params_unique(p, checks):
    """A stand-alone uniqueness certificate: one fibre record, its dimension as params."""
    require(len(checks) == 1 and checks[0].get("kind") == "fibre" and
            checks[0].get("model") is not None,
            "params: exactly one fibre record, with the model it certifies unique")
    require(set(p) == {"learner", "dim"} and p["learner"] == "multi-head" and
            p["dim"] == checks[0].get("dim"), "params: expected {learner: multi-head, dim}")


def params_certify(p, checks):
    """A stand-alone design certificate: one design record; params are its d, H₀ and the
    canonical head count H of its M (counted on the canonical form, as the record's check)."""
    require(len(checks) == 1 and checks[0].get("kind") == "design",
            "params: exactly one design record")
    rec = checks[0]
    require(set(p) == {"dim", "H", "H0"} and p["dim"] == rec.get("dim") and
            p["H0"] == rec.get("H0"), "params: expected {dim, H, H0} of the design record")
    require(p["H"] == len(read_canonical(rec.get("model"), p["dim"], "design.model")),
            "params: H is not the number of canonical heads of the design's M")


def params_design_unique(p, checks):
    """One design record per grid point (d, H, H0), in order, then the lemma's two (d = 2,
    H0 = 2: the one-head model and its two-head twin, different true models); every record
    carries its true model (whose canonical form the record's check compares with M)."""
    grid = [tuple(g) for g in p["d,H,H0"]]
    d, H0, _ = p["lemma d,H0,box"]
    recs = _design_records(checks, grid + [(d, 1, H0), (d, 2, H0)], "design-unique",
                           "and the lemma's two")
    require(recs[-1]["truth"] != recs[-2]["truth"], "params: the lemma's two true models are "
            "the same model")


def _design_records(checks, want, cid, also=""):
    """The design records of a claim, each with its true model, whose (d, H, H0) — H counted
    on the canonical form — are exactly `want`, once each, in order."""
    recs = _of(checks, "design")
    require(len(recs) == len(checks), f"params: {cid} holds design records only")
    got = [(r.get("dim"), len(read_canonical(r.get("model"), r.get("dim"), "design.model")),
            r.get("H0")) for r in recs]
    require(got == want, f"params: the design records do not cover the grid "
            f"{[g for g in want]}{' ' + also if also else ''}, once each, in order")
    require(all("truth" in r for r in recs), "params: every design record needs its true model")
    return recs


def params_query_complexity(p, checks):
    """One design record per grid point (d, H, H0), in order, each with its true model, each
    the design learner's transcript: 2H0 − 1 samples per family and Theorem A's least number
    of families (γ + (L − 1)β + 1, derived here), so that its count d + (2H0 − 1)·n is the
    certified upper bound of its row."""
    grid = [tuple(g) for g in p["d,H,H0"]]
    recs = _design_records(checks, grid, "query-complexity")
    for (d, H, H0), r in zip(grid, recs):
        least = (d - 1) + (H + H0 - 1) * (d * d - 1) + 1
        require(r.get("samples") == 2 * H0 - 1 and len(r.get("points") or ()) == least,
                f"params: the record at (d, H, H0) = ({d}, {H}, {H0}) is not the design "
                f"learner's transcript ({2 * H0 - 1} samples per family, {least} families)")


def params_p2_unique(p, checks):
    """One fibre record per grid point (d, H, H0) with an H-head true model, certified unique;
    then the lemma's two (the one-head model and its two-head twin: the same schedule answers,
    each certified unique); then every P2-prob1 draw (H0 = H), in order."""
    fib = _of(checks, "fibre")
    require(len(fib) == len(checks), "params: P2-unique holds fibre records only")
    want = [(d, H0, H, True) for d, H, H0 in p["d,H,H0"]]
    d, H0, _ = p["lemma d,H0,box"]
    want += [(d, H0, 1, True), (d, H0, 2, True)]
    want += [(d, H, H, None) for d, H, n in p["prob1 d,H,draws"] for _ in range(n)]
    got = [(c.get("dim"), c.get("H0"), _canonical_heads(c, "truth"),
            True if c.get("model") is not None else None) for c in fib]
    require(len(got) == len(want) and all(
        g[:3] == w[:3] and (w[3] is None or g[3]) for g, w in zip(got, want)),
        "params: the fibre records do not cover the grid, the lemma and the P2-prob1 draws "
        "in order, each with a true model of exactly H canonical heads (each grid and lemma "
        "record certified unique)")
    k = len(p["d,H,H0"])
    one, two = fib[k], fib[k + 1]
    n = 1 + 2 * H0 * (2 * d * d - 1)                      # the P2 schedule's length
    require(one["U"] == two["U"] and one["X"] == two["X"] and len(one["transcript"]) >= n
            and len(two["transcript"]) >= n and all(
                a["tokens"] == b["tokens"] and same_element(element(a["answer"], "lemma"),
                                                            element(b["answer"], "lemma"))
                for a, b in zip(one["transcript"][:n], two["transcript"][:n])),
            "params: the lemma's two records do not share their draw and their schedule "
            "answers (equal in Q(t))")


PARAMS = {"run": params_run, "certify": params_certify, "design-unique": params_design_unique,
          "query-complexity": params_query_complexity,
          "P2-unique": params_p2_unique, "floor": params_floor, "economy-count": params_economy_count,
          "P1-T4.1": params_p1_t41, "P1-T5.1": params_p1_t51, "P1-P7.1": params_p1_p71,
          "P2-rational": params_p2_rational, "P2-count": params_p2_count,
          "P2-prob1": params_p2_prob1, "P2-canonical": params_p2_canonical,
          "P2-nonunique": params_p2_nonunique, "economy-prob1": params_economy_prob1,
          "unique": params_unique, "P1-T6.1": params_p1_t61,
          "P1-transformer": params_p1_transformer, "P2-transformer": params_p2_transformer,
          "P2-approx": params_p2_approx}


PARAMS.update(DECODER_PARAMS)


def _n(x):
    return len(x)


def _t51_grid(p):
    return sum(r <= d for d in p["d"] for r in p["r"])


def _unique_records(p):
    return len(p["d,H,H0"]) + 2 + sum(n for _, _, n in p["prob1 d,H,draws"])


#: per claim, its table of records: kind → how many records of that kind its sizes imply
#: (exactly; every kind not listed is refused).  With the claim's params rule above, which
#: ties each record to its grid point in order (on canonical forms), no record can be
#: dropped, duplicated or replaced by a record of another kind or another grid point.
RECORDS = {
    "P1-T4.1": lambda p: {"run": _n(p["d"]), "count": _n(p["d"])},
    "P1-T5.1": lambda p: {"run": 2 * _t51_grid(p), "count": 2 * _t51_grid(p)},
    "P1-P7.1": lambda p: {"same-function": 1, "run": 3},
    "P2-rational": lambda p: {"determinant": _n(p["H"]), "copy-count": _n(p["H"]),
                              "rational-form": _n(p["H"])},
    "P2-count": lambda p: {"run": _n(_p2_count_grid(p)), "count": _n(_p2_count_grid(p)),
                           "count-derivation": 1, "count-fit": 2},
    "P2-prob1": lambda p: {"bad-set": _n(p["d,H,box,trials"])},
    "P2-canonical": lambda p: {"run": _n(p["H0"]), "same-function": 1, "count": 1},
    "P2-nonunique": lambda p: {"non-unique": 1, "run": 1},
    "P2-unique": lambda p: {"fibre": _unique_records(p)},
    "run": lambda p: {"run": 1},
    "unique": lambda p: {"fibre": 1},
    "certify": lambda p: {"design": 1},
    "design-unique": lambda p: {"design": _n(p["d,H,H0"]) + 2},
    "query-complexity": lambda p: {"design": _n(p["d,H,H0"])},
    "P1-T6.1": lambda p: {"noisy-single-head": _n(p["d"]) * _n(p["modes"])},
    "P2-approx": lambda p: {"noisy-multi-head": _n(p["dH"])},
    "P1-transformer": lambda p: {"run": _n(p["d"]) * _n(p["k"]),
                                 "transformer": _n(p["d"]) * _n(p["k"]),
                                 "transformer-condition": 1},
    "P2-transformer": lambda p: {"run": _n(p["d"]) * _n(p["H"]) * _n(p["k"]),
                                 "transformer": _n(p["d"]) * _n(p["H"]) * _n(p["k"]),
                                 "transformer-condition": 1},
    "floor": lambda p: {"floor": sum(s != "P1" or H == 1 for _, H in p["d,H"]
                                     for s in p["schedules"]) + _n(p["low-rank d,H,r"])},
    "economy-count": lambda p: {"economy-count": 2 * _n(p["d,H"]), "run": 2 * _n(p["d,H"])},
    "economy-prob1": lambda p: {"economy-prob1": _n(p["d,H,box,trials"])},
}


RECORDS.update(DECODER_RECORDS)


def check_records(cid, p, checks):
    """The certificate holds exactly the records of its claim's table (:data:`RECORDS`): each
    kind the number of times its sizes imply, no other kind."""
    want = RECORDS[cid](p)
    got = {}
    for c in checks:
        got[c.get("kind")] = got.get(c.get("kind"), 0) + 1
    for kind in sorted(set(want) | set(got), key=str):
        require(got.get(kind, 0) == want.get(kind, 0), f"records: {got.get(kind, 0)} "
                f"{kind!s:.30} record(s), but the sizes imply exactly {want.get(kind, 0)}")


#: cross-record checks run after every record has been checked on its own (so that a forged
#: record is named by its own check first)
AFTER = {"P2-count": after_p2_count}

#: the fields of the sympy records each claim writes
SYMBOLIC_KEYS = {
    "P1-P7.1": {"all_lengths_merge", "all_lengths_zero_head", "token_lengths", "identities"},
    "P2-rational": {"H", "d", "copy_count_identity_symbolic_m", "copy_count_identity_token_lists",
                    "G0_is_v_dot_x", "lowest_terms", "residues_c_over_z", "limit_at_infinity_is_K",
                    "determinant_equals_closed_form"},
    "P2-count": {"count_fit_equals_formula", "derived_count_equals_formula"},
}


def check_symbolic(cid, symbolic):
    """The sympy results recorded for the reader: the expected fields, every boolean true (not
    re-proved here; the numeric kinds spot-check them)."""
    require(isinstance(symbolic, list) and all(isinstance(e, dict) for e in symbolic),
            "symbolic: a list of records")
    keys = SYMBOLIC_KEYS.get(cid)
    require(keys is not None or not symbolic, f"symbolic: {cid} records no symbolic results")
    for e in symbolic:
        require(set(e) == keys, f"symbolic: fields {sorted(set(e) ^ keys)} unexpected or missing")
        for k, v in e.items():
            if isinstance(v, bool):
                require(v, f"symbolic: {k} is false")
