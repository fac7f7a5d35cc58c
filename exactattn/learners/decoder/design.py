"""``certify_causal``: is the causal oracle M?  Theorem A's moment-curve design asked of a
decoder oracle, one causal query per family (docs/decoders.md §6; docs/design.md §12).

For the design point λ the causal query [x(λ) − u(λ), x(λ) × (L − 1)] read at every position
gives the outputs G̃(k) = v·x − Σ_h (v_h·u)/(1 + k e^{uᵀW_h x}), k = 0 … L − 1 (L = H + H₀): the
family of Theorem A, with the same poles e^{uᵀW_h x} and residues −v_h·u, in one query.  The
theorem's proof carries over unchanged: the d single-token queries [e_i] fix v = Σ_h v_h, hence
the constant v·x of every family; the difference of two families of types (H−1, H) and
(H₀−1, H₀) has a numerator of degree ≤ L − 1, zero at the L positions k = 0 … L − 1, so the
families agree; and a lone pole with a non-zero residue cannot cancel (conditions (i)–(iii)
with γ = d − 1, β = d² − 1 of :mod:`exactattn.learners.design.moment_curve`).  So the design
is d + n queries, n = (L − 1)(d² − 1) + d, of length ≤ L, where P2's oracle needs
d + n(L − 1).

With one shared ALiBi slope s the copy count k becomes S_k = Σ_{i≤k} e^{is}, L distinct
nodes: the same argument.  With a residual read-out w the first output of a family is off its
curve (by −w·u), so the queries are one position longer (the curve is read at k = 1 … L): the
curves agree, their residues give v′·u_k = v·u_k for every family, so v′ = v and, from the
single-token queries (v + w), w′ = w.  Distinct slopes are not covered (the heads are no
longer one rational function of one variable).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

from ..design import moment_curve as design
from ..design.certify import write_design_certificate

__all__ = ["certify_causal", "CausalCertification", "causal_design_count"]


def causal_design_count(d: int, H: int, H0: int, residual: bool = False):
    """(queries, max length) of the causal design: d + n queries, length L (+1 residual)."""
    return d + design.families_needed(d, H, H0), H + H0 + (1 if residual else 0)


def _queries(d, lams, length):
    out = [[[Fraction(int(i == j)) for j in range(d)]] for i in range(d)]
    for lam in lams:
        u, x = design.u_of(lam, d), design.x_of(lam, d)
        out.append([[a - b for a, b in zip(x, u)]] + [list(x)] * (length - 1))
    return out


@dataclass
class CausalCertification:
    """What :func:`certify_causal` found: ``holds`` (every output is M's, so every causal
    oracle with ≤ ``heads_bound`` heads, M's slope and a residual read-out if M has one, giving
    them is M) or the index of the first query whose outputs differ (``mismatch``)."""

    model: object
    dim: int
    heads: int
    heads_bound: int
    holds: bool
    queries: int
    outputs: int
    max_length: int
    points: list
    transcript: list = field(repr=False)
    mismatch: int | None = None
    seconds: float = 0.0

    @property
    def proves(self) -> str:
        if self.holds:
            return (f"every causal oracle with ≤ {self.heads_bound} heads"
                    f"{' and these slopes' if self.model.slopes is not None else ''} that gives "
                    f"these {self.outputs} outputs of {self.queries} queries is M (Theorem A "
                    f"with one causal query per family: {len(self.points)} moment-curve "
                    f"families > γ + (L−1)β; docs/decoders.md §6)")
        return (f"M is not the oracle: the outputs of design query {self.mismatch} differ from "
                f"M's exactly in Q(t)")

    def certificate(self) -> dict:
        if not self.holds:
            raise ValueError("certify found a mismatch: there is no design certificate for a "
                             "model that is not the oracle")
        from proofs_checks.decoder_record import causal_design_certificate
        return causal_design_certificate(self)

    def write_certificate(self, path) -> None:
        """Write :meth:`certificate` as JSON to ``path``; ValueError (nothing written) when
        the file would exceed the checker's size limit."""
        write_design_certificate(self.certificate(), path)


def certify_causal(oracle, model, heads_bound=None):
    """Theorem A for a causal oracle (module docstring): ask the d single-token queries and one
    causal query per moment-curve family, compare every output with M's exactly in Q(t)."""
    from ...models.decoder import CausalAttention
    from ...oracles.causal import as_causal_oracle
    if not isinstance(model, CausalAttention):
        raise TypeError("certify_causal needs M as a CausalAttention")
    M = model.canonical()
    if not M.is_rational:
        raise ValueError("certify_causal compares outputs exactly in Q(t): M needs rational "
                         "parameters and slopes")
    if M.slopes is not None and len(set(M.slopes)) > 1:
        raise ValueError("the causal design covers one shared slope, not distinct slopes")
    d, H = M.dim, len(M.heads)
    H0 = max(1, H if heads_bound is None else int(heads_bound))
    if H0 < H:
        raise ValueError(f"heads_bound {H0} is below M's {H} canonical heads")
    orc = as_causal_oracle(oracle, d, "exact")
    n = design.families_needed(d, H, H0)
    _, length = causal_design_count(d, H, H0, M.residual is not None)
    lams = design.points(n)
    start, before = time.perf_counter(), orc.spent
    transcript, mismatch, be = [], None, orc.backend
    for q in _queries(d, lams, length):
        answer = orc.ask_many([q])[0]
        transcript.append((q, answer))
        if tuple(answer) != tuple(M.evaluate_clean(be.tokens(q), be)):
            mismatch = len(transcript) - 1
            break
    return CausalCertification(
        model=M, dim=d, heads=H, heads_bound=H0, holds=mismatch is None,
        queries=orc.spent - before, outputs=sum(len(a) for _, a in transcript),
        max_length=max(len(q) for q, _ in transcript), points=lams, transcript=transcript,
        mismatch=mismatch, seconds=time.perf_counter() - start)
