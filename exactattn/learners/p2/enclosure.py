"""Certified enclosures of the P2 recovery (P2 approximate-oracle bound, made rigorous;
docs/design.md §4.4, §8).

The multi-head learner's own recovery (:func:`exactattn.learners.p2.recovery._recover`,
imported, not copied) is run on *answer balls* [ŷ_k ± η_k] in ball arithmetic
(:mod:`exactattn.arith.ball`): the interpolation pivots only on balls that exclude 0, the
degree of each family is the lowest type whose held-out residual balls all contain 0 (the
lower types are *excluded*: some residual ball misses 0), the poles are certified real,
simple and isolated, and a head of one family matches a head of another only when exactly
one candidate's balls overlap (every other candidate is disjoint).

**What an enclosure proves.**  Let a′ be any answer vector with |a′_k − ŷ_k| ≤ η_k for
every k — in particular the true answers, if the oracle has the stated precision.  Every
certified decision (nonsingular systems, excluded lower types, isolated real roots,
disjoint candidates) holds for a′ as well, so the exact recovery of a′ takes the same
branches and its parameters lie in the returned balls.  Hence: if the oracle is attention
with H* canonical heads visible on the schedule (the type found; with heads=H the learner
requires H* = H) and its answers lie within ±η_k of ŷ, then its canonical heads lie in the
enclosures, for every such oracle — not only to first order.

When a decision cannot be certified (a ball contains 0 where a nonzero is needed, a root
cannot be isolated, two candidates overlap), the recovery raises; :func:`enclose` reports
the failure, and :func:`needed_precision` re-runs on the same answers with narrower balls to
say which precision would have sufficed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...arith.numbers import exact_fraction
from ...arith.ball import BallBackend, BallField, ball, midpoint_mpf, radius_upper
from ...errors import LearningFailure, NotAttention
from .schedule import Schedule

__all__ = ["Enclosure", "enclose", "needed_precision", "BallEngine", "Overlap",
           "enclosure_contains"]


class BallEngine:
    """The engine of a recovery on balls (cf. :mod:`exactattn.learners.p2.engines`): answers are
    already balls, poles become scores by a certified log.

    ``pole_counts`` records the number of poles of each family solved, in order (a family
    starts at its m = 0 sample, :meth:`constant`; each pole passes :meth:`score`): with
    heads=H a family whose type-H system cannot be certified falls back to a lower type,
    whose fit on balls is not a certificate (the samples of a type-H function fit a lower
    type within wide balls), so a contradiction is certain only when every family has H
    poles (:func:`exactattn.learners.p2.inexact._classify`)."""

    def __init__(self, backend: BallBackend):
        self.backend = backend
        self.field = BallField()
        self.pole_counts: list = []

    def sample(self, answer):
        return answer

    def sample_many(self, answers):
        return list(answers)

    def constant(self, q):
        self.pole_counts.append(0)
        return self.backend.scalar(q)

    def score(self, z):
        if not z > 0:
            raise NotAttention(f"a pole z = {z} is not certainly positive, so not e^score",
                               pole=str(z))
        if self.pole_counts:
            self.pole_counts[-1] += 1
        return z.log()

    def scalar(self, c):
        return c

    def describe(self):
        return {"engine": "ball", "prec_bits": self.backend.prec}


class Overlap:
    """The matching rule on balls: two quantities may be equal iff their balls overlap."""

    exact = False

    def __call__(self, a, b) -> bool:
        return a.overlaps(b)


@dataclass
class Enclosure:
    """The balls of one certified recovery: ``heads`` as (W, v) with arb entries, ``v`` the
    total value vector, the answer precision used and the pole separations seen."""

    heads: list
    v: list
    precision: object
    prec_bits: int
    separations: list = field(default_factory=list, repr=False)

    def radius(self, ctx):
        """An mpf upper bound of the largest radius over every W_h and v_h entry."""
        rads = [radius_upper(x, ctx) for W, vh in self.heads for x in _entries(W, vh)]
        return max(rads, default=ctx.mpf(0))

    def midpoints(self, convert):
        """The heads' midpoints, each entry passed through ``convert`` (an arb → number map)."""
        return [([[convert(x) for x in row] for row in W], [convert(x) for x in vh])
                for W, vh in self.heads]

    def min_separation(self, ctx):
        """The smallest distance between two poles of one family (midpoints; display)."""
        if not self.separations:
            return None
        return min(midpoint_mpf(s, ctx) for s in self.separations)


def _entries(W, v):
    return [x for row in W for x in row] + list(v)


def _ball_schedule(schedule: Schedule, be: BallBackend) -> Schedule:
    return Schedule([[be.scalar(x) for x in u] for u in schedule.U],
                    [[be.scalar(x) for x in x_] for x_ in schedule.X], schedule.H0)


def enclose(recover, schedule: Schedule, answers, precision, prec_bits: int):
    """Run the P2 recovery ``recover`` (the learner's ``_recover``, passed in so that this
    module stays below the learner) on the answer balls [ŷ_k ± η_k] (module docstring).

    ``precision`` is an :class:`~exactattn.learners.result.precision.OraclePrecision`.  Returns an
    :class:`Enclosure`; raises the recovery's LearningFailure (or SingularSystem for an
    uncertified basis solve) when a decision cannot be certified, with the separations seen
    in ``details["separations"]`` and the pole count of every family solved before the
    failure in ``details["pole_counts"]`` (:class:`BallEngine`)."""
    be = BallBackend(prec_bits)
    with be.working():
        engine = BallEngine(be)
        balls = [ball(y, precision.radius(exact_fraction(y))) for y in answers]
        sched = _ball_schedule(schedule, be)
        try:
            found, v = recover(sched, balls, engine, be, schedule.H0, Overlap())
        except LearningFailure as e:
            e.details.setdefault("separations", list(engine.field.separations))
            e.details.setdefault("pole_counts", list(engine.pole_counts))
            raise
        return Enclosure(found, v, precision, prec_bits, list(engine.field.separations))


def needed_precision(recover, schedule: Schedule, answers, precision, prec_bits: int,
                     decades=(1, 2, 4, 8, 16)):
    """The precision that would have sufficed: re-run :func:`enclose` on the same answers with
    balls narrowed by 10^k for k in ``decades`` (working precision raised to match) and return
    (the first OraclePrecision that certifies, its Enclosure), or (None, None).  It estimates
    what more precise answers would allow: narrower balls around these noisy answers may also
    exclude the truth, so a None says only that no tried precision certified these answers."""
    from ...errors import SingularSystem
    from ..result.precision import working_bits, working_dps
    for k in decades:
        narrower = precision.scaled(f"1/{10 ** k}")
        bits = max(prec_bits, working_bits(working_dps(narrower)))
        try:
            return narrower, enclose(recover, schedule, answers, narrower, bits)
        except (LearningFailure, SingularSystem):
            continue
    return None, None


def enclosure_contains(enc: Enclosure, true_heads) -> bool:
    """Whether every canonical true head lies in some enclosure head, entry by entry, with a
    one-to-one pairing (the check P2-approx and the tests make against the truth)."""
    from flint import arb
    with BallBackend(enc.prec_bits).working():
        used = set()
        for W, v in true_heads:
            flat = [ball(x) for x in _entries(W, v)]
            hit = None
            for j, (eW, ev) in enumerate(enc.heads):
                if j in used:
                    continue
                if all(isinstance(b, arb) and b.contains(t) for b, t in zip(_entries(eW, ev), flat)):
                    hit = j
                    break
            if hit is None:
                return False
            used.add(hit)
        return len(used) == len(enc.heads)
