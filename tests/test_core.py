"""The exact core (docs/design.md §2): no crash on the exact path, every modular mishap
retried at a larger prime before a failure is named, images and discrete logs in F_p, and
cost estimates that refuse hopeless runs."""

import json
import random
import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

import exactattn as ea
from exactattn.arith import expfield, modular
from exactattn.arith.base import Backend
from exactattn.arith.exact import ExactBackend
from exactattn.arith.expfield import ExpElement, TooLarge, exp_rational
from exactattn.arith.fields import PrimeField
from exactattn.cli.main import main
from exactattn.learners.p2 import cost, engines
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.p2.schedule import published_count

QUERY = [["1/9", "1/343", "2"], ["1/81", "1/16807", "4"]]


def _query(n):
    """The reported crashing query and its longer relatives (fast-growing denominators)."""
    return [[f"1/{9 ** k}", f"1/{343 * 49 ** (k - 1)}", str(2 ** k)] for k in range(1, n + 1)]


def _rational_query(n):
    return [[Fraction(x) for x in tok] for tok in _query(n)]


@pytest.fixture(scope="module")
def model():
    return ea.random_multi_head(3, 2, seed=1)


class _Generic(ExactBackend):
    """The exact backend with the generic softmax (Backend.attention: exp_rational and field
    arithmetic per token) instead of the fast expanded product — an independent evaluator."""

    def prepare_head(self, W, v):
        return [[self.scalar(x) for x in r] for r in W], [self.scalar(x) for x in v]

    def prepare_clean(self, tokens):
        return Backend.prepare_clean(self, tokens)

    def attention(self, prepared, heads):
        return Backend.attention(self, prepared, heads)

    def __repr__(self):
        return "<generic exact>"


def _mpq(x):
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def _mp_value(model, tokens, dps=40):
    """F(X) in mpmath from the rational parameters (no Q(t) at all)."""
    with mpmath.workdps(dps):
        total = mpmath.mpf(0)
        xN = tokens[-1]
        for W, v in model.heads:
            s = [sum(Fraction(a) * sum(Fraction(w) * x for w, x in zip(row, xN))
                     for a, row in zip(tok, W)) for tok in tokens]
            top = max(s)
            e = [mpmath.exp(_mpq(q - top)) for q in s]
            vals = [sum(Fraction(a) * b for a, b in zip(tok, v)) for tok in tokens]
            total += sum(w * _mpq(a) for w, a in zip(e, vals)) / sum(e)
        return total


