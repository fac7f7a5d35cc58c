"""``learn_causal`` — exact recovery of a causal (decoder) attention model from queries read at
every position (docs/decoders.md): one causal query per copy-count family
(:mod:`.schedule`), each family solved in the engine's field (:mod:`.family`), the heads
matched by P2's matching families (:func:`~exactattn.learners.p2.matching.match` through
P2's ``_matched``) or labelled by their known slopes, W_h = U⁻¹ S_h X⁻ᵀ and v_h = −U⁻¹ c_h
as in P2 (docs/design.md §4.3 step 5), the residual read-out from the k = 0 outputs, and
the model certified exactly: it must reproduce every output of every query in Q(t).

Exact backend only: the modular ladder of P2 (:mod:`exactattn.learners.p2.engines`) is
climbed on a failure, with the same answers (no new query).  Counted as a user counts: one
forward pass is one query (``result.queries``); ``result.extra["outputs_read"]`` counts the
outputs.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from ...arith.expfield import exp_rational
from ...arith.modular import BadReduction
from ...errors import (AmbiguousMatching, CertificationFailed, LearningFailure, NotAttention,
                       OutOfClass)
from ...models.attention import AttentionHead
from ...models.decoder import CausalAttention, causal_to_json
from ...oracles.causal import as_causal_oracle
from ..p2.cost import check_budget, estimate_multi_head
from ..p2.engines import exponent_window, make_engine, prime_sizes
from ..p2.matching import Close, match, pole_counts
# P2's matching of the families' heads (reused, not copied: docs/design.md §4.3 step 4)
from ..p2.recovery import DEFAULT_BOX, _matched, check_bases, head_bound, random_bases
from ..result import LearnResult
from .family import copy_count_nodes, solve_copy_count, solve_slopes
from .schedule import CausalSchedule, causal_count

__all__ = ["learn_causal", "CausalResult", "parse_slopes", "DEFAULT_VALIDATION"]

#: validation queries (random distinct tokens, the schedule's length) asked after the run
DEFAULT_VALIDATION = 2
#: distinct slopes: the most heads (the checker's bound, proofs_checks/checker/run_causal.py)
MAX_SLOPE_HEADS = 5


@dataclass(repr=False)
class CausalResult(LearnResult):
    """A :class:`~exactattn.learners.result.LearnResult` whose model is a
    :class:`~exactattn.models.decoder.CausalAttention` (slopes and residual included)."""

    causal: object = None

    @property
    def model(self):
        return self.causal

    def to_json(self) -> str:
        return causal_to_json(self.causal)

    def write_certificate(self, path, truth=None) -> None:
        """The run's certificate (a ``run`` record of learner ``causal``) for
        ``python -m proofs_checks.verify``; ``truth`` (a CausalAttention) is recorded too."""
        if self.backend != "exact":
            raise ValueError("write_certificate needs an exact result")
        import json
        from proofs_checks.decoder_record import causal_certificate
        from ..result import _write_text
        _write_text(path, json.dumps(causal_certificate(self, truth), ensure_ascii=False) + "\n")

    def __repr__(self):
        return (f"CausalResult(d={self.dim}, backend={self.backend}, heads={len(self.heads)}, "
                f"queries={self.queries}/{self.expected_queries}, max_length={self.max_length}, "
                f"outputs={self.extra.get('outputs_read')}, certified={bool(self.certificate)})")


def parse_slopes(slopes, H0, exact=True):
    """(mode, shared slope or None, distinct slopes or None) from ``slopes``: None (no ALiBi),
    one number or H₀ equal numbers (one shared slope), or H₀ distinct numbers (one per head).
    On the exact backend every slope must be rational (a ValueError naming it otherwise)."""
    if slopes is None:
        return "copy-count", None, None
    if not isinstance(slopes, (list, tuple)):
        slopes = [slopes]
    from ...arith.numbers import is_rational_like, to_rational
    out = []
    for k, s in enumerate(slopes):
        if is_rational_like(s):
            out.append(to_rational(s, f"slope {k + 1}"))
        elif exact:
            raise ValueError(f"slope {k + 1}: {s!r} is not rational; the exact backend needs "
                             f"rational ALiBi slopes (e^(-s) lies in Q(t) only for rational s)")
        else:
            out.append(s)
    if len(set(out)) == 1:
        s = out[0]
        return ("copy-count", None if s == 0 else s, None)
    if len(out) != H0 or len(set(out)) != len(out):
        raise ValueError(f"give one shared slope or {H0} distinct slopes (one per head), got "
                         f"{len(out)} slopes{'' if len(set(out)) == len(out) else ' with repeats'}")
    return "slopes", None, out


def learn_causal(oracle, dim, heads=None, heads_bound=None, slopes=None, residual=False,
                 backend=None, dps=None, seed=None, box=None, certify=True, validate=None,
                 resample=False, max_attempts=5, matching="p2", force=False):
    """Learn a causal attention model (docs/decoders.md) from causal queries read at every
    position: 2d² − 1 queries of length 2H₀ + 1 without slopes or with one shared slope
    (``matching="residue"``: d² + d − 1, the heads of a row matched by their residues),
    d² queries of length 2^{H+1} − 1 with H distinct known slopes; one position more with
    ``residual=True`` (w recovered too).  ``slopes``: None, one rational slope (shared) or
    H distinct rational slopes, known to the learner.  Exact backend.

    Returns a :class:`CausalResult`; raises a named :class:`~exactattn.errors.LearningFailure`
    when the answers cannot be certified (``resample=True`` retries with new bases)."""
    if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    H0 = head_bound(heads, heads_bound)
    mode, shared, distinct = parse_slopes(slopes, H0, backend in (None, "exact"))
    if matching not in ("p2", "residue"):
        raise ValueError(f"matching must be 'p2' or 'residue', got {matching!r}")
    if matching == "residue":
        if mode == "slopes":
            raise ValueError("distinct slopes label the heads: no matching is used with them")
        mode = "residue"
    if mode == "slopes" and heads is None:
        raise ValueError("distinct slopes label the heads: give heads=H with H slopes")
    orc = as_causal_oracle(oracle, dim, backend, dps)
    be = orc.backend
    if be.name != "exact":
        raise ValueError(f"the causal learner runs on the exact backend (got {be.name}); for "
                         f"float answers use exactattn.learners.decoder.inexact")
    box = DEFAULT_BOX if box is None else box
    if not isinstance(box, int) or isinstance(box, bool) or box < 1:
        raise ValueError(f"box must be a positive integer, got {box!r}")
    n_valid = DEFAULT_VALIDATION if validate is None else validate
    if not isinstance(n_valid, int) or isinstance(n_valid, bool) or n_valid < 0:
        raise ValueError(f"validate must be a non-negative integer (0: no validation "
                         f"queries), got {validate!r}")
    if mode == "slopes" and H0 > MAX_SLOPE_HEADS:
        raise ValueError(f"distinct slopes: at most {MAX_SLOPE_HEADS} heads (the exponential-sum "
                         f"system has 2^(H+1) − 1 unknowns; the checker reads H ≤ "
                         f"{MAX_SLOPE_HEADS})")
    # priced as P2's schedule at (d, H₀): the causal queries are P2's families, fewer of them
    # (distinct slopes: longer ones, their answers' terms bounded the same way per head)
    check_budget(estimate_multi_head(dim, H0, "exact"), force)
    queries, length, _ = causal_count(dim, H0, mode, residual)
    orc.reserve(queries + n_valid, f"the causal schedule ({queries} queries of length "
                                   f"{length}) and {n_valid} validation queries")
    rng = random.Random(seed)
    start, first_query = time.perf_counter(), orc.queries
    failures = []
    for attempt in range(1, max_attempts + 1):
        U, X = random_bases(rng, dim, box, be)
        try:
            check_bases(be, U, X)
            result = _run(orc, CausalSchedule(U, X, H0, mode, residual), be, rng, shared,
                          distinct, certify)
        except LearningFailure as e:
            e.details.setdefault("U", U)
            e.details.setdefault("X", X)
            failures.append({"attempt": attempt, "reason": e.reason, "message": str(e)})
            if not resample or attempt == max_attempts:
                raise
            continue
        result.queries = orc.queries - first_query
        result.seconds = time.perf_counter() - start
        result.extra["attempts"] = failures + [{"attempt": attempt, "reason": "ok"}]
        _validate(result, orc, n_valid, rng, box)
        result.proves = _proves(result, H0)
        return result


def _run(orc, sched, be, rng, shared, distinct, certify):
    """Ask the schedule, recover up the modular ladder, certify (module docstring)."""
    first = len(orc.transcript)
    answers = orc.ask_many(sched.queries())
    transcript = orc.transcript[first:]
    slope_elems = [exp_rational(s) for s in ([shared] if shared is not None else distinct or [])]
    elems = [a for ans in answers for a in ans] + slope_elems
    window = exponent_window(elems)
    tried, last = [], None
    for bits in prime_sizes(elems, window=window):
        try:
            engine = make_engine(be, elems, random.Random(rng.getrandbits(64)), bits,
                                 sched.length, True, window)
            model = recover(sched, answers, engine, be, shared, distinct)
        except (BadReduction, LearningFailure) as e:
            tried.append({"prime_bits": bits, "outcome": getattr(e, "reason", "bad-reduction"),
                          "message": str(e)})
            last = e
            continue
        cert = certify_causal(model, transcript, be) if certify else None
        if cert is not None and not cert["certified"]:
            tried.append({"prime_bits": bits, "outcome": "certification-failed"})
            last = CertificationFailed(
                f"the recovered causal model does not reproduce query {cert['first_mismatch']} "
                f"exactly at any prime size: the oracle is not causal attention with ≤ "
                f"{sched.H0} heads{' and these slopes' if shared or distinct else ''}", **cert)
            continue
        if cert is not None:
            cert.update(engine.describe(), prime_sizes_tried=[t["prime_bits"] for t in tried]
                        + [bits])
        d, H0 = sched.d, sched.H0
        queries, length, _ = causal_count(d, H0, sched.mode, sched.residual)
        return CausalResult(
            algorithm="causal", dim=d, backend=be.name,
            heads=[(h.W, h.v) for h in model.heads], queries=len(transcript),
            max_length=sched.max_length, expected_queries=queries, expected_max_length=length,
            transcript=transcript, certificate=cert, causal=model,
            extra={"U": sched.U, "X": sched.X, "H0": H0, "mode": sched.mode,
                   "residual": sched.residual, "shared_slope": shared, "slopes": distinct,
                   "outputs_read": sum(len(a) for a in answers), "certification": cert})
    if not isinstance(last, LearningFailure):
        last = CertificationFailed(f"the modular reduction failed at every prime size: {last}")
    last.details["prime_sizes_tried"] = tried
    raise last


def recover(sched, answers, engine, be, shared=None, distinct=None) -> CausalAttention:
    """The canonical causal model from the schedule's exact answers (module docstring)."""
    heads, w = recover_parts(sched, answers, engine, be, Close(be), shared, distinct)
    slopes = None
    if shared is not None:
        slopes = [shared] * len(heads)
    elif distinct is not None:
        slopes = list(distinct)
    return CausalAttention([AttentionHead(W, vh) for W, vh in heads], slopes if heads else None,
                           w, dim=sched.d).canonical()


