"""Noise sweeps (docs/design.md §4.4): learn one seeded random model through oracles with additive
noise ±τ for a list of τ, and put the measured parameter error beside the predicted bound.

* :func:`sweep_single_head` — P1 Thm 6.1: ‖Ŵ − W‖_F against the theorem's ε_W and
  ‖v̂ − v‖₂ against ε_v, with B = ‖W‖_F·(1 + 10⁻³) and μ = min|v_i|·(1 − 10⁻³) told to the
  learner (valid bounds, not the exact values).
* :func:`sweep_multi_head` — the P2 approximate-oracle bound: max parameter error (over the
  matched canonical heads) against C·τ, C computed once at the model's noise-free answers to
  the run's queries (the same bases for every τ: same seed), the conditions evaluated per τ.

Every τ of a sweep gets the same noise pattern (same seed) scaled by τ, so the error's
dependence on τ is seen alone.  Used by ``exactattn noise`` and the claims P1-T6.1 and
P2-approx.  Errors are measured at the
working precision; floats appear only in the returned display rows.
"""

from __future__ import annotations

import math
import re
import sys
from fractions import Fraction

from ..arith import get_backend
from ..arith.numbers import NumberTooLarge, decimal_parts, parse_rational, shown
from ..errors import ConditionsNotMet
from ..learners.result.compare import parameter_error
from ..learners.p2.schedule import published_count
from ..models.attention import random_head, random_multi_head
from ..oracles.oracle import Additive, Oracle

__all__ = ["sweep_single_head", "sweep_multi_head", "loglog_slope", "parse_taus",
           "DEFAULT_TAUS", "WorstCaseNoise", "single_head_assumptions", "noise_free_constant"]

DEFAULT_TAUS = {"single-head": "1e-4,1e-8,1e-12,1e-16,1e-20",
                "multi-head": "1e-10,1e-15,1e-20,1e-25,1e-30"}


#: the largest float64, as an exact rational (reports and plots of a sweep are float64)
_FLOAT_MAX = Fraction(sys.float_info.max)
_FLOAT_TINY = Fraction(sys.float_info.min)


def parse_taus(text: str) -> list:
    """'1e-10,1e-20' → exact rationals [Fraction(1, 10**10), …] (decimal text or "p/q" in
    ASCII digits, no floats).  The text is checked before any number is built — digits and
    decimal exponent within the limits of :func:`~exactattn.arith.numbers.decimal_parts`
    ("1e-99999999" would take minutes as a Fraction) — and each τ must be 0 or a normal
    float64: the sweep reports errors, bounds and their ratio in float64."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if re.fullmatch(r"[+-]?[0-9]+/[0-9]+", part):
            tau = parse_rational(part, "τ")                 # digits within the limit
        else:
            try:
                man, exp = decimal_parts(part, "τ")         # digits and exponent within limits
            except NumberTooLarge:
                raise
            except ValueError:
                raise ValueError(f"{shown(part)} is not a number like 1e-10 (ASCII digits, no "
                                 f"underscores)") from None
            tau = Fraction(man) * Fraction(10) ** exp
        if tau < 0:
            raise ValueError(f"τ must be ≥ 0, got {part}")
        if tau > _FLOAT_MAX:
            raise ValueError(f"τ = {part} is beyond the float64 range (about 1.8e308) in which "
                             f"the sweep reports errors and bounds; give a smaller τ")
        if 0 < tau < _FLOAT_TINY:
            raise ValueError(f"τ = {part} is below the smallest normal float64 (about "
                             f"2.2e-308) in which the sweep reports errors and bounds; give a "
                             f"larger τ")
        out.append(tau)
    if not out:
        raise ValueError("give at least one τ")
    return out


def loglog_slope(points) -> float | None:
    """Least-squares slope of log error against log τ (display only; None with < 2 points)."""
    pts = [(math.log10(t), math.log10(e)) for t, e in points if t > 0 and e > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def _frobenius(be, A, B):
    return be.ctx.sqrt(sum((be.scalar(a) - be.scalar(b)) ** 2
                           for ra, rb in zip(A, B) for a, b in zip(ra, rb)))


def _norm2(be, a, b):
    return be.ctx.sqrt(sum((be.scalar(x) - be.scalar(y)) ** 2 for x, y in zip(a, b)))


def single_head_assumptions(be, head):
    """(B, μ) for a head: ‖W‖_F·(1 + 10⁻³) and min|v_i|·(1 − 10⁻³) at the backend's precision."""
    norm = be.ctx.sqrt(sum(be.scalar(x) ** 2 for row in head.W for x in row))
    mu = min(abs(be.scalar(x)) for x in head.v)
    return norm * (1 + be.scalar(Fraction(1, 1000))), mu * (1 - be.scalar(Fraction(1, 1000)))


def _silent(stage, done, total=None):
    pass


def _tau_stage(tau) -> str:
    """The progress stage for one τ (display only)."""
    return f"τ = {float(tau):.1e}"


