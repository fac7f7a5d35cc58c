"""Summaries of a sweep (docs/sweeps.md): per configuration, the outcomes, the failure rate
beside the Schwartz–Zippel bound D/|S| with an exact Clopper–Pearson interval (P2
probability one), the measured query counts and lengths beside the published formulas (P2
count; P1 Thm 4.1), and the time per trial.

The bound: for the multi-head learner on the exact backend with the P2 schedule and H known,
the learner can fail only where one of the genericity polynomials of docs/design.md §4.3
vanishes at the drawn entries (S = {−box … box}), so Pr[fail] ≤ D/|S| with D the total degree
of their distinct irreducible factors (:mod:`exactattn.analysis.genericity`).  Each failure's
recorded bases are checked to lie in that bad set (``outside`` must be 0).  A configuration
FAILs when it returned a wrong model, when a trial crashed, when a failure lies outside the
bad set, or when the failure count is significant against D/|S| by the exact one-sided
binomial test at level α/m (Bonferroni over the m configurations with a bound < 1).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from .confidence import clopper_pearson, exceeds_bound
from .spec import LEARNER_TRIAL
from .trials import ERROR, WRONG

__all__ = ["ConfigSummary", "Summary", "decimal", "schwartz_zippel_degree", "summarize"]

SUCCESS = ("recovered", "ok")


def decimal(q, places: int = 4) -> str:
    """A Fraction shown with ≤ `places` significant decimals (display only)."""
    if q is None:
        return "-"
    q = Fraction(q)
    if q == 0:
        return "0"
    from mpmath import mpf, nstr
    return nstr(mpf(q.numerator) / q.denominator, places)


@dataclass
class ConfigSummary:
    """One configuration (every seed of one fn and params)."""

    fn: str
    params: dict
    trials: int
    outcomes: Counter
    rate: Fraction
    ci: tuple
    D: int | None = None
    bound: Fraction | None = None
    bound_note: str = "no bound for this learner, backend, schedule or H0"
    #: the bound applies but was not tested: fewer trials than this (summarize's threshold)
    bound_untested_below: int | None = None
    outside: int | None = None      # failures whose draw is not in the bad set
    exceeds: bool = False
    queries: list = field(default_factory=list)       # distinct counts among successes
    max_lengths: list = field(default_factory=list)
    expected_queries: int | None = None
    expected_max_length: int | None = None
    learner_seconds: float | None = None              # median, inside the learner
    seconds: float | None = None                      # median wall time of the trial

    @property
    def failures(self) -> int:
        return sum(n for k, n in self.outcomes.items() if k not in SUCCESS and k not in
                   (WRONG, ERROR, "FAIL"))

    @property
    def wrong(self) -> int:
        return self.outcomes.get(WRONG, 0)

    @property
    def errors(self) -> int:
        return self.outcomes.get(ERROR, 0) + self.outcomes.get("FAIL", 0)  # a crash; a FAILed claim

    @property
    def counts_match(self) -> bool | None:
        if self.expected_queries is None or not self.queries:
            return None
        return self.queries == [self.expected_queries] and \
            self.max_lengths == [self.expected_max_length]

    @property
    def status(self) -> str:
        if self.wrong or self.errors or self.outside or self.exceeds \
                or self.counts_match is False:
            return "FAIL"
        return "ok"

    def label(self) -> str:
        p = self.params
        if self.fn != LEARNER_TRIAL:
            return json.dumps(p, sort_keys=True) if self.fn.endswith(":claim_trial") \
                else f"{self.fn} {json.dumps(p, sort_keys=True)}"
        parts = [p["learner"], f"d={p['d']}"]
        if p["learner"] == "multi-head":
            parts.append(f"H={p['H']}")
            if p["H0"] is not None:
                parts.append(f"H0={p['H0']}")
            if p["schedule"] != "p2":
                parts.append(p["schedule"])
        if p.get("rank") is not None:
            parts.append(f"r={p['rank']}")
        if p["backend"] != "exact":
            parts.append(p["backend"] + (f"({p['dps']})" if p["dps"] else ""))
        if p.get("model_seed"):
            parts.append(f"model={p['model_seed']}")
        return " ".join(parts)

    def to_dict(self) -> dict:
        def f(q):
            return None if q is None else f"{q.numerator}/{q.denominator}"
        return {"fn": self.fn, "params": self.params, "trials": self.trials,
                "outcomes": dict(self.outcomes), "failures": self.failures,
                "wrong": self.wrong, "errors": self.errors, "rate": f(self.rate),
                "ci": [f(self.ci[0]), f(self.ci[1])], "D": self.D, "bound": f(self.bound),
                "outside_bad_set": self.outside, "exceeds_bound": self.exceeds,
                "queries": self.queries, "max_lengths": self.max_lengths,
                "expected_queries": self.expected_queries,
                "expected_max_length": self.expected_max_length,
                "counts_match": self.counts_match, "median_learner_seconds":
                self.learner_seconds, "median_seconds": self.seconds, "status": self.status}


@dataclass
class Summary:
    configs: list
    confidence: Fraction
    alpha: Fraction          # per-configuration level of the bound test (Bonferroni)

    @property
    def ok(self) -> bool:
        return all(c.status == "ok" for c in self.configs)

    def verdict(self) -> str:
        """The sweep's last line: FAIL naming the failing configurations; else ok, saying
        when the failure-rate bound D/|S| applied but was not tested (too few trials), so
        that "ok" never reads as a bound that held."""
        bad = [c for c in self.configs if c.status != "ok"]
        if bad:
            return (f"FAIL: {_count(len(bad), 'configuration')}: "
                    + "; ".join(c.label() for c in bad))
        untested = [c for c in self.configs if c.bound_untested_below is not None]
        if not untested:
            return "ok: every configuration holds"
        below = max(c.bound_untested_below for c in untested)
        return (f"ok: no wrong model, crash or count mismatch; the failure-rate bound D/|S| "
                f"was not tested in {len(untested)} of {_count(len(self.configs), 'configuration')}"
                f" (it needs {below} trials each)")

    def to_dict(self) -> dict:
        return {"confidence": f"{self.confidence.numerator}/{self.confidence.denominator}",
                "alpha_per_config": f"{self.alpha.numerator}/{self.alpha.denominator}",
                "configs": [c.to_dict() for c in self.configs], "ok": self.ok}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------------- the bound
def _bounded(params) -> bool:
    """The configurations the docs/design.md §4.3 bad set describes."""
    return (params.get("learner") == "multi-head" and params["backend"] == "exact"
            and params["schedule"] == "p2" and params["H0"] is None)


def _bad_set(params):
    from ..analysis import genericity as G
    from .trials import model_of
    model = model_of(params).canonical()
    polys = G.bad_set_polynomials([(h.W, h.v) for h in model.heads], params["d"])
    factors, _ = G.distinct_factors(polys)
    return factors


def schwartz_zippel_degree(params) -> int:
    """D = total degree of the distinct irreducible factors of the genericity polynomials of
    the configuration's model (P2 probability one; docs/design.md §4.3)."""
    from ..analysis.genericity import total_degree
    return total_degree(_bad_set(params))


