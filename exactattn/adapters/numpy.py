"""NumPy functions as value oracles (docs/design.md §3, §9 foreign models).

A NumPy model is a function of the query as an (N, d) float64 array (row i is token x_i, the
last row the query token x_N) that returns one number: a float, a NumPy scalar or a 0-d /
one-element array.  :func:`numpy_oracle` wraps it in a counting, no-peek
:class:`~exactattn.Oracle`; its answers are floats, so the backend is inferred as float
unless a learner asks for mp (float64 answers read exactly as mpf).
"""

from __future__ import annotations

from ..oracles.oracle import Oracle

__all__ = ["numpy_oracle", "as_array_function"]


def as_array_function(f, dtype=None):
    """``tokens ↦ float(f(array))``: the query as an (N, d) array of ``dtype`` (default
    float64), the answer as a Python float (docs/design.md §3)."""
    import numpy as np
    dtype = np.float64 if dtype is None else dtype

    def query(tokens):
        X = np.array([[float(x) for x in tok] for tok in tokens], dtype=dtype)
        return _number(f(X))

    query.__name__ = getattr(f, "__name__", "numpy_function")
    return query


def _number(y) -> float:
    import numpy as np
    arr = np.asarray(y)
    if arr.size != 1:
        raise TypeError(f"the NumPy oracle must return one number, got an array of shape "
                        f"{arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"the NumPy oracle must return a real number, got {arr.dtype}")
    return float(arr.reshape(()))


def numpy_oracle(f, dim=None, dtype=None, **oracle_args) -> Oracle:
    """A counting :class:`~exactattn.Oracle` around ``f(X) -> number`` with X an (N, d) NumPy
    array (docs/design.md §3, §9).  ``oracle_args`` go to :class:`~exactattn.Oracle`
    (``backend``, ``dps``, ``budget``, ``noise``...); the backend defaults to the learner's,
    else float (inferred from the answers)."""
    return Oracle(as_array_function(f, dtype), dim=dim, **oracle_args)
