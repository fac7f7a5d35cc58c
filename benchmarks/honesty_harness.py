"""Randomised honesty harness (docs/honesty.md; docs/design.md §8): does any result claim
more than it proves?

Each trial draws a model and an oracle of one *kind* from its seed, runs a learner with its
default settings (validation on), and classifies the outcome:

* ``recovered`` — a result was returned and it is right: exact — the same function as the
  truth (canonical equality); mp / float — the true canonical head count and every parameter
  within the result's error bar;
* ``named: <reason>`` — a named failure (a LearningFailure subclass, or a one-line
  ValueError refusal such as a cost estimate above the budget);
* ``WRONG`` — a result was returned but it is not the truth (exact), has the wrong head count
  or an error outside its bar (inexact), or the oracle was not attention of the assumed
  class at all (out-of-class: any returned result is wrong);
* ``crash`` — any other exception (counted, its type and message kept, never hidden).

Categories: exact in-class generic draws; exact degenerate draws (tiny boxes, duplicated W,
cancelling v, W = 0, d = 1, huge v, tiny and huge rational entries); out-of-class oracles
(score biases, a change beyond the schedule's length, a change only on three or more distinct
tokens, more heads than the bound, a constant offset, a two-head oracle that agrees with one
head on P1's schedule); mp / float oracles at stated or inferred precisions (float64
answers, an mp oracle with a stated precision, rounding to k digits, heads 1e-4 apart,
d = 1 with H = 3, an out-of-class float oracle).

    python benchmarks/honesty_harness.py [--trials N] [--workers W] [--seed S] [--json]
                                         [--schedule design]

``--schedule design`` runs the kinds whose trials learn multi-head attention from an exact
oracle (:data:`SCHEDULE_KINDS`) with every run on that schedule (the deterministic design
learner, Theorem A; docs/beyond.md §8).  It prints the category × outcome table, the kinds' tallies and the wall time; exit status 1 if
any trial is WRONG or a crash.  Trials are pure functions of (kind, seed), spread over a
process pool.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import Counter, defaultdict
from fractions import Fraction

import exactattn as ea
from exactattn.analysis import adversaries as adv
from exactattn.learners.result.compare import parameter_error
from exactattn.learners.p1.low_rank import learn_low_rank, random_low_rank_head
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.p1.single_head import learn_single_head
from exactattn.oracles.oracle import Rounding

OUTCOMES = ("recovered", "named", "WRONG", "crash")


# ---------------------------------------------------------------------- judging
class Wrong(Exception):
    """A returned result that is not the truth (the harness's verdict, not the library's)."""


def exact_right(truth, res):
    if not ea.same_function(res.model, truth):
        raise Wrong(f"returned {len(res.heads)} heads, not the truth's canonical form")


def inexact_right(truth, res):
    canon = truth.canonical() if truth.is_rational else truth
    if len(res.heads) != len(canon.heads):
        raise Wrong(f"{len(res.heads)} heads returned for {len(canon.heads)}")
    bar = res.error_bar
    if bar is None:
        raise Wrong("an inexact result without an error bar")
    err = parameter_error(canon, res.heads, dps=60)
    if not err <= bar.bound:
        raise Wrong(f"parameter error {float(err):.3g} outside the bar {float(bar.bound):.3g}")


def out_of_class(res):
    raise Wrong(f"an out-of-class oracle returned as {len(res.heads)} heads "
                f"({res.queries} + {res.validation_queries} validation queries)")


# ---------------------------------------------------------------------- models
def _rat(rng, top=3, den=4):
    return Fraction(rng.randint(-top, top), den)


def _head(rng, d, W=None, v=None):
    W = W if W is not None else [[_rat(rng) for _ in range(d)] for _ in range(d)]
    v = v if v is not None else [Fraction(rng.choice([-4, -3, -2, -1, 1, 2, 3, 4]), 2)
                                 for _ in range(d)]
    return ea.AttentionHead(W, v)


def _model(rng, d, H):
    return ea.random_multi_head(d, H, seed=rng.getrandbits(32))


def _another(rng, d, H, m, kind="rational"):
    """A model of the same shape that is not the same function as ``m`` (else the switching
    oracle would be ``m`` itself, in class)."""
    while True:
        o = ea.random_multi_head(d, H, seed=rng.getrandbits(32), kind=kind)
        if kind != "rational" or not ea.same_function(o, m):
            return o


def _dims(rng, dmax=3, hmax=3):
    return rng.randint(1, dmax), rng.randint(1, hmax)


# ---------------------------------------------------------------------- in-class, exact
def multi_head_generic(rng, seed):
    d, H = _dims(rng)
    m = _model(rng, d, H)
    told = {"heads": H} if rng.random() < 0.5 else {"heads_bound": H + rng.randint(0, 1)}
    exact_right(m, learn_multi_head(ea.Oracle(m), d, seed=seed, **told))


def single_head_generic(rng, seed):
    d = rng.randint(1, 4)
    m = _model(rng, d, 1)
    exact_right(m, learn_single_head(ea.Oracle(m), d, seed=seed))


def low_rank_generic(rng, seed):
    d = rng.randint(2, 4)
    r = rng.randint(1, d)
    m = ea.MultiHeadAttention([random_low_rank_head(d, r, seed=seed)])
    kw = {"rank": r} if rng.random() < 0.5 else {}
    exact_right(m, learn_low_rank(ea.Oracle(m), d, seed=seed, **kw))


def design_generic(rng, seed):
    """The design learner (no random draw) at d ≤ 4, H ≤ 3, told H or a bound H₀ ≤ 3."""
    d, H = rng.randint(1, 4), rng.randint(1, 3)
    m = _model(rng, d, H)
    told = {"heads": H} if rng.random() < 0.5 else {"heads_bound": min(3, H + rng.randint(0, 1))}
    exact_right(m, learn_multi_head(ea.Oracle(m), d, schedule="design", **told))


def economy_generic(rng, seed):
    d, H = rng.randint(2, 3), rng.randint(1, 2)
    m = _model(rng, d, H)
    schedule = rng.choice(["economy", "adaptive"])
    told = {"heads": H} if schedule == "economy" else {"heads_bound": H}
    exact_right(m, learn_multi_head(ea.Oracle(m), d, seed=seed, schedule=schedule, **told))


def transformer_generic(rng, seed):
    d, H = rng.randint(1, 2), 1
    T = ea.random_transformer(d, H, 2, seed=seed)
    res = ea.learn_transformer(ea.Oracle(T), d, heads=H, hidden=2, seed=seed)
    if not ea.same_transformer_function(T, res.transformer):
        raise Wrong("a different Transformer function")


# ---------------------------------------------------------------------- degenerate, exact
def tiny_box(rng, seed):
    d, H = _dims(rng, 2, 2)
    m = _model(rng, d, H)
    exact_right(m, learn_multi_head(ea.Oracle(m), d, heads=H, seed=seed,
                                    box=rng.choice([1, 2])))


def duplicated_W(rng, seed):
    d = rng.randint(1, 3)
    a = _head(rng, d)
    m = ea.MultiHeadAttention([a, _head(rng, d, W=a.W), _head(rng, d)])
    exact_right(m, learn_multi_head(ea.Oracle(m), d, heads=3, seed=seed))


def cancelling_v(rng, seed):
    d = rng.randint(1, 3)
    a = _head(rng, d)
    m = ea.MultiHeadAttention([a, _head(rng, d, W=a.W, v=[-x for x in a.v]), _head(rng, d)])
    exact_right(m, learn_multi_head(ea.Oracle(m), d, heads_bound=3, seed=seed))


def zero_W(rng, seed):
    d = rng.randint(1, 3)
    zero = [[Fraction(0)] * d for _ in range(d)]
    m = ea.MultiHeadAttention([_head(rng, d, W=zero), _head(rng, d)])
    exact_right(m, learn_multi_head(ea.Oracle(m), d, heads=2, seed=seed))


def dim_one(rng, seed):
    H = rng.randint(1, 3)
    m = _model(rng, 1, H)
    exact_right(m, learn_multi_head(ea.Oracle(m), 1, heads=H, seed=seed))


def huge_v(rng, seed):
    d, H = _dims(rng, 2, 2)
    m = ea.MultiHeadAttention([
        _head(rng, d, v=[Fraction(rng.randint(1, 10 ** 6) * 10 ** 30 + rng.randint(0, 99),
                                  rng.randint(1, 7)) for _ in range(d)]) for _ in range(H)])
    exact_right(m, learn_multi_head(ea.Oracle(m), d, heads=H, seed=seed))


def extreme_rationals(rng, seed):
    d, H = _dims(rng, 2, 2)
    den = rng.choice([10 ** 9 + 7, 10 ** 20 + 39, 2 ** 64])
    big = rng.choice([1, 10 ** 12])
    m = ea.MultiHeadAttention([
        _head(rng, d, W=[[Fraction(rng.randint(-den, den) * big, den) for _ in range(d)]
                         for _ in range(d)]) for _ in range(H)])
    exact_right(m, learn_multi_head(ea.Oracle(m), d, heads=H, seed=seed))


# ---------------------------------------------------------------------- out of class, exact
def bias_final(rng, seed):
    d, H = rng.randint(1, 2), rng.randint(1, 2)
    m = _model(rng, d, H)
    f = adv.score_bias(m, adv.final_token_bias(Fraction(rng.choice([-2, -1, 1, 2]),
                                                        rng.randint(1, 3))))
    out_of_class(learn_multi_head(ea.Oracle(f, dim=d, backend="exact"), d, heads=H, seed=seed))


def bias_key(rng, seed):
    d, H = rng.randint(1, 2), rng.randint(1, 2)
    m = _model(rng, d, H)
    f = adv.score_bias(m, adv.key_bias(rng.randrange(d), Fraction(rng.randint(1, 3), 4)))
    out_of_class(learn_multi_head(ea.Oracle(f, dim=d, backend="exact"), d,
                                  heads_bound=H + rng.randint(0, 1), seed=seed))


def beyond_length(rng, seed):
    d, H = _dims(rng)
    m = _model(rng, d, H)
    f = adv.beyond_length(m, _another(rng, d, H, m), 2 * H + 1)
    out_of_class(learn_multi_head(ea.Oracle(f, dim=d, backend="exact"), d, heads=H, seed=seed))


def three_distinct(rng, seed):
    d, H = _dims(rng)
    m = _model(rng, d, H)
    f = adv.on_distinct(m, _another(rng, d, H, m), 3)
    told = {"heads": H} if rng.random() < 0.5 else {"heads_bound": H + 1}
    out_of_class(learn_multi_head(ea.Oracle(f, dim=d, backend="exact"), d, seed=seed, **told))


def three_distinct_single(rng, seed):
    d = rng.randint(1, 3)
    m = _model(rng, d, 1)
    out_of_class(learn_single_head(ea.Oracle(adv.on_distinct(m, _another(rng, d, 1, m), 3),
                                             dim=d,
                                             backend="exact"), d, seed=seed))


def more_heads_than_bound(rng, seed):
    d, H = _dims(rng, 2, 2)
    m = _model(rng, d, H + 1)
    out_of_class(learn_multi_head(ea.Oracle(m), d, heads_bound=H, seed=seed))


def constant_offset(rng, seed):
    d, H = _dims(rng, 2, 2)
    m = _model(rng, d, H)
    c = Fraction(rng.choice([-1, 1]), rng.randint(1, 5))
    out_of_class(learn_multi_head(ea.Oracle(lambda t: m(t, "exact") + c, dim=d,
                                            backend="exact"), d, heads=H, seed=seed))


def p1_adversarial_two_heads(rng, seed):
    """A second head seen only by the probe e_k with the same row k of W: P1's d² + d answers
    are exactly one head's (docs/design.md §4.1)."""
    d = rng.randint(2, 3)
    a = _head(rng, d)
    k = rng.randrange(d)
    W2 = a.W
    while W2 == a.W:                 # a different W: two canonical heads, not one
        W2 = tuple(tuple(_rat(rng) for _ in range(d)) if i != k else a.W[k] for i in range(d))
    v2 = [Fraction(0)] * d
    v2[k] = Fraction(1)
    m = ea.MultiHeadAttention([a, _head(rng, d, W=W2, v=v2)])
    out_of_class(learn_single_head(ea.Oracle(m), d, seed=seed, holdout=0))