# ---------------------------------------------------------------------- no crash: eval
@pytest.mark.slow
def test_eval_cli_answers_the_reported_query_without_abort(tmp_path):
    mfile, qfile = tmp_path / "m.json", tmp_path / "q.json"
    out = run_cli(["model", "random", "--dim", "3", "--heads", "2", "--seed", "1"])
    assert out.returncode == 0
    # the evaluation in a subprocess: a FLINT abort must not take the test session with it
    mfile.write_text(out.stdout)
    qfile.write_text(json.dumps(QUERY))
    run = subprocess.run([sys.executable, "-m", "exactattn.cli", "eval", str(mfile), str(qfile),
                          "--json"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr          # 134 was the FLINT abort
    data = json.loads(run.stdout)
    ref = _mp_value(ea.load_model(str(mfile)), _rational_query(2))
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(data["approx"]) - ref) < mpmath.mpf(10) ** -20
    assert data["reduced"] is False  # exponents ~1e13: too large to reduce, kept unreduced


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_long_queries_with_huge_exponents_are_exact(model, n):
    """Exponents up to ~1e37: the value exists and equals the generic evaluator's exactly;
    reduce() keeps it unreduced instead of dividing by a zero gcd (the old ZeroDivisionError)."""
    toks = _rational_query(n)
    y = model(toks, "exact")
    assert y == model(toks, _Generic())
    assert abs(y.to_mpf(30) - _mp_value(model, toks)) < mpmath.mpf(10) ** -25
    r = ExpElement(y.num, y.den, y.L).reduce()
    assert not r.is_reduced and r == y
    assert str(y)  # display never reduces a huge element


def test_reduce_computes_no_gcd_beyond_the_span(monkeypatch, model):
    """The guard is what keeps the gcd away: with it lifted, reduce() reaches the gcd."""
    calls = []

    def spy(p, q):
        calls.append(1)
        raise AssertionError("gcd called")

    monkeypatch.setattr(expfield, "_gcd", spy)
    y = model(_rational_query(2), "exact")
    ExpElement(y.num, y.den, y.L).reduce()
    assert calls == []
    monkeypatch.setattr(expfield, "REDUCE_SPAN", 1 << 200)
    with pytest.raises(AssertionError, match="gcd called"):
        ExpElement(y.num, y.den, y.L).reduce()


def test_huge_elements_hash_like_their_equals():
    N = 10 ** 15
    t = ExpElement.t_power(1, 3)
    a = (t + 2) / (t * t + 5)
    f = exp_rational(Fraction(N, 3)) + 1
    b = ExpElement((a.num * f.num), (a.den * f.num), 3)  # a·f/f, span ~ N: never reduced
    assert not b.reducible() and a == b and hash(a) == hash(b)
    assert hash(b.lift(6)) == hash(b)


def test_products_above_the_term_limit_raise_before_flint(monkeypatch):
    monkeypatch.setattr(expfield, "MAX_TERMS", 50)
    a = sum((exp_rational(Fraction(k * 1000)) for k in range(10)), ExpElement.from_rational(0))
    b = sum((exp_rational(Fraction(k * 7)) for k in range(10)), ExpElement.from_rational(0))
    with pytest.raises(TooLarge):
        a * b                                      # 100 > 50 terms
    assert (a * exp_rational(Fraction(3))) == exp_rational(Fraction(3)) * a  # 10 terms: fine
    m = ea.random_multi_head(2, 7, seed=3)         # 2^7 = 128 terms per answer, expanded
    y = m([[1, 2], [3, 4]], "exact")               # lazy: nothing built yet
    with pytest.raises(TooLarge):
        y.num


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([62, 127]), st.integers(0, 10 ** 40))
def test_powers_of_tau_are_pythons_modular_powers(bits, K):
    """τ^K mod p (python-flint) is Python's pow, for exponents of any size (10⁴⁰ too)."""
    rng = random.Random(bits)
    p, factors = engines.ladder_prime(bits)
    img = modular.ModularImage(PrimeField(p), 1, rng, factors)
    assert img.power(K) == pow(int(img.tau), K, p)


# ---------------------------------------------------------------------- F_p primitives
@pytest.mark.parametrize("bits", [b if b < 2047 else pytest.param(b, marks=pytest.mark.slow)
                                  for b in engines.PRIME_BITS])
def test_ladder_primes_have_the_size_and_smooth_factors(bits):
    p, factors = engines.ladder_prime(bits)
    assert p.bit_length() == bits
    prod = 1
    for q in factors:
        prod *= q
    assert prod == p - 1 and max(factors) < 2048
    assert all(ea.arith.expfield.fmpz(q).is_prime() for q in set(factors))
    assert modular.lucas_certified(p, factors)          # a proof, from p − 1's factors


@pytest.mark.slow
def test_the_precomputed_ladder_is_what_the_seeded_draw_gives():
    """learners/p2/ladder_primes.py stores the primes random_prime(bits, Random(bits)) draws
    (drawing the 2047-bit one costs about 1.5 s per process)."""
    for bits in engines.PRIME_BITS:
        assert modular.random_prime(bits, random.Random(bits)) == engines.ladder_prime(bits)


def _factor(n):
    out, q = [], 2
    while q * q <= n:
        while n % q == 0:
            out.append(q)
            n //= q
        q += 1
    return out + ([n] if n > 1 else [])


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 10 ** 7))
def test_lucas_certifies_exactly_the_primes(n):
    """With n − 1 factored completely the test says prime exactly for the primes (Carmichael
    numbers such as 561 included: Fermat's test alone passes some bases for them); a
    factorisation that is not n − 1's is refused."""
    assert modular.lucas_certified(n, _factor(n - 1)) == ea.arith.expfield.fmpz(n).is_prime()
    assert not modular.lucas_certified(n, _factor(n - 1) + [2])
    assert not modular.lucas_certified(561, _factor(560))
    # a Carmichael number with no factor below 211 (Chernick's 211·421·631): Fermat's test
    # passes every base tried, so only the per-factor order check can refuse it
    assert not modular.lucas_certified(56052361, _factor(56052360))


