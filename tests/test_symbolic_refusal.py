"""The learners refuse the symbolic backend cleanly (docs/design.md §2: it is for identities;
the CLI does not offer it)."""

from __future__ import annotations

import pytest

import exactattn as ea


@pytest.mark.parametrize("learn", [
    lambda o: ea.learn_single_head(o, 2),
    lambda o: ea.learn_low_rank(o, 2, rank=1),
    lambda o: ea.learn_multi_head(o, 2, heads=1),
    lambda o: ea.learn_transformer(o, 2),
], ids=["single-head", "low-rank", "multi-head", "transformer"])
def test_learners_refuse_the_symbolic_backend_with_a_clear_error(learn):
    """docs/design.md §2: the learners do not run on the symbolic backend — a one-line
    ValueError saying which backends they run on, not an AttributeError from deep inside."""
    with pytest.raises(ValueError, match="backend"):
        learn(ea.Oracle(ea.random_head(2, seed=1), backend="symbolic"))
