"""What a result proves, in words (docs/design.md §8: "A result may say only what its
evidence proves"), set as ``LearnResult.proves`` by every learner that validates.

The exact statements belong to the learners that can make them — P2
(:func:`exactattn.learners.p2.genericity.statement`), the schedules beyond P2
(:func:`exactattn.learners.beyond.genericity.statement`), P1's single head and low rank
(:mod:`exactattn.learners.p1.session`), the one-layer Transformer — and are passed in;
:func:`state` adds the inexact statement (the error bar under what it assumes) on mp / float
and what validation (:mod:`.validation`) checked, or that nothing outside the schedule's
query shapes was checked.
"""

from __future__ import annotations

from ...arith.numbers import upper_decimal
from .precision import shown_eta

__all__ = ["headline", "state"]


def _validation(result, H0) -> str:
    n = getattr(result, "validation_queries", 0)
    if not n:
        return ("no validation queries were asked (validate=0): nothing outside the "
                "schedule's query shapes was checked")
    if result.backend == "exact":
        how = "are answered exactly as the recovered model answers them (equality in Q(t))"
    elif result.error_bar is not None:
        how = ("have answers whose balls meet the recovered model's output balls under the "
               "error bar")
    else:
        how = "are answered as the recovered model answers them within the learner's tolerance"
    shapes = [(len(q), len(set(q))) for q, _ in getattr(result, "validation", [])]
    if shapes:
        lengths = sorted({L for L, _ in shapes})
        kinds = sorted({k for _, k in shapes})
        drawn = (f" (random shapes: lengths {', '.join(map(str, lengths))}; "
                 f"{', '.join(map(str, kinds))} distinct tokens)")
    else:
        drawn = ""
    return f"{n} validation quer{'y' if n == 1 else 'ies'}{drawn} {how}"


def _inexact(result) -> str:
    bar = result.error_bar
    if bar is None:
        return (f"the recovered model reproduces the {result.queries} answers within the "
                f"learner's tolerance; no error bar on the parameters")
    return (f"the recovered heads are within {bar} entrywise of every attention model "
            f"satisfying: {bar.assumes}")


def state(result, H0: int, exact: str | None = None):
    """Set ``result.proves`` (module docstring): ``exact`` is the learner's statement for an
    exact run (None: only that the answers are reproduced, with no genericity statement)."""
    if result.backend != "exact":
        text = _inexact(result)
    elif exact is not None:
        text = exact
    else:
        text = (f"the recovered model reproduces all {result.queries} answers exactly in Q(t); "
                f"no genericity statement is made for this schedule, so other models with "
                f"≤ {H0} heads may give the same answers")
    result.proves = f"{text}; {_validation(result, H0)}."
    return result


def _first_clause(text: str) -> str:
    """``text`` up to its first ':' or ';' outside parentheses, without its parenthesised
    asides (" (…)"; a call such as Q(t) stays)."""
    out, depth, aside = [], 0, False
    for i, ch in enumerate(text):
        if ch == "(":
            aside = aside or (depth == 0 and i > 0 and text[i - 1] == " ")
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0 and aside:
                aside = False
                continue
        elif depth == 0 and ch in ":;":
            break
        if not aside:
            out.append(ch)
    return " ".join("".join(out).split())


def headline(result) -> str | None:
    """``result.proves`` in one short line (the command line's default ``proves:``; the full
    text is ``result.proves``, printed under -v and in --json): the statement's first
    clause and the count of validation queries, or the error bar and the precision it
    assumes on mp / float (docs/design.md §8)."""
    if not result.proves:
        return None
    n = getattr(result, "validation_queries", 0)
    bar = getattr(result, "error_bar", None)
    if result.backend != "exact" and bar is not None:
        kind = "certified enclosure" if bar.rigorous else "first-order, not rigorous"
        eta = shown_eta(bar.precision.eta)
        head = (f"heads within ±{upper_decimal(bar.bound)} ({kind}) if every answer is within "
                f"{eta}{'·max(1,|y|)' if bar.precision.relative else ''}")
    else:
        head = _first_clause(result.proves)
    checked = (f"{n} validation quer{'y agrees' if n == 1 else 'ies agree'}" if n else
               "no validation queries")
    return f"{head}; {checked}"
