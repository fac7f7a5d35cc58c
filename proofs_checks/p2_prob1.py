"""P2-prob1: the multi-head learner succeeds with probability one over its random query vectors,
and with probability ≥ 1 − D/|S| when their entries are drawn uniformly from a finite set S
(P2, probability one; docs/design.md §4.3 "Genericity", §8).

For each configuration (d, H, box), S = {−box … box}, with H ≥ 3 included (from H = 3 the
unique-matching polynomials add factors of their own: at d = 2, H = 3, D = 91 with them and
55 without) and boxes chosen so that D/|S| ≤ 0.05:

1. the genericity polynomials of docs/design.md §4.3 for a seeded canonical model — det U,
   det X, pole separation, visibility, unique matching — are built exactly
   (:mod:`exactattn.analysis.genericity`), each shown nonzero at an exact witness.  *Proved*:
   the bad set is the zero set of their product, a proper algebraic set (its polynomial is
   witnessed nonzero), so it has measure zero under any absolutely continuous distribution of
   the query vectors — the continuous "probability one"; and for entries uniform on S,
   Pr[bad set] ≤ D/|S| (Schwartz–Zippel, D the total degree of the distinct factors); where the
   box is small enough the exact Pr[bad set] is computed by enumeration.
2. *Sampled*: ``trials`` Monte Carlo draws, trial k with seed first_seed + k; each is a pure
   function :func:`trial` (params, seed) → record, the learner drawing its vectors with the
   standard library's ``random.Random(seed)``.  Every run either returns exactly the
   canonical form or a named failure; at a draw in the bad set it may also return a model
   that reproduces every answer (``wrong-model``; the non-uniqueness lemma of
   docs/evidence.md shows this can happen).  Checked: every failure lies in the bad set; the
   failure and bad-set counts are consistent with Pr ≤ D/|S| by an exact one-sided binomial
   test at level α/m, α = 1/1000 family-wise and m = 2 × (number of configurations)
   (Bonferroni); the Clopper–Pearson upper limits at the same confidence are reported, and
   so is each test's power: the smallest failure rate it would detect with power 0.9
   (:func:`.checker.binomial.detectable_rate`, exact) and the smallest rate of failures
   outside the bad set caught with power 0.9 (:func:`.checker.binomial.caught_rate`).
   *Conditioned*: a uniform draw almost never lands in the matching-only part of the bad set,
   so for d ≥ 2, H ≥ 3 a few draws are put there (:func:`conditioned_draw`: the model chosen
   after the draw so that one matching condition s1[a] + s2[b] = s1[c] + s2[c] holds and no
   pole or visibility condition fails; at 10⁴ trials every second one with the residues moved
   too); the learner runs on each and the checker predicts its outcome.
3. The certificate records the seeds, the outcome of every trial that did not recover, the
   tallies, and full consistency-and-genericity certificates (``run`` records) for a sample of the
   successes.  The checker re-draws every trial, decides bad-set membership itself and
   predicts every outcome from the learner's rules.
"""

from __future__ import annotations

from fractions import Fraction

from exactattn.analysis import genericity as G
from exactattn.errors import LearningFailure
from exactattn.models.attention import random_multi_head
from exactattn.oracles.oracle import Oracle
from exactattn.sweep import run_trials

from .certificates import heads_json, new_certificate, poly_json, rational, vector_json
from .common import run_record, same_canonical
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "trial", "analyse", "binomial_upper_limit", "ALPHA", "ENUM_LIMIT"]

#: family-wise significance of the Monte Carlo tests (Bonferroni over all of them)
ALPHA = Fraction(1, 1000)
#: exact enumeration of the box when it has at most this many points (the checker's limit)
ENUM_LIMIT = 30_000
#: successes kept as full consistency-and-genericity certificates, per configuration
SAMPLE = 2
#: where the Monte Carlo trials run (exactattn.sweep executors: "pool" or "serial")
EXECUTOR = "pool"


