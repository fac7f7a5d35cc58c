"""causal-count (beyond the papers; docs/decoders.md): with a causal mask and an output at
every position, one query [x − u, x × 2H₀] is a whole copy-count family, so the causal
learner needs 2d² − 1 queries of length 2H₀ + 1 where P2 needs 4H₀d² − 2H₀ + 1, and
d² + d − 1 when the heads of a row are matched by their residues instead of P2's
row-matching families.

Checked exactly over the grid of (d, H), for both matchings: a seeded random causal model
learned through a no-peek oracle, its canonical form recovered, the run certified (a ``run`` record the checker
replays output by output) and counted (a ``causal-count`` record: the formulas recomputed,
the transcript recounted), and Theorem A's design asked with one causal query per family (a
``causal-design`` record: every causal oracle with ≤ H heads giving its outputs is the
recovered model).  And the twin: at the learner's own draw, a second model whose
heads are the first's with the labels of row u₂ swapped gives exactly the same outputs on all
d² basis queries I(u_i, x_j) — of any length — and differs elsewhere, so the basis queries
alone do not determine a model with H ≥ 2 heads (``causal-twin`` record).
"""

from __future__ import annotations



from .certificates import element_json, new_certificate, vector_json
from .decoder_record import causal_model_json, causal_record, learned
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "basis_twin"]


def basis_twin(model, U, X):
    """The causal model whose head a takes, in row u_i, the scores u_iᵀW x_j and residue
    −v·u_i of head π_i(a), with π_2 the swap of heads 1 and 2 and every other π_i the
    identity: W'_a = U⁻¹ S'_a X⁻ᵀ, v'_a = −U⁻¹ C'_a (the same answers on every basis query)."""
    from exactattn.arith import get_backend
    from exactattn.models.attention import AttentionHead
    from exactattn.models.decoder import CausalAttention
    be = get_backend("exact")
    d, heads = len(U), model.heads
    S = [[[sum(U[i][p] * h.W[p][q] * X[j][q] for p in range(d) for q in range(d))
           for j in range(d)] for i in range(d)] for h in heads]
    C = [[-sum(U[i][p] * h.v[p] for p in range(d)) for i in range(d)] for h in heads]
    perm = [list(range(len(heads))) for _ in range(d)]
    perm[1][0], perm[1][1] = 1, 0
    bases = be.basis_solver(U, X)
    out = []
    for a in range(len(heads)):
        Sa = [[S[perm[i][a]][i][j] for j in range(d)] for i in range(d)]
        Ca = [[C[perm[i][a]][i]] for i in range(d)]
        out.append(AttentionHead(bases.both(Sa), [-r[0] for r in bases.left(Ca)]))
    return CausalAttention(out, dim=d)


def _design(d, H, model, recovered, verdict):
    """Theorem A with one causal query per family, asked of the oracle for the recovered
    model at H₀ = H (a ``causal-design`` record)."""
    from exactattn.learners.decoder.design import certify_causal
    from exactattn.learners.design.moment_curve import design_count
    from exactattn.oracles.oracle import Oracle
    c = certify_causal(Oracle(model), recovered, H)
    verdict.expect(c.holds, f"(d, H) = ({d}, {H}): the oracle is the recovered model (Theorem A, "
                            f"H0 = H): {c.queries} causal queries of length {c.max_length} "
                            f"({c.outputs} outputs), against {design_count(d, H, H)} queries "
                            f"for P2's oracle")
    from .decoder_record import causal_design_record
    return causal_design_record(c)


def _twin_record(d, H, seed, verdict):
    from exactattn.learners.decoder.schedule import CausalSchedule
    from exactattn.models.decoder import random_causal
    from exactattn.learners.p2.recovery import draw_bases
    import random
    model = random_causal(d, H, seed=seed).canonical()
    U, X = draw_bases(seed, d)
    twin = basis_twin(model, U, X)
    sched = CausalSchedule(U, X, H, mode="slopes")
    n = 2 * H + 1
    queries = [q[:1] + [q[1]] * (n - 1) for q in sched.queries()]
    a = [model(q) for q in queries]
    b = [twin(q) for q in queries]
    rng = random.Random(seed)
    dq = [[rng.randint(-5, 5) for _ in range(d)] for _ in range(3)]
    differ = model(dq) != twin(dq)
    verdict.expect(a == b and model.head_set() != twin.head_set() and differ,
                   f"twin at d={d}, H={H}: {d * d} basis queries of length {n} give the same "
                   f"{d * d * n} outputs for two different models (rows' head labels swapped), "
                   f"which differ on a 3-token query: matching queries are needed")
    return {"kind": "causal-twin", "dim": d, "H0": H, "U": [vector_json(r) for r in U],
            "X": [vector_json(r) for r in X], "first": causal_model_json(model),
            "second": causal_model_json(twin),
            "transcript": [{"tokens": [vector_json(t) for t in q],
                            "answer": [element_json(e) for e in ans]}
                           for q, ans in zip(queries, a)],
            "distinguishing": [vector_json(t) for t in dq]}


def run(params) -> Verdict:
    from exactattn.learners.p2.schedule import published_count
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    seed = params["seed"]
    for d, H in params["d,H"]:
        p2 = published_count(d, H)
        for matching, mode, want in (("p2", "copy-count", 2 * d * d - 1),
                                     ("residue", "residue", d * d + d - 1)):
            result, model = learned(d, H, seed, matching=matching)
            outs = result.extra["outputs_read"]
            ok = result.model.head_set() == model.canonical().head_set() and \
                bool(result.certificate) and result.queries == want and \
                result.max_length == 2 * H + 1
            verdict.expect(ok, f"(d, H) = ({d}, {H}), {mode}: exact canonical heads from "
                               f"{result.queries} causal queries of length {result.max_length} "
                               f"({outs} outputs), certified; P2 on the same model: {p2}")
            k = len(cert["checks"])
            cert["checks"].append(causal_record(result, model))
            cert["checks"].append({"kind": "causal-count", "d": d, "H0": H, "mode": mode,
                                   "residual": False, "queries": result.queries,
                                   "max_length": result.max_length, "outputs": outs,
                                   "p2_queries": p2, "run": k})
        cert["checks"].append(_design(d, H, model, result.model, verdict))
    d, H = params["twin d,H"]
    cert["checks"].append(_twin_record(d, H, seed, verdict))
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="causal-count",
    reference="beyond the papers: causal decoder oracles",
    statement="with a causal mask and an output at every position one query is a whole "
              "copy-count family: exact canonical heads from 2d²−1 queries of length 2H0+1 "
              "(d²+d−1 with residue matching; P2: 4H0d²−2H0+1); the d² basis queries alone "
              "do not suffice",
    sizes={"quick": {"d,H": [[2, 1], [2, 2], [3, 2], [4, 3]], "twin d,H": [2, 2], "seed": 1},
           "full": {"d,H": [[2, 1], [2, 2], [3, 2], [4, 3], [6, 3], [8, 4]],
                    "twin d,H": [3, 2], "seed": 1}},
    run=run,
    needs=("exactattn.learners.decoder",)))


