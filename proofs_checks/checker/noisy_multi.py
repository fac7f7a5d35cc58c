"""Check kind ``noisy-multi-head``: the P2 multi-head learner on answers off by at most τ, its
approximate-oracle constant C and its certified enclosures (P2 approximate-oracle bound;
docs/design.md §4.4), re-derived with exact rational and interval arithmetic
(:mod:`.interval`).

A record is one seeded real model (exact rationals: its float entries) with the bases U, X of
the run, the recorded C with its worst signs and the matching tolerance of the noise-free
run, and per τ and noise mode the answers the learner received, the noise in each (answer −
the oracle's noise-free mp value), the recovered heads and the matching tolerance used; per
certified τ the same with the enclosure balls (midpoint, radius) and the bar.

**This checker's own recovery** (:func:`recover`, the steps of P2's learner with H known,
written here from docs/design.md §4.3): for each copy-count family I(u, x) the type-(H, H)
rational interpolant through its 2H + 1 samples G(0) … G(2H) is solved *exactly* over Q (the
answers are rationals); its denominator's H roots are isolated as disjoint rational intervals
with certain sign changes (Newton in exact arithmetic from float hints, which only guide),
so all poles are real and simple; z = −1/r, c = z·P(r)/Q′(r), scores log z (certified log);
v = U⁻¹(K(u_i, x₁) − G₁(0)) exactly, G(0) = v·x for the other families; heads are matched
across families by the learner's rule |a − b| ≤ tol·(1 + |a| + |b|) at the recorded tolerance,
every decision certain (else the record is rejected) and every match unique; W_h =
U⁻¹S_hX⁻ᵀ, v_h = −U⁻¹c_h with exact inverses; Σ v_h must match v.

Checked (the cheap parts of 3 and 4 — answers, noise, balls — before C and the recoveries,
so that a forged answer costs nothing):

1. the schedule is rebuilt from U, X (:func:`.run_multi_head.schedule_queries`), det U,
   det X ≠ 0; every true answer is enclosed by intervals (e^s by a certified series);
2. *C*: the Jacobian of this checker's recovery map at the true answers, by finite
   differences with step 2^{−prec} (first order: the truncation is O(step·C²)); C = the
   largest row sum of |J|; the recorded C must agree to 10⁻⁶ and the recorded worst signs
   must be the signs of a row attaining it (free where |J_rk| ≤ 10⁻⁹·C);
3. per τ and mode: every received answer is within τ (plus the oracle's rounding) of the
   true answer, the noise is the answer's offset, ±τ in the adversarial and worst-case modes
   and with the worst signs in the latter; this checker's recovery of the received answers
   succeeds and the recorded heads agree with it to the mp rounding; its error (max |Δ| over
   W and v entries, the best pairing with the true heads) satisfies error ≤ 1.1·C·τ, and in
   the worst case error/(C·τ) ∈ [0.9, 1.1] (C attained), with a log-log slope within 0.1
   of 1 (a float statistic of exact errors);
4. per certified τ: answers and noise as in 3 (adversarial); the bar is at least every
   radius + |midpoint − reported| (exact); the true heads and this checker's recovery lie in
   the balls; its error ≤ bar; K = bar/τ ≥ 0.9·C.

Recorded only: that the balls enclose the recovery of *every* answer vector within ±τ (the
library's ball arithmetic, :mod:`exactattn.learners.p2.enclosure`), which matching tolerance
the learner chose, the rows where its conditions failed (``skipped``) and where the
enclosure stops existing (``stop``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import permutations

from .interval import Iv, down, softmax_average
from .linalg import det, solve_unique
from .noisy_single import MODES, loglog_slope, parse_taus, prec_of
from .parse import heads, integer, listed, matrix, only, rat, require, string, vector
from .run_multi_head import combo, families, schedule_queries

FIELDS = ("kind", "dim", "H", "prec", "model", "U", "X", "C", "signs", "tolerance", "rows",
          "skipped", "certified", "stop")
MAX_DIM, MAX_H, MAX_ROWS = 4, 4, 64
SLACK = Fraction(1, 10)
C_AGREE, SIGN_FREE = Fraction(1, 10 ** 6), Fraction(1, 10 ** 9)
ORACLE_ROUND = 64          # the oracle's own rounding allowance, in units u(1 + max|ŷ|)
RECOVERY_ROUND = 64        # the learner's mp rounding allowance, in units u(1 + C)(1 + max|ŷ|)


# ---------------------------------------------------------------------- polynomials
def _horner(coeffs, x):
    acc = Iv.point(0, x.bits) if isinstance(x, Iv) else Fraction(0)
    for c in reversed(coeffs):
        acc = acc * x + c
    return acc


def _derivative(coeffs):
    return [k * c for k, c in enumerate(coeffs)][1:]


def _float_roots(coeffs):
    """Approximate complex roots (Durand–Kerner on the monic polynomial; hints only)."""
    n = len(coeffs) - 1
    lead = coeffs[-1]
    try:
        a = [float(c / lead) for c in coeffs]
    except OverflowError:
        return None
    roots = [complex(0.4, 0.9) ** k for k in range(n)]
    for _ in range(500):
        new = []
        for i, r in enumerate(roots):
            p = 0j
            for c in reversed(a):
                p = p * r + c
            den = 1 + 0j
            for j, s in enumerate(roots):
                if j != i:
                    den *= (r - s)
            new.append(r - p / den if den != 0 else r + 1e-9)
        done = max(abs(x - y) for x, y in zip(new, roots)) <= 1e-15 * (1 + max(map(abs, new)))
        roots = new
        if done:
            break
    return roots


def real_roots(coeffs, bits):
    """The roots of Σ coeffs[i] m^i (degree n, exact rational coefficients) as n disjoint
    rational intervals, each with a certain sign change — so all n roots are real and simple
    — or None when that cannot be shown."""
    n = len(coeffs) - 1
    if n == 0:
        return []
    if coeffs[-1] == 0:
        return None
    hints = _float_roots(coeffs)
    if hints is None:
        return None
    dq = _derivative(coeffs)
    out = []
    for h in hints:
        if not all(math.isfinite(x) for x in (h.real, h.imag)) or \
                abs(h.imag) > 1e-6 * (1 + abs(h.real)):
            return None
        x = Fraction(h.real)
        for _ in range(60):
            slope = _horner(dq, x)
            if slope == 0:
                break
            step = _horner(coeffs, x) / slope
            x = down(x - step, bits + 8)
            if abs(step) <= Fraction(1, 1 << bits) * (1 + abs(x)):
                break
        delta = Fraction(1, 1 << (bits - 8)) * (1 + abs(x))
        lo, hi = down(x - delta, bits + 16), down(x + delta, bits + 16)
        a, b = _horner(coeffs, lo), _horner(coeffs, hi)
        if a == 0 or b == 0 or (a > 0) == (b > 0):
            return None
        out.append(Iv(lo, hi, bits))
    out.sort(key=lambda iv: iv.lo)
    if any(not p.hi < q.lo for p, q in zip(out, out[1:])):
        return None
    return out


# ---------------------------------------------------------------------- one family
class NotRecovered(Exception):
    """This checker's recovery fails on the answers (the message says where)."""


