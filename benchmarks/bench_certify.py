"""Theorem A's design (docs/design.md §12): for every (d, H, H0) of a grid, a random H-head model
is learned by P2 with the bound H0, the result certified by ``certify`` (the moment-curve
design asked of the oracle, every answer compared exactly), its design certificate written and
re-checked by the stdlib checker.  Prints, per run, the design's queries, the CPU seconds of
certify, of writing the certificate and of the checker, and the certificate's size; then the
choice of design: queries × answer bits of the moment curve against the product grid
u = (λ^i), x = (μ^j) at the same sizes (the answer bits measured on M's answer at each
design's largest point).

    python benchmarks/bench_certify.py [--dims 1-8] [--heads 1-4] [--extra 2] [--seed 0]
                                       [--no-verify] [--choice-only]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from exactattn.learners.design import moment_curve as mc
from exactattn.learners.design.certify import certify
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.p2.cost import estimate_answer
from exactattn.models.attention import random_multi_head
from exactattn.oracles.oracle import Oracle
from proofs_checks.checker.verify import verify_file


def _range(text):
    lo, _, hi = text.partition("-")
    try:
        lo, hi = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a range like 1-8") from None
    if not 1 <= lo <= hi:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 ≤ A ≤ B")
    return range(lo, hi + 1)


def _cpu():
    return time.process_time()


def run(d, H, H0, seed, verify, folder):
    model = random_multi_head(d, H, seed=seed * 1000 + d * 31 + H)
    res = learn_multi_head(Oracle(model), d, heads_bound=H0, seed=seed, validate=0)
    t = _cpu()
    c = certify(Oracle(model), res.model, heads_bound=H0, force=True)
    t_certify = _cpu() - t
    if not c.holds or res.model.head_set() != model.head_set():
        return None
    path = os.path.join(folder, "c.json")
    t = _cpu()
    c.write_certificate(path)
    t_write = _cpu() - t
    t_verify = None
    if verify:
        t = _cpu()
        verify_file(path)
        t_verify = _cpu() - t
    return c.queries, t_certify, t_write, t_verify, os.path.getsize(path)


def grid_families(d, H, H0):
    """The product grid's families: L(d−1)+1 values of λ per μ, (L−1)(d−1)+1 values of μ."""
    L = H + H0
    return (L * (d - 1) + 1) * ((L - 1) * (d - 1) + 1)


def answer_bits(model, d, samples, u, x):
    y = [a + b for a, b in zip(x, u)]
    return estimate_answer(model, [y] * samples + [x]).exponent_bits


def choice(d, H, H0, seed):
    """(moment queries, moment bits, grid queries, grid bits) at (d, H, H0): both designs at
    the same small-height rational points, in homogeneous (integer) coordinates."""
    model = random_multi_head(d, H, seed=seed * 1000 + d * 31 + H).canonical()
    S = H + H0 - 1
    n = mc.families_needed(d, H, H0)
    m_bits = max(answer_bits(model, d, S, mc.u_of(lam, d), mc.x_of(lam, d))
                 for lam in _highest(mc.points(n)))
    L = H + H0
    a, b = L * (d - 1) + 1, (L - 1) * (d - 1) + 1
    g_bits = max(answer_bits(model, d, S, mc.u_of(lam, d), mc.u_of(mu, d))
                 for lam in _highest(mc.points(a)) for mu in _highest(mc.points(b)))
    return d + n * S, m_bits, d + grid_families(d, H, H0) * S, g_bits


def _highest(pts):
    """The points of the largest height (where the exponents are largest)."""
    top = max(map(mc.height, pts))
    return [p for p in pts if mc.height(p) == top]