@pytest.mark.parametrize("bits", [62, 255])
def test_bounded_discrete_log(bits):
    rng = random.Random(bits)
    p, factors = engines.ladder_prime(bits)
    window = 10 ** 9
    img = modular.ModularImage(PrimeField(p), 1, rng, factors, window=window)
    for k in [0, 1, -1, window, -window, rng.randint(-window, window)]:
        assert img.dlog(img.tau ** k, window) == k
    assert img.dlog(img.tau ** (window + 1), window) is None
    assert img.dlog(img.tau ** (10 * window), window) is None


@settings(max_examples=40, deadline=None)
@given(bits=st.sampled_from([62, 127, 255]), seed=st.integers(0, 10 ** 6),
       window_digits=st.integers(0, 30), data=st.data())
def test_discrete_log_is_exact_in_its_window_whatever_tau(bits, seed, window_digits, data):
    """The digit tables are shared by every τ of a prime (modular._digit_table): the log of
    τ^k is k for every k in the window, and nothing outside it, for any τ drawn."""
    p, factors = engines.ladder_prime(bits)
    window = 10 ** window_digits
    if 1 << (bits - 1) <= 2 * window + 1:
        return
    img = modular.ModularImage(PrimeField(p), 1, random.Random(seed), factors, window=window)
    k = data.draw(st.integers(-window, window))
    assert img.dlog(img.tau ** k, window) == k
    far = data.draw(st.integers(window + 1, 10 * window + 10))
    got = img.dlog(img.tau ** far, window)        # none, or another k with τ^k = τ^far
    assert got is None or (abs(got) <= window and img.tau ** got == img.tau ** far)


def test_images_match_direct_evaluation_and_verify_catches_a_stale_cache():
    rng = random.Random(2)
    p, factors = engines.ladder_prime(62)
    P = PrimeField(p)
    a = ExpElement.from_laurent({0: 3, 10: Fraction(1, 7), 40: -2}, {0: 1, 10: 5, 40: 1}, 1)
    b = ExpElement.from_laurent({0: 3, 20: Fraction(1, 7), 40: -2}, {0: 1, 20: 5, 40: 1}, 1)

    def direct(e):
        def val(poly):
            return sum(int(c.p) * pow(int(c.q), -1, p) * pow(int(img.tau), k, p)
                       for (k,), c in zip(poly.monoms(), poly.coeffs())) % p
        return P.ctx(val(e.num)) / P.ctx(val(e.den))

    img = modular.ModularImage(P, 1, rng, factors, verify=True)
    assert img.image(a) == direct(a) and img.image(b) == direct(b)
    fast = modular.ModularImage(P, 1, random.Random(2), factors, verify=False)
    assert fast.image(a) == direct(a)
    # same number of terms and end exponents: the trusting cache reuses a's exponents
    assert fast.image(b) != direct(b)


# ---------------------------------------------------------------------- the ladder
def _huge_v_model(seed):
    rng = random.Random(seed)
    m = ea.random_multi_head(2, 2, seed=seed)
    return ea.MultiHeadAttention([(h.W, [Fraction(rng.randint(10 ** 29, 10 ** 30),
                                                   rng.randint(1, 7)) for _ in h.v])
                                  for h in m.heads])


@pytest.mark.parametrize("seed", range(3))
def test_reconstruction_too_large_for_small_primes_retries(seed):
    """v near 10^30: 62- and 127-bit reconstructions fail or go wrong (the v-sum check used to
    name not-attention there); the ladder goes on and certifies exactly."""
    model = _huge_v_model(seed)
    res = learn_multi_head(ea.Oracle(model), 2, heads=2, seed=seed)
    assert res.model.head_set() == model.head_set()
    tried = res.certificate["modular_attempts"]
    assert [t["prime_bits"] for t in tried][:2] == [62, 127]
    assert all(t["outcome"] != "ok" for t in tried[:-1]) and tried[-1]["outcome"] == "ok"


