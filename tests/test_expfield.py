"""Field laws of the exact exponential field Q(e^{1/L}) ≅ Q(t) (docs/design.md §2, exact backend).

Every assertion here is exact: equality is decided in Q(t) by polynomial arithmetic and
signs by certified ball arithmetic; no float decides anything.
"""

from fractions import Fraction

import mpmath
import pytest
import sympy
import flint
from hypothesis import assume, given
from hypothesis import strategies as st

from exactattn.arith import ExpElement, exp_rational

# ---------------------------------------------------------------------- strategies
Ls = st.sampled_from([1, 2, 3, 4, 6, 12])
rationals = st.fractions(min_value=-5, max_value=5, max_denominator=7)
nonzero_rationals = rationals.filter(lambda q: q != 0)
exponents = st.integers(min_value=-4, max_value=4)
scores = st.fractions(min_value=-3, max_value=3, max_denominator=6)


@st.composite
def laurent(draw, allow_zero=True):
    """(num_terms, den_terms, L, element): (Σ a_k t^k)/(Σ b_k t^k), t = e^{1/L}."""
    L = draw(Ls)
    num = draw(st.dictionaries(exponents, rationals if allow_zero else nonzero_rationals,
                               min_size=0 if allow_zero else 1, max_size=3))
    den = draw(st.dictionaries(exponents, nonzero_rationals, min_size=1, max_size=3))
    e = ExpElement.from_laurent(num, den, L)
    if not allow_zero:
        assume(not e.is_zero())
    return num, den, L, e


def elements(allow_zero=True):
    return laurent(allow_zero).map(lambda x: x[3])


nonzero = elements(allow_zero=False)


def unreduced_copy(a: ExpElement, j: int, k: int) -> ExpElement:
    """The same element with numerator and denominator multiplied by a common polynomial
    factor g = den² + j·num + k (of whatever polynomial type the element uses); not reduced."""
    g = a.den * a.den + a.num * j + k
    assume(not g.is_zero())
    return ExpElement(a.num * g, a.den * g, a.L)


# ---------------------------------------------------------------------- field laws
@given(elements(), elements(), elements())
@pytest.mark.slow
def test_addition_associative_and_commutative(a, b, c):
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a


@given(elements(), elements(), elements())
@pytest.mark.slow
def test_multiplication_associative_and_commutative(a, b, c):
    assert (a * b) * c == a * (b * c)
    assert a * b == b * a


@given(elements(), elements(), elements())
@pytest.mark.slow
def test_distributive(a, b, c):
    assert a * (b + c) == a * b + a * c
    assert (a - b) * c == a * c - b * c


@given(elements())
@pytest.mark.slow
def test_additive_inverse_and_identities(a):
    zero = ExpElement.from_rational(0)
    one = ExpElement.from_rational(1)
    assert (a + (-a)).is_zero()
    assert a - a == zero
    assert a + zero == a
    assert a * one == a
    assert (a * zero).is_zero()


@given(nonzero, elements())
@pytest.mark.slow
def test_multiplicative_inverse_and_division(a, b):
    assert a * a.inverse() == 1
    assert a / a == ExpElement.from_rational(1)
    assert (b / a) * a == b
    assert 1 / a == a.inverse()
    assert a ** -1 == a.inverse()


@given(nonzero, st.integers(min_value=-3, max_value=3), st.integers(min_value=-3, max_value=3))
@pytest.mark.slow
def test_integer_powers(a, m, n):
    assert a ** (m + n) == a ** m * a ** n
    assert a ** 2 == a * a


def test_division_by_zero_raises():
    zero = ExpElement.from_rational(0)
    with pytest.raises(ZeroDivisionError):
        exp_rational(Fraction(1, 2)) / zero
    with pytest.raises(ZeroDivisionError):
        zero.inverse()
    with pytest.raises(ZeroDivisionError):
        ExpElement(1, 0)


@given(elements(), elements(), rationals)
@pytest.mark.slow
def test_mixed_arithmetic_with_rationals(a, b, q):
    Q = ExpElement.from_rational(q)
    assert a + q == a + Q == q + a
    assert a * q == Q * a == q * a
    assert a - q == -(q - a)
    if q != 0:
        assert a / q == a * ExpElement.from_rational(1 / q)


