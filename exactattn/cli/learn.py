"""`exactattn learn single-head|multi-head|low-rank|transformer --dim D [--heads H]
[--heads-bound H0] [--rank R] [--hidden K] --backend exact|mp|float [--dps N] [--seed S]
[--json]` (docs/design.md §7).

Draws a seeded random model (rational entries for exact, Gaussian for mp/float; for low-rank
W = Q Kᵀ of rank R), hides it behind a no-peek Oracle, runs the learner and reports the query
accounting and whether the true model was recovered: exact canonical equality on the exact
backend, parameter error within the printed tolerance on mp/float.  A LearningFailure exits
with status 1 and its reason; bad arguments exit with status 2.
"""

from __future__ import annotations

import sys
import time

from ._common import add_backend_args, dump, nonnegative_int, positive_int

VARIANTS = ("single-head", "multi-head", "low-rank", "transformer")


def register(sub):
    p = sub.add_parser("learn", help="learn a seeded random model through a no-peek oracle",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("variant", choices=VARIANTS,
                   help="single-head (P1 Thm 4.1), multi-head (P2), low-rank (docs/design.md §4.2), "
                        "transformer (one layer with a bias-free ReLU FFN, docs/design.md §1)")
    p.add_argument("--dim", type=positive_int, required=True, help="token dimension d")
    p.add_argument("--heads", type=positive_int, default=1,
                   help="number of heads of the random model (default 1)")
    p.add_argument("--heads-bound", type=positive_int, default=None,
                   help="multi-head: tell the learner only H0 ≥ H")
    p.add_argument("--rank", type=nonnegative_int, default=None,
                   help="low-rank: rank R of W = Q Kᵀ (required for low-rank)")
    p.add_argument("--rank-bound", type=nonnegative_int, default=None,
                   help="low-rank: tell the learner only R0 ≥ R (the rank is revealed)")
    p.add_argument("--reveal-rank", action="store_true",
                   help="low-rank: tell the learner nothing about the rank (it is revealed)")
    p.add_argument("--holdout", type=nonnegative_int, default=None,
                   help="single-head: extra random length-2 queries the result must answer "
                        "(default 0 on exact, 1 on mp/float)")
    p.add_argument("--hidden", type=positive_int, default=None,
                   help="transformer: hidden width K of the random FFN (default 2), told to "
                        "the learner as a bound")
    p.add_argument("--method", choices=("p1", "p2"), default=None,
                   help="transformer: p2 (P2 extension, default) or p1 (P1 reduction, one head)")
    add_backend_args(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the model and the learner")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--certificate", metavar="FILE", default=None,
                   help="exact single-head, multi-head, low-rank: write a stand-alone "
                        "identifiability certificate of the run that "
                        "'python -m proofs_checks.verify FILE' checks")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=run)


def _check_args(a):
    """Combinations argparse cannot see; ValueError → exit status 2."""
    if a.heads_bound is not None and a.variant not in ("multi-head", "transformer"):
        raise ValueError("--heads-bound applies to multi-head and transformer only")
    for flag, given in (("--hidden", a.hidden is not None), ("--method", a.method is not None)):
        if given and a.variant != "transformer":
            raise ValueError(f"{flag} applies to transformer only")
    if a.heads_bound is not None and a.heads_bound < a.heads:
        raise ValueError(f"--heads-bound {a.heads_bound} is below --heads {a.heads}")
    low = a.variant == "low-rank"
    for flag, given in (("--rank", a.rank is not None), ("--rank-bound", a.rank_bound is not None),
                        ("--reveal-rank", a.reveal_rank)):
        if given and not low:
            raise ValueError(f"{flag} applies to low-rank only")
    if a.certificate is not None and (a.backend != "exact" or a.variant == "transformer"):
        raise ValueError("--certificate needs the exact backend and single-head, multi-head or "
                         "low-rank")
    if a.holdout is not None and a.variant != "single-head":
        raise ValueError("--holdout applies to single-head only")
    if low:
        if a.rank is None:
            raise ValueError("low-rank needs --rank R (the rank of the random W = Q Kᵀ)")
        if a.rank > a.dim:
            raise ValueError(f"--rank {a.rank} exceeds --dim {a.dim}")
        if a.rank_bound is not None and a.rank_bound < a.rank:
            raise ValueError(f"--rank-bound {a.rank_bound} is below --rank {a.rank}")
        if a.rank_bound is not None and a.reveal_rank:
            raise ValueError("give --rank-bound or --reveal-rank, not both")
        if a.heads != 1:
            raise ValueError("low-rank learns a single head (multi-head low rank is not "
                             "covered yet); drop --heads")


def _model(a):
    kind = "rational" if a.backend == "exact" else "real"
    if a.variant == "transformer":
        from ..models.transformer import random_transformer
        return random_transformer(a.dim, a.heads, a.hidden or 2, seed=a.seed, kind=kind)
    if a.variant == "low-rank":
        from ..learners.low_rank import random_low_rank_head
        from ..models.attention import MultiHeadAttention
        return MultiHeadAttention([random_low_rank_head(a.dim, a.rank, seed=a.seed, kind=kind)])
    from ..models.attention import random_multi_head
    return random_multi_head(a.dim, a.heads, seed=a.seed, kind=kind)


