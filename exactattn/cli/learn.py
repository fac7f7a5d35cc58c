"""`exactattn learn single-head|multi-head|low-rank|transformer|causal --dim D [--heads H]
[--heads-bound H0] [--rank R] [--schedule p2|economy|adaptive|low-rank|design] [--hidden K] --backend exact|mp|float [--dps N] [--seed S]
[--model FILE] [--save FILE] [--json]` (docs/design.md §7).

Draws a seeded random model (rational entries for exact, Gaussian for mp/float; for low-rank
W = Q Kᵀ of rank R), or reads the model in FILE (model JSON: `exactattn model`; the learner
is told its number of canonical heads unless --heads or --heads-bound is given), hides it
behind a no-peek Oracle, runs the learner and reports the query
accounting and whether the true model was recovered: exact canonical equality on the exact
backend, parameter error within the printed tolerance on mp/float.  A LearningFailure exits
with status 1 and its reason; bad arguments exit with status 2.
"""

from __future__ import annotations

import os
import sys
import time

from ._common import (MAX_DIM, MAX_HEADS, MAX_EXTRA_QUERIES, MAX_HIDDEN, MAX_DPS, add_backend_args, dim_int,
                      check_work, dump, heads_int, int_in, output_file, p1_work, p2_work, path_arg,
                      positive_int, seed_int)

VARIANTS = ("single-head", "multi-head", "low-rank", "transformer", "causal")
#: the multi-head learner's schedules (exactattn.learners.multi_head.SCHEDULES)
SCHEDULES = ("p2", "economy", "adaptive", "low-rank", "design")


