"""Foreign models as value oracles (docs/design.md §9): PyTorch ``nn.MultiheadAttention``
(:mod:`.torch`, needs the ``[torch]`` extra), NumPy functions (:mod:`.numpy`) and SymPy
expressions into the exact field (:mod:`.sympy`).  Each submodule imports its library on
first use only; the public path is :mod:`exactattn.adapters`."""
