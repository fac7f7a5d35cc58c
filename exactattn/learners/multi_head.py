"""Multi-head learner (P2; docs/design.md §4.3): canonical heads from exactly 4H₀d² − 2H₀ + 1 value
queries of length ≤ 2H₀ + 1, by copy-count rational interpolation and matching families.

Steps (``learn_multi_head``):

1. draw random bases U, X (exact: integer box {−b…b}^d, default b = 1000; mp/float: Gaussian
   entries of variance 1/d), refuse singular ones;
2. ask the whole non-adaptive schedule (:mod:`.schedule`);
3. interpolate each family in the engine's field (exact: F_p images, :mod:`.engines`):
   poles z_h → scores u_iᵀW_h x_j, residues → c_h = −v_h·u_i, constants → v;
4. match heads across families: I(u_1+u_i, x_1) has poles z_a(u_1)·z_b(u_i) with residues
   c_a + c_b; I(u_i, x_1+x_j) has poles z(u_i, x_1)·z(u_i, x_j) with the shared residue;
5. W_h = U⁻¹ S_h X⁻ᵀ, v_h = −U⁻¹ c_h;
6. certify: on the exact backend the recovered model must reproduce every transcript answer
   exactly in Q(t) (a modular mishap retries with a larger prime — no new queries); on mp /
   float the largest residual must be within the backend's tolerance.

Every detected failure raises a named :class:`~exactattn.errors.LearningFailure`;
``resample=True`` retries with fresh vectors and reports the extra queries.
"""

from __future__ import annotations

import random
import time

from ..arith.modular import BadReduction
from ..errors import (AmbiguousMatching, CertificationFailed, CollidingPoles, InvisibleHead,
                      LearningFailure, NotAttention, SingularBasis, SingularSystem)
from .interpolation import solve_family
from ..models.attention import AttentionHead, MultiHeadAttention
from ..oracles.oracle import as_oracle
from .engines import make_engine
from .result import LearnResult
from .schedule import Schedule, published_count, published_max_length

__all__ = ["learn_multi_head", "DEFAULT_BOX", "draw_bases"]

DEFAULT_BOX = 1000
_PRIME_BITS = (62, 127, 255, 511)


# ---------------------------------------------------------------------- set-up
def _head_bound(heads, heads_bound) -> int:
    for name, val in (("heads", heads), ("heads_bound", heads_bound)):
        if val is not None and (not isinstance(val, int) or isinstance(val, bool) or val < 1):
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    if heads is None and heads_bound is None:
        raise ValueError("give heads=H (the number of heads) or heads_bound=H0 (an upper bound)")
    if heads is not None and heads_bound is not None and heads > heads_bound:
        raise ValueError(f"heads={heads} exceeds heads_bound={heads_bound}")
    return heads if heads is not None else heads_bound


def _draw_bases(rng, d, box, be):
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
    from ..arith import get_backend
    return _draw_bases(random.Random(seed), d, box, get_backend("exact"))


def _check_bases(be, U, X):
    for name, M in (("U", U), ("X", X)):
        try:
            be.inv(M)
        except SingularSystem:
            raise SingularBasis(f"the random basis {name} is singular (det {name} = 0); "
                                f"resample=True draws new vectors", basis=name,
                                rows=[[str(a) for a in r] for r in M]) from None


