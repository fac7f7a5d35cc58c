"""P2-approx: with answers off by at most τ, the multi-head learner's parameter error is at
most C·τ for a model- and query-dependent constant C (P2 approximate-oracle bound;
docs/design.md §4.4).  P2 does not publish C; here it is computed (:mod:`exactattn.learners.p2.sensitivity`).

For each (d, H) of the grid a seeded random real model is learned on mp through noisy
oracles, τ over decades towards 0.  C is the ∞→∞ norm of the Jacobian of the learner's
recovery map at the model's noise-free answers to the run's queries (finite differences at
twice the working precision).  Checked, at every τ where the conditions hold:

1. adversarial (±τ, random signs) and random (uniform) noise: measured max parameter error
   ≤ C·τ·(1 + 0.1);
2. worst-case signs (the sign pattern of the Jacobian row attaining C): the measured error over
   C·τ lies in [0.9, 1.1] — C is attained to first order, not just an upper bound;
3. the finite-difference check of C (all answers moved along the worst signs) agrees to
   10⁻⁶ relative, and the error's log-log slope against τ is within 0.1 of 1;
4. the conditions under which C is finite (pole separation, residues, conditioning of U, X)
   are reported, and hold at the smallest τ.

5. rigorous (certified ball arithmetic, :mod:`exactattn.learners.p2.enclosure`): the learner
   run on adversarial ±τ answers, told the precision τ, returns a certified enclosure of its
   heads valid for EVERY answer vector within ±τ.  Over τ rising by decades from the
   smallest until the enclosure stops existing (the balls can no longer certify a decision:
   the failure is named and reported), the true canonical heads lie in the enclosures, the
   measured error is ≤ the enclosure bar, and the certified constant K = bar/τ is at least
   C·(1 − 0.1) (an enclosure cannot be smaller than the first-order error it must contain);
   K and K/C are reported beside C.

The first-order bound is a limit statement as τ → 0; item 5 is not.

Certificate (kind ``noisy-multi-head``, one record per (d, H); checker
:mod:`proofs_checks.checker.noisy_multi`): the model and the bases U, X as exact rationals,
C, its worst signs and the matching tolerance of the noise-free run; per τ and mode every
answer the learner received, the noise in it (answer − the oracle's noise-free mp value),
the recovered heads and the matching tolerance used; per certified τ the same with the
enclosure balls (midpoint, radius) and the bar.  The checker re-derives, with exact
rational and interval arithmetic (e^s and log by certified series): the schedule from U, X;
every true answer, hence that each received answer is within τ of it (plus the oracle's
rounding) with ±τ and the worst signs where stated; its *own* recovery of the heads from the
received answers (exact rational interpolation, certified isolated real poles, log, the
learner's matching rule at the recorded tolerance — decisions certain or rejected —, exact
bases) — the recorded heads must agree with it to the mp rounding; C from its own
recovery map by finite differences at the true answers (the recorded C must agree to
10⁻⁶), the worst signs as a sign row of that Jacobian; then items 1–3 on its own errors and
C, and for item 5: the truth and its own recovery inside every ball, the bar at least
radius + |midpoint − reported|, error ≤ bar and K = bar/τ ≥ 0.9·C.  Recorded only: that the
library's ball arithmetic proves the enclosure for *every* answer vector within ±τ, the
matching tolerances chosen, and where the enclosure stops existing; C itself is a
first-order (finite-difference) quantity in both.
"""

from __future__ import annotations

from fractions import Fraction

from exactattn.analysis.noise_sweep import (loglog_slope, noise_free_constant, noisy_oracle,
                                            parse_taus)
from exactattn.arith.numbers import exact_fraction

from .certificates import heads_json, new_certificate, rational, vector_json
from .registry import Claim, Verdict, register
from exactattn.errors import ConditionsNotMet, LearningFailure

__all__ = ["CLAIM", "SLACK", "SLOPE_TOLERANCE"]

