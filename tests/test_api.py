"""One coherent Python API (docs/design.md §3, §7): exports, backend inference, accepted
entry types, and what every learner's result offers."""

import json
import subprocess
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import exactattn as ea
from exactattn.analysis.noise_sweep import single_head_assumptions
from exactattn.arith import get_backend
from exactattn.learners.result.compare import Comparison
from exactattn.oracles.oracle import Additive, infer_backend


# ---------------------------------------------------------------------- discoverable
def test_public_names():
    names = dir(ea)
    for name in ("learn_single_head", "learn_multi_head", "learn_low_rank",
                 "learn_single_head_noisy", "learn_multi_head_noisy",
                 "learn_single_head_membership", "learn_transformer", "LearnResult",
                 "parameter_error", "random_transformer", "OneLayerTransformer",
                 "from_sympy", "numpy_oracle", "infer_backend", "adapters"):
        assert name in names and name in ea.__all__, name
        assert getattr(ea, name) is not None
    assert all(isinstance(n, str) for n in ea.__all__)
    with pytest.raises(AttributeError):
        ea.no_such_name  # noqa: B018


@pytest.mark.slow
def test_core_never_imports_torch():
    code = ("import sys, exactattn, exactattn.adapters.torch; "
            "from exactattn.cli.main import build_parser; build_parser(); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------- backend inference
@pytest.mark.parametrize("answer,name", [
    (0.0, "float"), (np.float64(1.5), "float"), (np.float32(2), "float"),
    (np.array(0.5), "float"), (mpmath.mpf(1), "mp"), (Fraction(1, 3), "exact"), (0, "exact"),
    (ea.ExpElement.from_rational(2), "exact"), ("1/2", "exact"),
])
def test_infer_backend(answer, name):
    assert infer_backend(answer).name == name


def test_infer_backend_refusals_say_how_to_choose():
    for bad in (object(), 1j, None):
        with pytest.raises(TypeError, match="backend='exact'.*'mp'.*'float'"):
            infer_backend(bad)
    with pytest.raises(TypeError, match="bool"):
        infer_backend(True)


def test_mp_answers_keep_their_precision():
    with mpmath.workdps(40):
        be = infer_backend(mpmath.mpf(1) / 3)
    assert be.name == "mp" and be.dps == 40


def test_plain_callables_get_the_backend_of_their_answers():
    real = ea.random_multi_head(2, 1, seed=3, kind="real")
    rational = ea.random_multi_head(2, 1, seed=3)
    cases = [(lambda X: real(X, "float"), "float"),
             (lambda X: real(X, "mp", 30), "mp"),
             (lambda X: rational(X, "exact"), "exact")]
    for f, name in cases:
        res = ea.learn_single_head(f, 2)
        assert res.backend == name
        truth = real if name != "exact" else rational
        c = res.compare(truth)
        assert c.equal if name == "exact" else c.max_error < 1e-8


def test_the_probe_is_recorded_and_not_counted():
    calls = []

    def f(X):
        calls.append(X)
        return 0.5 * len(X)
    o = ea.Oracle(f, dim=2)
    assert "undecided" in repr(o) and not calls      # repr never calls the black box
    assert not o.backend_decided
    assert o.decide().name == "float" and o.backend_decided
    assert o.probe == (((0, 0),), 0.5) and o.queries == 0 and o.transcript == []
    assert len(calls) == 1
    o([[1, 2], [3, 4]])
    assert o.queries == 1 and len(calls) == 2
    # given a backend: no probe
    o2 = ea.Oracle(f, dim=2, backend="mp")
    o2([[1, 2]])
    assert o2.probe is None and len(calls) == 3


def test_an_oracle_without_backend_adopts_the_learners():
    real = ea.random_head(2, seed=1, kind="real")
    f = lambda X: real(X, "float")  # noqa: E731
    res = ea.learn_single_head(ea.Oracle(f), 2, backend="float")
    assert res.backend == "float"
    res = ea.learn_single_head(ea.Oracle(f, backend="float"), 2, backend="float")
    assert res.backend == "float"
    res = ea.learn_single_head(ea.Oracle(real), 2)          # a real model: mp
    assert res.backend == "mp"
    with pytest.raises(ValueError, match="make them agree"):
        ea.learn_single_head(ea.Oracle(f, backend="exact"), 2, backend="float")


def test_inferred_exact_then_a_float_answer_says_what_happened():
    answers = iter([0] + [0.5] * 10)
    o = ea.Oracle(lambda X: next(answers), dim=1)
    assert o.decide().name == "exact"
    with pytest.raises(ea.OracleError,
                       match="inferred as exact.*ExpElement.*backend='float'") as e:
        o([[1]])
    assert isinstance(e.value.__cause__, TypeError)


def test_noise_on_a_callable_needs_a_backend():
    with pytest.raises(ValueError, match="backend='mp'"):
        ea.Oracle(lambda X: 0.0, noise=Additive(Fraction(1, 10)))
    assert ea.Oracle(lambda X: 0.0, backend="mp", noise=Additive(Fraction(1, 10)))
    with pytest.raises(ValueError, match="dim="):
        ea.Oracle(lambda X: 0.0).decide()


def test_the_exact_answer_error_no_longer_suggests_fraction_of_a_string():
    with pytest.raises(ea.OracleError) as e:
        ea.Oracle(lambda X: 0.1, dim=1, backend="exact")([[1]])
    assert isinstance(e.value.__cause__, TypeError)
    assert "Fraction('" not in str(e.value) and "from_sympy" in str(e.value)


# ---------------------------------------------------------------------- entry types
def test_entries_accept_int_fraction_and_strings_everywhere():
    a = ea.AttentionHead([["1/2", "-3"], [0, Fraction(1, 4)]], ["2", "-1/3"])
    b = ea.AttentionHead([[Fraction(1, 2), -3], [0, Fraction(1, 4)]], [2, Fraction(-1, 3)])
    assert a == b and a.is_rational
    j = ea.model_from_json(ea.model_to_json(a))
    assert j.heads[0] == b
    X = [["1/2", 1], [2, "-1"]]
    assert a(X) == b([[Fraction(1, 2), 1], [2, -1]])
    o = ea.Oracle(a)
    assert o(X) == b([[Fraction(1, 2), 1], [2, -1]])
    assert ea.Oracle(a, backend="mp")(X) == ea.Oracle(b, backend="mp")([[0.5, 1], [2, -1]])


@pytest.mark.parametrize("bad,match", [
    ("0.5", r"W\[0\]\[1\].*p/q"), ("1/0", r"W\[0\]\[1\]"), ("two", r"W\[0\]\[1\]"),
])
def test_bad_strings_name_the_entry(bad, match):
    with pytest.raises(TypeError, match=match):
        ea.AttentionHead([[1, bad], [0, 1]], [1, 1])


def test_float_parameter_message_suggests_a_string():
    with pytest.raises(TypeError, match=r'token 0, entry 1.*"1/10"'):
        ea.Oracle(ea.AttentionHead([[1, 0], [0, 1]], [1, 1]))([[1, 0.1]])


# ---------------------------------------------------------------------- results
def _learner_results():
    """(result, truth) for every learner, on small models."""
    m1 = ea.random_head(2, seed=1)
    m2 = ea.random_multi_head(2, 2, seed=2)
    real = ea.random_head(2, seed=3, kind="real")
    be = get_backend("mp", 30)
    B, mu = single_head_assumptions(be, real)
    tau = Fraction(1, 10 ** 12)
    low = ea.AttentionHead([[1, 2], [2, 4]], [1, -1])
    t = ea.random_transformer(2, 1, 2, seed=0)
    noisy = lambda m: ea.Oracle(m, backend=be, noise=Additive(tau, "adversarial"))  # noqa: E731
    mo = ea.MembershipOracle(real, backend="mp", dps=30)
    return [
        (ea.learn_single_head(ea.Oracle(m1), 2), m1),
        (ea.learn_multi_head(ea.Oracle(m2), 2, heads=2, seed=0), m2),
        (ea.learn_low_rank(ea.Oracle(low), 2, seed=0), low),
        (ea.learn_single_head_noisy(noisy(real), 2, B, mu, tau), real),
        (ea.learn_multi_head_noisy(noisy(ea.MultiHeadAttention([real])), 2, 1, tau, seed=0),
         real),
        (ea.learn_single_head_membership(mo, 2, B, mu, Fraction(1, 10 ** 6), 10), real),
        (ea.learn_transformer(ea.Oracle(t), 2, heads=1, hidden=2, seed=0), t),
    ]


@pytest.mark.slow
def test_every_learner_result_has_heads_model_compare_numpy_json():
    for res, truth in _learner_results():
        assert isinstance(res, ea.LearnResult)
        assert res.heads and all(isinstance(h, ea.AttentionHead) for h in res.heads)
        W0, v0 = res.heads[0]
        assert W0 is res.heads[0].W and v0 is res.heads[0].v
        model = res.model
        assert model.dim == res.dim
        c = res.compare(truth)
        assert isinstance(c, Comparison)
        if c.exact:
            assert c.equal is True and c.max_error == 0 and c.digits == float("inf")
        else:
            assert c.equal is None and c.digits > 5 and c.bits > 3.3 * 5
        W, v = res.to_numpy()
        assert W.shape == (len(res.heads), res.dim, res.dim) and v.shape == W.shape[:2]
        assert W[0, 0, 0] == float(res.heads[0].W[0][0])
        data = json.loads(res.to_json())
        assert data == model.to_dict()


def test_to_json_round_trips_exactly(tmp_path):
    m = ea.random_multi_head(3, 2, seed=6)
    res = ea.learn_multi_head(ea.Oracle(m), 3, heads=2, seed=0)
    back = ea.model_from_json(res.to_json())
    assert back == res.model and ea.same_function(back, m)
    res.save(tmp_path / "r.json")
    assert ea.load_model(tmp_path / "r.json") == res.model
    W, v = res.to_numpy(dtype=object)
    assert isinstance(W[0, 0, 0], Fraction)


def test_compare_matches_heads_by_permutation():
    m = ea.random_multi_head(2, 3, seed=7)
    shuffled = ea.MultiHeadAttention([m.heads[2], m.heads[0], m.heads[1]])
    res = ea.learn_multi_head(ea.Oracle(shuffled), 2, heads=3, seed=1)
    c = res.compare(m)
    assert c.equal and len(c.pairs) == 3 and not c.missing and not c.extra
    # the planted bug: one entry off by 1/1000 is found, exactly, in the right head
    bad = [list(map(list, h.W)) for h in m.heads]
    bad[1][0][1] += Fraction(1, 1000)
    wrong = ea.MultiHeadAttention([(W, h.v) for W, h in zip(bad, m.heads)])
    c = res.compare(wrong)
    assert c.exact and c.equal is False and c.max_error == Fraction(1, 1000)
    assert "NOT equal" in str(c)
    # a missing head: infinite error, the unmatched head named
    c = res.compare(ea.MultiHeadAttention(m.heads[:2]))
    assert c.max_error == mpmath.inf and len(c.extra) == 1 and c.equal is False
    with pytest.raises(ValueError, match="dimensions"):
        res.compare(ea.random_head(3, seed=0))


def test_compare_reports_digits_and_bits_on_inexact_results():
    m = ea.random_multi_head(2, 2, seed=8, kind="real")
    res = ea.learn_multi_head(ea.Oracle(m, backend="mp", dps=40), 2, heads=2, seed=0)
    c = res.compare(m)
    assert not c.exact and c.equal is None
    assert c.digits == pytest.approx(-float(mpmath.log10(c.max_error)))
    assert c.bits == pytest.approx(c.digits * float(mpmath.log(10, 2)))
    assert c.within(mpmath.mpf(10) ** -20) and not c.within(c.max_error / 2)
    assert "digits" in str(c) and "bits" in str(c)


# ---------------------------------------------------------------------- the documentation
DOC = __import__("pathlib").Path(__file__).resolve().parent.parent / "docs" / "models.md"


def _python_blocks():
    text = DOC.read_text(encoding="utf-8")
    return [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]


@pytest.mark.parametrize("n", range(len(_python_blocks())))
@pytest.mark.slow
def test_the_python_snippets_of_docs_models_run(n, tmp_path, monkeypatch, capsys):
    code = _python_blocks()[n]
    if "import torch" in code:
        pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.json").write_text(ea.model_to_json(ea.random_multi_head(3, 2, seed=5)))
    for line in code.splitlines():        # top-level names only (plus the adapters' path)
        assert "exactattn." not in line or "exactattn.adapters" in line, line
    exec(compile(code, f"docs/models.md block {n}", "exec"), {})
    capsys.readouterr()
