"""The design learner (``schedule="design"``; Theorem A, docs/design.md §12; docs/beyond.md
§8): canonical heads from the moment-curve design alone, with no random draw, certified by
the same transcript — "the oracle is M" for every oracle with at most H₀ heads.

**Queries.**  The d single-token queries [e₁] … [e_d] give v = Σ_h v_h.  Then, at the design
points λ of :func:`~exactattn.learners.design.moment_curve.points`, the families
[(x(λ) + u(λ)) × m, x(λ)], m = 1 … S.  With v known, K = v·(x + u) = G(∞) and G(0) = v·x are
known, so G − K = Σ_h c_h/(1 + m z_h) has 2n unknowns for n poles: two such functions with
≤ H₀ poles each differ by a numerator of degree ≤ 2H₀ − 1 over positive denominators, so
G(0) and S = 2H₀ − 1 samples fix the family (:mod:`.limit_interpolation`).  When H is told
beside H₀, S = H + H₀ − 1 (≥ 2H − 1, and Theorem A's L − 1).

**Scores are polynomial curves.**  In homogeneous coordinates λ = p/q,
u = q^{d−1}(λ^i)_{i<d}, x = q^{d(d−1)}(λ^{dj})_{j<d}, so head h's pole has the score
q^{d²−1}·p_h(λ) with p_h(λ) = Σ_ij (W_h)_ij λ^{i+dj}, and its residue is
c_h = −v_h·u = −q^{d−1} Σ_i (v_h)_i λ^i.  A family shows all H heads as H distinct poles
unless a head is invisible there (v_h·u(λ) = 0: at most d − 1 = γ points per head) or two
heads collide (p_a(λ) = p_b(λ): at most d² − 1 = β points per pair) — at most
Hγ + C(H, 2)β families, each showing fewer than H poles; H is the largest pole count seen and
those families are left out.  On the *good* families the elementary symmetric functions
e_j(p_1(λ), …, p_H(λ)) are polynomials of degree ≤ j(d² − 1) in λ, so H(d² − 1) + 1 good
families interpolate them; Π_h (s − p_h(λ)) = Σ_j (−1)^j e_j(λ) s^{H−j} is then factored over
Q[λ, s] (python-flint's fmpq_mpoly), each linear factor s − p_h(λ) gives W_h (the coefficient
of λ^{i+dj} is (W_h)_ij), the residue at score p_h(λ) in each good family gives v_h·u(λ), and
d good families give v_h (Vandermonde in λ).

**Stopping rule, certificate.**  Families are asked until both (a) the interpolation has
H(d² − 1) + 1 good families and (b) Theorem A's n = (L − 1)(d² − 1) + d families with
L = H + H₀ are asked; the count is a function of the oracle alone.  The recovered M must
reproduce every answer exactly in Q(t); then the transcript *is* Theorem A's design
(S ≥ L − 1 samples per family, n families), so every oracle with ≤ H₀ heads (real
parameters) that gives these answers is M — no probability, no genericity theorem, no
search — and its ``design`` certificate is written by ``--certificate``.  An oracle outside
the class ends in a named failure: a family not of the form (``not-attention``), score
curves that do not factor into linear polynomials of degree ≤ d² − 1 (``not-attention``), a
model that does not reproduce the answers (``certification-failed``).  If the recovery at
the first stop fails (possible only when every family asked so far hides a head), families
are asked up to the worst case :func:`worst_case_families`, where the largest pole count is
H and enough families are good, and the recovery is tried once more.

The modular images of the answers (:class:`~exactattn.learners.p2.engines.ModularEngine`)
take their evaluation point τ from one fixed sequence (:data:`TAU_SEQUENCE`): the run is a
function of the oracle's answers, and every image is checked exactly in Q(t).
"""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb, lcm

from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx

from ...arith import get_backend
from ...arith.expfield import ExpElement, poly
from ...arith.modular import BadReduction
from ...errors import LearningFailure, NotAttention
from ...models.attention import AttentionHead, MultiHeadAttention
from ..design import moment_curve as mc
from ..design.certify import Certification
from ..result import LearnResult
from .economy import _engine, _with_prime_sizes, certify_run
from .limit_interpolation import solve_family_with_limit

__all__ = ["run_design", "family_samples", "good_families_needed", "worst_case_families",
           "design_learner_count", "generic_count", "read_family", "read_with_limit",
           "family_element", "score_curves", "residue_vectors", "elementary", "interpolate",
           "recover", "statement", "TAU_SEQUENCE"]

