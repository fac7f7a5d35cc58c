"""The causal learner on float / mp answers (docs/decoders.md §float decoders; the ball
method of docs/design.md §8, as for P2 in :mod:`exactattn.learners.p2.enclosure`).

The same recovery as the exact learner (:func:`.learner.recover_parts`, not copied) runs on
answer balls [ŷ ± η·max(1, |ŷ|)] in certified ball arithmetic, η the oracle's precision
(stated, declared by the adapter, or inferred: :func:`~exactattn.learners.result.precision.
infer_precision`).  Every decision — nonsingular interpolation systems, excluded lower types,
isolated real poles, a unique matching candidate — is certified for every answer vector
within the balls, so when it succeeds the canonical heads of any causal attention oracle
of that precision (with the heads found) lie in the returned balls: ``result.error_bar``.
When a decision cannot be certified the run raises
:class:`~exactattn.errors.IllConditioned` saying which precision would have certified it
(the same answers re-run on narrower balls, :func:`needed`), never "not attention": the
balls cannot tell an out-of-class oracle from an imprecise one.
"""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath

from ...arith import get_backend
from ...arith.ball import BallBackend, ball
from ...arith.numbers import exact_fraction
from ...errors import IllConditioned, LearningFailure, SingularSystem
from ...models.attention import AttentionHead
from ...models.decoder import CausalAttention
from ..p2.enclosure import BallEngine, Overlap
from ..p2.recovery import head_bound, random_bases
from ..result.precision import (ErrorBar, bar_for, infer_precision, shown_eta, working_bits,
                                working_dps)
from .learner import CausalResult, parse_slopes, recover_parts
from .schedule import CausalSchedule, causal_count

__all__ = ["learn_causal_inexact", "needed"]


def _ball_schedule(sched, be):
    return CausalSchedule([[be.scalar(x) for x in u] for u in sched.U],
                          [[be.scalar(x) for x in x_] for x_ in sched.X], sched.H0,
                          sched.mode, sched.residual)


def enclose(sched, answers, precision, bits, shared, distinct):
    """(heads, w) as balls from the answer balls, or the recovery's failure."""
    be = BallBackend(bits)
    with be.working():
        engine = BallEngine(be)
        balls = [[ball(y, precision.radius(exact_fraction(y))) for y in ans] for ans in answers]
        return recover_parts(_ball_schedule(sched, be), balls, engine, be, Overlap(),
                             shared, distinct)


def needed(sched, answers, precision, shared, distinct, decades=(1, 2, 4, 6, 8, 12, 16)):
    """The precision that would certify a model like the one these answers suggest, or None.

    First the same answers are enclosed in balls η/10^k (k in ``decades``), as P2's
    :func:`~exactattn.learners.p2.enclosure.needed_precision` does; when none certifies, the
    recovery is run on the answers as plain mp numbers (a tolerance instead of balls,
    :class:`~exactattn.learners.p2.engines.RealEngine`) to get an approximate model M̂; M̂'s
    own outputs on the schedule, computed at 2·(digits + 20) digits, are then enclosed with
    balls η/10^k for k in ``decades``: the first that certifies is returned.  An estimate for
    oracles near M̂ (the true oracle is unknown), said so where it is reported."""
    for k in decades:                       # first: narrower balls around these answers
        narrower = precision.scaled(f"1/{10 ** k}")
        try:
            enclose(sched, answers, narrower, working_bits(working_dps(narrower)), shared,
                    distinct)
            return narrower
        except (LearningFailure, SingularSystem, ZeroDivisionError):
            continue
    digits = precision.digits + 20
    mp = get_backend("mp", digits)
    found = _approximate(sched, answers, precision, mp, shared, distinct)
    if found is None:
        return None
    heads, w = found
    slopes = None if shared is None and distinct is None else \
        [shared] * len(heads) if distinct is None else list(distinct)
    approx = CausalAttention([AttentionHead(W, v) for W, v in heads],
                             slopes if heads else None, w, dim=sched.d)
    fine = [approx(q, "mp", 2 * digits) for q in sched.queries()]
    for k in decades:
        narrower = precision.scaled(f"1/{10 ** k}")
        try:
            enclose(sched, fine, narrower, working_bits(working_dps(narrower)), shared,
                    distinct)
            return narrower
        except (LearningFailure, SingularSystem, ZeroDivisionError):
            continue
    return None


def _approximate(sched, answers, precision, mp, shared, distinct, looser=(1, 10 ** 4, 10 ** 8)):
    """(heads, w) from the answers as mp numbers with the real engine's tolerance (that of
    the precision η, then of 10^4·η and 10^8·η), every family fitted at type H₀ first, or
    None when none fits."""
    from ..p2.engines import RealEngine, real_tolerance
    from ..p2.matching import Close
    msched = CausalSchedule([[mp.scalar(x) for x in r] for r in sched.U],
                            [[mp.scalar(x) for x in r] for r in sched.X], sched.H0,
                            sched.mode, sched.residual)
    mp_answers = [[mp.scalar(y) for y in a] for a in answers]
    for factor in looser:
        prec = precision.scaled(factor)
        try:
            return recover_parts(msched, mp_answers, RealEngine(mp, real_tolerance(mp, prec)),
                                 mp, Close(mp, prec), shared, distinct, hint=sched.H0)
        except (LearningFailure, SingularSystem, ZeroDivisionError, ValueError):
            continue
    return None


