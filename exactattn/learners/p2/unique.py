"""Certified uniqueness (beyond P2; docs/design.md §11): the answer fibre of a run's
transcript, and queries that shrink it to one model.

:func:`transcript_families` reads every copy-count family of a P2 transcript exactly
(:mod:`.family_function`) — from the answers alone, not from the learner's model —, with
ρ = U v fixed by q₀ and the constants of the families I(u_i, x₁). :func:`certify_unique`
computes the fibre (:mod:`.fibre`) and, while it holds more than one model or a piece of
positive dimension, asks one more copy-count family I(Σ a_i u_i, Σ b_j x_j) with small random
a, b (2H₀ queries; its m = 0 sample v·x is known), and recomputes. It stops when the fibre is
one model — then *every oracle with at most H₀ heads that gives these answers is that model*,
no probability and no genericity theorem involved — or when it is empty (no model with
≤ H₀ heads gives these answers: out of class), or at its query budget.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction

from ...errors import LearningFailure, OutOfClass
from .family_function import family_queries, read_family
from .fibre import MAX_NODES, compute_fibre
from .schedule import Schedule

__all__ = ["transcript_families", "certify_unique", "fibre_of_run", "with_fibre", "Uniqueness",
           "NotUnique",
           "schedule_order", "model_of", "statement", "default_families", "prefetch_families"]


class NotUnique(LearningFailure):
    """The fibre still holds more than one model at the query budget."""

    reason = "not-unique"


def _indicator(key, d):
    return tuple(Fraction(1) if i in key else Fraction(0) for i in range(d))


def _dot(a, b):
    return sum((Fraction(x) * Fraction(y) for x, y in zip(a, b)), Fraction(0))


def _solve(M, rhs):
    """x with M x = rhs, exactly (M square, invertible)."""
    from flint import fmpq, fmpq_mat
    n = len(M)
    A = fmpq_mat(n, n, [fmpq(Fraction(x).numerator, Fraction(x).denominator)
                        for r in M for x in r])
    b = fmpq_mat(n, 1, [fmpq(Fraction(x).numerator, Fraction(x).denominator) for x in rhs])
    sol = A.solve(b)
    return [Fraction(int(sol[i, 0].p), int(sol[i, 0].q)) for i in range(n)]


def transcript_families(schedule, answers, rng: random.Random):
    """(families, roles, ρ, v): every family of the P2 schedule read exactly from the answers
    (``answers[0]`` = q₀, then each family's m = 1…2H₀ in schedule order); ``roles`` tells
    column-1 families ("col1"), their matching families ("match1") and the rest ("rest")."""
    d, H0, per = schedule.d, schedule.H0, 2 * schedule.H0
    q0 = answers[0]
    if not q0.is_rational():
        raise OutOfClass("F([x1]) of a single token is not a rational number: no rational "
                         "model gives this transcript")
    q0 = q0.as_rational()
    fams, roles = [None] * len(schedule.families), [None] * len(schedule.families)

    def read(k, g0):
        f = schedule.families[k]
        ys = answers[1 + k * per: 1 + (k + 1) * per]
        fams[k] = read_family(_indicator(f.u_key, d), _indicator(f.x_key, d), [g0] + ys, H0,
                              rng)

    for k, f in enumerate(schedule.families):
        if f.ends_in_x1:
            read(k, q0)
            roles[k] = "col1" if len(f.u_key) == 1 else "match1"
    rho = [fams[k].K - q0 for k, f in enumerate(schedule.families)
           if f.ends_in_x1 and len(f.u_key) == 1]
    v = _solve(schedule.U, rho)
    for k, f in enumerate(schedule.families):
        if not f.ends_in_x1:
            read(k, _dot(v, f.x))
            roles[k] = "rest"
    return fams, roles, rho, v


def schedule_order(roles):
    """Label each column-1 matching family right after the two families it pairs, extra
    families next, then the rest in schedule order (a matching family I(u_i, x₁+x_j) follows
    I(u_i, x_j) there already)."""
    col1 = [k for k, r in enumerate(roles) if r == "col1"]
    match1 = [k for k, r in enumerate(roles) if r == "match1"]
    order = col1[:1]
    for k in range(1, len(col1)):
        order.append(col1[k])
        if k - 1 < len(match1):
            order.append(match1[k - 1])
    order += match1[max(0, len(col1) - 1):]
    order += [k for k, r in enumerate(roles) if r == "extra"]
    order += [k for k, r in enumerate(roles) if r == "rest"]
    return order


def model_of(S, r, U, X):
    """The heads (W_h, v_h) of coordinates (S_h, r_h): W = U⁻¹ S X⁻ᵀ, v = U⁻¹ r."""
    from flint import fmpq, fmpq_mat
    d = len(U)

    def mat(rows):
        return fmpq_mat(len(rows), len(rows[0]), [fmpq(Fraction(x).numerator,
                                                       Fraction(x).denominator)
                                                  for row in rows for x in row])
    Ui, Xti = mat(U).inv(), mat(X).transpose().inv()
    out = []
    for Sh, rh in zip(S, r):
        Wm = Ui * mat(Sh) * Xti
        vm = Ui * mat([[x] for x in rh])
        out.append(([[Fraction(int(Wm[i, j].p), int(Wm[i, j].q)) for j in range(d)]
                     for i in range(d)],
                    [Fraction(int(vm[i, 0].p), int(vm[i, 0].q)) for i in range(d)]))
    return out


@dataclass
class Uniqueness:
    """The outcome of :func:`certify_unique`: the fibre's one model (heads), the final fibre,
    the extra families asked (their (a, b)) and queries, and every fibre computed."""

    heads: list
    fibre: object
    extra_families: list = field(default_factory=list)
    extra_queries: int = 0
    rounds: list = field(default_factory=list)
    #: (tokens, answer) of every extra query, in asking order
    extra_transcript: list = field(default_factory=list, repr=False)


def _random_family(rng, d):
    while True:
        a = tuple(Fraction(rng.randint(-2, 2)) for _ in range(d))
        b = tuple(Fraction(rng.randint(-2, 2)) for _ in range(d))
        if any(a) and any(b):
            return a, b


def certify_unique(orc, schedule, answers, rng: random.Random, max_families: int = 8,
                   progress=None, prefetch: int = 0, max_nodes: int = MAX_NODES):
    """Shrink the answer fibre of a P2 transcript to one model (module docstring).

    ``orc`` is the run's oracle (extra queries are counted there), ``answers`` the schedule's
    answers in order. Returns :class:`Uniqueness`; raises OutOfClass when the fibre is empty
    and NotUnique when ``max_families`` extra families leave more than one model.
    ``prefetch`` extra families are asked before the first fibre and labelled right after
    column 1 (:func:`schedule_order`), where they prune most: worth it when the fibre is known
    to hold more than one model (fewer heads found than H₀, d ≥ 2: P2-nonunique's twins).
    ``max_nodes`` bounds each search (FibreTooLarge beyond it)."""
    d, H0 = schedule.d, schedule.H0
    fams, roles, rho, v = transcript_families(schedule, answers, rng)
    extra, asked_tr = [], []

    def ask():
        a, b = _random_family(rng, d)
        queries, u, x = family_queries(schedule.U, schedule.X, a, b, H0)
        ys = []
        for q in queries:
            ys.append(orc(q))
            asked_tr.append((tuple(tuple(t) for t in q), ys[-1]))
            if progress is not None:
                progress("uniqueness", len(asked_tr), None)
        extra.append((a, b))
        return read_family(a, b, [_dot(v, x)] + ys, H0, rng)

    for _ in range(min(prefetch, max_families)):
        fams.append(ask())
        roles.append("extra")
    fib = compute_fibre(d, H0, fams, rho, schedule_order(roles), max_nodes=max_nodes,
                        seed=rng.getrandbits(32))
    rounds = [_round(fib)]
    while True:
        if not fib.pieces:
            raise OutOfClass(f"no model with ≤ {H0} heads gives these answers (the answer "
                             f"fibre of {len(fib.families)} copy-count families is empty)",
                             families=len(fib.families))
        if fib.unique_model() is not None:
            S, r = fib.pieces[0].representative()
            return Uniqueness(model_of(S, r, schedule.U, schedule.X), fib, extra,
                              len(asked_tr), rounds, asked_tr)
        if len(extra) >= max_families:
            raise NotUnique(f"the answer fibre still holds {len(fib.pieces)} pieces after "
                            f"{len(extra)} extra families ({len(asked_tr)} queries)",
                            pieces=len(fib.pieces), extra_queries=len(asked_tr))
        fib = fib.extend(ask(), max_nodes=max_nodes)
        rounds.append(_round(fib))


def default_families(d: int) -> int:
    """The default most extra families: d² + 4 (a twin pair of heads (S, r), (S′, −r) survives
    a generic family unless aᵀr = 0 or aᵀ(S − S′)b = 0, so excluding it takes about d² + d
    generic families in all; measured: 1 extra family at d = 2 with H₀ = H + 1, 8 at d = 3)."""
    return d * d + 4


def prefetch_families(d: int, found: int, H0: int, limit: int) -> int:
    """Extra families asked before the first fibre (:func:`certify_unique`): d² − 1 when the
    learner found fewer heads than H₀ at d ≥ 3 — P2-nonunique's twins are then in the
    fibre at every draw, and families labelled early prune the search most (at (d, H, H₀) =
    (3, 1, 2): 2,923 nodes with 8 first against 11,377 with none) —, else none: at d = 2 the
    search is small and one family after the first fibre usually suffices (4 queries at
    (2, 1, 2), not 12), and at H = H₀ a generic draw's fibre was {M} in every case measured."""
    if d < 3 or found >= H0:
        return 0
    return min(limit, d * d - 1)


def _round(fib):
    return {"families": len(fib.families), "pieces": len(fib.pieces), "nodes": fib.nodes,
            "dimensions": [p.dimension for p in fib.pieces]}


def statement(result, H0: int) -> str:
    """The ``proves`` text of a run whose uniqueness was certified (module docstring)."""
    u = result.uniqueness
    n = result.queries + u.extra_queries
    return (f"every model with ≤ {H0} heads that gives these {n} answers ({result.queries} of "
            f"the schedule, {u.extra_queries} of {len(u.extra_families)} extra copy-count "
            f"famil{'y' if len(u.extra_families) == 1 else 'ies'}) is this model: its answer fibre, computed exactly (each family's "
            f"rational function equal in Q(t), an exhaustive labelling search of "
            f"{u.fibre.nodes} nodes), is this one point — no genericity theorem and no "
            f"probability are used")


def fibre_of_run(result, orc, rng: random.Random, max_families=None, progress=None):
    """:func:`certify_unique` for a P2 :class:`~exactattn.learners.result.LearnResult`: the
    fibre of its schedule answers shrunk to one model with extra families (at most
    ``max_families``, default :func:`default_families`) asked of ``orc``; the result is not
    changed.  A failure carries the run's bases."""
    ex = result.extra
    limit = default_families(result.dim) if max_families is None else max_families
    try:
        return certify_unique(orc, Schedule(ex["U"], ex["X"], ex["H0"]),
                              [a for _, a in result.transcript], rng, max_families=limit,
                              progress=progress,
                              prefetch=prefetch_families(result.dim, len(result.heads),
                                                         ex["H0"], limit))
    except LearningFailure as e:
        for key in ("U", "X"):
            e.details.setdefault(key, ex.get(key))
        raise


def with_fibre(result, orc, rng: random.Random, max_families=None, progress=None):
    """``result`` made the one model of its answer fibre (:func:`fibre_of_run`): its heads
    the fibre's model, ``uniqueness`` the :class:`Uniqueness` (a ``fibre`` certificate,
    docs/design.md §11), ``unique_queries`` the extra queries; returns ``result``."""
    from ...models.attention import AttentionHead
    u = fibre_of_run(result, orc, rng, max_families, progress)
    result.uniqueness, result.unique_queries = u, u.extra_queries
    result.heads = [AttentionHead(W, v) for W, v in u.heads]
    return result
