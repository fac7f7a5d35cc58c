"""Exact learning of one softmax attention head, P1 Thm 4.1 (docs/design.md §4.1):
d² + d value queries of length ≤ 2.

1. d length-1 queries [e_i]: one token gets softmax weight 1, so the answer is v_i.
2. For each column j of W, d length-2 queries [(u_k + e_j), e_j]: the score gap is u_kᵀW e_j and
   σ/(1−σ) = exp(u_kᵀW e_j) with σ = (f − v_j)/(u_k·v).  Exact backend: exp(u_kᵀWe_j) = t^m
   (t = e^{1/L}), so u_kᵀWe_j = m/L exactly; mp/float: a real log.
3. With P the matrix of rows u_kᵀ, P W = L (L_kj = u_kᵀWe_j), so W = P⁻¹L.

**Probes (our choice; P1 only needs u·v ≠ 0 and a basis).**  With p an index of largest |v_p|,
u_k = e_k when |v_k| ≥ |v_p|/2, otherwise u_k = e_k + s_k e_p with s_k = ±1 chosen so that
|u_k·v| = |v_k| + |v_p|.  Then |u_k·v| ≥ |v_p|/2 > 0 for every k, P = I + (entries in
column p off the diagonal) has determinant 1, the tokens are integer vectors, and the
scores stay as small as W's own entries (W_kj or W_kj + s_k W_pj) — which keeps the exact
field elements small and the float inversion well conditioned.  The probes depend on v only,
which the first d queries reveal: the schedule is adaptive once, after step 1.

**Checks.**  Every length-1 answer must be rational and every σ/(1−σ) a power t^m with
coefficient 1 (exact), or 0 < σ < 1 (mp/float); then the recovered head must reproduce every
transcript answer exactly (exact) or within the backend tolerance (mp/float).  A multi-head
oracle fails the exact power test generically (raises NotAttention).  Two limits of P1's
schedule itself, found here: (a) on mp/float any answers with 0 < σ < 1 are fitted exactly by
one head (d² + d equations, d² + d unknowns), so the schedule cannot reject a multi-head
oracle there; (b) a multi-head oracle built to agree with a single head on every query of the
schedule (e.g. a second head that only the probe e_k sees, with the same row k of W) passes
on every backend.  The validation queries asked after every run (:mod:`.validation`: random
shapes, length 3 and four distinct tokens always among them, counted apart from its d² + d)
catch both;
``holdout=k`` adds k random length-2 validation queries (the schedule's own shape), also
counted apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._typing import BackendLike, Bound, OracleLike, Progress

import random
import time

from .session import (Session, attach_error_bar, bilinear, certify, check_dim, fmt,
                  holdout_check, read_value_vector, unit, validate_p1)
from ..result import LearnResult
from ..result.validation import validation_count

__all__ = ["learn_single_head", "probes"]


def probes(v) -> list:
    """The d probe vectors u_k (module docstring): u_k·v ≠ 0, det[u_1 … u_d] = 1, integer
    entries.  Exact comparisons on exact scalars (P1 Thm 4.1 needs only u·v ≠ 0)."""
    d = len(v)
    p = max(range(d), key=lambda i: abs(v[i]))
    out = []
    for k in range(d):
        if 2 * abs(v[k]) >= abs(v[p]):
            out.append(unit(d, k))
        else:
            sign = 1 if v[k] * v[p] >= 0 else -1
            u = unit(d, k)
            u[p] = sign
            out.append(u)
    return out


def learn_single_head(oracle: OracleLike, dim: int, backend: BackendLike | None = None,
                      dps: int | None = None, seed: int | None = None,
                      holdout: int | None = None, oracle_precision: Bound = None,
                      accuracy: Bound = None, progress: Progress | None = None,
                      validate: int | None = None) -> LearnResult:
    """Learn one attention head (W, v) from d² + d value queries of length ≤ 2 (P1 Thm 4.1).

    ``oracle`` is an :class:`exactattn.Oracle` or a callable on a list of token vectors;
    ``backend`` ("exact", "mp", "float") must agree with an Oracle's, and None means the
    Oracle's own (inferred from a plain callable's answer, mp if only ``dps`` is given).
    Exact backend: the answer is exact and certified (it reproduces every answer in Q(t)).
    ``seed`` only seeds the ``holdout`` queries (the schedule is deterministic); ``holdout``
    defaults to 0 on exact and 1 on noiseless mp/float (module docstring).
    Raises NotIdentifiable when v = 0, NotAttention / CertificationFailed when the answers
    are not those of one head.  ``progress``, if given, is called as
    ``progress(stage, done, total)`` with stage "queries" or "certification".
    mp / float: ``result.error_bar`` is the certified enclosure of (W, v) for every answer
    within the oracle precision (``oracle_precision``, inferred when None;
    :mod:`exactattn.learners.result.precision`), the recovery replayed on answer balls;
    IllConditioned when the balls cannot be carried through or the bar exceeds
    ``accuracy``.
    ``validate`` (default None: 4; 0: none) validation queries of shapes the schedule never
    uses follow, counted apart (:mod:`.validation`; a mismatch is OutOfClass — e.g. a
    multi-head oracle that agrees with one head on the schedule); ``result.proves`` says what
    the result proves.  A budget too small for the whole run is refused before the first
    query.
    """
    d = check_dim(dim)
    start = time.perf_counter()
    n_valid = validation_count(validate, 1)
    s = Session(oracle, d, backend, dps, progress, expected=d * d + d)
    s.stated_precision = oracle_precision
    holdout = 0 if holdout is None else holdout
    if isinstance(holdout, bool) or not isinstance(holdout, int) or holdout < 0:
        raise ValueError(f"holdout must be a non-negative integer, got {holdout!r}")
    s.oracle.reserve(d * d + d + holdout + n_valid,
                     f"P1 Thm 4.1's schedule ({d * d + d} queries), {holdout} held-out and "
                     f"{n_valid} validation queries")
    W, v, U, L = _recover(s)
    heads = [(W, v)]
    checked = certify(s, heads)
    result = LearnResult(
        algorithm="single-head", dim=d, backend=s.be.name, heads=heads, queries=s.queries,
        max_length=s.max_length, expected_queries=d * d + d,
        expected_max_length=2, transcript=list(s.transcript),
        extra={"probes": U, "scores": L, "schedule_queries": s.queries, "holdout": holdout})
    if s.exact:
        result.certificate = _certificate(d, U, L, W, v, checked)
    else:
        attach_error_bar(s, result, lambda r: _recover(r, U)[:2], oracle_precision, accuracy)
    validate_p1(s, result, n_valid, seed, "single-head")
    if holdout:
        holdout_check(s, result, holdout, random.Random(seed))
    result.seconds = time.perf_counter() - start
    return result


def _recover(s, U=None):
    """Steps 1–3 of the module docstring on a session: (W, v, probes, scores).  ``U`` fixes
    the probes (a replay of a recorded run on answer balls, :func:`._p1.replay_enclosure`)."""
    d = s.dim
    v = read_value_vector(s)
    U = probes(v) if U is None else U
    L = [[bilinear(s, U[k], unit(d, j), v, where=f"probe u_{k}, column {j}")
          for j in range(d)] for k in range(d)]
    return s.be.solve(U, L), v, U, L


def _certificate(d, U, L, W, v, checked):
    """The exact record (rationals as strings): the probes, the exact scores u_kᵀWe_j read
    off as logs, the recovered head, and how many transcript answers it reproduces."""
    return {
        "claim": "P1 Thm 4.1", "algorithm": "single-head", "dim": d,
        "queries": d * d + d, "max_length": 2,
        "probes": U, "scores": [[fmt(x) for x in row] for row in L],
        "W": [[fmt(x) for x in row] for row in W], "v": [fmt(x) for x in v],
        "transcript_reproduced_exactly": checked,
    }
