"""Exact learning of a bias-free ReLU network f(x) = Σ_j w_j ReLU(b_j·x) on Rⁿ from value
queries: the FFN learner of the P1 one-layer reduction (for one head, the length-1 queries
T([x]) = Σ_j w_j ReLU((V a_j)·x) are such a network).

f is positively homogeneous and piecewise linear; its canonical form is the kink form
f(x) = ℓ·x + Σ_m c_m |N_m·x| (exactattn.models.transformer.KinkForm): one term per hyperplane
N_m·x = 0 on which units sit.  The learner finds the hyperplanes from kinks along segments:

1. random basis q, p_1, …, p_{n−1} (exact: integer box; mp: Gaussian);
2. for each i, the half-circle of directions p_i → q → −p_i in the plane span(p_i, q) (two
   segments) meets every hyperplane exactly once: find the kinks on both segments
   (:func:`segment_kinks`: lines through sample pairs at both ends of an interval, their
   intersection is the kink; verified by querying it and one more point; otherwise the
   interval is split);
3. the slope jump of a kink, rescaled to γ = 2c_m|N_m·q| (the same for every plane sharing q),
   matches the kinks of different planes — as the residues match heads in the multi-head
   learner; a hyperplane's kink points x*_{m,1…n−1} and N_m·q = 1 give N_m by one exact
   linear solve, and c_m = γ/2;
4. ℓ from the values at q, p_1, …, p_{n−1};
5. certification: the kink form reproduces every answer (exactly on the exact backend).

Conditions (general position, probability one over the random basis): no hyperplane
contains q or a p_i; the γ of distinct hyperplanes differ; the kink points of a hyperplane
span it.  The number of hyperplanes must not exceed ``hidden`` when a bound is given.
Violations are named failures (AmbiguousMatching, SingularBasis, NotReluNetwork,
TooManyUnits), never a wrong network.  Units are recovered up to permutation and positive
rescaling (units_from_kink_form); antiparallel units are not identifiable from f.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from fractions import Fraction

from ...arith import get_backend
from ...errors import (AmbiguousMatching, CertificationFailed, LearningFailure, SingularBasis,
                      SingularSystem)
from ...models.transformer import KinkForm, Scalars, _unit_form, normalize_direction, \
    units_from_kink_form

__all__ = ["learn_relu_ffn", "ReluResult", "segment_kinks", "NotReluNetwork", "TooManyUnits"]

DEFAULT_BOX = 1000


class NotReluNetwork(LearningFailure):
    """The answers are not those of a bias-free ReLU network (with the stated width)."""

    reason = "not-relu-network"


class TooManyUnits(LearningFailure):
    """More hyperplanes of units (kinks) than the stated bound on the hidden width."""

    reason = "too-many-units"


@dataclass
class ReluResult:
    """A learned bias-free ReLU network: its kink form, realizing units (w, b), whether the
    units are the network's own (unique orientation), and the query accounting."""

    form: KinkForm
    units: list
    units_unique: bool
    queries: int
    transcript: list = field(default_factory=list, repr=False)
    extra: dict = field(default_factory=dict, repr=False)
    seconds: float | None = None

    def unit_form(self, num: Scalars | None = None):
        return _unit_form((), self.units, num or Scalars(True))


# ---------------------------------------------------------------------- queries
class _Recorder:
    """Value queries x ↦ f(x), answers as backend scalars (exact: rationals), counted,
    recorded and cached (a point is never asked twice)."""

    def __init__(self, f, be):
        self.f, self.be = f, be
        self.cache = {}
        self.transcript = []

    def __call__(self, x):
        key = tuple(x)
        if key not in self.cache:
            y = self.f(list(x))
            self.cache[key] = self._scalar(y, x)
            self.transcript.append((key, self.cache[key]))
        return self.cache[key]

    def _scalar(self, y, x):
        be = self.be
        if be.name != "exact":
            return be.scalar(y, "answer")
        if hasattr(y, "is_rational"):
            if not y.is_rational():
                raise NotReluNetwork(f"f({_show(x)}) = {y} is not rational: the answer of a "
                                     f"ReLU network (a length-1 query) is", point=_show(x))
            return y.as_rational()
        return be.scalar(y, "answer")

    @property
    def queries(self) -> int:
        return len(self.transcript)


def _show(x):
    return [str(a) for a in x]


# ---------------------------------------------------------------------- 1-D kinks
class _Segment:
    """φ(s) = f((1 − s)·a + s·b), s ∈ [0, 1]: piecewise linear with a kink wherever the
    segment crosses a hyperplane of f."""

    def __init__(self, rec, a, b, num):
        self.rec, self.a, self.b, self.num = rec, a, b, num

    def point(self, s):
        return [(1 - s) * x + s * y for x, y in zip(self.a, self.b)]

    def __call__(self, s):
        return self.rec(self.point(s))