def _plant_first(monkeypatch, cls, name, wrong):
    """Replace cls.name on the first engine only (the first prime size)."""
    orig = getattr(cls, name)
    first = {}

    def patched(self, *a, **k):
        first.setdefault("id", id(self))
        if id(self) == first["id"]:
            return wrong(self, orig, *a, **k)
        return orig(self, *a, **k)

    monkeypatch.setattr(cls, name, patched)


def _learn_small(seed=4):
    model = ea.random_multi_head(3, 2, seed=seed)
    res = learn_multi_head(ea.Oracle(model), 3, heads=2, seed=seed)
    assert res.model.head_set() == model.head_set()
    assert res.certificate["certified"] is True
    return res.certificate["modular_attempts"]


def test_a_bad_tau_retries(monkeypatch):
    def bad(self, orig, *a, **k):
        orig(self, *a, **k)
        self.tau = self.field.one                   # every pole image collapses to 1
    _plant_first(monkeypatch, modular.ModularImage, "__init__", bad)
    tried = _learn_small()
    assert tried[0]["outcome"] != "ok" and tried[-1]["outcome"] == "ok"


@pytest.mark.parametrize("step", ["rational_fit", "solve"])
def test_a_fit_failing_mod_p_retries(monkeypatch, step):
    """A fit that fails at the first prime (the Euclid fit of a word-size prime, or a pivot
    of the linearised systems vanishing mod p) is retried at the next size."""
    if step == "solve":                    # the systems serve the primes above 2^63
        monkeypatch.setattr(PrimeField, "rational_fit", lambda self, ys, n: NotImplemented)
    _plant_first(monkeypatch, PrimeField, step, lambda self, orig, *a: None)
    tried = _learn_small()
    assert tried[0] == {"prime_bits": 62, "outcome": "not-attention",
                        "message": tried[0]["message"]}
    assert tried[-1]["outcome"] == "ok"


def test_a_discrete_log_outside_the_window_retries(monkeypatch):
    _plant_first(monkeypatch, modular.ModularImage, "dlog", lambda self, orig, z, w: None)
    tried = _learn_small()
    assert tried[0]["outcome"] == "not-attention" and tried[-1]["outcome"] == "ok"


def test_a_wrong_reconstruction_retries(monkeypatch):
    _plant_first(monkeypatch, PrimeField, "lift",
                 lambda self, orig, a: (orig(self, a) or 0) + Fraction(1, 3))
    tried = _learn_small()
    assert tried[0]["outcome"] in {"not-attention", "certification-failed", "ambiguous-matching"}
    assert tried[-1]["outcome"] == "ok"


def test_a_wrong_image_is_caught_by_certification(monkeypatch):
    """An image off by one on one answer (the last of the first family taken at the first
    prime, in both of its runs: matching in F_p, then lifting every family; the learner takes
    a family's images at once): nothing modular is trusted without the exact certification;
    the next size succeeds."""
    planted = []

    def bad(self, orig, elems):
        out = orig(self, elems)
        if not planted or elems[0] is planted[0]:
            planted[:] = [elems[0]]
            out[-1] = out[-1] + 1
        return out
    _plant_first(monkeypatch, modular.ModularImage, "images", bad)
    tried = _learn_small()
    assert planted and tried[0]["outcome"] != "ok" and tried[-1]["outcome"] == "ok"


@pytest.mark.slow
def test_a_failure_is_named_only_after_every_size(monkeypatch):
    monkeypatch.setattr(PrimeField, "solve", lambda self, A, b: None)
    monkeypatch.setattr(PrimeField, "rational_fit", lambda self, ys, n: None)
    model = ea.random_multi_head(2, 2, seed=1)
    with pytest.raises(ea.LearningFailure) as e:
        learn_multi_head(ea.Oracle(model), 2, heads=2, seed=1)
    assert e.value.reason == "not-attention"
    sizes = [t["prime_bits"] for t in e.value.details["prime_sizes_tried"]]
    assert sizes == list(engines.PRIME_BITS)


def test_sizes_that_cannot_hold_the_window_are_skipped(monkeypatch):
    monkeypatch.setattr(engines, "PRIME_BITS", (16, 62, 127))
    model = ea.random_multi_head(2, 2, seed=6)
    res = learn_multi_head(ea.Oracle(model), 2, heads=2, seed=6)
    assert res.certificate["prime_sizes_tried"][0] == 62       # 16 bits: window too wide
    assert res.model.head_set() == model.head_set()


