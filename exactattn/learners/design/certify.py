"""``certify``: is the oracle M?  Theorem A's design asked of any oracle and compared with M
exactly (docs/design.md §12; docs/evidence.md §2b).

:func:`certify` asks the design of :mod:`.moment_curve` — the d single-token queries and
n = (L − 1)(d² − 1) + d moment-curve families of L − 1 samples, L = H + H₀ — and compares
every answer with M's in Q(t).  When all agree, Theorem A proves that every oracle with at
most H₀ heads (real parameters) that gives these answers has M's canonical form; the
certificate (kind ``design``) lets the standard-library checker re-derive the design, the
constants γ = d − 1 and β = d² − 1, condition (iii) and every answer.  At the first answer that
differs from M's it stops: M is then not the oracle, and the result names that query.

It works after every learner and for a model written by hand: M is any rational model; the
oracle is any exact oracle (an :class:`~exactattn.Oracle` or a callable answering elements of
Q(t)).  Its queries are counted apart from a learner's (``Certification.queries``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..._typing import OracleLike, Progress

from . import moment_curve as design

__all__ = ["certify", "Certification", "estimate_design", "MAX_DIM", "MAX_HEADS_BOUND"]

#: the largest sizes certify accepts: those the checker reads (proofs_checks/checker/design.py)
MAX_DIM = 16
MAX_HEADS_BOUND = 8


@dataclass
class Certification:
    """What :func:`certify` found.  ``holds``: every design answer is M's, so (Theorem A)
    every oracle with ≤ ``heads_bound`` heads giving them is M; otherwise ``mismatch`` is the
    index of the first query whose answer differs from M's (``mismatch_query`` the query),
    and M is not the oracle.  ``queries`` counts the queries certify asked (apart from any
    learner's), ``transcript`` holds them with the oracle's answers, ``points`` the design
    points λ of the families asked."""

    model: object
    dim: int
    heads: int
    heads_bound: int
    holds: bool
    queries: int
    max_length: int
    families: int
    points: list
    transcript: list = field(repr=False)
    mismatch: int | None = None
    mismatch_query: list | None = field(default=None, repr=False)
    seconds: float = 0.0
    #: samples per family when a transcript asks more than L − 1 (the design learner's)
    family_samples: int | None = None

    @property
    def samples(self) -> int:
        """Samples per family: m = 1 … L − 1, or ``family_samples`` (≥ L − 1) when set."""
        return self.heads + self.heads_bound - 1 if self.family_samples is None \
            else self.family_samples

    @property
    def needed(self) -> int:
        """The design's full query count, d + n(L − 1)."""
        return design.design_count(self.dim, self.heads, self.heads_bound)

    @property
    def proves(self) -> str:
        """What the result proves, in one sentence (Theorem A; docs/evidence.md §2b)."""
        if self.holds:
            return (f"every oracle with ≤ {self.heads_bound} heads (real parameters) that gives "
                    f"these {self.queries} answers is M (Theorem A: {self.families} "
                    f"moment-curve families > γ + (L−1)β = "
                    f"{design.families_needed(self.dim, self.heads, self.heads_bound) - 1}; "
                    f"no probability, no genericity theorem, no search)")
        return (f"M is not the oracle: the answer to design query {self.mismatch} (length "
                f"{len(self.mismatch_query)}) differs from M's exactly in Q(t)")

    def certificate(self) -> dict:
        """The stand-alone certificate (claim ``certify``, kind ``design``) that
        ``python -m proofs_checks.verify`` re-checks; only a result that holds has one."""
        if not self.holds:
            raise ValueError("certify found a mismatch: there is no design certificate for a "
                             "model that is not the oracle")
        from proofs_checks.checker.parse import MAX_INT_DIGITS
        from proofs_checks.common import design_certificate
        cert = design_certificate(self)
        top = max((abs(k) for a in cert["checks"][0]["answers"] for part in ("num", "den")
                   for k, _ in a[part]), default=0)
        digits = len(str(top))
        if digits > MAX_INT_DIGITS:
            raise ValueError(f"the design certificate would hold an exponent of {digits} "
                             f"digits, above the {MAX_INT_DIGITS} the checker reads: use a "
                             f"model with smaller entries or a smaller d")
        return cert

    def write_certificate(self, path) -> None:
        """Write :meth:`certificate` as JSON to ``path``; ValueError (nothing written) when
        the file would exceed the checker's size limit."""
        write_design_certificate(self.certificate(), path)


def write_design_certificate(cert: dict, path) -> None:
    """Write a design certificate (Theorem A, for encoders or decoders) as JSON to ``path``;
    ValueError, nothing written, when the file would exceed the size the checker reads."""
    import json

    from proofs_checks.checker.parse import MAX_BYTES

    from ..result import _write_text
    text = json.dumps(cert, ensure_ascii=False) + "\n"
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise ValueError(f"the design certificate would have {size:,} bytes, above the "
                         f"{MAX_BYTES:,} the checker reads: drop --certificate or use "
                         f"smaller sizes")
    _write_text(path, text)


def _bound(name, value, lo, hi):
    """``value`` if an integer in lo..hi (hi: what the design checker reads), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi} (the design checker's "
                         f"limits), got {value!r}")
    return value


def _as_model(model):
    """M as a canonical rational MultiHeadAttention (a model, a head, or (W, v) pairs)."""
    from ...models.attention import AttentionHead, MultiHeadAttention
    if isinstance(model, AttentionHead):
        model = MultiHeadAttention([model])
    elif not isinstance(model, MultiHeadAttention):
        try:
            model = MultiHeadAttention([h if isinstance(h, AttentionHead) else AttentionHead(*h)
                                        for h in model])
        except TypeError:
            raise TypeError("model must be a MultiHeadAttention, an AttentionHead or a list of "
                            "(W, v) pairs") from None
    if model.dim is None:
        raise ValueError("model has no heads and no dimension: give MultiHeadAttention([], dim=d)")
    if not model.is_rational:
        raise ValueError("certify compares answers exactly in Q(t): M needs rational "
                         "parameters (Fraction or int entries)")
    return model.canonical()


def estimate_design(d: int, H: int, H0: int, model: Any = None) -> Any:
    """The design's cost before its first query (as :mod:`~exactattn.learners.p2.cost`
    prices a learner): d + n(L − 1) queries; each family answer of an oracle with ≤ H₀ heads
    has ≤ 2·2^H₀ terms, M's ≤ 2·2^H, every answer is kept; the exponents' size is that of M's
    answer at the design's largest point (λ^{d²−1} dominates)."""
    from ..p2.cost import (SECONDS_PER_TERM, CostEstimate, _term_bytes,
                                    estimate_answer)
    n = design.families_needed(d, H, H0)
    queries, length = design.design_count(d, H, H0), design.design_max_length(H, H0)
    bits = 40
    if model is not None and model.heads:
        lam = max(design.points(n), key=design.height)
        bits = estimate_answer(model, design.family_queries(lam, d, length - 1)[-1]).exponent_bits
    words = 1 + bits // 64
    terms = 2 * 2 ** H0 + 2 * 2 ** H
    total = queries * terms
    return CostEstimate(f"certify at d={d}, H={H}, H0={H0} ({n} moment-curve families)",
                        queries, length, 2 * 2 ** max(H, H0), bits,
                        total * _term_bytes(bits), total * words * SECONDS_PER_TERM)


