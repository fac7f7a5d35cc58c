"""Check kind ``economy-prob1``: the economy schedule's generic run has probability at least
1 − D/box over the draw (beyond the papers; docs/design.md §10), by a Monte Carlo whose
successes carry their identifiability certificates.

A record covers one configuration (d, H, box, trials) of a seeded model: the Monte Carlo ran
``learn_multi_head(..., seed=first_seed + t, box=box, schedule="economy")`` for t < trials, and
every *generic* run (the economy count of the structure, exact recovery) is recorded as a
``run`` record with its seed. The checker

* re-draws U, X of each recorded run from its seed with ``random.Random`` (the learner's
  first draw) and requires the run's vectors to be exactly those, each seed in the range and
  used once — so a run cannot be moved to another draw or counted twice;
* checks each run as an identifiability certificate (:func:`.run.check_run`: the transcript
  is the schedule rebuilt from the vectors and the recovered model, every answer reproduced
  in Q(t), genericity at the recovered model) of the recorded true model, with exactly the
  generic count 1 + 2Hd + (d − 1)(1 + Hd + H(H − 1)/2) of queries (its own closed form);
* counts every draw without a verified generic run as non-generic (failures and fallback
  runs need no record: they only count against the claim), and requires the exact one-sided
  binomial test of "Pr[not generic] ≤ D/box" not to reject at level α/m (α = 1/1000, m the
  number of configurations: Bonferroni).

Not re-derived here: D, the total degree of the distinct factors of the economy's bad-set
polynomials (sympy factorisation in the library, witnessed non-zero at the learner's own
draw; the claim's text says so). A larger recorded D makes the test weaker, never a forged
success stronger.
"""

from __future__ import annotations

from fractions import Fraction

from .bad_set import draw
from .binomial import consistent_with_bound
from .economy_count import _eval, _mul, blocks
from .parse import fmt, heads, integer, listed, only, rat, require, same_json
from .run import check_run

ALPHA = Fraction(1, 1000)
MAX_TRIALS = 20000


def generic_count(d: int, H: int) -> int:
    """The economy schedule's generic count (dual path, H ≤ d): Σ multiplicity × samples over
    this checker's copy of the block structure (:func:`.economy_count.blocks`; no matching
    block for one head)."""
    return int(sum(_eval(_mul(m, s), d, H, H) for m, s, _ in
                   blocks("economy", "dual", matching=H >= 2).values()))


def _seeded_run(entry, k, d, box, first, trials, model_json, seen):
    only(entry, ("seed", "run"), f"economy-prob1.generic[{k}]")
    seed = integer(entry["seed"], f"economy-prob1.generic[{k}].seed", first, first + trials - 1)
    require(seed not in seen, f"economy-prob1: seed {seed} is recorded twice")
    seen.add(seed)
    run = entry["run"]
    require(isinstance(run, dict) and run.get("kind") == "run" and
            run.get("learner") == "multi-head-economy",
            f"economy-prob1: seed {seed}: not a run record of the economy schedule")
    U, X = draw(seed, d, box)
    vec = run.get("vectors")
    require(isinstance(vec, dict) and [[rat(x, "U") for x in r] for r in vec.get("U", [])] == U
            and [[rat(x, "X") for x in r] for r in vec.get("X", [])] == X,
            f"economy-prob1: seed {seed}: the run's U, X are not the draw of its seed")
    require("model" in run and same_json(run["model"], model_json),
            f"economy-prob1: seed {seed}: the run is not of the recorded model")
    return run


def check_economy_prob1(c, checks=()):
    """One configuration's Monte Carlo against D/box (module docstring)."""
    only(c, ("kind", "dim", "heads", "box", "trials", "first_seed", "model", "D", "alpha",
             "tests", "generic"), "economy-prob1")
    d = integer(c["dim"], "economy-prob1.dim", 1, 8)
    H = integer(c["heads"], "economy-prob1.heads", 1, d)
    box = integer(c["box"], "economy-prob1.box", 1, 10 ** 9)
    trials = integer(c["trials"], "economy-prob1.trials", 1, MAX_TRIALS)
    first = integer(c["first_seed"], "economy-prob1.first_seed", 0, 10 ** 9)
    model = heads(c["model"], d, "economy-prob1.model", max_heads=H)
    require(len(model) == H, f"economy-prob1: the model must have H = {H} heads")
    D = integer(c["D"], "economy-prob1.D", 1, 10 ** 9)
    require(rat(c["alpha"], "economy-prob1.alpha") == ALPHA, f"economy-prob1: α must be {fmt(ALPHA)}")
    tests = sum(1 for x in checks if isinstance(x, dict) and x.get("kind") == "economy-prob1")
    require(c["tests"] == tests and type(c["tests"]) is int,
            f"economy-prob1: the Bonferroni correction must count the {tests} configurations")
    listed(c["generic"], "economy-prob1.generic", trials)
    count, seen = generic_count(d, H), set()
    for k, entry in enumerate(c["generic"]):
        run = _seeded_run(entry, k, d, box, first, trials, c["model"], seen)
        require(len(run.get("transcript", [])) == count,
                f"economy-prob1: seed {entry['seed']}: {len(run.get('transcript', []))} queries, "
                f"not the generic count {count}")
        check_run(run)
    generic = len(c["generic"])
    bound, level = Fraction(D, box), ALPHA / tests
    require(consistent_with_bound(trials, trials - generic, bound, level),
            f"economy-prob1: {trials - generic}/{trials} draws without a certified generic run "
            f"reject Pr ≤ D/box = {fmt(bound)} at level {fmt(level)} (exact binomial test)")
    return (f"economy-prob1 d={d} H={H} box={box}: {generic} of {trials} seeded draws carry a "
            f"verified generic run (U, X re-drawn from the seed; transcript = the rebuilt "
            f"schedule of {count} queries; every answer reproduced in Q(t); genericity at the "
            f"recovered = true model); {trials - generic} without one are counted non-generic; "
            f"Pr[not generic] ≤ D/box = {fmt(bound)} not rejected at level {fmt(level)} "
            f"(D = {D} as the library derived it)")
