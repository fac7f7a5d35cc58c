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

Certificate (checker :mod:`proofs_checks.checker.transformer`): per grid point a ``run``
record of the attention part — the P2 learner's run on the antisymmetric answers
T(X) − T(−X), with the true attention part (W_h, V_h A w) as its model — and a
``transformer`` record: the true and the recovered Transformer (exact rationals), every
oracle call's tokens and the ReLU sign of every hidden unit of both Transformers at every
call (the answers themselves are the true Transformer's, which the checker computes: at the
FFN's bisected path points their exponents exceed the strict reader's 40-digit integers).
The checker re-derives each sign (certified: exactly 0 for the zero element, else by
interval arithmetic at t = e^{1/L}), each answer of both Transformers exactly in Q(t) from
those signs (equal), the run's answers as T(X) − T(−X) at the paired calls (X, −X), the
run's recovered heads as the recovered Transformer's attention part, the kink forms of both
Transformers (equal: the same function on every sequence — which is what the fresh
sequences sample) and the counts.  The C1 violation is a ``transformer-condition``
record: V_2 A w = 0 ≠ V_2 A is re-derived; that the learner raised InvisibleHead is recorded
only.
"""

from __future__ import annotations

from exactattn.errors import InvisibleHead
from exactattn.oracles.oracle import Oracle
from exactattn.models.transformer import (OneLayerTransformer, first_disagreement, random_sequences,
                                   random_transformer)

from .certificates import new_certificate, vector_json
from .common import run_record
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "attention_only_count", "transcript_disagreement", "invisible_head_model",
           "transformer_json", "transformer_records", "condition_record"]


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


def transformer_json(model) -> dict:
    """A OneLayerTransformer with rational entries as {"heads": [{"W", "V"}], "A", "w"}."""
    return {"heads": [{"W": [vector_json(r) for r in W], "V": [vector_json(r) for r in V]}
                      for W, V in model.heads],
            "A": [vector_json(r) for r in model.A], "w": vector_json(model.w)}


def _signs(model, tokens):
    return [z.sign() for z in model.preactivations([list(t) for t in tokens])]


def transformer_records(learner, model, res, transcript, run_index) -> list:
    """The ``run`` record of the attention part (its true model: the attention part of
    ``model``) and the ``transformer`` record of one run (module docstring); ``run_index``
    is where the run record will sit in the certificate's checks."""
    att = res.extra["attention_result"]
    run = run_record(att, model=model.attention_part())
    rec = res.transformer
    return [run, {
        "kind": "transformer", "learner": learner, "dim": res.dim, "run": run_index,
        "calls": int(res.queries), "attention_calls": int(res.attention_queries),
        "model": transformer_json(model), "recovered": transformer_json(rec),
        "transcript": [{"tokens": [vector_json(t) for t in toks],
                        "signs": _signs(model, toks), "recovered_signs": _signs(rec, toks)}
                       for toks, _ in transcript]}]


def condition_record(condition, model, head, reported) -> dict:
    """A violated learner condition: the model, the head concerned, the reported failure."""
    return {"kind": "transformer-condition", "condition": condition,
            "model": transformer_json(model), "head": int(head), "reported": reported}


def run(params) -> Verdict:
    """Learn the grid, check exact agreement, report counts; then the C1 violation."""
    from exactattn.learners.transformer.one_layer import learn_transformer_p2
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    for d in params["d"]:
        for H in params["H"]:
            for k in params["k"]:
                seed = params["seed"] + 100 * d + 10 * H + k
                model = random_transformer(d, H, k, seed=seed)
                oracle = Oracle(model)
                res = learn_transformer_p2(oracle, d, heads=H, hidden=k, seed=seed,
                                           resample=True)
                _check_run(verdict, params, d, H, k, model, oracle, res, seed)
                cert["checks"] += transformer_records("transformer-p2", model, res,
                                                      oracle.transcript, len(cert["checks"]))
    _check_violation(verdict, params, cert)
    verdict.certificate = cert
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


def _check_violation(verdict, params, cert=None):
    from exactattn.learners.transformer.one_layer import learn_transformer_p2
    d = max(2, min(params["d"]))
    bad = invisible_head_model(d, params["seed"] + 7)
    try:
        learn_transformer_p2(Oracle(bad), d, heads=2, hidden=2, seed=params["seed"])
        verdict.fail(f"d={d}: a Transformer with V_2 A w = 0 ≠ V_2 A was not reported")
    except InvisibleHead as e:
        verdict.details.append(f"d={d}: V_2 A w = 0 ≠ V_2 A (condition C1 violated) reported "
                               f"as {e.reason}")
        if cert is not None:
            cert["checks"].append(condition_record("C1", bad, 1, e.reason))


CLAIM = register(Claim(
    id="P2-transformer",
    reference="P2 Transformer extension",
    statement="a one-layer Transformer with a bias-free ReLU FFN is recovered up to functional "
              "equivalence: exact agreement on the transcript and on fresh sequences",
    sizes={"quick": {"d": [2, 3], "H": [1, 2], "k": [2], "fresh": 100, "seed": 0},
           "full": {"d": [2, 3, 4], "H": [1, 2, 3], "k": [2, 4], "fresh": 100, "seed": 0}},
    run=run,
    needs=("exactattn.learners.transformer.one_layer",)))
