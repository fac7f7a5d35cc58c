"""The exact core's cost against the oracle's own (P2 schedule, docs/design.md §2 fast exact
and batched evaluation, §4.3): one certified exact multi-head run per size, in CPU seconds
(robust to other processes on the machine), split into

* oracle — time inside the oracle's calls for the schedule's queries (the exact answers),
  and ms/query, that time per schedule query;
* valid — the oracle's time on the validation queries (after the schedule; random queries
  with many distinct tokens, evaluated directly, not through groups);
* learner — everything else the learner does: images in F_p, interpolation, discrete logs,
  reconstruction, matching, linear algebra (excluding oracle and certification);
* certification — the exact re-evaluation of every transcript query in Q(t);
* evidence — after the schedule: the validation queries' exact evaluation on the recovered
  model (their oracle time is in "valid") and the ``proves`` statement (the genericity
  conditions at the recovered model);

and "run ms/q", (oracle + learner + certification) per schedule query, and the ratios
learner / oracle and certification / oracle, all measured in the same run.
``images`` is the learner's first step alone: the schedule's answers mapped to F_p at the
ladder's first prime, a family at a time, as a ratio to the oracle.
Beside them, ``read`` is the floor of any learner that maps its answers through python-flint's
polynomial API: taking out every answer's coefficients (``coeffs()``) and loading them into an
``fmpq_mat`` (the first step of the images in F_p), timed on the same transcript.
Targets: at (16, 8) learner ≤ 0.35 × oracle, images ≤ 0.1 × oracle and the whole run ≤ 5 s; (24, 8) ≤ 40 s; at
(8, 4) the oracle ≤ 0.05 ms and the certified run ≤ 0.12 ms of CPU per query.
No assertion: the script prints figures and verdicts.  Timings on a shared machine vary:
``--repeat`` reports the minimum and the median of each figure.

    python benchmarks/bench_core.py [--sizes 16x8,24x8] [--repeat 3] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time

from flint import fmpq_mat

import exactattn as ea
from exactattn.learners import multi_head as mh
from exactattn.learners.p2 import recovery

from _sizes import parse_sizes   # benchmarks/_sizes.py (this directory)

TARGET_RATIO = 0.35
IMAGES_TARGET = 0.1
TARGET_SECONDS = {(16, 8): 5.0, (24, 8): 40.0}


class TimedOracle(ea.Oracle):
    """An Oracle that adds up the CPU time spent answering, query by query or in batches."""

    seconds = 0.0              # all answers: the schedule's and the validation queries'
    validation_seconds = 0.0   # the validation queries' alone
    _depth = 0

    def _time(self, ask, arg):
        self._depth += 1
        t = time.process_time()
        try:
            return ask(arg)
        finally:
            self._depth -= 1
            if not self._depth:
                spent = time.process_time() - t
                self.seconds += spent
                if self._validating:
                    self.validation_seconds += spent

    def __call__(self, tokens):
        return self._time(super().__call__, tokens)
    __call__.batch_safe = True              # timing only: a batch may bypass it

    def ask_many(self, queries):
        return self._time(super().ask_many, queries)


def _timed(fn, oracle):
    """``fn`` wrapped to add up its wall time, less the oracle's time inside it."""
    spent = {"seconds": 0.0}

    def wrapper(*a, **k):
        t, asked = time.process_time(), oracle.seconds
        try:
            return fn(*a, **k)
        finally:
            spent["seconds"] += time.process_time() - t - (oracle.seconds - asked)
    return wrapper, spent


def one_run(d, H, seed):
    model = ea.random_multi_head(d, H, seed=seed)
    oracle = TimedOracle(model, backend="exact")
    certify, validate = recovery._certify, mh._validate
    timed_certify, cert = _timed(certify, oracle)
    timed_validate, evidence = _timed(validate, oracle)
    recovery._certify, mh._validate = timed_certify, timed_validate
    try:
        t = time.process_time()
        res = mh.learn_multi_head(oracle, d, heads=H, seed=seed)
        total = time.process_time() - t
    finally:
        recovery._certify, mh._validate = certify, validate
    ok = res.model.head_set() == model.head_set() and res.certificate["certified"] is True
    learner = total - oracle.seconds - cert["seconds"] - evidence["seconds"]
    images = _images(res, H, seed)      # first: reading builds the answers' polynomials
    t = time.process_time()
    for _, y in res.transcript[1:]:
        for p in (y.num, y.den):
            fmpq_mat(1, len(p), p.coeffs())
    read = time.process_time() - t
    return {"images": images, "total": total, "oracle": oracle.seconds - oracle.validation_seconds,
            "valid": oracle.validation_seconds, "cert": cert["seconds"],
            "evidence": evidence["seconds"],
            "learner": learner, "read": read, "ok": ok, "queries": res.queries,
            "bits": res.certificate.get("prime_sizes_tried")}


