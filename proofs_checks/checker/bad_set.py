"""Check kind ``bad-set``: the genericity polynomials of the multi-head schedule (P2
probability one), recomputed here, with witnesses, D, the Schwartz–Zippel bound and the
Monte Carlo records."""

from __future__ import annotations

import itertools
from fractions import Fraction

from .claims import LEARNING_FAILURES
from .linalg import det
from .parse import fmt, heads, integer, matrix, rat, require, vector
from .poly import degree, normalise, padd, pconst, peval, pdet, pmul, poly_from, ppow, pscale, pvar
from .qt import attention, canonical, element, same_element


# ------------------------------------------------------------ genericity (docs/design.md §4.3)
def families(d):
    """Copy-count families of the schedule as (u index tuple, x index tuple), 0-based; a pair
    (0, i) means u_1 + u_i (resp. x_1 + x_j).  Matching families carry their two bases."""
    out = [((i,), (0,), None) for i in range(d)]
    out += [((0, i), (0,), (((0,), (0,)), ((i,), (0,)))) for i in range(1, d)]
    for j in range(1, d):
        for i in range(d):
            out.append(((i,), (j,), None))
            out.append(((i,), (0, j), (((i,), (0,)), ((i,), (j,)))))
    return out


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


def _bilinear(u, M, x, n):
    out = {}
    for i in range(len(u)):
        for j in range(len(x)):
            if M[i][j]:
                out = padd(out, pscale(pmul(u[i], x[j]), M[i][j]))
    return out


def _linear(v, u, n):
    out = {}
    for a, p in zip(v, u):
        if a:
            out = padd(out, pscale(p, a))
    return out


def bad_set_polynomials(model, d):
    """The genericity polynomials of docs/design.md §4.3, recomputed here: name -> polynomial in the
    2d² entries u_{i,k}, x_{j,k}."""
    n = 2 * d * d
    H = len(model)
    polys = {}
    polys["det U"] = pdet([_sym_vec(0, (i,), d, n) for i in range(d)], n)
    polys["det X"] = pdet([_sym_vec(1, (j,), d, n) for j in range(d)], n)

    def score(h, ui, xj):
        return _bilinear(_sym_vec(0, ui, d, n), model[h][0], _sym_vec(1, xj, d, n), n)

    def name(ui, xj):
        u = "+".join(f"u{i + 1}" for i in ui)
        x = "+".join(f"x{j + 1}" for j in xj)
        return f"I({u},{x})"

    seen_u = []
    for ui, xj, match in families(d):
        for a in range(H):
            for b in range(a + 1, H):
                polys[f"poles {name(ui, xj)} heads {a + 1},{b + 1}"] = padd(
                    score(a, ui, xj), pscale(score(b, ui, xj), -1))
        if ui not in seen_u:
            seen_u.append(ui)
            for a in range(H):
                polys[f"visible head {a + 1} at {'+'.join(f'u{i + 1}' for i in ui)}"] = \
                    _linear(model[a][1], _sym_vec(0, ui, d, n), n)
        if match:
            (u1, x1), (u2, x2) = match
            for a, b, cc in itertools.product(range(H), repeat=3):
                if (a, b) == (cc, cc):
                    continue
                p = padd(padd(score(a, u1, x1), score(b, u2, x2)),
                         pscale(padd(score(cc, u1, x1), score(cc, u2, x2)), -1))
                polys[f"matching {name(ui, xj)} ({a + 1},{b + 1})~{cc + 1}"] = p
    return polys


