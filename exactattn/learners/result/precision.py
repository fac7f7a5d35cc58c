"""The oracle's precision and the error bar of an inexact result (docs/design.md §8: "inexact
backends prove less, and say so"; §4.4).

**Oracle precision η.**  An mp / float answer ŷ is taken to be within

    η · max(1, |ŷ|)          (relative precision, the default)   or   η   (absolute, ±τ noise)

of the true output.  It is stated by the user (``oracle_precision=η`` in Python,
``--oracle-digits N`` for η = 10^−N on the command line) or inferred, in this order:

1. an :class:`~exactattn.Oracle` that declares additive noise ±τ: η = τ absolute (plus the
   float64 rule below on a float oracle);
2. an Oracle that declares rounding to k significant digits: η = 5·10^−k relative;
3. every answer exactly representable in float64 (a mantissa of ≤ 53 bits), or the float
   backend: η = 2⁸·2⁻⁵² ≈ 5.7·10⁻¹⁴ relative — 256 units in the last place, for the
   oracle's own float64 rounding (measured worst case 15 ulps over random models up to
   d = 32, H = 8); state the precision for anything noisier;
4. otherwise (answers of an mp oracle at dps D): η = 10^(3−D) relative.

An inferred η is an assumption about the oracle, and the error bar is valid under it; say
so (``OraclePrecision.source``).

**Working precision.**  From η: ⌈−log₁₀ η⌉ + 10 guard digits, at least ``MIN_DPS`` (15);
an explicit ``dps`` overrides it.  Float results are computed at 53 bits.

**Approximate tolerances** (the tolerance-based decisions of the first-order path,
:class:`~exactattn.arith.fields.RealField` / matching in
:mod:`exactattn.learners.p2.sensitivity`): zero tests η^(3/4), interpolation η^(1/2),
matching and residuals η^(1/3) — one rule, here.  The certified path (balls) needs none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath

from ...arith.ball import BallBackend, ball
from ...arith.mp import MIN_DPS
from ...errors import IllConditioned

__all__ = ["OraclePrecision", "ErrorBar", "infer_precision", "stated_precision",
           "working_dps", "working_bits", "approximate_tolerances", "backend_precision", "FLOAT64_PRECISION",
           "DEFAULT_ACCURACY", "GUARD_DIGITS",
           "bar_for", "check_accuracy"]

#: η inferred for float64 answers: 2⁸ units in the last place (module docstring, rule 3)
FLOAT64_PRECISION = Fraction(2 ** 8, 2 ** 52)
#: guard digits of the working precision beyond the oracle's
GUARD_DIGITS = 10
#: the accuracy the command line asks of an inexact result when --accuracy is not given
DEFAULT_ACCURACY = Fraction(1, 10 ** 6)


@dataclass(frozen=True)
class OraclePrecision:
    """Each answer ŷ is within ``eta``·max(1, |ŷ|) (``relative``) or ``eta`` (absolute) of
    the true output; ``source`` says where η comes from (module docstring)."""

    eta: Fraction
    relative: bool = True
    source: str = "stated"

    def radius(self, y):
        """The radius of the answer ball around ŷ, as a Fraction-friendly upper bound."""
        if not self.relative:
            return self.eta
        return self.eta * max(1, abs(y))

    @property
    def digits(self) -> int:
        """⌈−log₁₀ η⌉ (0 for η ≥ 1)."""
        if self.eta <= 0:
            return 10 ** 6
        return max(0, math.ceil(-math.log10(self.eta)))

    def scaled(self, factor) -> "OraclePrecision":
        return OraclePrecision(Fraction(self.eta) * Fraction(factor), self.relative,
                               f"{self.source}, scaled by {factor}")

    def describe(self) -> dict:
        return {"eta": f"{float(self.eta):.3g}", "relative": self.relative,
                "source": self.source, "digits": self.digits}

    def __str__(self):
        kind = "·max(1,|y|)" if self.relative else " (absolute)"
        return f"η = {float(self.eta):.3g}{kind} ({self.source})"


def stated_precision(value) -> OraclePrecision:
    """``oracle_precision=`` as given: an OraclePrecision, or a number η > 0 (relative)."""
    if isinstance(value, OraclePrecision):
        return value
    if isinstance(value, bool):
        raise TypeError("oracle_precision must be a positive number, not a bool")
    try:
        eta = Fraction(value) if not isinstance(value, float) else Fraction(repr(value))
    except (TypeError, ValueError):
        try:
            eta = Fraction(str(value))
        except (TypeError, ValueError):
            raise ValueError(f"oracle_precision must be a positive number, got {value!r}") \
                from None
    if not 0 < eta < 1:
        raise ValueError(f"oracle_precision must lie in (0, 1), got {value!r}")
    return OraclePrecision(eta, True, "stated")


def _fits_float64(y) -> bool:
    if isinstance(y, float):
        return True
    mpf = getattr(y, "_mpf_", None)
    if mpf is None:
        return False
    return mpf[1].bit_length() <= 53 if mpf[1] else True


def infer_precision(oracle, answers, stated=None) -> OraclePrecision:
    """η for an inexact run (module docstring, rules 1–4); ``stated`` wins when given."""
    if stated is not None:
        return stated_precision(stated)
    noise = getattr(oracle, "noise", None)
    be = getattr(oracle, "backend", None)
    is_float = getattr(be, "name", None) == "float" or all(_fits_float64(y) for y in answers)
    if noise is not None and hasattr(noise, "tau"):
        tau = Fraction(noise.tau) if not isinstance(noise.tau, float) \
            else Fraction(repr(noise.tau))
        # τ plus the rounding of the noisy answer itself (float64 rule, or 4 units of the mp
        # oracle's dps), as an absolute bound over |answers| ≤ max |ŷ|
        unit = FLOAT64_PRECISION if is_float else backend_precision(be).eta * 4
        top = max((abs(Fraction(float(y))) for y in answers), default=Fraction(1))
        return OraclePrecision(tau + unit * max(1, top), False,
                               f"additive noise ±{float(tau):.3g} + the oracle's rounding")
    if noise is not None and hasattr(noise, "digits"):
        return OraclePrecision(Fraction(5, 10 ** noise.digits), True,
                               f"rounding to {noise.digits} significant digits")
    if is_float:
        return OraclePrecision(FLOAT64_PRECISION, True, "float64 answers (inferred)")
    dps = getattr(be, "dps", None) or max(MIN_DPS, _answer_digits(answers))
    return OraclePrecision(Fraction(1, 10 ** max(1, dps - 3)), True,
                           f"mp oracle at dps {dps} (inferred)")


def _answer_digits(answers) -> int:
    bits = max((y._mpf_[1].bit_length() for y in answers if hasattr(y, "_mpf_")), default=53)
    return int(bits * math.log10(2))


def working_dps(precision: OraclePrecision, dps=None) -> int:
    """The learner's working precision (module docstring): ``dps`` if given, else the
    oracle's digits + GUARD_DIGITS, at least MIN_DPS."""
    if dps is not None:
        return dps
    return max(MIN_DPS, precision.digits + GUARD_DIGITS)


