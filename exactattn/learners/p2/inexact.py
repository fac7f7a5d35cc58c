"""The P2 multi-head learner on the mp / float backends (docs/design.md §8: inexact backends
prove less, and say so).

After the schedule's answers are in:

1. the oracle's precision η is stated or inferred (:mod:`.precision`), and the working
   precision follows from it;
2. the learner's own recovery runs on the answer balls [ŷ ± η·max(1, |ŷ|)] in certified
   ball arithmetic (:mod:`.enclosure`); with heads=H every family tries type H first;
3. success: the heads are the enclosures' midpoints (at the working precision; float64 on
   the float backend), and ``result.error_bar`` bounds max |Δparameter| for every oracle of
   that precision with the heads found (method "ball", rigorous);
4. failure is named: fewer heads than heads=H is :class:`~exactattn.errors.UnresolvedHeads`;
   a decision the balls cannot make is :class:`~exactattn.errors.IllConditioned`, naming
   the quantity the answers do not determine and its copy-count family
   (:func:`ill_conditioned_quantity`: the poles of one family not isolated, a residue not
   told from 0, an interpolation, a matching, the basis solve), with the smallest pole
   separation seen, the precision that would have sufficed (re-run on narrower balls) and
   the oracle's declared remedy; a certain contradiction (no matching candidate at all, or
   Σ v_h ≠ v, with every family certified of type H — H poles in each, none fallen back to
   a lower type — and, at an inferred precision, on balls CERTAIN_MARGIN = 16 times wider
   too) is NotAttention at that precision; anything short of that is IllConditioned.  A failure
   at a declared lower-precision format (a float32 torch layer) names the remedy (run in
   float64).  ``accuracy``, if given, must be met by the bar, else IllConditioned.
"""

from __future__ import annotations

import mpmath

from ...arith.ball import midpoint_mpf
from ...errors import (CollidingPoles, IllConditioned, InvisibleHead, LearningFailure,
                      NotAttention, SingularSystem, UnresolvedHeads)
from ...models.attention import AttentionHead, MultiHeadAttention
from .enclosure import enclose, needed_precision
from .matching import key_label
from ..result.precision import (ErrorBar, bar_for, check_accuracy, infer_precision, shown_eta,
                        working_bits, working_dps)

__all__ = ["ill_conditioned_quantity", "run_inexact"]


def _convert(be, work_ctx):
    """arb → the backend's number (an mpf at the working precision, or a float64)."""
    if be.name == "float":
        return lambda b: float(midpoint_mpf(b, work_ctx))
    return lambda b: midpoint_mpf(b, work_ctx)


def _separation(details, work_ctx):
    seps = details.get("separations") or []
    if not seps:
        return None
    return mpmath.nstr(min(midpoint_mpf(s, work_ctx) for s in seps), 6)