def _outside(params, failed_records) -> int:
    """How many failures drew bases outside the bad set (each must be inside)."""
    from ..analysis.genericity import IntPoly
    if not failed_records:
        return 0
    ints = [IntPoly(f) for f in _bad_set(params)]
    out = 0
    for rec in failed_records:
        if "U" not in rec or "X" not in rec:
            out += 1  # a failure without its draw cannot be placed in the bad set
            continue
        point = [int(x) for r in rec["U"] for x in r] + [int(x) for r in rec["X"] for x in r]
        if not any(f.vanishes(point) for f in ints):
            out += 1
    return out


# ---------------------------------------------------------------------- summarize
def _median(xs):
    return statistics.median(xs) if xs else None


#: the bound is computed for configurations with at least this many trials by default: D costs
#: seconds at d = 3 and minutes from d = 5 on, and a rate from a few trials says little
BOUND_MIN_TRIALS = 100


def summarize(rows, confidence=Fraction(99, 100), store=None,
              bound_min_trials: int = BOUND_MIN_TRIALS) -> Summary:
    """Group stored rows (``Store.rows()``) by configuration and summarise each (module
    docstring); ``store`` caches the degrees D.  The bound (D, D/|S|, the bad-set check of
    every failure) is computed for configurations with ≥ ``bound_min_trials`` trials."""
    confidence = Fraction(confidence)
    groups = {}
    for r in rows:
        groups.setdefault(r["config"], []).append(r)
    configs = []
    for config, rs in groups.items():
        fn, params = json.loads(config)
        outcomes = Counter(r["record"].get("outcome", "?") for r in rs)
        n = len(rs)
        bad = n - sum(outcomes.get(k, 0) for k in SUCCESS)
        succ = [r["record"] for r in rs if r["record"].get("outcome") in SUCCESS]
        c = ConfigSummary(fn, params, n, outcomes, Fraction(bad, n), clopper_pearson(bad, n,
                                                                                      confidence))
        if fn == LEARNER_TRIAL:
            c.queries = sorted({s["queries"] for s in succ})
            c.max_lengths = sorted({s["max_length"] for s in succ})
            first = rs[0]["record"]
            c.expected_queries = first.get("expected_queries")
            c.expected_max_length = first.get("expected_max_length")
            if _bounded(params) and n < bound_min_trials:
                c.bound_note = f"bound not tested (< {bound_min_trials} trials)"
                c.bound_untested_below = bound_min_trials
            elif _bounded(params):
                key = "D:" + json.dumps(params, sort_keys=True)
                c.D = (store.cached(key, lambda p=params: schwartz_zippel_degree(p)) if store
                       else schwartz_zippel_degree(params))
                c.bound = Fraction(c.D, 2 * params["box"] + 1)
                failed = [r["record"] for r in rs if r["record"].get("outcome") not in
                          SUCCESS + (WRONG, ERROR)]
                c.outside = _outside(params, failed)
        c.learner_seconds = _median([r["timing"]["learner_seconds"] for r in rs
                                     if "learner_seconds" in r["timing"]])
        c.seconds = _median([r["timing"]["seconds"] for r in rs])
        configs.append(c)
    m = max(1, sum(1 for c in configs if c.bound is not None and c.bound < 1))
    alpha = (1 - confidence) / m
    for c in configs:
        if c.bound is not None:
            c.exceeds = exceeds_bound(c.failures, c.trials, c.bound, alpha)
    return Summary(configs, confidence, alpha)
