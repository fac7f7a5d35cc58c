"""P1-P7.1: multi-head attention is not identifiable from its parameters (P1 Prop 7.1); only
the canonical form is (P2 canonical heads; docs/design.md §1).

Symbolic proof (sympy), for all W, v_1, v_2, W' and all tokens:

* A = one head (W, v_1 + v_2), B = two heads (W, v_1), (W, v_2), C = B plus a head (W', 0):
  the softmax weights α_i = softmax(XWx_N)_i depend on W and the tokens only, so
  f_{W,v_1} + f_{W,v_2} = Σ α_i (v_1 + v_2)·x_i = f_{W,v_1+v_2}, and f_{W',0} = 0.  Proved for
  every sequence length N with sympy sums over symbolic weights, and, through the library's
  own attention code on the symbolic backend, for N = 1, 2, 3 with symbolic W, v_1, v_2, W' and
  tokens (d = 2).  A, B, C have 1, 2, 3 heads: different parameters, one function.

Exact demonstration: for rational instances the multi-head learner, told H₀ = 1, 2, 3 heads
respectively, returns the same canonical heads {(W, v_1 + v_2)} from each oracle.
"""

from __future__ import annotations

import random

import sympy

from exactattn.models.attention import AttentionHead, MultiHeadAttention, random_head
from exactattn.oracles.oracle import Oracle

from .certificates import element_json, heads_json, new_certificate, vector_json
from .common import run_record
from .registry import Claim, Verdict, register
from .symbolic_tools import is_identically_zero, symbolic_attention, symbolic_head

__all__ = ["CLAIM", "linearity_all_lengths", "three_parameterisations", "symbolic_identities",
           "exact_instances"]


def linearity_all_lengths() -> dict:
    """For every N and any weights e_i > 0: Σe_i a_i/Σe_i + Σe_i b_i/Σe_i = Σe_i(a_i+b_i)/Σe_i
    and Σ e_i·0/Σ e_i = 0 (sympy sums with a symbolic upper limit N)."""
    i, N = sympy.symbols("i N", integer=True, positive=True)
    e, a, b = sympy.IndexedBase("e", positive=True), sympy.IndexedBase("a"), sympy.IndexedBase("b")
    S = sympy.Sum(e[i], (i, 1, N))

    def f(val):
        return sympy.Sum(e[i] * val, (i, 1, N)) / S
    merge = sympy.simplify(sympy.together(f(a[i]) + f(b[i]) - f(a[i] + b[i])).expand()) == 0
    zero = sympy.simplify(f(sympy.Integer(0)).doit()) == 0
    return {"merge": bool(merge), "zero_head": bool(zero)}


def three_parameterisations(dim: int):
    """A, B, C of the module docstring with symbol entries."""
    W, v1 = symbolic_head("", dim)
    _, v2 = symbolic_head("", dim, [sympy.Symbol(f"w_{i + 1}") for i in range(dim)])
    W2, _ = symbolic_head("p", dim)
    A = [(W, [p + q for p, q in zip(v1, v2)])]
    B = [(W, v1), (W, v2)]
    C = B + [(W2, [sympy.Integer(0)] * dim)]
    return A, B, C


def symbolic_identities(dim: int, lengths) -> dict:
    """F_A − F_B and F_A − F_C are identically 0 for symbolic tokens of each length N."""
    A, B, C = three_parameterisations(dim)
    out = {}
    for N in lengths:
        toks = [[sympy.Symbol(f"x{n + 1}_{k + 1}") for k in range(dim)] for n in range(N)]
        FA = symbolic_attention(A, toks)
        out[N] = (is_identically_zero(FA - symbolic_attention(B, toks))
                  and is_identically_zero(FA - symbolic_attention(C, toks)))
    return out