def run_inexact(orc, schedule, answers, transcript, be, recover, result, close=None,
                heads=None, precision=None, accuracy=None, dps=None):
    """Steps 1–4 of the module docstring; ``result(**fields)`` builds the LearnResult."""
    prec = infer_precision(orc, answers, precision)
    wdps = working_dps(prec, dps if be.name == "mp" else None)
    bits = 53 if be.name == "float" and dps is None and prec.digits <= 15 else working_bits(wdps)
    ctx = mpmath.MPContext()
    ctx.dps = wdps
    H0 = schedule.H0
    try:
        enc = enclose(lambda *a: recover(*a, heads=heads), schedule, answers, prec, bits)
    except (LearningFailure, SingularSystem) as e:
        failure = _classify(e, recover, schedule, answers, prec, bits, heads, ctx,
                            stated=precision is not None)
        if not isinstance(failure, IllConditioned):
            raise failure from None
        fo, why = _first_order(recover, close, schedule, answers, prec, wdps, heads)
        if fo is None:
            failure.details["first_order"] = why
            if not why.startswith(NOT_COMPUTED):      # a size limit is no finding: not shown
                failure.args = (f"{failure}; no first-order bar either: {why}",)
            raise failure from None
        return _first_order_result(fo, failure, be, prec, wdps, ctx, schedule, transcript,
                                   result, heads, accuracy)
    convert = _convert(be, ctx)
    pairs = sorted(zip(enc.midpoints(convert), enc.heads),
                   key=lambda p: ([x for r in p[0][0] for x in r], p[0][1]))
    found = [p[0] for p in pairs]
    enc_heads = [p[1] for p in pairs]
    sep = None if not enc.separations else mpmath.nstr(enc.min_separation(ctx), 6)
    if heads is not None and len(found) < heads:
        raise UnresolvedHeads(
            f"{len(found)} of heads={heads} heads resolved at the oracle precision {prec}: "
            f"two poles or a residue cannot be told apart (smallest pole separation seen "
            f"{sep}); either the oracle has fewer heads (retry with heads_bound={heads}, "
            f"--heads-bound {heads}), or its heads are closer than this precision separates "
            f"({prec.remedy or 'state a finer oracle precision or use the exact backend'})",
            heads_found=len(found), heads=heads, pole_separation=sep,
            precision=prec.describe())
    bound = bar_for(enc_heads, found, ctx, bits)
    bar = ErrorBar(bound=bound, method="ball", precision=prec, working_dps=wdps,
                   constant=bound / prec.mpf(),
                   assumes=_assumes(prec, len(found), heads, H0), enclosure=enc_heads,
                   details={"prec_bits": bits, "min_pole_separation": sep})
    check_accuracy(bar, accuracy, sep)
    model = MultiHeadAttention([AttentionHead(W, v) for W, v in found])
    res = result(heads=found, certificate=None,
                 extra={"U": schedule.U, "X": schedule.X, "H0": H0,
                        "v": [convert(x) for x in enc.v], "engine": {"engine": "ball",
                                                                     "prec_bits": bits},
                        "certification": _residual(model, transcript, be, ctx)})
    res.error_bar = bar
    res.notes.append(f"error bar {bar}")
    if heads is None and len(found) < H0:
        res.notes.append(f"{len(found)} heads resolved with heads_bound={H0}: the bar assumes "
                         f"the oracle has exactly these {len(found)} canonical heads visible "
                         f"(fewer are excluded; more, unresolved at this precision, are not)")
    return res


#: the first-order constant C costs one recovery per answer: computed up to this many answers
FIRST_ORDER_MAX_ANSWERS = 70
#: how the reason of a first-order bar not attempted (a run above the size limit) begins: kept
#: in ``details["first_order"]``, left out of the message (a limit of ours, not a finding)
NOT_COMPUTED = "not computed"


def _first_order(recover, close, schedule, answers, prec, wdps, heads):
    """The fallback where balls fail (docs/design.md §8): the tolerance-based recovery at
    twice the working precision, tolerances from η (:func:`.precision.approximate_tolerances`),
    and C = max_p Σ_k |∂p/∂a_k| by finite differences (:mod:`.jacobian`); the bar C·η is
    first-order, not rigorous, and is used only while it stays below a quarter of the
    smallest distance between two recovered heads.  Returns ((heads, v, C, bound), None) or
    (None, why)."""
    from ...arith.mp import MPBackend
    from .engines import RealEngine, real_tolerance
    from .jacobian import flat, jacobian, row_norms
    from .schedule import Schedule
    if close is None or len(answers) > FIRST_ORDER_MAX_ANSWERS:
        return None, (f"{NOT_COMPUTED}: the first-order constant is computed up to "
                      f"{FIRST_ORDER_MAX_ANSWERS} answers (this run has {len(answers)})")
    work = MPBackend(2 * wdps)
    sched = Schedule([[work.scalar(x) for x in r] for r in schedule.U],
                     [[work.scalar(x) for x in r] for r in schedule.X], schedule.H0)
    ans = [work.scalar(a) for a in answers]

    def fn(a):
        engine = RealEngine(work, real_tolerance(work, prec))
        return recover(sched, a, engine, work, schedule.H0, close(work, prec), heads=heads)

    try:
        found, v = fn(ans)
        if heads is not None and len(found) < heads:
            return None, f"the tolerance-based recovery finds {len(found)} of {heads} heads"
        step = work.ctx.mpf(10) ** (-wdps)
        J = jacobian(fn, ans, step, found, flat(found, v), work.scalar(0))
    except LearningFailure as e:
        return None, (f"the tolerance-based recovery cannot make it either "
                      f"({ill_conditioned_quantity(e, schedule)[0]})")
    d = schedule.d
    C = max(row_norms(J[: len(found) * (d * d + d)]), default=work.scalar(0))
    top = max((abs(a) for a in ans), default=work.scalar(1))
    eta_abs = work.scalar(prec.eta) * (max(1, top) if prec.relative else 1)
    bound = C * eta_abs
    gaps = [max(abs(a - b) for a, b in zip(flat([h1], []), flat([h2], [])))
            for i, h1 in enumerate(found) for h2 in found[i + 1:]]
    if gaps and not 4 * bound < min(gaps):
        return None, (f"the first-order bar C·η = {mpmath.nstr(bound, 3)} is not below a quarter "
                      f"of the distance {mpmath.nstr(min(gaps), 3)} between two heads")
    return (found, v, C, bound), None