def working_bits(dps: int) -> int:
    """Binary precision for ``dps`` decimal digits (plus 8 guard bits)."""
    return int(math.ceil(dps * math.log2(10))) + 8


def backend_precision(be) -> OraclePrecision:
    """The unit precision of a backend's own arithmetic: 10^−dps (mp), float64's rule (float)."""
    if getattr(be, "name", None) == "mp":
        return OraclePrecision(Fraction(1, 10 ** be.dps), True, f"mp arithmetic at dps {be.dps}")
    return OraclePrecision(FLOAT64_PRECISION, True, "float64 arithmetic")


def approximate_tolerances(precision: OraclePrecision) -> dict:
    """The thresholds of the tolerance-based (first-order) path, from η alone (module
    docstring): zero η^(3/4), interpolation η^(1/2), matching / residual η^(1/3)."""
    eta = float(precision.eta)
    return {"zero": eta ** 0.75, "interpolation": eta ** 0.5, "matching": eta ** (1 / 3),
            "residual": eta ** (1 / 3)}


@dataclass
class ErrorBar:
    """What an inexact result proves about its parameters (docs/design.md §8).

    ``bound`` bounds max |Δ| over every entry of every recovered canonical W_h and v_h
    against the true ones (heads matched by the enclosures);
    ``method`` is "ball" (a certified enclosure, valid for every answer within the oracle
    precision — rigorous under ``assumes``) or "first-order" (C·η from the sensitivity
    constant C: a limit statement as η → 0, not rigorous); ``precision`` is the
    OraclePrecision used; ``enclosure`` holds the balls (heads as (W, v) of arb) for the
    ball method; ``constant`` is bound/η (the certified constant for "ball", C for
    "first-order")."""

    bound: object
    method: str
    precision: OraclePrecision
    assumes: str
    working_dps: int | None = None
    constant: object = None
    enclosure: list | None = field(default=None, repr=False)
    details: dict = field(default_factory=dict)

    @property
    def rigorous(self) -> bool:
        return self.method == "ball"

    def within(self, accuracy) -> bool:
        """Whether the bar is below ``accuracy`` (a number; Fractions compared exactly)."""
        return _as_mpf(self.bound) <= _as_mpf(accuracy)

    def summary(self) -> dict:
        import mpmath
        return {"bound": mpmath.nstr(self.bound, 6), "method": self.method,
                "rigorous": self.rigorous, "precision": self.precision.describe(),
                "constant": None if self.constant is None else mpmath.nstr(self.constant, 6),
                "working_dps": self.working_dps, "assumes": self.assumes,
                **{k: v for k, v in self.details.items() if isinstance(v, (str, int, bool))}}

    def __str__(self):
        import mpmath
        kind = "certified enclosure" if self.rigorous else "first-order C·η, not rigorous"
        return f"±{mpmath.nstr(self.bound, 3)} ({kind}; {self.precision})"


