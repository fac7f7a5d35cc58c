"""Certified ball arithmetic on python-flint's ``arb`` (docs/design.md §2, §8 "inexact backends
prove less, and say so").

A ball [m ± r] stands for every real number within r of m, and every operation returns a
ball that contains every result of the operation on members of its inputs.  Running the
learners' own recovery code (written once against a field / backend interface) on answer
balls [ŷ_k ± η_k] therefore gives, for every recovered parameter, an enclosure that holds
for EVERY answer vector within ±η_k — not only to first order.

* :class:`BallField` — the field interface of the copy-count interpolation
  (:mod:`exactattn.learners.p2.interpolation`): ``is_zero(a)`` is "0 cannot be excluded"
  (0 ∈ a), a pivot is chosen only among balls that exclude 0, and ``roots`` returns
  certified, isolated, real, simple roots (or reports that it could not isolate them).
* :class:`BallBackend` — the few backend operations the recovery uses besides the field
  (conversion, ``log`` of a certainly positive ball, ``solve`` by ball Gaussian elimination,
  ``exp`` and the attention average for re-evaluation).

flint's working precision is global; :meth:`BallBackend.working` sets it for a block.
Nothing here is on the exact path.
"""

from __future__ import annotations

import numbers
from contextlib import contextmanager
from fractions import Fraction

from flint import acb_poly, arb, arb_mat, arb_poly, ctx as _flint_ctx, fmpq

from ..errors import SingularSystem
from .base import Backend

__all__ = ["ball", "BallField", "BallBackend", "upper", "midpoint_mpf", "radius_upper",
           "upper_mpf"]


def _from_mpf(x) -> arb:
    """The exact ball of an mpmath mpf (its binary value, no rounding)."""
    sign, man, exp, _ = x._mpf_
    if not man:
        if exp:  # ±inf or nan
            raise ValueError(f"{x} is not a finite number")
        return arb(0)
    b = arb((man, exp))
    return -b if sign else b


def ball(x, radius=None) -> arb:
    """x as a ball (exact for ints, Fractions — up to the working precision —, floats and
    mpf), widened by ``radius`` ≥ 0 if given.  Non-finite input is refused."""
    if isinstance(x, arb):
        b = x
    elif isinstance(x, bool):
        raise TypeError(f"{x!r} is a bool, not a number")
    elif isinstance(x, int):
        b = arb(x)
    elif isinstance(x, Fraction):
        b = arb(fmpq(x.numerator, x.denominator))
    elif hasattr(x, "_mpf_"):
        b = _from_mpf(x)
    elif isinstance(x, numbers.Real):
        f = float(x)
        if f != f or f in (float("inf"), float("-inf")):
            raise ValueError(f"{x} is not a finite number")
        b = arb(f)
    else:
        raise TypeError(f"cannot make a ball of {x!r}")
    if radius is not None and radius != 0:
        b = b + arb(0, 1) * ball(radius)
    return b


def upper(b: arb) -> arb:
    """An exact upper bound of |b| (a point ball)."""
    return b.abs_upper()


def midpoint_mpf(b: arb, ctx):
    """The midpoint of b as an mpf of mpmath context ``ctx`` (rounded to its precision)."""
    man, exp = b.mid().man_exp()
    return ctx.ldexp(ctx.mpf(int(man)), int(exp))


def _mpf_up(point: arb, ctx):
    """The exact value of a point ball (radius 0) as an mpf of ``ctx`` rounded towards +∞
    (at least 64 bits): never below the value."""
    from mpmath.libmp import from_man_exp
    man, exp = point.man_exp()
    return ctx.make_mpf(from_man_exp(int(man), int(exp), max(ctx.prec, 64), "u"))


def radius_upper(b: arb, ctx):
    """An mpf upper bound of the radius of b (rounded up, never to nearest)."""
    return _mpf_up(b.rad().abs_upper(), ctx)


def upper_mpf(b: arb, ctx):
    """An mpf upper bound of |x| for every x in b (rounded up)."""
    return _mpf_up(b.abs_upper(), ctx)