def _first_order_result(fo, failure, be, prec, wdps, ctx, schedule, transcript, result,
                        heads, accuracy):
    found, v, C, bound = fo
    if be.name == "float":
        conv = float
    else:
        def conv(x):
            return ctx.mpf(x)
    reported = [([[conv(x) for x in row] for row in W], [conv(x) for x in vh])
                for W, vh in found]
    reported.sort(key=lambda h: ([x for r in h[0] for x in r], h[1]))
    rounding = mpmath.mpf(2) ** -52 if be.name == "float" else ctx.eps
    top = max((abs(mpmath.mpf(x)) for W, vh in found for x in flat_entries(W, vh)), default=1)
    sep = failure.details.get("pole_separation")
    bar = ErrorBar(bound=mpmath.mpf(bound) + rounding * top, method="first-order", precision=prec,
                   working_dps=2 * wdps, constant=C,
                   assumes=(f"first order in η (C·η with C = {mpmath.nstr(C, 3)} by finite "
                            f"differences; not rigorous): the balls fail at this precision "
                            f"({failure.details.get('cause')})"),
                   details={"min_pole_separation": sep,
                            "needed_precision": failure.details.get("needed_precision")})
    check_accuracy(bar, accuracy, sep)
    model = MultiHeadAttention([AttentionHead(W, vh) for W, vh in reported])
    res = result(heads=reported, certificate=None,
                 extra={"U": schedule.U, "X": schedule.X, "H0": schedule.H0,
                        "v": [conv(x) for x in v],
                        "engine": {"engine": "first-order", "dps": 2 * wdps},
                        "certification": _residual(model, transcript, be, ctx)})
    res.error_bar = bar
    res.notes.append(f"error bar {bar}: no certified enclosure at this precision "
                     f"({failure.details.get('cause')})")
    return res


def flat_entries(W, v):
    return [x for row in W for x in row] + list(v)


def _assumes(prec, found, heads, H0):
    told = f"heads={heads}" if heads is not None else f"at least {found} heads (bound {H0})"
    return (f"every answer within {shown_eta(prec.eta)}"
            f"{'·max(1,|y|)' if prec.relative else ''} of the output of an attention model "
            f"with exactly {found} canonical heads visible on the schedule ({told})")


def _residual(model, transcript, be, ctx):
    """The midpoint model's largest relative residual on the transcript (information only:
    the enclosure, not this number, is the evidence)."""
    if not transcript:
        return {"certified": None}
    worst = mpmath.mpf(0)
    got = model.evaluate_many([tokens for tokens, _ in transcript], be)
    with mpmath.workdps(ctx.dps):
        for y, (_, answer) in zip(got, transcript):
            worst = max(worst, abs(mpmath.mpf(y) - mpmath.mpf(answer)) /
                        (1 + abs(mpmath.mpf(answer))))
    return {"certified": None, "method": "certified ball enclosure (error_bar)",
            "max_relative_residual": worst}