def check_bad_set(c, checks=()):
    """Genericity certificate (P2 probability one, docs/design.md §4.3): polynomials recomputed from
    the model, factorisations, witness values, D, the bound D/|S|, the exact bad-set
    probability (by enumeration) and the Monte Carlo records."""
    d = integer(c.get("dim"), "bad-set.dim")
    require(1 <= d <= 4, "bad-set: dim out of range")
    model = heads(c.get("model"), d, "bad-set.model")
    require(canonical(model) == frozenset(model) and len(model) == len(set(model)),
            "bad-set: the model is not canonical")
    n = 2 * d * d
    names = [f"u{i}_{k}" for i in range(1, d + 1) for k in range(1, d + 1)] + \
            [f"x{j}_{k}" for j in range(1, d + 1) for k in range(1, d + 1)]
    factors = [poly_from(f, names, f"bad-set.factors[{k}]") for k, f in enumerate(c.get("factors", []))]
    require(all(degree(f) >= 1 for f in factors), "bad-set: a factor is constant")
    recomputed = bad_set_polynomials(model, d)
    listed = c.get("polynomials")
    require(isinstance(listed, list), "bad-set: polynomials must be a list")
    listed_names = [e.get("name") for e in listed if isinstance(e, dict)]
    require(sorted(listed_names) == sorted(recomputed), "bad-set: the listed polynomials are not "
            "those of docs/design.md §4.3 for this model and dimension")
    wit = vector(c.get("witness"), "bad-set.witness")
    require(len(wit) == n, "bad-set: witness has the wrong length")
    for k, e in enumerate(listed):
        where = f"bad-set.polynomials[{k}] ({e['name']})"
        p = poly_from(e.get("polynomial"), names, where)
        require(p == recomputed[e["name"]], f"{where}: differs from the recomputed polynomial")
        require(p, f"{where}: identically zero")
        prod = pconst(rat(e.get("constant"), where + ".constant"), n)
        for t, (fi, mult) in enumerate(e.get("factorisation", [])):
            require(isinstance(fi, int) and 0 <= fi < len(factors), f"{where}: bad factor index")
            prod = pmul(prod, ppow(factors[fi], integer(mult, "multiplicity"), n))
        require(prod == p, f"{where}: the factorisation does not multiply out")
        require(rat(e.get("value"), where + ".value") == peval(p, wit) != 0,
                f"{where}: witness value wrong or zero")
    D = sum(degree(f) for f in factors)
    require(c.get("D") == D, f"bad-set: D = {c.get('D')} but the distinct factors have total degree {D}")
    require(len({tuple(sorted(normalise(f).items())) for f in factors}) == len(factors),
            "bad-set: repeated factor")
    box = integer(c.get("box"), "bad-set.box")
    S = 2 * box + 1
    require(c.get("S") == S, "bad-set: |S| ≠ 2·box + 1")
    bound = Fraction(D, S)
    require(rat(c.get("bound"), "bad-set.bound") == bound, "bad-set: bound ≠ D/|S|")

    def in_bad_set(point):
        return any(peval(f, point) == 0 for f in factors)

    exact = c.get("exact_probability")
    if exact is not None:
        require(S ** n <= 20000, "bad-set: enumeration too large to re-check")
        bad = sum(in_bad_set(list(map(Fraction, pt)))
                  for pt in itertools.product(range(-box, box + 1), repeat=n))
        require(rat(exact, "exact_probability") == Fraction(bad, S ** n),
                f"bad-set: exact probability is {fmt(Fraction(bad, S ** n))}")
        require(Fraction(bad, S ** n) <= bound, "bad-set: exact probability exceeds the bound")
    mc = c.get("monte_carlo")
    msg = ""
    if mc is not None:
        trials = mc.get("trials")
        require(isinstance(trials, list) and trials, "monte_carlo: no trials")
        canon = canonical(model)
        failures = 0
        for k, t in enumerate(trials):
            where = f"monte_carlo.trials[{k}]"
            require(isinstance(t, dict), where)
            if "rows" in t:  # stopped before any query: the singular basis it reported
                require(t.get("outcome") == "singular-basis" and t.get("basis") in ("U", "X"),
                        f"{where}: only a singular-basis failure reports just one basis")
                rows = matrix(t["rows"], where + ".rows")
                require(len(rows) == d and all(len(r) == d for r in rows) and
                        all(abs(x) <= box and x.denominator == 1 for r in rows for x in r),
                        f"{where}: reported basis is not a d×d matrix from the box")
                require(det(rows) == 0, f"{where}: the reported basis is not singular")
                require(t.get("in_bad_set") is True, f"{where}: a singular basis is in the bad set")
            else:
                U, X = matrix(t.get("U"), where + ".U"), matrix(t.get("X"), where + ".X")
                require(len(U) == len(X) == d and all(len(r) == d for r in U + X) and
                        all(abs(x) <= box and x.denominator == 1 for r in U + X for x in r),
                        f"{where}: bases are not d×d matrices from the box")
                point = [x for r in U for x in r] + [x for r in X for x in r]
                require(t.get("in_bad_set") == in_bad_set(point),
                        f"{where}: bad-set membership misstated")
                # the oracle's answers to [(x1+u_i), x1] and [(x_j+u1), x_j] tie U, X to the run
                asked = [[[a + b for a, b in zip(X[0], u)], X[0]] for u in U] + \
                        [[[a + b for a, b in zip(x, U[0])], x] for x in X[1:]]
                answers = t.get("answers")
                require(isinstance(answers, list) and len(answers) == len(asked),
                        f"{where}: one recorded answer per read-back query")
                for q, y in zip(asked, answers):
                    require(same_element(attention(model, q), element(y, where + ".answers")),
                            f"{where}: a recorded answer is not the model's output on its query")
            outcome = t.get("outcome")
            if outcome == "recovered":
                require(frozenset(heads(t.get("recovered"), d, where)) == canon,
                        f"{where}: a silent wrong answer is recorded as recovered")
            else:
                require(outcome in LEARNING_FAILURES, f"{where}: outcome {outcome!r} is not a "
                        "named learning failure")
                failures += 1
                require(t["in_bad_set"], f"{where}: failure outside the bad set")
        require(mc.get("failures") == failures, "monte_carlo: failure count misstated")
        rate = Fraction(failures, len(trials))
        require(rat(mc.get("rate"), "rate") == rate, f"monte_carlo: rate {fmt(rate)} misstated")
        # Hoeffding allowance 2nε² = 69/10 < ln 1000
        require(rate <= bound or 2 * len(trials) * (rate - bound) ** 2 <= Fraction(69, 10),
                f"monte_carlo: rate {fmt(rate)} above the bound {fmt(bound)} beyond the allowance")
        msg = f", Monte Carlo {failures}/{len(trials)} failures, all detected and in the bad set"
    return (f"bad-set d={d} H={len(model)}: {len(listed)} polynomials nonzero at the witness, "
            f"D={D}, |S|={S}, bound {fmt(bound)}" + msg)
