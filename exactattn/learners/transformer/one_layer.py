"""Learning a one-layer Transformer T(X) = wᵀ ReLU(Aᵀ Σ_h V_hᵀ Xᵀ α_h(X)) from value queries
(docs/design.md §1; P1 one-layer reduction; P2 Transformer extension).

**Attention part (both papers).**  α_h(−X) = α_h(X) and ReLU(z) − ReLU(−z) = z, so the
antisymmetric query T(X) − T(−X) = Σ_h v_h·p_h(X) with v_h = V_h A w is a multi-head
regressor (p_h(X) = Xᵀα_h(X) the pooled token of head h).  It is learned by the existing
learners through :func:`antisymmetric_oracle`; every antisymmetric query costs two oracle
calls, and the outer Oracle counts both.

**P1 one-layer reduction** (:func:`learn_transformer_p1`, one head).  W from P1 Thm 4.1 on
the antisymmetric part (d² + d antisymmetric queries); the FFN from length-1 queries,
T([x]) = Σ_j w_j ReLU((V a_j)·x), a bias-free ReLU network on Rᵈ learned by
:mod:`.relu_ffn`.  Since T(X) = f(p(X)) for that same network f, the pair is the function.

**P2 Transformer extension** (:func:`learn_transformer_p2`, any number of heads, no separate
FFN algorithm).  With the W_h known, Φ(X) = (p_1(X), …, p_H(X)) ∈ R^{Hd} is computable and
T(X) = f(Φ(X)), f(P) = ℓ·P + Σ_n c_n|N_n·P| (the kink form, exactattn.models.transformer), where
ℓ = ½(v_1, …, v_H) is already known from the attention part.  On a region where no unit's
argument changes sign, T(X) = G·Φ(X) with the region's functional G = ℓ + Σ_n c_n s_n N_n.

* *Functional at one query.*  Exact backend: T(X) and the entries of Φ(X) are elements of
  Q(t), t = e^{1/L}, and G is rational; Q(t) is an infinite-dimensional Q-vector space, so
  T(X)·Π_h D_h = Σ_{h,k} G_{hk} N_{hk} Π_{g≠h} D_g (D_h, N_hk the softmax denominators and
  numerators) compared coefficient by coefficient is an overdetermined rational system with a
  unique solution — one query gives G exactly.  mp backend: Hd + 1 queries at a point and
  tiny random perturbations of it (solve, and check on the last).
* *Query family: a path through sequence space.*  X(s) runs from a random X_0 through a random
  Y to −X_0 (tokens (1−s)X_0 + sY, then (2−s)Y − (s−1)X_0).  Φ(−X) = −Φ(X), so every
  hyperplane N_n·P = 0 is crossed an odd number of times, and G(−X_0) = 2ℓ − G(X_0) needs no
  query.
* *Kinks.*  On an interval [a, b] of the path with G_a ≠ G_b, the single-crossing hypothesis
  says g = G_b − G_a is normal to the crossed hyperplane; then g·Φ(X(s)) changes sign on
  [a, b], the sign change is located by exact bisection (certified signs in Q(t); no
  queries), and the functionals just before and after it (two queries) must be G_a and G_b.
  Then the term is c|N·P| with N = g, c = sgn(g·Φ(b))/2.  Otherwise the interval is split at
  the sampled points.  A merged pair of crossings passes only if both lie within the
  bisection width (2^−24 of the path) of the located point.
* *Certification.*  The kink form must reproduce every measured functional, and the
  recovered Transformer every answer of the transcript — exactly on the exact backend.

The kink form is then realized as a Transformer (:func:`transformer_from_kink_form`): one
unit per hyperplane, oriented so that the linear parts cancel (units_from_kink_form), and
V_h, A from a rank factorization [U_1 … U_k'] = Ṽ A with Ṽ = (V_1; …; V_H) ∈ R^{Hd×d}.

**Conditions** (beyond P2's genericity of the attention queries).  (C1) every head that
matters is visible in the antisymmetric part: V_h A w ≠ 0 unless V_h A = 0 — otherwise the
answers are not linear in the recovered heads' pooled tokens and InvisibleHead is raised;
(C2) the number of hyperplanes (units up to parallel merging) is at most ``hidden`` when a
bound is given (TooManyUnits); (C3) general position of the random path, which holds with
probability one (failures are named: NotTransformer, CertificationFailed; ``resample=True``
draws a new path).  Units are recovered up to permutation and positive rescaling when no two
are antiparallel (then the orientation is unique; ``extra["units_identified"]``); otherwise
the returned Transformer is still functionally equivalent.  For P1 additionally v = VAw ≠ 0
(else W is not identifiable: NotIdentifiable from P1 Thm 4.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._typing import BackendLike, OracleLike, Progress

import random
import time
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

from ...arith.expfield import as_fmpq, poly, terms as poly_terms
from ...errors import (CertificationFailed, InvisibleHead, LearningFailure, SingularSystem)
from ...models.attention import MultiHeadAttention
from ...oracles.oracle import as_oracle
from ...models.transformer import (KinkForm, OneLayerTransformer, Scalars, normalize_direction,
                           units_from_kink_form)
from .relu_ffn import TooManyUnits, learn_relu_ffn
from ..result import LearnResult
from ..p2.schedule import published_count
from ..result.validation import validation_count

__all__ = ["learn_transformer", "learn_transformer_p1", "learn_transformer_p2",
           "antisymmetric_oracle", "transformer_from_kink_form", "TransformerResult",
           "NotTransformer", "PhiSpace", "compare_recovery"]

PATH_BOX = 10
EXACT_WIDTH = Fraction(1, 1 << 24)


class NotTransformer(LearningFailure):
    """The answers are not those of a one-layer Transformer with the recovered heads."""

    reason = "not-transformer"


@dataclass(repr=False)
class TransformerResult(LearnResult):
    """A learned one-layer Transformer: ``transformer`` (functionally equivalent to the
    oracle), ``form`` (its kink form), the attention heads (W_h, v_h = V_h A w) in ``heads``,
    and the query accounting: ``queries`` oracle calls in all, ``attention_queries`` of them
    for the attention part (two per antisymmetric query), ``ffn_queries`` for the rest."""

    transformer: OneLayerTransformer | None = None
    form: KinkForm | None = None
    attention_queries: int = 0
    ffn_queries: int = 0
    units_identified: bool = False

    @property
    def model(self):
        """The recovered model: the Transformer (functionally equivalent to the oracle)."""
        return self.transformer

    def _repr_markdown_(self):
        """Notebook display: the accounting line and the recovered Transformer's matrices."""
        line = (f"**TransformerResult** {self.algorithm} · d = {self.dim} · backend "
                f"{self.backend} · {self.queries} oracle calls (attention "
                f"{self.attention_queries}, FFN {self.ffn_queries}) · max length "
                f"{self.max_length} · "
                f"{'certified exactly' if self.certificate else 'not certified'}")
        notes = "".join(f"\n- {n}" for n in self.notes)
        return f"{line}\n{notes}\n\n{self.transformer._repr_latex_()}"

    def __repr__(self):
        return (f"TransformerResult({self.algorithm}, d={self.dim}, backend={self.backend}, "
                f"heads={len(self.heads)}, units={self.transformer.hidden}, "
                f"queries={self.queries} (attention {self.attention_queries}, "
                f"FFN {self.ffn_queries}), max_length={self.max_length})")