#: the seed of the fixed sequence from which the modular images take τ (not a draw: every
#: run takes the same τ at each prime size; a τ that fails moves to the next size)
TAU_SEQUENCE = 0


# ---------------------------------------------------------------------- counts
def family_samples(H0: int, H: int | None = None) -> int:
    """Samples per family: 2H₀ − 1 (H unknown: v known fixes a type-(H₀, H₀) family), or
    H + H₀ − 1 when H is told (Theorem A's L − 1, ≥ 2H − 1)."""
    return 2 * H0 - 1 if H is None else H + H0 - 1


def good_families_needed(d: int, H: int) -> int:
    """H(d² − 1) + 1 good families interpolate e_H, of degree ≤ H(d² − 1) in λ."""
    return H * mc.beta(d) + 1


def worst_case_families(d: int, H0: int) -> int:
    """A number of families after which, for every oracle with H ≤ H₀ canonical heads, the
    largest pole count is H and H(d² − 1) + 1 families are good (at most Hγ + C(H, 2)β are
    not), and Theorem A's count at L = 2H₀ is reached."""
    g, b = mc.gamma(d), mc.beta(d)
    return max([mc.families_needed(d, H0, H0)] +
               [H * g + comb(H, 2) * b + H * b + 1 for H in range(H0 + 1)])


def design_learner_count(d: int, H: int, H0: int, told: bool = False) -> int:
    """Queries of a run whose first n families hold at least H(d² − 1) + 1 good ones (every
    one-head model; every model off finitely many algebraic conditions):
    d + S·max(n, H(d² − 1) + 1) with n = (H + H₀ − 1)(d² − 1) + d — since n ≥ H(d² − 1) + 1
    always, d + S·n — with S = 2H₀ − 1 (H unknown) or H + H₀ − 1 (H told)."""
    return generic_count(d, H, H0, family_samples(H0, H if told else None))


def generic_count(d: int, H: int, H0: int, samples: int) -> int:
    """d + S·max(n, H(d² − 1) + 1) for S samples per family (:func:`design_learner_count`)."""
    return d + samples * max(mc.families_needed(d, H, H0), good_families_needed(d, H))


# ---------------------------------------------------------------------- one family
def _homogeneous(lam, d):
    """(q^{d²−1}, q^{d−1}) for λ = p/q: the factors of the scores and residues."""
    q = Fraction(lam).denominator
    return q ** (d * d - 1), q ** (d - 1)


def read_with_limit(u, x, v, answers, max_poles: int) -> list:
    """[(score, residue)] of the family [(x + u) × m, x], m = 1 … S, sorted by score: its poles
    read from G(0) = v·x and the S samples with the limit K = v·(x + u) known (S ≥ 2n − 1 for
    n ≤ ``max_poles`` poles; modular images up the prime ladder), checked exactly against every
    sample in Q(t) (:func:`family_element`); residues c_h = −v_h·u."""
    K = sum((a * (b + c) for a, b, c in zip(v, x, u)), Fraction(0))
    G0 = sum((a * b for a, b in zip(v, x)), Fraction(0))

    def step(bits):
        eng = _engine(answers, bits, random.Random(TAU_SEQUENCE))
        ys = [eng.constant(G0)] + [eng.sample(y) for y in answers]
        got = solve_family_with_limit(eng.field, eng.constant(K), ys, max_poles)
        poles = [(eng.score(z), eng.scalar(c)) for z, c in got]
        L = lcm(eng.L, *(s.denominator for s, _ in poles))
        for m, y in enumerate(answers, 1):
            if family_element(K, poles, m, L) != y:
                raise BadReduction("the family's interpolant does not reproduce its samples")
        return poles

    return sorted(_with_prime_sizes(step))


def read_family(lam, d: int, v, answers, max_poles: int):
    """[(p_h(λ), v_h·(λ^i)_i)] of one design family, sorted by score
    (:func:`read_with_limit`), scores divided by q^{d²−1} and residues by −q^{d−1}
    (λ = p/q), so that they are the affine curves' values."""
    qs, qr = _homogeneous(lam, d)
    poles = read_with_limit(mc.u_of(lam, d), mc.x_of(lam, d), v, answers, max_poles)
    return sorted((s / qs, -c / qr) for s, c in poles)


