"""Small experiments shared by the benchmarks, the examples, ``exactattn counts`` and
``exactattn demo``, so that each is computed in one place.

* :func:`copy_count_terms` / :func:`copy_count_samples` — the P2 copy-count family I(u, x)
  of a known model: its partial-fraction terms from the parameters, and its samples from an
  oracle;
* :func:`parameter_error_on` — where floating point breaks (the float-vs-exact comparison);
* :func:`measure_counts` — measured query counts beside P2's formulas.
"""

from __future__ import annotations

import time

__all__ = ["copy_count_terms", "copy_count_samples", "parameter_error_on",
           "float_vs_exact_row", "FLOAT_VS_EXACT_BACKENDS", "backend_label", "measure_counts"]

#: the backends compared by the float-vs-exact benchmark and example: (name, dps)
FLOAT_VS_EXACT_BACKENDS = (("float", None), ("mp", 30), ("mp", 60), ("exact", None))


def _dot(a, b):
    return sum((p * q for p, q in zip(a, b)), 0)


def copy_count_terms(model, u, x):
    """P2 copy-count family I(u, x) from the parameters (docs/design.md §4.3):
    G(m) = K + Σ_h c_h / (1 + m z_h) with z_h = e^{s_h}, s_h = uᵀW_h x, c_h = −v_h·u and
    K = v·(x+u).  Returns (K, [(s_h, c_h)]) for the canonical heads (exact on rational
    models); the pole of head h is at m = −1/z_h = −e^{−s_h}."""
    canon = model.canonical()
    xu = [a + b for a, b in zip(x, u)]
    K = sum((_dot(h.v, xu) for h in canon.heads), 0)
    terms = []
    for h in canon.heads:
        Wx = [_dot(row, x) for row in h.W]
        terms.append((_dot(u, Wx), -_dot(h.v, u)))
    return K, terms


def copy_count_samples(oracle, u, x, H0: int):
    """The 2H₀+1 samples G(0), …, G(2H₀) of the copy-count family I(u, x): the oracle's
    answers to [(x+u) repeated m times, x] (P2 copy-count family; docs/design.md §4.3)."""
    from ..learners.p2.schedule import Family
    fam = Family((0,), (0,), tuple(u), tuple(x))
    return [oracle(fam.query(m)) for m in range(2 * H0 + 1)]


def backend_label(backend: str, dps) -> str:
    """'float', 'mp(30)', 'exact'."""
    return backend if dps is None else f"{backend}({dps})"


def parameter_error_on(model, backend: str, dps, H: int, seed: int = 0):
    """Max parameter error of the multi-head learner (P2 schedule) on one backend, after
    matching heads, or the failure's reason (a string) when the backend cannot form an
    answer.  The exact backend's error is 0 by exact canonical equality (P2 canonical
    heads); float / mp show where rounding breaks the copy-count interpolation."""
    from ..errors import LearningFailure
    from ..learners.result.compare import parameter_error
    from ..learners.multi_head import learn_multi_head
    from ..oracles.oracle import Oracle
    oracle = Oracle(model, backend=backend, dps=dps)
    try:
        res = learn_multi_head(oracle, model.dim, heads=H, seed=seed, certify=backend == "exact")
    except LearningFailure as e:
        return e.reason
    if backend == "exact":
        return 0 if res.model.head_set() == model.head_set() else "WRONG"
    # compare at more digits than the backend carries, or mp(60)'s errors round to 0
    return parameter_error(model, res.heads, dps=max(30, (dps or 16) + 20))


def float_vs_exact_row(dim: int, H: int, seed: int = 0) -> dict:
    """One row of the float-vs-exact comparison: the seeded random rational model with H heads
    (seed + H) learned on every backend of :data:`FLOAT_VS_EXACT_BACKENDS`; label → error
    or failure reason (see :func:`parameter_error_on`; P2 schedule, docs/design.md §2 backends)."""
    from ..models.attention import random_multi_head
    model = random_multi_head(dim, H, seed=seed + H)
    return {backend_label(b, dps): parameter_error_on(model, b, dps, H, seed)
            for b, dps in FLOAT_VS_EXACT_BACKENDS}


def measure_counts(d: int, H: int, offset: int = 0, seed: int = 0) -> dict:
    """One grid point: learn a random exact model with H heads through a counting oracle
    (P2 count claim 4H₀d² − 2H₀ + 1, length 2H₀ + 1; docs/design.md §4.3 schedule), beside P1's
    single-head d² + d and the dimension floor H(d² + d)."""
    from ..errors import LearningFailure
    from ..learners.multi_head import learn_multi_head
    from ..learners.p2.schedule import published_count, published_max_length
    from ..models.attention import random_multi_head
    from ..oracles.oracle import Oracle
    H0 = H + offset
    model = random_multi_head(d, H, seed=seed * 1000 + 31 * d + H)
    oracle = Oracle(model, backend="exact")
    start = time.perf_counter()
    row = {"dim": d, "heads": H, "heads_bound": H0 if offset else None,
           "formula_queries": published_count(d, H0),
           "formula_max_length": published_max_length(H0),
           "p1_single_head": d * d + d, "dimension_floor": H * (d * d + d)}
    try:
        res = learn_multi_head(oracle, d, heads=None if offset else H,
                               heads_bound=H0 if offset else None, seed=seed)
        row.update(queries=res.queries, max_length=res.max_length,
                   recovered=res.model.head_set() == model.head_set())
    except LearningFailure as e:
        row.update(queries=oracle.queries, max_length=oracle.max_length, recovered=False,
                   error=e.reason)
    row["seconds"] = round(time.perf_counter() - start, 4)
    row["match"] = (row["queries"] == row["formula_queries"]
                    and row["max_length"] == row["formula_max_length"] and row["recovered"])
    return row