def solve_family(ys, H, bits):
    """Samples G(0…2H) → (K, [(score, residue)]) with intervals (module docstring)."""
    rows, rhs = [], []
    for m, y in enumerate(ys):
        pw = [Fraction(m) ** k for k in range(H + 1)]
        rows.append(pw + [-y * p for p in pw[1:]])
        rhs.append(y)
    sol = solve_unique(rows, rhs)
    if sol is None:
        raise NotRecovered("a family's type-(H, H) interpolation system is singular")
    P, Q = sol[:H + 1], [Fraction(1)] + sol[H + 1:]
    if H == 0:
        return P[0], []
    roots = real_roots(Q, bits)
    if roots is None:
        raise NotRecovered("a family's denominator does not have H isolated real simple roots")
    dQ = _derivative(Q)
    out = []
    for r in roots:
        if not r.hi < 0:
            raise NotRecovered("a pole z = −1/r is not certainly positive: not e^score")
        z = -r.inverse()
        c = z * _horner(P, r) / _horner(dQ, r)
        if c.sign() is None or c.sign() == 0:
            raise NotRecovered("a residue is not certainly non-zero")
        out.append((z.log(), c))
    return P[H] / Q[H], out


# ---------------------------------------------------------------------- matching
def close(a, b, tol):
    """The learner's matching rule |a − b| ≤ tol·(1 + |a| + |b|), decided with certainty."""
    diff = abs(a - b)
    if diff.hi <= tol * (1 + a.lower_abs() + b.lower_abs()):
        return True
    if diff.lo > tol * (1 + a.upper_abs() + b.upper_abs()):
        return False
    raise NotRecovered("a matching decision is not certain at this precision")


