"""The answer-fibre search as a learner (docs/beyond.md §10; answer fibres, docs/design.md
§11): ask copy-count families one at a time and stop as soon as the answer fibre of the
transcript — every canonical model with at most H₀ heads giving its answers — is one point.

Random bases U, X (a seeded draw, as P2's).  The d single-token queries [u_i] give
ρ_i = v·u_i, hence v = U⁻¹ρ, K = v·(x + u) and G(0) = v·x of every family; each family
I(Σ a_i u_i, Σ b_j x_j) then needs 2H₀ − 1 samples (the limit known fixes a type-(H₀, H₀)
function, docs/beyond.md §8).  The families are seeded random small-integer combinations
(:func:`family_order`); after each one the fibre is extended
(:meth:`~exactattn.learners.p2.fibre.Fibre.extend`) and the learner stops when it is one
point, which is then the oracle if the oracle has at most H₀ heads — by the exhaustive search
of docs/design.md §11, with no genericity theorem.  The count is adaptive: the smallest
prefix of this family order whose fibre is one point.  The transcript is not a P2 schedule,
so the stdlib checker's fibre certificate does not cover it: the result is the library's
search, not re-checked (use ``schedule="design"`` for a certificate).  The search is
exponential in H₀ and ends in FibreTooLarge beyond small sizes.
"""

from __future__ import annotations

import random
import time
from fractions import Fraction

from ...errors import OutOfClass
from ...models.attention import MultiHeadAttention
from ...oracles.oracle import as_oracle
from ..p2.family_function import FamilyFunction, family_queries
from ..p2.fibre import MAX_NODES, compute_fibre
from ..p2.recovery import check_bases, random_bases
from ..p2.unique import NotUnique, _solve, model_of
from ..result import LearnResult
from .design_learner import read_with_limit

__all__ = ["learn_by_fibre", "family_order"]


def family_order(d: int, rng: random.Random, count: int) -> list:
    """(a, b) of ``count`` families in asking order: seeded random combinations with entries
    in −2…2 (a, b ≠ 0).  Random combinations tie the heads' labels across families; the
    indicator families I(u_i, x_j) do not, and measured one family more at (2, 2, 2),
    (2, 3, 3) and (3, 2, 2)."""
    out = []
    while len(out) < count:
        a = tuple(Fraction(rng.randint(-2, 2)) for _ in range(d))
        b = tuple(Fraction(rng.randint(-2, 2)) for _ in range(d))
        if any(a) and any(b):
            out.append((a, b))
    return out


def learn_by_fibre(oracle, dim: int, heads_bound: int, seed=0, extra_families=None,
                   max_nodes: int = MAX_NODES, box: int = 1000):
    """Learn the canonical heads by shrinking the answer fibre to one point (module
    docstring).  Returns a :class:`LearnResult` (``extra["families"]``: the families asked);
    NotUnique when d² + ``extra_families`` (default 4) families leave more than one
    model, OutOfClass when no model with ≤ H₀ heads gives the answers, FibreTooLarge when the
    search passes its budget."""
    d, H0 = dim, heads_bound
    orc = as_oracle(oracle, d)
    if orc.backend.name != "exact":
        raise ValueError("the fibre learner needs exact answers in Q(t)")
    rng = random.Random(seed)
    U, X = random_bases(rng, d, box, orc.backend)
    check_bases(orc.backend, U, X)
    start, first = time.perf_counter(), len(orc.transcript)
    rho = [orc([list(u)]) for u in U]
    if not all(y.is_rational() for y in rho):
        raise OutOfClass("a single-token answer is not a rational number: no rational model "
                         "gives it")
    rho = [y.as_rational() for y in rho]
    v = _solve(U, rho)
    order = family_order(d, rng, d * d + (4 if extra_families is None else extra_families))
    fib = None
    for n, (a, b) in enumerate(order, 1):
        queries, u, x = family_queries(U, X, a, b, H0)
        answers = [orc(q) for q in queries[:2 * H0 - 1]]
        K = sum((p * (q + r) for p, q, r in zip(v, x, u)), Fraction(0))
        fam = FamilyFunction(a, b, K, tuple(read_with_limit(u, x, v, answers, H0)))
        fib = compute_fibre(d, H0, [fam], rho, max_nodes=max_nodes) if fib is None else \
            fib.extend(fam, max_nodes=max_nodes)
        if not fib.pieces:
            raise OutOfClass(f"no model with ≤ {H0} heads gives these answers (the answer "
                             f"fibre of {n} families is empty)", families=n)
        if fib.unique_model() is not None:
            S, r = fib.pieces[0].representative()
            model = MultiHeadAttention(model_of(S, r, U, X), dim=d).canonical()
            transcript = orc.transcript[first:]
            res = LearnResult(
                algorithm="multi-head-fibre", dim=d, backend="exact",
                heads=[(h.W, h.v) for h in model.heads], queries=len(transcript),
                max_length=max(len(q) for q, _ in transcript), transcript=transcript,
                extra={"U": U, "X": X, "H0": H0, "families": n, "nodes": fib.nodes})
            res.seconds = time.perf_counter() - start
            res.proves = (f"every model with ≤ {H0} heads (real parameters) that gives these "
                          f"{res.queries} answers is this one: the answer fibre of the "
                          f"transcript ({n} families; exhaustive search, {fib.nodes} nodes, "
                          f"docs/design.md §11) is one point; the library's search, not "
                          f"re-checked by the stdlib checker")
            return res
    raise NotUnique(f"the answer fibre still holds {len(fib.pieces)} pieces after "
                    f"{len(order)} families", pieces=len(fib.pieces))

