"""residual (beyond the papers; docs/decoders.md): a residual read-out, output
F_p = Σ_h attention_h + w·x_p at every position.

In one causal query [x − u, x × (n−1)] the residual adds w·x to every output from position 2
on (the query token is x) and w·(x − u) at position 1: the positions k ≥ 1 still form the
copy-count family, now with constant (v + w)·x, and the first output is off its curve by
−w·u.  So the fit uses k = 1 … 2H₀ + 1 (one position more: length 2H₀ + 2) and every family
gives w·u = K + Σ_h c_h − G̃(0): w from the d families at x₁, with no extra query.  (For
P2's final-token oracle the residual adds w·x to K and to G(0) of every family alike; there
v + w comes only from single-token queries, d − 1 more than P2's one: docs/decoders.md.)

Checked exactly: seeded random models with a residual (plain and with a shared ALiBi slope)
learned through a no-peek oracle, heads and w recovered, every run a ``run`` record the
checker replays output by output.
"""

from __future__ import annotations

from fractions import Fraction

from .certificates import new_certificate
from .decoder_record import causal_record, learned
from .registry import Claim, Verdict, register

__all__ = ["CLAIM"]


def run(params) -> Verdict:
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    seed = params["seed"]
    grid = [(d, H, None) for d, H in params["d,H"]] + \
        [(d, H, Fraction(s)) for d, H, s in params["alibi d,H,slope"]]
    for d, H, slope in grid:
        result, model = learned(d, H, seed, slopes=slope, residual=True)
        ok = result.model.head_set() == model.canonical().head_set() and \
            result.model.residual == model.residual and bool(result.certificate) and \
            result.queries == 2 * d * d - 1 and result.max_length == 2 * H + 2
        w = ", ".join(map(str, result.model.residual))
        verdict.expect(ok, f"(d, H) = ({d}, {H}){'' if slope is None else f', slope {slope}'}: "
                           f"heads and w = ({w}) recovered exactly from {result.queries} "
                           f"queries of length {result.max_length}, certified")
        cert["checks"].append(causal_record(result, model))
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="residual",
    reference="beyond the papers: residual read-out",
    statement="a residual read-out w·x_p is recovered with the heads from the same 2d²−1 "
              "causal queries, one position longer (2H0+2)",
    sizes={"quick": {"d,H": [[2, 1], [3, 2]], "alibi d,H,slope": [[2, 2, "1/2"]], "seed": 1},
           "full": {"d,H": [[2, 1], [3, 2], [4, 3]],
                    "alibi d,H,slope": [[2, 2, "1/2"], [3, 2, "1/4"]], "seed": 1}},
    run=run,
    needs=("exactattn.learners.decoder",)))
