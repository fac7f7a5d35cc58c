"""One causal query read at every position is a whole copy-count family (docs/decoders.md).

With a causal mask, position k + 1 of the query [x − u, x, x, …, x] sees x − u once and x
k times, with x the query token, so its output is

    G̃(k) = v·x − Σ_h (v_h·u) / (1 + k e^{uᵀW_h x}),

the copy-count rational function of P2 (poles at k = −e^{−uᵀW_h x}) — all of it from one
forward pass, where P2's oracle needs one query per sample.  This script draws G̃ over real
k (the poles lie at negative k), the exact outputs of one causal query at k = 0 … n − 1
(computed in Q(t) and shown as decimals), and the 2H + 1 positions that determine it.

    python examples/causal_positions.py [--out DIR] [--heads 3] [--positions 12]
"""

from __future__ import annotations

from fractions import Fraction

from exactattn.models.decoder import CausalAttention

from _common import parser, pyplot, save


def teaching_model(H: int) -> CausalAttention:
    """A d = 2 causal model whose family at u = e₁, x = e₂ has scores s_h = W_h[0][1] spread
    over [−1, 1] and residues −v_h[0] of both signs (the poles −e^{−s_h} far apart)."""
    heads = []
    for h in range(H):
        s = Fraction(2 * h - (H - 1), max(1, H - 1))
        c = Fraction((-1) ** h * (h + 1), 2)
        heads.append(([[Fraction(1, 4), s], [Fraction(-h, 4), Fraction(1, 2)]],
                      [-c, Fraction(1, 1 + h)]))
    return CausalAttention(heads)


def family(model, u, x, k):
    """G̃(k) at real k from the model's parameters (the formula of the module docstring)."""
    import math
    v = [sum(h.v[i] for h in model.heads) for i in range(len(x))]
    out = float(sum(a * b for a, b in zip(v, x)))
    for h in model.heads:
        s = sum(u[i] * h.W[i][j] * x[j] for i in range(len(u)) for j in range(len(x)))
        out -= float(sum(a * b for a, b in zip(h.v, u))) / (1 + k * math.exp(float(s)))
    return out


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--heads", type=int, default=3, help="number of heads H (default 3)")
    p.add_argument("--positions", type=int, default=12, help="query length n (default 12)")
    a = p.parse_args(argv)
    H, n = a.heads, max(a.positions, 2 * a.heads + 1)
    model = teaching_model(H)
    u, x = [1, 0], [0, 1]
    query = [[x[0] - u[0], x[1] - u[1]]] + [x] * (n - 1)
    outputs = model(query)                                  # exact, in Q(t)
    values = [float(o) for o in outputs]
    for k, (o, y) in enumerate(zip(outputs, values)):       # the formula is the model's
        assert abs(family(model, u, x, k) - y) < 1e-9, (k, str(o))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    lo = -3.0
    grid = [lo + (n - 1 - lo) * i / 1200 for i in range(1201)]
    ys = [family(model, u, x, k) for k in grid]
    clip = 4 * max(abs(y) for y in values)
    ax.plot(grid, [y if abs(y) < clip else float("nan") for y in ys], color="0.3",
            label="G̃(k) = v·x − Σ (v_h·u)/(1 + k e^{uᵀW_h x}) over real k")
    import math
    for h in model.heads:
        s = sum(u[i] * h.W[i][j] * x[j] for i in range(2) for j in range(2))
        pole = -math.exp(-float(s))
        if pole > lo:
            ax.axvline(pole, color="tab:red", lw=0.8, ls=":")
    ax.plot(range(n), values, "o", color="tab:blue", ms=7,
            label=f"outputs of ONE causal query at positions 1…{n} (exact in Q(t))")
    ax.plot(range(2 * H + 1), values[:2 * H + 1], "o", mfc="none", mec="black", ms=12,
            label=f"the 2H+1 = {2 * H + 1} positions that determine G̃")
    ax.set_xlabel("k = copies of the query token x seen (position k + 1)")
    ax.set_ylabel("output")
    ax.set_title(f"causal mask: one query = one copy-count family (d = 2, H = {H})")
    ax.legend(fontsize=8, loc="best")
    text = (f"One causal query [x − u, x × {n - 1}] of a {H}-head model read at every "
            f"position: the outputs at positions 1 … {n} (blue) are the samples k = 0 … "
            f"{n - 1} of P2's copy-count rational function G̃(k) (grey), whose poles "
            f"k = −e^(−uᵀW_h x) (red, dotted) lie at negative k.  P2's oracle returns one "
            f"output per query, so it needs {2 * H + 1} queries for the {2 * H + 1} samples "
            f"that determine the family (circled); the causal oracle gives them in one.  "
            f"Every output is computed exactly in Q(t) and equals the formula at k.  The "
            f"causal learner asks 2d² − 1 such queries of length 2H + 1 (exactattn learn "
            f"causal; docs/decoders.md), against P2's 4Hd² − 2H + 1.\n")
    save(fig, a.out, "causal_positions", text)


if __name__ == "__main__":
    main()
