"""Learning from approximate oracles (docs/design.md §4.4): every answer is off by at most τ.

* :func:`learn_single_head_noisy` — P1 Thm 6.1: one head from d² + d queries of length ≤ 2
  with scaled probes and a clipped inverse sigmoid, and an explicit, rigorous error bound
  computed from (B, μ, τ, d).
* :func:`learn_multi_head_noisy` — the P2 multi-head learner run on noisy answers, with the
  P2 approximate-oracle constant C computed for the run (:mod:`exactattn.learners.p2.sensitivity`) and
  the predicted error C·τ.

Neither learner presents an answer as good when the assumptions behind its bound fail: the
violations are named in ``result.notes`` and ``result.extra["flags"]`` with
``result.extra["conditions_met"] = False``, and ``strict=True`` raises
:class:`~exactattn.errors.ConditionsNotMet` instead.  A recovery that breaks down
altogether under the noise raises ConditionsNotMet naming the underlying failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._typing import BackendLike, Number, OracleLike
    from ..result import LearnResult

import time
from fractions import Fraction

from ...errors import ConditionsNotMet
from .session import Session, check_dim, unit
from ..result import LearnResult

__all__ = ["learn_single_head_noisy", "p1_bounds", "SIGMA_CLIP",
           "LIPSCHITZ", "PROBE_A"]

#: clipping interval [p₋, p₊] of σ̂: 1/(p(1 − p)) ≤ 5 there (p(1 − p) = 1/5 at (1 ± 1/√5)/2)
SIGMA_CLIP = (Fraction(2764, 10000), Fraction(7236, 10000))
#: Lipschitz constant of σ⁻¹(p) = log(p/(1 − p)) on SIGMA_CLIP: max 1/(p(1−p)) = 4.99992… ≤ 5
LIPSCHITZ = 5
#: the probe scale a of P1 Thm 6.1 (the other scale is b = 1/B)
PROBE_A = Fraction(1, 2)


# ---------------------------------------------------------------------- P1 Thm 6.1
def _unit_roundoff(be):
    return be.ctx.eps if be.name == "mp" else be.scalar(2.0 ** -52)


def _sigma(be, z):
    return 1 / (1 + be.exp(-z))


def _short(x) -> str:
    import mpmath
    return mpmath.nstr(x, 6)


def _sqrt(be, x):
    return be.ctx.sqrt(x) if be.name == "mp" else x ** 0.5


def p1_bounds(be, d: int, norm_bound, margin, tolerance):
    """The a-priori error bounds of P1 Thm 6.1 for answers within ±τ (derivation in
    :func:`learn_single_head_noisy`), as backend numbers:

    * ``v_entry`` = τ, ``v`` = √d·τ (‖v̂ − v‖₂);
    * ``sigma`` = δ_σ = τ(1 + a + b·σ₊)/(b(μ − τ)), capped at p₊ − p₋ by the clipping;
    * ``W_entry`` = 5·δ_σ/(a·b), ``W`` = d·W_entry (‖Ŵ − W‖_F);

    with a = 1/2, b = 1/B, σ₊ = σ(1/2).  For τ ≥ μ only the clipping cap remains."""
    a, b = be.scalar(PROBE_A), 1 / be.scalar(norm_bound)
    tau, mu = be.scalar(tolerance), be.scalar(margin)
    lo, hi = (be.scalar(p) for p in SIGMA_CLIP)
    cap = hi - lo
    sigma_plus = _sigma(be, a)
    delta = tau * (1 + a + b * sigma_plus) / (b * (mu - tau)) if mu > tau else cap
    delta = min(delta, cap)
    w_entry = LIPSCHITZ * delta / (a * b)
    return {"v_entry": tau, "v": _sqrt(be, be.scalar(d)) * tau, "sigma": delta,
            "W_entry": w_entry, "W": d * w_entry}


def _probe(be, d, i, j, a, b):
    """P1 Thm 6.1 query for entry (i, j): [(b·e_i + a·e_j), a·e_j]; logit gap a·b·W_ij."""
    first = [b * x + a * y for x, y in zip(unit(d, i), unit(d, j))]
    return [first, [a * y for y in unit(d, j)]]


def _clip(x, lo, hi):
    return min(max(x, lo), hi)


class _Flags:
    """Violated assumptions (names) and explanatory notes, collected during a run."""

    def __init__(self):
        self.names, self.notes = [], []

    def add(self, name, note):
        if name not in self.names:
            self.names.append(name)
        self.notes.append(note)


def learn_single_head_noisy(oracle: OracleLike, dim: int, norm_bound: Number, margin: Number,
                            tolerance: Number, backend: BackendLike | None = None,
                            dps: int | None = None, strict: bool = False) -> LearnResult:
    """Learn one head (W, v) from d² + d answers that are each off by at most τ, with a
    guaranteed error bound (P1 Thm 6.1; docs/design.md §4.4).  Assumptions: ‖W‖_F ≤ B = ``norm_bound``
    and |v_i| ≥ μ = ``margin`` for every i; ``tolerance`` = τ.

    Algorithm.  v̂_i = answer to [e_i] (d queries).  For each (i, j) the query
    [(b·e_i + a·e_j), a·e_j], a = 1/2, b = 1/B, has logit gap a·b·W_ij ∈ [−1/2, 1/2] and the
    answer y = a·v_j + σ(a·b·W_ij)·b·v_i; σ̂ = (ŷ − a·v̂_j)/(b·v̂_i) is clipped to
    [p₋, p₊] = [0.2764, 0.7236] and Ŵ_ij = log(σ̂/(1 − σ̂))/(a·b).  d² + d queries of
    length ≤ 2, non-adaptive.

    Error bound (rigorous for answers within ±τ; returned in ``extra``).  Write η for the
    answer errors, |η| ≤ τ, σ = σ(a·b·W_ij), σ₊ = σ(1/2).

    1. v̂_i = v_i + η_i: |v̂_i − v_i| ≤ τ, so ‖v̂ − v‖₂ ≤ ε_v = √d·τ.
    2. Exactly, σ̂ − σ = (η_ij − a·η_j − σ·b·η_i)/(b·v̂_i).  With |v̂_i| ≥ |v_i| − τ ≥ μ − τ
       and σ ≤ σ₊ (|a·b·W_ij| ≤ ‖W‖_F/(2B) ≤ 1/2):
       |σ̂ − σ| ≤ δ_σ = τ(1 + a + b·σ₊)/(b(μ − τ)).  No term is dropped: this is not a
       first-order estimate.
    3. σ ∈ [σ(−1/2), σ(1/2)] = [0.3775, 0.6225] ⊂ [p₋, p₊], and clipping to an interval that
       contains σ cannot move σ̂ away from it: |clip(σ̂) − σ| ≤ min(δ_σ, p₊ − p₋).
    4. (σ⁻¹)'(p) = 1/(p(1 − p)) ≤ 1/(p₋p₊) = 4.99992… ≤ 5 on [p₋, p₊] (both points lie
       there): |Ŵ_ij·a·b − W_ij·a·b| ≤ 5·min(δ_σ, p₊ − p₋).
    5. |Ŵ_ij − W_ij| ≤ ε_entry = 5·min(δ_σ, p₊ − p₋)/(a·b), which for a = 1/2, b = 1/B is
       B(15B + 10σ₊)·τ/(μ − τ) below the cap; ‖Ŵ − W‖_F ≤ ε_W = d·ε_entry.  This is
       P1's τ = O(min{μ, ε_v/√d, μ·ε_W/(B²d)}) with the constants made explicit.

    The learner's own rounding (unit roundoff u, a few operations per entry) is covered by
    using τ + 8u(1 + max|ŷ|) for τ and adding 16u(B + |Ŵ_ij|) per entry — generous.
    ``extra["posterior_bound_W"]`` is the same bound with the observed |v̂_i| − τ in place
    of μ − τ (it needs only ‖W‖_F ≤ B).

    Assumption checks (``extra["flags"]``; ``strict=True`` raises ConditionsNotMet):
    ``tolerance-not-below-margin`` (τ ≥ μ), ``margin-violated`` (some |v̂_i| < μ − τ, which
    proves |v_i| < μ), ``clipping-activated`` (some σ̂ outside [p₋, p₊]: noise beyond the
    theorem's regime or a violated assumption), ``norm-bound-exceeded`` (‖Ŵ‖_F > B + ε_W, or
    some σ̂ outside the range [σ(−1/2) − δ_σ, σ(1/2) + δ_σ] the assumptions allow — either
    proves an assumption false).  ‖Ŵ‖_F between B and B + ε_W is only noted.
    """
    d = check_dim(dim)
    start = time.perf_counter()
    B, mu, tau0 = _check_bounds(norm_bound, margin, tolerance)
    s = Session(oracle, d, backend, dps)
    if s.exact:
        raise ValueError("the noisy learner runs on the mp or float backend")
    be = s.be
    B, mu, tau0 = be.scalar(B), be.scalar(mu), be.scalar(tau0)
    a, b = be.scalar(PROBE_A), 1 / B
    v_hat = [s.ask([unit(d, i)]) for i in range(d)]
    answers = [[s.ask(_probe(be, d, i, j, a, b)) for j in range(d)] for i in range(d)]
    u = _unit_roundoff(be)
    tau = tau0 + 8 * u * (1 + max(abs(y) for y in v_hat + [y for r in answers for y in r]))
    flags = _Flags()
    sigma_hat = [[_sigma_hat(be, answers[i][j], v_hat[i], v_hat[j], a, b)
                  for j in range(d)] for i in range(d)]
    W_hat = [[_entry(be, sigma_hat[i][j], a, b) for j in range(d)] for i in range(d)]
    bounds = p1_bounds(be, d, B, mu, tau)
    slack = [[16 * u * (B + abs(x)) for x in row] for row in W_hat]
    bounds["W_entry"] += max(x for row in slack for x in row)
    bounds["W"] = d * bounds["W_entry"]
    _check_assumptions(be, flags, v_hat, sigma_hat, W_hat, B, mu, tau, bounds)
    result = LearnResult(
        algorithm="single-head-noisy", dim=d, backend=be.name, heads=[(W_hat, v_hat)],
        queries=s.queries, max_length=s.max_length, expected_queries=d * d + d,
        expected_max_length=2, transcript=list(s.transcript), notes=list(flags.notes),
        extra={"norm_bound": B, "margin": mu, "tolerance": tau0, "effective_tolerance": tau,
               "a": a, "b": b, "bound_v": bounds["v"], "bound_v_entry": bounds["v_entry"],
               "bound_sigma": bounds["sigma"], "bound_W": bounds["W"],
               "bound_W_entry": bounds["W_entry"],
               "posterior_bound_W": _posterior(be, d, B, tau, v_hat, slack),
               "sigma_hat": sigma_hat, "flags": list(flags.names),
               "conditions_met": not flags.names})
    result.seconds = time.perf_counter() - start
    if strict and flags.names:
        raise ConditionsNotMet("P1 Thm 6.1 assumptions fail: " + "; ".join(flags.notes),
                               flags=list(flags.names), result=result)
    return result


def _check_bounds(B, mu, tau):
    for name, x in (("norm_bound", B), ("margin", mu)):
        if not x > 0:
            raise ValueError(f"{name} must be positive, got {x!r}")
    return B, mu, _check_tolerance(tau)


def _check_tolerance(tau):
    if not tau >= 0:
        raise ValueError(f"tolerance must be ≥ 0, got {tau!r}")
    return tau


def _sigma_hat(be, y, v_i, v_j, a, b):
    """σ̂ = (ŷ − a·v̂_j)/(b·v̂_i) (P1 Thm 6.1), or None when v̂_i = 0 exactly."""
    if v_i == 0:
        return None
    return (y - a * v_j) / (b * v_i)


def _entry(be, sigma_hat, a, b):
    """Ŵ_ij = σ⁻¹(clip(σ̂))/(a·b) (P1 Thm 6.1); 0 when σ̂ is undefined (v̂_i = 0)."""
    if sigma_hat is None:
        return be.scalar(0)
    lo, hi = (be.scalar(p) for p in SIGMA_CLIP)
    p = _clip(sigma_hat, lo, hi)
    return be.log(p / (1 - p)) / (a * b)


def _posterior(be, d, B, tau, v_hat, slack):
    """Frobenius bound from the observed |v̂_i| − τ in place of μ − τ (rows with
    |v̂_i| ≤ τ get the clipping cap)."""
    total = be.scalar(0)
    for i, vi in enumerate(v_hat):
        row = p1_bounds(be, d, B, abs(vi), tau)["W_entry"]
        total += sum((row + slack[i][j]) ** 2 for j in range(d))
    return _sqrt(be, total)


def _check_assumptions(be, flags, v_hat, sigma_hat, W_hat, B, mu, tau, bounds):
    """Name every violated assumption of P1 Thm 6.1 (docstring of learn_single_head_noisy)."""
    if tau >= mu:
        flags.add("tolerance-not-below-margin",
                  f"τ = {_short(tau)} is not below the margin μ = {_short(mu)}: σ̂ is not controlled, "
                  f"only the clipping cap bounds Ŵ")
    for i, vi in enumerate(v_hat):
        if abs(vi) < mu - tau:
            flags.add("margin-violated", f"|v̂_{i + 1}| = {_short(abs(vi))} < μ − τ = "
                      f"{_short(mu - tau)}: the margin assumption |v_i| ≥ μ is false")
    lo, hi = (be.scalar(p) for p in SIGMA_CLIP)
    a = be.scalar(PROBE_A)
    low, high = _sigma(be, -a) - bounds["sigma"], _sigma(be, a) + bounds["sigma"]
    for i, row in enumerate(sigma_hat):
        for j, sh in enumerate(row):
            if sh is None or not lo <= sh <= hi:
                flags.add("clipping-activated", f"σ̂_{i + 1}{j + 1} = "
                          f"{'undefined' if sh is None else _short(sh)} was clipped to "
                          f"[{float(SIGMA_CLIP[0])}, {float(SIGMA_CLIP[1])}]")
            if sh is not None and not low <= sh <= high and tau < mu and \
                    "margin-violated" not in flags.names:
                flags.add("norm-bound-exceeded", f"σ̂_{i + 1}{j + 1} = {_short(sh)} lies outside "
                          f"[{_short(low)}, {_short(high)}], impossible when ‖W‖_F ≤ B and |v_i| ≥ μ")
    norm = _sqrt(be, sum(x * x for row in W_hat for x in row))
    if norm > B + bounds["W"]:
        flags.add("norm-bound-exceeded", f"‖Ŵ‖_F = {_short(norm)} > B + ε_W = "
                  f"{_short(B + bounds['W'])}: the assumption ‖W‖_F ≤ B is false")
    elif norm > B:
        flags.notes.append(f"‖Ŵ‖_F = {_short(norm)} exceeds B = {_short(B)} by less than ε_W: "
                           f"consistent with ‖W‖_F ≤ B")