def exact_instances(dim: int, seed: int):
    """Rational A, B, C with the same W: models, random queries and their exact outputs agree."""
    rng = random.Random(seed)
    h1, h2, h3 = (random_head(dim, rng=rng) for _ in range(3))
    W, v1, v2 = h1.W, h1.v, h2.v
    A = MultiHeadAttention([AttentionHead(W, [p + q for p, q in zip(v1, v2)])])
    B = MultiHeadAttention([AttentionHead(W, v1), AttentionHead(W, v2)])
    C = MultiHeadAttention(list(B.heads) + [AttentionHead(h3.W, [0] * dim)])
    queries = [[[rng.randint(-3, 3) for _ in range(dim)] for _ in range(n)] for n in (1, 2, 3, 4)]
    agree = all(A(q, "exact") == B(q, "exact") == C(q, "exact") for q in queries)
    return {"A": A, "B": B, "C": C}, queries, agree


def learn_each(models, dim, seed):
    """Learn A, B, C with H₀ = 1, 2, 3 (P2 learner); returns the recovered models and the run
    records (consistency-and-genericity certificates with the true models)."""
    from exactattn.learners.multi_head import learn_multi_head
    out, runs = {}, []
    for H0, (name, model) in enumerate(models.items(), start=1):
        oracle = Oracle(model)
        res = learn_multi_head(oracle, dim, heads_bound=H0, seed=seed, resample=True)
        out[name] = MultiHeadAttention(res.heads)
        runs.append(run_record(res, model))
    return out, runs


def run(params) -> Verdict:
    """Check P1 Prop 7.1 symbolically and on exact instances."""
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    dim = params["d"]
    lin = linearity_all_lengths()
    verdict.expect(lin["merge"] and lin["zero_head"],
                   "for every length N: f_{W,v1} + f_{W,v2} = f_{W,v1+v2} and f_{W',0} = 0 "
                   "(sympy sums over symbolic weights)", f"linearity in v not proved: {lin}")
    ident = symbolic_identities(dim, params["N"])
    verdict.expect(all(ident.values()),
                   f"symbolic W, v1, v2, W', tokens (d={dim}, N={','.join(map(str, ident))}): "
                   "F_A = F_B = F_C with A = (W, v1+v2), B = (W, v1)+(W, v2), C = B+(W', 0)",
                   f"symbolic identity failed for N = {[n for n, ok in ident.items() if not ok]}")
    models, queries, agree = exact_instances(dim, params["seed"])
    verdict.expect(agree and len({len(m) for m in models.values()}) == 3,
                   f"rational instance: A, B, C have 1, 2, 3 heads and agree exactly on "
                   f"{len(queries)} random queries", "rational instance outputs differ")
    check = {"kind": "same-function", "dim": dim, "parameterisations_differ": True,
             "models": {k: heads_json(m.heads) for k, m in models.items()},
             "test_queries": [[vector_json(t) for t in q] for q in queries],
             "test_values": [element_json(models["A"](q, "exact")) for q in queries]}
    try:
        recovered, runs = learn_each(models, dim, params["seed"])
    except ImportError as e:
        verdict.fail(f"learner demonstration not checked: {e}")
        recovered, runs = {}, []
    canon = models["A"].head_set()
    for name, rec in recovered.items():
        verdict.expect(rec.head_set() == canon,
                       f"learner on {name} ({len(models[name])} heads, H0={len(models[name])}) "
                       f"returns the canonical form {{(W, v1+v2)}} exactly",
                       f"learner on {name} returned {rec} ≠ canonical form")
        check["models"][f"recovered from {name}"] = heads_json(rec.heads)
    cert["checks"].append(check)
    cert["checks"].extend(runs)
    cert["symbolic"].append({"all_lengths_merge": lin["merge"], "all_lengths_zero_head": lin["zero_head"],
                             "token_lengths": list(ident), "identities": all(ident.values())})
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="P1-P7.1",
    reference="P1 Prop 7.1",
    statement="multi-head parameters are not identifiable: (W, v1+v2), (W, v1)+(W, v2) and "
              "+(W', 0) are one function; the learner returns one canonical form",
    sizes={"quick": {"d": 2, "N": [1, 2, 3], "seed": 1},
           "full": {"d": 3, "N": [1, 2, 3, 4], "seed": 1}},
    run=run))