def trial(params: dict, seed: int, keep_run: bool = False) -> dict:
    """One Monte Carlo trial as a pure function of (params, seed): the multi-head learner told
    H, drawing its bases from {−box…box} with random.Random(seed), on the oracle
    params["model"].  Returns {"seed", "outcome"} (outcome "recovered", "wrong-model" or the
    learner's failure name) and, with `keep_run` and a success, the run record.  The trial
    studies P2's schedule itself, so the learner runs without validation queries
    (``validate=0``): the probability-one statement is about the schedule's answers alone."""
    from exactattn.learners.multi_head import learn_multi_head
    model, d, H, box = params["model"], params["dim"], params["H"], params["box"]
    try:
        res = learn_multi_head(Oracle(model), d, heads=H, box=box, seed=seed, validate=0)
    except LearningFailure as e:
        return {"seed": seed, "outcome": e.reason}
    rec = {"seed": seed, "outcome": "recovered" if same_canonical(model, res.heads)
           else "wrong-model"}
    if keep_run and rec["outcome"] == "recovered":
        rec["run"] = run_record(res, model)
    return rec


def analyse(d, H, box, seed):
    """Polynomials, factors, D, bound, exact bad-set probability for one configuration."""
    model = random_multi_head(d, H, seed=seed).canonical()
    heads = [(h.W, h.v) for h in model.heads]
    polys = G.bad_set_polynomials(heads, d)
    factors, factorisations = G.distinct_factors(polys)
    D = G.total_degree(factors)
    exact = G.exact_bad_probability(factors, box, limit=ENUM_LIMIT)
    return model, polys, factors, factorisations, D, G.schwartz_zippel_bound(D, box), exact


def binomial_upper_limit(n: int, k: int, level: Fraction, bits: int = 24) -> Fraction:
    """The Clopper–Pearson upper limit at confidence 1 − level, rounded up to a multiple of
    2^−bits: the least such p with P_p[X ≤ k] ≤ level (exact bisection; X ~ Bin(n, p))."""
    from .checker.binomial import lower_tail
    if k >= n:
        return Fraction(1)
    lo, hi = 0, 2 ** bits            # P_{lo}[X ≤ k] > level ≥ P_{hi}[X ≤ k]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if lower_tail(n, k, Fraction(mid, 2 ** bits)) <= level:
            hi = mid
        else:
            lo = mid
    return Fraction(hi, 2 ** bits)


def conditioned_count(trials: int) -> tuple:
    """(draws, residues): the draws conditioned into the matching-only part of the bad set per
    configuration with d ≥ 2 and H ≥ 3, and whether every second one moves the residues too
    (:func:`conditioned_draw`).  A residue-moved draw costs the learner about 13 s (it tries
    its six prime sizes before naming the ambiguity), so those come only with 10⁴ trials:
    4 score-only draws below 10⁴ trials (under a second), 10 alternating at 10⁴."""
    return (10, True) if trials >= 10000 else (4, False)


def _fam_vec(rows, idx):
    return [sum((rows[i][k] for i in idx), Fraction(0)) for k in range(len(rows[0]))]


def _sc(W, u, x):
    return sum((u[i] * Fraction(W[i][j]) * x[j] for i in range(len(u)) for j in range(len(x))),
               Fraction(0))