# ---------------------------------------------------------------------- inexact
def _real(rng, d, H):
    return ea.random_multi_head(d, H, seed=rng.getrandbits(32), kind="real")


def float64_oracle(rng, seed):
    d, H = rng.randint(1, 3), rng.randint(1, 2)
    m = _real(rng, d, H)
    backend = rng.choice(["float", "mp"])
    inexact_right(m, learn_multi_head(ea.Oracle(lambda t: float(m(t, "float")), dim=d,
                                                backend=backend), d, heads=H, seed=seed))


def mp_stated(rng, seed):
    d, H = rng.randint(1, 3), rng.randint(1, 3)
    m = _real(rng, d, H)
    inexact_right(m, learn_multi_head(ea.Oracle(m, backend="mp", dps=30), d, heads=H,
                                      seed=seed, oracle_precision=Fraction(1, 10 ** 27)))


def rounded_digits(rng, seed):
    d, H = rng.randint(1, 2), rng.randint(1, 2)
    m = _real(rng, d, H)
    k = rng.choice([8, 12, 20, 30])
    inexact_right(m, learn_multi_head(ea.Oracle(m, backend="mp", dps=40,
                                                noise=Rounding(k)), d, heads=H, seed=seed))


def heads_1e4_apart(rng, seed):
    d = rng.randint(3, 8)
    a = ea.random_head(d, seed=rng.getrandbits(32), kind="real")
    W2 = [[w + 1e-4 * rng.choice([-1, 1]) for w in row] for row in a.W]
    m = ea.MultiHeadAttention([a, ea.AttentionHead(W2, [x * 1.5 for x in a.v])])
    inexact_right(m, learn_multi_head(ea.Oracle(m, backend="float"), d, heads=2, seed=seed))