def match(ref, fam, sumfam, tol, shared_u, label):
    """For each reference head a the unique head b of ``fam`` such that ``sumfam`` has a head
    with score s_a + s_b and residue c_a + c_b (sum of u's) or c_a = c_b (shared u)."""
    chosen = []
    for s_a, c_a in ref:
        cands = []
        for b, (s_b, c_b) in enumerate(fam):
            if shared_u and not close(c_b, c_a, tol):
                continue
            want = c_a if shared_u else c_a + c_b
            if any(close(s_c, s_a + s_b, tol) and close(c_c, want, tol) for s_c, c_c in sumfam):
                cands.append(b)
        if len(cands) != 1:
            raise NotRecovered(f"matching {label}: {len(cands)} candidates for a reference head")
        chosen.append(cands[0])
    if len(set(chosen)) != len(chosen):
        raise NotRecovered(f"matching {label}: two reference heads matched the same head")
    return [fam[b] for b in chosen]


def _inverse(M):
    n = len(M)
    cols = [solve_unique(M, [Fraction(int(i == j)) for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def recover(U, X, H, answers, tol, bits, memo=None):
    """This checker's P2 recovery of the heads from exact answers (module docstring):
    [(W intervals, v intervals)] in the order of the reference family's poles.  ``memo``
    (a dict) keeps each family's solution by its samples across calls (the finite
    differences move one answer at a time: most families keep their samples)."""
    d = len(U)
    fams = families(d)
    per = 2 * H
    q0 = answers[0]
    solved = {}
    memo = {} if memo is None else memo

    def solve(idx, uk, xk, g0):
        ys = (g0,) + tuple(answers[1 + idx * per: 1 + (idx + 1) * per])
        if ys not in memo:
            memo[ys] = solve_family(ys, H, bits)
        solved[(uk, xk)] = memo[ys]

    for idx, (uk, xk, _) in enumerate(fams):
        if xk == (0,):
            solve(idx, uk, xk, q0)
    vu = [solved[((i,), (0,))][0] - q0 for i in range(d)]
    v = solve_unique(U, vu)
    for idx, (uk, xk, _) in enumerate(fams):
        if xk != (0,):
            solve(idx, uk, xk, sum((a * b for a, b in zip(v, combo(X, xk))), Fraction(0)))
    ref = solved[((0,), (0,))][1]
    col = [ref] + [match(ref, solved[((i,), (0,))][1], solved[((0, i), (0,))][1], tol, False,
                         f"I(u{i + 1}, x1)") for i in range(1, d)]
    S = [[[None] * d for _ in range(d)] for _ in range(H)]
    C = [[None] * d for _ in range(H)]
    for i in range(d):
        for a, (s, c) in enumerate(col[i]):
            S[a][i][0], C[a][i] = s, c
    for j in range(1, d):
        for i in range(d):
            got = match(col[i], solved[((i,), (j,))][1], solved[((i,), (0, j))][1], tol, True,
                        f"I(u{i + 1}, x{j + 1})")
            for a, (s, _) in enumerate(got):
                S[a][i][j] = s
    Ui, Xi = _inverse(U), _inverse(X)
    out = []
    for a in range(H):
        Y = [[sum((Ui[i][k] * S[a][k][j] for k in range(d)), Iv.point(0, bits))
              for j in range(d)] for i in range(d)]
        W = [[sum((Y[i][l] * Xi[j][l] for l in range(d)), Iv.point(0, bits)) for j in range(d)]
             for i in range(d)]
        va = [-sum((Ui[i][k] * C[a][k] for k in range(d)), Iv.point(0, bits)) for i in range(d)]
        out.append((W, va))
    for i in range(d):
        total = sum((h[1][i] for h in out), Iv.point(0, bits))
        if not close(total, Iv.point(v[i], bits), tol):
            raise NotRecovered("the heads' v_h do not sum to the v read from the constants")
    return out


def flat(hs):
    return [x for W, v in hs for x in [e for r in W for e in r] + list(v)]


def error_to(found, truth):
    """(lo, hi) of min over pairings of max |found − truth| over all entries (rationals or
    intervals on the found side)."""
    best = None
    for perm in permutations(range(len(truth))):
        lo = hi = Fraction(0)
        for a, b in enumerate(perm):
            for x, t in zip(flat([found[a]]), flat([truth[b]])):
                dx = x - t if isinstance(x, Iv) else Iv.point(x - t)
                lo, hi = max(lo, dx.lower_abs()), max(hi, dx.upper_abs())
        if best is None or hi < best[1]:
            best = (lo, hi)
    return best


# ---------------------------------------------------------------------- the record
def true_answers(model, queries, bits):
    out = []
    for toks in queries:
        xN = toks[-1]
        total = Iv.point(0, bits)
        for W, v in model:
            Wx = [sum((a * b for a, b in zip(r, xN)), Fraction(0)) for r in W]
            scores = [sum((a * b for a, b in zip(t, Wx)), Fraction(0)) for t in toks]
            values = [sum((a * b for a, b in zip(t, v)), Fraction(0)) for t in toks]
            total = total + (Iv.point(values[0], bits) if len(toks) == 1 else
                             softmax_average(scores, values, bits))
        out.append(total)
    return out


def _answers(row, where, n, truth, tau, u, mode, signs):
    """Item 3's answer and noise checks; the answers."""
    y = vector(row["answers"], f"{where}.answers", n)
    eta = vector(row["noise"], f"{where}.noise", n)
    top = max(abs(a) for a in y)
    rounding = ORACLE_ROUND * u * (1 + top)
    for k in range(n):
        off = Iv.point(y[k], truth[k].bits) - truth[k]
        require(off.upper_abs() <= tau + rounding, f"{where}: answer {k} is not within τ (plus "
                f"the oracle's rounding) of the true answer")
        require((off - eta[k]).upper_abs() <= rounding, f"{where}: the recorded noise of answer "
                f"{k} is not the answer's offset from the true answer")
        allow = 4 * u * (tau + abs(y[k]))
        require(abs(eta[k]) <= tau + allow, f"{where}: noise {k} exceeds τ")
        if mode != "random":
            require(abs(abs(eta[k]) - tau) <= allow, f"{where}: noise {k} is not ±τ")
        if mode == "worst-case":
            require((eta[k] > 0) == (signs[k] > 0), f"{where}: noise {k} does not carry the "
                    f"worst-case sign {signs[k]}")
    return y, top


def _recover_or_reject(U, X, H, y, tol, bits, where, memo=None):
    try:
        return recover(U, X, H, y, tol, bits, memo)
    except NotRecovered as e:
        from .parse import Rejected
        raise Rejected(f"{where}: this checker's recovery fails on the recorded answers ({e})")


def _constant(U, X, H, truth, tol, prec, bits, signs):
    """Item 2: (C interval, rows of |J| sums) from finite differences at the true answers."""
    a0 = [t.mid() for t in truth]
    h = Fraction(1, 1 << prec)
    memo = {}
    p0 = flat(_recover_or_reject(U, X, H, a0, tol, bits, "C", memo))
    cols = []
    for k in range(len(a0)):
        moved = list(a0)
        moved[k] += h
        p1 = flat(_recover_or_reject(U, X, H, moved, tol, bits, "C", memo))
        cols.append([(x1 - x0) / h for x0, x1 in zip(p0, p1)])
    rows = [[cols[k][r] for k in range(len(cols))] for r in range(len(p0))]
    sums = [(sum(j.lower_abs() for j in row), sum(j.upper_abs() for j in row)) for row in rows]
    lo, hi = max(s[0] for s in sums), max(s[1] for s in sums)
    free = SIGN_FREE * hi
    attained = [r for r, (_, s_hi) in enumerate(sums) if s_hi >= lo and all(
        j.upper_abs() <= free or j.sign() == sg for j, sg in zip(rows[r], signs))]
    require(attained, "signs: the recorded worst signs are not the signs of a Jacobian row "
            "attaining C (this checker's recovery map, finite differences)")
    return Iv(lo, hi, bits)


def check_noisy_multi_head(c, checks):
    """Items 1–4 of the module docstring."""
    only(c, FIELDS, "noisy-multi-head")
    d = integer(c["dim"], "dim", 1, MAX_DIM)
    H = integer(c["H"], "H", 1, MAX_H)
    prec = integer(c["prec"], "prec", 53, 4000)
    u = Fraction(1, 1 << (prec - 1))
    bits = max(256, 2 * prec + 64)
    model = heads(c["model"], d, "model", MAX_H)
    require(len(model) == H and len({W for W, _ in model}) == H and all(any(v) for _, v in model),
            f"model: expected {H} canonical heads")
    U, X = matrix(c["U"], "U", d, d), matrix(c["X"], "X", d, d)
    require(det(U) != 0 and det(X) != 0, "the bases U, X are singular")
    queries = schedule_queries(U, X, H)
    n = len(queries)
    truth = true_answers(model, queries, bits)
    signs = listed(c["signs"], "signs", n)
    require(len(signs) == n and all(type(s) is int and s in (1, -1) for s in signs),
            f"signs: expected {n} signs ±1")
    tol0 = rat(c["tolerance"], "tolerance")
    require(0 < tol0 < 1, "tolerance: a relative matching tolerance in (0, 1)")
    # the cheap checks of items 3 and 4 first (answers, noise, balls), then C and recoveries
    rows = listed(c["rows"], "rows", MAX_ROWS)
    parsed = []
    for k, row in enumerate(rows):
        where = f"rows[{k}]"
        only(row, ("tau", "mode", "answers", "noise", "recovered", "tolerance"), where)
        tau = rat(row["tau"], f"{where}.tau")
        mode = string(row["mode"], f"{where}.mode")
        require(tau > 0 and mode in MODES, f"{where}: τ > 0 and a noise mode")
        y, top = _answers(row, where, n, truth, tau, u, mode, signs)
        tol = rat(row["tolerance"], f"{where}.tolerance")
        require(0 < tol < 1, f"{where}: a relative matching tolerance in (0, 1)")
        rec = heads(row["recovered"], d, f"{where}.recovered", MAX_H)
        require(len(rec) == H, f"{where}: {len(rec)} recovered heads, expected {H}")
        parsed.append((where, tau, mode, y, top, tol, rec))
    cert = [_certified_cheap(row, f"certified[{k}]", d, H, n, truth, u, model)
            for k, row in enumerate(listed(c["certified"], "certified", MAX_ROWS))]
    string(c["stop"], "stop")
    listed(c["skipped"], "skipped", MAX_ROWS)
    # 2. C
    C = _constant(U, X, H, truth, tol0, prec, bits, signs)
    stated = rat(c["C"], "C")
    require(abs(stated - C.mid()) <= C_AGREE * C.hi, f"C: the recorded C is not the largest row "
            f"sum of |J| of this checker's recovery map (it finds {float(C.mid()):.6g})")
    # 3. the noisy rows
    worst, ratios = {}, []
    for where, tau, mode, y, top, tol, rec in parsed:
        found = _recover_or_reject(U, X, H, y, tol, bits, where)
        allow = RECOVERY_ROUND * u * (1 + C.hi) * (1 + top)
        require(error_to(found, rec)[1] <= allow, f"{where}: the recorded heads are not the "
                f"recovery of the recorded answers (to the mp rounding)")
        lo, hi = error_to(found, model)
        if mode == "worst-case":
            require(lo >= (1 - SLACK) * C.hi * tau and hi <= (1 + SLACK) * C.lo * tau,
                    f"{where}: error/(C·τ) is not within [{1 - SLACK}, {1 + SLACK}] (C not "
                    f"attained)")
            worst[tau] = (lo + hi) / 2
        else:
            require(hi <= (1 + SLACK) * C.lo * tau, f"{where}: error > (1 + {SLACK})·C·τ")
        ratios.append(float(hi / (C.lo * tau)))
    slope = _slope(worst) if worst else None
    # 4. the certified enclosures
    Ks = [_certified(row, U, X, H, bits, model, C, tol0) for row in cert]
    tail = (f"; worst case: error/(C·τ) ∈ [0.9, 1.1] at {len(worst)} τ, log-log slope "
            f"{slope:.3f}" if worst else "")
    enc = (f"; {len(cert)} certified τ: truth and this checker's recovery inside every ball, "
           f"error ≤ bar ≥ radius + |midpoint − reported|, K = bar/τ ∈ [{min(Ks):.3g}, "
           f"{max(Ks):.3g}] ≥ 0.9·C (that the balls hold for every answer vector within ±τ is "
           f"the library's, recorded)" if cert else "")
    return (f"noisy-multi-head d={d} H={H}: {n} queries = the schedule rebuilt from U, X; "
            f"C = {float(C.mid()):.6g} re-derived (finite differences of this checker's exact "
            f"recovery map at the true answers; worst signs a row attaining it); {len(rows)} "
            f"noisy runs: every answer within τ of the true answer (intervals), the recorded "
            f"heads = this checker's recovery of those answers, error ≤ 1.1·C·τ (largest "
            f"ratio {max(ratios, default=0):.4f}){tail}{enc}")


def _slope(worst):
    pts = [(math.log10(t), math.log10(e)) for t, e in sorted(worst.items()) if e > 0]
    return loglog_slope(pts, "worst case", "at least two τ for the slope",
                        "worst case: log-log slope")


def _ball(data, where):
    require(isinstance(data, list) and len(data) == 2, f"{where}: a ball is [midpoint, radius]")
    m, r = rat(data[0], f"{where}.mid"), rat(data[1], f"{where}.rad")
    require(r >= 0, f"{where}: a negative radius")
    return m, r


def _certified_cheap(row, where, d, H, n, truth, u, model):
    """Item 4 without a recovery: answers and noise, the bar against the balls, the truth in
    the balls; returns what :func:`_certified` needs."""
    only(row, ("tau", "answers", "noise", "reported", "enclosure", "bar"), where)
    tau = rat(row["tau"], f"{where}.tau")
    require(tau > 0, f"{where}: τ must be positive")
    y, _ = _answers(row, where, n, truth, tau, u, "adversarial", None)
    rep = heads(row["reported"], d, f"{where}.reported", MAX_H)
    enc = listed(row["enclosure"], f"{where}.enclosure", MAX_H)
    require(len(rep) == H and len(enc) == H, f"{where}: {H} reported heads and balls")
    balls = []
    for h, e in enumerate(enc):
        only(e, ("W", "v"), f"{where}.enclosure[{h}]")
        require(isinstance(e["W"], list) and len(e["W"]) == d and isinstance(e["v"], list) and
                len(e["v"]) == d, f"{where}.enclosure[{h}]: d×d and d balls")
        bw = [[_ball(x, f"{where}.enclosure[{h}].W") for x in listed(r, "W", d)] for r in e["W"]]
        require(all(len(r) == d for r in bw), f"{where}.enclosure[{h}]: d×d balls")
        balls.append(([b for r in bw for b in r]) + [_ball(x, f"{where}.enclosure[{h}].v")
                                                       for x in e["v"]])
    bar = rat(row["bar"], f"{where}.bar")
    need = min(max(r + abs(m - x) for a, b in enumerate(perm)
                   for (m, r), x in zip(balls[a], flat([rep[b]])))
               for perm in permutations(range(H)))
    require(bar >= need, f"{where}: the bar is below radius + |midpoint − reported| (each "
            f"reported head paired with a ball head)")
    inside = any(all(abs(t - m) <= r for a, b in enumerate(perm)
                     for (m, r), t in zip(balls[a], flat([model[b]])))
                 for perm in permutations(range(H)))
    require(inside, f"{where}: a true head lies outside the enclosure")
    return where, tau, y, balls, bar


def _certified(row, U, X, H, bits, model, C, tol0):
    """Item 4 with this checker's recovery; returns K = bar/τ (a float, for the finding)."""
    where, tau, y, balls, bar = row
    found = None
    tol = tol0
    while found is None and tol < Fraction(1, 20):
        try:
            found = recover(U, X, H, y, tol, bits)
        except NotRecovered:
            tol *= 10
    require(found is not None, f"{where}: this checker's recovery fails on the recorded answers")
    ok = any(all((x - m).upper_abs() <= r for a, b in enumerate(perm)
                 for (m, r), x in zip(balls[a], flat([found[b]])))
             for perm in permutations(range(H)))
    require(ok, f"{where}: this checker's recovery of the recorded answers lies outside the "
            f"enclosure")
    require(error_to(found, model)[1] <= bar, f"{where}: the error exceeds the bar")
    require(bar >= (1 - SLACK) * C.hi * tau, f"{where}: K = bar/τ < 0.9·C: an enclosure smaller "
            f"than the first-order error it must contain")
    return float(bar / tau)


def params_p2_approx(p, checks):
    """One record per (d, H), in order; its rows every mode × τ of the sizes (less those
    recorded as skipped); its certified τ a prefix of ball_taus, the stop named when short."""
    require(set(p) == {"dH", "taus", "modes", "ball_taus", "dps"},
            "params: expected {dH, taus, modes, ball_taus, dps}")
    dH = p["dH"]
    require(isinstance(dH, list) and dH and all(
        isinstance(x, list) and len(x) == 2 and all(type(a) is int and 1 <= a <= MAX_H for a in x)
        for x in dH), "params: dH must be a list of [d, H]")
    modes = p["modes"]
    require(isinstance(modes, list) and modes and all(m in MODES for m in modes),
            "params: modes must be noise modes")
    taus, ball = parse_taus(p["taus"]), parse_taus(p["ball_taus"], "params.ball_taus")
    prec = prec_of(integer(p["dps"], "params.dps", 15, 1000))
    require([(c.get("kind"), c.get("dim"), c.get("H")) if isinstance(c, dict) else None
             for c in checks] == [("noisy-multi-head", d, H) for d, H in dH],
            "params: the records do not cover dH in order")
    fmt = lambda t: str(t.numerator) if t.denominator == 1 else f"{t.numerator}/{t.denominator}"  # noqa: E731
    for c in checks:
        require(c.get("prec") == prec, f"params: a record's precision is not {prec} bits")
        rows, skipped = c.get("rows"), c.get("skipped")
        require(isinstance(rows, list) and isinstance(skipped, list) and
                all(isinstance(r, dict) for r in rows + skipped), "params: rows and skipped")
        got = sorted([(r.get("mode"), r.get("tau")) for r in rows + skipped], key=str)
        want = sorted([(m, fmt(t)) for m in modes for t in taus], key=str)
        require(got == want and len(skipped) < len(taus),
                "params: the rows (and those skipped) are not every mode × τ of the sizes")
        cert = c.get("certified")
        require(isinstance(cert, list) and cert and [r.get("tau") if isinstance(r, dict) else
                                                     None for r in cert] ==
                [fmt(t) for t in ball[:len(cert)]],
                "params: the certified τ are not a prefix of the sizes' ball_taus")
        require(len(cert) == len(ball) or c.get("stop"), "params: the enclosure stopped "
                "before the last ball τ without a recorded reason")
