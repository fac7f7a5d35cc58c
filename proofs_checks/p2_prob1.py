"""P2-prob1: the multi-head learner succeeds with probability one over its random query vectors,
and with probability ≥ 1 − D/|S| when their entries are drawn uniformly from a finite set S;
every failure is detected (P2, probability one; docs/design.md §4.3 "Genericity").

For each configuration (d, H, box) with S = {−box … box}:

1. the bad-set polynomials of docs/design.md §4.3 for a seeded canonical model — det U, det X, pole
   separation, visibility, unique matching — are built exactly (:mod:`exactattn.analysis.genericity`),
   each shown nonzero at an exact witness (the learner's own draw when it works);
2. their distinct irreducible factors give D = deg Π factors, so the Schwartz–Zippel lemma
   bounds Pr[fail] ≤ Pr[some factor vanishes] ≤ D/|S|; when |S|^{2d²} is small the exact
   bad-set probability is computed by enumeration and compared with the bound;
3. Monte Carlo with a deliberately small box: the learner (no resampling) is run on many
   seeds.  Every run must either return exactly the canonical form or raise a named
   LearningFailure (no silent wrong answer, no crash); every failure must lie in the bad set;
   and the measured failure rate must be ≤ D/|S| up to a Hoeffding allowance ε,
   2nε² = 69/10 < ln 1000 (a sampling fluctuation, not a violation, with probability < 1/1000).
   The rigorous statement is the combination "failures ⊆ bad set" (checked on every run) and
   "Pr[bad set] ≤ D/|S|" (Schwartz–Zippel; exactly, by enumeration, for small boxes).

The drawn bases U, X of a failed run are read back from the oracle's transcript (the first
query is [x₁]; family I(u_i, x₁) starts with [(x₁+u_i), x₁]; family I(u₁, x_j) with
[(x_j+u₁), x_j] — the docs/design.md §4.3 order), or from the SingularBasis report when the learner
stopped before asking anything.  When the bound D/|S| is ≥ 1 the comparison is vacuous and
the output says so.
"""

from __future__ import annotations

from fractions import Fraction

from exactattn.analysis import genericity as G
from exactattn.errors import LearningFailure, SingularBasis
from exactattn.models.attention import MultiHeadAttention, random_multi_head
from exactattn.oracles.oracle import Oracle

from .certificates import (element_json, heads_json, new_certificate, poly_json, rational,
                           vector_json)
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "bases_from_transcript", "monte_carlo", "analyse"]


def _readback_indices(d: int, H0: int):
    """Transcript positions of [(x₁+u_i), x₁] (i = 1…d) and [(x_j+u₁), x_j] (j = 2…d): the
    m = 1 queries of I(u_i, x₁) and I(u₁, x_j) in the docs/design.md §4.3 order."""
    first_of = lambda fam: 1 + 2 * H0 * fam  # noqa: E731
    return ([first_of(i) for i in range(d)],
            [first_of((2 * d - 1) + 2 * (j - 1) * d) for j in range(1, d)])


def bases_from_transcript(transcript, d: int, H0: int):
    """(U, X, answers) read back from the schedule's queries, or None when the learner stopped
    before asking them; `answers` are the oracle's answers to the read-back queries."""
    u_idx, x_idx = _readback_indices(d, H0)
    if not transcript or max(u_idx + x_idx) >= len(transcript):
        return None
    toks = [[[int(x) for x in t] for t in q] for q, _ in transcript]
    U = [[a - b for a, b in zip(toks[k][0], toks[k][1])] for k in u_idx]
    X = [toks[0][0]] + [toks[k][-1] for k in x_idx]
    return U, X, [transcript[k][1] for k in u_idx + x_idx]


