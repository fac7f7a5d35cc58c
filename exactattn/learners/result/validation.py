"""Validation queries: fresh random queries of shapes the schedule never uses, asked after a
run and counted apart from the published count (docs/design.md §8, "Anything outside the
transcript's query shapes is unconstrained").

A black-box run proves consistency with its N schedule answers only: an oracle that agrees
with an attention model on every query shape the schedule asks, and differs elsewhere (an
extra score bias, behaviour that changes beyond the schedule's length or only on sequences
with three or more distinct tokens), is returned as that model.  Validation asks where the
schedule never looks:

* each query has **three distinct tokens** (the schedule's have at most two) and **length
  2H₀ + 2 + (n mod 3)** (the schedule's are at most 2H₀ + 1), the final token one of the
  three, the others in random order with each of the two other tokens at least once;
* entries: integers in {−1000…1000} on the exact backend (whatever box the learner drew its
  own vectors from), Gaussian with variance 1/d on mp / float (as the multi-head bases);
* ``validate=None`` asks :func:`default_count` = 2H₀ + 2 of them; ``validate=0`` none (the
  bare schedule).

The recovered model must answer each as the oracle does — exactly (equality in Q(t)) on the
exact backend; on mp / float the oracle's answer ball [ŷ ± η·max(1, |ŷ|)] must meet the
model's output ball, the model evaluated in ball arithmetic with every parameter within the
result's error bar.  A mismatch is :class:`~exactattn.errors.OutOfClass`, carrying the
query.  Validation cannot prove that the oracle is attention; it rules out, with the
probability of a random query, every oracle that differs from the recovered model as a
function (for a fixed oracle M′ ≠ M the difference is a nonzero analytic function of the
query's entries, so a continuous draw sees it with probability one).
"""

from __future__ import annotations

import random

from ...errors import OutOfClass

__all__ = ["default_count", "validation_count", "validation_query", "validate",
           "output_ball"]

#: entries of exact validation tokens: {−box…box} (the multi-head learner's default box)
DEFAULT_BOX = 1000


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


def validation_length(H0: int, n: int) -> int:
    """Length of validation query n: 2H₀ + 2 + (n mod 3), past every schedule query."""
    return 2 * H0 + 2 + n % 3


def validation_query(rng: random.Random, d: int, H0: int, n: int, be, box: int = DEFAULT_BOX):
    """Validation query n (module docstring): three distinct random tokens, length
    :func:`validation_length`."""
    if be.name == "exact":
        def draw():
            return [rng.randint(-box, box) for _ in range(d)]
    else:
        sd = 1.0 / d ** 0.5

        def draw():
            return [be.scalar(rng.gauss(0.0, sd)) for _ in range(d)]
    toks = []
    while len(toks) < 3:                       # distinct (a repeat has probability ~ box^-d)
        t = draw()
        if all(t != s for s in toks):
            toks.append(t)
    length = validation_length(H0, n)
    last = rng.randrange(3)
    others = [k for k in range(3) if k != last]
    body = others + [rng.randrange(3) for _ in range(length - 3)]
    rng.shuffle(body)
    return [list(toks[k]) for k in body] + [list(toks[last])]


def validate(result, orc, H0: int, count: int, rng: random.Random, box: int = DEFAULT_BOX,
             close=None, precision=None, progress=None):
    """Ask ``count`` validation queries of the oracle ``orc`` and check each against
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
    for n in range(count):
        tokens = validation_query(rng, result.dim, H0, n, be, box)
        with orc.validating():
            answer = orc(tokens)
        result.validation.append((tuple(tuple(t) for t in tokens), answer))
        result.validation_queries = n + 1
        ok, predicted = check(tokens, answer)
        if not ok:
            raise OutOfClass(
                f"validation query {n} (length {len(tokens)}, 3 distinct tokens — a shape the "
                f"schedule never asks) is answered differently by the oracle and by the "
                f"recovered model ({_how(be, bar, close)}): the oracle agrees with the model "
                f"on the {result.queries} schedule queries but is not it, so it is not "
                f"attention of the assumed class", index=n,
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
    def check(tokens, answer):
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
    heads = [(h.W, h.v) for h in model.heads]

    def check(tokens, answer):
        with BallBackend(bits).working():
            out = output_ball(heads, bar.bound, tokens)
            got = ball(answer, _radius(prec, answer))
            return bool(out.overlaps(got)), out
    return check


def _radius(prec, answer):
    from fractions import Fraction
    from ...arith.numbers import exact_fraction
    return Fraction(prec.radius(exact_fraction(answer)))


def output_ball(heads, radius, tokens):
    """A ball containing F(X) = Σ_h Σ_i softmax(X W_h x_N)_i v_h·x_i for every model whose
    parameters lie within ``radius`` of ``heads`` entrywise (flint's working precision;
    each head's scores shifted by one exact real, which cancels in the ratio)."""
    from flint import arb

    from ...arith.ball import ball
    X = [[ball(x) for x in t] for t in tokens]
    xN = X[-1]
    total = arb(0)
    for W, v in heads:
        Wb = [[ball(w, radius) for w in row] for row in W]
        vb = [ball(x, radius) for x in v]
        Wx = [sum((w * x for w, x in zip(row, xN)), arb(0)) for row in Wb]
        scores = [sum((a * b for a, b in zip(t, Wx)), arb(0)) for t in X]
        shift = max(s.mid() for s in scores)
        weights = [(s - shift).exp() for s in scores]
        values = [sum((a * b for a, b in zip(vb, t)), arb(0)) for t in X]
        total += sum((w * y for w, y in zip(weights, values)), arb(0)) / \
            sum(weights, arb(0))
    return total