# ---------------------------------------------------------------------- exp and log
@given(scores, scores)
@pytest.mark.slow
def test_exp_of_sum_is_product_of_exps(p, q):
    assert exp_rational(p + q) == exp_rational(p) * exp_rational(q)
    assert exp_rational(-p) == exp_rational(p).inverse()


@given(scores)
def test_log_exp_is_identity_on_rationals(q):
    lg = exp_rational(q).log()
    assert isinstance(lg, Fraction)
    assert lg == q


def test_exp_zero_is_one_and_rational():
    e0 = exp_rational(0)
    assert e0 == 1 and e0.is_rational() and e0.as_rational() == 1
    assert not exp_rational(Fraction(1, 5)).is_rational()


@given(st.integers(-6, 6), st.integers(1, 12), st.integers(-6, 6), st.integers(1, 12))
def test_lifting_between_denominators(k1, L1, k2, L2):
    a, b = ExpElement.t_power(k1, L1), ExpElement.t_power(k2, L2)
    assert a * b == exp_rational(Fraction(k1, L1) + Fraction(k2, L2))
    assert (a * b).log() == Fraction(k1, L1) + Fraction(k2, L2)


def test_lifting_examples():
    assert exp_rational(Fraction(1, 2)) * exp_rational(Fraction(1, 3)) == exp_rational(Fraction(5, 6))
    s = exp_rational(Fraction(1, 4)) + exp_rational(Fraction(1, 6))
    assert s.reduce().L == 12
    # e^{1/2} written over t = e^{1/6} is t^3; the reduced form goes back to L = 2
    x = exp_rational(Fraction(1, 2)).lift(6)
    assert x.L == 6
    assert x == ExpElement.t_power(3, 6) == exp_rational(Fraction(1, 2))
    assert x.reduce().L == 2
    with pytest.raises(ValueError):
        exp_rational(Fraction(1, 2)).lift(3)


def test_log_of_scaled_monomial_is_symbolic():
    e = 3 * exp_rational(Fraction(1, 2))
    lg = e.log()
    assert isinstance(lg, sympy.Expr)
    assert sympy.simplify(lg - (sympy.Rational(1, 2) + sympy.log(3))) == 0
    lg2 = (Fraction(2, 5) * ExpElement.t_power(-3, 4)).log()
    assert sympy.simplify(lg2 - (sympy.Rational(-3, 4) + sympy.log(sympy.Rational(2, 5)))) == 0
    assert ExpElement.from_rational(7).log() == sympy.log(7)


@given(elements(), scores.filter(lambda q: q != 0))
@pytest.mark.slow
def test_log_of_non_monomial_raises(a, q):
    s = exp_rational(q) + 1  # e^q + 1 (q ≠ 0) is never a monomial c·t^k
    with pytest.raises(ValueError, match="monomial"):
        s.log()
    if a.monomial() is None:
        with pytest.raises(ValueError):
            a.log()


def test_log_of_non_positive_raises():
    with pytest.raises(ValueError):
        (-exp_rational(Fraction(1, 3))).log()
    with pytest.raises(ValueError):
        ExpElement.from_rational(0).log()


@given(nonzero_rationals, st.integers(-5, 5), Ls)
def test_monomial_recognised(c, k, L):
    e = c * ExpElement.t_power(k, L)
    mono = e.monomial()
    assert mono is not None
    c2, k2 = mono
    assert c2 == c
    assert Fraction(k2, e.reduce().L) == Fraction(k, L)


@given(scores, Ls, st.integers(-3, 3), st.integers(-3, 3), st.integers(1, 4))
def test_logit_inverts_the_sigmoid_in_any_form(s, L, j, k, m):
    """σ = e^s/(1 + e^s) has logit s, in every unreduced form and over any L' = mL (the
    sigmoid inversion of P1 Thm 4.1 that the learners read their scores with)."""
    z = exp_rational(s)
    sigma = z / (1 + z)
    assert sigma.logit() == s
    assert unreduced_copy(sigma, j, k).logit() == s
    assert sigma.lift(sigma.L * m).logit() == s
    for c in (2, Fraction(1, 3), 5):        # odds c·t^k with c ≠ 1: not a softmax weight
        assert (c * z / (1 + c * z)).logit() is None