def _trial(model, d, H, box, seed):
    """One learner run: (outcome, U, X, recovered heads or None, singular basis report)."""
    from exactattn.learners.multi_head import learn_multi_head
    oracle = Oracle(model)
    try:
        res = learn_multi_head(oracle, d, heads=H, box=box, seed=seed)
    except SingularBasis as e:
        bases = bases_from_transcript(oracle.transcript, d, H)
        return e.reason, bases, None, e.details
    except LearningFailure as e:
        bases = bases_from_transcript(oracle.transcript, d, H)
        if bases is None:
            raise RuntimeError(f"{e.reason} before the schedule was asked: bases unknown") from e
        return e.reason, bases, None, None
    U, X = [list(map(int, r)) for r in res.extra["U"]], [list(map(int, r)) for r in res.extra["X"]]
    bases = bases_from_transcript(oracle.transcript, d, H)
    if bases is None or bases[:2] != (U, X):
        raise RuntimeError("the transcript does not follow the docs/design.md §4.3 schedule order")
    return "recovered", bases, res.heads, None


def monte_carlo(model, d, H, box, trials, factors, seed0=0):
    """Run the learner `trials` times; classify each run (P2 prob. one, docs/design.md §4.3)."""
    canon = model.head_set()
    ints = [G.IntPoly(f) for f in factors]
    records, silent, outside = [], 0, 0
    for t in range(trials):
        outcome, bases, heads, singular = _trial(model, d, H, box, seed0 + t)
        rec = {"outcome": outcome}
        if bases is not None:
            U, X, answers = bases
            point = [x for r in U for x in r] + [x for r in X for x in r]
            bad = any(f.vanishes(point) for f in ints)
            rec.update({"U": [vector_json(r) for r in U], "X": [vector_json(r) for r in X],
                        "in_bad_set": bad, "answers": [element_json(y) for y in answers]})
        else:
            rows = [[int(Fraction(x)) for x in r] for r in singular["rows"]]
            bad = True
            rec.update({"basis": singular["basis"], "rows": [vector_json(r) for r in rows],
                        "in_bad_set": True})
        if outcome == "recovered":
            if MultiHeadAttention(heads).head_set() != canon:
                silent += 1
                rec["outcome"] = "WRONG"
            rec["recovered"] = heads_json(heads)
        elif not bad:
            outside += 1
        records.append(rec)
    failures = sum(r["outcome"] not in ("recovered", "WRONG") for r in records)
    return records, failures, silent, outside


def analyse(d, H, box, seed):
    """Polynomials, factors, D, bound, exact bad-set probability for one configuration."""
    model = random_multi_head(d, H, seed=seed).canonical()
    heads = [(h.W, h.v) for h in model.heads]
    polys = G.bad_set_polynomials(heads, d)
    factors, factorisations = G.distinct_factors(polys)
    D = G.total_degree(factors)
    limit = 20000
    exact = G.exact_bad_probability(factors, box, limit=limit)
    return model, polys, factors, factorisations, D, G.schwartz_zippel_bound(D, box), exact


