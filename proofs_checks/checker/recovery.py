"""Check kind ``same-function``: several parameterisations with one canonical form, recomputed
here, and equal outputs exactly in Q(t) on the recorded queries (P1 Prop 7.1, P2 canonical
heads)."""

from __future__ import annotations

import itertools

from .parse import boolean, heads, integer, listed, multiset, only, require
from .qt import attention, canonical_form, element, is_canonical, same_element, tokens_of


def check_same_function(c, checks=()):
    """Different raw parameterisations with one canonical form and equal outputs on the
    recorded queries (P1 Prop 7.1, P2 canonical heads).  The raw parameterisations (models not
    named "recovered …") must differ pairwise as multisets of heads; a recovered model is what
    a learner returns, so it must be canonical itself (no repeated W, no zero v)."""
    only(c, ("kind", "dim", "parameterisations_differ", "models", "test_queries", "test_values"),
         "same-function")
    dim = integer(c["dim"], "same-function.dim", 1, 16)
    require(boolean(c["parameterisations_differ"], "same-function.parameterisations_differ"),
            "same-function: parameterisations_differ must be true (the claim is about different "
            "parameters)")
    models = c["models"]
    require(isinstance(models, dict) and 2 <= len(models) <= 16, "same-function: need 2…16 models")
    parsed = [(name, heads(m, dim, f"same-function.{name}")) for name, m in models.items()]
    forms = {canonical_form(m) for _, m in parsed}
    require(len(forms) == 1, "same-function: canonical forms differ")
    for name, m in parsed:
        require(not name.startswith("recovered") or is_canonical(m),
                f"same-function: {name!r:.40} is not canonical (a learner returns canonical "
                f"heads: distinct W, no zero v)")
    raw = [(name, multiset(m)) for name, m in parsed if not name.startswith("recovered")]
    require(len(raw) >= 2, "same-function: fewer than two raw parameterisations")
    for (n1, m1), (n2, m2) in itertools.combinations(raw, 2):
        require(m1 != m2, f"same-function: {n1} and {n2} are the same raw parameters")
    queries = listed(c["test_queries"], "same-function.test_queries", 64)
    values = listed(c["test_values"], "same-function.test_values", 64)
    require(queries and len(values) == len(queries),
            "same-function: test_queries and test_values must be non-empty lists of equal length")
    for k, (q, y) in enumerate(zip(queries, values)):
        toks = tokens_of(q, dim, f"same-function.test_queries[{k}]")
        want = element(y, f"same-function.test_values[{k}]")
        require(all(same_element(attention(m, toks), want) for _, m in parsed),
                f"same-function: an output differs from the recorded value on query {k}")
    return (f"same-function d={dim}: {len(raw)} pairwise different raw parameterisations "
            f"(+{len(parsed) - len(raw)} recovered), one canonical form, {len(queries)} "
            f"queries agree exactly in Q(t)")