def slope_base(engine, be, s):
    """r = e^{s} in the engine's field: the image of t^{L s} (exact), a ball or number else."""
    if be.name == "exact":
        return engine.sample(exp_rational(s))
    return be.exp(be.scalar(s))


def recover_parts(sched, answers, engine, be, close, shared=None, distinct=None, hint=None):
    """([(W_h, v_h)] in the order found, w or None) from the answers, written once for every
    field: exact (F_p images, lifted), balls (certified enclosures) or the reals; ``hint``:
    the interpolation type tried first in every family."""
    field = engine.field
    on = list(range(1 if sched.residual else 0, sched.length))
    solved, g0 = {}, {}
    r = None if shared is None else slope_base(engine, be, shared)
    rs = None if distinct is None else [slope_base(engine, be, s) for s in distinct]
    nodes = None if rs is not None else copy_count_nodes(field, r, on)
    for fam, ans in zip(sched.families, answers):
        if len(ans) != sched.length:
            raise NotAttention(f"a causal answer has {len(ans)} outputs for {sched.length} "
                               f"positions")
        if be.name == "exact" and not ans[0].is_rational():
            raise NotAttention("the output at position 1 (one token) is not rational: not "
                               "attention")
        ys = engine.sample_many(ans[on[0]:])
        if rs is None:
            K, heads = solve_copy_count(field, ys, nodes, sched.H0, hint)
        else:
            K, heads = solve_slopes(field, ys, on, rs)
        key = (fam.u_key, fam.x_key)
        solved[key] = (engine.scalar(K),
                       [(engine.score(z), engine.scalar(c)) for z, c in heads])
        g0[key] = ans[0].as_rational() if be.name == "exact" else ans[0]
    if rs is not None:
        S, C = _labelled(sched, solved, close)
    else:
        H_star = pole_counts(sched.families, solved, ((0,), (0,)))
        S, C = (_matched if sched.mode == "copy-count" else _by_residue)(sched.d, H_star,
                                                                          solved, close)
    bases = be.basis_solver(sched.U, sched.X)
    heads = [(bases.both(S[a]), [-row[0] for row in bases.left([[c] for c in C[a]])])
             for a in range(len(S))]
    d, zero = sched.d, be.scalar(0)
    v = [sum((h[1][i] for h in heads), zero) for i in range(d)]
    w = [zero] * d
    if sched.residual:
        wu = [[solved[((i,), (0,))][0] + sum((c for _, c in solved[((i,), (0,))][1]), zero)
               - g0[((i,), (0,))]] for i in range(d)]
        w = [row[0] for row in bases.left(wu)]
    _check_constants(sched, solved, g0, [a + b for a, b in zip(v, w)], close, zero)
    return heads, (w if sched.residual else None)


