"""Validation queries: fresh random queries of random shapes, asked after a run and counted
apart from the published count (docs/design.md §8, "Anything outside the transcript's query
shapes is unconstrained").

A black-box run proves consistency with its N schedule answers only: an oracle that agrees
with an attention model on every query shape the schedule asks, and differs elsewhere (an
extra score bias, behaviour that changes beyond the schedule's length, at one length only,
or only on sequences with three, four or more distinct tokens), is returned as that model.
Validation asks where the schedule never looks, at shapes drawn from the run's seeded random
generator (reproducible from the learner's seed):

* a **shape** is (L, k): length L, k distinct tokens.  Lengths range over 1 … 4H₀ + 4
  (:func:`max_length`; single head: 1 … 8), distinct-token counts over 1 … min(L, 6);
* every run of n ≥ 2 queries asks the **first length the schedule never asks** (its longest
  query + 1: length 3 after P1's single head, 2H₀ + 2 after P2) and **one length beyond
  2H₀ + 4** (the old fixed window's end), drawn in 2H₀ + 5 … 4H₀ + 4; its other lengths are
  distinct, uniform among the rest (n ≤ 4H₀ + 4; repeats only past that);
* every run of n ≥ 4 queries (the default n = 2H₀ + 2 always) asks **k = 4, 3, 2 and 1**
  distinct tokens once each, each at a random query long enough for it (k = 1 never at the
  two special lengths: a query of one repeated token answers v·x for every W, so it cannot
  tell two models with the same total v apart); the other queries draw k uniformly in
  1 … min(L, 6), the two special ones in 2 … min(L, 6);
* within a shape: k distinct random tokens, the final token one of them, each of the other
  k − 1 at least once among the first L − 1 positions, the rest of them random, shuffled;
  entries are integers in {−1000…1000} on the exact backend (whatever box the learner drew
  its own vectors from), Gaussian with variance 1/d on mp / float (as the multi-head bases);
* ``validate=None`` asks :func:`default_count` = 2H₀ + 2 of them; ``validate=0`` none (the
  bare schedule).

So an oracle that deviates at the first unasked length, at every length in
2H₀ + 5 … 4H₀ + 4, or with four distinct tokens (at any length from 4 to 4H₀ + 4) is caught
by every default run (with probability one over the tokens, when the deviation is a
different function there); one that deviates at a single other length ℓ ≤ 4H₀ + 4 is caught
with probability at least (n − 2)/(4H₀ + 2) per run (single head: 1/3); one that deviates
only at lengths above 4H₀ + 4, or only with more than six distinct tokens, is never seen
(docs/honesty.md).

The recovered model must answer each as the oracle does — exactly (equality in Q(t)) on the
exact backend; on mp / float the oracle's answer ball [ŷ ± η·max(1, |ŷ|)] must meet the
model's output ball, the model evaluated in ball arithmetic with every parameter in the
result's certified enclosure (or within its first-order error bar).  A mismatch is
:class:`~exactattn.errors.OutOfClass`, carrying the query.  Validation cannot prove that the
oracle is attention; it rules out, with the probability of a random query, every oracle that
differs from the recovered model as a function on the shapes asked (for a fixed oracle
M′ ≠ M the difference is a nonzero analytic function of the query's entries, so a continuous
draw sees it with probability one).
"""

from __future__ import annotations

import random

from ...errors import OutOfClass
from ...models.enclosure import output_ball

__all__ = ["default_count", "validation_count", "max_length", "validation_shapes",
           "validation_query", "validate", "output_ball", "MAX_DISTINCT", "FORCED_DISTINCT"]

#: entries of exact validation tokens: {−box…box} (the multi-head learner's default box)
DEFAULT_BOX = 1000
#: the most distinct tokens of a random validation query
MAX_DISTINCT = 6
#: distinct-token counts every run of at least four queries asks, once each
FORCED_DISTINCT = (4, 3, 2, 1)


