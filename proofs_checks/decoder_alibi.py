"""alibi (beyond the papers; docs/decoders.md): ALiBi position biases with known rational
slopes.  Head h's score of key i at position p is x_iᵀW_h x_p − s_h·(p − i); with q = e^{−s}
in Q(t) one causal query [x − u, x × (n−1)] gives G̃(k) = v·x − Σ_h (v_h·u)/(1 + S_h(k) z_h),
S_h(k) = Σ_{i=1}^{k} e^{i s_h}.

* one shared slope: S_k replaces k, and P2's interpolation runs on the nodes S_k
  (2d² − 1 queries of length 2H₀ + 1);
* distinct slopes: each head keeps its own S_h(k); the heads are told apart by their slopes,
  so the d² basis queries suffice, of length 2^{H+1} − 1 (an exponential-sum system).

Checked exactly: seeded random models learned through a no-peek oracle, canonical form
(heads grouped by (W, slope)) recovered, every run a ``run`` record the checker replays
output by output with the ALiBi biases.  Slopes with a subset-sum coincidence are refused by
name (``dependent-slopes``), shown here as a finding.
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
    grid = [(d, H, Fraction(s)) for d, H, s in params["shared d,H,slope"]] + \
        [(d, len(sl), [Fraction(s) for s in sl]) for d, sl in params["distinct d,slopes"]]
    for d, H, slopes in grid:
        result, model = learned(d, H, seed, slopes=slopes)
        shown = slopes if isinstance(slopes, Fraction) else ",".join(map(str, slopes))
        kind = "shared slope" if isinstance(slopes, Fraction) else "distinct slopes"
        verdict.expect(result.model.head_set() == model.canonical().head_set()
                       and bool(result.certificate),
                       f"(d, H) = ({d}, {H}), {kind} {shown}: exact canonical heads from "
                       f"{result.queries} queries of length {result.max_length}, certified")
        cert["checks"].append(causal_record(result, model))
    verdict.details.append(_dependent(seed))
    verdict.certificate = cert
    return verdict


def _dependent(seed) -> str:
    """Slopes 1/4, 1/2, 3/4 (1/4 + 1/2 = 3/4) refused by name."""
    from exactattn.errors import LearningFailure
    try:
        learned(2, 3, seed, slopes=[Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)])
    except LearningFailure as e:
        return f"slopes 1/4, 1/2, 3/4 (1/4 + 1/2 = 3/4): refused by name ({e.reason})"
    raise AssertionError("dependent slopes were not refused")


CLAIM = register(Claim(
    id="alibi",
    reference="beyond the papers: ALiBi position biases",
    statement="known rational ALiBi slopes: one shared slope replaces the copy count k by "
              "S_k = Σ_{i≤k} e^{is}; distinct slopes label the heads (d² queries of length "
              "2^{H+1}−1); recovered exactly",
    sizes={"quick": {"shared d,H,slope": [[2, 2, "1/2"], [3, 2, "1/4"]],
                     "distinct d,slopes": [[2, ["1/2", "1/4"]], [2, ["1/2", "1/4", "1/8"]]],
                     "seed": 1},
           "full": {"shared d,H,slope": [[2, 2, "1/2"], [3, 2, "1/4"], [4, 3, "1/2"]],
                    "distinct d,slopes": [[2, ["1/2", "1/4"]], [3, ["1/2", "1/4", "1/8"]],
                                          [4, ["1/2", "1/4"]]],
                    "seed": 1}},
    run=run,
    needs=("exactattn.learners.decoder",)))