#: an inferred precision's "certain" contradiction must survive balls this many times wider
CERTAIN_MARGIN = 16


def _classify(e, recover, schedule, answers, prec, bits, heads, ctx, stated=False):
    """The named failure of an inexact run whose ball recovery could not certify (module
    docstring, step 4).  A contradiction is "certain" only when every family is of type
    heads=H and no candidate matches (or Σ v_h ≠ v) on balls of the oracle precision; at an
    inferred (not stated) precision it must also hold on balls CERTAIN_MARGIN times wider,
    else the verdict hangs on the inference and is IllConditioned instead."""
    sep = _separation(e.details if isinstance(e, LearningFailure) else {}, ctx)
    reason = getattr(e, "reason", "singular-system")
    certain = _contradiction(e, heads)
    robust = certain and (stated or _still_contradicts(recover, schedule, answers, prec, bits,
                                                       heads))
    if certain and robust:
        how = "" if stated else f" (inferred; it holds at {CERTAIN_MARGIN}η too)"
        return NotAttention(f"{e} — certain at the oracle precision {prec}{how}: every family "
                            f"certified of type {heads}, and no attention model with {heads} "
                            f"heads answers within it (or the oracle is less precise than "
                            f"that)", precision=prec.describe(),
                            **{k: v for k, v in e.details.items()
                               if k not in ("separations", "pole_counts")})
    if certain:
        quantity, family, _ = ill_conditioned_quantity(e, schedule)
        return IllConditioned(
            f"{quantity}; the answers contradict every attention model with "
            f"{heads} heads at the oracle precision {prec}, but not at {CERTAIN_MARGIN}× that: "
            f"the verdict hangs on the inferred precision; state it (oracle_precision=, "
            f"--oracle-digits){'; ' + prec.remedy if prec.remedy else ''}",
            pole_separation=sep, precision=prec.describe(), needed_precision=None,
            cause=reason, quantity=quantity, family=family)
    if heads is not None and isinstance(e, (CollidingPoles, InvisibleHead)):
        fix = f"; {prec.remedy}" if prec.remedy else ""
        return UnresolvedHeads(
            f"heads={heads} heads are not resolved in every family at the oracle precision "
            f"{prec} ({reason}: {e}); smallest pole separation seen {sep}; either the oracle "
            f"has fewer heads (retry with heads_bound={heads}, --heads-bound {heads}), or its "
            f"heads are closer than this precision separates{fix}",
            heads=heads, pole_separation=sep, precision=prec.describe(), cause=reason)
    narrower, _ = needed_precision(lambda *a: recover(*a, heads=heads), schedule, answers,
                                   prec, bits, NARROWED)
    need = None if narrower is None else shown_eta(narrower.eta)
    quantity, family, local = ill_conditioned_quantity(e, schedule)
    fixes = [prec.hint(narrower) if need else
             f"answer balls narrowed around these answers by up to 10^{NARROWED[-1]} do "
             f"not certify it either (the answers may also be noisier than stated)"]
    if local:
        fixes.append("a fresh draw of the random bases may avoid it (resample=True; "
                     "max_attempts=N draws)")
    if prec.remedy and not need:
        fixes.append(prec.remedy)
    solved = "" if sep is None else f"; smallest pole separation among the families reached: {sep}"
    return IllConditioned(
        f"at the oracle precision {prec}, {quantity}{solved}. {_capital('; '.join(fixes))}. "
        f"Raising dps does not help: more precise answers do",
        pole_separation=sep, precision=prec.describe(), needed_precision=need, cause=reason,
        quantity=quantity, family=family)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


#: the narrowings 10^k of the answer balls that :func:`.enclosure.needed_precision` tries
NARROWED = (1, 2, 4, 8, 16)


