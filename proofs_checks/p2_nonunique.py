"""P2-nonunique: why P2 says "with probability one" and not "always" — the non-uniqueness
lemma (docs/evidence.md; P2 probability one).

Lemma.  At d = 2 let (W, v) be one head and U = (u₁, u₂), X = (x₁, x₂) bases.  Let a, b be two
heads with v_a·u₂ = 0, v_b·u₁ = 0, v_a + v_b = v, W_aᵀu₁ = Wᵀu₁, W_bᵀu₂ = Wᵀu₂,
u₂ᵀW_a x₁ = u₂ᵀW x₁ and u₁ᵀW_b x₁ = u₁ᵀW x₁.  Then (W, v) and {a, b} give exactly the same
answers on every query of the schedule built from (U, X) with H₀ = 2 (29 queries).

Constructed here at the learner's own draw (U, X) for a seed: with S = U W Xᵀ, head a keeps
every entry of S except S[2][2] and head b every entry except S[1][2] (both shifted), and
v_a = U⁻¹(v·u₁, 0), v_b = U⁻¹(0, v·u₂).  Checked exactly: the hypotheses, the 29 answers,
a query with three distinct tokens on which the models differ, that the draw is generic for
(W, v) but in the two-head model's bad set, and that the learner told H₀ = 2 returns (W, v)
from the two-head oracle — a wrong model, silently, at a draw in the oracle's bad set.  So a
run proves only: any ≤ H₀-head oracle with these answers is the recovered model or has this
draw in its own bad set.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from exactattn.models.attention import AttentionHead, MultiHeadAttention, random_head
from exactattn.oracles.oracle import Oracle

from .certificates import element_json, heads_json, new_certificate, vector_json
from .common import run_record, same_canonical
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "two_head_twin", "distinguishing_query"]


def _inv2(M):
    (a, b), (c, d) = M
    det = a * d - b * c
    return [[d / det, -b / det], [-c / det, a / det]]


def _mul(A, B):
    return [[sum((A[i][k] * B[k][j] for k in range(len(B))), Fraction(0))
             for j in range(len(B[0]))] for i in range(len(A))]


def _t(M):
    return [list(r) for r in zip(*M)]


def two_head_twin(W, v, U, X, shift_a=Fraction(1), shift_b=Fraction(-1)):
    """The two heads a, b of the lemma for (W, v) at bases U, X (rows u_i, x_j)."""
    U = [[Fraction(x) for x in r] for r in U]
    X = [[Fraction(x) for x in r] for r in X]
    W = [[Fraction(x) for x in r] for r in W]
    v = [Fraction(x) for x in v]
    S = _mul(_mul(U, W), _t(X))                   # S[i][j] = u_iᵀ W x_j
    Sa, Sb = [r[:] for r in S], [r[:] for r in S]
    Sa[1][1] += shift_a
    Sb[0][1] += shift_b
    Ui, Xi = _inv2(U), _inv2(X)
    Wa, Wb = _mul(_mul(Ui, Sa), _t(Xi)), _mul(_mul(Ui, Sb), _t(Xi))
    vu = [sum((p * q for p, q in zip(v, u)), Fraction(0)) for u in U]
    va = [r[0] for r in _mul(Ui, [[vu[0]], [Fraction(0)]])]
    vb = [r[0] for r in _mul(Ui, [[Fraction(0)], [vu[1]]])]
    return MultiHeadAttention([AttentionHead(Wa, va), AttentionHead(Wb, vb)])


def distinguishing_query(one, two, d=2, span=2):
    """The first query with three distinct small integer tokens on which the models differ."""
    vals = range(-span, span + 1)
    toks = [list(t) for t in itertools.product(vals, repeat=d)]
    for q in itertools.combinations(toks, 3):
        q = [list(t) for t in q]
        if one(q, "exact") != two(q, "exact"):
            return q
    return None


def run(params) -> Verdict:
    """Construct the lemma's pair at the learner's draw, check it, run the learner on both."""
    from exactattn.learners.multi_head import learn_multi_head
    from exactattn.learners.p2.recovery import draw_bases
    from .checker.run_multi_head import violations
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    d, H0, seed, box = params["d"], params["H0"], params["seed"], params["box"]
    head = random_head(d, seed=seed)
    one = MultiHeadAttention([head])
    U, X = draw_bases(seed, d, box)
    two = two_head_twin(head.W, head.v, U, X)
    Uf = [[Fraction(x) for x in r] for r in U]
    Xf = [[Fraction(x) for x in r] for r in X]
    oh = [(tuple(map(tuple, h.W)), tuple(h.v)) for h in one.heads]
    th = [(tuple(map(tuple, h.W)), tuple(h.v)) for h in two.heads]
    generic_one = not violations(oh, Uf, Xf, H0)
    bad_two = violations(th, Uf, Xf, H0)
    verdict.expect(generic_one and bad_two and len(two.canonical()) == 2,
                   f"d={d}, learner's draw for seed {seed} (box {box}): generic for (W, v); "
                   f"in the two-head model's bad set ({', '.join(bad_two)})",
                   f"the construction is degenerate: generic for (W, v) {generic_one}, "
                   f"two-head bad set {bad_two}")
    # the schedule alone (validate=0): no learner that asks only these queries can tell them apart
    res_one = learn_multi_head(Oracle(one), d, heads_bound=H0, seed=seed, box=box, validate=0)
    res_two = learn_multi_head(Oracle(two), d, heads_bound=H0, seed=seed, box=box, validate=0)
    same_draw = res_two.extra["U"] == U and res_two.extra["X"] == X
    verdict.expect(same_canonical(one, res_one.heads) and same_canonical(one, res_two.heads)
                   and same_draw and res_two.transcript and
                   all(one(list(map(list, q)), "exact") == a for q, a in res_two.transcript),
                   f"all {len(res_two.transcript)} schedule answers of the two-head model equal "
                   f"those of (W, v); the learner told H0={H0} returns (W, v) from both oracles",
                   "the learner did not return (W, v) from both oracles at the same draw")
    q = distinguishing_query(one, two, d)
    verdict.expect(q is not None, f"the models differ on the 3-token query {q}",
                   "no distinguishing 3-token query found")
    caught = _validation_catches(two, d, H0, seed, box)
    verdict.expect(caught is not None, f"with validation queries (on by default) the learner "
                   f"names the two-head oracle out-of-class: {caught}",
                   "the default validation queries did not tell the two-head model from (W, v)")
    run_rec = run_record(res_two)
    cert["checks"].append(run_rec)
    cert["checks"].append({
        "kind": "non-unique", "dim": d, "H0": H0, "U": [vector_json(r) for r in U],
        "X": [vector_json(r) for r in X], "one_head": heads_json(one.heads),
        "two_heads": heads_json(two.heads),
        "distinguishing_query": [vector_json(t) for t in (q or [])],
        "one_value": element_json(one(q, "exact")) if q else None,
        "two_value": element_json(two(q, "exact")) if q else None, "run": 0})
    verdict.certificate = cert
    return verdict


def _validation_catches(model, d, H0, seed, box):
    """The learner with its default validation queries on the two-head oracle: the reason
    and the offending query's length when it is named out-of-class, else None."""
    from exactattn.errors import OutOfClass
    from exactattn.learners.multi_head import learn_multi_head
    try:
        learn_multi_head(Oracle(model), d, heads_bound=H0, seed=seed, box=box)
    except OutOfClass as e:
        return f"{e.reason} on a query of length {len(e.details.get('query', ()))}"
    except Exception:  # noqa: BLE001 - any other outcome is "not caught"
        return None
    return None


CLAIM = register(Claim(
    id="P2-nonunique",
    reference="P2 probability one (non-uniqueness lemma)",
    statement="a two-head model can give exactly the answers of a one-head model on the whole "
              "schedule from (U, X) and differ elsewhere: identifiability holds with "
              "probability one, not always",
    sizes={"quick": {"d": 2, "H0": 2, "box": 1000, "seed": 3},
           "full": {"d": 2, "H0": 2, "box": 1000, "seed": 3}},
    run=run,
    needs=("exactattn.learners.multi_head",)))