#: the "(1 + small)" of error ≤ C·τ·(1 + small), and the tightness window [1 − SLACK, 1 + SLACK]
SLACK = 0.1
SLOPE_TOLERANCE = 0.1


def _ratios(rows):
    return [(r["tau"], r["error"] / r["predicted"]) for r in rows
            if r["conditions_met"] and r["error"] is not None]


def _check_mode(verdict, out, label, worst_case):
    rows = [r for r in out["rows"] if r["conditions_met"]]
    ratios = _ratios(out["rows"])
    skipped = len(out["rows"]) - len(rows)
    if not rows:
        verdict.fail(f"{label}: the conditions hold at no τ of the sweep")
        return
    top = max(q for _, q in ratios)
    if worst_case:
        low = min(q for _, q in ratios)
        verdict.expect(1 - SLACK <= low and top <= 1 + SLACK,
                       f"{label}: error/(C·τ) ∈ [{float(low):.4f}, {float(top):.4f}] ⊂ "
                       f"[{1 - SLACK}, {1 + SLACK}] at {len(rows)} τ (C attained)",
                       f"{label}: error/(C·τ) ∈ [{float(low):.4f}, {float(top):.4f}]")
    else:
        verdict.expect(top <= 1 + SLACK, f"{label}: error ≤ C·τ·(1+{SLACK}) at {len(rows)} τ "
                       f"(largest ratio {float(top):.4f})",
                       f"{label}: error/(C·τ) = {float(top):.4f} > {1 + SLACK}")
    if skipped:
        verdict.notes.append(f"{label}: {skipped} τ with the conditions not met (reported, "
                             f"not counted)")
    return rows


def _exact_heads(heads):
    return [([[exact_fraction(x) for x in r] for r in W], [exact_fraction(x) for x in v])
            for W, v in heads]


def _answers_record(transcript, model, be):
    """The answers the learner received and the noise in each (answer − the oracle's
    noise-free mp value), exact."""
    answers = [exact_fraction(y) for _, y in transcript]
    noise = [y - exact_fraction(model([list(t) for t in toks], be))
             for (toks, _), y in zip(transcript, answers)]
    return {"answers": vector_json(answers), "noise": vector_json(noise)}


def sweep(d, H, taus, dps, seed, mode, sens):
    """The noise sweep of :func:`exactattn.analysis.noise_sweep.sweep_multi_head` (same model,
    bases, noise and rows) with, per τ, what the certificate records (``records``)."""
    from exactattn.arith import get_backend
    from exactattn.learners.p2.noisy import learn_multi_head_noisy
    from exactattn.learners.result.compare import parameter_error
    from exactattn.models.attention import random_multi_head
    be = get_backend("mp", dps)
    model = random_multi_head(d, H, seed=seed, kind="real")
    rows, records, skipped, bases = [], [], [], None
    for tau in taus:
        oracle = noisy_oracle(model, be, tau, mode, seed, sens)
        row = {"tau": tau, "predicted": sens.C * be.scalar(tau)}
        try:
            res = learn_multi_head_noisy(oracle, d, H, tau, seed=seed, sensitivity=sens)
        except ConditionsNotMet as e:
            rows.append(dict(row, error=None, conditions_met=False, holds=None,
                             flags=[e.reason], notes=[str(e)], queries=oracle.queries))
            skipped.append({"tau": rational(tau), "mode": mode, "reason": e.reason})
            continue
        err = parameter_error(model, res.heads, dps=dps)
        rows.append(dict(row, error=err, conditions_met=res.extra["conditions_met"],
                         holds=bool(err <= row["predicted"] * (1 + be.scalar(Fraction(1, 10)))),
                         flags=res.extra["flags"], notes=res.notes,
                         queries=res.queries, max_length=res.max_length))
        if not res.extra["conditions_met"]:
            skipped.append({"tau": rational(tau), "mode": mode, "reason": "conditions-not-met"})
            continue
        bases = (res.extra["U"], res.extra["X"])
        records.append(dict({"tau": rational(tau), "mode": mode},
                            **_answers_record(res.transcript, model, be),
                            recovered=heads_json(_exact_heads(res.heads)),
                            tolerance=rational(exact_fraction(res.extra["matching_tolerance"]))))
    return {"rows": rows, "records": records, "skipped": skipped, "bases": bases}


