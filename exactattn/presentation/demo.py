"""A narrated walk through one exact multi-head recovery (P2; docs/design.md §4.3) — the logic behind
``exactattn demo``.

:func:`run_demo` learns a seeded random model through a no-peek oracle and then replays, from
the learner's own transcript, what the learner did: one copy-count family and its samples,
the interpolated poles and residues, one matching step, the final heads and the exact check.
It returns one JSON-ready dict; :func:`narrate` turns that dict into plain terminal text, so
the narrative and ``--json`` always say the same thing.

Exact numbers are written as strings: rationals as ``a/b``, elements of Q(t) in their
:class:`~exactattn.arith.expfield.ExpElement` form (abbreviated when long), t = e^{1/L}.
"""

from __future__ import annotations

import random
from fractions import Fraction

__all__ = ["run_demo", "narrate", "compact_element", "DEFAULT_BOX"]

#: query vectors drawn from {−5…5}^d keep the exponents of t small enough to read
DEFAULT_BOX = 5
_WIDTH = 96


# ---------------------------------------------------------------------- formatting helpers
def _q(x) -> str:
    """A rational as 'a/b' (or 'a')."""
    return str(Fraction(x))


def _approx(elem, digits: int = 8) -> str:
    import mpmath
    return mpmath.nstr(elem.to_mpf(digits + 5), digits)


def _sparsest(elem, max_terms: int = 400):
    """The element as answered or in lowest terms, whichever has fewer terms (reducing can
    make a sparse element dense: a common factor like 1 + t^k divides out into many terms)."""
    from ..arith.expfield import REDUCE_SPAN, ExpElement
    if len(elem.num) + len(elem.den) > max_terms or elem.exponent_span() > REDUCE_SPAN:
        return elem
    low = ExpElement(elem.num, elem.den, elem.L).reduce()  # a copy: reduce() mutates
    return min((elem, low), key=lambda e: len(e.num) + len(e.den))


def _show(elem) -> str:
    from ..arith.expfield import _show as show_poly  # the field's own polynomial printer
    var = "t" if elem.L > 1 else "e"
    num = show_poly(elem.num, var)
    return num if elem.den.is_one() else f"({num})/({show_poly(elem.den, var)})"


def compact_element(elem, width: int = _WIDTH) -> str:
    """An exact element of Q(t) (docs/design.md §2, exact field) shown in at most about ``width``
    characters: written out when short (t = e^(1/L) is stated by the caller), else its
    shape (terms, exponent range of t)."""
    elem = _sparsest(elem)
    text = _show(elem)
    if len(text) <= width:
        return text
    num, den = elem.terms()
    exps = [k for k, _ in num + den]
    return (f"({len(num)}-term)/({len(den)}-term) in t = e^(1/{elem.L}), "
            f"exponents {min(exps)}…{max(exps)}")


def _pole_approx(score: Fraction) -> str:
    """The pole m = −1/z = −e^{−score}, to 4 digits (display only)."""
    import mpmath
    return mpmath.nstr(-mpmath.exp(-mpmath.mpf(score.numerator) / score.denominator), 4)


def _pole_text(score: Fraction, L: int) -> str:
    """z = e^score = t^k with t = e^{1/L} (the exact field's generator)."""
    k = score * L
    return f"t^{k.numerator}" if k.denominator == 1 else f"e^({_q(score)})"


# ---------------------------------------------------------------------- the replay
def _family_samples(schedule, answers, index):
    """The 2H₀+1 samples of schedule family ``index`` (it ends in x₁: its m = 0 sample is
    the first query q₀) — P2 copy-count family."""
    per = 2 * schedule.H0
    return [answers[0]] + answers[1 + index * per: 1 + (index + 1) * per]


def _solve(schedule, answers, index, seed):
    """Interpolate one family as the learner does (modular images, then exact lifting;
    docs/design.md §2 fast exact, §4.3): (K, [(score, residue)], L)."""
    from ..arith import get_backend
    from ..arith.modular import BadReduction
    from ..learners.p2.interpolation import solve_family
    from ..learners.p2.engines import make_engine
    ys = _family_samples(schedule, answers, index)
    for bits in (62, 127, 255, 511):
        engine = make_engine(get_backend("exact"), answers, random.Random(seed), bits)
        try:
            vals = [engine.constant(ys[0].as_rational())] + [engine.sample(y) for y in ys[1:]]
            K, heads = solve_family(engine.field, vals, schedule.H0)
            return (engine.scalar(K), [(engine.score(z), engine.scalar(c)) for z, c in heads],
                    engine.L)
        except BadReduction:
            continue
    raise RuntimeError("modular interpolation failed at every prime size")