# ---------------------------------------------------------------------- attention part
def _negate(tokens):
    return [[-x for x in tok] for tok in tokens]


def antisymmetric_oracle(orc):
    """X ↦ T(X) − T(−X): the multi-head regressor Σ_h (V_h A w)·p_h(X) (docs/design.md §1; P1 and P2
    one-layer reductions).  Two oracle calls per query, both counted by ``orc``."""
    def query(tokens):
        tokens = [list(t) for t in tokens]
        return orc(tokens) - orc(_negate(tokens))
    return query


def _silent(stage, done, total=None):
    pass


def _learn_attention(orc, dim, heads, heads_bound, be, seed, resample, single, progress):
    """P1 Thm 4.1 (single) or the P2 multi-head learner on the antisymmetric oracle."""
    anti = antisymmetric_oracle(orc)
    def told(stage, done, total):  # noqa: E306
        progress(f"attention {stage}", done, total)
    if single:
        from ..p1.single_head import learn_single_head
        return learn_single_head(anti, dim, backend=be, seed=seed, progress=told, validate=0)
    from ..multi_head import learn_multi_head
    return learn_multi_head(anti, dim, heads=heads, heads_bound=heads_bound, backend=be,
                            seed=seed, resample=resample, progress=told, validate=0)


# ---------------------------------------------------------------------- Φ-coordinates
class PhiSpace:
    """The pooled tokens Φ(X) = (p_1(X), …, p_H(X)) of known heads W_h, on a backend
    (P2 Transformer extension)."""

    def __init__(self, Ws, d, be):
        self.Ws, self.d, self.be = [tuple(map(tuple, W)) for W in Ws], d, be
        self.n = len(self.Ws) * d

    def dot(self, g, tokens):
        """g·Φ(X) = Σ_h g_h·p_h(X): multi-head attention with the heads (W_h, g_h)."""
        d = self.d
        model = MultiHeadAttention([(W, g[h * d:(h + 1) * d]) for h, W in enumerate(self.Ws)],
                                   dim=d)
        return model(tokens, self.be)

    def sign(self, g, tokens) -> int:
        """Certified sign of g·Φ(X) on the exact backend (ball arithmetic in Q(t))."""
        return self.be.sign(self.dot(g, tokens))

    def phi(self, tokens):
        """Φ(X) as Hd backend elements (exact: elements of Q(t))."""
        unit = lambda k: [int(i == k) for i in range(self.n)]  # noqa: E731
        return [self.dot(unit(k), tokens) for k in range(self.n)]