def _as_mpf(x):
    import mpmath
    if isinstance(x, Fraction):
        with mpmath.workprec(256):
            return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def bar_for(enclosure_heads, reported_heads, work_ctx, bits):
    """max over entries of an upper bound of |ball − reported value|: the ball radius plus
    the distance of the reported number (rounded midpoint) from the ball's midpoint."""
    with BallBackend(bits).working():
        return _bar(enclosure_heads, reported_heads, work_ctx)


def _bar(enclosure_heads, reported_heads, work_ctx):
    worst = mpmath.mpf(0)
    for (eW, ev), (W, v) in zip(enclosure_heads, reported_heads):
        for b, x in zip([e for r in eW for e in r] + list(ev),
                        [e for r in W for e in r] + list(v)):
            top = (b - ball(x)).abs_upper()
            man, exp = top.mid().man_exp()
            with work_ctx.workprec(max(work_ctx.prec, 64)):
                val = work_ctx.ldexp(work_ctx.mpf(int(man)), int(exp))
            worst = max(worst, mpmath.mpf(val))
    return worst


def check_accuracy(bar, accuracy, sep):
    """IllConditioned when the bar is not below the asked accuracy (the precision that would
    do, scaling the bar linearly)."""
    if accuracy is None or bar.within(accuracy):
        return
    prec, bound = bar.precision, bar.bound
    need = prec.scaled(float(accuracy) / float(bound))
    raise IllConditioned(
        f"the error bar {mpmath.nstr(bound, 3)} ({bar.method}) exceeds the asked accuracy "
        f"{accuracy}: the oracle precision {prec} is not enough (about {float(need.eta):.2g} "
        f"would be, the bar scaling linearly)", error_bar=mpmath.nstr(bound, 6),
        accuracy=str(accuracy), precision=prec.describe(),
        needed_precision=f"{float(need.eta):.3g}", pole_separation=sep, method=bar.method)
