"""The P2 run (P2; docs/design.md §4.3): canonical heads from exactly 4H₀d² − 2H₀ + 1 value
queries of length ≤ 2H₀ + 1, by copy-count rational interpolation and matching families.

Steps of one run (:func:`run_p2`; the front door is
:func:`exactattn.learners.multi_head.learn_multi_head`):

1. draw random bases U, X (:func:`draw_bases`; exact: integer box {−b…b}^d, default
   b = 1000; mp/float: Gaussian entries of variance 1/d), refuse singular ones;
2. ask the whole non-adaptive schedule (:mod:`.schedule`);
3. interpolate each family in the engine's field (exact: F_p images, :mod:`.engines`):
   poles z_h → scores u_iᵀW_h x_j, residues → c_h = −v_h·u_i, constants → v;
4. match heads across families: I(u_1+u_i, x_1) has poles z_a(u_1)·z_b(u_i) with residues
   c_a + c_b; I(u_i, x_1+x_j) has poles z(u_i, x_1)·z(u_i, x_j) with the shared residue;
5. W_h = U⁻¹ S_h X⁻ᵀ, v_h = −U⁻¹ c_h;
6. certify: on the exact backend the recovered model must reproduce every transcript answer
   exactly in Q(t) (a modular mishap retries with a larger prime — no new queries); on mp /
   float the error bar of :mod:`.inexact`.

Every detected failure raises a named :class:`~exactattn.errors.LearningFailure`.
"""

from __future__ import annotations

import operator
import random
from dataclasses import replace

from ...arith.modular import BadReduction
from ...errors import (CertificationFailed, LearningFailure, NotAttention, SingularBasis,
                       SingularSystem)
from ...models.attention import AttentionHead, MultiHeadAttention
from ..result import LearnResult
from .cost import (check_budget, estimate_multi_head, estimate_validation, expanded_terms,
                   heads_shown, validation_floor)
from .engines import (PRIME_BITS, ExponentsTooLarge, exponent_window, make_engine,
                      prime_sizes, repeated_structural)
from .inexact import run_inexact
from .interpolation import fit_rational, poles_and_residues
from .matching import Close, match, pole_counts
from .matching import certify as _certify   # a module name benchmarks/bench_core.py times
from .schedule import published_count, published_max_length

__all__ = ["run_p2", "DEFAULT_BOX", "draw_bases", "random_bases", "head_bound", "check_bases"]

#: the integer box {−box…box} of the exact backend's random query vectors
DEFAULT_BOX = 1000


# ---------------------------------------------------------------------- set-up
def head_bound(heads, heads_bound) -> int:
    """H₀ of the schedule: ``heads`` when H is known — a bound given beside it is not used
    (the count 4Hd² − 2H + 1 of a known H is never larger), and the result says so in a
    note —, else ``heads_bound``."""
    for name, val in (("heads", heads), ("heads_bound", heads_bound)):
        if val is not None and (not isinstance(val, int) or isinstance(val, bool) or val < 1):
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    if heads is None and heads_bound is None:
        raise ValueError("give heads=H (the number of heads) or heads_bound=H0 (an upper bound)")
    if heads is not None and heads_bound is not None and heads > heads_bound:
        raise ValueError(f"heads={heads} exceeds heads_bound={heads_bound}")
    return heads if heads is not None else heads_bound


def random_bases(rng, d, box, be):
    """U, X with rows u_i, x_j: integer box {−box…box}^d (exact) or Gaussian with variance
    1/d (mp/float), which keeps scores uᵀWx of order ‖W‖_F/d: a pole z = e^score far from
    1 sits far from the samples m = 0…2H₀ and makes the real interpolation ill-conditioned."""
    if be.name == "exact":
        draw = lambda: [rng.randint(-box, box) for _ in range(d)]  # noqa: E731
    else:
        sd = 1.0 / d ** 0.5
        draw = lambda: [be.scalar(rng.gauss(0.0, sd)) for _ in range(d)]  # noqa: E731
    return [draw() for _ in range(d)], [draw() for _ in range(d)]