def family_element(K, poles, m: int, L: int) -> ExpElement:
    """K + Σ_h c_h/(1 + m t^{L s_h}) in Q(t), t = e^{1/L}, as one fraction over
    Π_h (t^{−low} + m t^{k_h − low}) (k_h = L s_h, low = min(0, k_h)), left unreduced: an
    equality test cross-multiplies, so no polynomial gcd is computed."""
    ks = [int(sc * L) for sc, _ in poles]
    low = min([0] + ks)
    fs = []
    for k in ks:
        terms = {-low: Fraction(1)}
        terms[k - low] = terms.get(k - low, Fraction(0)) + m
        fs.append(poly({e: _q(c) for e, c in terms.items()}))
    den = poly({0: fmpq(1)})
    for f in fs:
        den = den * f
    num = den * _q(K)
    for h, (_, c) in enumerate(poles):
        rest = poly({-low: _q(c)})
        for g, f in enumerate(fs):
            if g != h:
                rest = rest * f
        num = num + rest
    return ExpElement(num, den, L)


# ---------------------------------------------------------------------- curves
def elementary(values) -> list:
    """[e_1, …, e_H] of the values (e_j the j-th elementary symmetric function)."""
    e = [Fraction(1)]
    for s in values:
        e = [Fraction(1)] + [e[j] + s * e[j - 1] for j in range(1, len(e))] + [s * e[-1]]
    return e[1:]


def interpolate(points, values) -> list:
    """The coefficients (low → high) of the polynomial of degree < len(points) through
    (λ_k, values_k), exactly (Vandermonde system over Q, python-flint)."""
    n = len(points)
    A = fmpq_mat(n, n, [_q(Fraction(lam) ** i) for lam in points for i in range(n)])
    b = fmpq_mat(n, 1, [_q(y) for y in values])
    sol = A.solve(b)
    return [Fraction(int(sol[i, 0].p), int(sol[i, 0].q)) for i in range(n)]


def _q(x):
    x = Fraction(x)
    return fmpq(x.numerator, x.denominator)


def score_curves(good, d: int, H: int) -> list:
    """The H score polynomials p_h (coefficient lists of length d², low → high) from the good
    families [(λ, [(score, residue)] with H distinct scores)], at least H(d² − 1) + 1 of them:
    e_j interpolated at the first j(d² − 1) + 1 and checked at every other one,
    Π_h (s − p_h(λ)) factored over Q[λ, s].  NotAttention when the
    product is not H distinct linear factors in s of degree ≤ d² − 1 in λ."""
    if H == 0:
        return []
    b = mc.beta(d)
    lams = [lam for lam, _ in good]
    sym = [elementary([s for s, _ in poles]) for _, poles in good]
    ctx = fmpq_mpoly_ctx.get(("s", "l"), "lex")
    terms = {(H, 0): fmpq(1)}
    for j in range(1, H + 1):
        values = [e[j - 1] for e in sym]
        coeffs = interpolate(lams[:j * b + 1], values[:j * b + 1])
        if any(_value(coeffs, Fraction(lam)) != y for lam, y in zip(lams, values)):
            raise NotAttention(f"the {j}-th elementary symmetric function of the families' "
                               f"scores is not one polynomial of degree ≤ {j * b} in λ at all "
                               f"{len(good)} families showing {H} poles: the scores are not "
                               f"those of {H} heads on the moment curve", j=j, heads=H)
        for k, c in enumerate(coeffs):
            if c:
                terms[(H - j, k)] = _q((-1) ** j * c)
    _, factors = ctx.from_dict(terms).factor()
    curves = []
    for g, mult in factors:
        mons = dict(zip(g.monoms(), g.coeffs()))
        lead = mons.pop((1, 0), None)
        if mult != 1 or lead is None or any(s != 0 for s, _ in mons) or \
                any(k > b for _, k in mons):
            raise NotAttention(f"Π_h (s − p_h(λ)) of the families' scores has a factor "
                               f"{g} (multiplicity {mult}) that is not s − p(λ) with p of "
                               f"degree ≤ {b}: not {H} heads on the moment curve", factor=str(g))
        p = [Fraction(0)] * (b + 1)
        for (_, k), c in mons.items():
            p[k] = -Fraction(int(c.p), int(c.q)) / Fraction(int(lead.p), int(lead.q))
        curves.append(p)
    return sorted(curves)       # H simple factors of degree 1 in s: one per head


def _value(p, lam):
    acc = Fraction(0)
    for c in reversed(p):
        acc = acc * lam + c
    return acc


