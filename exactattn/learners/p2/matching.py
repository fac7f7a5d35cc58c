"""P2's matching rules and exact certification (P2, matching families; docs/design.md §4.3),
shared by the P2 learner (:mod:`.multi_head`) and the schedules beyond P2 (:mod:`.economy`,
:mod:`.multi_low_rank`, docs/design.md §10):

* :class:`Close` — scalar equality, exact on the exact backend, toleranced on mp / float;
* :func:`match` — the heads of a family paired with the reference heads through a matching
  family (sum of u's, or shared u), the failure named independently of the heads' order;
* :func:`pole_counts` — every family shows the reference's pole count, or the failure is named
  (colliding poles / invisible head);
* :func:`certify` — the recovered model reproduces every transcript answer exactly in Q(t)
  (on mp / float: the largest relative residual).
"""

from __future__ import annotations

import operator

from ...errors import AmbiguousMatching, CollidingPoles, InvisibleHead, NotAttention
from ..result.precision import approximate_tolerances, backend_precision

__all__ = ["Close", "match", "pole_counts", "key_label", "certify", "silent"]


class Close:
    """Scalar equality: exact on the exact backend, a relative tolerance on mp / float (the
    matching rule of :func:`~exactattn.learners.result.precision.approximate_tolerances`, from the
    precision ``precision`` or else the backend's own)."""

    def __init__(self, be, precision=None):
        self.exact = be.name == "exact"
        if not self.exact:
            prec = precision or backend_precision(be)
            self.tol = be.scalar(approximate_tolerances(prec)["matching"])

    def __call__(self, a, b) -> bool:
        if self.exact:
            return a == b
        return abs(a - b) <= self.tol * (1 + abs(a) + abs(b))


def match(ref, fam, sumfam, close, shared_u: bool, label, join=operator.add):
    """For each reference head a = (s_a, c_a) the unique head b of ``fam`` such that the
    matching family ``sumfam`` has a head c with s_c = s_a + s_b and
    c_c = c_a + c_b (column 1, sum of u's) or c_c = c_b = c_a (shared u) (docs/design.md §4.3).
    ``join`` combines s_a and s_b: the sum of scores, or the product of poles z = e^s when
    the heads are still images in F_p (exact ``close`` only).

    The failure named does not depend on the order of the heads: a reference head with no
    candidate → NotAttention; otherwise one with several candidates, or two reference heads
    with the same candidate → AmbiguousMatching."""
    # exact: the matching family's heads as a set, so a candidate is one look-up (equality
    # of exact rationals is their hash-consistent ==); mp / float compare each within tol
    table = {(s_c, c_c) for s_c, c_c in sumfam} if getattr(close, "exact", False) else None
    # exact, shared u: the heads b with c_b = c_a by one look-up (in increasing b), not H²
    # comparisons; else every head of the family
    by_c = None
    if table is not None and shared_u:
        by_c = {}
        for b, (_, c_b) in enumerate(fam):
            by_c.setdefault(c_b, []).append(b)
    cands_of = []
    for s_a, c_a in ref:
        cands = []
        for b in range(len(fam)) if by_c is None else by_c.get(c_a, ()):
            s_b, c_b = fam[b]
            if shared_u and not close(c_b, c_a):
                continue
            want_c = c_a if shared_u else c_a + c_b
            s_ab = join(s_a, s_b)
            if (s_ab, want_c) in table if table is not None else \
                    any(close(s_c, s_ab) and close(c_c, want_c) for s_c, c_c in sumfam):
                cands.append(b)
        cands_of.append(cands)
    for cls, what, bad in ((NotAttention, "no head", lambda n: n == 0),
                           (AmbiguousMatching, "several heads", lambda n: n > 1)):
        for (s_a, c_a), cands in zip(ref, cands_of):
            if bad(len(cands)):
                raise cls(f"matching {label}: {what} of the family fit a reference head "
                          f"(score {s_a}, residue {c_a})", family=label, candidates=len(cands))
    chosen = [cands[0] for cands in cands_of]
    if len(set(chosen)) != len(chosen):
        raise AmbiguousMatching(f"matching {label}: two reference heads matched the same head",
                                family=label)
    return [fam[b] for b in chosen]


def pole_counts(families, solved, ref_key):
    """Every family must show as many poles as the reference I(u_1, x_1); otherwise name the
    failure: fewer poles at one x for a shared u = colliding poles; a different count
    for another u = a head invisible there (v_h·u = 0) or colliding at x_1."""
    H_star = len(solved[ref_key][1])
    by_u = {}
    for fam in families:
        n = len(solved[(fam.u_key, fam.x_key)][1])
        by_u.setdefault(fam.u_key, []).append((fam.x_key, n))
    for u_key, rows in by_u.items():
        counts = {n for _, n in rows}
        if len(counts) > 1:
            raise CollidingPoles(
                f"families sharing u{key_label(u_key)} show different pole counts "
                f"{sorted(counts)}: two heads' poles collide at some x", u=key_label(u_key),
                counts={key_label(x): n for x, n in rows})
        n = counts.pop()
        if n != H_star:
            raise InvisibleHead(
                f"families with u{key_label(u_key)} show {n} poles but I(u1, x1) shows "
                f"{H_star}: a head is invisible (v_h·u = 0) or two poles collide at x1",
                u=key_label(u_key), poles=n, reference=H_star)
    return H_star


def key_label(key) -> str:
    return str(key[0] + 1) if len(key) == 1 else f"1+{key[1] + 1}"


def silent(stage, done, total):
    pass


def certify(model, transcript, be, progress=silent):
    """Exact: the recovered model reproduces every transcript answer in Q(t) (in one batch:
    :meth:`~exactattn.models.attention.MultiHeadAttention.first_disagreement`)."""
    if be.name == "exact":
        total = len(transcript)
        n = model.first_disagreement(transcript, be,
                                     done=lambda k: progress("certification", k, total))
        if n is not None:
            return {"certified": False, "first_mismatch": n}
        return {"certified": True, "method": "exact evaluation in Q(t) of every transcript query",
                "answers_checked": len(transcript)}
    worst = 0
    for tokens, answer in transcript:
        r = abs(model(tokens, be) - answer) / (1 + abs(answer))
        worst = max(worst, r)
    return {"certified": None, "max_relative_residual": worst}