def default_count(H0: int) -> int:
    """2H₀ + 2 validation queries (module docstring)."""
    return 2 * H0 + 2


def validation_count(validate, H0: int) -> int:
    """``validate`` as given to a learner: None → :func:`default_count`, else an int ≥ 0."""
    if validate is None:
        return default_count(H0)
    if isinstance(validate, bool) or not isinstance(validate, int) or validate < 0:
        raise ValueError(f"validate must be a non-negative integer (0: no validation "
                         f"queries), got {validate!r}")
    return validate


def max_length(H0: int) -> int:
    """The longest validation query: 4H₀ + 4 (module docstring)."""
    return 4 * H0 + 4


def validation_shapes(rng: random.Random, H0: int, count: int, schedule_length=None):
    """The (length, distinct tokens) of ``count`` validation queries, in asking order
    (module docstring); ``schedule_length`` is the run's longest query (default 2H₀ + 1)."""
    if isinstance(H0, bool) or not isinstance(H0, int) or H0 < 1:
        raise ValueError(f"validation needs a head bound H0 >= 1, got {H0!r}")
    top = max_length(H0)
    old = 2 * H0 + 4
    first = min(top, (2 * H0 + 1 if schedule_length is None else schedule_length) + 1)
    lengths = [first][:count]
    if count > 1:
        beyond = [L for L in range(old + 1, top + 1) if L != first]
        lengths.append(rng.choice(beyond))
    pool = []
    while len(lengths) < count:
        if not pool:
            pool = [L for L in range(1, top + 1)
                    if L not in lengths or len(lengths) >= top]
            rng.shuffle(pool)
        lengths.append(pool.pop())
    special = set(range(min(count, 2)))        # the first unasked length and the one beyond
    ks = [None] * count
    if count >= len(FORCED_DISTINCT):
        ones = [i for i in range(count) if i not in special]
        short = [i for i in ones if lengths[i] == 1]   # k = 1 is all a length-1 query can have
        ks[short[0] if short else rng.choice(ones)] = 1
        for k in FORCED_DISTINCT:                      # 4, 3, 2: nested eligibility, greedy
            free = [i for i in range(count) if ks[i] is None and lengths[i] >= k]
            if k != 1 and free:
                ks[rng.choice(free)] = k
    for i in range(count):
        if ks[i] is None:                      # the special shapes have k ≥ 2 (k = 1 is v·x)
            low = 2 if i in special and lengths[i] >= 2 else 1
            ks[i] = rng.randint(low, min(lengths[i], MAX_DISTINCT))
    shapes = list(zip(lengths, ks))
    rng.shuffle(shapes)
    return shapes


def validation_query(rng: random.Random, d: int, length: int, distinct: int, be,
                     box: int = DEFAULT_BOX):
    """One validation query of the shape (``length``, ``distinct``) (module docstring)."""
    if not 1 <= distinct <= length:
        raise ValueError(f"a query of length {length} cannot have {distinct} distinct tokens")
    if be.name == "exact":
        def draw():
            return [rng.randint(-box, box) for _ in range(d)]
    else:
        sd = 1.0 / d ** 0.5

        def draw():
            return [be.scalar(rng.gauss(0.0, sd)) for _ in range(d)]
    toks = []
    while len(toks) < distinct:                # distinct (a repeat has probability ~ box^-d)
        t = draw()
        if all(t != s for s in toks):
            toks.append(t)
    last = rng.randrange(distinct)
    body = [k for k in range(distinct) if k != last] + \
        [rng.randrange(distinct) for _ in range(length - distinct)]
    rng.shuffle(body)
    return [list(toks[k]) for k in body] + [list(toks[last])]