def sweep_single_head(d: int, taus, dps: int = 50, seed: int = 0, mode: str = "adversarial",
                      progress=None):
    """P1 Thm 6.1 over τ: one row per τ with the measured errors, the theorem's bounds, their
    ratios, the query count and the assumption flags (module docstring).  ``progress``, if
    given, is called as ``progress(stage, done, total)`` once per τ."""
    progress = progress or _silent
    from ..learners.p1.noisy import learn_single_head_noisy
    be = get_backend("mp", dps)
    head = random_head(d, seed=seed, kind="real")
    B, mu = single_head_assumptions(be, head)
    rows = []
    for n, tau in enumerate(taus):
        progress(_tau_stage(tau), n, len(taus))
        oracle = Oracle(head, backend=be, noise=Additive(tau, mode, seed))
        res = learn_single_head_noisy(oracle, d, B, mu, tau)
        W, v = res.heads[0]
        eW, ev = _frobenius(be, W, head.W), _norm2(be, v, head.v)
        x = res.extra
        rows.append({"tau": tau, "error": eW, "bound": x["bound_W"], "error_v": ev,
                     "bound_v": x["bound_v"], "holds": bool(eW <= x["bound_W"] and
                                                            ev <= x["bound_v"]),
                     "conditions_met": x["conditions_met"], "flags": x["flags"],
                     "queries": res.queries, "max_length": res.max_length})
    return {"algorithm": "single-head", "dim": d, "heads": 1, "dps": dps, "seed": seed,
            "mode": mode, "norm_bound": B, "margin": mu, "rows": rows,
            "expected_queries": d * d + d}


class WorstCaseNoise:
    """Answers off by exactly τ·s_k, s_k = sign ∂p*/∂a_k for the parameter p* that attains C
    (P2 approximate-oracle bound): to first order this moves p* by C·τ, so the measured
    error over C·τ tends to 1 — C is attained, not only an upper bound.  The k-th query
    asked gets s_k, so the learner must ask the schedule in order (it does)."""

    def __init__(self, model, be, signs, tau):
        self.model, self.be, self.signs = model, be, signs
        self.tau, self.k = be.scalar(tau), 0

    def __call__(self, tokens):
        y = self.model(tokens, self.be) + self.tau * self.signs[self.k]
        self.k += 1
        return y


def noisy_oracle(model, be, tau, mode, seed, sens):
    """The oracle of one noise level (P2 approximate-oracle bound): the first-order worst-case
    signs of ``sens`` for mode "worst-case", else additive noise of ``mode``."""
    if mode == "worst-case":
        return Oracle(WorstCaseNoise(model, be, sens.worst_signs, tau), dim=model.dim, backend=be)
    return Oracle(model, backend=be, noise=Additive(tau, mode, seed))


def noise_free_constant(d: int, H: int, dps: int = 50, seed: int = 0):
    """The Sensitivity (C and its conditions; P2 approximate-oracle bound) of the sweep's
    model and queries at the noise-free answers."""
    from ..learners.p2.noisy import learn_multi_head_noisy
    from ..errors import ConditionsNotMet, LearningFailure
    model = random_multi_head(d, H, seed=seed, kind="real")
    try:
        clean = learn_multi_head_noisy(Oracle(model, backend="mp", dps=dps), d, H, 0, seed=seed)
    except LearningFailure as e:
        raise ConditionsNotMet(
            f"the noise-free run (d={d}, H={H}, dps {dps}, seed {seed}) that computes the "
            f"constant C failed ({e.reason}), so no bound C·τ can be stated for this model: "
            f"try another --seed, fewer heads or a larger --dps (it said: {e})",
            cause=e.reason) from None
    return clean.extra["sensitivity"]


def sweep_multi_head(d: int, H: int, taus, dps: int = 50, seed: int = 0,
                     mode: str = "adversarial", sensitivity=None, progress=None):
    """The P2 approximate-oracle bound over τ: one row per τ with the measured max parameter
    error, C·τ, their ratio and the conditions at τ; C from the noise-free answers
    (module docstring).  ``mode`` is "adversarial" (±τ, seeded random signs), "random"
    (uniform in [−τ, τ]) or "worst-case" (:class:`WorstCaseNoise`).  A τ at which the
    recovery breaks down gives a row with ``conditions_met`` False and the failure, not an
    error.  ``sensitivity`` reuses a :func:`noise_free_constant` computed before.
    ``progress``, if given, is called as ``progress(stage, done, total)``: the constant C,
    then once per τ."""
    from ..learners.p2.noisy import learn_multi_head_noisy
    progress = progress or _silent
    be = get_backend("mp", dps)
    model = random_multi_head(d, H, seed=seed, kind="real")
    if sensitivity is None:
        progress("constant C", 0, None)
    sens = sensitivity or noise_free_constant(d, H, dps, seed)
    rows = []
    for n, tau in enumerate(taus):
        progress(_tau_stage(tau), n, len(taus))
        oracle = noisy_oracle(model, be, tau, mode, seed, sens)
        row = {"tau": tau, "predicted": sens.C * be.scalar(tau)}
        try:
            res = learn_multi_head_noisy(oracle, d, H, tau, seed=seed, sensitivity=sens)
        except ConditionsNotMet as e:
            rows.append(dict(row, error=None, conditions_met=False, holds=None,
                             flags=[e.reason], notes=[str(e)], queries=oracle.queries))
            continue
        err = parameter_error(model, res.heads, dps=dps)
        rows.append(dict(row, error=err, conditions_met=res.extra["conditions_met"],
                         holds=bool(err <= row["predicted"] * (1 + be.scalar(Fraction(1, 10)))),
                         flags=res.extra["flags"], notes=res.notes,
                         queries=res.queries, max_length=res.max_length))
    return {"algorithm": "multi-head", "dim": d, "heads": H, "dps": dps, "seed": seed,
            "mode": mode, "C": sens.C, "sensitivity": sens, "rows": rows,
            "expected_queries": published_count(d, H)}
