"""Two parameterisations, one function: the learner returns the canonical form (P1 Prop 7.1:
multi-head parameters are not identifiable; P2: the canonical heads are).

Heads with the same W act as one head with the sum of their v: softmax(X W x_N) is shared,
so Σ_h α·(v_h·x) = α·((Σ_h v_h)·x).  A group whose v's sum to 0 contributes nothing.  Model A
(5 raw heads) and model B (3 raw heads) below differ in every raw parameter list, yet agree
exactly on every query; the learner, given only an upper bound on the number of heads,
returns the same 2 canonical heads from either.

    python examples/merging_heads.py [--out DIR] [--seed 0]
"""

from __future__ import annotations

import random
from fractions import Fraction as Q

import exactattn as ea
from exactattn.learners.multi_head import learn_multi_head

from _common import parser, pyplot, save

W1 = [[Q(1, 2), Q(-1, 4)], [Q(0), Q(3, 4)]]
W2 = [[Q(-3, 4), Q(1, 2)], [Q(1, 4), Q(0)]]
W3 = [[Q(1, 4), Q(1, 4)], [Q(-1, 2), Q(1, 2)]]
NAMES = {"W1": W1, "W2": W2, "W3": W3}


def two_models():
    """A = (W1, a), (W1, b), (W2, c), (W3, e), (W3, −e);  B = (W1, a+b), (W2, c/2), (W2, c/2).
    Both have canonical form {(W1, a+b), (W2, c)} (P1 Prop 7.1; P2 canonical heads)."""
    a, b, c, e = [Q(1), Q(-1, 2)], [Q(1, 2), Q(2)], [Q(-1), Q(1)], [Q(3, 2), Q(1)]
    A = ea.MultiHeadAttention([(W1, a), (W1, b), (W2, c), (W3, e), (W3, [-x for x in e])])
    B = ea.MultiHeadAttention([(W1, [p + q for p, q in zip(a, b)]), (W2, [x / 2 for x in c]),
                               (W2, [x / 2 for x in c])])
    return A, B


def random_queries(n: int, dim: int, seed: int):
    """n random rational queries of length 1…5 (entries in {−3…3}/2)."""
    rng = random.Random(seed)
    return [[[Q(rng.randint(-3, 3), 2) for _ in range(dim)] for _ in range(rng.randint(1, 5))]
            for _ in range(n)]


def learn(model, bound: int, seed: int):
    """The P2 learner told only H₀ = bound ≥ the number of canonical heads."""
    return learn_multi_head(ea.Oracle(model, backend="exact"), model.dim, heads_bound=bound,
                            seed=seed)


def _w_name(W):
    return next((n for n, M in NAMES.items() if [list(r) for r in W] == M), "W?")