def _interpolant(K, terms, m, L):
    """K + Σ c_h / (1 + m z_h) exactly in Q(t), z_h = t^{L s_h} (P2 copy-count family)."""
    from ..arith.expfield import ExpElement, exp_rational
    one = ExpElement.from_rational(1)
    total = ExpElement.from_rational(K)
    for s, c in terms:
        total = total + ExpElement.from_rational(c) / (one + ExpElement.from_rational(m) *
                                                       exp_rational(s))
    return total


def _head_label(score, u, x, heads):
    """Which recovered head has this score uᵀW_h x (1-based), or None."""
    for n, (W, _) in enumerate(heads, 1):
        if sum(u[i] * W[i][j] * x[j] for i in range(len(u)) for j in range(len(x))) == score:
            return n
    return None


def _model_section(model, H0, box):
    return {"dim": model.dim, "heads": len(model.heads), "heads_bound": H0, "box": box,
            "W": [[[_q(a) for a in r] for r in h.W] for h in model.heads],
            "v": [[_q(a) for a in h.v] for h in model.heads]}


def _schedule_section(schedule):
    from ..learners.p2.schedule import published_count, published_max_length
    d, H0 = schedule.d, schedule.H0
    return {"U": [[_q(a) for a in r] for r in schedule.U],
            "X": [[_q(a) for a in r] for r in schedule.X],
            "families": len(schedule.families), "queries": schedule.count,
            "formula": f"1 + 2·{H0}·(2·{d}²−1) = 4·{H0}·{d}² − 2·{H0} + 1",
            "published_count": published_count(d, H0),
            "max_length": schedule.max_length,
            "published_max_length": published_max_length(H0)}


def _family_section(schedule, answers, heads, model, seed):
    """I(u₁, x₁): samples, interpolated poles and residues, exact re-check (P2 copy-count
    family and rational interpolation)."""
    from ..analysis.experiments import copy_count_terms
    fam = schedule.families[0]
    ys = _family_samples(schedule, answers, 0)
    K, terms, L = _solve(schedule, answers, 0, seed)
    exact_fit = all(_interpolant(K, terms, m, L) == y for m, y in enumerate(ys))
    true_K, true_terms = copy_count_terms(model, fam.u, fam.x)
    rows = [{"head": _head_label(s, fam.u, fam.x, heads), "pole_z": _pole_text(s, L),
             "score": _q(s), "pole_m": f"-e^({_q(-s)})", "pole_m_approx": _pole_approx(s),
             "residue": _q(c)}
            for s, c in terms]
    rows.sort(key=lambda r: r["head"] or 0)
    return {"name": "I(u1, x1)", "u": [_q(a) for a in fam.u], "x": [_q(a) for a in fam.x],
            "L": L,
            "samples": [{"m": m, "length": m + 1, "value": compact_element(y),
                         "exact": str(y), "approx": _approx(y)} for m, y in enumerate(ys)],
            "type": len(terms), "K": _q(K), "poles": rows,
            "interpolant_reproduces_samples": exact_fit,
            "matches_hidden_model": (K == true_K and sorted(terms) == sorted(true_terms))}


def _matching_section(schedule, answers, heads, seed):
    """I(u₁, x₁), I(u₂, x₁) and I(u₁+u₂, x₁): poles multiply (scores add), residues add
    (docs/design.md §4.3 step 2) — uses the learner's own matching rule."""
    from ..arith import get_backend
    from ..learners.p2.matching import Close, match  # the learner's rule, not a copy
    if schedule.d < 2:
        return None
    d = schedule.d
    ref = _solve(schedule, answers, 0, seed)[1]
    fam = _solve(schedule, answers, 1, seed)[1]
    summ = _solve(schedule, answers, d, seed)[1]
    got = match(ref, fam, summ, Close(get_backend("exact")), False, "I(u2, x1)")
    u1, x1 = schedule.families[0].u, schedule.families[0].x
    rows = [{"head": _head_label(sa, u1, x1, heads), "ref": [_q(sa), _q(ca)],
             "partner": [_q(sb), _q(cb)], "sum": [_q(sa + sb), _q(ca + cb)]}
            for (sa, ca), (sb, cb) in zip(ref, got)]
    rows.sort(key=lambda r: r["head"] or 0)
    return {"families": ["I(u1, x1)", "I(u2, x1)", "I(u1+u2, x1)"], "pairs": rows,
            "sum_family": [[_q(s), _q(c)] for s, c in summ]}