def _images(res, H, seed):
    """CPU seconds of the schedule's images in F_p at the ladder's first (62-bit) prime, a
    family at a time (``ModularEngine.sample_many``), as the learner takes them; the image
    tables are made afresh (a new engine), as in a run."""
    import random
    from exactattn.learners.p2.engines import ModularEngine
    answers = [y for _, y in res.transcript]
    engine = ModularEngine(answers, 62, random.Random(seed), verify=False)
    t = time.process_time()
    for k in range(1, len(answers), 2 * H):
        engine.sample_many(answers[k:k + 2 * H])
    return time.process_time() - t


def floors(d, H, oracle_seconds, repeat=200):
    """What python-flint itself needs per copy-count family at (d, H) — 2d² − 1 families of
    2H answers at the ladder's first (62-bit) prime —, against the oracle's time per family
    (µs): the C root finder on a degree-H denominator with H distinct roots (``nmod_poly.roots``;
    every family's poles), the fit's C calls (the extended-Euclid fit,
    ``exactattn.arith.fields.euclid_fit``: the interpolating polynomial by one product with
    the inverse Vandermonde matrix, ``nmod_mat``, then the H₀ + 1 divisions of the remainder
    sequence and the gcd with Π(m − i), ``nmod_poly``), and the images' route (the 2H powers τ^k of the family's weights, N/D_a
    and D built as ``fmpz_mod_poly`` in r from H linear factors, two multipoint evaluations
    at the family's 2H points, 2H divisions),
    each the minimum over ``repeat`` calls on random data.  A target below a floor's ratio
    cannot be met by any learner written over these python-flint calls; the learner's floor
    adds images and fit for every family, the paired gcds (``PrimeField.paired_roots``: a
    composition and a gcd per pole) for the d² − 1 families I(u_i, x_j) other than
    I(u_1, x_1), and the root finder once, before any discrete log, reconstruction or
    matching."""
    import random
    from flint import fmpz_mod_ctx, fmpz_mod_poly_ctx, nmod_mat, nmod_poly
    from exactattn.learners.p2.engines import ladder_prime
    p = ladder_prime(62)[0]
    rng = random.Random(0)
    make = fmpz_mod_poly_ctx(p)
    Q = nmod_poly([1], p)
    for r in rng.sample(range(1, p), H):
        Q *= nmod_poly([-r, 1], p)
    n = 2 * H + 1
    b = [rng.randrange(p) for _ in range(n)]
    from exactattn.arith.fields import _nodes
    M, Vinv = _nodes(p, n)

    ws = rng.sample(range(2, p), H)
    zs = rng.sample(range(2, p), H)
    Q_sum = nmod_poly([1], p)
    for z, w in zip(zs, ws):
        Q_sum *= nmod_poly([1, z * w % p], p)
    Q_own = nmod_poly([1], p)
    for w in ws:
        Q_own *= nmod_poly([1, w], p)

    def paired():                       # PrimeField.paired_roots' C calls
        return [Q_own.compose(nmod_poly([0, z], p)).gcd(Q_sum) for z in zs]

    def fit():
        Y = nmod_poly((Vinv * nmod_mat(n, 1, b, p)).entries(), p)
        r0, r1, t0, t1 = M, Y, nmod_poly([], p), nmod_poly([1], p)
        while r1.degree() > H:
            q, rem = divmod(r0, r1)
            r0, r1, t0, t1 = r1, rem, t1, t0 - q * t1
        return t1.gcd(M)
    heads = [[rng.randrange(p) for _ in range(4)] for _ in range(H)]
    points = list(range(1, 2 * H + 1))

    tau = fmpz_mod_ctx(p)(rng.randrange(2, p - 1))
    exps = [rng.randrange(1 << 36) for _ in range(2 * H)]

    def images():
        weights = [int(tau ** k) for k in exps]     # the family's 2H powers τ^k
        N, D = make([0]), make([1])
        for (_, _, a1, a2), p1, p2 in zip(heads, weights[::2], weights[1::2]):
            Dh = make([p2, p1])
            N, D = N * Dh + D * make([a2, a1]), D * Dh
        return [x / y for x, y in zip(N.multipoint_evaluate(points),
                                      D.multipoint_evaluate(points))]

    def least(fn):
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        return best

    per = {"roots": least(Q.roots),
           "fit": least(fit), "paired": least(paired),
           "images": least(images)}
    fams = 2 * d * d - 1
    oracle = oracle_seconds / fams
    parts = "  ".join(f"{k} {1e6 * v:.1f} µs = {v / oracle:.3f}×" for k, v in per.items())
    # every family is imaged and fitted; the root finder runs once (on I(u_1, x_1)), the
    # paired gcds on the d² − 1 other families I(u_i, x_j), and a matching family's roots
    # are found among its candidates (one multipoint evaluation, not counted)
    learner = (per["images"] + per["fit"] + (per["paired"] * (d * d - 1) + per["roots"])
               / fams) / oracle
    print(f"{str((d, H)):>8} floors per family (oracle {1e6 * oracle:.0f} µs, {fams} families): "
          f"{parts}; the learner's floor (images + fit on every family, the paired gcds on "
          f"d² − 1 of them, roots once) "
          f"= {learner:.3f}× (learner target {TARGET_RATIO}×), images "
          f"{per['images'] / oracle:.3f}× (target {IMAGES_TARGET}×)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=parse_sizes, default=[(16, 8), (24, 8)])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true",
                    help="print a cProfile breakdown of one run per size (slower)")
    ap.add_argument("--floors", action="store_true",
                    help="print python-flint's own cost per family beside the oracle's")
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'(d, H)':>8} {'queries':>8} {'oracle s':>9} {'ms/query':>9} {'learner s':>10} "
          f"{'cert s':>8} {'valid s':>8} {'evid s':>7} {'total s':>8} {'run ms/q':>9} "
          f"{'learner/oracle':>15} {'cert/oracle':>12} {'images/oracle':>14} "
          f"{'read/oracle':>12}  verdict")
    for d, H in args.sizes:
        runs = [one_run(d, H, args.seed) for _ in range(args.repeat)]
        for stat, name in ((min, "min"), (statistics.median, "median")):
            if args.repeat == 1 and name == "median":
                continue
            r = {k: stat([x[k] for x in runs])
                 for k in ("total", "oracle", "valid", "cert", "evidence", "learner", "read",
                           "images")}
            ratio, cratio = r["learner"] / r["oracle"], r["cert"] / r["oracle"]
            target = TARGET_SECONDS.get((d, H))
            verdict = "WRONG" if not all(x["ok"] for x in runs) else (
                f"ratio {'PASS' if ratio <= TARGET_RATIO else 'MISS'}"
                + ("" if target is None else
                   f", time {'PASS' if r['total'] <= target else 'MISS'} (≤ {target:g} s)"))
            q = runs[0]["queries"]
            run = r["oracle"] + r["learner"] + r["cert"]
            print(f"{str((d, H)):>8} {q:>8} {r['oracle']:>9.2f} {1e3 * r['oracle'] / q:>9.4f} "
                  f"{r['learner']:>10.2f} {r['cert']:>8.2f} {r['valid']:>8.2f} "
                  f"{r['evidence']:>7.2f} {r['total']:>8.2f} {1e3 * run / q:>9.4f} "
                  f"{ratio:>15.3f} {cratio:>12.3f} {r['images'] / r['oracle']:>14.3f} "
                  f"{r['read'] / r['oracle']:>12.3f}  {verdict}"
                  + (f"  [{name} of {args.repeat}]" if args.repeat > 1 else ""))
        if args.floors:
            floors(d, H, min(x["oracle"] for x in runs))
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            one_run(d, H, args.seed)
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
