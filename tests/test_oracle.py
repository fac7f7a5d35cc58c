"""The counting value-query oracle (docs/design.md §3)."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest

import exactattn as ea
from exactattn.arith import ExpElement, get_backend
from exactattn.errors import BudgetExceeded, PeekError, QueryError
from exactattn.oracles.oracle import Additive, Oracle, Rounding, as_oracle


@pytest.fixture
def model():
    return ea.random_multi_head(3, 2, seed=21)


def _state(o):
    return o.queries, o.max_length, len(o.transcript)


# ---------------------------------------------------------------------- counting
def test_counts_lengths_and_transcript(model):
    o = Oracle(model)
    q1 = [[1, 0, 0]]
    q2 = [[1, 2, 3], [0, 1, 0], [1, 1, 1]]
    q3 = [[0, 0, 1], [2, 0, 0]]
    y1, y2, y3 = o(q1), o(q2), o(q3)
    assert o.queries == 3 and o.max_length == 3
    assert [a for _, a in o.transcript] == [y1, y2, y3]
    assert o.transcript[1][0] == tuple(tuple(Fraction(x) for x in t) for t in q2)
    # exact rationals only (ints may stay ints for speed), never floats
    assert all(type(x) in (int, Fraction) for q, _ in o.transcript for t in q for x in t)
    assert y2 == model(q2, "exact")
    assert isinstance(y1, ExpElement) and y1.is_rational()
    o.reset()
    assert _state(o) == (0, 0, 0)


def test_record_false_keeps_no_transcript(model):
    o = Oracle(model, record=False)
    o([[1, 1, 1]])
    assert o.queries == 1 and o.transcript == []


def test_budget_raises_and_is_not_counted(model):
    o = Oracle(model, budget=2)
    o([[1, 0, 0]])
    o([[0, 1, 0], [0, 0, 1]])
    with pytest.raises(BudgetExceeded, match="budget of 2"):
        o([[1, 1, 1]])
    assert _state(o) == (2, 2, 2)
    with pytest.raises(BudgetExceeded):
        o([[1, 1, 1]] * 5)
    assert o.max_length == 2
    assert isinstance(BudgetExceeded("x"), ea.ExactAttnError)
    zero = Oracle(model, budget=0)
    with pytest.raises(BudgetExceeded):
        zero([[1, 0, 0]])
    with pytest.raises(ValueError):
        Oracle(model, budget=-1)


def test_no_peek(model):
    o = Oracle(model)
    with pytest.raises(PeekError):
        o.model
    assert Oracle(model, no_peek=False).model is model
    assert "queries=0" in repr(o)


# ---------------------------------------------------------------------- malformed queries
@pytest.mark.parametrize("bad, err", [
    ([], QueryError),
    ([[1, 2]], QueryError),                     # wrong dimension
    ([[1, 2, 3], [1, 2]], QueryError),          # one token of the wrong dimension
    (5, QueryError),                            # not a sequence of tokens
    ([[1, "a", 3]], TypeError),                 # non-numeric entry
    ([[1, None, 3]], TypeError),
    ([[1, 2, 3], [0.5, 0, 0]], TypeError),      # float on the exact backend
    ([[True, 0, 0]], TypeError),
])
def test_malformed_queries_raise_and_are_not_counted(model, bad, err):
    o = Oracle(model, budget=5)
    o([[1, 1, 1]])
    with pytest.raises(err):
        o(bad)
    assert _state(o) == (1, 1, 1)


def test_error_names_the_entry(model):
    o = Oracle(model)
    with pytest.raises(TypeError, match="token 1, entry 0"):
        o([[1, 2, 3], [0.5, 0, 0]])
    with pytest.raises(QueryError, match="token 0 has 2 entries"):
        o([[1, 2]])
    with pytest.raises(QueryError, match="empty"):
        o([])


def test_query_containers(model):
    o = Oracle(model)
    ref = o([[1, 2, 3], [0, 1, 1]])
    assert o(np.array([[1, 2, 3], [0, 1, 1]])) == ref
    assert o(((1, 2, 3), (0, 1, 1))) == ref
    assert o(t for t in [[1, 2, 3], [0, 1, 1]]) == ref       # a generator, read once
    assert o([[Fraction(2, 2), 2, 3], np.array([0, 1, 1])]) == ref
    assert o.queries == 5


# ---------------------------------------------------------------------- plain callables
def test_plain_callable_on_exact_gives_field_elements():
    calls = []

    def f(tokens):
        calls.append(tokens)
        return Fraction(len(tokens), 3)

    o = Oracle(f, backend="exact")
    y = o([[1, 2], [3, 4]])
    assert isinstance(y, ExpElement) and y == Fraction(2, 3)
    assert o.dim == 2 and o.queries == 1
    with pytest.raises(QueryError):
        o([[1, 2, 3]])                            # dimension fixed by the first query
    assert len(calls) == 1 and o.queries == 1
    # a callable that answers with an ExpElement passes it through
    e = ea.arith.exp_rational(Fraction(1, 3))
    assert Oracle(lambda t: e, dim=2)([[1, 1]]) is e
    with pytest.raises(ea.OracleError, match="oracle answer.*ExpElement.*backend='float'") as e:
        Oracle(lambda t: 0.5, dim=2, backend="exact")([[1, 1]])
    assert e.value.reason == "oracle-error" and isinstance(e.value.__cause__, TypeError)


def test_plain_callable_first_bad_query_does_not_fix_dim():
    o = Oracle(lambda t: 1)
    with pytest.raises(QueryError):
        o([[1, 2], [1, 2, 3]])
    assert o.dim is None and o.queries == 0
    assert o([[1, 2]]) == 1 and o.dim == 2


def test_plain_callable_on_mp_gives_mpf():
    be = get_backend("mp", dps=40)
    o = Oracle(lambda t: Fraction(1, 3), dim=1, backend=be)
    y = o([[1]])
    assert isinstance(y, be.ctx.mpf)
    assert abs(y * 3 - 1) < be.ctx.mpf(10) ** -39
    of = Oracle(lambda t: Fraction(1, 4), dim=1, backend="float")
    assert of([[1]]) == 0.25


def test_model_on_mp_and_float_backends(model):
    q = [[1, 2, 3], [0, 1, 1]]
    ym = Oracle(model, backend="mp", dps=50)(q)
    yf = Oracle(model, backend="float")(q)
    ref = model(q, "exact").to_mpf(55)
    with mpmath.workdps(55):
        assert abs(ym - ref) < mpmath.mpf(10) ** -45
        assert abs(yf - ref) < mpmath.mpf(10) ** -12


# ---------------------------------------------------------------------- noise
def test_additive_random_noise_within_tau(model):
    tau = Fraction(1, 1000)
    o = Oracle(model, backend="mp", noise=Additive(tau, "random", seed=3))
    clean = Oracle(model, backend="mp")
    devs = []
    for k in range(20):
        q = [[k % 3, 1, -1], [1, k % 2, 2]]
        devs.append(o(q) - clean(q))
    t = o.backend.scalar(tau)
    assert all(abs(dv) <= t for dv in devs)
    assert len({mpmath.nstr(dv, 10) for dv in devs}) > 10     # really random, not constant
    assert max(devs) > 0 > min(devs)
    # seeded: the same seed gives the same noise
    o2 = Oracle(model, backend="mp", noise=Additive(tau, "random", seed=3))
    assert o2([[0, 1, -1], [1, 0, 2]]) == o.transcript[0][1]


def test_additive_adversarial_noise_is_exactly_tau(model):
    tau = Fraction(1, 100)
    for backend in ("mp", "float"):
        o = Oracle(model, backend=backend, noise=Additive(tau, "adversarial"))
        clean = Oracle(model, backend=backend)
        signs = set()
        for k in range(16):
            q = [[k % 4, 1, 0], [0, 1, k % 3]]
            dv = o(q) - clean(q)
            tol = 1e-12 if backend == "float" else mpmath.mpf(10) ** -45
            assert abs(abs(dv) - o.backend.scalar(tau)) < tol
            signs.add(dv > 0)
        assert signs == {True, False}


def test_rounding_to_significant_digits(model):
    q = [[1, 2, 3], [0, 1, 1], [2, 2, 0]]
    exact = model(q, "exact").to_mpf(30)
    for digits in (1, 3, 6):
        ym = Oracle(model, backend="mp", noise=Rounding(digits))(q)
        yf = Oracle(model, backend="float", noise=Rounding(digits))(q)
        text = mpmath.nstr(exact, digits, min_fixed=1, max_fixed=0)   # e.g. "-3.53e+0"
        assert ym == get_backend("mp", dps=50).ctx.mpf(text)
        assert yf == float(text)
        # the rounded value has at most `digits` significant digits
        assert len(mpmath.nstr(ym, 40).replace("-", "").replace(".", "").strip("0")) <= digits
        assert abs(ym - exact) <= abs(exact) * mpmath.mpf(10) ** (1 - digits) / 2 * 1.0001
    with pytest.raises(ValueError):
        Rounding(0)


def test_noise_refused_on_exact_and_bad_noise(model):
    with pytest.raises(ValueError, match="exact"):
        Oracle(model, noise=Additive(Fraction(1, 10)))
    with pytest.raises(ValueError, match="exact"):
        Oracle(model, backend="symbolic", noise=Rounding(3))
    with pytest.raises(TypeError):
        Oracle(model, backend="mp", noise=0.1)
    with pytest.raises(ValueError):
        Additive(Fraction(1, 10), "gaussian")
    with pytest.raises(ValueError):
        Additive(-1)
    assert Oracle(model, noise="exact").noise is None


# ---------------------------------------------------------------------- as_oracle
def test_as_oracle(model):
    o = Oracle(model, backend="mp")
    assert as_oracle(o, 3, backend="mp") is o
    with pytest.raises(ValueError, match="mp backend"):
        as_oracle(o, 3, backend="exact")
    with pytest.raises(ValueError, match="dimension"):
        as_oracle(o, 4, backend="mp")
    with pytest.raises(TypeError, match="Oracle"):
        as_oracle(model, 3)
    with pytest.raises(TypeError):
        as_oracle(42, 3)
    wrapped = as_oracle(lambda t: 1, 2)
    assert isinstance(wrapped, Oracle) and wrapped.dim == 2 and wrapped.backend.name == "exact"
    free = Oracle(lambda t: 1)
    assert as_oracle(free, 5) is free and free.dim == 5


def test_oracle_constructor_errors(model):
    with pytest.raises(ValueError, match="dim"):
        Oracle(model, dim=4)
    with pytest.raises(TypeError):
        Oracle(3)
    with pytest.raises(ValueError):
        Oracle(lambda t: 1, dim=0)
    o = Oracle(model.heads[0])
    assert o.dim == 3 and o([[1, 0, 0]]) == model.heads[0]([[1, 0, 0]])


# ---------------------------------------------------------------------- a failing oracle
@pytest.mark.parametrize("exc", [RuntimeError("device lost"), ZeroDivisionError("1/0")])
def test_an_oracle_that_raises_is_a_named_oracle_error(exc):
    def broken(tokens):
        if len(tokens) > 1:
            raise exc
        return 1
    o = Oracle(broken, dim=2, backend="exact")
    assert o([[1, 2]]) == 1
    with pytest.raises(ea.OracleError) as e:
        o([[1, 2], [3, 4]])
    assert e.value.reason == "oracle-error" and e.value.__cause__ is exc
    assert e.value.details == {"query_index": 1, "error": type(exc).__name__}
    assert o.queries == 1                         # the failed query is not counted
    # through a learner: the named failure, not the bare exception
    with pytest.raises(ea.OracleError):
        ea.learn_single_head(Oracle(broken, dim=2, backend="exact"), 2)


def test_the_librarys_own_failures_and_ctrl_c_pass_as_they_are():
    def interrupted(tokens):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        Oracle(interrupted, dim=1, backend="exact")([[1]])

    def named(tokens):
        raise ea.OutOfClass("planted", index=0)
    with pytest.raises(ea.OutOfClass):
        Oracle(named, dim=1, backend="exact")([[1]])


def test_a_raising_probe_is_an_oracle_error():
    def broken(tokens):
        raise RuntimeError("no answer")
    with pytest.raises(ea.OracleError, match="probe"):
        Oracle(broken, dim=2).decide()


def test_a_model_oracle_times_out_too(monkeypatch):
    """The timeout fires for model oracles (the elapsed time is checked after each answer):
    a planted clock makes every model answer take 10 s."""
    import time
    m = ea.random_multi_head(2, 1, seed=1)
    o = Oracle(m, timeout=1)
    assert o([[1, 2]]) is not None and o.queries == 1      # a timeout that is met
    ticks = iter(range(0, 10 ** 6, 10))
    monkeypatch.setattr(time, "perf_counter", lambda: next(ticks))
    with pytest.raises(ea.OracleTimeout) as e:
        o([[1, 2], [2, 1]])
    assert e.value.details["query_index"] == 1 and o.queries == 1
    with pytest.raises(ea.OracleTimeout):
        ea.learn_multi_head(Oracle(m, timeout=1), 2, heads=1, seed=0)


def test_a_callable_gets_its_own_lists_of_the_backends_scalars():
    """A plain callable receives a list of lists (docs/models.md), each token its own list
    even when the query repeats it, so mutating them cannot reach the oracle's records (the
    exact backend shares one converted row per distinct token)."""
    from fractions import Fraction
    seen = []

    def f(tokens):
        seen.append([list(t) for t in tokens])
        tokens[0].append(99)                       # the callable's own business
        return Fraction(1, 3)

    orc = ea.Oracle(f, backend="exact", dim=2)
    row = [1, 2]
    orc([row, row, [3, 4]])
    orc([row, row, [3, 4]])
    assert seen[0] == seen[1] == [[1, 2], [1, 2], [3, 4]]
    assert [list(t) for t in orc.transcript[1][0]] == [[1, 2], [1, 2], [3, 4]]
