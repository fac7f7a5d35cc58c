"""The ``run`` record of one exact causal run (docs/decoders.md; docs/design.md §8): learner
``causal``, the bases, the mode, the known slopes and whether a residual read-out is learned,
every query with its vector of outputs, and the recovered causal model (heads with slopes,
residual); re-checked by :mod:`proofs_checks.checker.run_causal`."""

from __future__ import annotations

from .certificates import FORMAT, VERSION, element_json, rational, vector_json
from .common import RUN_STATEMENT

__all__ = ["causal_record", "causal_certificate", "causal_model_json"]


def causal_model_json(model) -> dict:
    """A CausalAttention as {"heads": [{"W", "v", "slope"}], "residual": [...] | null}."""
    return {"heads": [{"W": [vector_json(r) for r in h.W], "v": vector_json(h.v),
                       "slope": rational(model.slope(n))} for n, h in enumerate(model.heads)],
            "residual": None if model.residual is None else vector_json(model.residual)}


def causal_record(result, model=None) -> dict:
    ex = result.extra
    slopes = [] if ex["shared_slope"] is None and ex["slopes"] is None else \
        [rational(ex["shared_slope"])] if ex["slopes"] is None else \
        [rational(s) for s in ex["slopes"]]
    rec = {"kind": "run", "learner": "causal", "dim": result.dim,
           "params": {"H0": int(ex["H0"]), "mode": ex["mode"], "residual": bool(ex["residual"]),
                      "slopes": slopes},
           "vectors": {"U": [vector_json(r) for r in ex["U"]],
                       "X": [vector_json(r) for r in ex["X"]]},
           "transcript": [{"tokens": [vector_json(t) for t in toks],
                           "answer": [element_json(a) for a in ans]}
                          for toks, ans in result.transcript],
           "recovered": causal_model_json(result.causal)}
    if model is not None:
        rec["model"] = causal_model_json(model)
    return rec


def causal_certificate(result, model=None) -> dict:
    return {"format": FORMAT, "version": VERSION, "claim": "run",
            "reference": "docs/design.md §8", "statement": RUN_STATEMENT, "size": "full",
            "params": {"learner": "causal", "dim": result.dim}, "holds": True,
            "checks": [causal_record(result, model)], "symbolic": []}


def learned(d, H, seed, slopes=None, residual=False, matching="p2"):
    """(result, model): a seeded random causal model and the causal learner's exact run on it
    through a no-peek oracle (the decoder claims' runs)."""
    from exactattn.learners.decoder import learn_causal
    from exactattn.models.decoder import random_causal
    from exactattn.oracles.oracle import Oracle
    model = random_causal(d, H, seed=seed, slopes=slopes, residual=residual)
    result = learn_causal(Oracle(model), d, heads=H, slopes=slopes, residual=residual,
                          seed=seed, matching=matching)
    return result, model


#: the statement of a user's causal design certificate (claim ``causal-certify``)
CAUSAL_DESIGN_STATEMENT = (
    "Theorem A for decoder oracles: every causal model with at most H0 heads (and M's slope "
    "and read-out) that gives M's outputs on the d single-token queries and one causal query "
    "per moment-curve family (n > γ + (L−1)β, L = H + H0) has M's canonical form")


def causal_design_record(c) -> dict:
    """The ``causal-design`` record of a CausalCertification that holds."""
    M = c.model
    return {"kind": "causal-design", "design": "moment-curve", "dim": c.dim, "H0": c.heads_bound,
            "points": [rational(p) for p in c.points], "length": c.max_length,
            "model": causal_model_json(M),
            "answers": [[element_json(a) for a in ans] for _, ans in c.transcript]}


def causal_design_certificate(c) -> dict:
    return {"format": FORMAT, "version": VERSION, "claim": "causal-certify",
            "reference": "Theorem A (docs/decoders.md §6)", "statement": CAUSAL_DESIGN_STATEMENT,
            "size": "full", "params": {"dim": c.dim, "H": c.heads, "H0": c.heads_bound},
            "holds": True, "checks": [causal_design_record(c)], "symbolic": []}