def _check_section(model, result):
    from ..models.attention import same_function
    cert = result.certificate or {}
    return {"queries": result.queries, "expected_queries": result.expected_queries,
            "max_length": result.max_length, "expected_max_length": result.expected_max_length,
            "attempts": len(result.extra.get("attempts", [])),
            "resampled": [a["reason"] for a in result.extra.get("attempts", [])
                          if a["reason"] != "ok"],
            "certified": bool(cert.get("certified")),
            "answers_checked": cert.get("answers_checked"),
            "prime_bits": cert.get("prime_bits"),
            "same_function": same_function(model, result.model)}


def run_demo(dim: int = 2, heads: int = 2, seed: int = 0, box: int = DEFAULT_BOX,
             progress=None) -> dict:
    """Learn a seeded random exact model with ``heads`` heads in dimension ``dim`` (P2 main
    theorem: 4Hd² − 2H + 1 queries of length ≤ 2H + 1, canonical heads) and replay the steps
    from the transcript.  Returns a JSON-ready dict (see :func:`narrate`); ``progress`` is
    passed to the learner (``progress(stage, done, total)``)."""
    from ..learners.multi_head import learn_multi_head
    from ..learners.p2.schedule import Schedule
    from ..models.attention import random_multi_head
    from ..oracles.oracle import Oracle
    model = random_multi_head(dim, heads, seed=seed).canonical()  # same order as the result
    oracle = Oracle(model, backend="exact", no_peek=True)
    result = learn_multi_head(oracle, dim, heads=heads, seed=seed, box=box, resample=True,
                              progress=progress)
    schedule = Schedule(result.extra["U"], result.extra["X"], result.extra["H0"])
    answers = [a for _, a in result.transcript]
    found = [(W, v) for W, v in result.heads]
    return {"demo": "multi-head (P2)", "seed": seed,
            "model": _model_section(model, result.extra["H0"], box),
            "schedule": _schedule_section(schedule),
            "family": _family_section(schedule, answers, found, model, seed),
            "matching": _matching_section(schedule, answers, found, seed),
            "recovered": {"W": [[[_q(a) for a in r] for r in W] for W, _ in found],
                          "v": [[_q(a) for a in v] for _, v in found]},
            "check": _check_section(model, result)}


# ---------------------------------------------------------------------- narration
def _matrix_lines(rows, indent="      "):
    width = max(len(a) for r in rows for a in r)
    return [indent + "[ " + "  ".join(a.rjust(width) for a in r) + " ]" for r in rows]


def _heads_lines(W, v):
    out = []
    for h, (Wh, vh) in enumerate(zip(W, v), 1):
        out.append(f"  head {h}: v = ({', '.join(vh)})   W =")
        out += _matrix_lines(Wh)
    return out


def _tuple(strings) -> str:
    return "(" + ", ".join(strings) + ")"


def _narrate_model(m):
    return ([f"1. The hidden model: {m['heads']} head(s) in dimension d = {m['dim']}, "
             "F(X) = Σ_h Σ_i softmax(X W_h x_N)_i · v_h·x_i",
             "   (heads in canonical order). The learner sees only a no-peek oracle that "
             "answers value queries."]
            + _heads_lines(m["W"], m["v"]))


def _narrate_schedule(s, m):
    return [f"2. The schedule (told H0 = {m['heads_bound']}): random bases U, X with rows from "
            f"{{-{m['box']}…{m['box']}}}^d:",
            "   " + ", ".join(f"u{i} = {_tuple(r)}" for i, r in enumerate(s["U"], 1)) + ";  "
            + ", ".join(f"x{j} = {_tuple(r)}" for j, r in enumerate(s["X"], 1)),
            f"   {s['families']} copy-count famil{'y' if s['families'] == 1 else 'ies'} "
            f"I(u, x) of 2·H0 queries each, "
            "plus q0 = F([x1]):",
            f"   {s['formula']} = {s['queries']} queries "
            f"(P2: {s['published_count']}), max length {s['max_length']} "
            f"(P2: 2H0+1 = {s['published_max_length']})."]