def draw_bases(seed, d: int, box: int = DEFAULT_BOX):
    """The bases U, X that ``learn_multi_head(..., seed=seed, box=box)`` draws first on the
    exact backend (its first attempt): random.Random(seed), U's rows then X's, entries
    randint(−box, box).  Monte Carlo certificates re-draw them from the seed."""
    from ...arith import get_backend
    return random_bases(random.Random(seed), d, box, get_backend("exact"))


def check_bases(be, U, X):
    for name, M in (("U", U), ("X", X)):
        try:
            be.inv(M)
        except SingularSystem:
            raise SingularBasis(f"the random basis {name} is singular (det {name} = 0); "
                                f"resample=True draws new vectors", basis=name,
                                rows=[[str(a) for a in r] for r in M]) from None


# ---------------------------------------------------------------------- recovery
def _values_at(be, v, schedule, fams):
    """[v·x for each family's x]: the m = 0 samples G(0) = v·x of the families not ending in
    x₁ (P2, copy-count family; docs/design.md §4.3 step 3).  On the exact backend each x is
    a row x_j of X or a sum x_1 + x_j, so the samples are sums of the d entries of v·Xᵀ, one
    exact matrix product (a product per family was about 8% of a (16, 8) recovery); on mp /
    float each v·x is summed as it comes."""
    if not fams:
        return []
    if be.name == "exact":
        vX = be.matmul([v], be.transpose(schedule.X))[0]
        return [sum((vX[k] for k in fam.x_key[1:]), vX[fam.x_key[0]]) for fam in fams]
    return [sum((a * b for a, b in zip(v, fam.x)), be.scalar(0)) for fam in fams]


def _recover(schedule, answers, engine, be, H0, close, heads=None, in_field=False):
    """Steps 3–5 of the module docstring; returns the canonical heads as (W, v) lists.
    ``heads`` = H (known) makes every family try type H first (the inexact runs).

    ``in_field`` (the exact engine): match the heads in F_p, poles multiplying where scores
    add, and lift to Q only what the model needs — the poles of the d² families I(u_i, x_j)
    (a discrete log each), the residues of column 1 and the constants of I(u_i, x_1) —
    instead of every family's poles, residues and constant.  Equality in Q implies equality
    in F_p, so a matching that succeeds in Q makes the same choices in F_p; a coincidence
    modulo p can only make one fail (or a model fail certification), and the caller then
    runs with ``in_field=False`` to name the failure (:func:`_attempt`)."""
    d = schedule.d
    fams = schedule.families
    per_fam = 2 * H0
    q0 = answers[0]
    if be.name == "exact":
        if not q0.is_rational():
            raise NotAttention("F([x1]) of a single token is not a rational number: not attention")
        q0 = q0.as_rational()
    solved, poles, fits, where = {}, {}, {}, {}
    # each family's matching families, with the other family each pairs it with
    partners = {}
    for mf in fams:
        if mf.matches:
            a, b = mf.matches
            partners.setdefault(a, []).append(((mf.u_key, mf.x_key), b))
            partners.setdefault(b, []).append(((mf.u_key, mf.x_key), a))
    hint = {} if heads is None else {"n": heads}
    field = engine.field

    def fit_of(idx, fam, g0):
        key = (fam.u_key, fam.x_key)
        if key not in fits:
            ys = [engine.constant(g0)] + engine.sample_many(
                answers[1 + idx * per_fam: 1 + (idx + 1) * per_fam])
            fits[key] = fit_rational(field, list(range(len(ys))), ys, H0, hint.get("n"))
        return fits[key]

    def solve(idx, fam, g0):
        fit = fit_of(idx, fam, g0)
        cands = None
        if field.exact:
            cands = _candidates(fam, poles) or \
                _paired(field, fam, fit, partners, where, poles, fit_of)
        K, heads = poles_and_residues(field, fit, cands)
        fits.pop((fam.u_key, fam.x_key))
        hint.setdefault("n", len(heads))
        poles[(fam.u_key, fam.x_key)] = [z for z, _ in heads]
        solved[(fam.u_key, fam.x_key)] = (K, heads) if in_field else (
            engine.scalar(K), [(engine.score(z), engine.scalar(c)) for z, c in heads])

    col1 = [(i, f) for i, f in enumerate(fams) if f.ends_in_x1]
    for idx, fam in col1:
        where[(fam.u_key, fam.x_key)] = (idx, fam, q0)
    for idx, fam in col1:
        solve(idx, fam, q0)
    # v·u_i = K(u_i, x1) − v·x1, so v is known (docs/design.md §4.3 step 3)
    lift = engine.scalar if in_field else (lambda K: K)
    vu = [[lift(solved[((i,), (0,))][0]) - q0] for i in range(d)]
    bases = be.basis_solver(schedule.U, schedule.X)
    v = [r[0] for r in bases.left(vu)]
    rest = [(idx, fam) for idx, fam in enumerate(fams) if not fam.ends_in_x1]
    for (idx, fam), g0 in zip(rest, _values_at(be, v, schedule, [fam for _, fam in rest])):
        where[(fam.u_key, fam.x_key)] = (idx, fam, g0)
    for idx, fam in rest:
        solve(*where[(fam.u_key, fam.x_key)])

    ref_key = ((0,), (0,))
    H_star = pole_counts(fams, solved, ref_key)
    S, C = _matched(d, H_star, solved, close, engine if in_field else None)
    heads = []
    for a in range(H_star):
        W = bases.both(S[a])                                  # U W Xᵀ = S_a
        v_a = [-r[0] for r in bases.left([[c] for c in C[a]])]
        heads.append((W, v_a))
    total = [sum((h[1][i] for h in heads), be.scalar(0)) for i in range(d)]
    if not all(close(p, q) for p, q in zip(total, v)):
        raise NotAttention("the recovered heads' v_h do not sum to v = Σ v_h read from the "
                           "constants: not attention with these heads",
                           v=[str(x) for x in v], sum_v=[str(x) for x in total])
    return heads, v