def _by_residue(d, H_star, solved, close):
    """S and C as P2's ``_matched`` gives them, column 1 matched through I(u_1 + u_i, x_1)
    (:func:`~exactattn.learners.p2.matching.match`), every other column's heads by their
    residue −v_h·u_i, the same in every family of row u_i (docs/design.md §10): a residue
    with no or several heads of the family is a named failure."""
    ref = solved[((0,), (0,))][1]
    col = [ref] + [match(ref, solved[((i,), (0,))][1], solved[((0, i), (0,))][1], close,
                         False, f"I(u{i + 1}, x1)") for i in range(1, d)]
    S = [[[None] * d for _ in range(d)] for _ in range(H_star)]
    C = [[None] * d for _ in range(H_star)]
    for i in range(d):
        for a, (s, c) in enumerate(col[i]):
            S[a][i][0], C[a][i] = s, c
        for j in range(1, d):
            fam = solved[((i,), (j,))][1]
            for a, (_, c) in enumerate(col[i]):
                hits = [s for s, c_b in fam if close(c_b, c)]
                if len(hits) != 1:
                    cls = NotAttention if not hits else AmbiguousMatching
                    raise cls(f"residue matching I(u{i + 1}, x{j + 1}): {len(hits)} heads of the "
                              f"family have the residue {c} of a head at u{i + 1}",
                              family=f"I(u{i + 1}, x{j + 1})", candidates=len(hits))
                S[a][i][j] = hits[0]
    return S, C