def _functional_exact(space: PhiSpace, tokens, T):
    """The rational G with T(X) = G·Φ(X), by coefficients in Q(t) (module docstring).
    None when Φ(X) does not determine G (rank < Hd: a degenerate point); raises
    NotTransformer when no rational G fits."""
    X = [[Fraction(x) for x in tok] for tok in tokens]
    xN = X[-1]
    scores = [[sum((a * sum((W[i][j] * xN[j] for j in range(space.d)), Fraction(0))
                    for i, a in enumerate(x)), Fraction(0)) for x in X] for W in space.Ws]
    L = lcm(T.L, *(s.denominator for row in scores for s in row))
    T = T.lift(L)
    D, N = [], []
    for row in scores:
        ks = [int(s * L) for s in row]
        low = min(ks)
        den: dict = {}
        nums: list[dict] = [{} for _ in range(space.d)]
        for k, x in zip(ks, X):
            den[k - low] = den.get(k - low, 0) + 1
            for i in range(space.d):
                nums[i][k - low] = nums[i].get(k - low, 0) + x[i]
        D.append(poly(den))
        N.append([poly({k: as_fmpq(c) for k, c in nm.items()}) for nm in nums])
    cols = []
    for h in range(len(D)):
        rest = T.den
        for g, Dg in enumerate(D):
            if g != h:
                rest = rest * Dg
        cols += [rest * Nk for Nk in N[h]]
    rhs = T.num
    for Dh in D:
        rhs = rhs * Dh
    return _solve_coefficients(cols, rhs, space.n)


def _solve_coefficients(cols, rhs, n):
    """The unique rational solution of Σ_k G_k·cols[k] = rhs (polynomials in t), or None."""
    from flint import fmpq_mat
    coeffs = [dict(poly_terms(c)) for c in cols] + [dict(poly_terms(rhs))]
    monos = sorted(set().union(*coeffs))
    M = fmpq_mat(len(monos), n + 1, [c.get(m, 0) for m in monos for c in coeffs])
    rref, rank = M.rref()
    lhs_rank = fmpq_mat(len(monos), n, [c.get(m, 0) for m in monos for c in coeffs[:-1]]).rank()
    if lhs_rank < n:
        return None
    if rank > n:
        raise NotTransformer("T(X) is not a rational combination of the pooled tokens of the "
                             "recovered heads")
    return [Fraction(int(rref[i, n].p), int(rref[i, n].q)) for i in range(n)]