def validate(result, orc, H0: int, count: int, rng: random.Random, box: int = DEFAULT_BOX,
             close=None, precision=None, progress=None):
    """Ask ``count`` validation queries of the oracle ``orc``, of the shapes
    :func:`validation_shapes` draws from ``rng`` (then their tokens), and check each against
    ``result.model`` (module docstring); records them in ``result.validation`` and
    ``result.validation_queries``; the oracle counts them apart too
    (:meth:`~exactattn.Oracle.validating`).  ``close(a, b)`` decides agreement on an inexact result
    without an error bar (its learner's own tolerance); ``precision`` (an OraclePrecision)
    the radius of the oracle's answers there (default: the error bar's).  Raises
    OutOfClass at the first mismatch."""
    be = orc.backend
    result.validation_queries = 0
    result.validation = []
    if count == 0:
        return result
    orc.reserve(count, f"validation ({count} queries)")
    model = result.model
    bar = getattr(result, "error_bar", None)
    check = _exact_check(model, be) if be.exact else _inexact_check(model, be, bar, close,
                                                                   precision)
    shapes = validation_shapes(rng, H0, count, getattr(result, "max_length", None))
    for n, (length, distinct) in enumerate(shapes):
        tokens = validation_query(rng, result.dim, length, distinct, be, box)
        with orc.validating():
            answer = orc(tokens)
        result.validation.append((tuple(tuple(t) for t in tokens), answer))
        result.validation_queries = n + 1
        ok, predicted = check(tokens, answer)
        if not ok:
            raise OutOfClass(
                f"validation query {n} (length {len(tokens)}, {distinct} distinct tokens, a "
                f"random shape) is answered differently by the oracle and by the "
                f"recovered model ({_how(be, bar, close)}): the oracle agrees with the model "
                f"on the {result.queries} schedule queries but is not it, so it is not "
                f"attention of the assumed class", index=n, length=length, distinct=distinct,
                query=[[str(x) for x in t] for t in tokens], answer=_short(answer),
                predicted=_short(predicted), schedule_queries=result.queries,
                validation_queries=n + 1)
        if progress is not None:
            progress("validation", n + 1, count)
    return result


def _how(be, bar, close) -> str:
    if be.exact:
        return "an exact difference in Q(t)"
    if bar is not None:
        return f"the answer ball misses the model's output ball under the error bar {bar}"
    return "beyond the learner's tolerance"


def _short(x, limit: int = 200) -> str:
    s = str(x)
    return s if len(s) <= limit else f"{s[:limit]}… ({len(s)} characters)"


def _exact_check(model, be):
    """Exact agreement in Q(t), tested as the certification tests it
    (:meth:`~exactattn.models.attention.MultiHeadAttention.first_disagreement`: equal
    without expanding either side when both are the same function of the same heads' data);
    the model's own answer is computed only to report a mismatch.  Other models (a
    Transformer's) are evaluated and compared."""
    first = getattr(model, "first_disagreement", None)     # attention models have it

    def check(tokens, answer):
        if first is not None and first([(tokens, answer)], be) is None:
            return True, answer
        got = model(tokens, be)
        return got == answer, got
    return check


def _inexact_check(model, be, bar, close, precision):
    if bar is None:
        if close is None:
            raise ValueError("validation of an inexact result needs its error bar or a "
                             "tolerance (close=)")

        def check(tokens, answer):
            got = model(tokens, be)
            return close(got, answer), got
        return check
    from ...arith.ball import BallBackend, ball
    prec = bar.precision if precision is None else precision
    bits = max(128, int(bar.details.get("prec_bits") or 0))
    if bar.enclosure:            # the certified balls themselves: no wider than ±bound
        heads, radius = [(W, v) for W, v in bar.enclosure], 0
    else:
        heads, radius = [(h.W, h.v) for h in model.heads], bar.bound

    def check(tokens, answer):
        with BallBackend(bits).working():
            out = output_ball(heads, radius, tokens)
            got = ball(answer, _radius(prec, answer))
            return bool(out.overlaps(got)), out
    return check


def _radius(prec, answer):
    from fractions import Fraction
    from ...arith.numbers import exact_fraction
    return Fraction(prec.radius(exact_fraction(answer)))
