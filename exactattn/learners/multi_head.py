"""``learn_multi_head`` — the front door to every multi-head schedule (docs/design.md §4.3,
§10, §7): arguments, the cost estimate and the budget, resampling, then one run of the
chosen schedule — P2's (:func:`.p2.recovery.run_p2`, exactly 4H₀d² − 2H₀ + 1 queries of
length ≤ 2H₀ + 1), the economy or adaptive one (:mod:`.beyond.economy`) or multi-head low
rank (:mod:`.beyond.multi_low_rank`) —, validation queries and the ``proves`` text.

Every detected failure raises a named :class:`~exactattn.errors.LearningFailure`;
``resample=True`` retries with fresh vectors and reports the extra queries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._typing import BackendLike, Bound, OracleLike, Progress
    from .result import LearnResult

import random
import time

from ..errors import BudgetExceeded, LearningFailure, OracleTimeout, OutOfClass
from ..models.attention import MAX_HEADS
from ..oracles.oracle import as_oracle
from .p2.cost import check_budget, estimate_multi_head, estimate_validation, validation_floor
from .p2.matching import silent as _silent
from .p2.recovery import DEFAULT_BOX, check_bases, head_bound, random_bases, run_p2
from .p2.schedule import Schedule, published_count
from .result.proves import state
from .result.validation import validate, validation_count

__all__ = ["learn_multi_head", "SCHEDULES"]

#: "p2": the published schedule; "economy", "adaptive": beyond P2 (docs/design.md §10)
SCHEDULES = ("p2", "economy", "adaptive", "low-rank", "design")


# ---------------------------------------------------------------------- public API
def learn_multi_head(oracle: OracleLike, dim: int, heads: int | None = None,
                     heads_bound: int | None = None, backend: BackendLike | None = None,
                     dps: int | None = None, seed: int | None = None, resample: bool = False,
                     max_attempts: int = 5, box: int | None = None, certify: bool = True,
                     progress: Progress | None = None, oracle_precision: Bound = None,
                     accuracy: Bound = None, schedule: str = "p2", rank: int | None = None,
                     force: bool = False, validate: int | None = None,
                     certify_unique: bool = False,
                     unique_families: int | None = None) -> LearnResult:
    """Learn the canonical heads of multi-head attention from value queries (P2, main
    theorem; docs/design.md §4.3 schedule): exactly 4H₀d² − 2H₀ + 1 queries of length ≤ 2H₀ + 1,
    with H₀ = heads when H is known, else heads_bound.

    ``oracle`` is an :class:`~exactattn.Oracle` or any callable on a list of token vectors
    (answers taken as numbers of the chosen backend; ``backend=None`` means the Oracle's
    own backend, or inferred from a plain callable's answer).  Query vectors: integer box
    {−box…box}^d on the exact backend (default box = 1000), Gaussian with variance 1/d
    otherwise.
    Returns a :class:`LearnResult` whose ``heads`` are the canonical (W, v) pairs; raises a
    named :class:`LearningFailure` when the answer cannot be certified.  ``progress``, if
    given, is called as ``progress(stage, done, total)`` with stage "queries", "recovery"
    (total None) or "certification".

    mp / float (docs/design.md §8, :mod:`exactattn.learners.p2.inexact`): ``oracle_precision``
    = η states that each answer is within η·max(1, |answer|) (inferred when None, see
    :mod:`exactattn.learners.result.precision`); the recovery runs in certified ball arithmetic at
    a working precision that follows η (``dps`` overrides it), and the result carries
    ``error_bar`` (a certified enclosure).  ``accuracy``, if given, must be met by the
    bar, else IllConditioned.  Fewer heads than ``heads`` is UnresolvedHeads.

    ``schedule``: "p2" (default, the published count), "economy" (H known) or "adaptive"
    (H* read from the first family under the bound H₀): the exact schedules beyond P2 of
    :mod:`.economy` (docs/design.md §10); "low-rank" (implied by ``rank=r``): heads with
    rank W_h ≤ r from O(H·r·d) queries, the rank revealed when ``rank`` is None
    (:mod:`.multi_low_rank`).

    Before the first query the run's cost is estimated (:mod:`.cost`) and refused with
    :class:`~exactattn.learners.p2.cost.CostExceeded` above the budget unless ``force=True``; on
    the exact backend the estimate is redone from the first copy-count answer's actual size.

    Given both ``heads=H`` and ``heads_bound=H0`` (H ≤ H0), the schedule uses H₀ = H — the
    known count is the smaller — and a note says that the bound was not used.

    ``validate`` (default None: 2H₀ + 2; 0: none) validation queries of shapes the schedule
    never uses are asked after it (:mod:`.validation`) and counted apart
    (``result.validation_queries``; ``result.queries`` stays the schedule's count); a
    mismatch is :class:`~exactattn.errors.OutOfClass`.  ``result.proves`` says what the
    result proves (:mod:`.proves`).  An Oracle's ``budget`` must cover the published count
    and the validation queries: refused (BudgetExceeded) before the first query.

    ``certify_unique=True`` (exact backend, every schedule): after the schedule, Theorem A's
    moment-curve design (:func:`~exactattn.certify`, docs/design.md §12) is asked and every
    answer compared with the learned model's exactly; when all agree, every oracle with at
    most H₀ heads that gives these answers is that model — no probability, no genericity
    theorem, no search.  A P2 run that finds exactly H₀ canonical heads needs no extra query:
    its own answers fix the model (Lemma B, docs/evidence.md §2b).  When a design answer
    differs, the learner's model is not the oracle (a twin the schedule could not tell
    apart): on the P2 schedule the transcript's answer fibre (docs/design.md §11) is then
    searched with extra copy-count families (at most ``unique_families``, default d² + 4) for
    the model that gives every answer, which is returned and certified by the design in
    turn.  ``result.unique_queries`` counts the extra queries apart, ``result.uniqueness``
    holds the :class:`~exactattn.learners.design.certify.Certification` (or, for Lemma B, the string
    "lemma-b").  NotUnique (``not-unique``) when no model is found, FibreTooLarge
    (``fibre-too-large``) when the fibre search passes its node budget, OutOfClass when no
    model with ≤ H₀ heads gives the answers.
    """
    _check_sizes(max_attempts, heads, heads_bound)
    if rank is not None and schedule == "p2":
        schedule = "low-rank"
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int)
                             or not 0 <= rank <= dim):
        raise ValueError(f"rank must be an integer in 0..{dim}, got {rank!r}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    if schedule in ("economy", "low-rank") and heads is None:
        raise ValueError(f"schedule='{schedule}' needs heads=H; with only heads_bound=H0 use "
                         "schedule='adaptive'")
    if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    H0 = head_bound(heads, heads_bound)
    orc = as_oracle(oracle, dim, backend, dps)
    be = orc.backend
    if be.name == "symbolic":
        raise ValueError("the multi-head learner runs on the exact, mp or float backend")
    if certify_unique and not be.exact:
        raise ValueError("certify_unique needs the exact backend: answer fibres are computed "
                         "from exact answers in Q(t)")
    box = DEFAULT_BOX if box is None else box
    if be.name == "exact" and (not isinstance(box, int) or isinstance(box, bool) or box < 1):
        raise ValueError(f"box must be a positive integer, got {box!r}")
    n_valid = validation_count(validate, H0)
    if schedule == "design":
        return _learn_design(orc, dim, heads, heads_bound, n_valid, seed, progress, force)
    check_cost(dim, heads, heads_bound, be.name, validate, schedule, force)
    if schedule == "p2":
        orc.reserve(published_count(dim, H0) + n_valid,
                    f"the P2 schedule ({published_count(dim, H0)} queries at d={dim}, "
                    f"H0={H0}) and {n_valid} validation queries")
    elif schedule == "low-rank" and rank is not None and 1 <= rank <= dim and H0 > 1:
        # the count for rank ≤ d − H + 1; above that the schedule asks at least as many
        # (measured: (4, 3, 3) asks 73 against 67)
        from .beyond.multi_low_rank import low_rank_count
        orc.reserve(low_rank_count(dim, H0, rank) + n_valid,
                    f"the low-rank schedule (at least {low_rank_count(dim, H0, rank)} queries) "
                    f"and {n_valid} validation queries")
    elif schedule in ("economy", "adaptive"):
        # q0 and the first family always; economy: every column-1 family too (2H0 each)
        least = 1 + 2 * H0 * (dim if schedule == "economy" else 1)
        orc.reserve(least + n_valid, f"the {schedule} schedule (at least {least} queries at "
                                     f"d={dim}, H0={H0}) and {n_valid} validation queries")
    rng = random.Random(seed)
    start, start_queries = time.perf_counter(), orc.queries
    failures = []
    inexact = None if be.exact else {"heads": heads, "precision": oracle_precision,
                                     "accuracy": accuracy, "dps": dps}
    for attempt in range(1, max_attempts + 1):
        first = len(orc.transcript)
        try:
            result = _attempt(orc, dim, H0, be, rng, box, certify, progress or _silent,
                              inexact, schedule, rank, force, n_valid)
        except LearningFailure as e:
            failures.append({"attempt": attempt, "reason": e.reason, "message": str(e),
                             "queries": orc.queries - start_queries})
            if not resample or attempt == max_attempts or isinstance(e, _FINAL):
                e.details.setdefault("attempts", failures)
                fewer = _too_few_heads(e, orc, first, H0, be, schedule, rng,
                                       f"heads={heads}" if heads is not None
                                       else f"heads_bound={heads_bound}")
                if fewer is not None:
                    fewer.details.update(attempts=failures, U=e.details.get("U"),
                                         X=e.details.get("X"))
                    raise fewer from e
                raise
            continue
        result.queries = orc.queries - start_queries
        result.seconds = time.perf_counter() - start
        result.extra["attempts"] = failures + [{"attempt": attempt, "reason": "ok"}]
        if failures:
            result.notes.append(f"{len(failures)} failed attempt(s) resampled; "
                                f"{result.queries - result.expected_queries} extra queries")
        if be.exact and heads is not None and len(result.heads) < heads:
            result.notes.append(f"{len(result.heads)} canonical heads found for heads={heads}: "
                                f"heads merge or cancel in the canonical form")
        if heads is not None and heads_bound is not None:
            result.notes.append(f"heads={heads} is known, so the schedule used H0 = {heads}; "
                                f"heads_bound={heads_bound} was not used")
        if certify_unique:
            _certify_unique(result, orc, H0, rng, unique_families, progress, schedule, force)
        _validate(result, orc, dim, H0, n_valid, rng, be, box, schedule, progress, force)
        return result
    raise AssertionError("unreachable: the last attempt returns or raises")


#: failures that an oracle with more heads than told produces on the P2 schedule
_FEWER_HEADS_LOOK_LIKE = ("not-attention", "certification-failed", "colliding-poles",
                          "invisible-head")


def _too_few_heads(e, orc, first, H0, be, schedule, rng, told):
    """After a failed exact P2 run: TooFewHeads when the first family shows more heads than
    H₀ (:mod:`.p2.head_count`), else None."""
    if schedule != "p2" or be.name != "exact" or e.reason not in _FEWER_HEADS_LOOK_LIKE \
            or not orc.record or not isinstance(e.details.get("U"), list):
        return None
    from .p2.head_count import too_few_heads
    answers = [a for _, a in orc.transcript[first:first + 1 + 2 * H0]]
    if len(answers) < 1 + 2 * H0:
        return None
    return too_few_heads(e, orc, Schedule(e.details["U"], e.details["X"], H0), answers,
                         random.Random(rng.getrandbits(64)), told)


#: the most attempts (each a whole schedule) a call may ask for; heads are bounded by
#: MAX_HEADS (H0 = 1000 is already far above the cost budget at d = 1; beyond 10⁴ the
#: estimate itself overflows a float)
MAX_ATTEMPTS = 100


def _check_sizes(max_attempts, heads, heads_bound):
    """One-line errors for sizes no run can honour, before any query (docs/honesty.md)."""
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) \
            or not 1 <= max_attempts <= MAX_ATTEMPTS:
        raise ValueError(f"max_attempts must be an integer in 1..{MAX_ATTEMPTS}, got "
                         f"{max_attempts!r}")
    for name, val in (("heads", heads), ("heads_bound", heads_bound)):
        if isinstance(val, int) and not isinstance(val, bool) and val > MAX_HEADS:
            raise ValueError(f"{name}={val} is above {MAX_HEADS}, the most heads a schedule here "
                             f"is priced for; give a smaller {name}")


def check_cost(dim, heads=None, heads_bound=None, backend="exact", validate=None,
               schedule="p2", force=False):
    """The cost checks ``learn_multi_head`` makes before its first query (docs/design.md
    §2.3): the schedule at H₀ (on the exact P2, economy and adaptive schedules priced as lazy
    answers until the first copy-count answer shows their kind, :mod:`.p2.cost`), and, when
    H is known, the cheapest validation queries at H heads.  Raises CostExceeded above the
    budget unless ``force``; for sweeps and other drivers that refuse a configuration before
    running it."""
    H0 = head_bound(heads, heads_bound)
    n_valid = validation_count(validate, H0)
    lazy = schedule in ("p2", "economy", "adaptive")     # re-priced at the first answer
    check_budget(estimate_multi_head(dim, H0, backend, lazy=lazy), force)
    if heads is not None and n_valid:      # the validation a run of H heads can never avoid
        check_budget(estimate_validation(dim, H0, min(heads, H0), validation_floor(n_valid),
                                         backend, floor=True, lazy=lazy), force)


def _families(n: int) -> str:
    return f"{n} extra copy-count famil{'y' if n == 1 else 'ies'}"


def _certify_unique(result, orc, H0, rng, families, progress, schedule, force=False):
    """Make the result "the oracle is M": Lemma B for a P2 run with exactly H₀ heads, else
    Theorem A's design (:func:`~exactattn.certify`), with the P2 answer fibre searched for the
    oracle when the learner's model is not it; extra queries counted apart."""
    if schedule == "p2" and len(result.heads) == H0:
        result.uniqueness, result.unique_queries = "lemma-b", 0
        result.notes.append(f"certified unique with no extra query: the run found exactly "
                            f"H0 = {H0} canonical heads, so every model with ≤ {H0} heads "
                            f"giving these answers is this one (Lemma B)")
        return
    from .design.certify import certify
    from .p2.unique import NotUnique
    before = orc.spent
    c = certify(orc, result.model, heads_bound=H0, force=force, progress=progress)
    searched = 0
    if not c.holds and schedule == "p2":
        first = c
        searched = c.queries + _fibre_model(result, orc, H0, rng, families, progress)
        if result.model.first_disagreement(first.transcript) is not None:
            raise OutOfClass(f"design query {first.mismatch} of Theorem A is answered as "
                             f"neither the learned model nor the answer fibre's model "
                             f"answers it: no model with ≤ {H0} heads gives all the answers",
                             U=result.extra.get("U"), X=result.extra.get("X"))
        c = certify(orc, result.model, heads_bound=H0, force=force, progress=progress)
    if not c.holds:
        raise NotUnique(f"the learned model is not the oracle: design query {c.mismatch} "
                        f"of Theorem A (length {len(c.mismatch_query)}) is answered "
                        f"differently; the schedule's answers do not fix the model",
                        U=result.extra.get("U"), X=result.extra.get("X"))
    result.uniqueness, result.unique_queries = c, orc.spent - before
    found = (f", after {searched} that showed the learned model was not the oracle and found "
             f"it" if searched else "")
    result.notes.append(
        f"certified unique: every model with ≤ {H0} heads that gives these answers is this "
        f"one (Theorem A: {c.queries} design queries beyond the schedule{found})")


def _fibre_model(result, orc, H0, rng, families, progress) -> int:
    """The model of a P2 transcript's answer fibre (:func:`.p2.unique.fibre_of_run`), made the
    result's when the learner's model was not the oracle; returns the extra queries asked."""
    from .p2.unique import fibre_of_run
    u = fibre_of_run(result, orc, random.Random(rng.getrandbits(64)), families, progress)
    from ..models.attention import AttentionHead, MultiHeadAttention
    fibre_model = MultiHeadAttention([AttentionHead(W, v) for W, v in u.heads], dim=result.dim)
    if fibre_model.head_set() != result.model.head_set():
        result.notes.append(
            f"the schedule's answers did not fix the model: the learner's {len(result.heads)}-"
            f"head model and a {len(u.heads)}-head model both give them; the answer fibre "
            f"({_families(len(u.extra_families))} beyond the schedule) holds only the "
            f"{len(u.heads)}-head one, returned")
        result.heads = fibre_model.heads
    return u.extra_queries


#: failures that a fresh draw cannot cure (never resampled): resources, and an oracle shown
#: to be out of class
_FINAL = (BudgetExceeded, OracleTimeout, OutOfClass)


def _validate(result, orc, d, H0, count, rng, be, box, schedule, progress, force=False):
    """Validation queries after the schedule (:mod:`.validation`) and the ``proves`` text
    (:mod:`.proves`); the failure carries the bases like every other.  Their cost is
    estimated first, at their shapes and the recovered head count H*
    (:func:`~exactattn.learners.p2.cost.estimate_validation`), and held to the budget
    (CostExceeded unless ``force``)."""
    from .p2.cost import estimate_validation, lazy_run
    from .result.validation import validation_shapes
    seed = rng.getrandbits(64)
    if count:
        shapes = validation_shapes(random.Random(seed), H0, count, result.max_length)
        check_budget(estimate_validation(d, H0, len(result.heads), shapes, be.name,
                                         lazy=lazy_run(result.transcript)), force)
    try:
        validate(result, orc, H0, count, random.Random(seed), progress=progress)
    except LearningFailure as e:
        for key in ("U", "X"):
            e.details.setdefault(key, result.extra.get(key))
        raise
    state(result, H0, _statement(result, H0, schedule, box) if be.exact else None)


def _learn_design(orc, d, heads, heads_bound, n_valid, seed, progress, force):
    """``schedule="design"`` (:mod:`.beyond.design_learner`, Theorem A): no draw and no
    resampling; H₀ = ``heads_bound`` when given (the bound the result covers), else ``heads``;
    H = ``heads`` when told.  Priced as Theorem A's design at H = H₀ before the first query;
    the validation shapes come from ``seed`` (0 when None), so a run is a function of the
    oracle."""
    from .beyond.design_learner import family_samples, run_design
    from .design.certify import MAX_DIM, MAX_HEADS_BOUND, estimate_design
    H0 = heads_bound if heads_bound is not None else heads
    if orc.backend.name != "exact":
        raise ValueError(f"schedule='design' runs on the exact backend (Theorem A compares "
                         f"answers exactly), not {orc.backend.name}")
    if d > MAX_DIM or H0 > MAX_HEADS_BOUND:
        raise ValueError(f"schedule='design' writes Theorem A's certificate, which the checker "
                         f"reads up to d = {MAX_DIM} and H0 = {MAX_HEADS_BOUND}; got d = {d}, "
                         f"H0 = {H0}")
    check_budget(estimate_design(d, H0, H0), force)
    least = d + family_samples(H0, heads)
    orc.reserve(least + n_valid, f"the design schedule (at least {least} queries at d={d}, "
                                 f"H0={H0}) and {n_valid} validation queries")
    start, start_queries = time.perf_counter(), orc.queries
    result = run_design(orc, d, H0, heads, progress or _silent)
    result.queries = orc.queries - start_queries
    result.seconds = time.perf_counter() - start
    if heads is not None and len(result.heads) < heads:
        result.notes.append(f"{len(result.heads)} canonical heads found for heads={heads}: "
                            f"heads merge or cancel in the canonical form")
    _validate(result, orc, d, H0, n_valid, random.Random(0 if seed is None else seed),
              orc.backend, DEFAULT_BOX, "design", progress, force)
    return result


def _statement(result, H0, schedule, box):
    """The exact statement of the schedule's own genericity module, or of Theorem A's design
    when uniqueness was certified by it (Lemma B is stated by the P2 genericity module)."""
    if schedule == "design":
        from .beyond.design_learner import statement
        return statement(result, H0)
    if result.uniqueness is not None and result.uniqueness != "lemma-b":
        return (f"{result.uniqueness.proves}; the recovered model reproduces all "
                f"{result.queries} schedule answers exactly in Q(t)")
    if schedule == "p2":
        from .p2.genericity import statement
        return statement(result, Schedule(result.extra["U"], result.extra["X"], H0), box)
    from .beyond.genericity import statement
    return statement(result, H0)


def _attempt(orc, d, H0, be, rng, box, certify, progress, inexact=None, schedule="p2",
             rank=None, force=False, validation=0):
    """One draw of the bases and one run of the schedule; every failure carries U and X."""
    U, X = random_bases(rng, d, box, be)
    try:
        check_bases(be, U, X)
        if schedule == "low-rank":
            from .beyond.multi_low_rank import run_multi_low_rank
            return run_multi_low_rank(orc, U, X, H0, True, be, rng, certify, progress, box,
                                      rank)
        if schedule != "p2":
            from .beyond.economy import run_economy
            return run_economy(orc, U, X, H0, schedule == "economy", be, rng, certify,
                               progress, box, force, validation)
        return run_p2(orc, Schedule(U, X, H0), be, rng, certify, progress, inexact, force,
                      validation)
    except LearningFailure as e:
        e.details.setdefault("U", U)
        e.details.setdefault("X", X)
        raise


