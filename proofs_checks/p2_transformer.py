"""P2-transformer: a one-layer Transformer with a bias-free ReLU FFN (docs/design.md §1) is recovered
up to functional equivalence from value queries (P2 Transformer extension;
exactattn.learners.transformer.one_layer.learn_transformer_p2).

For every (d, H, k) of the grid a seeded random rational Transformer is learned through a
counting, no-peek oracle on the exact backend:

1. the recovered Transformer reproduces every transcript answer exactly (equality in Q(t));
2. it agrees exactly with the true one on ``fresh`` new random sequences of lengths 1…2H+3;
3. its kink form (the canonical form of the function) equals the true one's;
4. the query count is reported beside the attention-only count: the attention part costs
   exactly 2·(4Hd² − 2H + 1) oracle calls (P2's count of antisymmetric queries, two calls
   each), the FFN part the rest.

A Transformer that violates condition C1 (a head with V_h A w = 0 but V_h A ≠ 0, invisible
to the antisymmetric queries) must be reported as InvisibleHead, never returned.

No certificate is written: the independent checker does not know Transformers (ReLU needs a
certified sign in Q(t)); the claim's checks above are exact.
"""

from __future__ import annotations

from exactattn.errors import InvisibleHead
from exactattn.oracles.oracle import Oracle
from exactattn.models.transformer import (OneLayerTransformer, first_disagreement, random_sequences,
                                   random_transformer)

from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "attention_only_count", "transcript_disagreement", "invisible_head_model"]


def attention_only_count(d: int, H: int) -> int:
    """P2: 4Hd² − 2H + 1 queries for the attention part alone (antisymmetric queries)."""
    return 4 * H * d * d - 2 * H + 1


def transcript_disagreement(model, transcript):
    """Index of the first transcript answer the model does not reproduce exactly, or None."""
    for k, (tokens, y) in enumerate(transcript):
        if model([list(t) for t in tokens]) != y:
            return k
    return None


def invisible_head_model(d: int, seed: int) -> OneLayerTransformer:
    """A two-head Transformer with V_2 = n mᵀ, m ⊥ Aw: V_2 A w = 0 while V_2 A ≠ 0
    (violates condition C1)."""
    base = random_transformer(d, 2, 2, seed=seed)
    (W1, V1), (W2, _) = base.heads
    Aw = [sum(base.A[i][j] * base.w[j] for j in range(base.hidden)) for i in range(d)]
    m = [-Aw[1], Aw[0]] + [0] * (d - 2)
    V2 = [[(i + 1) * x for x in m] for i in range(d)]
    return OneLayerTransformer([(W1, V1), (W2, V2)], base.A, base.w)


def run(params) -> Verdict:
    """Learn the grid, check exact agreement, report counts; then the C1 violation."""
    from exactattn.learners.transformer.one_layer import learn_transformer_p2
    verdict = Verdict(True)
    for d in params["d"]:
        for H in params["H"]:
            for k in params["k"]:
                seed = params["seed"] + 100 * d + 10 * H + k
                model = random_transformer(d, H, k, seed=seed)
                oracle = Oracle(model)
                res = learn_transformer_p2(oracle, d, heads=H, hidden=k, seed=seed,
                                           resample=True)
                _check_run(verdict, params, d, H, k, model, oracle, res, seed)
    _check_violation(verdict, params)
    return verdict


def _check_run(verdict, params, d, H, k, model, oracle, res, seed):
    rec = res.transformer
    bad_t = transcript_disagreement(rec, oracle.transcript)
    fresh = random_sequences(d, params["fresh"], 2 * H + 3, seed=seed + 1)
    bad_f = first_disagreement(model, rec, fresh)
    att = attention_only_count(d, H)
    counts = (f"{oracle.queries} queries = {res.attention_queries} attention (2 × {att}, "
              f"the attention-only count) + {res.ffn_queries} FFN, max length "
              f"{oracle.max_length}")
    tag = f"d={d} H={H} k={k}"
    verdict.expect(bad_t is None and bad_f is None and model.kink_form() == rec.kink_form()
                   and res.attention_queries == 2 * att and res.queries == oracle.queries,
                   f"{tag}: {counts}; exact agreement on {len(oracle.transcript)} transcript "
                   f"answers and {len(fresh)} fresh sequences (lengths 1…{2 * H + 3}); kink "
                   f"form equal",
                   f"{tag}: {counts}; transcript mismatch at {bad_t}, fresh mismatch at "
                   f"{bad_f}, kink form equal {model.kink_form() == rec.kink_form()}")
    if res.extra.get("attempts"):
        verdict.notes.append(f"{tag}: {len(res.extra['attempts'])} path(s) failed detectably "
                             f"and were redrawn")


def _check_violation(verdict, params):
    from exactattn.learners.transformer.one_layer import learn_transformer_p2
    d = max(2, min(params["d"]))
    bad = invisible_head_model(d, params["seed"] + 7)
    try:
        learn_transformer_p2(Oracle(bad), d, heads=2, hidden=2, seed=params["seed"])
        verdict.fail(f"d={d}: a Transformer with V_2 A w = 0 ≠ V_2 A was not reported")
    except InvisibleHead as e:
        verdict.details.append(f"d={d}: V_2 A w = 0 ≠ V_2 A (condition C1 violated) reported "
                               f"as {e.reason}")


CLAIM = register(Claim(
    id="P2-transformer",
    reference="P2 Transformer extension",
    statement="a one-layer Transformer with a bias-free ReLU FFN is recovered up to functional "
              "equivalence: exact agreement on the transcript and on fresh sequences",
    sizes={"quick": {"d": [2, 3], "H": [1, 2], "k": [2], "fresh": 100, "seed": 0},
           "full": {"d": [2, 3, 4], "H": [1, 2, 3], "k": [2, 4], "fresh": 100, "seed": 0}},
    run=run,
    needs=("exactattn.learners.transformer.one_layer",)))
