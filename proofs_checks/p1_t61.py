"""P1-T6.1: with answers off by at most τ, one head is learned from d² + d queries of length
≤ 2 with ‖Ŵ − W‖_F ≤ ε_W and ‖v̂ − v‖₂ ≤ ε_v, where τ = O(min{μ, ε_v/√d, μ·ε_W/(B²d)})
(P1 Thm 6.1; docs/design.md §4.4).

The constants hidden in P1's O are made explicit by the derivation in
:func:`exactattn.learners.p1.noisy.learn_single_head_noisy`: ε_v = √d·τ and
ε_W = d·B(15B + 10σ(1/2))·τ/(μ − τ).  For every d of the grid a seeded random real head is
learned through mp oracles with adversarial (±τ) and random (uniform in [−τ, τ]) noise over a
sweep of τ; B = ‖W‖_F(1 + 10⁻³) and μ = min|v_i|(1 − 10⁻³) are told to the learner.  Checked:

1. every measured error is within the bound, with no assumption flagged;
2. exactly d² + d queries, maximum length 2;
3. the error scales linearly in τ: the least-squares slope of log ‖Ŵ − W‖_F against log τ
   is within 0.1 of 1.

Not certified (real arithmetic at the stated precision); the bound itself is rigorous.
"""

from __future__ import annotations

from exactattn.analysis.noise_sweep import loglog_slope, parse_taus, sweep_single_head

from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "SLOPE_TOLERANCE"]

#: |slope − 1| allowed for the fitted log-log slope
SLOPE_TOLERANCE = 0.1


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


def run(params) -> Verdict:
    verdict = Verdict(True)
    taus = parse_taus(params["taus"])
    for d in params["d"]:
        for mode in params["modes"]:
            out = sweep_single_head(d, taus, params["dps"], params["seed"] + d, mode)
            _check_sweep(verdict, out, f"d={d} {mode}")
    verdict.notes.append("bounds: ε_v = √d·τ, ε_W = d·B(15B + 10σ(1/2))·τ/(μ − τ) (explicit "
                         "constants of P1's O; rigorous, not first-order)")
    return verdict


CLAIM = register(Claim(
    id="P1-T6.1",
    reference="P1 Thm 6.1",
    statement="answers within ±τ: d²+d queries of length ≤ 2 give ‖Ŵ−W‖_F ≤ ε_W, ‖v̂−v‖ ≤ ε_v "
              "with τ = O(min{μ, ε_v/√d, μ ε_W/(B²d)}); error linear in τ",
    sizes={"quick": {"d": [2, 3], "taus": "1e-4,1e-8,1e-12,1e-16", "modes": ["adversarial",
                                                                            "random"],
                     "dps": 40, "seed": 0},
           "full": {"d": [2, 4, 8], "taus": "1e-3,1e-6,1e-10,1e-15,1e-20,1e-25",
                    "modes": ["adversarial", "random"], "dps": 50, "seed": 0}},
    run=run,
    needs=("exactattn.learners.p1.noisy",)))
