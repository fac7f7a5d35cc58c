"""Certified enclosures of a model's output, and the error of an mp or float answer
(docs/design.md §2.7; ball arithmetic on python-flint's ``arb``, :mod:`exactattn.arith.ball`).

:func:`output_ball` encloses F(X) = Σ_h Σ_i softmax(X W_h x_N)_i v_h·x_i (P1 §2, P2 §2) for
every model within a radius of given parameters; each head's scores are shifted by one exact
real, which cancels in the ratio.  :func:`answer_error` bounds, with no rounding trusted,
how far an mp or float answer lies from the exact F(X) at the query as written (rationals,
decimals and binary floats read exactly) and the model's parameters as it holds them, raising
the working precision until the bound decides whether the answer has the digits asked:

* relative to |F(X)| when F(X) ≠ 0 is shown;
* otherwise (F(X) = 0, or too small to separate from 0 at the largest precision tried)
  relative to S = Σ_h max_i |v_h·x_i|, the size of the values the heads average (|F| ≤ S).

A floating-point evaluation loses digits to cancellation — scores of 10^160 that differ by
units, or heads whose outputs of 10^160 cancel to 6 — and then answers with every digit
printed and none correct; this is what `exactattn eval` checks on mp and float.
"""

from __future__ import annotations

from dataclasses import dataclass

from flint import arb, ctx as _flint_ctx

from ..arith.ball import ball

__all__ = ["output_ball", "head_balls", "answer_error", "AnswerError", "MAX_PREC"]

#: the largest working precision (bits) :func:`answer_error` raises to
MAX_PREC = 1 << 18
#: and the most bit-operations (tokens × heads × d(d + 2) × precision) it spends at one
#: precision: beyond them it decides with the bound it has
MAX_WORK = 4 * 10 ** 9


def head_balls(heads, radius, tokens):
    """Per head, (its softmax average, its values v_h·x_i) as balls at flint's working
    precision, for every model within ``radius`` of ``heads`` entrywise (numbers, or balls
    that already hold them with ``radius`` 0)."""
    X = [[ball(x) for x in t] for t in tokens]
    xN = X[-1]
    for W, v in heads:
        Wb = [[ball(w, radius) for w in row] for row in W]
        vb = [ball(x, radius) for x in v]
        Wx = [sum((w * x for w, x in zip(row, xN)), arb(0)) for row in Wb]
        scores = [sum((a * b for a, b in zip(t, Wx)), arb(0)) for t in X]
        shift = max(s.mid() for s in scores)
        weights = [(s - shift).exp() for s in scores]
        values = [sum((a * b for a, b in zip(vb, t)), arb(0)) for t in X]
        yield sum((w * y for w, y in zip(weights, values)), arb(0)) / sum(weights, arb(0)), values


def output_ball(heads, radius, tokens):
    """A ball containing F(X) for every model whose parameters lie within ``radius`` of
    ``heads`` (:func:`head_balls`; P1 §2, P2 §2)."""
    return sum((avg for avg, _ in head_balls(heads, radius, tokens)), arb(0))


@dataclass
class AnswerError:
    """The verdict of :func:`answer_error`: ``ok`` when the answer is within 10^−digits of
    ``scale`` (|F(X)|, or S when F(X) ≠ 0 is not shown, ``relative_to`` says which);
    ``bound`` an upper bound of |answer − F(X)| (an arb point), ``value`` the enclosure of
    F(X), ``values`` the enclosure of S, ``prec`` the bits it took, ``decided`` False when
    the largest precision left the question open (then ``ok`` is False)."""

    ok: bool
    decided: bool
    bound: arb
    value: arb
    scale: arb
    values: arb
    relative_to: str
    digits: int
    prec: int


def answer_error(heads, tokens, answer, digits: int, start_bits: int = 128) -> AnswerError:
    """How far ``answer`` (an mpf or float) is from F(X) for the model ``heads`` ((W, v)
    pairs of exact numbers: ints, Fractions, mpf, floats) at ``tokens`` (exact numbers),
    certified (module docstring): the working precision starts at ``start_bits`` and doubles
    up to MAX_PREC (or MAX_WORK) until the bound decides."""
    n = len(tokens)
    d = len(tokens[0]) if tokens else 0
    prec, old = max(64, start_bits), _flint_ctx.prec
    tol = arb(10) ** -digits
    try:
        while True:
            _flint_ctx.prec = prec
            y = ball(answer)
            parts = list(head_balls(heads, 0, tokens)) if tokens else []
            F = sum((avg for avg, _ in parts), arb(0))
            S = sum((_max_abs(values) for _, values in parts), arb(0))
            err = abs(y - F)
            relative = not F.contains(0)
            scale = abs(F) if relative else S
            last = prec * 2 > MAX_PREC or \
                n * max(1, len(heads)) * d * (d + 2) * prec * 2 > MAX_WORK
            if relative or last:
                limit = tol * scale
                name = "|F(X)|" if relative else "S"
                if err <= limit or err > limit or last:    # arb comparisons are certain
                    ok = bool(err <= limit)
                    return AnswerError(ok, ok or bool(err > limit), err.abs_upper(), F, scale,
                                       S, name, digits, prec)
            prec *= 2
    finally:
        _flint_ctx.prec = old


def _max_abs(values):
    """An enclosure of max_i |values_i|."""
    out = arb(0)
    for b in values:
        out = out.max(abs(b))
    return out