def d1_h3_float(rng, seed):
    m = _real(rng, 1, 3)
    inexact_right(m, learn_multi_head(ea.Oracle(m, backend="float"), 1, heads=3, seed=seed))


def single_low_rank_inexact(rng, seed):
    d = rng.randint(2, 4)
    if rng.random() < 0.5:
        m = _real(rng, d, 1)
        res = learn_single_head(ea.Oracle(m, backend=rng.choice(["mp", "float"])), d, seed=seed)
    else:
        r = rng.randint(1, d)
        m = ea.MultiHeadAttention([random_low_rank_head(d, r, seed=seed, kind="real")])
        res = learn_low_rank(ea.Oracle(m, backend="mp"), d, rank=r, seed=seed)
    inexact_right(m, res)


def out_of_class_float(rng, seed):
    d, H = rng.randint(1, 3), rng.randint(1, 2)
    m, o = _real(rng, d, H), _real(rng, d, H)       # Gaussian: different with probability 1
    backend = rng.choice(["float", "mp"])
    f = adv.on_distinct(m, o, 3, backend)
    out_of_class(learn_multi_head(ea.Oracle(f, dim=d, backend=backend), d, heads=H,
                                  seed=seed))


#: kind -> (category, trial function, weight: its share of the trials)
KINDS = {
    "multi-head P2": ("exact in-class", multi_head_generic, 14),
    "single head": ("exact in-class", single_head_generic, 6),
    "low rank": ("exact in-class", low_rank_generic, 5),
    "economy / adaptive": ("exact in-class", economy_generic, 3),
    "design learner (d ≤ 4)": ("exact in-class", design_generic, 2),
    "Transformer": ("exact in-class", transformer_generic, 1),
    "tiny box": ("exact degenerate", tiny_box, 6),
    "duplicated W": ("exact degenerate", duplicated_W, 4),
    "cancelling v": ("exact degenerate", cancelling_v, 4),
    "W = 0": ("exact degenerate", zero_W, 3),
    "d = 1": ("exact degenerate", dim_one, 4),
    "huge v": ("exact degenerate", huge_v, 3),
    "tiny/huge rationals": ("exact degenerate", extreme_rationals, 3),
    "score bias (final token)": ("out-of-class", bias_final, 5),
    "score bias (key)": ("out-of-class", bias_key, 4),
    "change beyond length 2H+1": ("out-of-class", beyond_length, 5),
    "change on 3 distinct tokens": ("out-of-class", three_distinct, 5),
    "3 distinct tokens, single head": ("out-of-class", three_distinct_single, 2),
    "H+1 heads, bound H": ("out-of-class", more_heads_than_bound, 3),
    "constant offset": ("out-of-class", constant_offset, 2),
    "two heads on P1's schedule": ("out-of-class", p1_adversarial_two_heads, 2),
    "float64 answers": ("mp/float", float64_oracle, 3),
    "mp, stated precision": ("mp/float", mp_stated, 2),
    "rounded to k digits": ("mp/float", rounded_digits, 2),
    "heads 1e-4 apart (float64)": ("mp/float", heads_1e4_apart, 1),
    "d = 1, H = 3 (float)": ("mp/float", d1_h3_float, 1),
    "single head / low rank": ("mp/float", single_low_rank_inexact, 2),
    "out-of-class float/mp": ("mp/float", out_of_class_float, 2),
}


