"""Trial functions: each is a pure function ``fn(params, seed) -> record`` of its parameters
and seed (docs/sweeps.md).  A record is a JSON object; exact values are strings ("p/q",
element JSON), never floats on the exact path.  An optional ``"timing"`` entry (seconds) is
kept apart from the result: everything else must be bit-for-bit reproducible on every
executor.

* :func:`learner_trial` — one learner run on a seeded random model through a no-peek Oracle
  (P2 multi-head, P1 Thm 4.1 single head, docs/design.md §4.2 low rank): outcome
  ``recovered`` / a named failure (the LearningFailure's reason) / ``wrong``, queries and
  maximum length beside the published formulas;
* :func:`claim_trial` — one claim check of the registry (docs/design.md §5);
* :func:`run_batch` — what an executor runs: several trials of one function in one task, so
  that pool/Dask overhead is amortised; a trial function is named by its dotted name
  ``"package.module:function"`` and resolved in the worker (:func:`resolve`), so any package
  (e.g. proofs_checks' Monte Carlo) can run its own trials without exactattn importing it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import time

from .spec import SpecError, canonical_json

__all__ = ["learner_trial", "claim_trial", "run_batch", "resolve", "dotted_name", "preflight",
           "WRONG", "ERROR"]

WRONG = "wrong"    # a returned model that is not the true one: a silent wrong answer
ERROR = "error"    # the trial raised something other than a named LearningFailure
_MESSAGE = 300     # characters of a failure message kept in the record


# ---------------------------------------------------------------------- names
@functools.lru_cache(maxsize=64)
def resolve(name: str):
    """The function named ``"package.module:function"`` (imported on first use)."""
    if not isinstance(name, str) or name.count(":") != 1:
        raise SpecError(f"trial function {name!r}: write it as 'package.module:function'")
    module, qual = name.split(":")
    try:
        obj = importlib.import_module(module)
    except ImportError as e:
        raise SpecError(f"trial function {name!r}: cannot import {module!r} ({e})") from None
    for part in qual.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise SpecError(f"trial function {name!r}: {module!r} has no {qual!r}")
    if not callable(obj):
        raise SpecError(f"trial function {name!r} is not callable")
    return obj


def dotted_name(fn) -> str:
    """``fn``'s dotted name, checked to resolve back to ``fn`` (a worker imports it by name)."""
    if isinstance(fn, str):
        resolve(fn)
        return fn
    name = f"{getattr(fn, '__module__', None)}:{getattr(fn, '__qualname__', None)}"
    if "<" in name or getattr(fn, "__module__", None) in (None, "__main__"):
        raise SpecError(f"{fn!r} cannot be named for a worker: use a module-level function "
                        "of an importable module, or its name 'package.module:function'")
    if resolve(name) is not fn:
        raise SpecError(f"{name} does not resolve to {fn!r}")
    return name


# ---------------------------------------------------------------------- batches
def run_batch(fn_name: str, items, version: str | None = None):
    """Run ``fn(params, seed)`` for each (params, seed) of ``items`` in this process; return
    ``{"version": ..., "rows": [(result JSON, timing dict), ...]}`` in the order given.  The
    result JSON is canonical (bit-for-bit comparable); ``timing["seconds"]`` is the trial's
    wall time here, plus any timing the record carried."""
    from .. import __version__
    if version is not None and version != __version__:
        raise RuntimeError(f"worker runs exactattn {__version__}, the sweep {version}: install "
                           "the same version on every worker")
    fn = resolve(fn_name)
    rows = []
    for params, seed in items:
        start = time.perf_counter()
        record = fn(params, seed)
        seconds = time.perf_counter() - start
        if not isinstance(record, dict):
            raise TypeError(f"{fn_name} returned {type(record).__name__}, not a record (dict)")
        record = dict(record)
        timing = dict(record.pop("timing", None) or {})
        timing["seconds"] = seconds
        rows.append((canonical_json(record), timing))
    return {"version": __version__, "rows": rows}