@given(elements())
def test_logit_is_none_exactly_when_the_odds_are_not_a_power_of_t(sigma):
    """logit(σ) is k/L when σ/(1−σ) = t^k, and None otherwise — the same verdict as the
    odds' own monomial test (a planted 'every ratio is a power' would pass a non-attention
    answer)."""
    if sigma == 1:
        with pytest.raises(ZeroDivisionError):
            sigma.logit()
        return
    odds = sigma / (1 - sigma)
    mono = odds.monomial()
    if mono is None or mono[0] != 1:
        assert sigma.logit() is None
    else:
        assert sigma.logit() == odds.log()


# ---------------------------------------------------------------------- normal form, hash
@given(elements(), st.integers(-3, 3), st.integers(-3, 3), st.integers(1, 4))
@pytest.mark.slow
def test_reduced_and_unreduced_forms_are_equal(a, j, k, m):
    u = unreduced_copy(a, j, k)
    assert u == a and a == u
    assert not (u != a)
    assert hash(u) == hash(a)
    lifted = a.lift(a.L * m)
    assert lifted == a
    assert hash(lifted) == hash(a)
    r = unreduced_copy(a, j, k).reduce()
    ra = ExpElement(a.num, a.den, a.L).reduce()
    # the reduced form is canonical: identical numerator, denominator and L
    assert (r.num, r.den, r.L) == (ra.num, ra.den, ra.L)
    assert r.den.leading_coefficient() == 1
    # and arithmetic on the unreduced copy agrees with arithmetic on the reduced one
    assert u + a == a * 2 and u * a == a * a


@given(elements(), st.integers(-3, 3), st.integers(-3, 3), st.integers(1, 4),
       nonzero_rationals, st.integers(-5, 5))
@pytest.mark.slow
def test_predicates_do_not_depend_on_the_representation(a, j, k, m, c, e):
    u = unreduced_copy(a, j, k).lift(a.L * m)
    assert u.is_rational() == a.is_rational()
    assert u.monomial() == a.monomial()
    if a.is_rational():
        assert u.as_rational() == a.as_rational()
    mono = c * ExpElement.t_power(e, a.L)
    mu = unreduced_copy(mono, j, k).lift(a.L * m)
    assert mu.monomial() == mono.monomial() and mu.monomial()[0] == c
    if c > 0:
        assert mu.log() == mono.log()


def test_huge_exponents_stay_cheap():
    # scores with denominators ~10^21 give exponents ~10^18: a gcd would take forever, so
    # such elements stay unreduced; equality, sign, is_rational and monomial need no gcd
    import time
    start = time.perf_counter()
    s1, s2 = Fraction(1, 1000), Fraction(1, 1000) + Fraction(1, 10 ** 21)
    a = (1 + 2 * exp_rational(s1)) / (1 + exp_rational(s1))
    b = (1 + 2 * exp_rational(s2)) / (1 + exp_rational(s2))   # increasing in s: b > a
    d = b - a
    assert d != 0 and d.sign() == 1 and a < b and not b <= a
    assert not d.is_rational() and d.monomial() is None
    assert (d * 0).is_rational() and (d - d) == 0
    big = exp_rational(s2) * exp_rational(-s1)
    assert big.monomial() == (1, 1) and big.log() == s2 - s1
    assert len(str(d)) > 0
    assert time.perf_counter() - start < 5


@given(elements(), elements())
@pytest.mark.slow
def test_hash_consistent_with_equality(a, b):
    if a == b:
        assert hash(a) == hash(b)
    c = (a + b) - b
    assert c == a and hash(c) == hash(a)
    assert len({a, c, a.lift(2 * a.L)}) == 1


@given(rationals)
def test_rational_elements_hash_like_fractions(q):
    e = ExpElement.from_rational(q)
    assert e == q and hash(e) == hash(q)
    assert e.is_rational() and e.as_rational() == q


def test_not_equal_to_non_numbers():
    e = exp_rational(Fraction(1, 3))
    assert e != "t"
    assert e != None  # noqa: E711
    with pytest.raises(TypeError):
        ExpElement.from_rational(0.5)
    with pytest.raises(TypeError):
        e ** Fraction(1, 2)


