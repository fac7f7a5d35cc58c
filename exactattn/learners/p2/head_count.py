"""Too few heads told: reading the head count of one copy-count family (P2, copy-count
family; docs/design.md §4.3, "Too few heads").

Told H₀ heads, the P2 learner samples each family G(m) at m = 0…2H₀ — exactly enough for a
rational function of type (H₀, H₀).  An oracle with H > H₀ canonical heads gives families of
type (H, H); 2H₀ + 1 samples of them still fit *some* type-(H₀, H₀) function, whose poles and
residues are not attention's, so the run fails as ``not-attention`` or
``certification-failed``.  :func:`heads_seen` tells that case apart when the run has failed:
it asks the first family I(u₁, x₁) at m = 2H₀ + 1 … 2C + 1 (C = H₀ + :data:`EXTRA_HEADS`,
the queries counted apart from the schedule's, as the validation queries are), reads the lowest type n ≤ C through all
2C + 2 samples in F_p at a random τ (:func:`~.interpolation.fit_rational`: a lower type
cannot fit by accident, §4.3), and checks that its n poles are e^(k/L) in the answers'
exponent window with non-zero residues.  n > H₀ is then reported as
:class:`~exactattn.errors.TooFewHeads`: the oracle behaves, on this family, like attention
with at least n heads.  It is a diagnosis of a failed run (read modulo a random prime, like
the learner's own first step), never a returned model.
"""

from __future__ import annotations

import random

from ...arith.modular import BadReduction
from ...errors import BudgetExceeded, LearningFailure, OracleTimeout, TooFewHeads
from .engines import ModularEngine, exponent_window, prime_sizes
from .interpolation import fit_rational, poles_and_residues

__all__ = ["EXTRA_HEADS", "heads_seen", "too_few_heads"]

#: the diagnosis looks for at most this many heads beyond the H₀ told
EXTRA_HEADS = 8


def heads_seen(orc, schedule, answers, rng: random.Random, extra: int = EXTRA_HEADS):
    """(n, queries asked): the type n of the first family I(u₁, x₁) when it is an attention
    family of type H₀ < n ≤ H₀ + ``extra`` (module docstring), else (None, queries asked).
    ``answers`` are the schedule's (q₀ first, then the first family's 2H₀)."""
    H0 = schedule.H0
    cap = H0 + extra
    fam = schedule.families[0]
    if not fam.ends_in_x1 or not answers[0].is_rational():
        return None, 0
    more = [fam.query(m) for m in range(2 * H0 + 1, 2 * cap + 2)]
    asked = 0
    try:
        with orc.validating():
            got = orc.ask_many(more)
        asked = len(more)
    except (BudgetExceeded, OracleTimeout, LearningFailure, MemoryError):
        return None, asked
    samples = [answers[0]] + list(answers[1:1 + 2 * H0]) + list(got)
    window = exponent_window(samples[1:])
    for bits in prime_sizes(samples[1:], window=window)[:2]:
        try:
            engine = ModularEngine(samples[1:], bits, rng, window=window)
            ys = [engine.constant(answers[0].as_rational())] + engine.sample_many(samples[1:])
            fit = fit_rational(engine.field, list(range(len(ys))), ys, cap)
            if fit.n <= H0:
                return None, asked
            _, poles = poles_and_residues(engine.field, fit)
            for z, _ in poles:
                engine.score(z)                  # e^(k/L) in the window, or NotAttention
            return fit.n, asked
        except (BadReduction, LearningFailure):
            continue
    return None, asked


def too_few_heads(failure, orc, schedule, answers, rng, told: str):
    """A :class:`TooFewHeads` (its cause ``failure``) when :func:`heads_seen` finds more
    heads than the H₀ told, else None; ``told`` names what was told ("heads=2")."""
    n, asked = heads_seen(orc, schedule, answers, rng)
    if n is None:
        return None
    H0 = schedule.H0
    return TooFewHeads(
        f"the oracle has more heads than told ({told}): the copy-count family I(u1, x1), "
        f"asked at {asked} more copy counts, is a rational function of type ({n}, {n}) with "
        f"{n} poles e^(k/L) (read modulo a random prime), so the oracle behaves like attention "
        f"with at least {n} heads; retry with heads_bound={n} or more (--heads-bound {n}) "
        f"[the run itself failed: {failure.reason}]",
        told=H0, at_least=n, diagnostic_queries=asked, hint=f"heads_bound={n}",
        cause=failure.reason)