def register(sub):
    p = sub.add_parser("learn", help="learn a seeded random model, or the model in a file (--model), "
                            "through a no-peek oracle",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("variant", choices=VARIANTS,
                   help="single-head (P1 Thm 4.1), multi-head (P2), low-rank (docs/design.md §4.2), "
                        "transformer (one layer with a bias-free ReLU FFN, docs/design.md §1), "
                        "causal (decoder oracles read at every position, docs/decoders.md)")
    p.add_argument("--dim", type=dim_int, default=None,
                   help="token dimension d (required unless --model gives it)")
    p.add_argument("--heads", type=heads_int, default=None,
                   help="number of heads of the random model (default 1); with --model, the "
                        "number told to the learner (default: the model's canonical heads)")
    p.add_argument("--heads-bound", type=heads_int, default=None,
                   help="multi-head: tell the learner only H0 ≥ H")
    p.add_argument("--rank", type=int_in(0, MAX_DIM), default=None,
                   help="low-rank: rank R of W = Q Kᵀ (required for low-rank); multi-head: "
                        "every random head of rank R, learned by the low-rank schedule (told "
                        "R unless --reveal-rank)")
    p.add_argument("--schedule", choices=SCHEDULES, default=None,
                   help="multi-head: p2 (the published schedule, default), economy (H known), "
                        "adaptive (H* read under --heads-bound), low-rank (rank revealed "
                        "unless --rank is told); beyond P2: docs/design.md §10; design "
                        "(exact, no random draw: Theorem A's moment-curve design, certified "
                        "'the oracle is M' by its own answers, docs/design.md §12)")
    p.add_argument("--rank-bound", type=int_in(0, MAX_DIM), default=None,
                   help="low-rank: tell the learner only R0 ≥ R (the rank is revealed)")
    p.add_argument("--reveal-rank", action="store_true",
                   help="low-rank: tell the learner nothing about the rank (it is revealed)")
    p.add_argument("--holdout", type=int_in(0, MAX_EXTRA_QUERIES), default=None,
                   help="single-head: extra random length-2 validation queries the result must "
                        "answer, counted apart from the schedule (default 0)")
    p.add_argument("--hidden", type=int_in(1, MAX_HIDDEN), default=None,
                   help="transformer: hidden width K of the random FFN (default 2), told to "
                        "the learner as a bound")
    p.add_argument("--method", choices=("p1", "p2"), default=None,
                   help="transformer: p2 (P2 extension, default) or p1 (P1 reduction, one head)")
    add_backend_args(p, default=None, shown="exact; mp for a --model file with real entries, "
                                             "as the Python API chooses")
    p.add_argument("--oracle-digits", type=int_in(1, MAX_DPS), default=None,
                   help="mp/float: the oracle's precision, 10^-N per answer (its answers are "
                        "rounded to N+1 significant digits); inferred when not given")
    p.add_argument("--accuracy", type=_positive_number, default=None,
                   help="mp/float: recovered only if the error bar is below this "
                        "(default 1e-6)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the model and the learner")
    p.add_argument("--model", default=None, metavar="FILE", type=path_arg("file"),
                   help="learn the model in FILE (model JSON) instead of a random one")
    p.add_argument("--save", default=None, metavar="FILE", type=output_file("file"),
                   help="write the recovered (canonical) model to FILE as model JSON")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print the full statement of what the result proves (the default "
                        "prints its first clause; --json carries both)")
    p.add_argument("--certificate", metavar="FILE", default=None, type=output_file("file"),
                   help="exact single-head, multi-head, low-rank: write a stand-alone "
                        "consistency-and-genericity certificate of the run that "
                        "'python -m proofs_checks.verify FILE' checks")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.add_argument("--force", action="store_true",
                   help="run even when the cost estimate (multi-head) or the size of the "
                        "run is above its limit")
    p.add_argument("--validate", type=int_in(0, MAX_EXTRA_QUERIES), default=None, metavar="N",
                   help="validation queries after the schedule, of random shapes (lengths up "
                        "to 4H0+4, up to 6 distinct tokens), counted apart "
                        "(default 2H0+2; 0: the bare schedule)")
    p.add_argument("--certify-unique", action="store_true",
                   help="multi-head, exact: prove that every oracle with ≤ H0 heads giving "
                        "the answers is the learned model — no extra query for a P2 run "
                        "with exactly H0 heads (Lemma B), else Theorem A's design, counted "
                        "apart (docs/design.md §12); with --certificate, its certificate")
    p.add_argument("--unique-families", type=positive_int, default=None, metavar="N",
                   help="with --certify-unique on the P2 schedule: at most N extra families "
                        "for the answer-fibre search that finds the oracle when the learned "
                        "model is not it (default d² + 4)")
    p.add_argument("--timeout", type=_positive_seconds, default=None, metavar="SECONDS",
                   help="per-query timeout of the oracle: a query not answered in time is the "
                        "named failure oracle-timeout")
    from .learn_causal import add_causal_args
    add_causal_args(p)
    p.set_defaults(func=run)


def _positive_seconds(text):
    import argparse
    import math
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not x > 0 or math.isinf(x):
        raise argparse.ArgumentTypeError(f"{text} must be a positive, finite number of seconds")
    return x


def _positive_number(text):
    import argparse
    from fractions import Fraction
    try:
        x = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number like 1e-6") from None
    if x <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be positive")
    if x < Fraction(sys.float_info.min):    # reported as a float64: it would print as 0
        raise argparse.ArgumentTypeError(f"{text} is below the smallest normal float64 "
                                         f"(about 2.2e-308), in which results report it")
    return x


#: significant decimal digits float64 carries (DBL_DIG)
FLOAT64_DIGITS = 15


def _check_oracle_digits(a, be):
    """--oracle-digits N states answers within 10^−N; the backend computes them to about its
    own digits (mp: dps; float: 15), so a larger N states a precision the oracle does not
    have (and a wrong named failure would follow).  ValueError → exit status 2."""
    own = FLOAT64_DIGITS if be.name == "float" else getattr(be, "dps", None)
    if a.oracle_digits is not None and own is not None and a.oracle_digits > own:
        fix = f"raise --dps to at least {a.oracle_digits}" if be.name == "mp" else \
            "use --backend mp with --dps at least that"
        raise ValueError(f"--oracle-digits {a.oracle_digits} is more than the {own} digits "
                         f"the {be.name} backend computes its answers to: {fix}, or give "
                         f"--oracle-digits {own} or fewer")


def _check_args(a):
    """Combinations argparse cannot see; ValueError → exit status 2."""
    if a.dim is None:
        raise ValueError("give --dim D (or --model FILE)")
    if a.dim > MAX_DIM:             # a model file's dimension (--dim is bounded by argparse)
        raise ValueError(f"dimension {a.dim} is above the limit {MAX_DIM} of exactattn learn: "
                         f"larger runs do not finish on one machine")
    if a.heads is not None and a.heads > MAX_HEADS:
        raise ValueError(f"{a.heads} heads is above the limit {MAX_HEADS} of exactattn learn")
    if a.heads is None:
        a.heads = 1
    if a.backend == "exact" and (a.oracle_digits is not None or a.accuracy is not None):
        raise ValueError("--oracle-digits and --accuracy apply to the mp and float backends")
    if a.heads_bound is not None and a.variant not in ("multi-head", "transformer"):
        raise ValueError("--heads-bound applies to multi-head and transformer only")
    for flag, given in (("--hidden", a.hidden is not None), ("--method", a.method is not None)):
        if given and a.variant != "transformer":
            raise ValueError(f"{flag} applies to transformer only")
    if a.heads_bound is not None and a.heads_bound < a.heads \
            and not getattr(a, "heads_from_model", False):
        raise ValueError(f"--heads-bound {a.heads_bound} is below --heads {a.heads}")
    low = a.variant == "low-rank"
    multi = a.variant == "multi-head"
    if a.schedule is not None and not multi:
        raise ValueError("--schedule applies to multi-head only")
    if multi and a.rank is not None:
        if a.schedule not in (None, "low-rank"):
            raise ValueError(f"--rank needs the low-rank schedule, not --schedule {a.schedule}")
        a.schedule = "low-rank"
    for flag, given in (("--rank", a.rank is not None), ("--rank-bound", a.rank_bound is not None),
                        ("--reveal-rank", a.reveal_rank)):
        if given and not (low or (multi and flag != "--rank-bound")):
            raise ValueError(f"{flag} applies to low-rank only" if flag == "--rank-bound" else
                             f"{flag} applies to low-rank and multi-head only")
    if multi and a.reveal_rank and a.schedule != "low-rank":
        raise ValueError("--reveal-rank applies to multi-head with the low-rank schedule")
    if multi and a.rank is not None and a.rank > a.dim:
        raise ValueError(f"--rank {a.rank} exceeds --dim {a.dim}")
    if a.schedule in ("economy", "low-rank") and a.heads_bound is not None:
        raise ValueError(f"--schedule {a.schedule} needs H known (--heads); with only "
                         f"--heads-bound use --schedule adaptive")
    if a.schedule == "design" and a.backend != "exact":
        raise ValueError("--schedule design needs --backend exact (Theorem A compares answers "
                         "exactly in Q(t))")
    if a.certificate is not None and (a.backend != "exact" or a.variant == "transformer"):
        raise ValueError("--certificate needs the exact backend and single-head, multi-head or "
                         "low-rank")
    for flag, path in (("--save", a.save), ("--certificate", a.certificate)):
        if path and a.model and os.path.realpath(path) == os.path.realpath(a.model):
            raise ValueError(f"{flag} {path} is the model file --model reads: writing it would "
                             f"replace the model; give another path")
    if a.certificate is not None and a.save and \
            os.path.realpath(a.certificate) == os.path.realpath(a.save):
        raise ValueError(f"--certificate and --save name the same file {a.save}: the second "
                         f"write would replace the first; give two paths")
    if (a.certify_unique or a.unique_families is not None) and (
            a.variant != "multi-head" or a.backend != "exact"):
        raise ValueError("--certify-unique applies to multi-head on the exact backend")
    if a.unique_families is not None and (not a.certify_unique or
                                          a.schedule not in (None, "p2")):
        raise ValueError("--unique-families needs --certify-unique and the P2 schedule (it "
                         "bounds the answer-fibre search)")
    if a.certify_unique and a.certificate is not None:
        _fit_design_certificate(a)
    if a.holdout is not None and a.variant != "single-head":
        raise ValueError("--holdout applies to single-head only")
    if low:
        if a.rank is None and not a.model:
            raise ValueError("low-rank needs --rank R (the rank of the random W = Q Kᵀ)")
        if a.rank is not None and a.rank > a.dim:
            raise ValueError(f"--rank {a.rank} exceeds --dim {a.dim}")
        if a.rank_bound is not None and a.rank is not None and a.rank_bound < a.rank:
            raise ValueError(f"--rank-bound {a.rank_bound} is below --rank {a.rank}")
        if a.rank_bound is not None and a.reveal_rank and not a.model:
            raise ValueError("give --rank-bound or --reveal-rank, not both")
        if a.heads != 1:
            raise ValueError("low-rank learns a single head (multi-head low rank is not "
                             "covered yet); drop --heads")


def _work(a) -> float:
    """The run's estimated CPU microseconds (:data:`._common.MAX_WORK`): every learner's
    queries are bounded by its formula (P1 d² + d, low rank with its rank revealed
    ≤ d² + 3d + 1, P2 and the schedules beyond it ≤ 4H₀d² + 1, the Transformer twice that
    and its FFN), priced per query and family (:func:`._common.p2_work`,
    :func:`._common.p1_work`)."""
    d, H = a.dim, a.heads or 1
    if a.variant in ("single-head", "low-rank"):
        queries = (d * d + d + (a.holdout or 0) if a.variant == "single-head"
                   else 8 * (d * d + 3 * d + 1))        # low rank: its certification costs more
        queries += 2 * (4 if a.validate is None else a.validate)
        return p1_work(d, queries, a.backend, a.dps)
    K = (a.hidden or 2) if a.variant == "transformer" else 0
    return p2_work(d, H, a.heads_bound or H, K, a.validate, a.variant == "transformer",
                   a.backend, a.dps)


def _fit_design_certificate(a):
    """A design certificate is read by the checker up to its limits (d, H₀:
    proofs_checks/checker/design.py): refuse a run whose certificate it could not read
    (ValueError → exit status 2)."""
    from proofs_checks.checker.design import MAX_DIM, MAX_H0
    H0 = a.heads_bound or a.heads or 1
    if a.dim > MAX_DIM or H0 > MAX_H0:
        raise ValueError(f"--certify-unique --certificate: the checker reads design "
                         f"certificates up to d = {MAX_DIM} and H0 = {MAX_H0}, not d = {a.dim}, "
                         f"H0 = {H0}; drop --certificate or use smaller sizes")


def _check_work(a):
    check_work(f"learn {a.variant} at d={a.dim}, H={a.heads}"
               f"{f', K={a.hidden}' if a.hidden else ''}", _work(a), a.force)
    if a.certificate is not None and a.variant == "multi-head" and not a.certify_unique:
        # a run certificate writes every answer expanded (learners/p2/cost.py)
        from dataclasses import replace
        from ..learners.p2.cost import check_budget, estimate_multi_head
        est = estimate_multi_head(a.dim, a.heads_bound or a.heads or 1, "exact")
        check_budget(replace(est, what=est.what + " written to --certificate, every answer "
                             "expanded"), a.force)


def _user_model(a):
    """The model in --model FILE; fills in --dim and --heads from it (docs/design.md §7)."""
    from .model import read_model
    model = read_model(a.model)
    transformer = hasattr(model, "kink_form")
    if transformer != (a.variant == "transformer"):
        what = "a one-layer Transformer" if transformer else "a multi-head attention model"
        raise ValueError(f"{a.model} holds {what}; learn it with "
                         f"'{'transformer' if transformer else 'multi-head'}'")
    if a.dim is not None and a.dim != model.dim:
        raise ValueError(f"--dim {a.dim} but the model in {a.model} has dimension {model.dim}")
    if a.backend is None:       # as Oracle(model) decides: real entries → mp
        a.backend = "exact" if model.is_rational else "mp"
        if a.backend == "mp":
            a.backend_note = (f"backend mp chosen: {a.model} has real entries (--backend "
                              f"float or mp to choose)")
    if a.backend == "exact" and not model.is_rational:
        raise ValueError(f"{a.model} has real entries; the exact backend needs rationals "
                         f"(use --backend mp or float, or leave --backend out)")
    a.dim = model.dim
    if a.heads is None:
        # the model's head count, for the report; the learner is told it only when no
        # --heads-bound is given (a bound below it is then the user's test of too few heads)
        a.heads = len(model.heads) if transformer else max(1, len(model.canonical().heads))
        a.heads_from_model = True
    if a.variant == "low-rank" and a.rank is None:
        # the learner is told nothing about the rank; the exact rank is reported beside it
        a.reveal_rank = a.rank_bound is None
        a.rank = _exact_rank(model) if model.is_rational else None
    return model


def _exact_rank(model):
    """Exact rank of a rational single head's W (reported for low-rank with --model)."""
    from flint import fmpq, fmpq_mat
    if len(model.heads) != 1:
        raise ValueError(f"low-rank learns a single head; the model has {len(model.heads)}")
    W = model.heads[0].W
    return fmpq_mat(len(W), len(W), [fmpq(x.numerator, x.denominator)
                                     for r in W for x in r]).rank()


def _model(a):
    kind = "rational" if a.backend == "exact" else "real"
    if a.variant == "transformer":
        from ..models.transformer import random_transformer
        return random_transformer(a.dim, a.heads, a.hidden or 2, seed=a.seed, kind=kind)
    if a.variant == "low-rank":
        from ..learners.p1.low_rank import random_low_rank_head
        from ..models.attention import MultiHeadAttention
        return MultiHeadAttention([random_low_rank_head(a.dim, a.rank, seed=a.seed, kind=kind)])
    if a.rank is not None and a.backend == "exact":     # multi-head, low-rank schedule
        from ..analysis.beyond import low_rank_model
        return low_rank_model(a.dim, a.heads, a.rank, seed=a.seed)
    from ..models.attention import random_multi_head
    return random_multi_head(a.dim, a.heads, seed=a.seed, kind=kind)


def _learn(a, oracle, progress=None):
    be = dict(backend=a.backend, dps=a.dps, seed=a.seed, progress=progress,
              validate=a.validate)
    if a.backend != "exact" and a.variant != "transformer":
        from fractions import Fraction
        be["oracle_precision"] = None if a.oracle_digits is None else \
            Fraction(1, 10 ** a.oracle_digits)
    if a.variant == "single-head":
        from ..learners.p1.single_head import learn_single_head
        return learn_single_head(oracle, a.dim, holdout=a.holdout, **be)
    if a.variant == "low-rank":
        from ..learners.p1.low_rank import learn_low_rank
        told = None if (a.reveal_rank or a.rank_bound is not None) else a.rank
        return learn_low_rank(oracle, a.dim, rank=told, rank_bound=a.rank_bound, **be)
    if a.variant == "transformer":
        from ..learners.transformer.one_layer import learn_transformer
        return learn_transformer(oracle, a.dim, heads=None if a.heads_bound else a.heads,
                                 heads_bound=a.heads_bound, hidden=a.hidden or 2,
                                 method=a.method or "p2", **be)
    try:
        from ..learners.multi_head import learn_multi_head
    except ImportError as e:
        raise _Unavailable(f"the multi-head learner is not available: {e}") from None
    be["force"] = a.force
    if a.certify_unique:
        be["certify_unique"] = True
        be["unique_families"] = a.unique_families
    if a.schedule is not None:
        be["schedule"] = a.schedule
        if a.schedule == "low-rank" and not a.reveal_rank:
            be["rank"] = a.rank
    if a.heads_bound is not None:
        return learn_multi_head(oracle, a.dim, heads_bound=a.heads_bound, **be)
    return learn_multi_head(oracle, a.dim, heads=a.heads, **be)


class _Unavailable(Exception):
    pass


def run(a):
    if a.variant == "causal":                   # decoder oracles: docs/decoders.md
        from .learn_causal import run_causal
        return run_causal(a)
    if a.alibi is not None or a.residual or a.design_certificate is not None:
        raise ValueError("--alibi, --residual and --design-certificate apply to 'learn "
                         "causal' only")
    from ..arith import get_backend
    from ..errors import LearningFailure
    from ..learners.result.compare import default_tolerance, parameter_error
    from ..learners.result.proves import headline
    from ..models.attention import same_function
    from ..oracles.oracle import Oracle
    from ..presentation.progress import Progress
    user = _user_model(a) if a.model else None
    if a.backend is None:
        a.backend = "exact"
    _check_args(a)
    _check_work(a)
    be = get_backend(a.backend, a.dps)            # bad --dps combinations: ValueError → 2
    _check_oracle_digits(a, be)
    model = user if user is not None else _model(a)
    noise = None
    if a.oracle_digits is not None:
        from ..oracles.oracle import Rounding
        noise = Rounding(a.oracle_digits + 1)   # within 10^-N·|y|: the stated precision holds
    oracle = Oracle(model, backend=be, no_peek=True, noise=noise, timeout=a.timeout)
    base = {"algorithm": a.variant, "dim": a.dim, "heads": a.heads, "heads_bound": a.heads_bound,
            "rank": a.rank, "backend": be.name, "dps": getattr(be, "dps", None), "seed": a.seed}
    start = time.perf_counter()
    try:
        with Progress(f"learn {a.variant}", quiet=a.quiet, json=a.json) as progress:
            result = _learn(a, oracle, progress)
    except (LearningFailure, _Unavailable) as e:
        return _failed(a, base, e, oracle, time.perf_counter() - start)
    except MemoryError as e:  # TooLarge: an exact answer beyond what FLINT may allocate
        raise ValueError(str(e) or "out of memory") from None
    seconds = time.perf_counter() - start
    if a.variant == "transformer":
        from ..learners.transformer.one_layer import compare_recovery
        recovered, err, tol, extra = compare_recovery(model, result, be)
        base.update(extra)
    else:
        tol = default_tolerance(be)
        err = parameter_error(model, result.heads, dps=2 * (getattr(be, "dps", None) or 30))
        recovered = same_function(model, result.model) if be.name == "exact" else \
            bool(err <= tol)
    bar = getattr(result, "error_bar", None)
    if be.name != "exact" and a.variant != "transformer":
        from ..learners.result.precision import DEFAULT_ACCURACY
        tol = a.accuracy if a.accuracy is not None else DEFAULT_ACCURACY
        # claimed only when the bar is below the asked accuracy (and, here where the true
        # model is known, the measured error lies within the bar)
        recovered = bar is not None and bar.within(tol) and bool(err <= bar.bound)
        base["error_bar"] = None if bar is None else bar.summary()
        base["error_bar_value"] = None if bar is None else _number(bar.bound, up=True)
        base["accuracy"] = float(tol)
    out = dict(base, algorithm=result.algorithm, queries=result.queries,
               max_length=result.max_length, expected_queries=result.expected_queries,
               expected_max_length=result.expected_max_length,
               validation_queries=result.validation_queries, proves=result.proves,
               proves_headline=headline(result),
               recovered=bool(recovered), recovered_heads=len(result.heads),
               max_error=_number(err), max_error_text=_text(err), tolerance=_number(tol),
               certified=bool(result.certificate),
               notes=list(result.notes) + ([a.backend_note] if getattr(a, "backend_note", None)
                                           else []),
               seconds=round(seconds, 6))
    if getattr(result, "uniqueness", None) is not None:
        out["unique_queries"] = result.unique_queries
        out["certified_unique"] = True
        out["unique_by"] = "Lemma B" if result.uniqueness == "lemma-b" else "Theorem A"
    if result.algorithm == "multi-head-low-rank":
        out["ranks"] = result.extra.get("ranks")
    if result.algorithm == "low-rank":
        out["rank_revealed"] = result.extra.get("rank")
        out["rank_given"] = result.extra.get("rank_given")
    if a.model:
        out["model_file"] = a.model
    if a.save:
        result.save(a.save)
        out["saved"] = a.save
    if a.certificate is not None:
        out["certificate"] = _write_certificate(a.certificate, result, model)
    print(dump(out) if a.json else _summary(out, a.verbose))
    return 0 if recovered else 1


def _write_certificate(path, result, model):
    """The run's consistency-and-genericity certificate (docs/design.md §8), written to `path`
    (:meth:`~exactattn.LearnResult.write_certificate`, the same file from Python)."""
    result.write_certificate(path, model)
    return path


def _failed(a, base, e, oracle, seconds):
    reason = getattr(e, "reason", "unavailable")
    sys.stderr.write(f"exactattn learn: {reason}: {e}\n")
    if a.json:
        details = getattr(e, "details", {})
        print(dump(dict(base, recovered=False, error=reason, message=str(e),
                        queries=oracle.queries, max_length=oracle.max_length,
                        validation_queries=oracle.validation_queries,
                        **({"query": details["query"]} if "query" in details else {}),
                        seconds=round(seconds, 6))))
    return 1


def _number(x, up: bool = False):
    """JSON number for display (None for an infinite error); decisions never use it.
    ``up``: a bound, rounded up to the next double when float() rounded it below
    (docs/honesty.md, "Printed bounds")."""
    import math
    from fractions import Fraction
    import mpmath
    from ..arith.numbers import exact_fraction
    if x == mpmath.inf:
        return None
    f = float(x)
    if up and math.isfinite(f) and Fraction(f) < exact_fraction(x):
        f = math.nextafter(f, math.inf)
    return f


def _text(x):
    from fractions import Fraction
    import mpmath
    if isinstance(x, Fraction):
        return str(x)
    return mpmath.nstr(x, 6)


def _rel(x, y) -> str:
    return "≤" if x is not None and y is not None and x <= y else ">"


def _inexact_how(o):
    """The reason line of an mp/float run: max error, error bar and asked accuracy, each
    relation printed as it is (never '≤' on a failed comparison)."""
    err, tol = o["max_error"], o["tolerance"]
    bar = o.get("error_bar")
    if "error_bar_value" not in o:        # a learner without an error bar (transformer)
        return f"max error {o['max_error_text']} {_rel(err, tol)} tolerance {tol:.3g}"
    if bar is None:
        return f"max error {o['max_error_text']}; no error bar"
    b = o["error_bar_value"]
    kind = "certified enclosure" if bar["rigorous"] else "first-order, not rigorous"
    return (f"max error {o['max_error_text']} {_rel(err, b)} error bar {bar['bound']} "
            f"({kind}) {_rel(b, o['accuracy'])} accuracy {o['accuracy']:.3g}; oracle "
            f"precision {bar['precision']['eta']} ({bar['precision']['source']})")


def _summary(o, verbose=False):
    """The report of a run: counts, the verdict, ``proves:`` (its headline; the full text
    when ``verbose``), the time and the notes."""
    counts = f"queries {o['queries']}"
    if o["expected_queries"] is not None:
        counts += f" (expected {o['expected_queries']})"
    counts += f", max length {o['max_length']}"
    if o["expected_max_length"] is not None:
        counts += f" (expected {o['expected_max_length']})"
    if o.get("certified_unique"):
        counts += f"; + {o['unique_queries']} queries to certify uniqueness"
    n = o["validation_queries"]
    counts += f"; + {n} validation quer{'y' if n == 1 else 'ies'} (counted apart)"
    how = "exact canonical equality" if o["backend"] == "exact" else _inexact_how(o)
    model = f"d={o['dim']}, H={o['heads']}"
    if o["rank"] is not None:
        model += f", rank {o['rank']}"
    lines = [f"{o['algorithm']}: {model}, backend {o['backend']}"
             + (f" (dps {o['dps']})" if o["dps"] else ""),
             counts,
             f"recovered: {'yes' if o['recovered'] else 'NO'} ({how})"
             + (", certified exactly" if o["certified"] else ""),
             f"time {o['seconds']:.3f} s"]
    if o.get("proves"):
        lines.insert(3, f"proves: {o['proves']}" if verbose or not o.get("proves_headline")
                     else f"proves: {o['proves_headline']} (-v: the full statement)")
    lines += [f"note: {n}" for n in o["notes"]]
    if o.get("saved"):
        lines.append(f"recovered model written to {o['saved']}")
    return "\n".join(lines)
