"""P2-canonical: what the queries determine is the canonical form — heads with equal W merged
(their v summed) and groups whose v sum to zero dropped (P2 canonical heads; docs/design.md §1, §4.3).

A raw model with five heads — (W₁, a), (W₁, b), (W₂, c), (W₃, w), (W₃, −w) — has canonical form
{(W₁, a + b), (W₂, c)}.  Checked exactly:

* the canonical form computed by the library is that set, and the raw and canonical models
  agree on random queries exactly in Q(t);
* the multi-head learner returns exactly the canonical form when told the raw bound H₀ = 5
  (merged poles, an invisible cancelled head) and when told H₀ = 2, the canonical count
  (fewer queries: the function *is* a 2-head function);
* every learner run is a consistency-and-genericity certificate (``run`` record with the raw model):
  the checker rebuilds its schedule, replays every answer against the raw and the recovered
  model, compares the recovered heads with its own canonical form of the raw model (as
  multisets) and confirms the draw is generic for the recovered model.
"""

from __future__ import annotations

import random

from exactattn.models.attention import AttentionHead, MultiHeadAttention, random_head
from exactattn.oracles.oracle import Oracle

from .certificates import element_json, heads_json, new_certificate, vector_json
from .common import count_check, run_record
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "merging_model", "expected_canonical"]


def merging_model(dim: int, seed: int):
    """The raw five-head model of the module docstring and its (W, v) ingredients."""
    rng = random.Random(seed)
    h1, h2, h3, h4, h5 = (random_head(dim, rng=rng) for _ in range(5))
    W1, W2, W3 = h1.W, h2.W, h3.W
    a, b, c, w = h1.v, h4.v, h2.v, h5.v
    raw = MultiHeadAttention([AttentionHead(W1, a), AttentionHead(W1, b), AttentionHead(W2, c),
                              AttentionHead(W3, w), AttentionHead(W3, [-x for x in w])])
    return raw, (W1, W2, a, b, c)


def expected_canonical(parts):
    """{(W₁, a + b), (W₂, c)} as a set of tuples (zero sums dropped)."""
    W1, W2, a, b, c = parts
    ab = tuple(x + y for x, y in zip(a, b))
    heads = [(W1, ab), (W2, tuple(c))]
    return frozenset((W, v) for W, v in heads if any(v))


def run(params) -> Verdict:
    """Merging and dropping, exactly: library canonical form, outputs, learner, certificate."""
    from exactattn.learners.multi_head import learn_multi_head
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    d = params["d"]
    raw, parts = merging_model(d, params["seed"])
    canon = raw.canonical()
    verdict.expect(canon.head_set() == expected_canonical(parts),
                   f"5 raw heads → {len(canon)} canonical heads: (W1, a+b), (W2, c); (W3, ±w) dropped",
                   f"library canonical form {canon} ≠ {{(W1, a+b), (W2, c)}}")
    rng = random.Random(params["seed"])
    queries = [[[rng.randint(-3, 3) for _ in range(d)] for _ in range(n)] for n in (1, 2, 3, 5)]
    verdict.expect(all(raw(q, "exact") == canon(q, "exact") for q in queries),
                   f"raw and canonical models agree exactly on {len(queries)} random queries",
                   "raw and canonical models differ on a query")
    models = {"raw": raw.heads, "canonical": canon.heads}
    for H0 in params["H0"]:
        oracle = Oracle(raw)
        res = learn_multi_head(oracle, d, heads_bound=H0, seed=params["seed"], resample=True)
        got = MultiHeadAttention(res.heads)
        verdict.expect(got.head_set() == canon.head_set() and got == canon,
                       f"learner with H0={H0}: canonical form exactly ({oracle.queries} queries)",
                       f"learner with H0={H0} returned {got}")
        models[f"recovered H0={H0}"] = got.heads
        cert["checks"].append(run_record(res, raw))
        if H0 == min(params["H0"]):
            cert["checks"].append(count_check("multi-head", {"d": d, "H0": H0},
                                              len(res.transcript), res.max_length,
                                              run=len(cert["checks"]) - 1))
    cert["checks"].append({"kind": "same-function", "dim": d, "parameterisations_differ": True,
                           "models": {k: heads_json(v) for k, v in models.items()},
                           "test_queries": [[vector_json(t) for t in q] for q in queries],
                           "test_values": [element_json(raw(q, "exact")) for q in queries]})
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="P2-canonical",
    reference="P2 canonical heads",
    statement="heads with equal W merge (v summed), zero-sum groups drop; the learner returns "
              "exactly this canonical form",
    sizes={"quick": {"d": 2, "H0": [2, 5], "seed": 7}, "full": {"d": 3, "H0": [2, 5, 6], "seed": 7}},
    run=run,
    needs=("exactattn.learners.multi_head",)))
