"""The value-query oracle of a causal (decoder) model (docs/decoders.md; docs/design.md §3):
one query is one forward pass, answered by the vector of outputs at every position.

exactattn's own :class:`~exactattn.models.decoder.CausalAttention` answers through the plain
:class:`~.oracle.Oracle` (it evaluates on the oracle's backend); a foreign callable
``f(tokens) -> sequence of N numbers`` (a PyTorch decoder layer, a user's code) is wrapped by
:class:`CausalOracle`, which converts every output as the Oracle converts one answer and
names an answer of the wrong length.
"""

from __future__ import annotations

from ..errors import OracleError
from .oracle import Oracle, _as_element, infer_backend, wrapped_oracle

__all__ = ["CausalOracle", "as_causal_oracle"]


class CausalOracle(Oracle):
    """An :class:`~.oracle.Oracle` whose answers are vectors (one output per position)."""

    def _decide(self, dim=None):
        if self._is_model:
            return super()._decide(dim)
        dim = self.dim if dim is None else dim
        if dim is None:
            raise ValueError("pass dim= (or backend=) to the causal oracle")
        probe = [[0] * dim]
        with self._named_errors("the probe query (one zero token, which infers the backend)"):
            answer = list(self._target(probe))
            be = infer_backend(answer[0])
        self.probe = (tuple(tuple(t) for t in probe), tuple(answer))
        return be

    def _answer(self, tokens):
        if self._is_model:
            return super()._answer(tokens)
        tokens = [list(t) for t in tokens]
        with self._named_errors():
            raw = list(self._target(tokens))
            out = tuple(_as_element(self.backend, a, inferred=self.probe is not None)
                        for a in raw)
        if len(out) != len(tokens):
            raise OracleError(f"the causal oracle answered {len(out)} outputs for a query of "
                              f"{len(tokens)} tokens; it must give one output per position",
                              query_index=self.spent)
        return out


def as_causal_oracle(oracle, dim: int, backend=None, dps=None) -> Oracle:
    """An Oracle as is; a causal model or a plain callable wrapped in a CausalOracle
    (:func:`~exactattn.oracles.oracle.as_oracle` for decoders)."""
    from ..models.decoder import CausalAttention
    return wrapped_oracle(oracle, dim, backend, dps, (CausalAttention,), CausalOracle,
                          "a callable on a list of tokens returning one output per position")