def _violated(heads, U, X):
    """The genericity conditions of docs/design.md §4.3 that fail at (U, X) for canonical
    `heads` (exact, directly; the names of :func:`exactattn.analysis.genericity.bad_set_polynomials`)."""
    import itertools
    H, out, seen_u = len(heads), [], []
    for name, M in (("det U", U), ("det X", X)):
        if _det(M) == 0:
            out.append(name)
    for fam in G.schedule_families(len(U)):
        u, x = _fam_vec(U, fam.u), _fam_vec(X, fam.x)
        s = [_sc(W, u, x) for W, _ in heads]
        out += [f"poles {fam.name} heads {a + 1},{b + 1}"
                for a, b in itertools.combinations(range(H), 2) if s[a] == s[b]]
        if fam.u not in seen_u:
            seen_u.append(fam.u)
            out += [f"visible head {a + 1} at u{fam.u}" for a, (_, v) in enumerate(heads)
                    if sum(Fraction(p) * q for p, q in zip(v, u)) == 0]
        if fam.matches:
            (u1, x1), (u2, x2) = fam.matches
            U1, X1, U2, X2 = _fam_vec(U, u1), _fam_vec(X, x1), _fam_vec(U, u2), _fam_vec(X, x2)
            s1 = [_sc(W, U1, X1) for W, _ in heads]
            s2 = [_sc(W, U2, X2) for W, _ in heads]
            out += [f"matching {fam.name} ({a + 1},{b + 1})~{c + 1}"
                    for a, b, c in itertools.product(range(H), repeat=3)
                    if (a, b) != (c, c) and s1[a] + s2[b] == s1[c] + s2[c]]
    return out


def _det(M):
    """Exact determinant by expansion along the first row (d ≤ 3 here)."""
    if len(M) == 1:
        return M[0][0]
    return sum(((-1) ** j * M[0][j] * _det([r[:j] + r[j + 1:] for r in M[1:]])
                for j in range(len(M))), Fraction(0))


def conditioned_draw(model, d, box, seed, pattern, residue=False):
    """(model', condition) or None: the draw of `seed` kept, the model changed after it — one
    entry of W_c moved so that the matching condition s1[a] + s2[b] = s1[c] + s2[c] of one
    matching family holds (a, b, c = `pattern`, distinct heads) — and accepted only when every
    violated condition of the canonical model' at the draw is a matching condition.  With
    `residue`, in a family I(u1 + u_i, x1) one entry of v_c moves too, so that the residues
    agree as well (c_a(u1) + c_b(u_i) = c_c(u1 + u_i)): the scores alone no longer separate
    the pairings."""
    import itertools
    from exactattn.learners.p2.recovery import draw_bases
    from exactattn.models.attention import MultiHeadAttention
    U, X = draw_bases(seed, d, box)
    U = [[Fraction(x) for x in r] for r in U]
    X = [[Fraction(x) for x in r] for r in X]
    heads = [([list(map(Fraction, r)) for r in h.W], list(map(Fraction, h.v))) for h in model.heads]
    a, b, c = pattern
    fams = [f for f in G.schedule_families(d) if f.matches]
    if residue:
        fams = [f for f in fams if f.matches[0][0] != f.matches[1][0]]
    for fam in fams[seed % len(fams):] + fams[:seed % len(fams)]:
        (u1, x1), (u2, x2) = fam.matches
        U1, X1, U2, X2 = _fam_vec(U, u1), _fam_vec(X, x1), _fam_vec(U, u2), _fam_vec(X, x2)
        gap = (_sc(heads[a][0], U1, X1) + _sc(heads[b][0], U2, X2)
               - _sc(heads[c][0], U1, X1) - _sc(heads[c][0], U2, X2))
        for k, l in itertools.product(range(d), repeat=2):
            coef = U1[k] * X1[l] + U2[k] * X2[l]
            if coef == 0:
                continue
            W = [list(r) for r in heads[c][0]]
            W[k][l] += gap / coef
            v = list(heads[c][1])
            if residue:
                tot = [p + q for p, q in zip(U1, U2)]
                if tot[k] == 0:
                    continue
                want = (sum(p * q for p, q in zip(heads[a][1], U1)) +
                        sum(p * q for p, q in zip(heads[b][1], U2)))
                v[k] += (want - sum(p * q for p, q in zip(v, tot))) / tot[k]
            new = MultiHeadAttention([((W, v) if h == c else heads[h])
                                      for h in range(len(heads))]).canonical()
            if len(new.heads) != len(heads):
                continue
            viol = _violated([(h.W, h.v) for h in new.heads], U, X)
            if viol and all(v.startswith("matching") for v in viol):
                return new, viol[0]
    return None