def _labelled(sched, solved, close):
    """S[a][i][j] and C[a][i] of the distinct-slope schedule: head a is the head with slope a
    in every family (no matching); its residue −v_a·u_i must not depend on x_j (checked)."""
    d, H = sched.d, len(solved[((0,), (0,))][1])
    S = [[[None] * d for _ in range(d)] for _ in range(H)]
    C = [[None] * d for _ in range(H)]
    for (uk, xk), (_, heads) in solved.items():
        i, j = uk[0], xk[0]
        for a, (s, c) in enumerate(heads):
            S[a][i][j] = s
            if C[a][i] is None:
                C[a][i] = c
            elif not close(C[a][i], c):
                raise NotAttention(f"the head with slope number {a + 1} has residues that "
                                   f"depend on x at u{i + 1}: not attention with these slopes")
    return S, C


def _check_constants(sched, solved, g0, vw, close, zero):
    """Every family's constant is (v + w)·x and its first output (v + w)·(x − u) (w = 0
    without a residual): NotAttention otherwise."""
    for fam in sched.families:
        key = (fam.u_key, fam.x_key)
        K = solved[key][0]
        want_K = sum((a * b for a, b in zip(vw, fam.x)), zero)
        want_0 = want_K - sum((a * b for a, b in zip(vw, fam.u)), zero)
        if not (close(K, want_K) and close(g0[key], want_0)):
            raise NotAttention("a family's constant or first output is not (v + w)·x, "
                               "(v + w)·(x − u) for the recovered v and w: not causal attention "
                               "with this read-out", family=str(key))