def _rigorous(verdict, d, H, sens, params, record=None):
    """Item 5 of the module docstring (``record``: the certificate record to fill)."""
    import mpmath
    from exactattn.learners.result.compare import parameter_error
    from exactattn.learners.p2.enclosure import Enclosure, enclosure_contains
    from exactattn.learners.multi_head import learn_multi_head
    from exactattn.models.attention import random_multi_head
    from exactattn.oracles.oracle import Additive, Oracle
    dps, seed = params["dps"], params["seed"]
    model = random_multi_head(d, H, seed=seed, kind="real")
    truth = [(h.W, h.v) for h in model.canonical().heads]
    label, rows, stop = f"d={d} H={H} certified", [], None
    for tau in parse_taus(params["ball_taus"]):
        orc = Oracle(model, backend="mp", dps=dps, noise=Additive(tau, "adversarial", seed))
        try:
            res = learn_multi_head(orc, d, heads=H, seed=seed)
        except LearningFailure as e:
            stop = f"τ = {float(tau):.0e}: {e.reason} ({str(e)[:120]})"
            break
        bar = res.error_bar
        if bar.method != "ball":
            stop = (f"τ = {float(tau):.0e}: the balls cannot certify a decision "
                    f"({bar.assumes.rsplit('(', 1)[-1].rstrip(')')}); only a first-order bar")
            break
        enc = Enclosure(bar.enclosure, [], bar.precision, bar.details["prec_bits"])
        err = parameter_error(model, res.heads, dps=2 * dps)
        K = bar.bound / mpmath.mpf(float(tau))
        rows.append((tau, err, bar.bound, K, enclosure_contains(enc, truth)))
        if record is not None:
            record["certified"].append(dict(
                {"tau": rational(tau)}, **_answers_record(res.transcript, model, orc.backend),
                reported=heads_json(_exact_heads(res.heads)),
                enclosure=[{"W": [[_ball(x) for x in r] for r in eW], "v": [_ball(x) for x in ev]}
                           for eW, ev in bar.enclosure],
                bar=rational(exact_fraction(bar.bound))))
    if not rows:
        verdict.fail(f"{label}: no certified enclosure at any τ ({stop})")
        return
    inside = all(ok and err <= b for _, err, b, _, ok in rows)
    verdict.expect(inside, f"{label}: truth inside the enclosure and error ≤ bar at "
                   f"{len(rows)} τ up to {float(rows[-1][0]):.0e}",
                   f"{label}: a measured error or a true head lies outside the enclosure")
    low = min(K for *_, K, _ in rows)
    verdict.expect(low >= sens.C * (1 - SLACK),
                   f"{label}: certified constant K = bar/τ ∈ [{float(low):.3g}, "
                   f"{float(max(K for *_, K, _ in rows)):.3g}] ≥ C = {float(sens.C):.3g} "
                   f"(K/C ≥ {float(low / sens.C):.3g})",
                   f"{label}: K = {float(low):.3g} < C = {float(sens.C):.3g}: an enclosure "
                   f"smaller than the first-order error")
    verdict.notes.append(f"{label}: the enclosure stops existing at "
                         f"{stop or 'no τ of the range'}")
    if record is not None:
        record["stop"] = stop or "no τ of the range"


def _ball(b):
    """An arb ball as [midpoint, radius], both exact dyadic rationals."""
    m, e = b.mid().man_exp()
    r, f = b.rad().man_exp()
    return [rational(Fraction(int(m)) * Fraction(2) ** int(e)),
            rational(Fraction(int(r)) * Fraction(2) ** int(f))]


