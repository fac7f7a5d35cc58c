"""Check kind ``bad-set``: the genericity polynomials of the multi-head schedule (P2
probability one), recomputed here, with witnesses, D, the Schwartz–Zippel bound, the exact
bad-set probability where enumeration is small, and the Monte Carlo trials — re-drawn here
from their seeds with the standard library's ``random.Random``, classified here (bad set or
not), their outcomes predicted here from the learner's rules (:mod:`.predict`), a sample of
the successes checked as full consistency-and-genericity certificates (:mod:`.run`), and the failure
rate compared with D/|S| by an exact binomial test with a Bonferroni correction.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

from .binomial import (MAX_TRIALS, caught_sentence, consistent_with_bound, is_least_upper_limit,
                       power_sentence)
from .parse import (field, fmt, heads, integer, listed, matrix, multiset, only, rat, require,
                    same_json, vector)
from .poly import degree, normalise, padd, pconst, peval, pdet, pmul, poly_from, ppow, pscale, pvar
from .predict import OUTCOMES, predict
from .qt import is_canonical
from .run import check_run
from .run_multi_head import families, name as family_name, violations

#: enumerate the box exactly when it has at most this many points (the prover uses the same)
ENUM_LIMIT = 30_000
MAX_DIM, MAX_HEADS = 3, 4


# ------------------------------------------------------------ genericity (docs/design.md §4.3)
def _sym_vec(kind, idx, d, n):
    """u_i (kind 0) or x_j (kind 1) as vectors of polynomials; idx is a tuple of indices."""
    off = 0 if kind == 0 else d * d
    vec = []
    for k in range(d):
        p = {}
        for i in idx:
            p = padd(p, pvar(off + i * d + k, n))
        vec.append(p)
    return vec


def _bilinear(u, M, x):
    out = {}
    for i in range(len(u)):
        for j in range(len(x)):
            if M[i][j]:
                out = padd(out, pscale(pmul(u[i], x[j]), M[i][j]))
    return out


def _linear(v, u):
    out = {}
    for a, p in zip(v, u):
        if a:
            out = padd(out, pscale(p, a))
    return out


def bad_set_polynomials(model, d):
    """The genericity polynomials of docs/design.md §4.3, recomputed here: name -> polynomial in
    the 2d² entries u_{i,k}, x_{j,k} (det U, det X, separated poles, visible heads, unique
    matching in every matching family)."""
    n = 2 * d * d
    H = len(model)
    polys = {"det U": pdet([_sym_vec(0, (i,), d, n) for i in range(d)], n),
             "det X": pdet([_sym_vec(1, (j,), d, n) for j in range(d)], n)}

    def score(h, ui, xj):
        return _bilinear(_sym_vec(0, ui, d, n), model[h][0], _sym_vec(1, xj, d, n))

    seen_u = []
    for ui, xj, match in families(d):
        for a in range(H):
            for b in range(a + 1, H):
                polys[f"poles {family_name(ui, xj)} heads {a + 1},{b + 1}"] = padd(
                    score(a, ui, xj), pscale(score(b, ui, xj), -1))
        if ui not in seen_u:
            seen_u.append(ui)
            for a in range(H):
                polys[f"visible head {a + 1} at {'+'.join(f'u{i + 1}' for i in ui)}"] = \
                    _linear(model[a][1], _sym_vec(0, ui, d, n))
        if match:
            (u1, x1), (u2, x2) = match
            for a, b, cc in itertools.product(range(H), repeat=3):
                if (a, b) == (cc, cc):
                    continue
                p = padd(padd(score(a, u1, x1), score(b, u2, x2)),
                         pscale(padd(score(cc, u1, x1), score(cc, u2, x2)), -1))
                polys[f"matching {family_name(ui, xj)} ({a + 1},{b + 1})~{cc + 1}"] = p
    return polys


def variable_names(d):
    return [f"u{i}_{k}" for i in range(1, d + 1) for k in range(1, d + 1)] + \
           [f"x{j}_{k}" for j in range(1, d + 1) for k in range(1, d + 1)]


def draw(seed, d, box):
    """The learner's draw for `seed` (exactattn's multi-head learner, exact backend):
    rng = random.Random(seed); U rows, then X rows, entries rng.randint(−box, box)."""
    rng = random.Random(seed)
    U = [[Fraction(rng.randint(-box, box)) for _ in range(d)] for _ in range(d)]
    X = [[Fraction(rng.randint(-box, box)) for _ in range(d)] for _ in range(d)]
    return U, X


def _integer_model(model):
    """The model with every W scaled by one common denominator and every v by another: the
    zero tests of the genericity conditions are unchanged, and the arithmetic is integral."""
    lw = math.lcm(*[x.denominator for W, _ in model for r in W for x in r]) if model else 1
    lv = math.lcm(*[x.denominator for _, v in model for x in v]) if model else 1
    return [(tuple(tuple(int(x * lw) for x in r) for r in W), tuple(int(x * lv) for x in v))
            for W, v in model]


def _int_factor(f):
    """A factor with its coefficients scaled to integers (same zero set)."""
    m = math.lcm(*[c.denominator for c in f.values()])
    return [(e, int(c * m)) for e, c in f.items()]


def _vanishes(terms, point):
    total = 0
    for e, c in terms:
        t = c
        for x, k in zip(point, e):
            if k:
                t *= x ** k
        total += t
    return total == 0


# ------------------------------------------------------------ the check
def check_bad_set(c, checks=()):
    """Genericity certificate (P2 probability one, docs/design.md §4.3)."""
    only(c, ("kind", "dim", "H", "model", "factors", "polynomials", "D", "box", "S", "bound",
             "witness", "exact_probability", "monte_carlo"), "bad-set")
    d = integer(c["dim"], "bad-set.dim", 1, MAX_DIM)
    H = integer(c["H"], "bad-set.H", 1, MAX_HEADS)
    model = heads(c["model"], d, "bad-set.model", MAX_HEADS)
    require(len(model) == H, "bad-set: the model does not have H heads")
    require(is_canonical(model), "bad-set: the model is not canonical")
    n = 2 * d * d
    names = variable_names(d)
    recomputed = bad_set_polynomials(model, d)
    factors = [poly_from(f, names, f"bad-set.factors[{k}]")
               for k, f in enumerate(listed(c["factors"], "bad-set.factors", len(recomputed) * 4))]
    require(all(degree(f) >= 1 for f in factors), "bad-set: a factor is constant")
    require(len({tuple(sorted(normalise(f).items())) for f in factors}) == len(factors),
            "bad-set: repeated factor")
    listed_ = listed(c["polynomials"], "bad-set.polynomials", len(recomputed))
    got_names = [field(e, "name", f"bad-set.polynomials[{k}]") for k, e in enumerate(listed_)]
    require(sorted(got_names) == sorted(recomputed), "bad-set: the listed polynomials are not "
            "those of docs/design.md §4.3 for this model and dimension")
    wit = vector(c["witness"], "bad-set.witness", n)
    for k, e in enumerate(listed_):
        where = f"bad-set.polynomials[{k}] ({e['name']})"
        only(e, ("name", "condition", "polynomial", "constant", "factorisation", "value"), where)
        p = poly_from(e["polynomial"], names, where)
        require(p == recomputed[e["name"]], f"{where}: differs from the recomputed polynomial")
        require(p, f"{where}: identically zero")
        prod = pconst(rat(e["constant"], where + ".constant"), n)
        for t, pair in enumerate(listed(e["factorisation"], where + ".factorisation", 8)):
            require(isinstance(pair, list) and len(pair) == 2, f"{where}: [factor, multiplicity]")
            fi = integer(pair[0], f"{where}: factor index", 0, len(factors) - 1)
            # a multiplicity is bounded by the degree of the polynomial it factors
            mult = integer(pair[1], f"{where}: multiplicity", 1, degree(p))
            prod = pmul(prod, ppow(factors[fi], mult, n))
        require(prod == p, f"{where}: the factorisation does not multiply out")
        require(rat(e["value"], where + ".value") == peval(p, wit) != 0,
                f"{where}: witness value wrong or zero")
    used = {pair[0] for e in listed_ for pair in e["factorisation"]}
    require(used == set(range(len(factors))), "bad-set: a factor divides no listed polynomial")
    D = sum(degree(f) for f in factors)
    require(c["D"] == D and type(c["D"]) is int,
            f"bad-set: D = {c['D']} but the distinct factors have total degree {D}")
    box = integer(c["box"], "bad-set.box", 1, 10 ** 6)
    S = 2 * box + 1
    require(c["S"] == S and type(c["S"]) is int, "bad-set: |S| ≠ 2·box + 1")
    bound = Fraction(D, S)
    require(rat(c["bound"], "bad-set.bound") == bound, "bad-set: bound ≠ D/|S|")
    int_factors = [_int_factor(f) for f in factors]
    exact_msg = _exact_probability(c["exact_probability"], int_factors, box, n, bound)
    mc_msg = _monte_carlo(c["monte_carlo"], model, d, H, box, bound, recomputed, checks)
    vac = " (vacuous: ≥ 1)" if bound >= 1 else ""
    return (f"bad-set d={d} H={H}: {len(listed_)} genericity polynomials recomputed, each "
            f"nonzero at the witness, so the bad set is a proper algebraic set (measure zero "
            f"for any absolutely continuous draw); D={D}, |S|={S}, Schwartz–Zippel "
            f"Pr[bad] ≤ D/|S| = {fmt(bound)}{vac}" + exact_msg + mc_msg)


def _exact_probability(value, int_factors, box, n, bound):
    S = 2 * box + 1
    if S ** n > ENUM_LIMIT:
        require(value is None, "bad-set: exact_probability given where the box is too large to "
                "enumerate")
        return ""
    require(value is not None, "bad-set: exact_probability is required where the box can be "
            "enumerated")
    bad = sum(1 for pt in itertools.product(range(-box, box + 1), repeat=n)
              if any(_vanishes(f, pt) for f in int_factors))
    exact = Fraction(bad, S ** n)
    require(rat(value, "exact_probability") == exact,
            f"bad-set: exact probability is {fmt(exact)}")
    require(exact <= bound, "bad-set: exact probability exceeds the bound")
    return f"; exact Pr[bad] = {fmt(exact)} by enumerating {S ** n} points"


def _monte_carlo(mc, model, d, H, box, bound, polys, checks):
    only(mc, ("learner", "first_seed", "trials", "outcomes", "bad", "failures", "alpha", "tests",
              "failure_upper_limit", "bad_upper_limit", "sample", "conditioned"), "monte_carlo")
    only(mc["learner"], ("heads", "box"), "monte_carlo.learner")
    require(same_json(mc["learner"], {"heads": H, "box": box}),
            "monte_carlo: the learner must be told H and draw from this box")
    first = integer(mc["first_seed"], "monte_carlo.first_seed", 0, 2 ** 63)
    n = integer(mc["trials"], "monte_carlo.trials", 1, MAX_TRIALS)
    recorded = {}
    for k, e in enumerate(listed(mc["outcomes"], "monte_carlo.outcomes", n)):
        require(isinstance(e, list) and len(e) == 2, f"monte_carlo.outcomes[{k}]: [seed, outcome]")
        seed = integer(e[0], f"monte_carlo.outcomes[{k}].seed", first, first + n - 1)
        require(seed not in recorded, f"monte_carlo: seed {seed} listed twice")
        require(e[1] in OUTCOMES and e[1] != "recovered",
                f"monte_carlo.outcomes[{k}]: {e[1]!r} is not a named learner outcome")
        recorded[seed] = e[1]
    imodel = _integer_model(model)
    bad = failures = 0
    named = {}
    for t in range(n):
        seed = first + t
        U, X = draw(seed, d, box)
        viol = violations(imodel, U, X)
        got = recorded.get(seed, "recovered")
        if not viol:      # a generic draw: the learner recovers (docs/evidence.md, theorem 1)
            require(got == "recovered", f"monte_carlo: seed {seed}: recorded failure {got!r} "
                    "at a draw outside the bad set")
            continue
        bad += 1
        point = [x for r in U for x in r] + [x for r in X for x in r]
        for nm in viol:     # the fast test and the recomputed polynomial agree
            require(peval(polys[nm], point) == 0, f"monte_carlo: seed {seed}: {nm} does not "
                    "vanish as a polynomial")
        outcome, _ = predict(model, U, X, H)
        require(got == outcome, f"monte_carlo: seed {seed}: recorded {got!r} but the learner's "
                f"rules give {outcome!r} at this draw")
        if outcome != "recovered":
            failures += 1
            named[outcome] = named.get(outcome, 0) + 1
    require(mc["bad"] == bad, f"monte_carlo: {bad} draws lie in the bad set, not {mc['bad']}")
    require(mc["failures"] == failures, f"monte_carlo: {failures} failures, not {mc['failures']}")
    alpha = rat(mc["alpha"], "monte_carlo.alpha")
    require(0 < alpha < 1, "monte_carlo: alpha must lie in (0, 1)")
    tests = 2 * sum(1 for x in checks if isinstance(x, dict) and x.get("kind") == "bad-set")
    require(mc["tests"] == tests and type(mc["tests"]) is int, f"monte_carlo: the Bonferroni "
            f"correction must count the {tests} tests of this certificate")
    level = alpha / tests
    for what, k in (("failure", failures), ("bad-set", bad)):
        require(consistent_with_bound(n, k, bound, level),
                f"monte_carlo: {k}/{n} {what} draws reject Pr ≤ D/|S| = {fmt(bound)} at level "
                f"{fmt(level)} (exact binomial test)")
    fu = rat(mc["failure_upper_limit"], "failure_upper_limit")
    bu = rat(mc["bad_upper_limit"], "bad_upper_limit")
    require(is_least_upper_limit(n, failures, fu, level), "monte_carlo: failure_upper_limit is "
            f"not the Clopper–Pearson upper limit at confidence 1 − {fmt(level)} (grid 2^-24)")
    require(is_least_upper_limit(n, bad, bu, level), "monte_carlo: bad_upper_limit is not the "
            f"Clopper–Pearson upper limit at confidence 1 − {fmt(level)} (grid 2^-24)")
    sample = listed(mc["sample"], "monte_carlo.sample", 16)
    require(sample or failures == n, "monte_carlo: no recorded sample of the successes")
    answers = 0
    for k, s in enumerate(sample):
        only(s, ("seed", "run"), f"monte_carlo.sample[{k}]")
        seed = integer(s["seed"], f"monte_carlo.sample[{k}].seed", first, first + n - 1)
        require(seed not in recorded, f"monte_carlo.sample[{k}]: seed {seed} is not a success")
        r = s["run"]
        U, X = draw(seed, d, box)
        require(isinstance(r, dict) and r.get("learner") == "multi-head" and
                same_json(r.get("params"), {"H0": H}) and "model" in r,
                f"monte_carlo.sample[{k}]: a multi-head run with H0 = H and the true model")
        require(multiset(heads(r["model"], d, "sample.model")) == multiset(model),
                f"monte_carlo.sample[{k}]: the run's true model is not this model")
        vec = r.get("vectors") or {}
        require(isinstance(vec, dict) and set(vec) == {"U", "X"} and
                matrix(vec["U"], "U", d, d) == U and matrix(vec["X"], "X", d, d) == X,
                f"monte_carlo.sample[{k}]: the run's vectors are not the draw of seed {seed}")
        check_run(r)
        answers += len(r["transcript"])
    cond_msg = _conditioned(mc["conditioned"], d, H, box, first + n)
    detail = ", ".join(f"{v} {k}" for k, v in sorted(named.items())) or "none"
    return (f"; Monte Carlo: {n} draws re-drawn from seeds {first}…{first + n - 1}, {bad} in the "
            f"bad set (decided here), {failures} failures ({detail}), every outcome the one the "
            f"learner's rules give and every failure in the bad set; rates consistent with "
            f"≤ {fmt(bound)} (exact binomial, level {fmt(level)} = {fmt(alpha)}/{tests}; it "
            f"{power_sentence(n, bound, level)}; {caught_sentence(n)}); "
            f"Clopper–Pearson upper limits at 1 − {fmt(level)}: failure {fmt(fu)}, bad set "
            f"{fmt(bu)}; {len(sample)} successes checked as consistency-and-genericity certificates "
            f"({answers} answers re-checked)" + cond_msg)


#: at most this many conditioned draws per configuration
MAX_CONDITIONED = 64


def _conditioned(entries, d, H, box, after):
    """Draws conditioned into the matching-only part of the bad set: each seed's U, X re-drawn
    here, its model (chosen after the draw) canonical with H heads, every violated condition
    (decided here) a matching condition and the recorded one among them, and the recorded
    outcome the one the learner's rules give (:func:`.predict.predict`)."""
    listed(entries, "monte_carlo.conditioned", MAX_CONDITIONED)
    if not entries:
        return ""
    seen, tally = set(), {}
    for k, e in enumerate(entries):
        where = f"monte_carlo.conditioned[{k}]"
        only(e, ("seed", "model", "condition", "outcome"), where)
        seed = integer(e["seed"], where + ".seed", after, 2 ** 63)
        require(seed not in seen, f"{where}: seed {seed} listed twice")
        seen.add(seed)
        model = heads(e["model"], d, where + ".model", MAX_HEADS)
        require(len(model) == H and is_canonical(model),
                f"{where}: the model is not canonical with H = {H} heads")
        U, X = draw(seed, d, box)
        viol = violations(_integer_model(model), U, X)
        require(viol and all(v.startswith("matching") for v in viol),
                f"{where}: the draw is not in the matching-only part of the bad set "
                f"(violated: {viol or 'none'})")
        require(e["condition"] in viol, f"{where}: {e['condition']!r} does not vanish here")
        require(e["outcome"] in OUTCOMES, f"{where}: {e['outcome']!r} is not a learner outcome")
        outcome, _ = predict(model, U, X, H)
        require(e["outcome"] == outcome, f"{where}: recorded {e['outcome']!r} but the "
                f"learner's rules give {outcome!r} at this draw")
        tally[outcome] = tally.get(outcome, 0) + 1
    return (f"; {len(entries)} draws conditioned into the matching-only part of the bad set "
            f"(U, X re-drawn from seeds ≥ {after}, the model chosen after the draw; matching "
            f"decided here), outcomes as predicted: "
            + ", ".join(f"{v} {k}" for k, v in sorted(tally.items())))
