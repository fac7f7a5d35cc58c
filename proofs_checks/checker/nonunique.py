"""Check kind ``non-unique``: the non-uniqueness lemma (docs/evidence.md, "Non-uniqueness
lemma"; P2 probability one).

At d = 2 take a one-head model (W, v) and a two-head model a, b with v_a·u₂ = 0, v_b·u₁ = 0,
v_a + v_b = v, W_aᵀu₁ = Wᵀu₁, W_bᵀu₂ = Wᵀu₂, u₂ᵀW_a x₁ = u₂ᵀW x₁, u₁ᵀW_b x₁ = u₁ᵀW x₁.  Then
the two give exactly the same answers on the whole schedule built from (U, X) with H₀ = 2:
at u₁ only head a is visible and has W's scores, at u₂ only head b, and in I(u₁+u₂, x₁) both
poles equal W's and their residues add up to W's.  Checked here from the definitions: the
hypotheses, every one of the 29 answers in Q(t), a query with three distinct tokens on which
the models differ, the draw generic for (W, v) but in the two-head model's bad set, and the
learner's run on the two-head oracle (a ``run`` record) returning (W, v).
"""

from __future__ import annotations

from fractions import Fraction

from .parse import heads, integer, matrix, multiset, only, require, same_json
from .qt import attention, element, is_canonical, same_element, tokens_of
from .run import run_of
from .run_multi_head import dot, schedule_queries, violations


def _col(W, u):
    """Wᵀu."""
    return [sum((u[i] * W[i][j] for i in range(len(u))), Fraction(0)) for j in range(len(u))]


def _bil(u, W, x):
    return dot(u, [dot(r, x) for r in W])


def check_non_unique(c, checks=()):
    """The non-uniqueness lemma at this instance, exactly."""
    only(c, ("kind", "dim", "H0", "U", "X", "one_head", "two_heads", "distinguishing_query",
             "one_value", "two_value", "run"), "non-unique")
    d = integer(c["dim"], "non-unique.dim", 2, 2)
    H0 = integer(c["H0"], "non-unique.H0", 2, 2)
    U, X = matrix(c["U"], "non-unique.U", d, d), matrix(c["X"], "non-unique.X", d, d)
    one = heads(c["one_head"], d, "non-unique.one_head", 1)
    two = heads(c["two_heads"], d, "non-unique.two_heads", 2)
    require(len(one) == 1 and len(two) == 2, "non-unique: one head and two heads")
    require(is_canonical(two) and is_canonical(one),
            "non-unique: the models are not canonical")
    (W, v), (Wa, va), (Wb, vb) = one[0], two[0], two[1]
    u1, u2, x1 = U[0], U[1], X[0]
    hyp = [("v_a·u2 = 0", dot(va, u2) == 0), ("v_b·u1 = 0", dot(vb, u1) == 0),
           ("v_a + v_b = v", [p + q for p, q in zip(va, vb)] == list(v)),
           ("W_aᵀu1 = Wᵀu1", _col(Wa, u1) == _col(W, u1)),
           ("W_bᵀu2 = Wᵀu2", _col(Wb, u2) == _col(W, u2)),
           ("u2ᵀW_a x1 = u2ᵀW x1", _bil(u2, Wa, x1) == _bil(u2, W, x1)),
           ("u1ᵀW_b x1 = u1ᵀW x1", _bil(u1, Wb, x1) == _bil(u1, W, x1))]
    for what, ok in hyp:
        require(ok, f"non-unique: hypothesis {what} fails")
    queries = schedule_queries(U, X, H0)
    for k, q in enumerate(queries):
        require(same_element(attention(one, q), attention(two, q)),
                f"non-unique: the models differ on schedule query {k}")
    q = tokens_of(c["distinguishing_query"], d, "non-unique.distinguishing_query")
    require(len({tuple(t) for t in q}) >= 3, "non-unique: the distinguishing query needs three "
            "distinct tokens")
    y1, y2 = attention(one, q), attention(two, q)
    require(same_element(y1, element(c["one_value"], "one_value")) and
            same_element(y2, element(c["two_value"], "two_value")),
            "non-unique: recorded values are not the models' outputs")
    require(not same_element(y1, y2), "non-unique: the models agree on the distinguishing query")
    require(not violations(one, U, X, H0), "non-unique: the draw is not generic for (W, v)")
    bad = violations(two, U, X, H0)
    require(bad, "non-unique: the draw is not in the two-head model's bad set")
    r = run_of(checks, c["run"], "non-unique")
    require("model" not in r and same_json(r.get("params"), {"H0": H0}), "non-unique: the run is the "
            "learner's on the two-head oracle, told H0 = 2 (no true model recorded)")
    require([matrix(r["vectors"]["U"], "run.U", d, d), matrix(r["vectors"]["X"], "run.X", d, d)] == [U, X],
            "non-unique: the run used other vectors")
    require(multiset(heads(r["recovered"], d, "run.recovered")) == multiset(one),
            "non-unique: the run did not return (W, v)")
    for k, e in enumerate(r["transcript"]):
        require(same_element(attention(two, tokens_of(e["tokens"], d, "run")),
                             element(e["answer"], "run.answer")),
                f"non-unique: the run's answer {k} is not the two-head model's")
    return (f"non-unique (lemma of docs/evidence.md): the 7 hypotheses hold; one head and two "
            f"heads give identical answers on all {len(queries)} schedule queries (exact, Q(t)) "
            f"and differ on a query with 3 distinct tokens; the draw is generic for (W, v) and "
            f"in the two-head model's bad set ({', '.join(bad)}); the learner, asked the "
            f"two-head oracle, returns (W, v)")
