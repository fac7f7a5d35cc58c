"""NumPy functions ``f(X: (N, d) array) -> number`` as value oracles (docs/design.md §3, §9)."""

from ..oracles.adapters.numpy import as_array_function, numpy_oracle

__all__ = ["numpy_oracle", "as_array_function"]
