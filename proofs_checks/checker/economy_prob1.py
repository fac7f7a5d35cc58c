"""Check kind ``economy-prob1``: the economy schedule's generic run has probability at least
1 − D/box over the draw (beyond the papers; docs/design.md §10), by a Monte Carlo whose
successes carry their consistency-and-genericity certificates and whose other draws are each shown to
lie in the bad set.

A record covers one configuration (d, H, box, trials) of a seeded model: the Monte Carlo ran
``learn_multi_head(..., seed=first_seed + t, box=box, schedule="economy")`` for t < trials.
The configuration must be one of the claim's sizes (:data:`SIZES`: the number of trials is
the claim's, not the certificate's).  The checker

* derives D itself (:func:`degree_bound`): the sum of the degrees of the bad-set conditions
  of the economy's generic run, listed here from the block structure of
  :mod:`.economy_count` (q0, the first family and column 1 need det U, det X, separated
  poles and visible heads; each matching row its one-query conditions; each pair family at
  each dual column its separated poles, and each pair distinct residues), each condition a
  determinant of degree d, a bilinear form (degree 2) or a linear form (degree 1) in the
  random entries U, X, α, β.  It is draw-independent (the directions b enter as constants)
  and bounds the degree of the product of all conditions, so Schwartz–Zippel gives
  Pr[some condition vanishes] ≤ D/min|S| = D/box once the product is non-zero — which each
  verified generic run witnesses at its own draw.  The record's D must equal it;
* re-draws U, X of each recorded generic run from its seed with ``random.Random`` (the
  learner's first draw) and requires the run's vectors to be exactly those, each seed in the
  range and used once — so a run cannot be moved to another draw or counted twice;
* checks each such run as a consistency-and-genericity certificate (:func:`.run.check_run`: the
  transcript is the schedule rebuilt from the vectors and the recovered model, every answer
  reproduced in Q(t), genericity at the recovered model) of the recorded true model, with
  exactly the generic count 1 + 2Hd + (d − 1)(1 + Hd + H(H − 1)/2) of queries (its own
  closed form);
* for every other seed of the range re-draws U, X and requires a bad-set condition to vanish
  at the true model: one of det U, det X, the column-1 poles and visibility, the one-query
  matching conditions (:func:`ux_violations`, decided from the seed alone), or else a pair
  condition at the learner's recorded directions b_a, b_g and coefficients α, β ∈ 1…box
  (``pairs``; the directions must be of the learner's form for the true model — v_g·b = 0 for
  the other heads, v_a·b ≠ 0 — but α, β come after the modular engines' draws in the
  learner's random stream, so they are the learner's record, not re-drawn here).  A seed with
  neither a generic run nor a vanishing condition is REJECTED: a learner failing outside the
  bad set, or a deleted run, is caught at that draw;
* requires the exact one-sided binomial test of "Pr[not generic] ≤ D/box" not to reject at
  level α/m (α = 1/1000, m the number of configurations: Bonferroni), and states the smallest
  rate the test would detect with power 0.9 (:func:`.binomial.power_sentence`).
"""

from __future__ import annotations

from fractions import Fraction

import itertools

from .bad_set import draw
from .binomial import caught_sentence, consistent_with_bound, power_sentence
from .economy_count import _eval, _mul, blocks
from .linalg import det
from .parse import fmt, heads, integer, listed, only, rat, require, same_json, vector
from .run import check_run
from .run_economy import MAX_ONE_QUERY_HEADS
from .run_multi_head import dot, score

ALPHA = Fraction(1, 1000)
MAX_TRIALS = 20000
#: the claim's configurations [d, H, box, trials] at each size (proofs_checks/beyond_economy.py)
SIZES = {"quick": [[2, 2, 1000, 40]],
         "full": [[2, 2, 1000, 200], [3, 2, 1000, 100], [2, 2, 40, 200]]}


def generic_count(d: int, H: int) -> int:
    """The economy schedule's generic count (dual path, H ≤ d): Σ multiplicity × samples over
    this checker's copy of the block structure (:func:`.economy_count.blocks`; no matching
    block for one head)."""
    return int(sum(_eval(_mul(m, s), d, H, H) for m, s, _ in
                   blocks("economy", "dual", matching=H >= 2).values()))


