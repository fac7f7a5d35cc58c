"""Adapters for models from other libraries (docs/design.md §9): the public path.

* ``exactattn.adapters.torch`` — ``oracle(mha, readout)`` and ``heads(mha, readout)`` for a
  PyTorch ``nn.MultiheadAttention`` (extra ``[torch]``; torch is imported only when used);
* ``exactattn.adapters.numpy`` — ``numpy_oracle(f)`` for ``f(X: (N, d) array) -> number``;
* ``exactattn.adapters.sympy`` — ``from_sympy(expr)`` into the exact field Q(e^{1/L})
  (also top level: ``exactattn.from_sympy``).

The code lives in the oracle layer, ``exactattn.oracles.adapters``; these modules re-export it.
"""
