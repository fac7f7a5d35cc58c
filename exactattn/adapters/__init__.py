"""Foreign models as value oracles (docs/design.md §9), layer 4, above the oracle: a PyTorch
``nn.MultiheadAttention`` (:mod:`.torch`; torch is imported on first use) and a NumPy function
of an (N, d) array (:mod:`.numpy`).  A SymPy expression is an answer, not a model: it enters
the exact field through :func:`exactattn.from_sympy` (:mod:`exactattn.arith.sympy_elements`)."""