def degree_bound(d: int, H: int) -> int:
    """D from the block structure (module docstring): the blocks' conditions with their degrees
    in the random entries, summed.  Column 1 (blocks q0, first-family, column-1): det U, det X
    (degree d each), for each of the d rows C(H, 2) pole separations (2) and H visibilities
    (1); each matching row i ≥ 2 (the ``matching`` block, one query): H² sums e_ab (2), H²
    residue sums C_ab (1), C(H², 2) differences and C(H², 2) sums e_p ∓ e_q (2); each of the
    d − 1 dual columns (``pair`` block): C(H, 2) pair pole separations (2, bilinear in (α, β)
    and x_j); each pair once: distinct residues (1)."""
    st = blocks("economy", "dual", matching=H >= 2)
    require("single-visible" in st and "pair" in st, "economy-prob1: not the dual path")
    pairs = H * (H - 1) // 2
    D = 2 * d + d * (2 * pairs + H)
    if "matching" in st:
        D += (d - 1) * (2 * H * H + H * H + 2 * 2 * (H * H * (H * H - 1) // 2))
    return D + (d - 1) * 2 * pairs + pairs


def ux_violations(model, U, X):
    """The conditions decided by U, X alone (column 1 and the one-query matching) that vanish
    at the model: a list of names (empty: this part of the draw is generic)."""
    d, H, x1 = len(U), len(model), X[0]
    out = [n for n, M in (("det U", U), ("det X", X)) if det(M) == 0]
    s = [[score(W, U[i], x1) for W, _ in model] for i in range(d)]
    c = [[dot(v, U[i]) for _, v in model] for i in range(d)]
    for i in range(d):
        out += [f"poles I(u{i + 1},x1) heads {a + 1},{b + 1}"
                for a, b in itertools.combinations(range(H), 2) if s[i][a] == s[i][b]]
        out += [f"visible head {a + 1} at u{i + 1}" for a in range(H) if c[i][a] == 0]
    for i in range(1, d if H >= 2 else 1):
        e = {(a, b): s[0][a] + s[i][b] for a in range(H) for b in range(H)}
        out += [f"one-query u{i + 1}: e{a + 1}{b + 1}" for (a, b), x in e.items() if x == 0]
        out += [f"one-query u{i + 1}: C{a + 1}{b + 1}" for a in range(H) for b in range(H)
                if c[0][a] + c[i][b] == 0]
        for p, q in itertools.combinations(sorted(e), 2):
            if e[p] == e[q] or e[p] == -e[q]:
                out.append(f"one-query u{i + 1}: e{p} {'-' if e[p] == e[q] else '+'} e{q}")
    return out


def _head_seen(model, b, where):
    """The one head of the model that the direction b sees (v_h·b ≠ 0), the others blind."""
    seen = [h for h, (_, v) in enumerate(model) if dot(v, b) != 0]
    require(len(seen) == 1, f"{where}: the direction is not of the learner's form (it must "
            f"see exactly one head, it sees {len(seen)})")
    return seen[0]


def pair_violation(entry, model, X, box, where):
    """The pair condition the recorded directions and coefficients violate at the model, or
    REJECT."""
    only(entry, ("seed", "b_a", "b_g", "alpha", "beta"), where)
    d = len(X)
    ba, bg = vector(entry["b_a"], where + ".b_a", d), vector(entry["b_g"], where + ".b_g", d)
    a, g = _head_seen(model, ba, where + ".b_a"), _head_seen(model, bg, where + ".b_g")
    require(a != g, f"{where}: the two directions see the same head")
    al = integer(entry["alpha"], where + ".alpha", 1, box)
    be = integer(entry["beta"], where + ".beta", 1, box)
    u = [al * x + be * y for x, y in zip(ba, bg)]
    if al * dot(model[a][1], ba) == be * dot(model[g][1], bg):
        return f"pair ({a + 1},{g + 1}): residues"
    for j in range(1, d):
        if score(model[a][0], u, X[j]) == score(model[g][0], u, X[j]):
            return f"pair ({a + 1},{g + 1}) at x{j + 1}: poles"
    require(False, f"{where}: no pair condition vanishes at the recorded directions")


def _seeded_run(entry, k, d, box, first, trials, model_json, seen):
    only(entry, ("seed", "run"), f"economy-prob1.generic[{k}]")
    seed = integer(entry["seed"], f"economy-prob1.generic[{k}].seed", first, first + trials - 1)
    require(seed not in seen, f"economy-prob1: seed {seed} is recorded twice")
    seen.add(seed)
    run = entry["run"]
    require(isinstance(run, dict) and run.get("kind") == "run" and
            run.get("learner") == "multi-head-economy",
            f"economy-prob1: seed {seed}: not a run record of the economy schedule")
    U, X = draw(seed, d, box)
    vec = run.get("vectors")
    require(isinstance(vec, dict) and [[rat(x, "U") for x in r] for r in vec.get("U", [])] == U
            and [[rat(x, "X") for x in r] for r in vec.get("X", [])] == X,
            f"economy-prob1: seed {seed}: the run's U, X are not the draw of its seed")
    require("model" in run and same_json(run["model"], model_json),
            f"economy-prob1: seed {seed}: the run is not of the recorded model")
    return run


def check_economy_prob1(c, checks=()):
    """One configuration's Monte Carlo against D/box (module docstring)."""
    only(c, ("kind", "dim", "heads", "box", "trials", "first_seed", "model", "D", "alpha",
             "tests", "generic", "pairs"), "economy-prob1")
    d = integer(c["dim"], "economy-prob1.dim", 1, 8)
    H = integer(c["heads"], "economy-prob1.heads", 1, min(d, MAX_ONE_QUERY_HEADS))
    box = integer(c["box"], "economy-prob1.box", 1, 10 ** 9)
    trials = integer(c["trials"], "economy-prob1.trials", 1, MAX_TRIALS)
    require(any([d, H, box, trials] == cfg for cfg in SIZES["quick"] + SIZES["full"]),
            f"economy-prob1: (d, H, box, trials) = ({d}, {H}, {box}, {trials}) is not a "
            f"configuration of the claim's sizes {SIZES}")
    first = integer(c["first_seed"], "economy-prob1.first_seed", 0, 10 ** 9)
    model = heads(c["model"], d, "economy-prob1.model", max_heads=H)
    require(len(model) == H, f"economy-prob1: the model must have H = {H} heads")
    D = degree_bound(d, H)
    require(c["D"] == D and type(c["D"]) is int, f"economy-prob1: D = {c['D']!r} but the "
            f"bad-set conditions of the structure have total degree {D}")
    require(rat(c["alpha"], "economy-prob1.alpha") == ALPHA, f"economy-prob1: α must be {fmt(ALPHA)}")
    tests = sum(1 for x in checks if isinstance(x, dict) and x.get("kind") == "economy-prob1")
    require(c["tests"] == tests and type(c["tests"]) is int,
            f"economy-prob1: the Bonferroni correction must count the {tests} configurations")
    listed(c["generic"], "economy-prob1.generic", trials)
    count, seen = generic_count(d, H), set()
    for k, entry in enumerate(c["generic"]):
        run = _seeded_run(entry, k, d, box, first, trials, c["model"], seen)
        require(len(run.get("transcript", [])) == count,
                f"economy-prob1: seed {entry['seed']}: {len(run.get('transcript', []))} queries, "
                f"not the generic count {count}")
        check_run(run)
    pairs = {}
    for k, e in enumerate(listed(c["pairs"], "economy-prob1.pairs", trials)):
        require(isinstance(e, dict), f"economy-prob1.pairs[{k}]: an object")
        seed = integer(e.get("seed"), f"economy-prob1.pairs[{k}].seed", first, first + trials - 1)
        require(seed not in seen and seed not in pairs,
                f"economy-prob1: seed {seed} has a generic run or two pair records")
        pairs[seed] = e
    named = {}
    for seed in range(first, first + trials):
        if seed in seen:
            continue
        U, X = draw(seed, d, box)
        viol = ux_violations(model, U, X)
        if not viol:
            require(seed in pairs, f"economy-prob1: seed {seed}: no generic run, and the draw "
                    f"satisfies every condition of the bad set decided by U, X (det U, det X, "
                    f"column-1 poles and visibility, one-query matching) with no pair record: "
                    f"a failure outside the bad set, or a run left out")
            viol = [pair_violation(pairs[seed], model, X, box, f"economy-prob1: seed {seed}")]
        else:
            require(seed not in pairs, f"economy-prob1: seed {seed}: a pair record where U, X "
                    f"already lie in the bad set")
        key = viol[0].split(":")[0].split(" I(")[0].split(" at ")[0]
        named[key] = named.get(key, 0) + 1
    generic = len(c["generic"])
    bound, level = Fraction(D, box), ALPHA / tests
    require(consistent_with_bound(trials, trials - generic, bound, level),
            f"economy-prob1: {trials - generic}/{trials} draws without a certified generic run "
            f"reject Pr ≤ D/box = {fmt(bound)} at level {fmt(level)} (exact binomial test)")
    where = ", ".join(f"{v} {k}" for k, v in sorted(named.items())) or "none"
    return (f"economy-prob1 d={d} H={H} box={box}: {generic} of {trials} seeded draws carry a "
            f"verified generic run (U, X re-drawn from the seed; transcript = the rebuilt "
            f"schedule of {count} queries; every answer reproduced in Q(t); genericity at the "
            f"recovered = true model); each of the {trials - generic} others lies in the bad "
            f"set (a vanishing condition exhibited here: {where}; {len(pairs)} at the "
            f"learner's recorded pair coefficients); D = {D} derived here from the structure; "
            f"Pr[not generic] ≤ D/box = {fmt(bound)} not rejected at level {fmt(level)} "
            f"(exact binomial test; it {power_sentence(trials, bound, level, 'non-generic')}; "
            f"{caught_sentence(trials)})")
