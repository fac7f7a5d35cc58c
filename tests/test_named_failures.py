"""Hostile inputs of the Python API and of `exactattn eval` (docs/honesty.md's table): each ends
in a named failure (a LearningFailure with its reason, the cause chained) or a one-line
ValueError before any work — never a raw StopIteration, an OverflowError, a silent None or an
unbounded run."""

import json
from fractions import Fraction

import pytest

from conftest import run_cli
from exactattn import Oracle, learn_multi_head
from exactattn.errors import IllConditioned, OracleError
from exactattn.learners.p1.low_rank import learn_low_rank
from exactattn.models.attention import AttentionHead, model_to_json, random_head, random_multi_head
from exactattn.oracles.oracle import Rounding


# ---------------------------------------------------------------------- oracle errors
def _stops_after(n):
    """An oracle that answers 1 n times, then raises StopIteration (an exhausted iterator)."""
    answers = iter([Fraction(1)] * n)

    def oracle(tokens):
        return next(answers)
    return oracle


@pytest.mark.parametrize("after", [0, 1, 5])
@pytest.mark.parametrize("backend", [None, "float"])
def test_an_oracle_raising_stop_iteration_is_an_oracle_error(after, backend):
    with pytest.raises(OracleError) as info:
        learn_multi_head(Oracle(_stops_after(after), dim=2, backend=backend), 2, heads=1)
    assert info.value.reason == "oracle-error"
    assert isinstance(info.value.__cause__, StopIteration)
    assert "the oracle raised StopIteration while answering" in str(info.value)


@pytest.mark.parametrize("backend", [None, "mp", "float"])
def test_a_huge_integer_answer_is_named(backend):
    """10**20000 (beyond the int-to-string limit) as every answer: a named failure."""
    from exactattn.errors import LearningFailure
    with pytest.raises(LearningFailure) as info:
        learn_multi_head(Oracle(lambda t: 10 ** 20000, dim=2, backend=backend), 2, heads=1)
    assert info.value.reason in ("oracle-error", "not-attention", "ill-conditioned")


def test_an_unprintable_exception_message_is_still_one_line():
    class Unprintable(Exception):
        def __str__(self):
            return str(10 ** 20000)

    def oracle(tokens):
        raise Unprintable()
    with pytest.raises(OracleError, match=r"raised Unprintable .*its message cannot be printed"):
        learn_multi_head(Oracle(oracle, dim=2), 2, heads=1)


def test_a_low_rank_measurement_below_the_rounding_is_ill_conditioned(monkeypatch):
    """A probe a·v within the float tolerance (a tiny v): named, not a bare ValueError."""
    import exactattn.learners.p1.low_rank as low_rank

    def invisible(s, a, b, v, where=""):
        raise ValueError(f"probe with a·v = 0 at {where}: the query would not see W")
    monkeypatch.setattr(low_rank, "bilinear", invisible)
    head = AttentionHead([[0.5, 0.1], [0.2, 0.3]], [1.0, 2.0])
    with pytest.raises(IllConditioned, match=r"v is too small against the answers' rounding"):
        learn_low_rank(Oracle(head, backend="float"), 2, seed=0)


# ---------------------------------------------------------------------- bounded arguments
@pytest.mark.parametrize("kw,match", [
    ({"heads": 1, "max_attempts": 0}, r"max_attempts must be an integer in 1\.\.100, got 0"),
    ({"heads": 1, "max_attempts": True}, r"max_attempts must be an integer in 1\.\.100"),
    ({"heads": 1, "max_attempts": 10 ** 9, "resample": True}, r"max_attempts must be"),
    ({"heads": 10 ** 9}, r"heads=1000000000 is above 1000"),
    ({"heads_bound": 10 ** 4}, r"heads_bound=10000 is above 1000"),
])
def test_learn_multi_head_refuses_sizes_no_run_can_honour(kw, match):
    with pytest.raises(ValueError, match=match):
        learn_multi_head(Oracle(random_multi_head(2, 1, seed=0)), 2, **kw)


def test_precision_and_rounding_are_bounded():
    with pytest.raises(ValueError, match=r"dps must be an integer in 15\.\.10000, got 10001"):
        Oracle(random_head(2, seed=1), backend="mp", dps=10_001)
    with pytest.raises(ValueError, match=r"Rounding needs digits in 1\.\.10000, got 1000000"):
        Rounding(10 ** 6)
    assert Rounding(10_000).digits == 10_000


@pytest.mark.parametrize("dim,heads,match", [
    (2, 10 ** 6, r"heads=1000000 at dim=2 has 6,000,000 parameters"),
    (10 ** 5, 1, r"heads=1 at dim=100000"),
    (1, 900, r"cannot draw 900 distinct rational heads in dimension 1 \(there are 7"),
    (2, 2.0, r"heads must be an integer"),
])
def test_random_models_are_bounded(dim, heads, match):
    with pytest.raises(ValueError, match=match):
        random_multi_head(dim, heads)


# ---------------------------------------------------------------------- eval
def test_eval_refuses_an_answer_too_large_to_print(tmp_path):
    model = tmp_path / "m.json"
    model.write_text(model_to_json(random_multi_head(2, 3, seed=1)))
    query = tmp_path / "q.json"
    query.write_text(json.dumps([[f"{7 ** (1200 + k)}/{3 ** (1500 + k)}", str(k + 1)]
                                 for k in range(40)]))
    proc = run_cli(["eval", str(model), str(query)])
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "the exact answer could print up to" in proc.stderr and "--force" in proc.stderr
    small = tmp_path / "s.json"
    small.write_text(json.dumps([["1/3", "2/7"]] * 5000 + [["1", "1"]]))
    ok = run_cli(["eval", str(model), str(small)])
    assert ok.returncode == 0 and "t=e^(1/" in ok.stdout


# ---------------------------------------------------------------------- the fibre search's budget
def test_labellings_come_one_at_a_time_and_are_charged():
    """At H = 60 heads the labellings are astronomically many: the search takes them one at a
    time, each enumeration step counted as a row operation of its budget (never a list)."""
    from exactattn.learners.p2 import fibre
    before = fibre.ROW_OPS[0]
    first = next(fibre.iter_labellings(6, 60, [(0, 60)]))
    assert len(first) == 60 and fibre.ROW_OPS[0] > before
    assert fibre.labellings(2, 3, [(0, 3)]) == list(fibre.iter_labellings(2, 3, [(0, 3)]))
