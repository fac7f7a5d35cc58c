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

**Lower-precision arithmetic.**  The same rule, 256 units in the last place, for an oracle
that computes in a shorter float format (:func:`format_precision`): float32 η = 2⁸·2⁻²³ ≈
3.1·10⁻⁵, float16 2⁸·2⁻¹⁰ = 1/4, bfloat16 2⁸·2⁻⁷ = 2 (nothing is certifiable at half
precision; the learners say ill-conditioned and which digits would do).  The unit roundoff
alone (float32 6·10⁻⁸) is not a bound: torch's float32 ``nn.MultiheadAttention`` is off by
up to 13 float32 ulps at default initialisation and 263 with weights 16× larger (the
adapter's tests measure it).  The format is known

* from a declaration: an Oracle carrying ``declared_precision`` (:func:`declared_precision`: an
  OraclePrecision, or the record {"format", "scale", "source"} that the adapters below the
  learners can write — the torch adapter from the module's dtype, the NumPy adapter from
  ``dtype``) — it replaces rule 3, is the rounding unit of rule 1 and is added to rule 2;
* or from the answers: every answer a float32 (a mantissa of ≤ 24 bits) and at least one
  with more than 12 bits (so that a few short dyadic answers such as 0.5 stay float64) — a
  float32 oracle wrapped in a plain function is still read as float32.

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
import sys
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath

from ...arith.ball import BallBackend, ball, upper_mpf
from ...arith.mp import MIN_DPS
from ...arith.numbers import decimal_exponent, exact_fraction, lower_decimal, upper_decimal
from ...errors import IllConditioned

__all__ = ["OraclePrecision", "ErrorBar", "infer_precision", "stated_precision",
           "working_dps", "working_bits", "approximate_tolerances", "backend_precision", "FLOAT64_PRECISION",
           "FLOAT32_PRECISION", "FORMAT_BITS", "format_precision", "declared_precision",
           "DEFAULT_ACCURACY", "GUARD_DIGITS",
           "bar_for", "check_accuracy"]

#: η inferred for float64 answers: 2⁸ units in the last place (module docstring, rule 3)
FLOAT64_PRECISION = Fraction(2 ** 8, 2 ** 52)
#: fraction bits of each float format (one unit in the last place is 2^−bits)
FORMAT_BITS = {"float64": 52, "float32": 23, "float16": 10, "bfloat16": 7}
#: η of float32 answers: 2⁸ float32 units in the last place (module docstring)
FLOAT32_PRECISION = Fraction(2 ** 8, 2 ** 23)
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
    #: how to get more precise answers from this oracle (a declared lower-precision format:
    #: "run the forward pass in float64 …"), or None
    remedy: str | None = None

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
        return decimal_digits(self.eta)

    def scaled(self, factor) -> "OraclePrecision":
        return OraclePrecision(Fraction(self.eta) * Fraction(factor), self.relative,
                               f"{self.source}, scaled by {factor}", self.remedy)

    def describe(self) -> dict:
        out = {"eta": shown_eta(self.eta), "relative": self.relative,
               "source": self.source, "digits": self.digits}
        if self.remedy:
            out["remedy"] = self.remedy
        return out

    def hint(self, needed=None) -> str:
        """What would certify a run that this precision cannot: the digits of ``needed`` (an
        OraclePrecision or η, when known) and the remedy (module docstring)."""
        parts = []
        if needed is not None:
            eta = needed.eta if isinstance(needed, OraclePrecision) else Fraction(needed)
            digits = OraclePrecision(eta).digits
            parts.append(f"answers within about {shown_eta(eta)} ({digits} significant "
                         f"digits, against {self.digits} now) would certify it")
        if self.remedy:
            parts.append(self.remedy)
        return "; ".join(parts)

    def __str__(self):
        kind = "·max(1,|y|)" if self.relative else " (absolute)"
        return f"η = {shown_eta(self.eta)}{kind} ({self.source})"

    def mpf(self):
        """η as an mpmath number at the current working precision (never through a float,
        which is 0 below about 10^−308)."""
        return mpmath.mpf(self.eta.numerator) / self.eta.denominator


def decimal_digits(eta) -> int:
    """⌈−log₁₀ η⌉ for 0 < η, exactly (0 for η ≥ 1): the least k ≥ 0 with 10^−k ≤ η, which
    is −⌊log₁₀ η⌋ (:func:`~exactattn.arith.numbers.decimal_exponent`)."""
    return max(0, -decimal_exponent(Fraction(eta)))


def shown_eta(eta, digits: int = 3) -> str:
    """η for display: ``%.{digits}g`` of its float where float64 holds it, else rounded
    down exactly (:func:`~exactattn.arith.numbers.lower_decimal`: an assumption printed never
    claims more than assumed)."""
    f = float(eta)
    if f >= sys.float_info.min or eta == 0:
        return f"{f:.{digits}g}"
    return lower_decimal(eta, digits)


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


def format_precision(fmt: str, source: str | None = None,
                     remedy: str | None = None) -> OraclePrecision:
    """η of an oracle computing in the float format ``fmt`` ("float64", "float32",
    "float16", "bfloat16"): 2⁸ units in its last place, relative (module docstring).  A
    format shorter than float64 gets a ``remedy`` (default: compute the answers in float64)."""
    if fmt not in FORMAT_BITS:
        raise ValueError(f"unknown float format {fmt!r}: one of {', '.join(FORMAT_BITS)}")
    if remedy is None and fmt != "float64":
        remedy = (f"the answers are computed in {fmt}: compute them in float64 "
                  f"(η {float(FLOAT64_PRECISION):.2g}, {OraclePrecision(FLOAT64_PRECISION).digits}"
                  f" digits) or state the oracle precision")
    return OraclePrecision(Fraction(2 ** 8, 2 ** FORMAT_BITS[fmt]), True,
                           source or f"{fmt} answers (inferred)", remedy)


def declared_precision(oracle):
    """The OraclePrecision an oracle declares (module docstring), or None: its
    ``declared_precision`` as an OraclePrecision, or a record {"format": one of FORMAT_BITS,
    "scale": a factor ≥ 1 (default 1), "source": text}."""
    d = getattr(oracle, "declared_precision", None)
    if d is None or isinstance(d, OraclePrecision):
        return d
    if not isinstance(d, dict) or d.get("format") not in FORMAT_BITS:
        raise ValueError(f"declared_precision must be an OraclePrecision or a record "
                         f"{{'format': one of {', '.join(FORMAT_BITS)}, 'scale', 'source'}}, "
                         f"got {d!r}")
    p = format_precision(d["format"], d.get("source"), d.get("remedy"))
    scale = Fraction(d.get("scale", 1))
    if scale < 1:
        raise ValueError(f"declared_precision scale must be ≥ 1, got {scale}")
    if scale == 1:
        return p
    return OraclePrecision(p.eta * scale, True,
                           f"{p.source}, times {float(scale):.3g} for the bias constant",
                           p.remedy)


def _mantissa_bits(y):
    """Bits of the mantissa of a float / mpf answer (0 for zero), None for anything else."""
    if isinstance(y, float):
        if not math.isfinite(y) or y == 0:
            return 0
        m = Fraction(y).numerator
        return abs(m).bit_length() if m % 2 else _odd(m).bit_length()
    mpf = getattr(y, "_mpf_", None)
    if mpf is None:
        return None
    return abs(mpf[1]).bit_length() if mpf[1] else 0


def _odd(m: int) -> int:
    m = abs(m)
    return m >> ((m & -m).bit_length() - 1)


def _fits_float64(y) -> bool:
    if isinstance(y, float):
        return True
    bits = _mantissa_bits(y)
    return bits is not None and bits <= 53


def _float32_answers(answers) -> bool:
    """Every answer a float32 and one with more than 12 mantissa bits (module docstring)."""
    bits = [_mantissa_bits(y) for y in answers]
    return bool(bits) and all(b is not None and b <= 24 for b in bits) and max(bits) > 12


def infer_precision(oracle, answers, stated=None) -> OraclePrecision:
    """η for an inexact run (module docstring, rules 1–4 and the lower-precision formats);
    ``stated`` wins when given."""
    if stated is not None:
        return stated_precision(stated)
    noise = getattr(oracle, "noise", None)
    be = getattr(oracle, "backend", None)
    declared = declared_precision(oracle)
    is_float = getattr(be, "name", None) == "float" or all(_fits_float64(y) for y in answers)
    if declared is None and noise is None and _float32_answers(answers):
        declared = format_precision("float32", "float32 answers (inferred from the answers)")
    if noise is not None and hasattr(noise, "tau"):
        tau = Fraction(noise.tau) if not isinstance(noise.tau, float) \
            else Fraction(repr(noise.tau))
        # τ plus the rounding of the noisy answer itself (the declared format, the float64
        # rule, or 4 units of the mp oracle's dps), as an absolute bound over |answers| ≤ max |ŷ|
        unit = declared.eta if declared is not None else \
            FLOAT64_PRECISION if is_float else backend_precision(be).eta * 4
        top = max((abs(Fraction(float(y))) for y in answers), default=Fraction(1))
        return OraclePrecision(tau + unit * max(1, top), False,
                               f"additive noise ±{float(tau):.3g} + the oracle's rounding")
    if noise is not None and hasattr(noise, "digits"):
        if declared is not None:
            return OraclePrecision(Fraction(5, 10 ** noise.digits) + declared.eta, True,
                                   f"rounding to {noise.digits} significant digits + "
                                   f"{declared.source}")
        return OraclePrecision(Fraction(5, 10 ** noise.digits), True,
                               f"rounding to {noise.digits} significant digits")
    if declared is not None:
        return declared
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
    if eta < sys.float_info.min:        # below float64's normal range: the same rule in mpmath
        with mpmath.workdps(20):
            eta = precision.mpf()
            return {"zero": eta ** 0.75, "interpolation": mpmath.sqrt(eta),
                    "matching": mpmath.cbrt(eta), "residual": mpmath.cbrt(eta)}
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
        return {"bound": upper_decimal(self.bound, 6), "method": self.method,
                "rigorous": self.rigorous, "precision": self.precision.describe(),
                "constant": None if self.constant is None else mpmath.nstr(self.constant, 6),
                "working_dps": self.working_dps, "assumes": self.assumes,
                **{k: v for k, v in self.details.items() if isinstance(v, (str, int, bool))}}

    def __str__(self):
        kind = "certified enclosure" if self.rigorous else "first-order C·η, not rigorous"
        return f"±{upper_decimal(self.bound)} ({kind}; {self.precision})"


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
            # an upper bound in mpmath's global context, rounded up (never to nearest)
            worst = max(worst, upper_mpf(b - ball(x), mpmath.mp))
    return worst


def check_accuracy(bar, accuracy, sep):
    """IllConditioned when the bar is not below the asked accuracy (the precision that would
    do, scaling the bar linearly)."""
    if accuracy is None or bar.within(accuracy):
        return
    prec, bound = bar.precision, bar.bound
    need = prec.scaled(exact_fraction(accuracy) / exact_fraction(bound))
    fix = f"; {prec.remedy}" if prec.remedy else ""
    raise IllConditioned(
        f"the error bar {upper_decimal(bound)} ({bar.method}) exceeds the asked accuracy "
        f"{accuracy}: the oracle precision {prec} is not enough (about {shown_eta(need.eta, 2)}, "
        f"{need.digits} digits, would be, the bar scaling linearly){fix}",
        error_bar=upper_decimal(bound, 6),
        accuracy=str(accuracy), precision=prec.describe(),
        needed_precision=shown_eta(need.eta), pole_separation=sep, method=bar.method)
