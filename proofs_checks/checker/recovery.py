"""Check kinds ``recovery`` and ``same-function``: canonical forms recomputed here and every
recorded oracle answer reproduced exactly in Q(t)."""

from __future__ import annotations

from .parse import heads, integer, require
from .qt import attention, canonical, element, same_element, tokens_of


def _transcript(c, models, dim, where):
    tr = c.get("transcript", [])
    require(isinstance(tr, list), f"{where}: transcript must be a list")
    if tr:
        require(c.get("queries") == len(tr), f"{where}: queries ≠ transcript length")
        require(c.get("max_length") == max(len(e.get("tokens", ())) for e in tr),
                f"{where}: max_length ≠ longest query of the transcript")
    for k, entry in enumerate(tr):
        require(isinstance(entry, dict) and set(entry) == {"tokens", "answer"},
                f"{where}: transcript[{k}] is {{tokens, answer}}")
        toks = tokens_of(entry["tokens"], dim, f"{where}.transcript[{k}].tokens")
        ans = element(entry["answer"], f"{where}.transcript[{k}].answer")
        for name, model in models:
            require(same_element(attention(model, toks), ans),
                    f"{where}: the {name} does not reproduce oracle answer {k}")
    return len(tr)


def check_recovery(c, checks=()):
    """Recovered heads = the canonical form of the true heads, recomputed here, and both
    models reproduce every transcript answer in Q(t) (P1 Thm 4.1, P1 Thm 5.1, P2 canonical heads)."""
    dim = integer(c.get("dim"), "recovery.dim")
    model = heads(c.get("model"), dim, "recovery.model")
    rec = heads(c.get("recovered"), dim, "recovery.recovered")
    require(len(set(W for W, _ in rec)) == len(rec) and all(any(v) for _, v in rec),
            "recovery: the recovered heads are not canonical (repeated W or zero v)")
    require(canonical(model) == frozenset(rec),
            "recovery: recovered heads ≠ canonical form of the true heads")
    n = _transcript(c, [("true model", model), ("recovered model", rec)], dim, "recovery")
    return f"recovery d={dim}: {len(rec)} canonical heads equal, {n} answers reproduced"


def check_same_function(c, checks=()):
    """Different parameterisations with one canonical form and equal outputs on the
    recorded queries (P1 Prop 7.1, P2 canonical heads)."""
    dim = integer(c.get("dim"), "same-function.dim")
    models = c.get("models")
    require(isinstance(models, dict) and len(models) >= 2, "same-function: need ≥ 2 models")
    parsed = [(name, heads(m, dim, f"same-function.{name}")) for name, m in models.items()]
    forms = {canonical(m) for _, m in parsed}
    require(len(forms) == 1, "same-function: canonical forms differ")
    distinct = {tuple(sorted(m)) for _, m in parsed}
    if c.get("parameterisations_differ"):
        require(len(distinct) >= 2, "same-function: the parameterisations are not different")
    queries = c.get("test_queries", [])
    values = c.get("test_values", [])
    require(isinstance(queries, list) and isinstance(values, list) and len(values) == len(queries),
            "same-function: test_queries and test_values must be lists of equal length")
    for k, (q, y) in enumerate(zip(queries, values)):
        toks = tokens_of(q, dim, f"same-function.test_queries[{k}]")
        want = element(y, f"same-function.test_values[{k}]")
        require(all(same_element(attention(m, toks), want) for _, m in parsed),
                f"same-function: an output differs from the recorded value on query {k}")
    n = _transcript(c, parsed, dim, "same-function")
    return (f"same-function d={dim}: {len(parsed)} parameterisations, one canonical form, "
            f"{len(queries)} queries agree, {n} answers reproduced")