def _matched(d, H_star, solved, close, engine=None):
    """S[a][i][j] = u_iᵀW_a x_j and C[a][i] = −v_a·u_i of the reference heads a, from the
    solved families (P2, matching families; docs/design.md §4.3 step 4): column 1's rows i
    through I(u_1 + u_i, x_1), then each row's columns j through I(u_i, x_1 + x_j).  With
    ``engine`` the families are in F_p (poles z = e^s, which multiply where scores add) and
    only the chosen poles and column 1's residues are lifted to Q."""
    join = operator.mul if engine else operator.add
    score = engine.score if engine else (lambda s: s)
    scalar = engine.scalar if engine else (lambda c: c)
    ref = solved[((0,), (0,))][1]
    # column 1: rows i via I(u_1 + u_i, x_1)
    col = [ref] + [match(ref, solved[((i,), (0,))][1], solved[((0, i), (0,))][1], close,
                         False, f"I(u{i + 1}, x1)", join) for i in range(1, d)]
    S = [[[None] * d for _ in range(d)] for _ in range(H_star)]
    C = [[None] * d for _ in range(H_star)]
    for i in range(d):
        for a, (s, c) in enumerate(col[i]):
            S[a][i][0], C[a][i] = score(s), scalar(c)
    for j in range(1, d):
        for i in range(d):
            got = match(col[i], solved[((i,), (j,))][1], solved[((i,), (0, j))][1], close,
                        True, f"I(u{i + 1}, x{j + 1})", join)
            for a, (s, _) in enumerate(got):
                S[a][i][j] = score(s)
    return S, C


def _candidates(fam, poles):
    """A matching family's likely roots of Q, −1/(z_a z_b) over the poles z_a, z_b of the two
    families it pairs (its poles are such products, docs/design.md §4.3), when both are
    solved; None otherwise.  Only where to look first: the roots are found either way."""
    if fam.matches is None or any(key not in poles for key in fam.matches):
        return None
    first, second = (poles[key] for key in fam.matches)
    if not first or not second:
        return None
    # −1/(z_a z_b) = (−1/z_a)(1/z_b): 2H inversions and H² products, not H² inversions
    neg_inv, inv = [-1 / za for za in first], [1 / zb for zb in second]
    return [a * b for a in neg_inv for b in inv]


