"""Oracles outside the class a learner assumes, for testing what results prove (docs/design.md
§8: "Anything outside the transcript's query shapes is unconstrained").

Each is a plain callable ``f(tokens) -> number`` on one backend (wrap it in
``Oracle(f, dim=d, backend=...)``), close to an attention model M:

* :func:`score_bias` — attention whose scores get an extra term ``bias(i, tokens)`` (a
  position or key bias; exact when the bias is rational);
* :func:`beyond_length` — M on queries of length ≤ n, another model beyond;
* :func:`on_distinct` — M on queries with fewer than k distinct tokens, another model from k
  on (the schedules use at most two distinct tokens);
* :func:`perturbed` — M plus a fixed relative error on every answer (an mp / float oracle
  less precise than it claims).

A learner fed one may return M as "recovered" from its schedule alone; validation queries
(:mod:`exactattn.learners.result.validation`) see the difference.
"""

from __future__ import annotations

from ..arith import get_backend

__all__ = ["score_bias", "beyond_length", "on_distinct", "perturbed", "final_token_bias",
           "key_bias"]


def score_bias(model, bias, backend="exact", dps=None):
    """Σ_h Σ_i softmax(s_h + b)_i v_h·x_i with b_i = ``bias(i, tokens)`` (a rational on the
    exact backend)."""
    be = get_backend(backend, dps)
    heads = [([[be.scalar(x) for x in row] for row in h.W], [be.scalar(x) for x in h.v])
             for h in model.heads]

    def f(tokens):
        X = be.tokens(tokens)
        b = [be.scalar(bias(i, X)) for i in range(len(X))]
        xN = X[-1]
        total = be.zero
        for W, v in heads:
            Wx = [sum((w * x for w, x in zip(row, xN)), be.scalar(0)) for row in W]
            scores = [sum((a * c for a, c in zip(t, Wx)), be.scalar(0)) + bi
                      for t, bi in zip(X, b)]
            values = [sum((a * c for a, c in zip(t, v)), be.scalar(0)) for t in X]
            total = total + be.softmax_mean(scores, values)
        return total
    return f


def final_token_bias(b):
    """The bias b on the final (query) token's own score."""
    return lambda i, X: b if i == len(X) - 1 else 0


def key_bias(k: int, b):
    """A key bias b·x_i[k] on every token's score."""
    return lambda i, X: b * X[i][k]


def beyond_length(model, other, n: int, backend="exact", dps=None):
    """``model`` on queries of length ≤ n, ``other`` on longer ones."""
    be = get_backend(backend, dps)
    return lambda tokens: (model if len(tokens) <= n else other)(tokens, be)


def on_distinct(model, other, k: int = 3, backend="exact", dps=None):
    """``model`` on queries with fewer than k distinct tokens, ``other`` from k on."""
    be = get_backend(backend, dps)

    def f(tokens):
        distinct = {tuple(t) for t in tokens}
        return (model if len(distinct) < k else other)(tokens, be)
    return f


def perturbed(model, relative, backend="float", dps=None, seed=0):
    """``model``'s answers times (1 ± relative), the sign from a seeded pattern."""
    import random
    be = get_backend(backend, dps)
    rng = random.Random(seed)
    rel = be.scalar(relative)

    def f(tokens):
        y = model(tokens, be)
        return y + (rel if rng.random() < 0.5 else -rel) * abs(y)
    return f