def test_a_genuine_failure_still_has_its_name():
    def f(tokens):       # not attention
        s = sum(sum(Fraction(x) for x in t) for t in tokens)
        return s * s / len(tokens)
    with pytest.raises(ea.LearningFailure) as e:
        learn_multi_head(f, 2, heads=2, seed=0)
    assert len(e.value.details["prime_sizes_tried"]) == len(engines.PRIME_BITS)


# ---------------------------------------------------------------------- cost estimates
def test_huge_multi_head_run_is_refused_before_any_query():
    oracle = ea.Oracle(lambda tokens: 0, dim=64)     # never asked
    with pytest.raises(cost.CostExceeded, match="524,225 queries"):    # compared in Q(t)
        learn_multi_head(oracle, 64, heads=32, schedule="low-rank")
    with pytest.raises(cost.CostExceeded, match="term limit"):
        learn_multi_head(oracle, 64, heads=32, schedule="low-rank", force=True)
    assert oracle.queries == 0
    with pytest.raises(cost.CostExceeded, match="--force"):   # within the term limit
        cost.check_budget(cost.estimate_multi_head(30, 12))
    assert cost.check_budget(cost.estimate_multi_head(30, 12), force=True)
    assert cost.check_budget(cost.estimate_multi_head(16, 8))


def test_learn_multi_head_refuses_then_force_runs(monkeypatch):
    model = ea.random_multi_head(2, 2, seed=0)
    oracle = ea.Oracle(model)
    monkeypatch.setattr(cost, "DEFAULT_BUDGET", cost.Budget(bytes=1000, seconds=1e-6))
    with pytest.raises(cost.CostExceeded, match="--force"):
        learn_multi_head(oracle, 2, heads=2, seed=0)
    assert oracle.queries == 0
    res = learn_multi_head(oracle, 2, heads=2, seed=0, force=True)
    assert res.model.head_set() == model.head_set()