def _config(verdict, cert, d, H, box, trials, seed):
    model, polys, factors, factorisations, D, bound, exact = analyse(d, H, box, seed)
    records, failures, silent, outside = monte_carlo(model, d, H, box, trials, factors, seed0=seed)
    first_ok = next((r for r in records if r["outcome"] == "recovered" and not r["in_bad_set"]), None)
    preferred = None
    if first_ok:
        preferred = [Fraction(x) for r in first_ok["U"] + first_ok["X"] for x in r]
    witness = G.find_witness(polys, preferred=preferred, box=max(box, 3), seed=seed)
    values = [G.evaluate(p.poly, witness) for p in polys]
    rate = Fraction(failures, trials)
    tag = f"d={d} H={H} |S|={2 * box + 1}"
    source = " (the learner's own draw)" if witness == preferred else ""
    vacuous = " (vacuous: ≥ 1)" if bound >= 1 else ""
    verdict.expect(all(v != 0 for v in values),
                   f"{tag}: {len(polys)} bad-set polynomials, {len(factors)} distinct factors, "
                   f"all nonzero at an exact witness{source}; D={D}, Schwartz–Zippel bound "
                   f"D/|S| = {bound}{vacuous}",
                   f"{tag}: a bad-set polynomial vanishes at the witness")
    if exact is not None:
        verdict.expect(exact <= bound, f"{tag}: exact Pr[bad set] = {exact} ≈ {_dec(exact)} "
                       f"≤ {bound} (enumerated {(2 * box + 1) ** (2 * d * d)} points)",
                       f"{tag}: exact Pr[bad set] {exact} exceeds the bound {bound}")
    within = rate_within_bound(rate, bound, trials)
    reasons = {}
    for r in records:
        if r["outcome"] not in ("recovered", "WRONG"):
            reasons[r["outcome"]] = reasons.get(r["outcome"], 0) + 1
    named = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
    verdict.expect(silent == 0 and outside == 0 and within,
                   f"{tag}: Monte Carlo {failures}/{trials} failures, rate {_dec(rate)} "
                   f"{'≤' if rate <= bound else '≤ (within the Hoeffding allowance of)'} "
                   f"{_dec(bound)}; every failure named ({named or 'none'}) and inside the bad "
                   f"set; no silent wrong answer",
                   f"{tag}: {silent} silent wrong answers, {outside} failures outside the bad set, "
                   f"rate {rate} vs bound {bound}")
    gens = polys[0].poly.gens
    cert["checks"].append({
        "kind": "bad-set", "dim": d, "model": heads_json(model.heads),
        "factors": [poly_json(f, gens) for f in factors],
        "polynomials": [{"name": p.name, "condition": p.condition, "polynomial": poly_json(p.poly, gens),
                         "constant": rational(c), "factorisation": [[i, m] for i, m in parts],
                         "value": rational(v)}
                        for p, (c, parts), v in zip(polys, factorisations, values)],
        "D": D, "box": box, "S": 2 * box + 1, "bound": rational(bound),
        "witness": vector_json(witness),
        "exact_probability": rational(exact) if exact is not None else None,
        "monte_carlo": {"trials": records, "failures": failures, "rate": rational(rate)}})


#: Hoeffding allowance: 2nε² = HOEFFDING, a rational lower bound for ln 1000, so a learner whose
#: true failure probability is ≤ D/|S| shows a rate above D/|S| + ε with probability < 1/1000.
HOEFFDING = Fraction(69, 10)


def rate_within_bound(rate: Fraction, bound: Fraction, trials: int) -> bool:
    """rate ≤ bound + ε with 2·trials·ε² = 69/10 < ln 1000 (exact rational test)."""
    return rate <= bound or 2 * trials * (rate - bound) ** 2 <= HOEFFDING


def _dec(q: Fraction, places: int = 3) -> str:
    """q rounded to `places` decimals, for display (exact integer arithmetic, no float)."""
    n = round(q * 10 ** places)
    sign, n = ("-" if n < 0 else ""), abs(n)
    return f"{sign}{n // 10 ** places}.{n % 10 ** places:0{places}d}"


def run(params) -> Verdict:
    """Every configuration [d, H, box, trials] of params["d,H,box,trials"]."""
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    for d, H, box, trials in params["d,H,box,trials"]:
        _config(verdict, cert, d, H, box, trials, params["seed"])
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="P2-prob1",
    reference="P2 probability one",
    statement="the bad set is a proper algebraic set: Pr[fail] ≤ D/|S| for entries from S, "
              "and every failure is detected",
    sizes={"quick": {"d,H,box,trials": [[1, 1, 1, 100], [1, 2, 1, 100], [2, 1, 5, 100],
                                        [2, 2, 1, 100]],
                     "seed": 0},
           "full": {"d,H,box,trials": [[1, 1, 1, 200], [1, 2, 1, 200], [2, 1, 5, 200],
                                       [2, 2, 1, 200], [2, 2, 12, 200], [3, 2, 4, 100]],
                    "seed": 0}},
    run=run,
    needs=("exactattn.learners.multi_head",)))