def segment_kinks(seg: _Segment, rng, one, limit: int, budget: int, max_depth: int = 60):
    """All kinks (s, δ) of φ on (0, 1), δ the slope jump (P1 one-layer reduction, step 2).

    [0, 1] is cut into intervals on which φ is verified linear: an interval is linear when
    its known samples together with at least one fresh random interior sample are collinear.
    Otherwise the lines through the two samples at each end meet at c — the kink, if the
    interval holds exactly one — and the interval is split at c (queried), or at a middle
    sample when c is not between them.  The kinks are the cut points where the lines of the
    two sides differ.  Each test can only be fooled by an algebraic coincidence in the random
    samples (probability zero); comparisons are exact on the exact backend.  Raises
    TooManyUnits past ``limit`` kinks, NotReluNetwork past ``budget`` queries, ``max_depth``
    nested splits or 20(limit + 2) intervals (a function that is not piecewise linear)."""
    num = seg.num
    start = seg.rec.queries
    known = {0 * one: seg(0 * one), one: seg(one)}
    pieces = []
    todo = [(0 * one, one, 0, None)]
    while todo:
        lo, hi, depth, focus = todo.pop()
        if depth > max_depth or seg.rec.queries - start > budget or \
                len(pieces) + len(todo) > 20 * (limit + 2):
            raise NotReluNetwork("the values along a segment are not piecewise linear with few "
                                 "kinks (split too often): not a bias-free ReLU network",
                                 depth=depth, queries=seg.rec.queries - start)
        test = _test_interval(seg, lo, hi, known, rng, one, num, focus)
        if test is None:
            pieces.append((lo, hi))
        else:
            cut, crossing = test
            focus = cut if crossing else None
            todo += [(lo, cut, depth + 1, focus), (cut, hi, depth + 1, focus)]
    kinks = _kinks_from_pieces(sorted(pieces), known, num)
    if len(kinks) > limit:
        raise TooManyUnits(f"{len(kinks)} kinks on one segment but hidden ≤ {limit}: more "
                           f"hyperplanes of units than the bound", kinks=len(kinks), bound=limit)
    return kinks


def _frac(rng, lo, hi, one):
    """A random number in (lo, hi)·one/100 of the backend's kind (exact: a rational)."""
    if isinstance(one, Fraction):
        return Fraction(rng.randint(lo * 100 + 1, hi * 100 - 1), 10000)
    return one * rng.uniform(lo / 100, hi / 100)


def _line(s0, f0, s1, f1):
    m = (f1 - f0) / (s1 - s0)
    return m, f0 - m * s0


def _inside(known, lo, hi):
    return sorted(s for s in known if lo <= s <= hi)


def _fresh(seg, known, lo, hi, rng, one, focus=None):
    """Sample φ at a fresh random point: right beside ``focus`` (a cut made at the
    intersection of two lines: a random point within 2^−40 of the gap next to it — exact; a
    10^(−dps/4) fraction on mp) or in the largest gap between known samples."""
    pts = _inside(known, lo, hi)
    if focus is not None:
        k = pts.index(focus)
        a, b = (pts[k], pts[k + 1]) if k + 1 < len(pts) else (pts[k], pts[k - 1])
        s = a + (b - a) * _frac(rng, 100, 200, one) * _tiny(one)
    else:
        a, b = max(zip(pts, pts[1:]), key=lambda g: g[1] - g[0])
        s = a + (b - a) * _frac(rng, 25, 75, one)
    known[s] = seg(s)


