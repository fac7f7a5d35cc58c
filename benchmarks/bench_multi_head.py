"""Wall time of certified exact multi-head recovery (P2 schedule, docs/design.md §4.3) and the
speed-up of one exact interpolation in the modular engine over sympy's generic
fraction-field solve.

    python benchmarks/bench_multi_head.py [--quick] [--skip-sympy]

Targets (on a 2-core machine): (4,3) ≤ 1 s, (8,4) ≤ 5 s, (16,8) ≤ 60 s; one
interpolation at H = 3 at least 1000× faster than sympy.
"""

from __future__ import annotations

import argparse
import random
import time

import exactattn as ea
from exactattn.learners.multi_head import learn_multi_head

TARGETS = {(4, 3): 1.0, (8, 4): 5.0, (16, 8): 60.0}


def time_recovery(d, H, seed=0):
    model = ea.random_multi_head(d, H, seed=seed)
    oracle = ea.Oracle(model, backend="exact")
    t = time.perf_counter()
    res = learn_multi_head(oracle, d, heads=H, seed=seed)
    secs = time.perf_counter() - t
    ok = res.model.head_set() == model.head_set() and res.certificate["certified"]
    return secs, res, ok


def family_samples(H=3, d=4, seed=1, box=3):
    """The 2H+1 exact samples G(0..2H) of one copy-count family of a random model.  A small
    box keeps the degrees in t small enough for sympy's dense fraction field to finish."""
    model = ea.random_multi_head(d, H, seed=seed)
    rng = random.Random(seed)
    u = [rng.randint(-box, box) for _ in range(d)]
    x = [rng.randint(-box, box) for _ in range(d)]
    xu = [a + b for a, b in zip(x, u)]
    return [model([xu] * m + [x], "exact") for m in range(2 * H + 1)], H


def time_modular_interpolation(samples, H, reps=50):
    """Images in F_p, interpolation, discrete logs and rational reconstruction of one family
    (the engine — prime and primitive root — is set up once per learner run, not timed)."""
    from exactattn.learners.p2.interpolation import solve_family
    from exactattn.learners.p2.engines import ModularEngine
    eng = ModularEngine(samples, 62, random.Random(0))
    t = time.perf_counter()
    for _ in range(reps):
        K, heads = solve_family(eng.field, [eng.sample(y) for y in samples], H)
        out = (eng.scalar(K), [(eng.score(z), eng.scalar(c)) for z, c in heads])
    return (time.perf_counter() - t) / reps, out


def time_sympy_interpolation(samples, H):
    """The same (2H+1)×(2H+1) linearised system solved by sympy over QQ(t)."""
    import sympy
    from sympy.polys.matrices import DomainMatrix
    t = sympy.Symbol("t")
    L = 1
    for y in samples:
        L = L * y.L // __import__("math").gcd(L, y.L)
    K = sympy.QQ.frac_field(t)

    def elem(y):
        y = y.lift(L)
        num = sum(sympy.Rational(int(c.p), int(c.q)) * t ** k for k, c in y.terms()[0])
        den = sum(sympy.Rational(int(c.p), int(c.q)) * t ** k for k, c in y.terms()[1])
        return K.from_sympy(num) / K.from_sympy(den)

    start = time.perf_counter()
    ys = [elem(y) for y in samples]
    rows, rhs = [], []
    for m, y in enumerate(ys):
        powers = [K.one * m ** i for i in range(H + 1)]
        rows.append(powers + [-(y * pw) for pw in powers[1:]])
        rhs.append([y])
    A = DomainMatrix(rows, (2 * H + 1, 2 * H + 1), K)
    b = DomainMatrix(rhs, (2 * H + 1, 1), K)
    A.lu_solve(b)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip (16, 8)")
    ap.add_argument("--skip-sympy", action="store_true")
    args = ap.parse_args()
    print(f"{'(d, H)':>8} {'queries':>8} {'seconds':>9} {'target':>7}  verdict")
    for (d, H), target in TARGETS.items():
        if args.quick and d == 16:
            continue
        secs, res, ok = time_recovery(d, H)
        verdict = ("PASS" if secs <= target else "MISS") if ok else "WRONG"
        print(f"{str((d, H)):>8} {res.queries:>8} {secs:>9.2f} {target:>7.0f}  {verdict}"
              f"  (prime {res.extra['engine']['prime_bits']} bits, "
              f"modular failure bound {float(eval_fraction(res.extra['engine']['failure_bound'])):.1e})")
    if args.skip_sympy:
        return
    samples, H = family_samples()
    ours, _ = time_modular_interpolation(samples, H)
    theirs = time_sympy_interpolation(samples, H)
    ratio = theirs / ours
    print(f"one H={H} interpolation: modular engine {ours * 1e3:.2f} ms, sympy QQ(t) "
          f"{theirs:.2f} s, speed-up {ratio:,.0f}x  target 1000x  "
          f"{'PASS' if ratio >= 1000 else 'MISS'}")


def eval_fraction(text):
    from fractions import Fraction
    return Fraction(text)


if __name__ == "__main__":
    main()