#: the kinds whose trials learn multi-head attention from an exact oracle: ``--schedule``
#: runs them on another schedule
SCHEDULE_KINDS = ("multi-head P2", "economy / adaptive", "design learner (d ≤ 4)", "tiny box",
                  "duplicated W", "cancelling v", "W = 0", "d = 1", "huge v",
                  "tiny/huge rationals", "score bias (final token)", "score bias (key)",
                  "change beyond length 2H+1", "change on 3 distinct tokens",
                  "H+1 heads, bound H", "constant offset")


def _on_schedule(learn, schedule):
    """``learn_multi_head`` with every run on ``schedule`` (a draw's box dropped: the design
    schedule draws no vector)."""
    def learn_on(oracle, d, **kw):
        kw.pop("box", None)
        return learn(oracle, d, **{**kw, "schedule": schedule})
    return learn_on


def run_trial(kind: str, seed: int, schedule: str | None = None):
    """(kind, outcome, detail, seconds) of one trial: a pure function of (kind, seed) and
    the schedule every multi-head run is put on (None: each trial's own)."""
    _, fn, _ = KINDS[kind]
    rng = random.Random(f"{kind}:{seed}")
    start = time.perf_counter()
    own = globals()["learn_multi_head"]
    if schedule is not None:
        globals()["learn_multi_head"] = _on_schedule(own, schedule)
    try:
        fn(rng, seed)
        outcome, detail = "recovered", None
    except Wrong as e:
        outcome, detail = "WRONG", str(e)
    except ea.LearningFailure as e:
        outcome, detail = "named", e.reason
    except ValueError as e:            # a one-line refusal (cost estimate, bad draw)
        outcome, detail = "named", f"refused: {type(e).__name__}"
    except Exception as e:             # noqa: BLE001 - every other exception is a crash
        outcome, detail = "crash", f"{type(e).__name__}: {e}"[:300]
    finally:
        globals()["learn_multi_head"] = own
    return kind, outcome, detail, time.perf_counter() - start