def certify_causal(model, transcript, be):
    """Every output of every transcript query equals the model's exactly in Q(t)."""
    for n, (tokens, answer) in enumerate(transcript):
        got = model.evaluate_clean(list(tokens), be)
        if len(got) != len(answer) or any(a != b for a, b in zip(got, answer)):
            return {"certified": False, "first_mismatch": n}
    return {"certified": True, "method": "exact evaluation in Q(t) of every output of every "
            "transcript query", "answers_checked": len(transcript),
            "outputs_checked": sum(len(a) for _, a in transcript)}


def _validate(result, orc, count, rng, box):
    """``count`` causal queries of random distinct tokens (a shape the schedule never asks),
    answered exactly as the recovered model answers them, or OutOfClass."""
    model, be, d = result.causal, orc.backend, result.dim
    vrng = random.Random(rng.getrandbits(64))
    with orc.validating():
        for _ in range(count):
            q = [[vrng.randint(-box, box) for _ in range(d)] for _ in range(result.max_length)]
            got = orc.ask_many([q])[0]
            if tuple(got) != tuple(model.evaluate_clean(be.tokens(q), be)):
                raise OutOfClass("a validation query's outputs differ from the recovered "
                                 "model's: the oracle is not causal attention of this class")
            result.validation.append((q, got))
    result.validation_queries = count


def _proves(result, H0):
    """What an exact causal run proves (docs/decoders.md §5): with exactly H₀ heads, Lemma B
    (as for P2: one head per separated visible pole, rows and columns tied by the matching or
    by the residues, slopes labelling the heads); below H₀, M or a draw in the oracle's own
    bad set, and the design certificate (§6) for the rest."""
    n, outs = result.queries, result.extra["outputs_read"]
    text = (f"the recovered causal model reproduces all {outs} outputs of the {n} queries "
            f"exactly in Q(t) and the draw is generic for it; ")
    if len(result.heads) == H0:
        text += (f"every causal model with ≤ {H0} heads (and these slopes) that gives these "
                 f"outputs is this model (Lemma B of docs/evidence.md, carried over in "
                 f"docs/decoders.md §5)")
    else:
        text += (f"any oracle with ≤ {H0} heads giving the same outputs is this model or has "
                 f"this draw in its own bad set ({len(result.heads)} < H0 heads: "
                 f"--design-certificate proves it is this model, docs/decoders.md §6)")
    return (f"{text}; {result.validation_queries} validation queries of random distinct "
            f"tokens are answered exactly as the recovered model answers them")
