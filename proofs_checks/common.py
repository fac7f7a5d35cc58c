"""Helpers shared by the learner-based claims: identifiability (``run``) and ``count``
records, and exact comparison of recovered heads with a model's canonical form (P2
canonical heads; docs/design.md §8)."""

from __future__ import annotations

from exactattn.models.attention import MultiHeadAttention

from .certificates import heads_json, transcript_json, vector_json

__all__ = ["count_check", "run_record", "run_certificate", "canonical_set", "same_canonical",
           "run_params"]


def count_check(formula: str, params: dict, queries: int, max_length: int, run: int) -> dict:
    """A ``count`` record: the checker recomputes the published formula from `params` and
    recounts the transcript of the ``run`` record at index `run` (which it checks is the
    learner's schedule)."""
    return {"kind": "count", "formula": formula, "params": dict(params),
            "queries": int(queries), "max_length": int(max_length), "run": int(run)}


def run_params(result) -> tuple:
    """(params, vectors) of a LearnResult as a ``run`` record writes them."""
    ex = result.extra
    if result.algorithm == "multi-head":
        return {"H0": int(ex["H0"])}, {"U": _rows(ex["U"]), "X": _rows(ex["X"])}
    if result.algorithm == "single-head":
        return {"holdout": int(ex.get("holdout", 0))}, {}
    if result.algorithm == "low-rank":
        return ({"rank": int(ex["rank"]), "rank_given": bool(ex["rank_given"]),
                 "rank_bound": ex["rank_bound"]}, {"A": _rows(ex["A"]), "B": _rows(ex["B"])})
    if result.algorithm in BEYOND:
        params = {"H0": int(ex["H0"]), "head_order": [int(k) for k in ex["head_order"]]}
        if result.algorithm == "multi-head-low-rank":
            params["rank"] = ex["rank_given"]
        dirs = ex.get("directions") or {"singles": [], "coefficients": {}}
        pairs = sorted(dirs["coefficients"])           # a < g in the learner's order
        return params, {"U": _rows(ex["U"]), "X": _rows(ex["X"]),
                        "singles": [_rows(S) for S in dirs["singles"]],
                        "coefficients": [vector_json(dirs["coefficients"][k]) for k in pairs]}
    raise ValueError(f"no run record for the {result.algorithm} learner")


#: the beyond-P2 schedules with a run record (docs/design.md §10): economy, adaptive, low rank
BEYOND = ("multi-head-economy", "multi-head-adaptive", "multi-head-low-rank")


def _rows(M):
    return [vector_json(r) for r in M]


def run_record(result, model=None) -> dict:
    """The consistency-and-genericity certificate of one exact run (docs/design.md §8): learner, sizes,
    the random vectors, the whole transcript of this run and the recovered heads; with
    `model`, the true model too."""
    params, vectors = run_params(result)
    rec = {"kind": "run", "learner": result.algorithm, "dim": result.dim, "params": params,
           "vectors": vectors, "transcript": transcript_json(result.transcript),
           "recovered": heads_json(result.heads)}
    if model is not None:
        rec["model"] = heads_json(_heads(model))
    return rec


RUN_STATEMENT = ("consistency-and-genericity certificate of one exact learner run: the transcript is the "
                 "learner's schedule, the recovered model reproduces every answer, and the draw "
                 "is generic for it")


def run_certificate(result, model=None) -> dict:
    """A stand-alone certificate of one exact run (``exactattn learn ... --certificate FILE``)
    that ``python -m proofs_checks.verify FILE`` checks (docs/design.md §8); for a
    ``certify_unique=True`` run, the design certificate of Theorem A that made it unique
    (docs/design.md §12) — or, for a P2 run with exactly H₀ heads (Lemma B), the run's own."""
    uniqueness = getattr(result, "uniqueness", None)
    if uniqueness is not None and uniqueness != "lemma-b":
        if hasattr(uniqueness, "points"):           # Theorem A's design (exactattn.certify)
            return design_certificate(uniqueness)
        from .fibre_record import unique_certificate
        return unique_certificate(result)
    from .certificates import FORMAT, VERSION
    return {"format": FORMAT, "version": VERSION, "claim": "run",
            "reference": "docs/design.md §8", "statement": RUN_STATEMENT, "size": "full",
            "params": {"learner": result.algorithm, "dim": result.dim}, "holds": True,
            "checks": [run_record(result, model)], "symbolic": []}


def _heads(m):
    return m.heads if isinstance(m, MultiHeadAttention) else list(m)


def canonical_set(heads):
    """The canonical form as a set of (W, v) tuples (exact; docs/design.md §1)."""
    m = heads if isinstance(heads, MultiHeadAttention) else MultiHeadAttention(heads)
    return m.head_set()


def same_canonical(model, recovered_heads) -> bool:
    """Exact equality of canonical forms (P2 canonical heads); the recovered heads must not
    repeat (a duplicated head doubles v: compared as multisets)."""
    rec = list(recovered_heads)
    keys = [(tuple(map(tuple, h.W)), tuple(h.v)) if hasattr(h, "W") else
            (tuple(map(tuple, h[0])), tuple(h[1])) for h in rec]
    return len(set(keys)) == len(keys) and canonical_set(model) == canonical_set(rec)


DESIGN_STATEMENT = ("Theorem A: every model with at most H0 heads (real parameters) that gives "
                    "M's answers on the moment-curve design (d single-token queries and n > "
                    "γ + (L−1)β families of L−1 samples, L = H + H0) has M's canonical form")


def design_record(c) -> dict:
    """The ``design`` record of a :class:`~exactattn.learners.design.certify.Certification` that holds
    (Theorem A, docs/design.md §12): the design's name, points and samples per family, H₀, M,
    and the oracle's answers in the design's order.  The queries are not written: the checker rebuilds them
    from the points."""
    from exactattn.learners.design.moment_curve import DESIGN
    from .certificates import element_json, rational
    return {"kind": "design", "design": DESIGN, "dim": c.dim, "H0": c.heads_bound,
            "points": [rational(p) for p in c.points],
            "samples": c.samples, "model": heads_json(c.model.heads),
            "answers": [element_json(a) for _, a in c.transcript]}


def design_certificate(c) -> dict:
    """A stand-alone certificate of one :func:`~exactattn.certify` that holds (claim
    ``certify``), which ``python -m proofs_checks.verify FILE`` checks."""
    from .certificates import FORMAT, VERSION
    return {"format": FORMAT, "version": VERSION, "claim": "certify",
            "reference": "Theorem A (docs/design.md §12)", "statement": DESIGN_STATEMENT,
            "size": "full", "params": {"dim": c.dim, "H": c.heads, "H0": c.heads_bound},
            "holds": True, "checks": [design_record(c)], "symbolic": []}
