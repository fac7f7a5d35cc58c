from fractions import Fraction

import exactattn as ea


def test_single_token_output_is_v_dot_x():
    # one token: softmax weight 1, so F([x]) = Σ_h v_h·x exactly
    m = ea.random_multi_head(3, 2, seed=5)
    x = [1, -2, 3]
    y = m([x], "exact")
    expect = sum(sum(vi * xi for vi, xi in zip(h.v, x)) for h in m.heads)
    assert y == ea.ExpElement.from_rational(expect)
    assert y.is_rational() and y.as_rational() == Fraction(expect)
