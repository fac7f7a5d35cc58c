"""Check kind ``noisy-single-head``: one head learned from answers off by at most τ
(P1 Thm 6.1; docs/design.md §4.4), re-derived with rational interval arithmetic
(:mod:`.interval`: e^s and log by certified series, endpoints rounded outward).

A record is one seeded head at one noise mode over a list of τ: the head (W, v) as exact
rationals, the bounds B, μ told to the learner, its probe scale b (its mp value of 1/B), the
mp precision ``prec`` (unit roundoff u = 2^{1−prec}), the d² + d queries, and per τ the
answers the learner received, the noise in each (answer − the oracle's noise-free mp value),
the recovered (Ŵ, v̂) and the stated bounds.  Checked, in order:

1. *The instance.*  ‖W‖_F ≤ B, |v_i| ≥ μ, b·B = 1 to the rounding, b·‖W‖_F ≤ 1 (so every
   logit gap a·b·W_ij lies in [−1/2, 1/2]); the constants of the bound are this checker's
   own (a = 1/2, clip [p₋, p₊] = [0.2764, 0.7236] with p₊ = 1 − p₋, Lipschitz 5) and hold:
   1/(p₋p₊) ≤ 5 and σ(±1/2) ∈ (p₋, p₊) (σ by intervals).
2. *The schedule*: [e_i], then [(b e_i + a e_j), a e_j] for (i, j) row by row — each entry
   exact, or its mp rounding (within u of it).
3. *The answers.*  Each true answer Σ_i softmax(X W x_N)_i v·x_i is enclosed by intervals;
   every received answer ŷ lies within τ_eff = τ + 8u(1 + max|ŷ|) of it (the learner's
   premise); the recorded noise η is the answer's offset from the truth up to the oracle's
   own rounding, |η| ≤ τ (±τ in the adversarial and worst-case modes).
4. *The learner's rule* on the received answers: v̂ = the answers to [e_i]; σ̂ = (ŷ_ij −
   a·v̂_j)/(b·v̂_i) exactly; no clipping (σ̂ ∈ [p₋, p₊]), the margin |v̂_i| ≥ μ − τ_eff,
   τ_eff < μ, σ̂ within [σ(−1/2) − δ_σ, σ(1/2) + δ_σ] and ‖Ŵ‖_F ≤ B + ε_W (no assumption of
   the theorem is contradicted); Ŵ_ij = σ⁻¹(σ̂)/(a·b) enclosed (log by series) and the
   recorded Ŵ agrees with it to the mp rounding.
5. *The bound*, recomputed from its constants: δ_σ = τ_eff(1 + a + b·σ(1/2))/(b(μ − τ_eff)),
   ε_entry = 5·min(δ_σ, p₊ − p₋)/(a·b) (+ the learner's 16u(B + |Ŵ_ij|) for its own
   rounding), ε_W = d·ε_entry, ε_v = √d·τ_eff; the stated bounds must be these (to the mp
   rounding: a bound scaled by 0.3 is rejected); then exactly ‖Ŵ − W‖_F ≤ ε_W (the recorded
   Ŵ), the rule's own Ŵ within ε_W without the rounding term, and ‖v̂ − v‖₂ ≤ ε_v.
6. *Worst case*: the v-signs s maximise the first-order Σ_ij (k_ij(1 + |a s_j + σ_ij b s_i|))²
   (every other s with s_1 = 1 is at most it, by intervals), each probe's noise sign is
   −sign(a s_j + σ_ij b s_i) (free where that is 0), the noise carries these signs, F is the
   square root of the maximum, and at every τ ≤ 10⁻⁶ the error lies in [0.9, 1.1]·F·τ — the
   signs attain the first-order worst case, so a bound below 0.4 of the stated one would be
   violated here.
7. *Linearity*: the least-squares slope of log ‖Ŵ − W‖_F against log τ is within 0.1 of 1
   (a float statistic of the exact errors).

Not re-derived: the proof that ε_W bounds the error for every answer vector within τ_eff
(learn_single_head_noisy's docstring); the instance samples it.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from itertools import product

from .interval import Iv, log_bounds, softmax_average
from .parse import integer, listed, matrix, only, rat, require, vector

MODES = ("adversarial", "random", "worst-case")
FIELDS = ("kind", "dim", "mode", "prec", "model", "B", "mu", "b", "queries", "rows")
ROW_FIELDS = ("tau", "answers", "noise", "recovered", "bound_W", "bound_v", "flags")
MAX_DIM, MAX_ROWS = 8, 16
#: the checker's own copy of the constants of the bound (docs/design.md §4.4)
A = Fraction(1, 2)
CLIP = (Fraction(2764, 10000), Fraction(7236, 10000))
LIPSCHITZ = 5
ROUNDOFF, SLACK = 8, 16          # τ_eff = τ + 8u(1 + max|ŷ|); + 16u(B + |Ŵ_ij|) per entry
TIGHT, TIGHT_TAU, SLOPE_TOLERANCE = Fraction(1, 10), Fraction(1, 10 ** 6), 0.1
#: relative agreement of a stated (mp) bound with its recomputation
AGREE_BITS = 24


def prec_of(dps: int) -> int:
    """The binary precision of an mpmath context of ``dps`` digits (mpmath's dps_to_prec)."""
    return max(1, int(round((dps + 1) * 3.3219280948873626)))


_TAU = re.compile(r"[0-9]+(\.[0-9]+)?([eE]-?[0-9]+)?")


def parse_taus(text, where="params.taus"):
    """'1e-4,1e-8' → exact rationals (decimal text only)."""
    require(isinstance(text, str) and len(text) <= 400, f"{where}: expected a list of τ")
    out = []
    for part in text.split(","):
        require(_TAU.fullmatch(part) is not None, f"{where}: {part[:20]!r} is not a τ like 1e-8")
        out.append(Fraction(part))
    require(0 < len(out) <= MAX_ROWS and all(t > 0 for t in out), f"{where}: 1…{MAX_ROWS} τ > 0")
    return out


def _dot(a, b):
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def true_answer(W, v, tokens, bits):
    """F(X) = Σ_i softmax(X W x_N)_i v·x_i for one head, enclosed (exact for one token)."""
    xN = tokens[-1]
    Wx = [_dot(r, xN) for r in W]
    scores = [_dot(t, Wx) for t in tokens]
    values = [_dot(t, v) for t in tokens]
    if len(tokens) == 1:
        return Iv.point(values[0], bits)
    return softmax_average(scores, values, bits)


def sigma(x, bits) -> Iv:
    """σ(x) = 1/(1 + e^{−x}) for a rational x, enclosed."""
    return (Iv.point(-x, bits).exp() + 1).inverse()


def constants(bits):
    """The bound's constants hold: 1/(p₋p₊) ≤ 5, p₊ = 1 − p₋, σ(±1/2) ∈ (p₋, p₊)."""
    lo, hi = CLIP
    require(hi == 1 - lo and 1 / (lo * hi) <= LIPSCHITZ,
            "constants: the Lipschitz constant 5 does not bound 1/(p(1−p)) on the clip")
    s_plus, s_minus = sigma(A, bits), sigma(-A, bits)
    require(s_plus.hi < hi and s_minus.lo > lo, "constants: σ(±1/2) is not inside the clip")
    return s_plus, s_minus


def schedule(d, b):
    e = lambda i: [Fraction(int(k == i)) for k in range(d)]  # noqa: E731
    out = [[e(i)] for i in range(d)]
    for i in range(d):
        for j in range(d):
            out.append([[b * x + A * y for x, y in zip(e(i), e(j))], [A * y for y in e(j)]])
    return out


def _queries(data, d, b, u):
    want = schedule(d, b)
    listed(data, "queries", len(want))
    require(len(data) == len(want), f"queries: {len(data)} but the schedule has d²+d = "
            f"{len(want)}")
    out = []
    for k, (q, w) in enumerate(zip(data, want)):
        require(isinstance(q, list) and len(q) == len(w), f"queries[{k}]: not query {k} of the "
                f"schedule rebuilt from (d, b)")
        toks = [vector(t, f"queries[{k}][{n}]", d) for n, t in enumerate(q)]
        require(all(abs(x - y) <= u * abs(y) for t, s in zip(toks, w) for x, y in zip(t, s)),
                f"queries[{k}]: not query {k} of the schedule rebuilt from (d, b) (nor its mp "
                f"rounding)")
        out.append(toks)
    return out


def first_order(W, v, b, bits):
    """{s: Σ_ij (k_ij(1 + |a s_j + σ_ij b s_i|))²} over s ∈ {1}×{±1}^{d−1}, and the g_ij(s) =
    a s_j + σ_ij b s_i (intervals): the first-order worst case of P1 Thm 6.1's learner
    (proofs_checks.p1_t61.worst_signs), k_ij = 1/(σ_ij(1 − σ_ij)·a·b²·|v_i|)."""
    d = len(v)
    sig = [[sigma(A * b * W[i][j], bits) for j in range(d)] for i in range(d)]
    gain = [[(sig[i][j] * (1 - sig[i][j]) * (A * b * b * abs(v[i]))).inverse()
             for j in range(d)] for i in range(d)]
    totals, gs = {}, {}
    for rest in product((1, -1), repeat=d - 1):
        s = (1,) + rest
        g = [[sig[i][j] * (b * s[i]) + A * s[j] for j in range(d)] for i in range(d)]
        tot = Iv.point(0, bits)
        for i in range(d):
            for j in range(d):
                tot = tot + (gain[i][j] * (abs(g[i][j]) + 1)).square()
        totals[s], gs[s] = tot, g
    return totals, gs


def _worst_case(c, d, W, v, b, bits):
    """Item 6 of the module docstring, the signs part; returns (signs, F² interval)."""
    signs = listed(c["signs"], "signs", d + d * d)
    require(len(signs) == d + d * d and all(type(s) is int and s in (1, -1) for s in signs),
            f"signs: expected {d + d * d} signs ±1")
    totals, gs = first_order(W, v, b, bits)
    s = tuple(signs[:d])
    require(s in totals, "signs: the v-signs must start with +1 (s and −s are equivalent)")
    best = max(t.lo for t in totals.values())
    require(totals[s].hi >= best, "signs: the v-signs do not maximise the first-order error "
            "(another sign pattern gives more)")
    for i in range(d):
        for j in range(d):
            g = gs[s][i][j].sign()
            want = None if g is None or g == 0 else (-1 if g > 0 else 1)
            require(want is None or signs[d + i * d + j] == want,
                    f"signs: probe ({i + 1},{j + 1}) has noise sign {signs[d + i * d + j]}, "
                    f"the first-order worst case has {want}")
    F = rat(c["first_order"], "first_order")
    require(abs(F * F - totals[s].mid()) <= Fraction(1, 10 ** 6) * totals[s].hi,
            "first_order: F is not the square root of the first-order maximum")
    return signs, totals[s]


def check_noisy_single_head(c, checks):
    """The module docstring, items 1–7."""
    only(c, FIELDS, "noisy-single-head", optional=("signs", "first_order"))
    d = integer(c["dim"], "dim", 1, MAX_DIM)
    mode = c["mode"]
    require(mode in MODES, f"mode must be one of {MODES}")
    require((mode == "worst-case") == ("signs" in c) == ("first_order" in c),
            "signs and first_order are recorded exactly for the worst case")
    prec = integer(c["prec"], "prec", 53, 4000)
    u = Fraction(1, 1 << (prec - 1))
    bits = max(192, 2 * prec)
    only(c["model"], ("W", "v"), "model")
    W = matrix(c["model"]["W"], "model.W", d, d)
    v = vector(c["model"]["v"], "model.v", d)
    B, mu, b = rat(c["B"], "B"), rat(c["mu"], "mu"), rat(c["b"], "b")
    norm2 = sum(x * x for r in W for x in r)
    require(B > 0 and mu > 0 and b > 0, "B, μ and b must be positive")
    require(norm2 <= B * B, "the head violates ‖W‖_F ≤ B")
    require(all(abs(x) >= mu for x in v), "the head violates |v_i| ≥ μ")
    require(abs(b * B - 1) <= 2 * u, "b is not 1/B (to the rounding)")
    require(b * b * norm2 <= 1, "b·‖W‖_F > 1: a logit gap leaves [−1/2, 1/2]")
    s_plus, s_minus = constants(bits)
    queries = _queries(c["queries"], d, b, u)
    truth = [true_answer(W, v, q, bits) for q in queries]
    signs = F2 = None
    if mode == "worst-case":
        signs, F2 = _worst_case(c, d, W, v, b, bits)
    rows = listed(c["rows"], "rows", MAX_ROWS)
    require(rows, "rows: no τ")
    errors, ratios = [], []
    for n, row in enumerate(rows):
        e2, ratio = _row(row, f"rows[{n}]", d, W, v, B, mu, b, u, prec, bits, mode, signs,
                         queries, truth, s_plus, s_minus)
        errors.append((rat(row["tau"]), e2))
        ratios.append(ratio)
    taus = [t for t, _ in errors]
    require(len(set(taus)) == len(taus), "rows: a τ is repeated")
    tight = ""
    if mode == "worst-case":
        tight = _tight(errors, F2)
    slope = _slope(errors)
    return (f"noisy-single-head d={d} {mode}: {d * d + d} queries = the schedule rebuilt from "
            f"(d, b); at {len(rows)} τ every answer within τ_eff of the true answer (interval "
            f"arithmetic, e^s by a certified series) and the noise {'±τ' if mode != 'random' else 'within ±τ'}; "
            f"Ŵ = the learner's rule on these answers (σ⁻¹ enclosed), no assumption contradicted; "
            f"stated bounds = ε_W, ε_v recomputed from their constants; ‖Ŵ−W‖_F ≤ ε_W exactly "
            f"(largest ratio {max(ratios):.3f}); log-log slope {slope:.3f}{tight}")


def _row(row, where, d, W, v, B, mu, b, u, prec, bits, mode, signs, queries, truth,
         s_plus, s_minus):
    only(row, ROW_FIELDS, where)
    tau = rat(row["tau"], f"{where}.tau")
    require(tau > 0, f"{where}: τ must be positive")
    n = d * d + d
    y = vector(row["answers"], f"{where}.answers", n)
    eta = vector(row["noise"], f"{where}.noise", n)
    require(row["flags"] == [], f"{where}: the learner flagged an assumption")
    only(row["recovered"], ("W", "v"), f"{where}.recovered")
    Wr = matrix(row["recovered"]["W"], f"{where}.recovered.W", d, d)
    vr = vector(row["recovered"]["v"], f"{where}.recovered.v", d)
    top = max(abs(a) for a in y)
    tau_eff = tau + ROUNDOFF * u * (1 + top)
    oracle_round = ROUNDOFF * u * (1 + top)
    # 3. the answers and the noise
    for k in range(n):
        off = Iv.point(y[k], bits) - truth[k]
        require(off.upper_abs() <= tau_eff, f"{where}: answer {k} is not within τ_eff = τ + "
                f"8u(1 + max|ŷ|) of the true answer")
        require((off - eta[k]).upper_abs() <= oracle_round, f"{where}: the recorded noise of "
                f"answer {k} is not the answer's offset from the true answer")
        allow = 4 * u * (tau + abs(y[k]))
        require(abs(eta[k]) <= tau + allow, f"{where}: noise {k} exceeds τ")
        if mode != "random":
            require(abs(abs(eta[k]) - tau) <= allow, f"{where}: noise {k} is not ±τ")
        if signs is not None:
            require((eta[k] > 0) == (signs[k] > 0), f"{where}: noise {k} does not carry the "
                    f"worst-case sign {signs[k]}")
    # 4. the learner's rule
    require(tuple(vr) == tuple(y[:d]), f"{where}: v̂ is not the answers to the [e_i]")
    require(tau_eff < mu, f"{where}: τ_eff ≥ μ (tolerance-not-below-margin)")
    require(all(vi != 0 and abs(vi) >= mu - tau_eff for vi in vr),
            f"{where}: |v̂_i| < μ − τ_eff (margin-violated)")
    a, ab = A, A * b
    delta = tau_eff * (s_plus * b + (1 + a)) / (b * (mu - tau_eff))
    cap = CLIP[1] - CLIP[0]
    dmin = delta if delta.hi <= cap else (Iv.point(cap, bits) if delta.lo >= cap
                                          else Iv(delta.lo, cap, bits))
    low, high = s_minus - dmin, s_plus + dmin
    rule = []
    for i in range(d):
        for j in range(d):
            sh = (y[d + i * d + j] - a * vr[j]) / (b * vr[i])
            require(CLIP[0] <= sh <= CLIP[1], f"{where}: σ̂_{i + 1}{j + 1} was clipped "
                    f"(clipping-activated)")
            require(low.hi <= sh <= high.lo, f"{where}: σ̂_{i + 1}{j + 1} outside the range the "
                    f"assumptions allow (norm-bound-exceeded)")
            lo, hi = log_bounds(sh / (1 - sh), bits)
            w = Iv(lo, hi, bits) / ab
            rho = (1 << 10) * u * (1 + B + abs(Wr[i][j])) * (1 + B * B * (1 + top) / abs(vr[i]))
            require((w - Wr[i][j]).upper_abs() <= rho, f"{where}: Ŵ_{i + 1}{j + 1} is not the "
                    f"learner's σ⁻¹(σ̂)/(a·b) on these answers")
            rule.append(w)
    # 5. the bounds and the errors
    entry = dmin * LIPSCHITZ / ab
    slack = max(SLACK * u * (B + abs(x)) for r in Wr for x in r)
    bound_W = (entry + slack) * d
    stated_W, stated_v = rat(row["bound_W"], f"{where}.bound_W"), rat(row["bound_v"],
                                                                        f"{where}.bound_v")
    require(stated_W >= 0 and stated_v >= 0, f"{where}: a stated bound ε_W or ε_v is negative "
            f"(a norm bound compared through its square must be ≥ 0)")
    agree = Fraction(2) ** (AGREE_BITS - prec)
    require((bound_W - stated_W).upper_abs() <= agree * bound_W.hi, f"{where}: the stated ε_W "
            f"is not d·(5·min(δ_σ, p₊−p₋)/(a·b) + 16u(B + max|Ŵ|)) recomputed from its constants")
    require(abs(stated_v * stated_v - d * tau_eff * tau_eff) <= agree * d * tau_eff * tau_eff,
            f"{where}: the stated ε_v is not √d·τ_eff")
    err2 = sum((x - y_) ** 2 for rx, ry in zip(Wr, W) for x, y_ in zip(rx, ry))
    require(err2 <= stated_W * stated_W, f"{where}: ‖Ŵ − W‖_F > ε_W")
    rule2 = Iv.point(0, bits)
    for w, t in zip(rule, (x for r in W for x in r)):
        rule2 = rule2 + (w - t).square()
    require(rule2.hi <= (entry.lo * d) ** 2, f"{where}: the rule's Ŵ violates ε_W")
    ev2 = sum((x - t) ** 2 for x, t in zip(vr, v))
    require(ev2 <= stated_v * stated_v and ev2 <= d * tau_eff * tau_eff, f"{where}: ‖v̂ − v‖₂ > ε_v")
    require(sum(x * x for r in Wr for x in r) <= (B + stated_W) ** 2,
            f"{where}: ‖Ŵ‖_F > B + ε_W (norm-bound-exceeded)")
    return rule2, math.sqrt(err2 / (stated_W * stated_W))


def _tight(errors, F2):
    rows = [(t, e2) for t, e2 in errors if t <= TIGHT_TAU]
    require(rows, f"worst case: no τ ≤ {TIGHT_TAU}, the tightness is not checked")
    lo2, hi2 = (1 - TIGHT) ** 2, (1 + TIGHT) ** 2
    for t, e2 in rows:
        require(e2.lo >= lo2 * F2.hi * t * t and e2.hi <= hi2 * F2.lo * t * t,
                f"worst case: at τ = {t} the error is not within [{1 - TIGHT}, {1 + TIGHT}]·F·τ "
                f"(the signs do not attain the first-order worst case)")
    return (f"; the worst-case signs re-derived (first order, intervals) and attained: error ∈ "
            f"[0.9, 1.1]·F·τ at {len(rows)} τ ≤ 10⁻⁶, F = {math.sqrt(F2.mid()):.4g}")


def loglog_slope(pts, where: str, few: str, what: str) -> float:
    """The least-squares slope of the (log τ, log error) points ``pts``, required within
    SLOPE_TOLERANCE of 1 (a float statistic of the recorded errors): ``few`` is the message when fewer
    than two points, ``what`` names the slope in the message when it is off."""
    require(len(pts) >= 2, f"{where}: {few}")
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    require(sxx > 0, f"{where}: the τ do not differ")
    slope = sum((x - mx) * (y - my) for x, y in pts) / sxx
    require(abs(slope - 1) <= SLOPE_TOLERANCE, f"{what} {slope:.3f} is not within "
            f"{SLOPE_TOLERANCE} of 1")
    return slope


def _slope(errors):
    pts = [(math.log10(t), 0.5 * math.log10(e2.mid())) for t, e2 in errors if e2.mid() > 0]
    return loglog_slope(pts, "rows", "at least two τ with a non-zero error for the slope",
                        "the log-log slope of the error")


def params_p1_t61(p, checks):
    """One record per (d, mode), in order, each over the sizes' τ at the sizes' precision."""
    require(set(p) == {"d", "taus", "modes", "dps"}, "params: expected {d, taus, modes, dps}")
    ds, modes = p["d"], p["modes"]
    require(isinstance(ds, list) and ds and all(type(x) is int and 1 <= x <= MAX_DIM for x in ds),
            "params: d must be a list of dimensions")
    require(isinstance(modes, list) and modes and all(m in MODES for m in modes),
            "params: modes must be noise modes")
    taus = parse_taus(p["taus"])
    prec = prec_of(integer(p["dps"], "params.dps", 15, 1000))
    got = [(c.get("kind"), c.get("dim"), c.get("mode")) for c in checks if isinstance(c, dict)]
    require(got == [("noisy-single-head", d, m) for d in ds for m in modes],
            "params: the records do not cover d × modes in order")
    for c in checks:
        require(c.get("prec") == prec, f"params: a record's precision is not {prec} bits "
                f"(dps = {p['dps']})")
        rows = c.get("rows")
        require(isinstance(rows, list) and [r.get("tau") if isinstance(r, dict) else None
                                            for r in rows] ==
                [f"{t.numerator}/{t.denominator}" if t.denominator > 1 else str(t.numerator)
                 for t in taus], "params: a record's τ are not the sizes' τ in order")