class BallField:
    """Balls as a field for the backend-generic interpolation (module docstring).

    ``separations`` records, for every denominator whose roots were sought, the smallest
    distance between its approximate poles z_h = −1/r_h (display only: it is what a failure
    reports as the pole separation seen)."""

    exact = False

    def __init__(self):
        self.zero = arb(0)
        self.one = arb(1)
        self.separations: list = []

    def from_int(self, n):
        return arb(n)

    def is_zero(self, a) -> bool:
        """True when 0 lies in the ball: the value cannot be told from 0 at this precision."""
        return a.contains(0)

    def pivot(self, column):
        """Index of the ball excluding 0 with the largest lower bound of |·|, or None when every
        ball contains 0 (the system cannot be certified nonsingular)."""
        best, best_low = None, None
        for i, a in enumerate(column):
            if a.contains(0):
                continue
            low = a.abs_lower()
            if best is None or low > best_low:
                best, best_low = i, low
        return best

    def solve(self, A, b):
        """x with A′x = b′ for EVERY A′, b′ in the balls, or None when that cannot be certified
        (then some A′ may be singular).  Verified solve (Krawczyk / Rump): with R ≈ mid(A)⁻¹
        and x̃ = R·mid(b), the error e = x − x̃ satisfies e = R(b′ − A′x̃) + (I − RA′)e; if
        β = ‖I − RA‖_∞ < 1 (which proves every A′ nonsingular), ‖e‖_∞ ≤ ‖R(b − Ax̃)‖_∞/(1 − β).
        Much tighter than interval Gaussian elimination, whose radii grow with every step.
        Every bound steps outward: β and ‖R(b − Ax̃)‖_∞ are maxima of exact upper bounds
        (point balls), never balls compared by their midpoints."""
        return _verified_solve(A, b)

    def roots(self, coeffs):
        """Certified roots of Σ coeffs[i] m^i for every polynomial in the coefficient balls:
        (roots as real balls with multiplicity 1, complete).

        Isolating balls come from flint's ``acb_poly.roots``; each root is then *proved* real
        by a certain sign change of the ball polynomial across the real interval of its ball.
        The leading coefficient excludes 0, so every polynomial in the balls has degree n;
        n pairwise disjoint intervals with a sign change each hold exactly one root each:
        all n roots are real, simple and enclosed, whatever polynomial of the balls it is."""
        n = len(coeffs) - 1
        if n == 0:
            return [], True
        if coeffs[n].contains(0):
            return [], False
        P = arb_poly(list(coeffs))
        try:
            approx = acb_poly(list(coeffs)).roots()
        except (ValueError, ArithmeticError):
            approx = None
        if approx is None:
            return [], False
        self._record_separation([r.real.mid() for r in approx])
        out = []
        dP = P.derivative()
        for r in approx:
            iv = _sign_change(P, r.real)
            if iv is None:
                return out, False
            out.append(_newton(P, dP, iv))
        out.sort(key=lambda b: b.mid())
        if any(not (a.upper() < b.lower()) for a, b in zip(out, out[1:])):
            return [], False
        return [(b, 1) for b in out], True

    def _record_separation(self, mids):
        poles = [-1 / m for m in mids if not m.is_zero()]
        gaps = [abs(a - b).mid() for i, a in enumerate(poles) for b in poles[i + 1:]]
        if gaps:
            self.separations.append(min(gaps, key=lambda g: g.mid()))

    def __repr__(self):
        return f"BallField(prec={_flint_ctx.prec} bits)"


def _verified_solve(A, b):
    n = len(A)
    Am = arb_mat([[ball(x) for x in row] for row in A])
    bm = arb_mat([[ball(x)] for x in b])
    try:
        R = Am.mid().inv().mid()
    except ZeroDivisionError:
        return None
    xt = (R * bm.mid()).mid()
    z = R * (bm - Am * xt)
    I = arb_mat([[arb(int(i == j)) for j in range(n)] for i in range(n)])
    C = I - R * Am
    # each row sum of |I − RA| and each |z_i| as an exact upper bound (a point ball: the sum
    # of point balls is rounded, so its own upper bound is taken), so that the maxima below
    # compare exact numbers and β, ‖z‖ are upper bounds, not midpoints
    rows = [sum((C[i, j].abs_upper() for j in range(n)), arb(0)).abs_upper() for i in range(n)]
    beta = _max_point(rows)
    if not beta < 1:
        return None
    znorm = _max_point([z[i, 0].abs_upper() for i in range(n)])
    delta = (znorm / (1 - beta)).abs_upper()
    return [xt[i, 0] + z[i, 0] + arb(0, 1) * (rows[i] * delta) for i in range(n)]


