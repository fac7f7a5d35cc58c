"""NumPy functions as value oracles (docs/design.md §3, §9 foreign models).

A NumPy model is a function of the query as an (N, d) float64 array (row i is token x_i, the
last row the query token x_N) that returns one number: a float, a NumPy scalar or a 0-d /
one-element array.  :func:`numpy_oracle` wraps it in a counting, no-peek
:class:`~exactattn.Oracle`; its answers are floats, so the backend is inferred as float
unless a learner asks for mp (float64 answers read exactly as mpf).

With ``dtype=np.float32`` (or float16) the query reaches ``f`` rounded to that format, so
the Oracle declares that format's precision (256 units in its last place:
:func:`~exactattn.learners.result.precision.format_precision`) and the inexact learners'
error bars and verdicts hold at it, not at float64's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

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


def numpy_oracle(f: Callable[[Any], Any], dim: int | None = None, dtype: Any = None,
                 **oracle_args: Any) -> Oracle:
    """A counting :class:`~exactattn.Oracle` around ``f(X) -> number`` with X an (N, d) NumPy
    array (docs/design.md §3, §9).  ``oracle_args`` go to :class:`~exactattn.Oracle`
    (``backend``, ``dps``, ``budget``, ``noise``...); the backend defaults to the learner's,
    else float (inferred from the answers).  ``dtype`` float32 / float16 declares that
    format's precision (module docstring)."""
    o = Oracle(as_array_function(f, dtype), dim=dim, **oracle_args)
    fmt = _format(dtype)
    if fmt != "float64":
        o.declared_precision = {
            "format": fmt, "source": f"NumPy {fmt} queries (numpy_oracle dtype)",
            "remedy": f"the queries reach the function as {fmt}: pass dtype=numpy.float64 "
                      f"(and compute in float64)"}
    return o


def _format(dtype) -> str:
    """The float format of ``dtype``: "float32" or "float16", else "float64" (the default,
    and any other dtype: nothing shorter is declared)."""
    import numpy as np
    dt = np.dtype(np.float64 if dtype is None else dtype)
    return {np.dtype(np.float32): "float32", np.dtype(np.float16): "float16"}.get(dt, "float64")