class _Functionals:
    """G(X) for path points, counting the queries (module docstring)."""

    def __init__(self, orc, space, rng, num):
        self.orc, self.space, self.rng, self.num = orc, space, rng, num
        self.be = space.be
        self.measured = []  # (tokens, G)

    def __call__(self, tokens):
        G = self._exact(tokens) if self.num.exact else self._approx(tokens)
        if G is not None:
            self.measured.append((tokens, G))
        return G

    def _exact(self, tokens):
        return _functional_exact(self.space, tokens, self.orc(tokens))

    def _approx(self, tokens):
        """mp: Hd + 1 queries at X and X + εR_i; G solves the first Hd, the last checks."""
        be, n = self.be, self.space.n
        eps = be.scalar(10) ** (-max(6, be.dps // 4))
        pts = [tokens] + [[[x + eps * be.scalar(self.rng.gauss(0, 1)) for x in tok]
                           for tok in tokens] for _ in range(n)]
        ys = [self.orc(p) for p in pts]
        rows = [self.space.phi(p) for p in pts]
        try:
            G = [r[0] for r in be.solve(rows[:n], [[y] for y in ys[:n]])]
        except SingularSystem:
            return None
        pred = sum((g * x for g, x in zip(G, rows[n])), be.scalar(0))
        return G if self.num.eq(pred, ys[n]) else None


# ---------------------------------------------------------------------- the path
def _path(X0, Y):
    """s ∈ [0, 2] ↦ tokens: X_0 → Y on [0, 1], Y → −X_0 on [1, 2] (module docstring)."""
    def at(s):
        if s <= 1:
            return [[(1 - s) * a + s * b for a, b in zip(x, y)] for x, y in zip(X0, Y)]
        return [[(2 - s) * b - (s - 1) * a for a, b in zip(x, y)] for x, y in zip(X0, Y)]
    return at


def _draw_path(rng, n_tokens, d, be):
    """X_0, Y with entries in {−1, −9/10, …, 1} (exact) or Gaussian (mp): scores of order 1,
    so no head's attention saturates onto one token (a saturated head pins Φ to a token, and a
    token on a hyperplane would put a crossing within e^(−score) of the path's start)."""
    if be.name == "exact":
        draw = lambda: [Fraction(rng.randint(-PATH_BOX, PATH_BOX), PATH_BOX)  # noqa: E731
                        for _ in range(d)]
    else:
        draw = lambda: [be.scalar(rng.gauss(0, 1)) for _ in range(d)]  # noqa: E731
    return [draw() for _ in range(n_tokens)], [draw() for _ in range(n_tokens)]


class _Crossings:
    """Resolve the path into single crossings (module docstring, "Kinks")."""

    def __init__(self, space, path, functional, num, width, budget):
        self.space, self.path, self.G, self.num = space, path, functional, num
        self.width, self.budget = width, budget
        self.terms = []

    def run(self, G0, G2, two):
        todo = [(0 * two, two, G0, G2, 0)]
        while todo:
            a, b, Ga, Gb, depth = todo.pop()
            if self.num.vec_eq(Ga, Gb):
                continue
            if depth > 60 or len(self.G.measured) > self.budget:
                raise NotTransformer("the path does not resolve into single crossings of "
                                     "hyperplanes: not a Transformer with these heads",
                                     depth=depth)
            todo += [(p, q, Gp, Gq, depth + 1) for (p, Gp), (q, Gq) in
                     zip(*self._split(a, b, Ga, Gb))]
        return self.terms

    def _split(self, a, b, Ga, Gb):
        """[(s, G)] points to cut [a, b] at, as two shifted lists (empty when resolved)."""
        g = [y - x for x, y in zip(Ga, Gb)]
        sa, sb = self._sign(g, a), self._sign(g, b)
        if sa and sb and sa == -sb:
            lo, hi = self._locate(g, a, b, sa)
            Glo, Ghi = self._measure(lo), self._measure(hi)
            if Glo is not None and Ghi is not None and self.num.vec_eq(Glo, Ga) \
                    and self.num.vec_eq(Ghi, Gb):
                self.terms.append((g, Fraction(sb, 2) if self.num.exact else self.num.half * sb))
                return [], []
            pts = [(a, Ga)] + [(s, G) for s, G in ((lo, Glo), (hi, Ghi)) if G is not None] \
                + [(b, Gb)]
        else:
            m = (a + b) / 2
            Gm = self._measure(m)
            if Gm is None:
                raise NotTransformer("no functional at a path point (degenerate point)",
                                     s=str(m))
            pts = [(a, Ga), (m, Gm), (b, Gb)]
        return pts[:-1], pts[1:]

    def _sign(self, g, s):
        return self.num.sign(self.space.dot(g, self.path(s))) if not self.num.exact \
            else self.space.sign(g, self.path(s))

    def _measure(self, s):
        return self.G(self.path(s))

    def _locate(self, g, a, b, sa):
        """Bisection on the sign of g·Φ(X(s)) (computed, not queried) to width ``width``."""
        lo, hi = a, b
        while hi - lo > self.width:
            m = (lo + hi) / 2
            sm = self._sign(g, m)
            if sm == sa:
                lo = m
            elif sm == -sa:
                hi = m
            else:
                break
        return lo, hi


def _dedupe_terms(raw, num):
    """Normalize each crossing's (N, c); crossings of one hyperplane must agree on c."""
    out = []
    for g, c in raw:
        lam, N = normalize_direction(g, num)
        c = c * abs(lam)
        same = [k for k, (M, _) in enumerate(out) if num.vec_eq(M, N)]
        if same:
            if not num.eq(out[same[0]][1], c):
                raise NotTransformer("two crossings of one hyperplane show different jumps",
                                     normal=[str(x) for x in N])
            continue
        out.append((N, c))
    return sorted(out) if num.exact else out


# ---------------------------------------------------------------------- realization
def transformer_from_kink_form(form: KinkForm, num: Scalars):
    """A Transformer with the given kink form (P2 Transformer extension, last step): units
    from units_from_kink_form, then [U_1 … U_k'] = Ṽ A with Ṽ a column basis (rank r ≤ d,
    padded with zero columns) and A the coordinates.  Returns (model, units_unique)."""
    d, H = form.dim, len(form.heads)
    units, unique = units_from_kink_form(form, num)
    zero = Fraction(0) if num.exact else num.convert(0)
    if H == 0:  # T ≡ 0: one zero head and one zero unit
        Z = [[zero] * d for _ in range(d)]
        return OneLayerTransformer([(Z, Z)], [[zero] for _ in range(d)], [zero]), unique
    if not units:
        units = [(zero, tuple(zero for _ in range(H * d)))]
    cols = [list(U) for _, U in units]
    basis, coords = _column_basis(cols, num)
    if len(basis) > d:
        raise NotTransformer(f"the units span {len(basis)} > d = {d} dimensions: no d×d "
                             f"output maps V_h realize them", rank=len(basis), dim=d)
    Vt = [[basis[c][i] if c < len(basis) else zero for c in range(d)] for i in range(H * d)]
    A = [[coords[j][c] if c < len(basis) else zero for j in range(len(units))]
         for c in range(d)]
    heads = [(form.heads[h], Vt[h * d:(h + 1) * d]) for h in range(H)]
    return OneLayerTransformer(heads, A, [w for w, _ in units]), unique


def _column_basis(cols, num):
    """A basis of the columns' span (a subset of them) and every column's coordinates in it:
    elimination with the first nonzero pivot on rationals (exact), the largest entry with a
    tolerance on mp."""
    basis, reduced, pivots = [], [], []
    for col in cols:
        r = list(col)
        for p, row in zip(pivots, reduced):
            f = r[p] / row[p]
            r = [x - f * y for x, y in zip(r, row)]
        piv = _pivot(r, num, max((abs(x) for x in col), default=0))
        if piv is not None:
            basis.append(list(col))
            reduced.append(r)
            pivots.append(piv)
    return basis, [_coordinates(col, basis, num) for col in cols]


def _pivot(r, num, scale):
    if num.exact:
        return next((i for i, x in enumerate(r) if x != 0), None)
    i = max(range(len(r)), key=lambda k: abs(r[k]))
    return None if num.is_zero(r[i], scale) else i


def _coordinates(col, basis, num):
    """c with Σ_k c_k basis[k] = col (least squares via the normal equations; exact on
    rationals, where the column is known to lie in the span)."""
    if not basis:
        return []
    G = [[sum((x * y for x, y in zip(u, v)), 0 * u[0]) for v in basis] for u in basis]
    rhs = [sum((x * y for x, y in zip(u, col)), 0 * u[0]) for u in basis]
    return _solve_small(G, rhs, num)


def _solve_small(M, b, num):
    n = len(M)
    A = [list(r) + [y] for r, y in zip(M, b)]
    for c in range(n):
        p = max(range(c, n), key=lambda i: abs(A[i][c])) if not num.exact else \
            next(i for i in range(c, n) if A[i][c] != 0)
        A[c], A[p] = A[p], A[c]
        for i in range(n):
            if i != c:
                f = A[i][c] / A[c][c]
                A[i] = [x - f * y for x, y in zip(A[i], A[c])]
    return [A[i][n] / A[i][i] for i in range(n)]


# ---------------------------------------------------------------------- certification
def _certify(model, transcript, be, num):
    """The recovered Transformer must reproduce every answer (exactly on the exact backend)."""
    for k, (tokens, y) in enumerate(transcript):
        got = model([list(t) for t in tokens], be)
        ok = got == y if num.exact else num.eq(got, y)
        if not ok:
            raise CertificationFailed(f"the recovered Transformer misses answer {k} of the "
                                      f"transcript", index=k, answer=str(y), got=str(got))
    return len(transcript)


def _certify_functionals(form, space, measured, num):
    for tokens, G in measured:
        signs = [space.sign(N, tokens) if num.exact else num.sign(space.dot(N, tokens))
                 for N, _ in form.terms]
        if not num.vec_eq(form.gradient(signs), G):
            raise NotTransformer("the kink form does not reproduce a measured functional: "
                                 "a hyperplane was missed (or a head is invisible)")


# ---------------------------------------------------------------------- public API
def _setup(oracle, dim, backend, dps):
    if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    orc = as_oracle(oracle, dim, backend, dps)
    be = orc.backend
    if be.name not in ("exact", "mp"):
        raise ValueError("the Transformer learners run on the exact or mp backend")
    if not orc.record:
        raise ValueError("the Transformer learners need the oracle's transcript (record=True)")
    return orc, be, Scalars.for_backend(be)


def _reserve(orc, attention_queries, n_valid):
    """Refuse, before the first query, a budget below the attention part's antisymmetric
    calls (two per query of its schedule) and the validation queries; the FFN's crossings
    depend on the answers and come on top."""
    orc.reserve(2 * attention_queries + n_valid,
                f"the attention part (2 × {attention_queries} antisymmetric calls; the FFN's "
                f"queries come on top) and {n_valid} validation queries")


def _half_v(heads, num):
    half = num.half
    return tuple(half * x for _, v in heads for x in v)


def learn_transformer_p2(oracle, dim, heads=None, heads_bound=None, hidden=None, backend=None,
                         dps=None, seed=None, resample=False, max_attempts=3, progress=None,
                         validate=None):
    """Learn a functionally equivalent one-layer Transformer (P2 Transformer extension):
    the attention part by the P2 multi-head learner on antisymmetric queries, the FFN by
    crossings along a path in sequence space (module docstring).  Returns a
    :class:`TransformerResult`; raises a named LearningFailure when a condition (C1–C3) fails.
    ``progress(stage, done, total)``: the attention part's stages, then "FFN".
    ``validate``: validation queries of the whole Transformer after the run (see
    :func:`learn_transformer`)."""
    progress = progress or _silent
    H0 = heads or heads_bound or 1
    n_valid = validation_count(validate, H0)
    orc, be, num = _setup(oracle, dim, backend, dps)
    _reserve(orc, published_count(dim, H0), n_valid)
    start, q0, first = time.perf_counter(), orc.queries, len(orc.transcript)
    rng = random.Random(seed)
    att = _learn_attention(orc, dim, heads, heads_bound, be, rng.getrandbits(32), resample,
                           single=False, progress=progress)
    att_calls = orc.queries - q0
    progress("FFN", 0, None)
    Ws = [W for W, _ in att.heads]
    space = PhiSpace(Ws, dim, be)
    ell = _half_v(att.heads, num)
    failures = []
    for attempt in range(1, max_attempts + 1):
        try:
            form, measured = _ffn_attempt(orc, space, ell, hidden, rng, num, be, Ws)
            model, unique = transformer_from_kink_form(form, num)
            checked = _certify(model, orc.transcript[first:], be, num)
            break
        except LearningFailure as e:
            failures.append({"attempt": attempt, "reason": e.reason, "message": str(e),
                             "queries": orc.queries - q0})
            if not resample or attempt == max_attempts or isinstance(e, (TooManyUnits,
                                                                         InvisibleHead)):
                e.details.setdefault("attempts", failures)
                raise
    res = _result("transformer-p2", dim, be, att, model, form, unique, orc, q0, first,
                  att_calls, start, failures, checked, heads or heads_bound)
    return _validate(res, orc, H0, n_valid, seed, num, progress)


def _ffn_attempt(orc, space, ell, hidden, rng, num, be, Ws):
    """One random path: G(X_0), crossings, kink form, functional certification."""
    H, d = len(Ws), space.d
    n_tokens = max(H, d) + 1
    functional = _Functionals(orc, space, rng, num)
    for _ in range(10):
        X0, Y = _draw_path(rng, n_tokens, d, be)
        try:
            G0 = functional(X0)
        except NotTransformer:
            G0 = None
            break
        if G0 is not None:
            break
    if G0 is None:
        raise InvisibleHead("the answers are not G·Φ(X) for the pooled tokens of the recovered "
                            "heads at any random point: a head with V_h A w = 0 but V_h A ≠ 0 "
                            "is invisible to the antisymmetric queries (condition C1)",
                            heads=H)
    G2 = [2 * l - g for l, g in zip(ell, G0)]
    two = Fraction(2) if num.exact else be.scalar(2)
    width = EXACT_WIDTH if num.exact else be.scalar(10) ** (-max(5, be.dps // 5))
    limit = hidden if hidden is not None else 32
    crossing = _Crossings(space, _path(X0, Y), functional, num, width * two,
                          budget=40 * (limit + 2))
    terms = _dedupe_terms(crossing.run(G0, G2, two), num)
    if len(terms) > limit:
        raise TooManyUnits(f"{len(terms)} hyperplanes of units but hidden ≤ {limit}",
                           hyperplanes=len(terms), bound=limit)
    form = KinkForm([tuple(map(tuple, W)) for W in Ws], ell, terms, d)
    _certify_functionals(form, space, functional.measured, num)
    return form, functional.measured


def learn_transformer_p1(oracle, dim, hidden=None, backend=None, dps=None, seed=None,
                         resample=False, progress=None, validate=None):
    """Learn a one-head Transformer (P1 one-layer reduction): W by P1 Thm 4.1 on
    antisymmetric queries (2(d² + d) oracle calls), the FFN f by the exact ReLU-network
    learner on length-1 queries T([x]) = f(x); then T(X) = f(p_W(X)).  Raises NotIdentifiable
    when V A w = 0 (W not identifiable), NotTransformer when the two parts disagree.
    ``progress(stage, done, total)``: the attention part's stages, then "FFN".
    ``validate``: validation queries of the whole Transformer after the run (see
    :func:`learn_transformer`)."""
    progress = progress or _silent
    n_valid = validation_count(validate, 1)
    orc, be, num = _setup(oracle, dim, backend, dps)
    _reserve(orc, dim * dim + dim, n_valid)
    start, q0, first = time.perf_counter(), orc.queries, len(orc.transcript)
    rng = random.Random(seed)
    att = _learn_attention(orc, dim, 1, None, be, rng.getrandbits(32), resample, single=True,
                           progress=progress)
    att_calls = orc.queries - q0
    progress("FFN", 0, None)
    ffn = learn_relu_ffn(lambda x: orc([x]), dim, hidden=hidden, backend=be,
                         seed=rng.getrandbits(32), resample=resample)
    ell = _half_v(att.heads, num)
    if not num.vec_eq(ffn.form.linear, ell):
        raise NotTransformer("the linear part of the FFN (length-1 queries) differs from half "
                             "the antisymmetric head's v: not a one-head Transformer",
                             linear=[str(x) for x in ffn.form.linear], half_v=[str(x) for x in ell])
    W = att.heads[0].W
    form = KinkForm([W], ell, ffn.form.terms, dim)
    model, unique = transformer_from_kink_form(form, num)
    checked = _certify(model, orc.transcript[first:], be, num)
    res = _result("transformer-p1", dim, be, att, model, form, unique, orc, q0, first,
                  att_calls, start, ffn.extra.get("attempts", []), checked, 1)
    return _validate(res, orc, 1, n_valid, seed, num, progress)


def _validate(res, orc, H0, count, seed, num, progress):
    """Validation queries of the recovered Transformer (:mod:`.validation`: three distinct
    tokens, length ≥ 2H₀ + 2; exact equality in Q(t), or the learner's own tolerance on mp,
    which has no error bar here), then ``res.proves`` (:mod:`.proves`)."""
    from ..result.proves import state
    from ..result.validation import validate
    validate(res, orc, H0, count, random.Random(f"validation:{seed}"),
             close=None if num.exact else num.eq, progress=progress)
    units = ("identified up to permutation and positive rescaling"
             if getattr(res, "units_identified", False) else
             "not identifiable (a functionally equivalent Transformer is returned)")
    return state(res, H0, f"the recovered one-layer Transformer reproduces all {res.queries} "
                          f"answers exactly in Q(t); its hidden units are {units}; no "
                          f"uniqueness among Transformers giving these answers is claimed")


def learn_transformer(oracle: OracleLike, dim: int, heads: int | None = None,
                      heads_bound: int | None = None, hidden: int | None = None,
                      backend: BackendLike | None = None, dps: int | None = None,
                      seed: int | None = None, method: str = "p2", resample: bool = False,
                      progress: Progress | None = None,
                      validate: int | None = None) -> TransformerResult:
    """One-layer Transformer learner (docs/design.md §1, §4.5): ``method="p2"`` (P2 Transformer
    extension, any number of heads) or ``"p1"`` (P1 one-layer reduction, one head).
    ``progress``, if given, is called as ``progress(stage, done, total)``.
    ``validate`` (default None: 2H₀ + 2; 0: none) validation queries of the whole
    Transformer follow the run, counted apart (``result.validation_queries``;
    :mod:`.validation`); a mismatch is OutOfClass.  ``result.proves`` says what the result
    proves."""
    if method == "p1":
        if (heads or 1) != 1 or heads_bound not in (None, 1):
            raise ValueError("the P1 one-layer reduction covers a single head")
        return learn_transformer_p1(oracle, dim, hidden=hidden, backend=backend, dps=dps,
                                    seed=seed, resample=resample, progress=progress,
                                    validate=validate)
    if method != "p2":
        raise ValueError(f"method must be 'p1' or 'p2', got {method!r}")
    return learn_transformer_p2(oracle, dim, heads=heads, heads_bound=heads_bound,
                                hidden=hidden, backend=backend, dps=dps, seed=seed,
                                resample=resample, progress=progress, validate=validate)


def _result(algorithm, d, be, att, model, form, unique, orc, q0, first, att_calls, start,
            failures, checked, H):
    total = orc.queries - q0
    transcript = orc.transcript[first:]
    res = TransformerResult(
        algorithm=algorithm, dim=d, backend=be.name, heads=list(att.heads), queries=total,
        max_length=max(len(t) for t, _ in transcript), expected_queries=None,
        expected_max_length=None, transcript=transcript, transformer=model, form=form,
        attention_queries=att_calls, ffn_queries=total - att_calls, units_identified=unique,
        extra={"attention_result": att, "attempts": failures,
               "attention_expected_calls": 2 * att.expected_queries if att.expected_queries
               else None})
    res.certificate = {"certified": True, "answers_checked": checked} if be.name == "exact" \
        else None
    res.notes.append(f"attention part: {att.queries} antisymmetric queries = {att_calls} "
                     f"oracle calls; FFN part: {total - att_calls} oracle calls")
    if not unique:
        res.notes.append("the hidden units are not identifiable up to permutation and positive "
                         "rescaling (antiparallel units or a non-unique orientation); the "
                         "Transformer returned is functionally equivalent")
    res.seconds = time.perf_counter() - start
    return res


def compare_recovery(model, result, be):
    """(recovered, error, tolerance, fields) for ``exactattn learn transformer``: exact —
    equal kink forms (the function's canonical form, exactattn.models.transformer); mp — the
    kink-form distance (transformer_distance) within 10^(−dps/2)."""
    from ...models.transformer import same_transformer_function, transformer_distance
    dps = getattr(be, "dps", None) or 30
    err = transformer_distance(model, result.transformer, dps=dps)
    if be.name == "exact":
        recovered, tol = same_transformer_function(model, result.transformer), Fraction(0)
    else:
        import mpmath
        tol = mpmath.mpf(10) ** (-(dps // 2))
        recovered = bool(err <= tol)
    att = result.extra["attention_result"]
    fields = {"hidden": model.hidden, "attention_queries": result.attention_queries,
              "attention_antisymmetric_queries": att.queries,
              "attention_expected_calls": result.extra.get("attention_expected_calls"),
              "ffn_queries": result.ffn_queries, "recovered_units": result.transformer.hidden,
              "units_identified": result.units_identified}
    return recovered, err, tol, fields
