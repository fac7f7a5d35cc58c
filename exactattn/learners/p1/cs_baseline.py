"""The compressed-sensing baseline of P1 Thm 5.1 (docs/design.md §4.2), float path only.

1. d length-1 queries [e_i] give v (P1 Thm 4.1, first step).
2. m random rank-one projections y_i = a_iᵀ W b_i from the length-2 queries [(a_i + b_i), b_i]
   (the sigmoid inversion of P1 Thm 4.1), with Gaussian a_i, b_i of variance 1/d.
3. Ŵ = argmin ‖X‖_* subject to a_iᵀ X b_i = y_i (i = 1 … m): nuclear-norm minimisation, solved
   with cvxpy (optional extra ``pip install ".[cvx]"`` from a clone; imported lazily).

It recovers a rank-r W with high probability once m is a constant times r·d (up to log factors,
as reported in P1); the exact skeleton learner (:mod:`.low_rank`) needs exactly r(2d − r)
measurements with no solver.  ``benchmarks/bench_low_rank.py`` compares the two.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from .session import Session, bilinear, check_dim, read_value_vector
from ..result import LearnResult

__all__ = ["learn_low_rank_cs", "nuclear_norm_recovery", "require_cvxpy"]


def require_cvxpy():
    """cvxpy, or an ImportError that says how to install it."""
    try:
        import cvxpy
    except ImportError:
        raise ImportError("the compressed-sensing baseline (P1 Thm 5.1) needs cvxpy: "
                          'pip install ".[cvx]" from a clone of exactattn') from None
    return cvxpy


def nuclear_norm_recovery(a, b, y, solver=None):
    """argmin ‖X‖_* subject to a_iᵀ X b_i = y_i (P1 Thm 5.1).  a, b: m×d arrays; y: length m.
    Returns (X, solver status)."""
    cp = require_cvxpy()
    a, b, y = np.asarray(a, float), np.asarray(b, float), np.asarray(y, float)
    m, d = a.shape
    # a_iᵀ X b_i = ⟨a_i b_iᵀ, X⟩ = (a_i ⊗ b_i)·vec_row(X)
    Phi = np.einsum("ij,ik->ijk", a, b).reshape(m, d * d)
    X = cp.Variable((d, d))
    problem = cp.Problem(cp.Minimize(cp.normNuc(X)), [Phi @ cp.vec(X, order="C") == y])
    kwargs = {}
    if solver is None and "CLARABEL" in cp.installed_solvers():
        solver = "CLARABEL"  # interior point: accurate enough for a 1e-6 success threshold
    if solver is not None:
        kwargs["solver"] = solver
    try:
        with warnings.catch_warnings():  # "may be inaccurate": reported through the status
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(**kwargs)
    except cp.error.SolverError as e:
        return np.full((d, d), np.nan), f"solver error: {e}"
    value = X.value if X.value is not None else np.full((d, d), np.nan)
    return np.asarray(value, dtype=float), problem.status


def learn_low_rank_cs(oracle, dim, measurements, backend="float", seed=None, solver=None):
    """Learn W by m = ``measurements`` random rank-one projections and nuclear-norm
    minimisation (P1 Thm 5.1), plus d queries for v: d + m queries of length ≤ 2.

    Float path only (``backend="float"``); needs cvxpy (``pip install ".[cvx]"`` from a clone).
    The result is *not* certified: it is the solver's minimiser, right only when m is
    large enough (compare with the exact skeleton of :func:`learn_low_rank`)."""
    if backend != "float":
        raise ValueError(f"the compressed-sensing baseline runs on the float backend only, "
                         f"not {backend!r} (use learn_low_rank for exact recovery)")
    d = check_dim(dim)
    if isinstance(measurements, bool) or not isinstance(measurements, int) or measurements < 1:
        raise ValueError(f"measurements must be a positive integer, got {measurements!r}")
    require_cvxpy()
    start = time.perf_counter()
    s = Session(oracle, d, "float")
    v = read_value_vector(s)
    a, b = _projections(np.random.default_rng(seed), v, d, measurements)
    y = [bilinear(s, list(a[i]), list(b[i]), v, where=f"projection {i}")
         for i in range(measurements)]
    W, status = nuclear_norm_recovery(a, b, y, solver)
    result = LearnResult(
        algorithm="cs-baseline", dim=d, backend="float", heads=[(W.tolist(), v)],
        queries=s.queries, max_length=s.max_length, expected_queries=d + measurements,
        expected_max_length=2, transcript=list(s.transcript),
        extra={"measurements": measurements, "status": status, "solver": solver})
    result.notes.append(f"nuclear-norm minimisation status: {status}")
    result.seconds = time.perf_counter() - start
    return result


def _projections(rng, v, d, m):
    """Gaussian a_i, b_i (variance 1/d) with a_i·v bounded away from 0 (redrawn otherwise)."""
    vnorm = float(np.linalg.norm(np.asarray(v, float)))
    a = rng.normal(0, 1 / np.sqrt(d), (m, d))
    for i in range(m):
        while abs(a[i] @ np.asarray(v, float)) < 1e-3 * vnorm:
            a[i] = rng.normal(0, 1 / np.sqrt(d), d)
    b = rng.normal(0, 1 / np.sqrt(d), (m, d))
    return a, b