def _learn(a, oracle, progress=None):
    be = dict(backend=a.backend, dps=a.dps, seed=a.seed)
    if a.variant == "single-head":
        from ..learners.single_head import learn_single_head
        return learn_single_head(oracle, a.dim, holdout=a.holdout, **be)
    if a.variant == "low-rank":
        from ..learners.low_rank import learn_low_rank
        told = None if (a.reveal_rank or a.rank_bound is not None) else a.rank
        return learn_low_rank(oracle, a.dim, rank=told, rank_bound=a.rank_bound, **be)
    if a.variant == "transformer":
        from ..learners.transformer import learn_transformer
        return learn_transformer(oracle, a.dim, heads=None if a.heads_bound else a.heads,
                                 heads_bound=a.heads_bound, hidden=a.hidden or 2,
                                 method=a.method or "p2", **be)
    try:
        from ..learners.multi_head import learn_multi_head
    except ImportError as e:
        raise _Unavailable(f"the multi-head learner is not available: {e}") from None
    if a.heads_bound is not None:
        return learn_multi_head(oracle, a.dim, heads_bound=a.heads_bound, progress=progress, **be)
    return learn_multi_head(oracle, a.dim, heads=a.heads, progress=progress, **be)


class _Unavailable(Exception):
    pass


def run(a):
    from ..arith import get_backend
    from ..errors import LearningFailure
    from ..learners.compare import default_tolerance, parameter_error
    from ..models.attention import same_function
    from ..oracles.oracle import Oracle
    from ..presentation.progress import Progress
    _check_args(a)
    be = get_backend(a.backend, a.dps)            # bad --dps combinations: ValueError → 2
    model = _model(a)
    oracle = Oracle(model, backend=be, no_peek=True)
    base = {"algorithm": a.variant, "dim": a.dim, "heads": a.heads, "heads_bound": a.heads_bound,
            "rank": a.rank, "backend": be.name, "dps": getattr(be, "dps", None), "seed": a.seed}
    start = time.perf_counter()
    try:
        with Progress(f"learn {a.variant}", quiet=a.quiet, json=a.json) as progress:
            result = _learn(a, oracle, progress)
    except (LearningFailure, _Unavailable) as e:
        return _failed(a, base, e, oracle, time.perf_counter() - start)
    seconds = time.perf_counter() - start
    if a.variant == "transformer":
        from ..learners.transformer import compare_recovery
        recovered, err, tol, extra = compare_recovery(model, result, be)
        base.update(extra)
    else:
        tol = default_tolerance(be)
        err = parameter_error(model, result.heads, dps=getattr(be, "dps", None) or 30)
        recovered = same_function(model, result.model) if be.name == "exact" else \
            bool(err <= tol)
    out = dict(base, algorithm=result.algorithm, queries=result.queries,
               max_length=result.max_length, expected_queries=result.expected_queries,
               expected_max_length=result.expected_max_length,
               recovered=bool(recovered), recovered_heads=len(result.heads),
               max_error=_number(err), max_error_text=_text(err), tolerance=_number(tol),
               certified=bool(result.certificate), notes=list(result.notes),
               seconds=round(seconds, 6))
    if result.algorithm == "low-rank":
        out["rank_revealed"] = result.extra.get("rank")
        out["rank_given"] = result.extra.get("rank_given")
    if a.certificate is not None:
        out["certificate"] = _write_certificate(a.certificate, result, model)
    print(dump(out) if a.json else _summary(out))
    return 0 if recovered else 1


def _write_certificate(path, result, model):
    """The run's identifiability certificate (docs/design.md §8), written to `path`."""
    import json
    from proofs_checks.common import run_certificate
    with open(path, "w", encoding="utf-8") as f:
        json.dump(run_certificate(result, model), f, ensure_ascii=False)
        f.write("\n")
    return path


def _failed(a, base, e, oracle, seconds):
    reason = getattr(e, "reason", "unavailable")
    sys.stderr.write(f"exactattn learn: {reason}: {e}\n")
    if a.json:
        print(dump(dict(base, recovered=False, error=reason, message=str(e),
                        queries=oracle.queries, max_length=oracle.max_length,
                        seconds=round(seconds, 6))))
    return 1


def _number(x):
    """JSON number for display (None for an infinite error); decisions never use it."""
    import mpmath
    if x == mpmath.inf:
        return None
    return float(x)


def _text(x):
    from fractions import Fraction
    import mpmath
    if isinstance(x, Fraction):
        return str(x)
    return mpmath.nstr(x, 6)


def _summary(o):
    counts = f"queries {o['queries']}"
    if o["expected_queries"] is not None:
        counts += f" (expected {o['expected_queries']})"
    counts += f", max length {o['max_length']}"
    if o["expected_max_length"] is not None:
        counts += f" (expected {o['expected_max_length']})"
    how = "exact canonical equality" if o["backend"] == "exact" else \
        f"max error {o['max_error_text']} ≤ tolerance {o['tolerance']:.3g}"
    model = f"d={o['dim']}, H={o['heads']}"
    if o["rank"] is not None:
        model += f", rank {o['rank']}"
    lines = [f"{o['algorithm']}: {model}, backend {o['backend']}"
             + (f" (dps {o['dps']})" if o["dps"] else ""),
             counts,
             f"recovered: {'yes' if o['recovered'] else 'NO'} ({how})"
             + (", certified exactly" if o["certified"] else ""),
             f"time {o['seconds']:.3f} s"]
    lines += [f"note: {n}" for n in o["notes"]]
    return "\n".join(lines)
