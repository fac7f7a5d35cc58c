"""Cost of the foreign-model adapters (docs/design.md §9).

* ``from_sympy``: a model's softmax output written in SymPy at query entries up to ``--box``
  (default 1000, where ``sympy.Poly`` runs out of memory), converted by the tree walk into
  Q(e^{1/L}); checked equal to the model's exact answer; build and conversion timed.
* the torch oracle (when torch is installed): one forward pass of a small
  nn.MultiheadAttention per query, on one thread (the adapter's default) and on torch's
  default thread count; the ratio is printed.

    python benchmarks/bench_adapters.py [--box 1000] [--dim 3] [--heads 2] [--tokens 5] [--repeat 200]
"""

from __future__ import annotations

import argparse
import random
import time

import sympy as sp

import exactattn as ea


def sympy_output(model, X):
    total = sp.Integer(0)
    for h in model.heads:
        W = sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in h.W])
        v = sp.Matrix([sp.Rational(x.numerator, x.denominator) for x in h.v])
        xN = sp.Matrix(X[-1])
        ws = [sp.exp((sp.Matrix(x).T * W * xN)[0]) for x in X]
        total += sp.Add(*[w * (sp.Matrix(x).T * v)[0] for w, x in zip(ws, X)]) / sp.Add(*ws)
    return total


def bench_sympy(a):
    m = ea.random_multi_head(a.dim, a.heads, seed=1)
    rng = random.Random(0)
    X = [[rng.randint(-a.box, a.box) for _ in range(a.dim)] for _ in range(a.tokens)]
    t0 = time.perf_counter()
    expr = sympy_output(m, X)
    t1 = time.perf_counter()
    y = ea.from_sympy(expr)
    t2 = time.perf_counter()
    ok = y == m(X, "exact")
    print(f"from_sympy: d={a.dim}, H={a.heads}, {a.tokens} tokens in [-{a.box}, {a.box}]: "
          f"build {1e3 * (t1 - t0):.1f} ms, convert {1e3 * (t2 - t1):.2f} ms, "
          f"exponent span {y.exponent_span()}, equal to the exact answer: {ok}")


def bench_torch(a):
    try:
        import torch
    except ImportError:
        print("torch oracle: torch not installed (pip install \".[torch]\" from a clone)")
        return
    from exactattn.adapters import torch as eat
    torch.manual_seed(0)
    E, H = 4, 2
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True).double().eval()
    X = [[1, 2, 0, -1], [0, 1, 1, 2], [2, -1, 0, 1]]
    times = {}
    for label, threads in (("1 thread", 1), (f"{torch.get_num_threads()} threads", None)):
        o = eat.oracle(mha, [1, 0, 0, 0], threads=threads)
        o(X)
        t = time.perf_counter()
        for _ in range(a.repeat):
            o(X)
        times[label] = (time.perf_counter() - t) / a.repeat
    (l1, t1), (l2, t2) = times.items()
    print(f"torch oracle: E={E}, H={H}, {len(X)} tokens: {1e3 * t1:.3f} ms per query on {l1}, "
          f"{1e3 * t2:.3f} ms on {l2} (ratio {t2 / t1:.1f})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--box", type=int, default=1000)
    p.add_argument("--dim", type=int, default=3)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--tokens", type=int, default=5)
    p.add_argument("--repeat", type=int, default=200)
    a = p.parse_args()
    bench_sympy(a)
    bench_torch(a)


if __name__ == "__main__":
    main()