def residue_vectors(curves, good, d: int) -> list:
    """v_h for each score curve p_h: in each good family the pole at score p_h(λ) has the
    residue v_h·(λ^i)_i; d good families give v_h (Vandermonde in λ).  NotAttention when a
    curve's score is missing from a good family."""
    use = good[:d]
    out = []
    for h, p in enumerate(curves):
        vals = []
        for lam, poles in use:
            by_score = dict(poles)
            s = _value(p, Fraction(lam))
            if s not in by_score:
                raise NotAttention(f"the score curve of head {h + 1} misses the poles of the "
                                   f"family at λ = {lam}", head=h + 1, point=str(lam))
            vals.append(by_score[s])
        out.append(interpolate([lam for lam, _ in use], vals))
    return out


def recover(families, d: int) -> MultiHeadAttention:
    """The canonical model from the design families [(λ, poles)] (module docstring): H the
    largest pole count, the good families those with H poles."""
    H = max((len(poles) for _, poles in families), default=0)
    good = [(lam, poles) for lam, poles in families if len(poles) == H]
    curves = score_curves(good, d, H)
    vs = residue_vectors(curves, good, d)
    heads = [AttentionHead([[p[i + d * j] for j in range(d)] for i in range(d)], v)
             for p, v in zip(curves, vs)]
    return MultiHeadAttention(heads, dim=d).canonical()


# ---------------------------------------------------------------------- the run
def _stop(d, H0, families) -> bool:
    H = max((len(p) for _, p in families), default=0)
    good = sum(1 for _, p in families if len(p) == H)
    return good >= good_families_needed(d, H) and \
        len(families) >= mc.families_needed(d, H, H0)


def run_design(orc, d: int, H0: int, heads=None, progress=None):
    """One run of the design learner (module docstring) on an exact oracle ``orc`` (an
    :class:`~exactattn.Oracle` that records its transcript): ``H0`` the head bound, ``heads``
    the number of heads when told.  Returns a :class:`LearnResult` whose ``uniqueness`` is
    the :class:`~exactattn.learners.design.certify.Certification` of its own transcript."""
    first = len(orc.transcript)
    S = family_samples(H0, heads)
    max_poles = H0 if heads is None else heads
    limit = worst_case_families(d, H0)
    lams = mc.points(limit)
    expected = generic_count(d, max_poles, H0, S)
    progress = progress or (lambda *a: None)
    units = orc.ask_many(mc.unit_queries(d))
    if not all(y.is_rational() for y in units):
        raise NotAttention("the answer to a single-token query [e_i] is not a rational "
                           "number: not attention")
    v = [y.as_rational() for y in units]
    families, model, failure, be = [], None, None, get_backend("exact")
    while model is None:
        lam = lams[len(families)]
        answers = orc.ask_many(mc.family_queries(lam, d, S))
        families.append((lam, read_family(lam, d, v, answers, max_poles)))
        progress("queries", len(orc.transcript) - first, expected)
        if not _stop(d, H0, families):
            continue
        if failure is not None and len(families) < limit:
            continue                                    # the retry waits for the worst case
        try:
            model = recover(families, d)
            transcript, cert = certify_run(orc, first, model, be, progress, True)
        except LearningFailure as e:
            model = None
            if failure is not None or len(families) >= limit:
                raise
            failure = e
    H = len(model.heads)
    c = Certification(model=model, dim=d, heads=H, heads_bound=H0, holds=True,
                      queries=len(transcript), max_length=S + 1, families=len(families),
                      points=[lam for lam, _ in families], transcript=transcript,
                      family_samples=S)
    result = LearnResult(
        algorithm="multi-head-design", dim=d, backend="exact",
        heads=[(h.W, h.v) for h in model.heads], queries=len(transcript), max_length=S + 1,
        expected_queries=generic_count(d, H, H0, S),
        expected_max_length=S + 1, transcript=transcript, certificate=cert,
        extra={"H0": H0, "H_star": H, "v": v, "families": len(families), "samples": S,
               "good": sum(1 for _, p in families if len(p) == H),
               "retried": failure is not None})
    result.uniqueness, result.unique_queries = c, 0
    return result


def statement(result, H0: int) -> str:
    """Theorem A's statement for a design run (docs/design.md §12): the transcript is the
    design, so the oracle is M if it has at most H₀ heads."""
    c = result.uniqueness
    return (f"{c.proves} — no random draw: the {result.queries} queries are Theorem A's "
            f"moment-curve design ({c.families} families of {c.samples} samples) and the "
            f"recovered model reproduces every answer exactly in Q(t)")