def test_cli_learn_refuses_dim_64_heads_64_in_one_line(capsys):
    """(64, 64) is estimated at minutes of CPU (about 1 M queries): refused before it starts,
    the estimate named in one line."""
    assert main(["learn", "multi-head", "--dim", "64", "--heads", "64", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "d=64, H=64" in err[0] and "--force" in err[0]
    assert "estimated at 3 min of CPU, above the limit of 60 s" in err[0]


def test_cli_eval_refuses_above_budget_and_force_runs(tmp_path, monkeypatch, capsys):
    model = ea.random_multi_head(3, 3, seed=2)
    mfile, qfile = tmp_path / "m.json", tmp_path / "q.json"
    mfile.write_text(json.dumps(model.to_dict()))
    qfile.write_text(json.dumps([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))
    monkeypatch.setattr(cost, "DEFAULT_BUDGET", cost.Budget(bytes=10, seconds=1e9))
    assert main(["eval", str(mfile), str(qfile)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["eval", str(mfile), str(qfile), "--force", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    toks = [[Fraction(x) for x in t] for t in [[1, 2, 3], [4, 5, 6], [7, 8, 9]]]
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(out["approx"]) - _mp_value(model, toks)) < mpmath.mpf(10) ** -20


def test_cli_eval_refuses_an_answer_beyond_the_term_limit_even_forced(tmp_path, capsys):
    model = ea.random_multi_head(3, 40, seed=1)
    mfile, qfile = tmp_path / "m.json", tmp_path / "q.json"
    mfile.write_text(json.dumps(model.to_dict()))
    qfile.write_text(json.dumps([["1/1009", 2, 3], [4, "1/1013", 6], [7, 8, "1/1019"],
                                 ["1/1021", 1, 0]]))
    assert main(["eval", str(mfile), str(qfile), "--force"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "term limit" in err[0]


def test_answer_estimate_bounds_the_real_size(model):
    for n in (2, 4, 6):
        toks = _rational_query(n)
        y = model(toks, "exact")
        est = cost.estimate_answer(model, toks)
        assert len(y.num) + len(y.den) <= est.terms_per_answer
        assert max(int(y.num.degrees()[0]), int(y.den.degrees()[0])).bit_length() \
            <= est.exponent_bits + 1
    assert published_count(64, 32) == 524225


def test_the_schedule_is_asked_lazily(monkeypatch):
    """Queries are generated a family at a time: an oracle that stops at the 4th answer
    (inside the first family) has seen q₀ and the first family generated, not the schedule."""
    from exactattn.learners.p2 import schedule as sched
    made = {"n": 0}
    orig = sched.Schedule.batches

    def counting(self):
        for batch in orig(self):
            made["n"] += len(batch)
            yield batch
    monkeypatch.setattr(sched.Schedule, "batches", counting)
    model = ea.random_multi_head(3, 2, seed=0)

    class Stop(Exception):
        pass
    asked = {"n": 0}

    def three(tokens):
        asked["n"] += 1
        if asked["n"] > 3:
            raise Stop
        return model(tokens, "exact")
    with pytest.raises(ea.OracleError) as e:
        learn_multi_head(ea.Oracle(three, dim=3, backend="exact"), 3, heads=2, seed=0)
    assert isinstance(e.value.__cause__, Stop) and e.value.details["query_index"] == 3
    assert made["n"] == 1 + 2 * 2 < published_count(3, 2)   # q₀ and the first family only


def _huge_denominator_model(den, d=2, H=2, seed=0):
    rng = random.Random(seed)
    return ea.MultiHeadAttention([
        ([[Fraction(rng.randint(-den, den), den) for _ in range(d)] for _ in range(d)],
         [Fraction(rng.randint(1, 5), 2) for _ in range(d)]) for _ in range(H)])


@pytest.mark.parametrize("den", [10 ** 9 + 7, 10 ** 30 + 57, 10 ** 100 + 267])
def test_entries_with_huge_denominators_are_learned(den):
    """Exponents k = L·score of 10^15…10^106: no power table is built for them (modular
    exponentiation), the ladder starts at a prime that holds the window, and the result
    is certified exactly (these were MemoryError / OverflowError / minute-long stalls)."""
    model = _huge_denominator_model(den)
    res = learn_multi_head(ea.Oracle(model), 2, heads=2, seed=1)
    assert res.model.head_set() == model.head_set()
    first = res.certificate["prime_sizes_tried"][0]
    assert 1 << (first - 1) > 2 * res.certificate["dlog_window"] + 1


def test_exponents_beyond_every_prime_are_a_named_failure(monkeypatch):
    monkeypatch.setattr(engines, "PRIME_BITS", (62,))
    with pytest.raises(engines.ExponentsTooLarge) as e:
        learn_multi_head(ea.Oracle(_huge_denominator_model(10 ** 30 + 57)), 2, heads=2, seed=1)
    assert e.value.reason == "exponents-too-large"


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(0, 10 ** 6))
def test_integer_basis_solves_are_the_two_solves(d, seed):
    """P2 step 5 on the exact backend: U⁻¹B and W with U W Xᵀ = S from the integer inverses
    made once are exactly the backend's two solves (the default), and satisfy the equations
    (checked by exact products).  A wrong denominator, a transposition lost or U and X
    swapped fails here."""
    from exactattn.arith.base import _BasisSolves
    rng = random.Random(seed)
    be = ExactBackend()
    while True:
        U = [[rng.randint(-50, 50) for _ in range(d)] for _ in range(d)]
        X = [[rng.randint(-50, 50) for _ in range(d)] for _ in range(d)]
        try:
            be.inv(U), be.inv(X)
            break
        except ea.errors.SingularSystem:
            continue
    S = [[Fraction(rng.randint(-10 ** 9, 10 ** 9), rng.randint(1, 99)) for _ in range(d)]
         for _ in range(d)]
    B = [[Fraction(rng.randint(-99, 99), rng.randint(1, 9))] for _ in range(d)]
    fast, slow = be.basis_solver(U, X), _BasisSolves(be, U, X)
    W = fast.both(S)
    assert W == slow.both(S)
    assert be.matmul(be.matmul(U, W), be.transpose(X)) == S
    assert fast.left(B) == slow.left(B) and be.matmul(U, fast.left(B)) == B


def test_integer_basis_solves_refuse_a_singular_basis():
    with pytest.raises(ea.errors.SingularSystem, match="singular 2×2"):
        ExactBackend().basis_solver([[1, 2], [2, 4]], [[1, 0], [0, 1]])
