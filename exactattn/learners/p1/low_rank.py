"""Exact learning of a low-rank attention head W = Q Kᵀ (rank r): the skeleton learner of
docs/design.md §4.2 (ours), with d + r(2d − r) value queries of length ≤ 2 when r is given.

1. d length-1 queries [e_i] give v (P1 Thm 4.1, first step).
2. Random bases A = (a_1 … a_d), B = (b_1 … b_d) (seeded integer entries), every a_k with
   a_k·v ≠ 0.  The query [(a_k + b_l), b_l] measures M_kl = a_kᵀ W b_l exactly by the sigmoid
   inversion of P1 Thm 4.1 (σ/(1−σ) = t^m on the exact backend).
3. M = AᵀWB has rank r.  With C its first r columns, R its first r rows and U = M[:r, :r]
   (invertible for generic A, B), M = C U⁻¹ R exactly — r(2d − r) measured entries, the
   dimension of the rank-r matrices — and W = A⁻ᵀ M B⁻¹.

**Unknown rank (rank revealing).**  Grow the leading block of M: the pivot
s_k = M_kk − M[k, :k] U_k⁻¹ M[:k, k] (= det of the (k+1)-block / det of the k-block) is
nonzero for k < r and zero at k = r, for generic A, B.  All entries of these blocks lie in
the skeleton's rows and columns except the final pivot M_rr, so revealing the rank costs one
query; we then spend up to 2r more on spot checks M_{r,r+i}, M_{r+i,r} (i = 1 … min(r, d−1−r)),
whose Schur complements must vanish too — an accidental zero pivot (rank > r but a
non-generic A, B) is then caught and reported as SingularBasis.  Extra queries:
1 + 2·min(r, d−1−r) ≤ 2r + 1 (none when r = d).  ``rank_bound`` caps the search: a nonzero
pivot beyond it raises NotAttention.  Within that budget r = 0 gets no spot check: a nonzero W
is then taken for 0 only if a_1ᵀWb_1 = 0, which has probability ≤ 2/|S| (Schwartz–Zippel)
over the probe entries S = ±1..±entries (|S| = 2000 by default); the certificate states the
bound for every r.

**Checks.**  Exact zero tests on the exact backend (no floats anywhere, including pivots);
mp/float compare pivots with the backend tolerance times the largest measured |M_kl|.  The
recovered head must reproduce every transcript answer (exactly on the exact backend).
A given rank is a promise: entries outside the skeleton are not measured, so a true rank
above the given r cannot be seen (use ``rank_bound`` to have the rank checked).

**Scope.**  Single head only.  Multi-head low rank is not covered yet: a multi-head oracle is
rejected (on the exact backend by the power test of the sigmoid inversion), not learned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._typing import BackendLike, Bound, Number, OracleLike, Progress
    from ..result import LearnResult

import math
import random
import time
from fractions import Fraction

from ...errors import IllConditioned, NotAttention, SingularBasis, SingularSystem
from .session import (Session, attach_error_bar, bilinear, certify, check_dim, fmt, validate_p1,
                  read_value_vector)
from ..result import LearnResult
from ..result.validation import validation_count

__all__ = ["learn_low_rank", "skeleton_queries", "revealing_extra_queries",
           "random_low_rank_head", "random_bases"]


def skeleton_queries(d: int, r: int) -> int:
    """d + r(2d − r): v plus the entries of r full rows and r full columns of M (docs/design.md §4.2)."""
    return d + r * (2 * d - r)


def revealing_extra_queries(d: int, r: int) -> int:
    """Queries beyond the skeleton when the rank is revealed: the pivot M_rr and 2·min(r, d−1−r)
    spot checks; 0 when r = d.  Always ≤ 2r + 1 (docs/design.md §4.2)."""
    return 0 if r >= d else 1 + 2 * min(r, d - 1 - r)


# ------------------------------------------------------------------------ random bases
def _det(rows) -> int:
    from flint import fmpz_mat
    d = len(rows)
    return int(fmpz_mat(d, d, [int(x) for r in rows for x in r]).det())


def random_bases(s: Session, v, rng: random.Random, entries: int = 1000, scale=1):
    """Seeded bases A, B (lists of vectors a_k, b_l): nonzero integer entries in ±1..±entries
    (a set S of 2·entries values) times the rational `scale`, redrawn until det A, det B ≠ 0
    (exact integer determinants) and every a_k·v is clearly nonzero (exact: ≠ 0; mp/float:
    |a_k·v| ≥ scale·max|v_i|/2)."""
    d = len(v)
    vmax = max(abs(x) for x in v)
    threshold = 0 if s.exact else scale * vmax / 2

    def draw():  # nonzero entries: a sparse W (e.g. e_i e_jᵀ) never meets a zero probe entry
        return [rng.choice((-1, 1)) * rng.randint(1, entries) for _ in range(d)]

    def good_a(a):
        c = s.dot([scale * x for x in a], v)
        return c != 0 if s.exact else abs(c) >= threshold

    for _ in range(1000):
        A: list = []
        while len(A) < d:
            a = draw()
            if good_a(a):
                A.append(a)
        B = [draw() for _ in range(d)]
        if _det(A) != 0 and _det(B) != 0:
            return ([[scale * x for x in a] for a in A], [[scale * x for x in b] for b in B])
    raise SingularBasis("could not draw random bases A, B (try more entries)")  # pragma: no cover


# ------------------------------------------------------------------------ the learner
class _Measurements:
    """M_kl = a_kᵀWb_l, measured on demand, each entry at most once."""

    def __init__(self, s: Session, A, B, v):
        self.s, self.A, self.B, self.v = s, A, B, v
        self.M: dict = {}

    def __call__(self, k, l):
        if (k, l) not in self.M:
            try:
                self.M[(k, l)] = bilinear(self.s, self.A[k], self.B[l], self.v,
                                          where=f"M[{k}][{l}] = a_{k}ᵀ W b_{l}")
            except ValueError as e:       # mp/float: a·v or σ within the rounding (a tiny v)
                if self.s.exact:
                    raise
                raise IllConditioned(f"{e}; on the {self.s.be.name} backend v is too small "
                                     f"against the answers' rounding to see W: use the exact "
                                     f"backend or a higher precision", precision=None,
                                     needed_precision=None) from e
        return self.M[(k, l)]

    def scale(self):
        return max((abs(x) for x in self.M.values()), default=0)

    def is_zero(self, x) -> bool:
        if self.s.exact:
            return x == 0
        return abs(x) <= self.s.tolerance * max(1, self.scale())


def _schur(s: Session, M, r: int, i: int, j: int):
    """M_ij − M[i, :r] U⁻¹ M[:r, j] with U = M[:r, :r] (the Schur complement entry)."""
    if r == 0:
        return M(i, j)
    U = [[M(a, b) for b in range(r)] for a in range(r)]
    y = s.be.solve(U, [[M(a, j)] for a in range(r)])
    return M(i, j) - sum((M(i, a) * y[a][0] for a in range(r)), 0 * M(i, j))


def _reveal_rank(s: Session, M: _Measurements, d: int, rank_bound) -> int:
    """Grow the leading block until its next pivot vanishes (docs/design.md §4.2)."""
    cap = d if rank_bound is None else min(d, rank_bound)
    for k in range(d):
        if M.is_zero(_schur(s, M, k, k, k)):
            return k
        if k + 1 > cap:
            raise NotAttention(f"the leading {k + 1}×{k + 1} block of AᵀWB is nonsingular: "
                               f"rank W > rank_bound = {rank_bound}", rank_bound=rank_bound)
    return d


def _spot_check(s: Session, M: _Measurements, d: int, r: int) -> int:
    """Schur complements at M_{r,r+i}, M_{r+i,r} must vanish (catches an accidental zero pivot)."""
    n = 0
    for i in range(1, min(r, d - 1 - r) + 1):
        for a, b in ((r, r + i), (r + i, r)):
            n += 1
            if not M.is_zero(_schur(s, M, r, a, b)):
                raise SingularBasis(f"the pivot M[{r}][{r}] vanished by accident (its Schur "
                                    f"complement at ({a}, {b}) is not 0): the random bases "
                                    f"are not generic for this W; rerun with another seed",
                                    rank=r, at=[a, b])
    return n


def _skeleton(s: Session, M: _Measurements, d: int, r: int):
    """M = C U⁻¹ R from r full rows and r full columns (docs/design.md §4.2)."""
    zero = 0 * M(0, 0) if r else (Fraction(0) if s.exact else s.be.scalar(0))
    if r == 0:
        return [[zero] * d for _ in range(d)]
    C = [[M(k, l) for l in range(r)] for k in range(d)]
    R = [[M(k, l) for l in range(d)] for k in range(r)]
    U = [row[:r] for row in R]
    try:
        UinvR = s.be.solve(U, R)
    except SingularSystem:
        raise SingularBasis(f"the leading {r}×{r} block of AᵀWB is singular: either rank W < "
                            f"{r} or the random bases are not generic (rerun with another "
                            f"seed)", rank=r) from None
    return s.be.matmul(C, UinvR)


def _unbase(s: Session, A, B, Mfull):
    """W = A⁻ᵀ M B⁻¹ for M = AᵀWB (A, B given as lists of column vectors)."""
    X = s.be.solve(A, Mfull)                         # Aᵀ X = M   (rows of Aᵀ are a_k)
    Wt = s.be.solve(B, s.be.transpose(X))            # Bᵀ Wᵀ = Xᵀ
    return s.be.transpose(Wt)


def learn_low_rank(oracle: OracleLike, dim: int, rank: int | None = None,
                   rank_bound: int | None = None, backend: BackendLike | None = None,
                   dps: int | None = None, seed: int | None = None, entries: int = 1000,
                   probe_scale: Number | None = None, oracle_precision: Bound = None,
                   accuracy: Bound = None, progress: Progress | None = None,
                   validate: int | None = None) -> LearnResult:
    """Learn a single head whose W has rank r (docs/design.md §4.2 exact skeleton; the measurement
    step is P1 Thm 4.1's sigmoid inversion).

    With ``rank`` given: exactly d + r(2d − r) queries of length ≤ 2.  Otherwise the rank is
    revealed (≤ 2r + 1 extra queries), capped by ``rank_bound`` if given.  ``backend=None``
    means the Oracle's own backend (inferred for a plain callable).  ``seed`` seeds the
    bases; ``entries`` bounds their integer entries; ``probe_scale`` multiplies them (default 1
    on exact, 1/(entries·⌈√d⌉) on mp/float so that the scores stay O(‖W‖) and σ is not
    rounded to 1).  Single head only (multi-head low rank is not covered).
    mp / float: ``result.error_bar`` is the certified enclosure of (W, v) (the skeleton
    replayed on answer balls of the oracle precision; see
    :func:`~exactattn.learners.p1.session.attach_error_bar`).
    ``progress``, if given, is called as ``progress(stage, done, total)`` with stage
    "queries" (out of d + r(2d − r) when r is given) or "certification".
    ``validate`` (default None: 4; 0: none) validation queries of shapes the schedule never
    uses follow, counted apart (:mod:`.validation`; a mismatch is OutOfClass);
    ``result.proves`` says what the result proves.  A budget too small for the schedule (d
    + r(2d − r), or d when the rank is revealed) and the validation is refused before the
    first query.
    """
    d = check_dim(dim)
    rank, rank_bound = _check_rank(d, rank, rank_bound)
    n_valid = validation_count(validate, 1)
    start = time.perf_counter()
    s = Session(oracle, d, backend, dps, progress,
                expected=None if rank is None else skeleton_queries(d, rank))
    s.stated_precision = oracle_precision
    least = skeleton_queries(d, rank) if rank is not None else d
    s.oracle.reserve(least + n_valid, f"the low-rank schedule ({'' if rank is not None else 'at least '}"
                                      f"{least} queries) and {n_valid} validation queries")
    scale = _default_scale(s, d, entries) if probe_scale is None else Fraction(probe_scale)
    v = read_value_vector(s)
    A, B = random_bases(s, v, random.Random(seed), entries, scale)
    M = _Measurements(s, A, B, v)
    revealed = rank is None
    r = _reveal_rank(s, M, d, rank_bound) if revealed else rank
    Mfull = _skeleton(s, M, d, r)
    spot = _spot_check(s, M, d, r) if revealed and r < d else 0
    W = _unbase(s, A, B, Mfull)
    heads = [(W, v)]
    checked = certify(s, heads)
    expected = skeleton_queries(d, r) + (revealing_extra_queries(d, r) if revealed else 0)
    result = LearnResult(
        algorithm="low-rank", dim=d, backend=s.be.name, heads=heads, queries=s.queries,
        max_length=s.max_length, expected_queries=expected,
        expected_max_length=2 if (r or revealed) else 1,
        transcript=list(s.transcript),
        extra={"rank": r, "rank_given": not revealed, "rank_bound": rank_bound,
               "extra_queries": s.queries - skeleton_queries(d, r), "spot_checks": spot,
               "extra_bound": 2 * r + 1 if revealed else 0, "A": A, "B": B})
    if revealed:
        result.notes.append(f"rank {r} revealed with {s.queries - skeleton_queries(d, r)} "
                            f"queries beyond d + r(2d−r) (bound 2r+1 = {2 * r + 1})")
    if s.exact:
        result.certificate = {
            "claim": "docs/design.md §4.2 exact skeleton (P1 Thm 4.1 measurements)",
            "algorithm": "low-rank", "dim": d, "rank": r, "rank_given": not revealed,
            "queries": s.queries, "max_length": s.max_length, "A": _fmt_rows(A),
            "B": _fmt_rows(B), "W": _fmt_rows(W), "v": [fmt(x) for x in v],
            "transcript_reproduced_exactly": checked,
            "genericity": _genericity(r, revealed, entries)}
    else:
        attach_error_bar(s, result, lambda rs: _replay(rs, A, B, r), oracle_precision, accuracy)
    validate_p1(s, result, n_valid, seed, "low-rank")
    result.seconds = time.perf_counter() - start
    return result


def _replay(s, A, B, r):
    """The skeleton steps (v, M = C U⁻¹ R, W = A⁻ᵀ M B⁻¹) at the revealed rank r on a replay
    session (answer balls); returns (W, v)."""
    v = read_value_vector(s)
    M = _Measurements(s, A, B, v)
    return _unbase(s, A, B, _skeleton(s, M, s.dim, r)), v


def _genericity(r, revealed, entries):
    """What the random bases must avoid, with the Schwartz–Zippel bound over the probe set S
    (before the redraws that already exclude det A = 0, det B = 0, a_k·v = 0)."""
    size = 2 * entries
    if revealed:
        bad = "some leading k-minor of AᵀWB vanishes, k ≤ r (degree 2k in the entries of A, B)"
        bound = Fraction(r * (r + 1), size)
    else:
        bad = "det of the leading r-block of AᵀWB vanishes (degree 2r in the entries of A, B)"
        bound = Fraction(2 * r, size)
    return {"set_size": size, "failure_event": bad,
            "schwartz_zippel_bound": fmt(min(bound, Fraction(1)))}


def _fmt_rows(rows):
    return [[fmt(x) for x in row] for row in rows]


def _default_scale(s: Session, d: int, entries: int):
    if s.exact:
        return Fraction(1)
    return Fraction(1, entries * (math.isqrt(d - 1) + 1))        # 1/(entries·⌈√d⌉)


def _check_rank(d, rank, rank_bound):
    for name, x in (("rank", rank), ("rank_bound", rank_bound)):
        if x is not None and (isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= d):
            raise ValueError(f"{name} must be an integer in 0..{d}, got {x!r}")
    if rank is not None and rank_bound is not None and rank > rank_bound:
        raise ValueError(f"rank={rank} exceeds rank_bound={rank_bound}")
    return rank, rank_bound


# ------------------------------------------------------------------------ random models
def random_low_rank_head(dim: int, rank: int, seed=None, kind: str = "rational"):
    """A seeded random head with W = Q Kᵀ of rank exactly `rank` (docs/design.md §1 low-rank head).

    rational: Q, K entries in {−2..2}/2 (redrawn until rank W = rank, exact), v_i ∈ {±1..±4}/2;
    real: Gaussian Q, K (sd 1/√d), W = QKᵀ formed exactly in mpmath (so its rank is exactly
    `rank` at any working precision), Gaussian v."""
    from ...models.attention import AttentionHead
    d = check_dim(dim)
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank <= d:
        raise ValueError(f"rank must be an integer in 0..{d}, got {rank!r}")
    rng = random.Random(seed)
    if kind == "rational":
        return _rational_low_rank(d, rank, rng)
    if kind == "real":
        return AttentionHead(*_real_low_rank(d, rank, rng))
    raise ValueError(f"kind must be 'rational' or 'real', got {kind!r}")


def _rational_low_rank(d, r, rng):
    from flint import fmpq_mat
    from ...models.attention import AttentionHead
    for _ in range(1000):
        Q = [[Fraction(rng.randint(-2, 2), 2) for _ in range(r)] for _ in range(d)]
        K = [[Fraction(rng.randint(-2, 2), 2) for _ in range(r)] for _ in range(d)]
        W = [[sum((Q[i][k] * K[j][k] for k in range(r)), Fraction(0)) for j in range(d)]
             for i in range(d)]
        flat = [x for row in W for x in row]
        if fmpq_mat(d, d, [int(x * 4) for x in flat]).rank() == r:
            v = [Fraction(rng.choice([-4, -3, -2, -1, 1, 2, 3, 4]), 2) for _ in range(d)]
            return AttentionHead(W, v)
    raise ValueError(f"could not draw a rank-{r} rational W in dimension {d}")  # pragma: no cover


def _real_low_rank(d, r, rng):
    import mpmath
    sd = 1.0 / math.sqrt(d)
    Q = [[rng.gauss(0, sd) for _ in range(r)] for _ in range(d)]
    K = [[rng.gauss(0, sd) for _ in range(r)] for _ in range(d)]
    with mpmath.workprec(2000):   # products of doubles summed exactly
        W = [[mpmath.fsum(mpmath.mpf(Q[i][k]) * mpmath.mpf(K[j][k]) for k in range(r))
              for j in range(d)] for i in range(d)]
    v = [rng.gauss(0, 1) for _ in range(d)]
    return W, v