def test_transcendence_distinguishes_close_elements():
    # e^{1/1000} and its Taylor polynomial of degree 6 differ by ~1.4e-24: exact ≠
    t = exp_rational(Fraction(1, 1000))
    x = Fraction(1, 1000)
    taylor = sum(x ** n / _fact(n) for n in range(7))
    assert t != taylor
    assert t - taylor != 0


def _fact(n):
    out = 1
    for i in range(2, n + 1):
        out *= i
    return out


# ---------------------------------------------------------------------- certified sign
@pytest.mark.parametrize("L", [1, 2, 7, 1000])
def test_t_minus_one_is_positive(L):
    t = ExpElement.t_power(1, L)
    assert (t - 1).sign() == 1
    assert t > 1 and 1 < t and not t <= 1
    assert (1 - t).sign() == -1


def test_sign_of_elements_very_close_to_zero():
    x = Fraction(1, 1000)
    t = exp_rational(x)
    assert (t - Fraction(1001, 1000)).sign() == 1          # e^x > 1 + x
    taylor6 = sum(x ** n / _fact(n) for n in range(7))
    tiny = t - taylor6                                       # ≈ x^7/7! ≈ 2e-25
    assert tiny.sign() == 1
    assert (-tiny).sign() == -1
    assert tiny > 0 and taylor6 < t
    # alternating: e^{-x} < 1 - x + x²/2
    assert exp_rational(-x) < 1 - x + x * x / 2
    assert exp_rational(-x) > 1 - x + x * x / 2 - x ** 3 / 6


@given(nonzero, nonzero)
@pytest.mark.slow
def test_sign_is_multiplicative_and_odd(a, b):
    assert (a * b).sign() == a.sign() * b.sign()
    assert (-a).sign() == -a.sign()
    assert (a * a).sign() == 1
    assert a.inverse().sign() == a.sign()


@given(rationals)
def test_sign_of_rationals(q):
    e = ExpElement.from_rational(q)
    assert e.sign() == (q > 0) - (q < 0)


@given(st.integers(-8, 8), st.integers(-8, 8), Ls)
def test_order_of_powers_of_t(j, k, L):
    a, b = ExpElement.t_power(j, L), ExpElement.t_power(k, L)
    assert (a < b) == (j < k)
    assert (a <= b) == (j <= k)
    assert (a == b) == (j == k)


@given(elements(), elements())
@pytest.mark.slow
def test_order_is_trichotomous(a, b):
    assert [a < b, a == b, a > b].count(True) == 1
    assert (a <= b) == (not a > b)


def _mp(q):
    return mpmath.mpf(q.numerator) / q.denominator


@given(laurent(allow_zero=False))
@pytest.mark.slow
def test_to_mpf_and_sign_agree_with_independent_evaluation(data):
    # display conversion against an independent mpmath evaluation of the Laurent data
    num, den, L, a = data
    with mpmath.workdps(80):
        t = mpmath.exp(mpmath.mpf(1) / L)
        ref = (mpmath.fsum(_mp(c) * t ** k for k, c in num.items())
               / mpmath.fsum(_mp(c) * t ** k for k, c in den.items()))
        assume(abs(ref) > mpmath.mpf(10) ** -30)
        got = a.to_mpf(40)
        assert abs(got - ref) <= abs(ref) * mpmath.mpf(10) ** -38
        assert a.sign() == (1 if ref > 0 else -1)
        ball = a.ball(200)
        assert ball.rad() < abs(ball.mid()) * flint.arb(2) ** -130


def test_to_mpf_of_known_constants():
    with mpmath.workdps(60):
        assert abs(exp_rational(Fraction(1, 3)).to_mpf(55) - mpmath.exp(mpmath.mpf(1) / 3)) \
            < mpmath.mpf(10) ** -54
        assert abs(ExpElement.t_power(1, 1).to_mpf(55) - mpmath.e) < mpmath.mpf(10) ** -54
    assert ExpElement.from_rational(0).to_mpf(30) == 0


def test_str_and_repr_name_the_variable():
    e = exp_rational(Fraction(1, 3)) + 2
    assert "t" in str(e) and "e^(1/3)" in str(e)
    assert repr(e).startswith("ExpElement(")