def _narrate_family(f):
    out = [f"3. One copy-count family {f['name']}, u1 = {_tuple(f['u'])}, "
           f"x1 = {_tuple(f['x'])}:",
           "   query m is [(x1+u1) repeated m times, x1] (length m+1);",
           f"   its answer G(m) is an exact element of Q(t), t = e^(1/{f['L']}):"]
    for s in f["samples"]:
        out.append(f"   G({s['m']}) = {s['value']}   ≈ {s['approx']}")
    out.append(f"4. Interpolation: the reduced rational function through these "
               f"{len(f['samples'])} samples has type ({f['type']}, {f['type']}),")
    out.append(f"   G(m) = K + Σ_h c_h / (1 + m·z_h) with K = v·(x1+u1) = {f['K']}.")
    out.append("   (computed on modular images t ↦ τ mod p, then lifted back exactly: "
               "a pole τ^k gives k by a discrete log)")
    for p in f["poles"]:
        out.append(f"   head {p['head']}: pole m = {p['pole_m']} ≈ {p['pole_m_approx']}, "
                   f"z = {p['pole_z']} = e^({p['score']}) → score u1ᵀW_{p['head']} x1 = {p['score']};  "
                   f"residue c = −v_{p['head']}·u1 = {p['residue']}")
    out.append("   exact re-check in Q(t): the interpolant reproduces every sample: "
               + ("yes" if f["interpolant_reproduces_samples"] else "NO"))
    out.append("   K and the (score, residue) pairs agree with the hidden model: "
               + ("yes" if f["matches_hidden_model"] else "NO"))
    return out


def _narrate_matching(mt):
    if mt is None:
        return ["5. Matching: d = 1 — a single family, nothing to match."]
    out = [f"5. Matching: {mt['families'][2]} has poles z_a(u1)·z_b(u2) (scores add) with "
           "residues c_a + c_b,",
           f"   which pairs each head of {mt['families'][1]} with its head in "
           f"{mt['families'][0]}:"]
    for r in mt["pairs"]:
        out.append(f"   head {r['head']}: (score {r['ref'][0]}, residue {r['ref'][1]}) + "
                   f"(score {r['partner'][0]}, residue {r['partner'][1]}) = "
                   f"(score {r['sum'][0]}, residue {r['sum'][1]}) ✓")
    out.append("   Families I(u_i, x1+x_j) share u_i: scores add, the residue is the same.")
    return out


def _narrate_recovered(r):
    return (["6. Recovered canonical heads: W_h = U⁻¹ S_h X⁻ᵀ with S_h[i][j] = u_iᵀW_h x_j, "
             "v_h = −U⁻¹ c_h:"] + _heads_lines(r["W"], r["v"]))


def _narrate_check(c):
    resampled = (f" after resampling ({', '.join(c['resampled'])})" if c["resampled"] else "")
    return [f"7. Exact check: {c['queries']} queries (P2: {c['expected_queries']}), "
            f"max length {c['max_length']} (P2: {c['expected_max_length']}){resampled}.",
            f"   certified: {'yes' if c['certified'] else 'no'} — the recovered model "
            f"reproduces all {c['answers_checked']} transcript answers exactly in Q(t).",
            f"   same function as the hidden model (canonical forms equal): "
            f"{'yes' if c['same_function'] else 'NO'}"]


def narrate(data: dict) -> str:
    """The plain-text narrative of a :func:`run_demo` result (P2 copy-count recovery)."""
    lines = [f"exactattn demo — learning multi-head attention exactly from value queries "
             f"(P2), seed {data['seed']}", ""]
    for part in (_narrate_model(data["model"]), _narrate_schedule(data["schedule"], data["model"]),
                 _narrate_family(data["family"]), _narrate_matching(data["matching"]),
                 _narrate_recovered(data["recovered"]), _narrate_check(data["check"])):
        lines += part + [""]
    return "\n".join(lines).rstrip() + "\n"
