"""The value-query oracle (docs/design.md §3), after the CJM20 extraction code: one object between
learner and model that counts every query, records the maximum length and a transcript,
enforces an optional budget, hides the parameters in no-peek mode and applies noise.

Noise modes (``noise=``):

* ``None`` / ``"exact"`` — the true answer;
* ``Additive(tau, mode="random")`` — answer + uniform noise in [−τ, τ];
* ``Additive(tau, mode="adversarial")`` — answer ± τ exactly, the sign from a seeded
  pattern (the extreme points of the allowed interval);
* ``Rounding(digits)`` — the answer rounded to ``digits`` significant digits.

Noise needs the mp or float backend (an exact answer with noise is no longer exact).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..arith import Backend, ExpElement, get_backend
from ..errors import BudgetExceeded, PeekError, QueryError
from ..models.attention import AttentionHead, MultiHeadAttention, validate_tokens

__all__ = ["Oracle", "Additive", "Rounding", "as_oracle"]


@dataclass(frozen=True)
class Additive:
    """Additive tolerance τ: random uniform in [−τ, τ] or adversarial ±τ (docs/design.md §3)."""

    tau: object
    mode: str = "random"
    seed: int | None = 0

    def __post_init__(self):
        if self.mode not in ("random", "adversarial"):
            raise ValueError(f"Additive noise mode must be 'random' or 'adversarial', got {self.mode!r}")
        try:
            negative = self.tau < 0
        except TypeError:
            raise TypeError(f"Additive noise: tau must be a number, got {self.tau!r}") from None
        if negative:
            raise ValueError(f"Additive noise: tau must be ≥ 0, got {self.tau!r}")


@dataclass(frozen=True)
class Rounding:
    """Answers rounded to `digits` significant decimal digits (docs/design.md §3)."""

    digits: int

    def __post_init__(self):
        if not isinstance(self.digits, int) or self.digits < 1:
            raise ValueError(f"Rounding needs digits ≥ 1, got {self.digits!r}")


class Oracle:
    """Counts value queries to a model or any callable ``f(tokens) -> number`` (docs/design.md §3).

    ``oracle(tokens)`` returns one number: the output at the final token.  Malformed
    queries raise :class:`QueryError` and are not counted; a query past ``budget`` raises
    :class:`BudgetExceeded` before it is asked.
    """

    def __init__(self, target, dim: int | None = None, backend="exact", dps=None,
                 budget: int | None = None, noise=None, no_peek: bool = True,
                 record: bool = True):
        if isinstance(target, AttentionHead):
            target = MultiHeadAttention([target])
        self._target = target
        # models evaluate on the oracle's backend (a class may opt in with evaluates_on_backend)
        self._is_model = isinstance(target, MultiHeadAttention) or \
            getattr(target, "evaluates_on_backend", False) is True
        if self._is_model:
            if dim is not None and dim != target.dim:
                raise ValueError(f"dim={dim} but the model has dimension {target.dim}")
            dim = target.dim
        elif not callable(target):
            raise TypeError("an oracle wraps a model or a callable f(tokens) -> number")
        if dim is not None and (not isinstance(dim, int) or dim < 1):
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        self.dim = dim
        self.backend: Backend = get_backend(backend, dps)
        if budget is not None and (not isinstance(budget, int) or budget < 0):
            raise ValueError(f"budget must be a non-negative integer, got {budget!r}")
        self.budget = budget
        if noise == "exact":
            noise = None
        if noise is not None and not isinstance(noise, (Additive, Rounding)):
            raise TypeError("noise must be None, 'exact', Additive(tau, mode) or Rounding(digits)")
        if noise is not None and self.backend.name not in ("mp", "float"):
            raise ValueError("noise needs the mp or float backend; exact answers cannot be noisy")
        self.noise = noise
        self._rng = random.Random(noise.seed if isinstance(noise, Additive) else 0)
        self.no_peek = no_peek
        self.record = record
        self.queries = 0
        self.max_length = 0
        self.transcript: list[tuple[tuple, object]] = []

    # ------------------------------------------------------------------ access control
    @property
    def model(self):
        """The wrapped model: refused in no-peek mode (learners must not see parameters)."""
        if self.no_peek:
            raise PeekError("this oracle is in no-peek mode: the learner may only send queries")
        return self._target

    # ------------------------------------------------------------------ queries
    def __call__(self, tokens):
        if hasattr(tokens, "tolist") and not isinstance(tokens, (list, tuple)):
            tokens = tokens.tolist()
        try:
            tokens = list(tokens)  # once: a generator must not be consumed twice
        except TypeError:
            raise QueryError("a query is a sequence of token vectors (a list of lists)") from None
        dim = self.dim
        if dim is None:  # a plain callable without dim: the first valid query fixes it
            try:
                last = tokens[-1]
                dim = len(last.tolist() if hasattr(last, "tolist") else last)
            except IndexError:
                raise QueryError("empty query: a query needs at least one token") from None
            except TypeError:
                raise QueryError("a query is a sequence of token vectors (a list of lists)") from None
        toks = validate_tokens(tokens, dim)
        be = self.backend
        clean = be.tokens(toks)
        self.dim = dim
        if self.budget is not None and self.queries >= self.budget:
            raise BudgetExceeded(f"query budget of {self.budget} exhausted "
                                 f"(raise budget= or use fewer queries)")
        answer = self._answer(clean)
        answer = self._perturb(answer)
        self.queries += 1
        self.max_length = max(self.max_length, len(clean))
        if self.record:
            self.transcript.append((tuple(tuple(t) for t in clean), answer))
        return answer

    def _answer(self, tokens):
        be = self.backend
        if self._is_model:
            return self._target(tokens, be)
        raw = self._target(tokens)
        return _as_element(be, raw)

    def _perturb(self, y):
        n = self.noise
        if n is None:
            return y
        be = self.backend
        if isinstance(n, Rounding):
            import mpmath
            if be.name == "mp":
                s = mpmath.nstr(y, n.digits, min_fixed=1, max_fixed=0)
                return be.ctx.mpf(s)
            return float(f"{float(y):.{n.digits - 1}e}")
        tau = be.scalar(n.tau, "tau")
        if n.mode == "adversarial":
            return y + (tau if self._rng.random() < 0.5 else -tau)
        u = be.scalar(self._rng.uniform(-1.0, 1.0), "noise")
        return y + tau * u

    def reset(self):
        self.queries, self.max_length, self.transcript = 0, 0, []

    def __repr__(self):
        tgt = type(self._target).__name__
        return (f"Oracle({tgt}, dim={self.dim}, backend={self.backend.name}, "
                f"queries={self.queries}, max_length={self.max_length})")


def _as_element(be: Backend, raw):
    """A plain callable's answer as an element of the backend (docs/design.md §7)."""
    if be.name == "exact":
        if isinstance(raw, ExpElement):
            return raw
        return be.element(be.scalar(raw, "oracle answer"))
    return be.scalar(raw, "oracle answer")


def as_oracle(oracle, dim: int, backend="exact", dps=None) -> Oracle:
    """The learners' entry: an Oracle as is (its backend must match), or wrap a callable.
    ``backend=None`` means the Oracle's own backend (exact for a plain callable)."""
    if backend is None:
        if isinstance(oracle, Oracle):
            backend, dps = oracle.backend, None
        else:
            backend = "exact" if dps is None else "mp"
    if isinstance(oracle, Oracle):
        be = get_backend(backend, dps)
        if oracle.backend.name != be.name:
            raise ValueError(f"the oracle answers on the {oracle.backend.name} backend but the "
                             f"learner was asked for {be.name}; make them agree")
        if oracle.dim is not None and oracle.dim != dim:
            raise ValueError(f"the oracle has dimension {oracle.dim} but dim={dim} was given")
        if oracle.dim is None:
            oracle.dim = dim
        return oracle
    if isinstance(oracle, (AttentionHead, MultiHeadAttention)):
        raise TypeError("pass Oracle(model) rather than the model itself, so that queries are "
                        "counted and the parameters hidden")
    if not callable(oracle):
        raise TypeError("oracle must be an exactattn.Oracle or a callable on a list of tokens")
    return Oracle(oracle, dim=dim, backend=backend, dps=dps)