def learn_causal_inexact(oracle, dim, heads=None, heads_bound=None, slopes=None,
                         residual=False, backend="float", dps=None, precision=None, seed=None):
    """Learn a causal model from float / mp answers (module docstring): a CausalResult whose
    heads are the enclosures' midpoints and whose ``error_bar`` bounds every entry, or
    IllConditioned naming the precision that would certify the run."""
    from ...oracles.causal import as_causal_oracle
    H0 = head_bound(heads, heads_bound)
    mode, shared, distinct = parse_slopes(slopes, H0, exact=False)
    orc = as_causal_oracle(oracle, dim, backend, dps)
    be = orc.backend
    if be.name not in ("float", "mp"):
        raise ValueError("learn_causal_inexact runs on the float or mp backend")
    rng = random.Random(seed)
    # Gaussian entries of variance 1/d rounded to multiples of 2^-20, so that the tokens
    # x − u and the sums of the matching families are exact in float64
    U, X = ([[Fraction(round(x * 2 ** 20), 2 ** 20) for x in r] for r in M]
            for M in random_bases(rng, dim, None, get_backend("float")))
    sched = CausalSchedule(U, X, H0, mode, residual)
    first = len(orc.transcript)
    answers = orc.ask_many([[[be.scalar(x) for x in t] for t in q] for q in sched.queries()])
    prec = infer_precision(orc, [y for a in answers for y in a], precision)
    wdps = working_dps(prec, dps if be.name == "mp" else None)
    bits = working_bits(wdps)
    try:
        enc_heads, enc_w = enclose(sched, answers, prec, bits, shared, distinct)
    except (LearningFailure, SingularSystem, ZeroDivisionError) as e:
        want = needed(sched, answers, prec, shared, distinct)
        hint = (prec.hint(want) + " (estimated on the model these answers suggest)") \
            if want is not None else (
                f"these {prec.digits}-digit answers do not determine even an approximate model "
                f"(the interpolation fails at 10^8 times their precision), so no estimate can "
                f"be made: answers with more significant digits are needed"
                + (f"; {prec.remedy}" if prec.remedy else ""))
        raise IllConditioned(
            f"the causal recovery cannot be certified at the oracle's precision "
            f"{shown_eta(prec.eta)} ({prec.source}): {hint}",
            precision=prec.describe(), cause=getattr(e, "reason", type(e).__name__),
            needed=None if want is None else shown_eta(want.eta)) from None
    ctx = mpmath.MPContext()
    ctx.dps = wdps
    from ...arith.ball import midpoint_mpf
    conv = (lambda b: float(midpoint_mpf(b, ctx))) if be.name == "float" else \
        (lambda b: midpoint_mpf(b, ctx))
    found = [([[conv(x) for x in r] for r in W], [conv(x) for x in v]) for W, v in enc_heads]
    bound = bar_for(enc_heads, found, ctx, bits)
    w = None if enc_w is None else [conv(x) for x in enc_w]
    if enc_w is not None:
        bound = max(bound, bar_for([([[x] for x in enc_w], [])], [([[x] for x in w], [])],
                                   ctx, bits))
    head_slopes = None if slopes is None else \
        [shared] * len(found) if distinct is None else list(distinct)
    model = CausalAttention([AttentionHead(W, v) for W, v in found],
                            head_slopes if found else None, w, dim=dim)
    bar = ErrorBar(bound=bound, method="ball", precision=prec,
                   assumes=f"the oracle is causal attention with the {len(found)} heads found"
                           f"{', these slopes' if slopes is not None else ''}"
                           f"{' and a residual read-out' if residual else ''}, each output "
                           f"within {shown_eta(prec.eta)}·max(1,|y|)",
                   working_dps=wdps, enclosure=enc_heads)
    q, n, _ = causal_count(dim, H0, mode, residual)
    result = CausalResult(
        algorithm="causal", dim=dim, backend=be.name, heads=found, queries=len(answers),
        max_length=sched.max_length, expected_queries=q, expected_max_length=n,
        transcript=orc.transcript[first:], error_bar=bar, causal=model,
        extra={"U": U, "X": X, "H0": H0, "mode": mode, "residual": residual,
               "shared_slope": shared, "slopes": distinct,
               "outputs_read": sum(len(a) for a in answers)})
    result.proves = (f"every causal attention oracle with the {len(found)} heads found whose "
                     f"{result.extra['outputs_read']} outputs lie within the stated precision "
                     f"has canonical parameters within {bar} of these (certified enclosure)")
    return result