def _conditioned(d, H, box, seed, trials, model, count, residues=False):
    """`count` draws conditioned into the matching-only part of the bad set (seeds after the
    Monte Carlo's), each with the learner's outcome."""
    import itertools
    if d < 2 or H < 3:
        return []
    out, patterns = [], list(itertools.permutations(range(3)))
    s = seed + trials
    while len(out) < count and s < seed + trials + 20 * count:
        got = conditioned_draw(model, d, box, s, patterns[len(out) % len(patterns)],
                               residue=residues and len(out) % 2 == 1)
        if got is not None:
            new, condition = got
            rec = trial({"model": new, "dim": d, "H": H, "box": box}, s)
            out.append({"seed": s, "model": heads_json(new.heads), "condition": condition,
                        "outcome": rec["outcome"]})
        s += 1
    return out


def _config(verdict, cert, d, H, box, trials, seed, tests, conditioned=(0, False)):
    from exactattn.learners.p2.recovery import draw_bases
    from .checker.binomial import consistent_with_bound, caught_sentence, power_sentence
    model, polys, factors, factorisations, D, bound, exact = analyse(d, H, box, seed)
    params = {"model": model, "dim": d, "H": H, "box": box}
    ints = [G.IntPoly(f) for f in factors]
    records, sample, bad, outside, named = [], [], 0, 0, {}
    # the Monte Carlo runs on the sweep machinery's process pool (every core), each trial a
    # pure function of (params, seed): the records are those of a serial run
    outcomes = run_trials("proofs_checks.p2_prob1:trial", [params], range(seed, seed + trials),
                          executor=EXECUTOR)
    for rec in outcomes:
        U, X = draw_bases(rec["seed"], d, box)
        in_bad = any(f.vanishes(G.point_from_bases(U, X)) for f in ints)
        bad += in_bad
        if rec["outcome"] != "recovered":
            records.append([rec["seed"], rec["outcome"]])
            named[rec["outcome"]] = named.get(rec["outcome"], 0) + 1
            outside += not in_bad
        elif len(sample) < SAMPLE and not in_bad:       # a recorded sample of the successes
            kept = trial(params, rec["seed"], keep_run=True)
            sample.append({"seed": kept["seed"], "run": kept["run"]})
    failures = len(records)
    level = ALPHA / tests
    fu, bu = binomial_upper_limit(trials, failures, level), binomial_upper_limit(trials, bad, level)
    witness = _witness(polys, sample, seed)
    values = [G.evaluate(p.poly, witness) for p in polys]
    tag = f"d={d} H={H} |S|={2 * box + 1}"
    verdict.expect(all(v != 0 for v in values) and bound <= Fraction(1, 20),
                   f"{tag}: {len(polys)} genericity polynomials, {len(factors)} distinct factors, "
                   f"all nonzero at an exact witness ⇒ the bad set is a proper algebraic set "
                   f"(measure zero for absolutely continuous draws); D={D}, Schwartz–Zippel "
                   f"Pr[bad] ≤ D/|S| = {bound} ≈ {_dec(bound)} (≤ 0.05)",
                   f"{tag}: a genericity polynomial vanishes at the witness, or D/|S| = {bound} "
                   f"> 0.05")
    if exact is not None:
        verdict.expect(exact <= bound, f"{tag}: exact Pr[bad set] = {exact} ≈ {_dec(exact)} "
                       f"≤ {bound} (enumerated {(2 * box + 1) ** (2 * d * d)} points)",
                       f"{tag}: exact Pr[bad set] {exact} exceeds the bound {bound}")
    ok_f = consistent_with_bound(trials, failures, bound, level)
    ok_b = consistent_with_bound(trials, bad, bound, level)
    detail = ", ".join(f"{k} {v}" for k, v in sorted(named.items())) or "none"
    verdict.expect(outside == 0 and ok_f and ok_b,
                   f"{tag}: Monte Carlo (sampled) {trials} draws: {bad} in the bad set, "
                   f"{failures} failures ({detail}), all in the bad set; consistent with "
                   f"Pr ≤ {_dec(bound)} (exact binomial test, level {level}; it "
                   f"{power_sentence(trials, bound, level)}; {caught_sentence(trials)}); "
                   f"Clopper–Pearson "
                   f"upper limits at 1 − {level}: Pr[fail] ≤ {_dec(fu, 4)}, Pr[bad] ≤ {_dec(bu, 4)}",
                   f"{tag}: {outside} failures outside the bad set; {failures} failures / "
                   f"{bad} bad draws of {trials} vs bound {bound} at level {level}")
    cond = _conditioned(d, H, box, seed, trials, model, *conditioned)
    if d >= 2 and H >= 3:
        tally = {}
        for e in cond:
            tally[e["outcome"]] = tally.get(e["outcome"], 0) + 1
        verdict.expect(len(cond) == conditioned[0],
                       f"{tag}: {len(cond)} draws conditioned into the matching-only part of "
                       f"the bad set (the model moved after the draw so that one matching "
                       f"condition holds, no pole or visibility condition failing): outcomes "
                       f"{', '.join(f'{k} {v}' for k, v in sorted(tally.items()))} (the "
                       f"checker predicts each from the learner's rules)",
                       f"{tag}: {len(cond)} of {conditioned[0]} conditioned draws constructed, "
                       f"outcomes {tally}")
    gens = polys[0].poly.gens
    cert["checks"].append({
        "kind": "bad-set", "dim": d, "H": H, "model": heads_json(model.heads),
        "factors": [poly_json(f, gens) for f in factors],
        "polynomials": [{"name": p.name, "condition": p.condition, "polynomial": poly_json(p.poly, gens),
                         "constant": rational(c), "factorisation": [[i, m] for i, m in parts],
                         "value": rational(v)}
                        for p, (c, parts), v in zip(polys, factorisations, values)],
        "D": D, "box": box, "S": 2 * box + 1, "bound": rational(bound),
        "witness": vector_json(witness),
        "exact_probability": rational(exact) if exact is not None else None,
        "monte_carlo": {"learner": {"heads": H, "box": box}, "first_seed": seed,
                        "trials": trials, "outcomes": records, "bad": bad, "failures": failures,
                        "alpha": rational(ALPHA), "tests": tests,
                        "failure_upper_limit": rational(fu), "bad_upper_limit": rational(bu),
                        "sample": sample, "conditioned": cond}})