def _panel(ax, W, v, title, color):
    ax.imshow([[float(x) for x in r] for r in W], cmap="coolwarm", vmin=-1, vmax=1)
    for i, r in enumerate(W):
        for j, x in enumerate(r):
            ax.text(j, i, str(x), ha="center", va="center", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_edgecolor(color)
        side.set_linewidth(3)
    ax.set_title(f"{title}\nv = ({', '.join(str(x) for x in v)})", fontsize=8)


COLORS = {"W1": "C0", "W2": "C1", "W3": "C2", "W?": "k"}


def v_sums(heads):
    """{W name: Σ v over the heads with that W}, in first-appearance order (P2 canonical
    heads: equal W merge, their v's add)."""
    sums = {}
    for W, v in heads:
        name = _w_name(W)
        sums[name] = [p + q for p, q in zip(sums[name], v)] if name in sums else list(v)
    return sums


def _sums_text(heads):
    """One line per W of the row: its v sum, and "dropped" where the sum is 0."""
    lines = []
    for name, total in sorted(v_sums(heads).items()):
        vec = f"({', '.join(str(x) for x in total)})"
        lines.append(f"{name}: Σv = {vec}" + ("  → dropped (sum 0)" if not any(total) else ""))
    return "\n".join(lines)


def draw(plt, rows):
    """One row of W-panels per parameterisation, frame colour = which W (the legend), and at
    the right of each row the v sums by W: what the canonical form keeps or drops."""
    from matplotlib.patches import Patch
    ncols = max(len(heads) for _, heads in rows) + 1
    fig, axes = plt.subplots(len(rows), ncols, figsize=(2.1 * ncols, 2.3 * len(rows)),
                             squeeze=False)
    for r, (label, heads) in enumerate(rows):
        for c in range(ncols):
            ax = axes[r][c]
            if c >= len(heads):
                ax.axis("off")
                continue
            W, v = heads[c]
            name = _w_name(W)
            _panel(ax, W, v, f"head {c + 1}: {name}", COLORS[name])
        axes[r][0].set_ylabel(label, fontsize=9)
        axes[r][-1].text(0.0, 0.5, _sums_text(heads), fontsize=8.5, va="center", ha="left",
                         transform=axes[r][-1].transAxes, family="monospace")
    names = [n for n in COLORS if n != "W?"]
    fig.legend(handles=[Patch(facecolor="none", edgecolor=COLORS[n], linewidth=3, label=n)
                        for n in names], title="frame colour = the head's W",
               loc="upper right", ncol=len(names), fontsize=9, title_fontsize=9)
    fig.suptitle("Same function, different parameters: the learner returns the canonical heads",
                 fontsize=11, x=0.02, ha="left")
    fig.text(0.01, 0.005, "Look at: the v sums at the right are equal in every row; the W3 pair "
             "(v and −v) sums to 0, so it is dropped and no query can see it.",
             fontsize=9, color="0.25")
    fig.tight_layout(rect=(0, 0.02, 1, 0.95))
    return fig


def explanation(A, B, agree, n_queries, resA, resB):
    canon = A.canonical()
    lines = [__doc__.strip().split("\n\n")[0].replace("\n", " "), "",
             f"Model A: {len(A)} raw heads; model B: {len(B)} raw heads; canonical form: "
             f"{len(canon)} heads.",
             f"same_function(A, B) (canonical forms equal): {ea.same_function(A, B)}",
             f"exact outputs equal on {n_queries} random queries (elements of Q(t)): {agree}",
             "",
             f"Learned from A (told H0 = {len(A)}): {resA.queries} queries "
             f"(4·H0·d²−2·H0+1 = {resA.expected_queries}), "
             f"{len(resA.heads)} heads, certified: {bool(resA.certificate)}",
             f"Learned from B (told H0 = {len(B)}): {resB.queries} queries "
             f"({resB.expected_queries}), "
             f"{len(resB.heads)} heads, certified: {bool(resB.certificate)}",
             f"both equal the canonical form of A: "
             f"{resA.model.head_set() == canon.head_set() == resB.model.head_set()}",
             "", "Canonical heads:"]
    lines += [f"  {_w_name(h.W)} = [{'; '.join(' '.join(str(x) for x in r) for r in h.W)}], "
              f"v = ({', '.join(str(x) for x in h.v)})" for h in canon.heads]
    lines += ["", "W3 appears in A with v and −v: that group cancels and is invisible to "
              "every query, so no learner can see it; W1 and W2 appear with several v's "
              "that only matter through their sum."]
    return "\n".join(lines)


def main():
    p = parser(__doc__)
    p.add_argument("--seed", type=int, default=0, help="seed of the queries and the learner")
    p.add_argument("--queries", type=int, default=20, help="random queries compared (default 20)")
    args = p.parse_args()
    plt = pyplot()
    A, B = two_models()
    qs = random_queries(args.queries, A.dim, args.seed)
    agree = all(A(q) == B(q) for q in qs)
    resA, resB = learn(A, len(A), args.seed), learn(B, len(B), args.seed)
    rows = [("model A (raw)", [(h.W, h.v) for h in A]), ("model B (raw)", [(h.W, h.v) for h in B]),
            ("learned from A", resA.heads), ("learned from B", resB.heads)]
    save(draw(plt, rows), args.out, "merging_heads",
         explanation(A, B, agree, len(qs), resA, resB))


if __name__ == "__main__":
    main()