def runs(a) -> int:
    """Every (d, H, H0) of the grid: print one row each; returns the runs not certified."""
    print(f"{'d':>2} {'H':>2} {'H0':>2} {'queries':>8} {'certify s':>9} {'write s':>8} "
          f"{'check s':>8} {'MB':>7}")
    worst, bad = {"certify": 0.0, "check": 0.0}, 0
    with tempfile.TemporaryDirectory() as folder:
        for d in a.dims:
            for H in a.heads:
                for H0 in range(H, H + a.extra + 1):
                    out = run(d, H, H0, a.seed, not a.no_verify, folder)
                    if out is None:
                        bad += 1
                        print(f"{d:>2} {H:>2} {H0:>2}  NOT CERTIFIED")
                        continue
                    q, tc, tw, tv, size = out
                    worst["certify"] = max(worst["certify"], tc)
                    worst["check"] = max(worst["check"], tv or 0.0)
                    print(f"{d:>2} {H:>2} {H0:>2} {q:>8} {tc:>9.3f} {tw:>8.3f} "
                          f"{'-' if tv is None else f'{tv:.3f}':>8} {size / 1e6:>7.2f}",
                          flush=True)
    print(f"slowest certify {worst['certify']:.2f} s, slowest check {worst['check']:.2f} s; "
          f"{bad} run(s) not certified")
    return bad


def check_cost(model, d, S, pairs, total):
    """(seconds, bytes) of the stdlib checker's work (parse the answers, evaluate M, compare)
    on the families of `pairs` (u, x), scaled to `total` queries."""
    from proofs_checks.certificates import element_json
    from proofs_checks.checker.qt import attention, element, same_element
    heads = [(tuple(map(tuple, h.W)), tuple(h.v)) for h in model.heads]
    qs = []
    for u, x in pairs:
        y = [p + q for p, q in zip(x, u)]
        qs += [[y] * k + [x] for k in range(1, S + 1)]
    text = json.dumps([element_json(model(q, "exact")) for q in qs]).encode()
    t = _cpu()
    for q, a in zip(qs, json.loads(text)):
        if not same_element(attention(heads, q), element(a, "answer")):
            raise AssertionError("the model does not give its own answer")
    return (_cpu() - t) * total / len(qs), len(text) * total / len(qs)


def checker_choice(d, H, H0, seed, sample=60):
    """The checker's time and the answers' bytes, moment curve against product grid, each
    from `sample` random families scaled to the design's size."""
    import random
    rng = random.Random(seed)
    model = random_multi_head(d, H, seed=seed * 1000 + d * 31 + H).canonical()
    L = H + H0
    n = mc.families_needed(d, H, H0)
    pts = rng.sample(mc.points(n), min(sample, n))
    moment = check_cost(model, d, L - 1, [(mc.u_of(p, d), mc.x_of(p, d)) for p in pts],
                        n * (L - 1))
    a, b = L * (d - 1) + 1, (L - 1) * (d - 1) + 1
    P, Q = mc.points(a), mc.points(b)
    pairs = [(mc.u_of(rng.choice(P), d), mc.u_of(rng.choice(Q), d)) for _ in range(sample)]
    grid = check_cost(model, d, L - 1, pairs, a * b * (L - 1))
    return moment, grid


def choices(seed):
    print("the design's choice: queries × answer bits (M's answer at the highest points)")
    print(f"{'(d,H,H0)':>10} {'moment q':>9} {'bits':>6} {'q×bits':>10} {'grid q':>8} "
          f"{'bits':>6} {'q×bits':>10}")
    for d, H, H0 in ((3, 1, 3), (3, 2, 3), (4, 2, 3), (8, 4, 6)):
        mq, mb, gq, gb = choice(d, H, H0, seed)
        print(f"{str((d, H, H0)):>10} {mq:>9} {mb:>6} {mq * mb:>10} {gq:>8} {gb:>6} "
              f"{gq * gb:>10}")
    (ms, mB), (gs, gB) = checker_choice(8, 4, 6, seed)
    print(f"the stdlib checker at (8, 4, 6), from 60 sampled families: moment curve ~{ms:.1f} s "
          f"and {mB / 1e6:.0f} MB of answers, product grid ~{gs:.1f} s and {gB / 1e6:.0f} MB")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dims", type=_range, default=_range("1-8"))
    p.add_argument("--heads", type=_range, default=_range("1-4"))
    p.add_argument("--extra", type=int, default=2, help="H0 from H to H + EXTRA (default 2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-verify", action="store_true", help="skip the stdlib checker")
    p.add_argument("--choice-only", action="store_true",
                   help="only the table of the design's choice (no runs)")
    a = p.parse_args(argv)
    bad = 0 if a.choice_only else runs(a)
    print()
    choices(a.seed)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