def _tiny(one):
    if isinstance(one, Fraction):
        return Fraction(1, 1 << 40)
    return one / 10 ** max(8, one.context.dps // 4)


def _test_interval(seg, lo, hi, known, rng, one, num, focus=None):
    """None when φ is verified linear on [lo, hi]; otherwise (point to split at, whether it
    is a located kink).

    After a cut at a located kink c the fresh sample is put right beside c: were c not a
    kink (the lines meet at c but the kinks lie beyond it), φ is off the line there."""
    _fresh(seg, known, lo, hi, rng, one, focus)
    if len(_inside(known, lo, hi)) < 4:
        _fresh(seg, known, lo, hi, rng, one)
    pts = _inside(known, lo, hi)
    vals = [known[s] for s in pts]
    m, b = _line(pts[0], vals[0], pts[-1], vals[-1])
    if all(num.eq(y, m * s + b) for s, y in zip(pts[1:-1], vals[1:-1])):
        return None
    for k in range(1, len(pts) - 2):
        c = _kink_in_gap(seg, pts, vals, k, num)
        if c is not None:
            known[c] = seg(c)
            return c, True
    return _end_cut(pts, vals, num), False


def _collinear(pts, vals, i, num):
    m, b = _line(pts[i - 1], vals[i - 1], pts[i + 1], vals[i + 1])
    return num.eq(vals[i], m * pts[i] + b)


def _kink_in_gap(seg, pts, vals, k, num):
    """The intersection c of the lines through the samples left and right of gap k, when it
    lies in the gap and φ(c) is on both lines (a kink there, if the gap holds one)."""
    m1, b1 = _line(pts[k - 1], vals[k - 1], pts[k], vals[k])
    m2, b2 = _line(pts[k + 1], vals[k + 1], pts[k + 2], vals[k + 2])
    if num.eq(m1, m2):
        return None
    c = (b2 - b1) / (m1 - m2)
    if not pts[k] < c < pts[k + 1] or num.eq(c, pts[k]) or num.eq(c, pts[k + 1]):
        return None
    # a rejected c is not kept as a sample (nested intersections would double its size)
    return c if num.eq(seg(c), m1 * c + b1) else None


def _end_cut(pts, vals, num):
    """No kink located between samples: isolate an end gap that is off its neighbours' line
    (the first or last gap then gets fresh samples), else cut at the middle sample."""
    if not _collinear(pts, vals, 1, num):
        return pts[1]
    if not _collinear(pts, vals, len(pts) - 2, num):
        return pts[-2]
    return pts[len(pts) // 2]


def _kinks_from_pieces(pieces, known, num):
    """(s, slope jump) at the cut points where the lines of adjacent pieces differ."""
    slopes = [_line(lo, known[lo], hi, known[hi])[0] for lo, hi in pieces]
    return [(pieces[i][1], slopes[i + 1] - slopes[i]) for i in range(len(pieces) - 1)
            if not num.eq(slopes[i], slopes[i + 1])]


# ---------------------------------------------------------------------- the learner
def learn_relu_ffn(f, n, hidden=None, backend="exact", dps=None, seed=None, box=None,
                   budget=None, resample=False, max_attempts=3):
    """Learn f(x) = Σ_j w_j ReLU(b_j·x) on Rⁿ from value queries (P1 one-layer reduction:
    the FFN part, from length-1 queries T([x])).

    ``f`` is any callable on a list of n numbers (answers: exact — rationals or rational
    ExpElements; mp — numbers).  ``hidden`` bounds the number of hyperplanes (hidden units).
    Returns a :class:`ReluResult` (kink form, units up to permutation and positive rescaling,
    ``queries``); raises a named LearningFailure when a condition of the module docstring
    fails — or, with ``resample=True``, retries with a fresh basis (the failed attempts'
    queries are counted and listed in ``extra["attempts"]``)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    be = get_backend(backend, dps)
    if be.name not in ("exact", "mp"):
        raise ValueError("the ReLU learner runs on the exact or mp backend")
    num = Scalars.for_backend(be)
    one = Fraction(1) if num.exact else be.scalar(1)
    rng = random.Random(seed)
    rec = _Recorder(f, be)
    start = time.perf_counter()
    limit = hidden if hidden is not None else 32
    budget = budget or 40 * (limit + 2)
    failures = []
    for attempt in range(1, max_attempts + 1):
        try:
            form, extra = _attempt(rec, n, rng, one, num, be, limit, budget, box)
            break
        except LearningFailure as e:
            failures.append({"attempt": attempt, "reason": e.reason, "message": str(e),
                             "queries": rec.queries})
            if not resample or attempt == max_attempts or isinstance(e, TooManyUnits):
                e.details.setdefault("attempts", failures)
                raise
    extra["attempts"] = failures
    units, unique = units_from_kink_form(form, num)
    return ReluResult(form, units, unique, rec.queries, list(rec.transcript), extra,
                      time.perf_counter() - start)


def _attempt(rec, n, rng, one, num, be, limit, budget, box):
    """One draw of the basis: steps 1–5 of the module docstring."""
    if n == 1:
        form, extra = _learn_line(rec, one, num), {}
    else:
        q, P = _draw_basis(rng, n, box or DEFAULT_BOX, be, one)
        planes = [_plane_kinks(rec, p, q, rng, one, num, limit, budget) for p in P]
        terms = _hyperplanes(planes, q, be, num)
        if len(terms) > limit:
            raise TooManyUnits(f"{len(terms)} hyperplanes of units but hidden ≤ {limit}",
                               hyperplanes=len(terms), bound=limit)
        linear = _linear_part(rec, [q] + P, terms, be, num)
        form = KinkForm((), linear, _canonical_terms(terms, num), n)
        extra = {"q": q, "p": P, "kinks_per_plane": [len(k) for k in planes]}
    _certify(rec, form, num, be)
    return form, extra


def _learn_line(rec, one, num):
    """n = 1: f(x) = ℓx + c|x| from f(1) and f(−1)."""
    fp, fm = rec([one]), rec([-one])
    half = num.half
    c = half * (fp + fm)
    terms = [] if num.is_zero(c) else [((one,), c)]
    return KinkForm((), (half * (fp - fm),), terms, 1)


def _draw_basis(rng, n, box, be, one):
    """q, p_1 … p_{n−1}: integer box (exact) or Gaussian (mp); a singular draw is redrawn."""
    for _ in range(100):
        if num_exact(one):
            rows = [[rng.randint(-box, box) for _ in range(n)] for _ in range(n)]
        else:
            rows = [[be.scalar(rng.gauss(0, 1)) for _ in range(n)] for _ in range(n)]
        try:
            be.inv(rows)
        except SingularSystem:
            continue
        return rows[0], rows[1:]
    raise SingularBasis("no nonsingular random basis drawn")


def num_exact(one) -> bool:
    return isinstance(one, Fraction)


def _plane_kinks(rec, p, q, rng, one, num, limit, budget):
    """[(x*, γ)] for the half-circle p → q → −p (module docstring, steps 2–3): x* the kink
    point, γ = 2c|N·q| from the slope jump δ: γ = δ(1 − s) on p → q, γ = δ·s on q → −p."""
    out = []
    minus_p = [-x for x in p]
    for a, b, scale in ((p, q, lambda s: 1 - s), (q, minus_p, lambda s: s)):
        seg = _Segment(rec, a, b, num)
        for s, delta in segment_kinks(seg, rng, one, limit, budget):
            out.append((seg.point(s), delta * scale(s)))
    if len(out) > limit:
        raise TooManyUnits(f"{len(out)} kinks in one plane but hidden ≤ {limit}",
                           kinks=len(out), bound=limit)
    return out


def _hyperplanes(planes, q, be, num):
    """Match kinks across planes by γ, solve [x*_1; …; x*_{n−1}; q]·N = e_n; c = γ/2."""
    ref = planes[0]
    for i, (_, g) in enumerate(ref):
        if any(num.eq(g, h) for _, h in ref[i + 1:]):
            raise AmbiguousMatching("two hyperplanes show the same slope jump γ = 2c|N·q|; "
                                    "their kinks cannot be matched (resample q)", gamma=str(g))
    for k, plane in enumerate(planes[1:], 2):
        if len(plane) != len(ref):
            raise NotReluNetwork(f"plane 1 shows {len(ref)} kinks but plane {k} shows "
                                 f"{len(plane)}: a hyperplane contains q or p_i, or f is not "
                                 f"a bias-free ReLU network", counts=[len(p) for p in planes])
    n = len(q)
    terms = []
    for x0, g in ref:
        rows = [x0]
        for k, plane in enumerate(planes[1:], 2):
            hit = [x for x, h in plane if num.eq(g, h)]
            if len(hit) != 1:
                raise AmbiguousMatching(f"{len(hit)} kinks of plane {k} match γ = {g}",
                                        gamma=str(g), plane=k)
            rows.append(hit[0])
        rhs = [[0 * g] for _ in range(n - 1)] + [[1 + 0 * g]]
        try:
            N = [r[0] for r in be.solve(rows + [q], rhs)]
        except SingularSystem:
            raise SingularBasis("the kink points of a hyperplane do not span it (or the "
                                "hyperplane contains q)", gamma=str(g)) from None
        terms.append((N, num.half * g))
    return terms


def _canonical_terms(terms, num):
    out = []
    for N, c in terms:
        lam, M = normalize_direction(N, num)
        out.append((M, c * abs(lam)))
    return sorted(out) if num.exact else out


def _abs_sum(terms, x):
    return sum((c * abs(sum((a * b for a, b in zip(N, x)), 0 * c)) for N, c in terms), 0)


def _linear_part(rec, points, terms, be, num):
    """ℓ from ℓ·x = f(x) − Σ c|N·x| at the basis points (already queried)."""
    rhs = [[rec(x) - _abs_sum(terms, x)] for x in points]
    return tuple(r[0] for r in be.solve(points, rhs))


def _certify(rec, form, num, be):
    """The kink form must reproduce every answer (exactly on the exact backend)."""
    for k, (x, y) in enumerate(rec.transcript):
        pred = sum((l * a for l, a in zip(form.linear, x)), 0 * y) + \
            _abs_sum(form.terms, x)
        if not num.eq(pred, y):
            raise CertificationFailed(f"the recovered ReLU network misses answer {k}",
                                      index=k, point=_show(x), answer=str(y),
                                      predicted=str(pred))