def _witness(polys, sample, seed):
    preferred = None
    if sample:
        v = sample[0]["run"]["vectors"]
        preferred = [Fraction(x) for r in v["U"] + v["X"] for x in r]
    return G.find_witness(polys, preferred=preferred, box=5, seed=seed)


def _dec(q: Fraction, places: int = 3) -> str:
    """q rounded to `places` decimals, for display (exact integer arithmetic, no float)."""
    n = round(q * 10 ** places)
    sign, n = ("-" if n < 0 else ""), abs(n)
    return f"{sign}{n // 10 ** places}.{n % 10 ** places:0{places}d}"


def run(params) -> Verdict:
    """Every configuration [d, H, box, trials] of params["d,H,box,trials"]."""
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    configs = params["d,H,box,trials"]
    for d, H, box, trials in configs:
        _config(verdict, cert, d, H, box, trials, params["seed"], 2 * len(configs),
                conditioned_count(trials))
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="P2-prob1",
    reference="P2 probability one",
    statement="the bad set is a proper algebraic set (measure zero); Pr[fail] ≤ D/|S| for "
              "entries from S; every failure lies in the bad set",
    sizes={"quick": {"d,H,box,trials": [[1, 3, 40, 400], [2, 3, 910, 400]], "seed": 0},
           "full": {"d,H,box,trials": [[1, 3, 40, 10000], [2, 2, 240, 10000],
                                       [2, 3, 910, 10000]],
                    "seed": 0}},
    run=run,
    needs=("exactattn.learners.multi_head",)))
