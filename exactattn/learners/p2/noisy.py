"""The P2 multi-head learner on approximate answers (P2 approximate-oracle bound; docs/design.md
§4.4): every answer is off by at most τ; the P2 approximate-oracle constant C is computed for
the run (:mod:`.sensitivity`) and the predicted error C·τ reported beside a certified error
bar.

As for the single head (:mod:`exactattn.learners.p1.noisy`), an answer is never presented as
good when the assumptions behind its bound fail: the violations are named in
``result.notes`` and ``result.extra["flags"]`` with ``result.extra["conditions_met"] = False``,
and ``strict=True`` raises :class:`~exactattn.errors.ConditionsNotMet` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._typing import BackendLike, Bound, Number, OracleLike
    from ..result import LearnResult

import random
import time
from fractions import Fraction

from ...arith.numbers import lower_decimal
from ...errors import ConditionsNotMet, LearningFailure
from ...oracles.oracle import as_oracle
from ..p1.noisy import _check_tolerance, _short
from ..p1.session import check_dim
from ..result import LearnResult

__all__ = ["learn_multi_head_noisy", "MAX_MATCHING_TOLERANCE"]


# ---------------------------------------------------------------------- P2, noisy answers
#: largest relative matching tolerance tried (generic score/residue gaps are O(0.1))
MAX_MATCHING_TOLERANCE = Fraction(1, 20)


def _tolerances(be, tau, cap):
    """Matching tolerances tried in turn: from max(τ, 10^(−dps/3)) up by factors of 10 to cap."""
    tol = max(be.scalar(tau), be.ctx.mpf(10) ** (-(be.dps // 3)))
    cap = be.scalar(cap)
    while tol <= cap:
        yield tol
        tol = tol * 10


def _recover_noisy(schedule, answers, be, H0, tau, cap):
    """P2 recovery at the smallest matching tolerance that matches the heads uniquely.

    A too small tolerance misses the true partner (NotAttention), a too large one sees
    several (AmbiguousMatching, raised rather than guessed), so the smallest tolerance that
    works is the one the noise needs; :meth:`Sensitivity.conditions` then checks it against
    the first-order perturbations.  Raises ConditionsNotMet when none works."""
    from .sensitivity import recover
    failures, last = [], None
    for tol in _tolerances(be, tau, cap):
        try:
            heads, v = recover(schedule, answers, be, H0, tol)
            return heads, v, tol, failures
        except LearningFailure as e:
            failures.append(f"tolerance {_short(tol)}: {e.reason}")
            last = e
    if last is None:
        raise ConditionsNotMet(f"τ = {_short(tau)} exceeds the largest matching tolerance "
                               f"{float(cap)}: no recovery is attempted", tried=failures)
    raise ConditionsNotMet(
        f"the noisy answers (τ = {_short(tau)}) admit no consistent recovery at any matching "
        f"tolerance up to {float(cap)}: the noise is too large for this model and these "
        f"queries (last failure: {last.reason}: {last})", cause=last.reason, tried=failures)


def learn_multi_head_noisy(oracle: OracleLike, dim: int, heads: int, tolerance: Number,
                           backend: BackendLike | None = None, dps: int | None = None,
                           seed: int | None = None, strict: bool = False,
                           constant: bool = True, sensitivity: Bound = None,
                           max_matching_tolerance: Bound = None) -> LearnResult:
    """The P2 multi-head learner on answers within ±τ, with the P2 approximate-oracle bound
    C·τ computed for the run (docs/design.md §4.4; :mod:`exactattn.learners.p2.sensitivity`).

    Same queries as :func:`~exactattn.learners.multi_head.learn_multi_head` (the same bases
    for the same ``seed``): 4Hd² − 2H + 1 queries of length ≤ 2H + 1, mp backend.  The
    number of heads H must be known: with only a bound H₀, the lowest type of a *noisy*
    rational interpolant is a numerical-rank decision whose threshold depends on the
    unknown pole separation, which is not covered.  The recovery runs at the smallest
    matching tolerance that matches the heads uniquely (see ``_recover_noisy``).

    ``constant=True`` computes C (``extra["C"]``, ``extra["predicted_error"]`` = C·τ and the
    conditions in ``extra["sensitivity"]``) at twice the working precision from the observed
    answers; ``sensitivity=`` supplies a :class:`~exactattn.learners.p2.sensitivity.Sensitivity` computed
    before for the same bases (e.g. at the noise-free answers) instead; ``constant=False``
    skips both (then nothing is claimed about the error).  Conditions that fail at this τ are
    flagged (``extra["conditions_met"]``, notes) or, with ``strict=True``, raised as
    ConditionsNotMet; a recovery that fails outright always raises ConditionsNotMet."""
    from .recovery import DEFAULT_BOX, check_bases, head_bound, random_bases
    from .schedule import Schedule, published_count, published_max_length
    d = check_dim(dim)
    H = head_bound(heads, None)
    tau = _check_tolerance(tolerance)
    orc = as_oracle(oracle, d, backend, dps)
    be = orc.backend
    if be.name != "mp":
        raise ValueError("the noisy multi-head learner and its constant C run on the mp backend")
    tau = be.scalar(tau)
    start, first = time.perf_counter(), orc.queries
    U, X = random_bases(random.Random(seed), d, DEFAULT_BOX, be)
    check_bases(be, U, X)
    schedule = Schedule(U, X, H)
    answers = [orc(q) for q in schedule.queries()]
    cap = MAX_MATCHING_TOLERANCE if max_matching_tolerance is None else max_matching_tolerance
    found, v, tol, tried = _recover_noisy(schedule, answers, be, H, tau, cap)
    result = LearnResult(
        algorithm="multi-head-noisy", dim=d, backend=be.name, heads=found,
        queries=orc.queries - first, max_length=schedule.max_length,
        expected_queries=published_count(d, H), expected_max_length=published_max_length(H),
        transcript=[(tuple(map(tuple, q)), a) for q, a in zip(schedule.queries(), answers)],
        extra={"U": U, "X": X, "H0": H, "v": v, "tolerance": tau,
               "matching_tolerance": tol, "tolerances_rejected": tried})
    if constant or sensitivity is not None:
        _attach_constant(result, schedule, answers, be, H, tau, tol, strict, sensitivity)
    _attach_error_bar(result, schedule, answers, be, H, tau)
    result.seconds = time.perf_counter() - start
    return result


def _attach_error_bar(result, schedule, answers, be, H, tau):
    """``result.error_bar`` as on every inexact result (docs/design.md §8): the certified
    enclosure of the recovery on the answer balls [ŷ ± τ] when it exists (method "ball"),
    else C·τ when C was computed (method "first-order"), else None (nothing claimed)."""
    import mpmath
    from ...errors import SingularSystem
    from .enclosure import enclose
    from ..result.precision import bar_for
    from .recovery import _recover
    from ..result.precision import ErrorBar, OraclePrecision, working_bits
    from ...arith.numbers import exact_fraction
    from ..result.precision import backend_precision
    top = max((abs(exact_fraction(a)) for a in answers), default=Fraction(1))
    eta = exact_fraction(tau) + 4 * backend_precision(be).eta * max(1, top)
    prec = OraclePrecision(eta, False, f"additive noise ±{float(tau):.3g} (told) + rounding")
    bits = working_bits(be.dps)
    try:
        enc = enclose(lambda *a: _recover(*a, heads=H), schedule, answers, prec, bits)
    except (LearningFailure, SingularSystem) as e:
        if "C" in result.extra:
            result.error_bar = ErrorBar(bound=result.extra["predicted_error"],
                                        method="first-order", precision=prec,
                                        working_dps=be.dps, constant=result.extra["C"],
                                        assumes=f"first order in τ; no certified enclosure "
                                                f"at this τ ({e.reason if hasattr(e, 'reason') else e})")
        return
    reported = [(h.W, h.v) for h in result.heads]
    ctx = mpmath.MPContext()
    ctx.dps = be.dps
    pairs = _pair(enc, reported, ctx)
    if pairs is None:
        return
    bound = bar_for([p[0] for p in pairs], [p[1] for p in pairs], ctx, bits)
    result.error_bar = ErrorBar(bound=bound, method="ball", precision=prec,
                                working_dps=be.dps,
                                constant=bound / ctx.mpf(tau) if tau else None,
                                enclosure=[p[0] for p in pairs],
                                assumes=f"every answer within ±{lower_decimal(tau)} of an "
                                        f"attention model with exactly {H} canonical heads",
                                details={"prec_bits": bits})


def _pair(enc, reported, ctx):
    """Each reported head with the enclosure head whose midpoints are nearest (None if the
    counts differ)."""
    from ...arith.ball import midpoint_mpf
    from ..result.compare import match_heads
    mids = enc.midpoints(lambda b: midpoint_mpf(b, ctx))
    pairs, lost, extra = match_heads(mids, reported)
    if lost or extra:
        return None
    return [(enc.heads[i], reported[j]) for i, j in pairs]


def _attach_constant(result, schedule, answers, be, H, tau, tol, strict, sens=None):
    """C, C·τ and the conditions at τ (P2 approximate-oracle bound) into ``result``.  When
    the first-order mismatches need a larger matching tolerance than the one that worked,
    the recovery is re-run at twice that tolerance: it must still match uniquely."""
    from .sensitivity import approximate_constant, recover
    if sens is None:
        sens = approximate_constant(schedule, answers, H, tol)
    need = sens.required_tolerance(tau)
    if need > tol:
        try:
            recover(schedule, answers, be, H, 2 * need)
            tol = result.extra["matching_tolerance"] = be.scalar(2 * need)
        except LearningFailure as e:
            result.notes.append(f"at twice the matching tolerance {_short(need)} that the noise "
                                f"needs, the matching fails ({e.reason})")
    met, reasons = sens.conditions(tau, tol)
    result.extra.update({"sensitivity": sens, "C": sens.C, "predicted_error": sens.C * tau,
                         "conditions_met": met, "flags": ["conditions-not-met"] if not met else []})
    result.notes += reasons
    if strict and not met:
        raise ConditionsNotMet("the P2 approximate-oracle bound does not apply at τ = "
                               f"{_short(tau)}: " + "; ".join(reasons), reasons=reasons,
                               C=str(sens.C), result=result)
