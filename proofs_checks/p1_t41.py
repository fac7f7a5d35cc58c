"""P1-T4.1: one softmax head (W, v) is learned exactly from d² + d value queries of length ≤ 2
(P1 Thm 4.1; docs/design.md §4.1).

For each d of the grid a seeded random rational head is learned through a counting, no-peek
oracle on the exact backend; the oracle's own count and maximum length must equal d² + d and
2, and the recovered (W, v) must equal the true head exactly.  The certificate carries, per d,
a consistency-and-genericity certificate (a ``run`` record: the transcript with every answer in Q(t),
the recovered and the true head), from which the independent checker rebuilds the schedule
(probes from v), replays every answer and confirms v ≠ 0 and the probe conditions: any single
head giving these answers is this head.
"""

from __future__ import annotations

from exactattn.models.attention import random_head
from exactattn.oracles.oracle import Oracle

from .certificates import new_certificate
from .common import count_check, run_record, same_canonical
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "published_queries", "published_max_length"]


def published_queries(d: int) -> int:
    """P1 Thm 4.1: d² + d value queries."""
    return d * d + d


def published_max_length(d: int) -> int:
    """P1 Thm 4.1: queries of length at most 2."""
    return 2


def run(params) -> Verdict:
    """Learn a random head for every d in params["d"] and compare with P1 Thm 4.1."""
    from exactattn.learners.p1.single_head import learn_single_head
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    for d in params["d"]:
        head = random_head(d, seed=params["seed"] + d)
        oracle = Oracle(head)
        res = learn_single_head(oracle, d)
        q, ml = oracle.queries, oracle.max_length
        verdict.expect(q == published_queries(d) and ml == published_max_length(d),
                       f"d={d}: {q} queries = d²+d, max length {ml}",
                       f"d={d}: {q} queries, max length {ml}; published {published_queries(d)}, "
                       f"{published_max_length(d)}")
        verdict.expect(same_canonical([head], res.heads), f"d={d}: (W, v) recovered exactly",
                       f"d={d}: recovered head differs from the true head")
        cert["checks"].append(run_record(res, [head]))
        cert["checks"].append(count_check("single-head", {"d": d}, q, ml,
                                          run=len(cert["checks"]) - 1))
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="P1-T4.1",
    reference="P1 Thm 4.1",
    statement="a single head (W, v) is learned exactly from d²+d value queries of length ≤ 2",
    sizes={"quick": {"d": [1, 2, 3], "seed": 0}, "full": {"d": [1, 2, 3, 4, 5, 6], "seed": 0}},
    run=run,
    needs=("exactattn.learners.p1.single_head",)))