def pack(fn_name: str, items, version) -> bytes:
    """A batch pickled in the driver, so that parameters a worker cannot receive fail here
    with a clear message (a pickling error inside a process pool's feeder thread can hang)."""
    import pickle
    try:
        return pickle.dumps((fn_name, list(items), version), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise SpecError(f"the parameters of {fn_name} cannot be sent to a worker ({e}); pass "
                        "JSON values (or objects that pickle)") from None


def run_packed(payload: bytes):
    """:func:`run_batch` on a batch made by :func:`pack` (what pool and Dask workers run)."""
    import pickle
    return run_batch(*pickle.loads(payload))


# ---------------------------------------------------------------------- learner runs
@functools.lru_cache(maxsize=256)
def _model(learner, d, H, rank, backend, model_seed):
    """The seeded random model of a configuration (cached per process: pure in its key)."""
    kind = "rational" if backend == "exact" else "real"
    from ..models.attention import MultiHeadAttention, random_multi_head
    if learner == "low-rank":
        from ..learners.p1.low_rank import random_low_rank_head
        return MultiHeadAttention([random_low_rank_head(d, rank, seed=model_seed, kind=kind)])
    return random_multi_head(d, H if learner == "multi-head" else 1, seed=model_seed, kind=kind)


def model_of(params: dict):
    """The true model of a learner configuration (P2 canonical heads: distinct W, v ≠ 0)."""
    return _model(params["learner"], params["d"], params.get("H"), params.get("rank"),
                  params["backend"], params["model_seed"])


def _learn(params, oracle, seed):
    p, be = params, {"backend": params["backend"], "dps": params["dps"], "seed": seed}
    if p["learner"] == "single-head":
        from ..learners.p1.single_head import learn_single_head
        return learn_single_head(oracle, p["d"], **be)
    if p["learner"] == "low-rank":
        from ..learners.p1.low_rank import learn_low_rank
        return learn_low_rank(oracle, p["d"], rank=p["rank"], **be)
    from ..learners.multi_head import learn_multi_head
    kw = {"heads": p["H"]} if p["H0"] is None else {"heads_bound": p["H0"]}
    if p["box"] is not None:
        kw["box"] = p["box"]
    if p["schedule"] != "p2":
        kw["schedule"] = p["schedule"]
    return learn_multi_head(oracle, p["d"], **kw, **be)


def _expected(params):
    """Published query count and maximum length (P1 Thm 4.1: d² + d, ≤ 2; P2: 4H₀d² − 2H₀ + 1,
    ≤ 2H₀ + 1; docs/design.md §4.2 skeleton d + r(2d − r)); None where no formula applies."""
    d = params["d"]
    if params["learner"] == "single-head":
        return d * d + d, 2
    if params["learner"] == "low-rank":
        from ..learners.p1.low_rank import skeleton_queries
        return skeleton_queries(d, params["rank"]), 2 if params["rank"] else 1
    if params["schedule"] != "p2":
        return None, None
    from ..learners.p2.schedule import published_count, published_max_length
    H0 = params["H0"] or params["H"]
    return published_count(d, H0), published_max_length(H0)


def _digest(model) -> str:
    """SHA-256 of the canonical form's JSON: equal digests ⇔ equal recovered models."""
    return hashlib.sha256(canonical_json(model.canonical().to_dict()).encode()).hexdigest()


def _bases(details) -> dict:
    """The random bases of the run (multi-head U, X; low-rank A, B) as strings."""
    return {k: [[str(a) for a in row] for row in details[k]]
            for k in ("U", "X", "A", "B") if isinstance(details.get(k), list)}


def learner_trial(params: dict, seed: int) -> dict:
    """One learner run (P2 multi-head, P1 Thm 4.1, docs/design.md §4.2): the seeded model of
    ``params`` behind a no-peek Oracle, learned with ``seed``; record = outcome, queries,
    max_length, the formulas, and the recovered model's digest (the model itself when
    wrong).  Exact backend: ``recovered`` means exact canonical equality; mp / float: the
    parameter error (a decimal string) within the backend's tolerance."""
    from ..errors import LearningFailure
    from ..oracles.oracle import Oracle
    model = model_of(params)
    oracle = Oracle(model, backend=params["backend"], dps=params["dps"])
    expected_q, expected_len = _expected(params)
    rec = {"expected_queries": expected_q, "expected_max_length": expected_len}
    start = time.perf_counter()
    try:
        res = _learn(params, oracle, seed)
    except LearningFailure as e:
        rec.update(outcome=e.reason, message=str(e)[:_MESSAGE], queries=oracle.queries,
                   max_length=oracle.max_length, **_bases(e.details))
    except Exception as e:  # noqa: BLE001 — a defect, recorded (and reported), not lost
        rec.update(outcome=ERROR, message=f"{type(e).__name__}: {e}"[:_MESSAGE],
                   queries=oracle.queries, max_length=oracle.max_length)
    else:
        # validation queries are counted apart from the published count (docs/design.md §8)
        rec.update(queries=res.queries, max_length=res.max_length,
                   validation_queries=getattr(res, "validation_queries", 0),
                   model_sha256=_digest(res.model), **_bases(res.extra))
        rec["outcome"] = _judge(params, model, res, rec)
        if rec["outcome"] == WRONG:
            rec["recovered"] = res.model.canonical().to_dict()
    rec["timing"] = {"learner_seconds": time.perf_counter() - start}
    return rec


def _judge(params, model, res, rec) -> str:
    if params["backend"] == "exact":
        return "recovered" if res.model.head_set() == model.head_set() else WRONG
    from ..learners.result.compare import default_tolerance, parameter_error
    err = parameter_error(model, res.heads)
    tol = default_tolerance(params["backend"] if params["backend"] != "mp" else
                            _mp_backend(params["dps"]))
    rec["max_error"] = _show(err)
    rec["tolerance"] = _show(tol)
    return "recovered" if err <= tol else WRONG


def _mp_backend(dps):
    from ..arith import get_backend
    return get_backend("mp", dps)


def _show(x) -> str:
    import mpmath
    return mpmath.nstr(mpmath.mpf(x), 6) if not isinstance(x, str) else x


# ---------------------------------------------------------------------- claims
def claim_trial(params: dict, seed) -> dict:
    """One claim check (docs/design.md §5) at its quick or full sizes; ``seed`` (if not None)
    replaces the claim's own seed.  Record: status ok / FAIL and the findings."""
    registry = importlib.import_module("proofs_checks.registry")  # ships with exactattn
    claim = registry.get_claim(params["claim"])
    run = claim.run
    if seed is not None:
        base = claim.params(params["size"] == "quick")
        if "seed" not in base:
            raise SpecError(f"claim {claim.id} takes no seed")
        run = functools.partial(_with_seed, claim.run, seed)
    outcome = registry.run_claim(_Seeded(claim, run), quick=params["size"] == "quick")
    return {"outcome": outcome.status, "claim": claim.id, "details": outcome.verdict.details,
            "notes": outcome.verdict.notes}


def _with_seed(run, seed, params):
    return run({**params, "seed": seed})


class _Seeded:
    """The claim with its ``run`` replaced (the registry's Claim is frozen)."""

    def __init__(self, claim, run):
        self._claim, self.run = claim, run

    def __getattr__(self, name):
        return getattr(self._claim, name)


# ---------------------------------------------------------------------- pre-flight
def preflight(fn_name: str, params: dict, seed=None) -> None:
    """Catch in the driver what would fail in every worker: an unknown function, a schedule
    the installed learner does not have, an unknown claim (SpecError)."""
    fn = resolve(fn_name)
    if fn is learner_trial and params["learner"] == "multi-head":
        from ..learners.multi_head import SCHEDULES, check_cost
        from ..learners.p2.cost import CostExceeded
        if params["schedule"] not in SCHEDULES:
            raise SpecError(f"schedule {params['schedule']!r}: the multi-head learner's "
                            f"schedules are {', '.join(SCHEDULES)}")
        try:        # a configuration every trial would refuse is refused before the first
            check_cost(params["d"], params["H"] if params["H0"] is None else None,
                       params["H0"], params["backend"], schedule=params["schedule"])
        except CostExceeded as e:
            told = "" if params["H0"] is None else f", H0={params['H0']}"
            raise SpecError(f"d={params['d']}, H={params['H']}{told}: {e}; drop it from the "
                            f"sweep") from None
    if fn is claim_trial:
        try:
            claim = importlib.import_module("proofs_checks.registry").get_claim(params["claim"])
        except KeyError as e:
            raise SpecError(str(e)) from None
        if seed is not None and "seed" not in claim.params(params["size"] == "quick"):
            raise SpecError(f"claim {claim.id} takes no seed: drop --seeds/--trials for it")
