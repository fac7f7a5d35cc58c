"""P1-T6.1: with answers off by at most τ, one head is learned from d² + d queries of length
≤ 2 with ‖Ŵ − W‖_F ≤ ε_W and ‖v̂ − v‖₂ ≤ ε_v, where τ = O(min{μ, ε_v/√d, μ·ε_W/(B²d)})
(P1 Thm 6.1; docs/design.md §4.4).

The bound checked is the project's own, derived in
:func:`exactattn.learners.p1.noisy.learn_single_head_noisy`: ε_v = √d·τ and
ε_W = d·B(15B + 10σ(1/2))·τ/(μ − τ).  P1 states only the rate; the project's constants match
P1's rate μ·ε_W/(B²d) only for B ≳ 1 (the 10σ(1/2)·B term dominates below).  For every d of
the grid a seeded random real head is learned through mp oracles over a sweep of τ, with
adversarial (±τ, random signs), random (uniform in [−τ, τ]) and worst-case noise;
B = ‖W‖_F(1 + 10⁻³) and μ = min|v_i|(1 − 10⁻³) are told to the learner.  Worst-case
(:func:`worst_signs`): the answers off by exactly ±τ with the signs that maximise the
first-order error ‖Ŵ − W‖_F — the sign of the derivative of each Ŵ_ij with respect to its
probe's answer, and the d signs of the v-answers (which every Ŵ_ij of row i and column j
shares) chosen by enumeration — put through the oracle of ``exactattn noise --mode
worst-case`` (:class:`exactattn.analysis.noise_sweep.WorstCaseNoise`).  Random signs reach a
fraction of the worst case only (at d = 4 about 0.23 of the bound against 0.40), so a bound
too small by a factor 3 would pass them.  Checked:

1. every measured error is within the bound, with no assumption flagged; the ratio attained
   by the worst-case signs is reported;
2. exactly d² + d queries, maximum length 2;
3. the error scales linearly in τ: the least-squares slope of log ‖Ŵ − W‖_F against log τ
   is within 0.1 of 1;
4. worst case: the measured error over its first-order prediction F·τ (the same formula)
   lies in [0.9, 1.1] at τ ≤ 10⁻⁶ — the signs attain what they were chosen for.

Certificate (kind ``noisy-single-head``, one record per (d, mode); checker
:mod:`proofs_checks.checker.noisy_single`): the head as exact rationals (its float entries),
B, μ, the probe scale b and the mp precision; the d² + d queries; per τ every answer the
learner received and the noise in it (answer − the oracle's noise-free mp value), all exact
rationals; the recovered Ŵ, v̂ and the stated bounds; for the worst case the signs and F.
The checker re-derives, with rational interval arithmetic only (e^s by a certified series):
the schedule from (d, b); every true answer, hence that each received answer is within the
learner's τ_eff of it and that the noise is ±τ (or within ±τ) with the worst-case signs;
the learner's rule σ̂ → clip → σ⁻¹ on the received answers (the recorded Ŵ must agree with it
to the mp rounding); the assumption checks (no clipping, margin, norm); the bounds from
their constants (Lipschitz 5 ≥ max 1/(p(1−p)) on the clip, σ(±1/2) inside it); the errors
‖Ŵ − W‖_F, ‖v̂ − v‖₂ exactly against them; the worst-case signs and F (intervals) and the
tightness window; the log-log slope (a float statistic of its own exact errors).  What it
does not re-derive: the derivation of the bound (the proof in
:func:`exactattn.learners.p1.noisy.learn_single_head_noisy`), which the instance only
samples.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from exactattn.analysis.noise_sweep import (WorstCaseNoise, loglog_slope, parse_taus,
                                            single_head_assumptions)
from exactattn.arith.numbers import exact_fraction

from .certificates import new_certificate, rational, vector_json
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "SLOPE_TOLERANCE", "worst_signs", "sweep_worst_case"]

#: |slope − 1| allowed for the fitted log-log slope
SLOPE_TOLERANCE = 0.1
#: worst case: measured / first-order error within [1 − TIGHT, 1 + TIGHT] at τ ≤ TIGHT_TAU
TIGHT, TIGHT_TAU = 0.1, Fraction(1, 10 ** 6)


def worst_signs(W, v, B):
    """(signs in the learner's query order, F) for a head (W, v) and the bound B told to the
    learner: to first order, with η the answer errors (|η| = τ) and σ_ij = σ(W_ij/(2B)),
    Ŵ_ij − W_ij = k_ij (η_ij − a·η_j − σ_ij·b·η_i)/(b·v_i), k_ij = 1/(σ_ij(1 − σ_ij)·a·b),
    a = 1/2, b = 1/B.  Given the v-signs s, η_ij = −τ·sign(a·s_j + σ_ij·b·s_i) maximises every
    entry, |ΔŴ_ij| = |k_ij/(b·v_i)|·τ·(1 + |a·s_j + σ_ij·b·s_i|); s maximises the sum of
    squares over {±1}^d (s and −s are equivalent).  F is the first-order ‖Ŵ − W‖_F/τ.
    Floats: the signs and F choose and predict; every error is measured at the mp
    precision."""
    d, a, b = len(v), 0.5, 1 / float(B)
    sig = [[1 / (1 + math.exp(-a * b * float(W[i][j]))) for j in range(d)] for i in range(d)]
    gain = [[1 / (sig[i][j] * (1 - sig[i][j]) * a * b * b * abs(float(v[i])))
             for j in range(d)] for i in range(d)]
    best = None
    for rest in itertools.product((1, -1), repeat=d - 1):
        s = (1,) + rest
        total = sum((gain[i][j] * (1 + abs(a * s[j] + sig[i][j] * b * s[i]))) ** 2
                    for i in range(d) for j in range(d))
        if best is None or total > best[0]:
            best = (total, s)
    total, s = best
    signs = list(s) + [-1 if a * s[j] + sig[i][j] * b * s[i] > 0 else 1
                       for i in range(d) for j in range(d)]
    return signs, math.sqrt(total)


def sweep_worst_case(d, taus, dps=50, seed=0):
    """The noise sweep with the worst-case signs (same head, same B and μ, same rows as
    :func:`exactattn.analysis.noise_sweep.sweep_single_head`; each row adds the first-order
    prediction)."""
    return _sweep(d, taus, dps, seed, "worst-case")


def _sweep(d, taus, dps, seed, mode):
    """One seeded real head learned at every τ through an mp oracle with ``mode`` noise
    (adversarial / random: :class:`exactattn.oracles.oracle.Additive`, as
    ``sweep_single_head``; worst-case: :class:`WorstCaseNoise` with :func:`worst_signs`).
    The rows of the sweep, plus what the certificate records (``record``)."""
    from exactattn.arith import get_backend
    from exactattn.learners.p1.noisy import learn_single_head_noisy
    from exactattn.models.attention import MultiHeadAttention, random_head
    from exactattn.oracles.oracle import Additive, Oracle
    be = get_backend("mp", dps)
    head = random_head(d, seed=seed, kind="real")
    B, mu = single_head_assumptions(be, head)
    signs, F = worst_signs(head.W, head.v, B) if mode == "worst-case" else (None, None)
    clean = MultiHeadAttention([head])
    rows, recs = [], []
    for tau in taus:
        if mode == "worst-case":
            oracle = Oracle(WorstCaseNoise(head, be, signs, tau), dim=d, backend=be)
        else:
            oracle = Oracle(head, backend=be, noise=Additive(tau, mode, seed))
        res = learn_single_head_noisy(oracle, d, B, mu, tau)
        W, v = res.heads[0]
        eW = be.ctx.sqrt(sum((be.scalar(x) - be.scalar(y)) ** 2
                             for rx, ry in zip(W, head.W) for x, y in zip(rx, ry)))
        ev = be.ctx.sqrt(sum((be.scalar(x) - be.scalar(y)) ** 2 for x, y in zip(v, head.v)))
        x = res.extra
        row = {"tau": tau, "error": eW, "bound": x["bound_W"], "error_v": ev,
               "bound_v": x["bound_v"], "holds": bool(eW <= x["bound_W"] and
                                                      ev <= x["bound_v"]),
               "conditions_met": x["conditions_met"], "flags": x["flags"],
               "queries": res.queries, "max_length": res.max_length}
        if F is not None:
            row["first_order"] = F * float(tau)
        rows.append(row)
        recs.append(_row_record(tau, res, clean, be))
    out = {"algorithm": "single-head", "dim": d, "mode": mode, "rows": rows}
    if F is not None:
        out["first_order_constant"] = F
    queries = recs[0].pop("queries")
    assert all(r.pop("queries") == queries for r in recs[1:]), "the schedule depends on τ"
    out["record"] = {"kind": "noisy-single-head", "dim": d, "mode": mode,
                     "prec": int(be.ctx.prec),
                     "model": {"W": [vector_json(r) for r in head.W],
                               "v": vector_json(head.v)},
                     "B": rational(exact_fraction(B)), "mu": rational(exact_fraction(mu)),
                     "b": rational(exact_fraction(res.extra["b"])), "queries": queries,
                     "rows": recs}
    if F is not None:
        out["record"].update(signs=list(signs), first_order=rational(Fraction(F)))
    return out


def _row_record(tau, res, clean, be):
    """One τ of a record: the answers the learner received and the noise in each (answer −
    the oracle's noise-free mp value, exact), the recovered head and the stated bounds."""
    tokens = [[[exact_fraction(x) for x in t] for t in toks] for toks, _ in res.transcript]
    answers = [exact_fraction(y) for _, y in res.transcript]
    noise = [y - exact_fraction(clean([list(t) for t in toks], be))
             for (toks, _), y in zip(res.transcript, answers)]
    W, v = res.heads[0]
    x = res.extra
    return {"tau": rational(tau), "queries": [[vector_json(t) for t in q] for q in tokens],
            "answers": vector_json(answers), "noise": vector_json(noise),
            "recovered": {"W": [vector_json(exact_fraction(a) for a in r) for r in W],
                          "v": vector_json(exact_fraction(a) for a in v)},
            "bound_W": rational(exact_fraction(x["bound_W"])),
            "bound_v": rational(exact_fraction(x["bound_v"])),
            "flags": list(x["flags"])}


def _check_sweep(verdict, out, label):
    rows = out["rows"]
    d = out["dim"]
    bad = [r for r in rows if not r["holds"] or r["flags"]]
    worst = max(r["error"] / r["bound"] for r in rows)
    worst_v = max(r["error_v"] / r["bound_v"] for r in rows)
    verdict.expect(not bad, f"{label}: ‖Ŵ−W‖_F ≤ ε_W and ‖v̂−v‖₂ ≤ ε_v at all {len(rows)} τ "
                   f"(largest ratios {float(worst):.3f}, {float(worst_v):.3f})",
                   f"{label}: bound violated or assumption flagged at τ = "
                   f"{', '.join(str(float(r['tau'])) for r in bad)}")
    counts = {(r["queries"], r["max_length"]) for r in rows}
    verdict.expect(counts == {(d * d + d, 2)}, f"{label}: {d * d + d} = d²+d queries of length 2",
                   f"{label}: queries/lengths {sorted(counts)}, expected ({d * d + d}, 2)")
    slope = loglog_slope([(r["tau"], r["error"]) for r in rows])
    verdict.expect(slope is not None and abs(slope - 1) <= SLOPE_TOLERANCE,
                   f"{label}: log-log slope of the W error {slope:.3f} ≈ 1",
                   f"{label}: log-log slope {slope} is not within {SLOPE_TOLERANCE} of 1")


def _check_tight(verdict, out, label):
    """Item 4: the worst-case signs attain their first-order prediction."""
    ratios = [float(r["error"]) / r["first_order"] for r in out["rows"]
              if r["tau"] <= TIGHT_TAU and r["first_order"] > 0]
    if not ratios:
        verdict.notes.append(f"{label}: no τ ≤ {float(TIGHT_TAU):g} in the sweep: the "
                             f"first-order tightness is not checked")
        return
    lo, hi = min(ratios), max(ratios)
    verdict.expect(1 - TIGHT <= lo and hi <= 1 + TIGHT,
                   f"{label}: error / first-order prediction ∈ [{lo:.4f}, {hi:.4f}] at "
                   f"{len(ratios)} τ ≤ {float(TIGHT_TAU):g} (the signs attain the first-order "
                   f"worst case F·τ, F = {out['first_order_constant']:.4g})",
                   f"{label}: error / first-order prediction ∈ [{lo:.4f}, {hi:.4f}], not "
                   f"within {TIGHT} of 1")


def run(params) -> Verdict:
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    taus = parse_taus(params["taus"])
    for d in params["d"]:
        for mode in params["modes"]:
            out = _sweep(d, taus, params["dps"], params["seed"] + d, mode)
            _check_sweep(verdict, out, f"d={d} {mode}")
            if mode == "worst-case":
                _check_tight(verdict, out, f"d={d} {mode}")
            cert["checks"].append(out["record"])
    verdict.notes.append("bounds: ε_v = √d·τ, ε_W = d·B(15B + 10σ(1/2))·τ/(μ − τ) (the "
                         "project's own constants, matching P1's rate only for B ≳ 1; "
                         "rigorous, not first-order)")
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="P1-T6.1",
    reference="P1 Thm 6.1",
    statement="answers within ±τ: d²+d queries of length ≤ 2 give ‖Ŵ−W‖_F ≤ ε_W, ‖v̂−v‖ ≤ ε_v "
              "with τ = O(min{μ, ε_v/√d, μ ε_W/(B²d)}); error linear in τ",
    sizes={"quick": {"d": [2, 3], "taus": "1e-4,1e-8,1e-12,1e-16",
                     "modes": ["adversarial", "random", "worst-case"],
                     "dps": 40, "seed": 0},
           "full": {"d": [2, 4, 8], "taus": "1e-3,1e-6,1e-10,1e-15,1e-20,1e-25",
                    "modes": ["adversarial", "random", "worst-case"], "dps": 50, "seed": 0}},
    run=run,
    needs=("exactattn.learners.p1.noisy",)))