def run(params) -> Verdict:
    from exactattn.models.attention import random_multi_head
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    taus = parse_taus(params["taus"])
    for d, H in params["dH"]:
        sens = noise_free_constant(d, H, params["dps"], params["seed"])
        model = random_multi_head(d, H, seed=params["seed"], kind="real")
        record = {"kind": "noisy-multi-head", "dim": d, "H": H, "prec": 0,
                  "model": heads_json(_exact_heads((h.W, h.v) for h in model.heads)),
                  "U": None, "X": None, "C": rational(exact_fraction(sens.C)),
                  "signs": list(sens.worst_signs),
                  "tolerance": rational(exact_fraction(sens.tolerance)), "rows": [],
                  "skipped": [], "certified": [], "stop": ""}
        _rigorous(verdict, d, H, sens, params, record)
        for mode in params["modes"]:
            out = sweep(d, H, taus, params["dps"], params["seed"], mode, sens)
            record["rows"] += out["records"]
            record["skipped"] += out["skipped"]
            if out["bases"] is not None:
                U, X = ([vector_json(exact_fraction(x) for x in r) for r in M]
                        for M in out["bases"])
                assert record["U"] in (None, U) and record["X"] in (None, X), "bases differ"
                record["U"], record["X"] = U, X
            label = f"d={d} H={H} {mode}"
            rows = _check_mode(verdict, out, label, mode == "worst-case")
            if mode != "worst-case" or not rows:
                continue
            slope = loglog_slope([(r["tau"], r["error"]) for r in rows])
            verdict.expect(sens.fd_check <= 1e-6 and slope is not None and
                           abs(slope - 1) <= SLOPE_TOLERANCE,
                           f"{label}: C = {float(sens.C):.4g} (finite-difference check "
                           f"{float(sens.fd_check):.1e}), log-log slope {slope:.3f}",
                           f"{label}: finite-difference check {sens.fd_check} or slope {slope}")
            met, reasons = sens.conditions(min(taus))
            verdict.expect(met, f"{label}: finite-C conditions: min pole separation "
                           f"{float(sens.min_pole_separation):.3g}, min |residue| "
                           f"{float(sens.min_residue):.3g}, cond U {float(sens.cond_U):.3g}, "
                           f"cond X {float(sens.cond_X):.3g}",
                           f"{label}: conditions fail at the smallest τ: {'; '.join(reasons)}")
        from exactattn.arith import get_backend
        record["prec"] = int(get_backend("mp", params["dps"]).ctx.prec)
        cert["checks"].append(record)
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="P2-approx",
    reference="P2 approximate-oracle bound",
    statement="answers within ±τ: multi-head parameter error ≤ C·τ·(1+o(1)) as τ → 0, with "
              "the model- and query-dependent C computed (and attained)",
    sizes={"quick": {"dH": [[2, 2]], "taus": "1e-12,1e-18,1e-24", "modes": ["adversarial",
                                                                             "worst-case"],
                     "ball_taus": "1e-24,1e-18,1e-14,1e-12,1e-10,1e-9,1e-8,1e-7,1e-6,1e-5,"
                                  "1e-4,1e-3",
                     "dps": 30, "seed": 0},
           "full": {"dH": [[2, 2], [3, 2], [3, 3]], "taus": "1e-10,1e-15,1e-20,1e-25,1e-30",
                    "ball_taus": "1e-40,1e-30,1e-25,1e-20,1e-16,1e-14,1e-12,1e-11,1e-10,"
                                 "1e-9,1e-8,1e-7,1e-6,1e-5,1e-4,1e-3",
                    "modes": ["adversarial", "random", "worst-case"], "dps": 50, "seed": 0}},
    run=run,
    needs=("exactattn.learners.p2.sensitivity",)))