# ---------------------------------------------------------------------- matching
class _Close:
    """Scalar equality: exact on the exact backend, a tolerance on mp / float."""

    def __init__(self, be):
        self.exact = be.name == "exact"
        if be.name == "mp":
            self.tol = be.ctx.mpf(10) ** (-(be.dps // 3))
        else:
            self.tol = 1e-5

    def __call__(self, a, b) -> bool:
        if self.exact:
            return a == b
        return abs(a - b) <= self.tol * (1 + abs(a) + abs(b))


def _match(ref, fam, sumfam, close, shared_u: bool, label):
    """For each reference head a = (s_a, c_a) the unique head b of ``fam`` such that the
    matching family ``sumfam`` has a head c with s_c = s_a + s_b and
    c_c = c_a + c_b (column 1, sum of u's) or c_c = c_b = c_a (shared u) (docs/design.md §4.3).

    The failure named does not depend on the order of the heads: a reference head with no
    candidate → NotAttention; otherwise one with several candidates, or two reference heads
    with the same candidate → AmbiguousMatching."""
    cands_of = []
    for s_a, c_a in ref:
        cands = []
        for b, (s_b, c_b) in enumerate(fam):
            if shared_u and not close(c_b, c_a):
                continue
            want_c = c_a if shared_u else c_a + c_b
            if any(close(s_c, s_a + s_b) and close(c_c, want_c) for s_c, c_c in sumfam):
                cands.append(b)
        cands_of.append(cands)
    for cls, what, bad in ((NotAttention, "no head", lambda n: n == 0),
                           (AmbiguousMatching, "several heads", lambda n: n > 1)):
        for (s_a, c_a), cands in zip(ref, cands_of):
            if bad(len(cands)):
                raise cls(f"matching {label}: {what} of the family fit a reference head "
                          f"(score {s_a}, residue {c_a})", family=label, candidates=len(cands))
    chosen = [cands[0] for cands in cands_of]
    if len(set(chosen)) != len(chosen):
        raise AmbiguousMatching(f"matching {label}: two reference heads matched the same head",
                                family=label)
    return [fam[b] for b in chosen]


def _pole_counts(families, solved, ref_key):
    """Every family must show as many poles as the reference I(u_1, x_1); otherwise name the
    failure: fewer poles at one x for a shared u = colliding poles; a different count
    for another u = a head invisible there (v_h·u = 0) or colliding at x_1."""
    H_star = len(solved[ref_key][1])
    by_u = {}
    for fam in families:
        n = len(solved[(fam.u_key, fam.x_key)][1])
        by_u.setdefault(fam.u_key, []).append((fam.x_key, n))
    for u_key, rows in by_u.items():
        counts = {n for _, n in rows}
        if len(counts) > 1:
            raise CollidingPoles(
                f"families sharing u{_k(u_key)} show different pole counts "
                f"{sorted(counts)}: two heads' poles collide at some x", u=_k(u_key),
                counts={_k(x): n for x, n in rows})
        n = counts.pop()
        if n != H_star:
            raise InvisibleHead(
                f"families with u{_k(u_key)} show {n} poles but I(u1, x1) shows {H_star}: "
                f"a head is invisible (v_h·u = 0) or two poles collide at x1", u=_k(u_key),
                poles=n, reference=H_star)
    return H_star


def _k(key) -> str:
    return str(key[0] + 1) if len(key) == 1 else f"1+{key[1] + 1}"


# ---------------------------------------------------------------------- recovery
def _recover(schedule, answers, engine, be, H0, close):
    """Steps 3–5 of the module docstring; returns the canonical heads as (W, v) lists."""
    d = schedule.d
    fams = schedule.families
    per_fam = 2 * H0
    q0 = answers[0]
    if be.name == "exact":
        if not q0.is_rational():
            raise NotAttention("F([x1]) of a single token is not a rational number: not attention")
        q0 = q0.as_rational()
    solved = {}
    hint = {}

    def solve(idx, fam, g0):
        ys = [engine.constant(g0)] + [engine.sample(a)
                                      for a in answers[1 + idx * per_fam: 1 + (idx + 1) * per_fam]]
        K, heads = solve_family(engine.field, ys, H0, hint.get("n"))
        hint.setdefault("n", len(heads))
        solved[(fam.u_key, fam.x_key)] = (engine.scalar(K),
                                          [(engine.score(z), engine.scalar(c)) for z, c in heads])

    col1 = [(i, f) for i, f in enumerate(fams) if f.ends_in_x1]
    for idx, fam in col1:
        solve(idx, fam, q0)
    # v·u_i = K(u_i, x1) − v·x1, so v is known (docs/design.md §4.3 step 3)
    vu = [[solved[((i,), (0,))][0] - q0] for i in range(d)]
    v = [r[0] for r in be.solve(schedule.U, vu)]
    for idx, fam in enumerate(fams):
        if not fam.ends_in_x1:
            solve(idx, fam, sum((a * b for a, b in zip(v, fam.x)), be.scalar(0)))

    ref_key = ((0,), (0,))
    H_star = _pole_counts(fams, solved, ref_key)
    ref = solved[ref_key][1]
    # column 1: rows i via I(u_1 + u_i, x_1)
    col = [ref] + [_match(ref, solved[((i,), (0,))][1], solved[((0, i), (0,))][1], close,
                          False, f"I(u{i + 1}, x1)") for i in range(1, d)]
    S = [[[None] * d for _ in range(d)] for _ in range(H_star)]
    C = [[None] * d for _ in range(H_star)]
    for i in range(d):
        for a, (s, c) in enumerate(col[i]):
            S[a][i][0], C[a][i] = s, c
    for j in range(1, d):
        for i in range(d):
            got = _match(col[i], solved[((i,), (j,))][1], solved[((i,), (0, j))][1], close,
                         True, f"I(u{i + 1}, x{j + 1})")
            for a, (s, _) in enumerate(got):
                S[a][i][j] = s
    heads = []
    for a in range(H_star):
        Y = be.solve(schedule.U, S[a])                        # Y = W Xᵀ
        W = be.transpose(be.solve(schedule.X, be.transpose(Y)))  # X Wᵀ = Yᵀ
        v_a = [-r[0] for r in be.solve(schedule.U, [[c] for c in C[a]])]
        heads.append((W, v_a))
    total = [sum((h[1][i] for h in heads), be.scalar(0)) for i in range(d)]
    if not all(close(p, q) for p, q in zip(total, v)):
        raise NotAttention("the recovered heads' v_h do not sum to v = Σ v_h read from the "
                           "constants: not attention with these heads",
                           v=[str(x) for x in v], sum_v=[str(x) for x in total])
    return heads, v


# ---------------------------------------------------------------------- certification
def _silent(stage, done, total):
    pass


def _certify(model, transcript, be, progress=_silent):
    """Exact: the recovered model reproduces every transcript answer in Q(t)."""
    if be.name == "exact":
        for n, (tokens, answer) in enumerate(transcript):
            if model(tokens, be) != answer:
                return {"certified": False, "first_mismatch": n}
            progress("certification", n + 1, len(transcript))
        return {"certified": True, "method": "exact evaluation in Q(t) of every transcript query",
                "answers_checked": len(transcript)}
    worst = 0
    for tokens, answer in transcript:
        r = abs(model(tokens, be) - answer) / (1 + abs(answer))
        worst = max(worst, r)
    return {"certified": None, "max_relative_residual": worst}


# ---------------------------------------------------------------------- public API
def learn_multi_head(oracle, dim, heads=None, heads_bound=None, backend=None, dps=None,
                     seed=None, resample=False, max_attempts=5, box=None, certify=True,
                     progress=None):
    """Learn the canonical heads of multi-head attention from value queries (P2, main
    theorem; docs/design.md §4.3 schedule): exactly 4H₀d² − 2H₀ + 1 queries of length ≤ 2H₀ + 1,
    with H₀ = heads when H is known, else heads_bound.

    ``oracle`` is an :class:`~exactattn.Oracle` or any callable on a list of token vectors
    (answers taken as numbers of the chosen backend; ``backend=None`` means the Oracle's
    own backend, or exact for a plain callable).  Query vectors: integer box
    {−box…box}^d on the exact backend (default box = 1000), Gaussian with variance 1/d
    otherwise.
    Returns a :class:`LearnResult` whose ``heads`` are the canonical (W, v) pairs; raises a
    named :class:`LearningFailure` when the answer cannot be certified.  ``progress``, if
    given, is called as ``progress(stage, done, total)`` with stage "queries" or
    "certification".
    """
    if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    H0 = _head_bound(heads, heads_bound)
    orc = as_oracle(oracle, dim, backend, dps)
    be = orc.backend
    if be.name == "symbolic":
        raise ValueError("the multi-head learner runs on the exact, mp or float backend")
    box = DEFAULT_BOX if box is None else box
    if be.name == "exact" and (not isinstance(box, int) or isinstance(box, bool) or box < 1):
        raise ValueError(f"box must be a positive integer, got {box!r}")
    rng = random.Random(seed)
    start, start_queries = time.perf_counter(), orc.queries
    failures = []
    for attempt in range(1, max_attempts + 1):
        try:
            result = _attempt(orc, dim, H0, be, rng, box, certify, progress or _silent)
        except LearningFailure as e:
            if not be.exact and e.args and "precision" not in e.args[0]:
                e.args = (e.args[0] + f" (on the {be.name} backend this can be loss of "
                          "precision: raise dps or use the exact backend)",)
            failures.append({"attempt": attempt, "reason": e.reason, "message": str(e),
                             "queries": orc.queries - start_queries})
            if not resample or attempt == max_attempts:
                e.details.setdefault("attempts", failures)
                raise
            continue
        result.queries = orc.queries - start_queries
        result.seconds = time.perf_counter() - start
        result.extra["attempts"] = failures + [{"attempt": attempt, "reason": "ok"}]
        if failures:
            result.notes.append(f"{len(failures)} failed attempt(s) resampled; "
                                f"{result.queries - result.expected_queries} extra queries")
        if heads is not None and len(result.heads) < heads:
            result.notes.append(f"{len(result.heads)} canonical heads found for heads={heads}: "
                                f"heads merge or cancel in the canonical form")
        return result


def _attempt(orc, d, H0, be, rng, box, certify, progress):
    """One draw of the bases and one run of the schedule; every failure carries U and X."""
    U, X = _draw_bases(rng, d, box, be)
    try:
        _check_bases(be, U, X)
        return _run(orc, Schedule(U, X, H0), be, rng, certify, progress)
    except LearningFailure as e:
        e.details.setdefault("U", U)
        e.details.setdefault("X", X)
        raise


def _run(orc, schedule, be, rng, certify, progress):
    """Ask the schedule, recover, certify (steps 2–6 of the module docstring)."""
    d, H0, U, X = schedule.d, schedule.H0, schedule.U, schedule.X
    first = len(orc.transcript)
    queries = list(schedule.queries())
    answers = []
    for q in queries:
        answers.append(orc(q))
        progress("queries", len(answers), len(queries))
    transcript = orc.transcript[first:] if orc.record else None
    close = _Close(be)
    engine_rng = random.Random(rng.getrandbits(64))
    cert = None
    for bits in (_PRIME_BITS if be.name == "exact" else (None,)):
        engine = make_engine(be, answers, engine_rng, bits or 127, 2 * H0 + 1)
        try:
            heads, v = _recover(schedule, answers, engine, be, H0, close)
        except BadReduction:
            continue
        model = MultiHeadAttention([AttentionHead(W, vh) for W, vh in heads]).canonical()
        if not certify:
            break
        if transcript is None:
            raise ValueError("certification needs the oracle's transcript (record=True)")
        cert = _certify(model, transcript, be, progress)
        cert.update(engine.describe())
        if cert["certified"] is False:
            continue  # a modular mishap: retry with a larger prime, no new queries
        if cert["certified"] is None and cert["max_relative_residual"] > _cert_tolerance(be):
            raise CertificationFailed(
                f"the recovered model misses a transcript answer by a relative "
                f"{cert['max_relative_residual']} (> {_cert_tolerance(be)})", **cert)
        break
    else:
        raise CertificationFailed("the recovered model does not reproduce the transcript exactly "
                                  "at any prime size: the oracle is not attention with "
                                  f"≤ {H0} heads on these queries", **(cert or {}))
    return LearnResult(
        algorithm="multi-head", dim=d, backend=be.name,
        heads=[(h.W, h.v) for h in model.heads], queries=0, max_length=max(len(q) for q in queries),
        expected_queries=published_count(d, H0), expected_max_length=published_max_length(H0),
        transcript=transcript or [], certificate=cert if be.name == "exact" else None,
        extra={"U": U, "X": X, "H0": H0, "v": v, "engine": engine.describe(),
               "certification": cert})


def _cert_tolerance(be):
    return be.ctx.mpf(10) ** (-(be.dps // 3)) if be.name == "mp" else 1e-6