def _chunk(jobs):
    return [run_trial(*job) for job in jobs]


def plan(trials: int, seed: int = 0, kinds=None):
    """(kind, seed) pairs: the kinds (default all) in proportion to their weights, at least
    one each."""
    chosen = {k: KINDS[k] for k in (kinds or KINDS)}
    total = sum(w for _, _, w in chosen.values())
    jobs = []
    for kind, (_, _, w) in chosen.items():
        n = max(1, math.ceil(trials * w / total))        # at least `trials` in all
        jobs += [(kind, seed + k) for k in range(n)]
    return jobs


def run(trials: int, workers: int = 2, seed: int = 0, kinds=None, schedule=None):
    """Every planned trial, over a process pool of ``workers`` (1: in this process); with
    ``schedule``, every multi-head run on it (the kinds default to :data:`SCHEDULE_KINDS`)."""
    if schedule is not None and kinds is None:
        kinds = SCHEDULE_KINDS
    jobs = [(k, s, schedule) for k, s in plan(trials, seed, kinds)]
    random.Random(seed).shuffle(jobs)           # mixes slow and fast kinds across chunks
    chunks = [jobs[i:i + 25] for i in range(0, len(jobs), 25)]
    results = []
    if workers <= 1:
        for c in chunks:
            results += _chunk(c)
    else:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for part in pool.map(_chunk, chunks):
                results += part
    return results