def _max_point(points):
    """The largest of exact numbers given as point balls (radius 0)."""
    assert all(p.rad() == 0 for p in points), "upper bounds are point balls"
    return max(points, key=lambda p: p.mid())


def _bisect(P, iv, steps: int = 200):
    """Halve a sign-change interval while the sign at its midpoint is certain (the half with
    the sign change keeps a root of every polynomial of the balls)."""
    lo, hi = iv.lower(), iv.upper()
    s_lo = P(lo) > 0
    for _ in range(steps):
        m = ((lo + hi) / 2).mid()
        pm = P(m)
        if pm.contains(0):
            break
        if (pm > 0) == s_lo:
            lo = m
        else:
            hi = m
    return lo.union(hi)


def _newton(P, dP, iv, steps: int = 200):
    """Interval Newton contraction N(I) = m − P(m)/P′(I) ∩ I: every root of every polynomial of
    the balls that lies in I lies in N(I).  Stops when the width no longer halves; an
    interval on which P′ may vanish is first narrowed by bisection."""
    if dP(iv).contains(0):
        iv = _bisect(P, iv)
    for _ in range(steps):
        d = dP(iv)
        if d.contains(0):
            return iv
        m = iv.mid()
        n = m - P(m) / d
        if not n.overlaps(iv):
            return iv  # cannot happen for a valid root interval; keep the proved one
        new = n.intersection(iv)
        if not new.rad() < iv.rad() / 2:
            return new
        iv = new
    return iv


def _sign_change(P, interval, tries: int = 4):
    """A real ball [lo, hi] ⊇ interval with P(lo), P(hi) of certainly opposite signs for every
    polynomial in the ball polynomial P, or None (widening the interval up to ``tries`` times)."""
    lo, hi = interval.lower(), interval.upper()
    width = hi - lo
    for _ in range(tries):
        a, b = P(lo), P(hi)
        if (a < 0 and b > 0) or (a > 0 and b < 0):
            return lo.union(hi)
        lo, hi = lo - width, hi + width
        width = 3 * width
    return None


class BallBackend(Backend):
    """The backend operations of a recovery on balls (module docstring); ``prec`` bits."""

    name = "ball"
    exact = False
    tolerance = 0

    def __init__(self, prec: int):
        if not isinstance(prec, int) or prec < 16:
            raise ValueError(f"ball precision must be an integer ≥ 16 bits, got {prec!r}")
        self.prec = prec

    @contextmanager
    def working(self):
        """flint's (global) working precision set to ``prec`` for the block."""
        old = _flint_ctx.prec
        _flint_ctx.prec = self.prec
        try:
            yield self
        finally:
            _flint_ctx.prec = old

    def scalar(self, x, where: str = "value"):
        try:
            return ball(x)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{where}: {e}") from None

    def exp(self, score):
        return score.exp()

    def is_zero(self, a) -> bool:
        return a.contains(0)

    def log(self, a):
        if not a > 0:
            raise ValueError(f"log of a ball {a} that is not certainly positive")
        return a.log()

    def to_mpf(self, a, dps: int = 30):
        import mpmath
        ctx = mpmath.MPContext()
        ctx.dps = dps
        return midpoint_mpf(a, ctx)

    def sign(self, a) -> int:
        if a > 0:
            return 1
        if a < 0:
            return -1
        if a.is_zero():
            return 0
        raise ValueError(f"the sign of {a} is not decided at this precision")

    def solve(self, A, B):
        """X with A X = B for every A, B in the balls (flint's certified solver)."""
        cols = [_verified_solve(A, [r[j] for r in B]) for j in range(len(B[0]))]
        if any(c is None for c in cols):
            raise SingularSystem(f"a {len(A)}×{len(A)} ball system is not certified "
                                 f"nonsingular at {self.prec} bits")
        return [[c[i] for c in cols] for i in range(len(A))]

    def matmul(self, A, B):
        zero = arb(0)
        return [[sum((A[i][k] * B[k][j] for k in range(len(B))), zero)
                 for j in range(len(B[0]))] for i in range(len(A))]

    def __repr__(self):
        return f"<exactattn backend ball prec={self.prec} bits>"
