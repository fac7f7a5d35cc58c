"""Too few heads told (exactattn/learners/p2/head_count.py, docs/design.md §4.3): an exact
oracle with more canonical heads than told is named `too-few-heads` with the count it shows;
an oracle that is not attention keeps its own failure."""

import json
from fractions import Fraction

import pytest
from conftest import run_cli

import exactattn as ea
from exactattn.errors import LearningFailure, TooFewHeads
from exactattn.learners.multi_head import learn_multi_head


@pytest.mark.parametrize("d, H, told", [(1, 2, {"heads": 1}), (2, 3, {"heads": 1}),
                                        (2, 3, {"heads_bound": 2}), (1, 4, {"heads": 2})])
def test_more_heads_than_told_is_named_with_the_count_seen(d, H, told):
    model = ea.random_multi_head(d, H, seed=5)
    orc = ea.Oracle(model)
    with pytest.raises(TooFewHeads) as info:
        learn_multi_head(orc, d, seed=0, **told)
    e = info.value
    H0 = next(iter(told.values()))
    assert e.reason == "too-few-heads" and e.details["told"] == H0
    assert e.details["at_least"] == len(model.canonical().heads) > H0
    assert f"heads_bound={H}" in str(e) and isinstance(e.__cause__, LearningFailure)
    # the diagnosis is counted apart from the schedule, as the validation queries are
    assert orc.validation_queries == e.details["diagnostic_queries"] > 0


def test_a_pole_that_is_no_power_of_t_is_not_called_more_heads():
    """The 3-head model's answers plus 1/(m + 7): a family of type (4, 4) whose extra pole
    z = 1/7 is not e^(k/L) — not attention, and not a count of heads."""
    model = ea.random_multi_head(2, 3, seed=5)

    def oracle(tokens):
        return model(tokens, "exact") + Fraction(1, len(tokens) + 6)
    with pytest.raises(LearningFailure) as info:
        learn_multi_head(oracle, 2, heads=1, seed=0)
    assert not isinstance(info.value, TooFewHeads)


def test_a_polynomial_in_the_copy_count_is_not_called_more_heads():
    model = ea.random_multi_head(2, 1, seed=5)

    def oracle(tokens):
        return model(tokens, "exact") + len(tokens) ** 2
    with pytest.raises(LearningFailure) as info:
        learn_multi_head(oracle, 2, heads=1, seed=0)
    assert not isinstance(info.value, TooFewHeads)


def test_a_bound_below_a_model_file_is_the_users_test(tmp_path):
    model = ea.random_multi_head(2, 3, seed=5)
    path = tmp_path / "m3.json"
    path.write_text(json.dumps(model.to_dict()))
    out = run_cli(["learn", "multi-head", "--model", str(path), "--heads-bound", "2"])
    assert out.returncode == 1, out.stderr
    assert "too-few-heads" in out.stderr and "--heads-bound 3" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_failure_elsewhere_with_the_heads_told_is_not_called_more_heads():
    """Attention with 2 heads on every query ending in the first token asked (x₁: the
    diagnosed family is of type (2, 2)), perturbed on the others: the run fails, and the
    family shows no more heads than the 2 told."""
    model = ea.random_multi_head(2, 2, seed=5)
    first = []

    def oracle(tokens):
        if not first and any(tokens[-1]):       # q0 = [x1] (not the zero probe token)
            first.append(tuple(tokens[-1]))
        y = model(tokens, "exact")
        return y if first and tuple(tokens[-1]) == first[0] else y + Fraction(1, 3)
    with pytest.raises(LearningFailure) as info:
        learn_multi_head(oracle, 2, heads=2, seed=0)
    assert not isinstance(info.value, TooFewHeads)