def _solving(e, schedule):
    """(label, position, count) of the copy-count family the ball recovery was solving when
    it failed, or None: :class:`.enclosure.BallEngine` records one pole count per family
    started, in the order :func:`.recovery._recover` solves them (the families ending in
    x₁ first, then the rest, each in schedule order)."""
    counts = e.details.get("pole_counts")
    fams = schedule.families
    order = [f for f in fams if f.ends_in_x1] + [f for f in fams if not f.ends_in_x1]
    if not counts or len(counts) > len(order):
        return None
    fam = order[len(counts) - 1]
    return f"I(u{key_label(fam.u_key)}, x{key_label(fam.x_key)})", len(counts), len(order)


def ill_conditioned_quantity(e, schedule) -> tuple[str, str | None, bool]:
    """(what, family, local) for a recovery failure that balls of the oracle precision cannot
    decide (docs/design.md §8): ``what`` names the quantity the answers do not determine —
    the poles of one copy-count family (not isolated), one residue (not told from 0), one
    family's interpolation, one matching, the basis solve or the sum of the v_h — with the
    family when known; ``local`` is True when it concerns one family of this draw of the
    bases (another draw may avoid it)."""
    if isinstance(e, SingularSystem):
        what = ("the solve with the random bases U, X is not certified at this precision "
                "(a ball pivot contains 0)")
        return what, None, True
    d = e.details
    if "family" in d:
        told = str(e).split(": ", 1)[-1]
        what = (f"the matching of the copy-count family {d['family']} ({told}) is not "
                f"decided at this precision")
        return what, d["family"], True
    if "sum_v" in d:
        what = ("the sum of the heads' value vectors v_h is not certified equal to v, which "
                "the constants give")
        return what, None, False
    at = _solving(e, schedule)
    name = f"the copy-count family {at[0]} (family {at[1]} of {at[2]} in the order solved)" if at \
        else "a copy-count family"
    family = at[0] if at else None
    if d.get("degree") == 1:
        what = (f"the pole z_h = e^(u·W_h x) of {name} is not determined: the root of its "
                f"interpolated denominator is not certified")
    elif "degree" in d:
        what = (f"the {d['degree']} poles z_h = e^(u·W_h x) of {name} cannot be isolated: two "
                f"of them lie closer together than answers within the oracle precision "
                f"resolve (the roots of its interpolated denominator are not certified "
                f"distinct)")
    elif "samples" in d:
        what = (f"the rational interpolation of {name}: no type ≤ ({d['bound']}, "
                f"{d['bound']}) is certified within the answer balls (its linearised system "
                f"is too ill-conditioned at this precision)")
    elif "pole" in d and "residue" in str(e):
        what = (f"a residue c_h = −v_h·u of {name} cannot be told from 0: its term "
                f"c_h/(1 + m·z_h) is below what the oracle precision resolves (a pole far "
                f"from 1, a large score |u·W_h x|, hides it)")
    elif "pole" in d:
        what = (f"a pole z_h of {name} is not certified positive, so its score log z_h is "
                f"not determined at this precision")
    else:
        return f"a decision of the recovery ({getattr(e, 'reason', 'failure')})", family, False
    return what, family, True


def _contradiction(e, heads) -> bool:
    """A certified contradiction (:func:`_classify`): no matching candidate, or Σ v_h ≠ v,
    after every family of the schedule was solved with exactly heads=H poles (a family that
    fell back to a lower type proves nothing: :class:`.enclosure.BallEngine`)."""
    if not (isinstance(e, NotAttention) and heads is not None and
            (e.details.get("candidates") == 0 or "sum_v" in e.details)):
        return False
    counts = e.details.get("pole_counts")
    return bool(counts) and all(n == heads for n in counts)


def _still_contradicts(recover, schedule, answers, prec, bits, heads) -> bool:
    """Whether the recovery on balls CERTAIN_MARGIN times wider fails with a contradiction
    too (:func:`_classify`)."""
    try:
        enclose(lambda *a: recover(*a, heads=heads), schedule, answers,
                prec.scaled(CERTAIN_MARGIN), bits)
    except NotAttention as e:
        return _contradiction(e, heads)
    except (LearningFailure, SingularSystem):
        return False
    return False