def certify(oracle: OracleLike, model: Any, heads_bound: int | None = None,
            force: bool = False, progress: Progress | None = None) -> Certification:
    """Theorem A (docs/design.md §12): ask the moment-curve design of any exact oracle and
    compare every answer with M's exactly in Q(t).

    ``model``: the candidate M (rational; canonicalised here, H = its canonical head count);
    ``heads_bound``: H₀, the head bound the verdict covers (default H).  Returns a
    :class:`Certification`: ``holds`` with ``proves`` "every oracle with ≤ H₀ heads that gives
    these answers is M", or the first query where the oracle and M differ.  The cost is
    estimated before the first query and refused above the budget (CostExceeded) unless
    ``force``.  ``progress(stage, done, total)`` is called as the families are asked."""
    from ..p2.cost import check_budget
    from ...oracles.oracle import as_oracle
    M = _as_model(model)
    d, H = M.dim, len(M.heads)
    _bound("the model's dimension", d, 1, MAX_DIM)
    H0 = H if heads_bound is None else _bound("heads_bound (--heads-bound)", heads_bound, 1,
                                               MAX_HEADS_BOUND)
    H0 = max(H0, 1)
    orc = as_oracle(oracle, d)
    if not orc.backend.exact or orc.backend.name != "exact":
        raise ValueError(f"certify needs exact answers in Q(t); this oracle answers on the "
                         f"{orc.backend.name} backend (Theorem A compares answers exactly)")
    check_budget(estimate_design(d, H, H0, M), force)
    start, asked_before = time.perf_counter(), orc.spent
    n, samples = design.families_needed(d, H, H0), H + H0 - 1
    lams = design.points(n)
    transcript = []
    blocks = [design.unit_queries(d)] + [design.family_queries(lam, d, samples) for lam in lams]
    mismatch, asked_blocks = None, 0
    for block in blocks:
        answers = orc.ask_many(block)
        part = list(zip(block, answers))
        bad = M.first_disagreement(part)
        transcript += part
        asked_blocks += 1
        if bad is not None:
            mismatch = len(transcript) - len(part) + bad
            break
        if progress is not None:
            progress("certify", asked_blocks, len(blocks))
    families = asked_blocks - 1                 # the first block is the unit queries
    return Certification(
        model=M, dim=d, heads=H, heads_bound=H0, holds=mismatch is None,
        queries=orc.spent - asked_before, max_length=max(len(q) for q, _ in transcript),
        families=families, points=lams[:families], transcript=transcript, mismatch=mismatch,
        mismatch_query=None if mismatch is None else transcript[mismatch][0],
        seconds=time.perf_counter() - start)