def tables(results):
    by_cat = defaultdict(Counter)
    by_kind = defaultdict(Counter)
    names = defaultdict(Counter)
    slowest = defaultdict(float)
    for kind, outcome, detail, secs in results:
        cat = KINDS[kind][0]
        by_cat[cat][outcome] += 1
        by_kind[kind][outcome] += 1
        slowest[kind] = max(slowest[kind], secs)
        if outcome == "named":
            names[kind][detail] += 1
    return by_cat, by_kind, names, slowest


def report(results, seconds, workers):
    by_cat, by_kind, names, slowest = tables(results)
    lines = [f"{len(results)} trials in {seconds:.0f} s on {workers} worker(s)", "",
             "| category | trials | recovered | named failure | WRONG | crash |",
             "|---|---|---|---|---|---|"]
    cats = [c for c in dict.fromkeys(c for c, _, _ in KINDS.values()) if c in by_cat]
    tot = Counter()
    for cat in cats:
        c = by_cat[cat]
        tot.update(c)
        lines.append(f"| {cat} | {sum(c.values())} | "
                     + " | ".join(str(c[o]) for o in OUTCOMES) + " |")
    lines.append(f"| **all** | {sum(tot.values())} | "
                 + " | ".join(str(tot[o]) for o in OUTCOMES) + " |")
    lines += ["", "| kind | category | trials | recovered | named failures (by name) | WRONG "
              "| crash | slowest |", "|---|---|---|---|---|---|---|---|"]
    for kind, (cat, _, _) in KINDS.items():
        if kind not in by_kind:
            continue
        c = by_kind[kind]
        named = ", ".join(f"{n} {r}" for r, n in names[kind].most_common()) or "—"
        lines.append(f"| {kind} | {cat} | {sum(c.values())} | {c['recovered']} | {named} | "
                     f"{c['WRONG']} | {c['crash']} | {slowest[kind]:.2f} s |")
    bad = [(k, o, d) for k, o, d, _ in results if o in ("WRONG", "crash")]
    for k, o, d in bad[:20]:
        lines.append(f"{o}: {k}: {d}")
    return "\n".join(lines), not bad


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=10_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the raw tallies as JSON")
    p.add_argument("--kinds", default=None,
                   help="kinds to run, separated by ';' (default: all, in proportion)")
    p.add_argument("--schedule", choices=("design",), default=None,
                   help="run the exact multi-head kinds with every run on this schedule")
    a = p.parse_args(argv)
    start = time.perf_counter()
    kinds = None if a.kinds is None else [k.strip() for k in a.kinds.split(";")]
    known = SCHEDULE_KINDS if a.schedule else KINDS
    unknown = [k for k in kinds or [] if k not in known]
    if unknown:
        p.error(f"unknown kind(s) {unknown}; known: {', '.join(known)}")
    results = run(a.trials, a.workers, a.seed, kinds, a.schedule)
    seconds = time.perf_counter() - start
    text, clean = report(results, seconds, a.workers)
    if a.json:
        by_cat, by_kind, names, _ = tables(results)
        print(json.dumps({"trials": len(results), "seconds": round(seconds, 1),
                          "categories": by_cat, "kinds": by_kind, "names": names}, indent=1))
    else:
        print(text)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
