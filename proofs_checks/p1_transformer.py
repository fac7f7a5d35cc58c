"""P1-transformer: the one-layer reduction for a single head (P1; docs/design.md §1;
exactattn.learners.transformer.one_layer.learn_transformer_p1).

W from P1 Thm 4.1 on antisymmetric queries T(X) − T(−X) (d² + d of them, 2(d² + d) oracle
calls), the FFN from length-1 queries T([x]) = Σ_j w_j ReLU((V a_j)·x) by the exact bias-free
ReLU-network learner (kinks along segments, exact in rational arithmetic).  For every (d, k)
of the grid a seeded random rational one-head Transformer is learned through a counting,
no-peek oracle on the exact backend; the recovered Transformer must reproduce every
transcript answer exactly, agree exactly with the true one on ``fresh`` random sequences of
lengths 1…5 (= 2H + 3), and have the same kink form.  The query counts are reported beside
the attention-only count d² + d.  A Transformer with V A w = 0 (W not identifiable) must be
reported as NotIdentifiable.

Certificate (checker :mod:`proofs_checks.checker.transformer`, as for P2-transformer): per
grid point the ``run`` record of P1 Thm 4.1's run on the antisymmetric answers (true model:
the head (W, V A w)) and the ``transformer`` record (both Transformers, every oracle call's
tokens and the ReLU signs of both); the checker re-derives the signs, every answer of both
(equal in Q(t)), the run's answers from the paired calls, the attention part and the kink
forms.
The V A w = 0 example is a ``transformer-condition`` record (V A w = 0 ≠ V A re-derived;
the learner's NotIdentifiable recorded only).
"""

from __future__ import annotations

from exactattn.errors import NotIdentifiable
from exactattn.oracles.oracle import Oracle
from exactattn.models.transformer import (OneLayerTransformer, first_disagreement, random_sequences,
                                   random_transformer)

from .certificates import new_certificate
from .p2_transformer import condition_record, transcript_disagreement, transformer_records
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "attention_only_count"]


def attention_only_count(d: int) -> int:
    """P1 Thm 4.1: d² + d queries for the attention part alone."""
    return d * d + d


def run(params) -> Verdict:
    """Learn the grid, check exact agreement, report counts; then V A w = 0."""
    from exactattn.learners.transformer.one_layer import learn_transformer_p1
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    for d in params["d"]:
        for k in params["k"]:
            seed = params["seed"] + 10 * d + k
            model = random_transformer(d, 1, k, seed=seed)
            oracle = Oracle(model)
            res = learn_transformer_p1(oracle, d, hidden=k, seed=seed, resample=True)
            rec = res.transformer
            bad_t = transcript_disagreement(rec, oracle.transcript)
            fresh = random_sequences(d, params["fresh"], 5, seed=seed + 1)
            bad_f = first_disagreement(model, rec, fresh)
            att = attention_only_count(d)
            counts = (f"{oracle.queries} queries = {res.attention_queries} attention (2 × {att}, "
                      f"the attention-only count) + {res.ffn_queries} FFN (length 1)")
            verdict.expect(bad_t is None and bad_f is None and model.kink_form() == rec.kink_form()
                           and res.attention_queries == 2 * att,
                           f"d={d} k={k}: {counts}; exact agreement on "
                           f"{len(oracle.transcript)} transcript answers and {len(fresh)} fresh "
                           f"sequences; kink form equal",
                           f"d={d} k={k}: {counts}; transcript mismatch at {bad_t}, fresh "
                           f"mismatch at {bad_f}")
            cert["checks"] += transformer_records("transformer-p1", model, res,
                                                  oracle.transcript, len(cert["checks"]))
    _check_violation(verdict, params, cert)
    verdict.certificate = cert
    return verdict


def _check_violation(verdict, params, cert=None):
    from exactattn.learners.transformer.one_layer import learn_transformer_p1
    d = max(2, min(params["d"]))
    base = random_transformer(d, 1, 2, seed=params["seed"] + 7)
    Aw = [sum(base.A[i][j] * base.w[j] for j in range(base.hidden)) for i in range(d)]
    m = [-Aw[1], Aw[0]] + [0] * (d - 2)
    V = [[(i + 1) * x for x in m] for i in range(d)]            # V A w = 0, V A ≠ 0
    bad = OneLayerTransformer([(base.heads[0][0], V)], base.A, base.w)
    try:
        learn_transformer_p1(Oracle(bad), d, hidden=2, seed=params["seed"])
        verdict.fail(f"d={d}: a Transformer with V A w = 0 was not reported")
    except NotIdentifiable as e:
        verdict.details.append(f"d={d}: V A w = 0 (W not identifiable) reported as {e.reason}")
        if cert is not None:
            cert["checks"].append(condition_record("VAw=0", bad, 0, e.reason))


CLAIM = register(Claim(
    id="P1-transformer",
    reference="P1 one-layer reduction",
    statement="a one-head Transformer with a bias-free ReLU FFN is recovered up to functional "
              "equivalence from antisymmetric and length-1 queries",
    sizes={"quick": {"d": [1, 2, 3], "k": [2, 4], "fresh": 100, "seed": 0},
           "full": {"d": [1, 2, 3, 4, 5], "k": [2, 4, 6], "fresh": 100, "seed": 0}},
    run=run,
    needs=("exactattn.learners.transformer.one_layer",)))