def _paired(field, fam, fit, partners, where, poles, fit_of):
    """A family's likely roots of Q without a root finder (exact fields; docs/design.md
    §4.3).  A matching family pairing it with an already solved family R has the poles
    z_a w_a, head by head (z_a R's poles, w_a its own): so for each z_a,
    gcd(Q(z_a m), Q_sum(m)) is generically the one factor 1 + m z_a w_a, whose root r gives
    Q's root r·z_a (:meth:`~exactattn.arith.fields.PrimeField.paired_roots`).  Needs the
    matching family's fit (taken now and kept for it); None when no such family is ready,
    its fit fails or a gcd is not linear.  Only where to look first:
    :func:`~.interpolation.poles_and_residues` keeps the roots only when all n are roots of
    Q.  Only I(u_1, x_1) is then left to the root finder."""
    if fit.n < 3 or not hasattr(field, "paired_roots"):
        return None                         # n ≤ 2: the quadratic formula is cheaper
    for mf_key, other in partners.get((fam.u_key, fam.x_key), ()):
        z = poles.get(other)
        if z and mf_key in where:
            try:
                fit_sum = fit_of(*where[mf_key])
            except (BadReduction, LearningFailure):   # named when that family is solved
                return None
            return field.paired_roots(fit.Q, fit_sum.Q, z)
    return None


def run_p2(orc, schedule, be, rng, certify, progress, inexact=None, force=False,
           validation=0):
    """Ask the schedule, recover, certify (steps 2–6 of the module docstring).  The queries
    are generated a family at a time (the schedule is lazy) and asked in batches
    (:meth:`~exactattn.Oracle.ask_many`)."""
    d, H0, U, X = schedule.d, schedule.H0, schedule.U, schedule.X
    first = len(orc.transcript)
    total, longest, answers = schedule.count, 0, []
    for batch in schedule.batches():
        answers.extend(orc.ask_many(batch))
        longest = max(longest, max(map(len, batch)))
        progress("queries", len(answers), total)
        if len(answers) == 2 and be.name == "exact":
            _check_observed(answers[1], d, H0, force, validation)
    transcript = orc.transcript[first:] if orc.record else None
    if inexact is not None:
        return run_inexact(orc, schedule, answers, transcript, be, recover=_recover, close=Close,
                           result=lambda **kw: LearnResult(
                               algorithm="multi-head", dim=d, backend=be.name,
                               max_length=longest, queries=0,
                               expected_queries=published_count(d, H0),
                               expected_max_length=published_max_length(H0),
                               transcript=transcript or [], **kw), **inexact)
    if certify and transcript is None:
        raise ValueError("certification needs the oracle's transcript (record=True)")
    close = Close(be)
    engine_rng = random.Random(rng.getrandbits(64))
    model, v, engine, cert = _modular(schedule, answers, be, engine_rng, close, certify,
                                      transcript, progress)
    return LearnResult(
        algorithm="multi-head", dim=d, backend=be.name,
        heads=[(h.W, h.v) for h in model.heads], queries=0, max_length=longest,
        expected_queries=published_count(d, H0), expected_max_length=published_max_length(H0),
        transcript=transcript or [], certificate=cert if be.name == "exact" else None,
        extra={"U": U, "X": X, "H0": H0, "v": v, "engine": engine.describe(),
               "certification": cert})


def _modular(schedule, answers, be, rng, close, certify, transcript, progress):
    """Steps 3–6 on the exact backend, up the ladder of prime sizes (docs/design.md §2 fast
    exact): every failure of a run in F_p — a BadReduction or any LearningFailure the F_p
    computation raises (a pivot or pole difference vanishing mod p, a discrete log outside
    its window, a wrong reconstruction caught by the v-sum check) — and every failed exact
    certification is retried at the next size on the same answers (no new queries).  A
    failure is named when every size has failed, or when two sizes in a row (the second
    verified) fail with the same structural reason (:data:`~.engines.STRUCTURAL`: read from exact
    exponents and zero tests, not from the size of a reconstructed rational, so a larger
    prime changes nothing — only an unlucky prime, which the second one rules out); it
    carries the sizes tried.  The first size trusts the images' cache of exponent sets
    (cheaper) when a later size remains; the others verify it, so a failure is always named
    from a verified run."""
    H0 = schedule.H0
    window = exponent_window(answers)
    sizes = prime_sizes(answers, window=window)
    if not sizes:
        raise ExponentsTooLarge(
            f"the answers' exponent span (about 2^{window[1].bit_length()}) is beyond the "
            f"largest prime of the modular ladder ({PRIME_BITS[-1]} bits)",
            largest_prime_bits=PRIME_BITS[-1])
    tried, last = [], None
    for n, bits in enumerate(sizes):
        progress("recovery", 0, None)
        try:
            engine = make_engine(be, answers, rng, bits, 2 * H0 + 1,
                                 verify=n > 0 or n == len(sizes) - 1 or not certify,
                                 window=window)
            model, v, cert = _attempt(schedule, answers, engine, be, H0, close,
                                      certify and (lambda m: _certify(m, transcript, be,
                                                                      progress)))
        except (BadReduction, LearningFailure) as e:
            tried.append({"prime_bits": bits, "outcome": getattr(e, "reason", "bad-reduction"),
                          "message": str(e)})
            last = e
            if repeated_structural(tried):
                break
            continue
        if certify:
            if not cert["certified"]:
                tried.append({"prime_bits": bits, "outcome": "certification-failed",
                              "first_mismatch": cert["first_mismatch"]})
                last = CertificationFailed(
                    "the recovered model does not reproduce the transcript exactly at any "
                    f"prime size: the oracle is not attention with ≤ {H0} heads on these "
                    "queries", **cert)
                continue
            cert.update(engine.describe())
        tried.append({"prime_bits": bits, "outcome": "ok"})
        if cert is not None:
            cert["prime_sizes_tried"] = [t["prime_bits"] for t in tried]
            cert["modular_attempts"] = tried
        return model, v, engine, cert
    if not isinstance(last, LearningFailure):
        last = CertificationFailed(f"the modular reduction failed at every prime size "
                                   f"({', '.join(str(b) for b in sizes)} bits): {last}")
    last.details["prime_sizes_tried"] = tried
    raise last


def _attempt(schedule, answers, engine, be, H0, close, certify):
    """Steps 3–6 at one prime: (model, v, certificate or None).  At a word-size prime, when
    the model is to be certified, the heads are first matched in F_p (:func:`_recover`
    ``in_field``); when that fails, or its model fails certification, the run that lifts
    every family decides (it raises the failure it meets, or returns its model and
    certificate), so a failure is named exactly as without the F_p matching.  Uncertified
    runs lift every family: the lifts of the matching families are then the only check that
    their poles are powers of τ in the window.  ``certify``: model → certificate, or a false
    value."""
    previous = None
    for in_field in (True, False) if certify and engine.field.p < 1 << 63 else (False,):
        try:
            heads, v = _recover(schedule, answers, engine, be, H0, close, in_field=in_field)
        except (BadReduction, LearningFailure):
            if in_field:
                continue
            raise
        model = MultiHeadAttention([AttentionHead(W, vh) for W, vh in heads]).canonical()
        if previous is not None and model == previous[0]:
            return previous                 # the same model: its certificate stands
        cert = certify(model) if certify else None
        previous = (model, v, cert)
        if cert is None or cert["certified"]:
            return previous
    return previous


def _check_observed(answer, d, H0, force, validation=0):
    """The cost estimate redone from a real copy-count answer, before the rest of the
    schedule is asked: a lazy answer (:func:`~.cost.expanded_terms` 0: kept as its heads'
    data, never expanded by the run) confirms the lazy estimate made up front; an expanded
    one (a black box's) prices the schedule at its terms and exponents, and the cheapest
    shapes of the ``validation`` queries at the head count it shows
    (:func:`~.cost.heads_shown`).  Nothing is expanded here."""
    from ...arith.expfield import ExpElement
    terms = expanded_terms(answer) if isinstance(answer, ExpElement) else 0
    if not terms:
        return
    bits = max(1, answer.exponent_span().bit_length())
    est = estimate_multi_head(d, H0, "exact", bits)
    check_budget(replace(est, terms_per_answer=terms,
                         bytes=est.bytes // est.terms_per_answer * terms,
                         seconds=est.seconds / est.terms_per_answer * terms), force)
    if validation:
        check_budget(estimate_validation(d, H0, min(H0, heads_shown(answer)),
                                         validation_floor(validation), "exact", bits,
                                         floor=True), force)
