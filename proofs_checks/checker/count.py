"""Check kinds ``count``, ``count-derivation`` and ``count-fit``: published query counts and
maximum lengths (P1 Thm 4.1, the exact skeleton, P2).

* ``count`` — the published formula at the record's sizes, against the transcript of the
  ``run`` record it names (whose transcript the run check confirms is the learner's schedule).
* ``count-derivation`` — the P2 count as a polynomial identity: the recorded schedule
  structure must be this checker's own (the one every multi-head transcript is rebuilt
  from), and the count and maximum length read off it, as polynomials in d and H₀ (valid for
  d ≥ 1, H₀ ≥ 1), must equal 4H₀d² − 2H₀ + 1 and 2H₀ + 1 identically.
* ``count-fit`` — a second, independent check on sampled points: exact interpolation of the
  measured counts over the grid.
"""

from __future__ import annotations

from fractions import Fraction

from .linalg import solve_unique
from .parse import Rejected, field, integer, listed, only, rat, require, same_json, string
from .run import run_of, transcript_lengths
from .run_multi_head import STRUCTURE, families

#: formula → (learner, run parameter that must match, bounds on the sizes)
FORMULAS = {"single-head": "single-head", "low-rank-skeleton": "low-rank",
            "low-rank-revealing": "low-rank", "multi-head": "multi-head"}


def formula(name, params):
    """(queries, max_length) published for a learner (P1 Thm 4.1, exact skeleton, P2)."""
    if name == "single-head":
        d = params["d"]
        return d * d + d, 2
    if name == "low-rank-skeleton":
        d, r = params["d"], params["r"]
        return d + r * (2 * d - r), 2
    if name == "low-rank-revealing":  # an upper bound: skeleton + at most 2r + 1
        d, r = params["d"], params["r"]
        return d + r * (2 * d - r) + 2 * r + 1, 2
    if name == "multi-head":
        d, H0 = params["d"], params["H0"]
        return 4 * H0 * d * d - 2 * H0 + 1, 2 * H0 + 1
    raise Rejected(f"unknown count formula {name!r}")


_PARAMS = {"single-head": ("d",), "low-rank-skeleton": ("d", "r"),
           "low-rank-revealing": ("d", "r"), "multi-head": ("d", "H0")}


def check_count(c, checks=()):
    """Measured queries / maximum length = the published formula (P1 Thm 4.1: d²+d, 2;
    exact skeleton: d+r(2d−r), 2, at most 2r+1 more when revealing; P2: 4H₀d²−2H₀+1, 2H₀+1),
    measured on the transcript of a run record."""
    only(c, ("kind", "formula", "params", "queries", "max_length", "run"), "count")
    name = string(c["formula"], "count.formula")
    require(name in FORMULAS, f"count: unknown formula {name!r}")
    params = only(c["params"], _PARAMS[name], "count.params")
    for k, v in params.items():
        integer(v, f"count.params.{k}", 1 if k != "r" else 0, 64)
    r = run_of(checks, c["run"], "count")
    require(r.get("learner") == FORMULAS[name], f"count: the run is not a {FORMULAS[name]} run")
    require(r.get("dim") == params["d"], "count: d differs from the dimension of its run")
    rp = field(r, "params", "run")
    if name == "multi-head":
        require(rp.get("H0") == params["H0"], "count: H0 differs from its run's H0")
    if name.startswith("low-rank"):
        require(rp.get("rank") == params["r"], "count: r differs from its run's rank")
        require(rp.get("rank_given") is (name == "low-rank-skeleton"),
                "count: the formula does not match whether the run was told the rank")
    q, ml = formula(name, params)
    n, longest = transcript_lengths(r)
    require(c["queries"] == n and c["max_length"] == longest,
            f"count: {c['queries']} queries, length {c['max_length']} but the transcript of "
            f"check {c['run']} has {n}, {longest}")
    if name == "low-rank-revealing":
        low = q - 2 * params["r"] - 1
        require(low <= n <= q, f"count low-rank-revealing {params}: {n} queries not in "
                f"[d + r(2d−r), d + r(2d−r) + 2r + 1] = [{low}, {q}]")
        require(longest == ml, f"count {params}: max length {longest} ≠ {ml}")
        return f"count low-rank-revealing {params}: {n} ≤ {q} queries (transcript recounted)"
    require(n == q, f"count {name} {params}: measured queries {n} ≠ published {q}")
    require(longest == ml or (name.startswith("low-rank") and params["r"] == 0 and longest == 1),
            f"count {name} {params}: measured max length {longest} ≠ published {ml}")
    return f"count {name} {params}: {q} queries, length {longest} (transcript recounted)"


# ------------------------------------------------------------------ derivation
# polynomials in (d, H0): {(i, j): Fraction} meaning Σ c d^i H0^j
def _padd(p, q):
    out = dict(p)
    for e, c in q.items():
        out[e] = out.get(e, 0) + c
        if not out[e]:
            del out[e]
    return out


def _pmul(p, q):
    out = {}
    for (a, b), c in p.items():
        for (e, f), g in q.items():
            out = _padd(out, {(a + e, b + f): c * g})
    return out


def _bound_poly(b):
    require(b == "d" or type(b) is int, "count-derivation: a loop bound is an integer or \"d\"")
    return {(1, 0): Fraction(1)} if b == "d" else ({(0, 0): Fraction(b)} if b else {})


def derive(structure):
    """(count polynomial, maximum-length polynomial) of a schedule structure: the initial
    queries plus, per block, (number of families) × Π (hi − lo + 1) × 2H₀ samples; every
    sample m = 1 … 2H₀ has length m + 1, so the longest is 2H₀ + 1."""
    count = {(0, 0): Fraction(len(structure["initial"]))}
    fams = {}
    for block in structure["blocks"]:
        n = {(0, 0): Fraction(len(block["families"]))}
        for lp in block["loops"]:
            n = _pmul(n, _padd(_padd(_bound_poly(lp[2]), {(0, 0): Fraction(1)}),
                               {e: -c for e, c in _bound_poly(lp[1]).items()}))
        fams = _padd(fams, n)
    samples = structure["samples"]["m"]
    require(samples == [1, "2*H0"], "count-derivation: samples must be m = 1 … 2·H0")
    count = _padd(count, _pmul(fams, {(0, 1): Fraction(2)}))
    return count, {(0, 1): Fraction(2), (0, 0): Fraction(1)}


PUBLISHED = ({(2, 1): Fraction(4), (0, 1): Fraction(-2), (0, 0): Fraction(1)},
             {(0, 1): Fraction(2), (0, 0): Fraction(1)})


def _show(p):
    return " + ".join(f"{c}·d^{i}·H0^{j}" for (i, j), c in sorted(p.items(), reverse=True))


def check_count_derivation(c, checks=()):
    """P2 count as a polynomial identity, derived from the schedule's own structure."""
    only(c, ("kind", "formula", "structure", "count", "max_length", "enumerated"),
         "count-derivation")
    require(c["formula"] == "multi-head", "count-derivation: only the multi-head schedule")
    require(same_json(c["structure"], STRUCTURE), "count-derivation: the recorded structure is not the "
            "schedule every multi-head transcript is rebuilt from")
    count, length = derive(c["structure"])
    for key, got in (("count", count), ("max_length", length)):
        stated = {}
        for k, t in enumerate(listed(c[key], f"count-derivation.{key}", 16)):
            require(isinstance(t, list) and len(t) == 3, f"count-derivation.{key}[{k}]: [i, j, c]")
            stated[(integer(t[0], "i", 0, 8), integer(t[1], "j", 0, 8))] = rat(t[2], "coefficient")
        require(stated == got, f"count-derivation: stated {key} {stated} ≠ derived {_show(got)}")
    require(count == PUBLISHED[0], f"count-derivation: the schedule's count {_show(count)} ≠ "
            "4·H0·d² − 2·H0 + 1")
    require(length == PUBLISHED[1], f"count-derivation: the schedule's length {_show(length)} ≠ "
            "2·H0 + 1")
    n = check_enumerated(c["enumerated"], c["structure"])
    return ("count-derivation: the schedule structure (the checker's own, from which every "
            "multi-head transcript is rebuilt) has exactly 4·H0·d² − 2·H0 + 1 queries of "
            "length ≤ 2·H0 + 1, as a polynomial identity for all d ≥ 1, H0 ≥ 1 (a statement "
            f"about the schedule; the learner's transcripts are the run checks); {n}")


MAX_ENUMERATED = (64, 16)


def check_enumerated(e, structure):
    """The library's enumeration of its Schedule object, [[d, H0, count, max_length]] for every
    d ≤ D, H0 ≤ K in order, re-derived entry by entry from this checker's structure: count =
    1 + 2·H0·(number of families at d), longest = 2·H0 + 1, both the published values."""
    only(e, ("d", "H0", "counts"), "count-derivation.enumerated")
    D = integer(e["d"], "count-derivation.enumerated.d", 1, MAX_ENUMERATED[0])
    K = integer(e["H0"], "count-derivation.enumerated.H0", 1, MAX_ENUMERATED[1])
    rows = listed(e["counts"], "count-derivation.enumerated.counts", D * K)
    require(len(rows) == D * K, f"count-derivation: the enumeration must list every d ≤ {D}, "
            f"H0 ≤ {K} ({D * K} schedules), not {len(rows)}")
    total = 0
    for k, row in enumerate(rows):
        d, H0 = k // K + 1, k % K + 1
        n = len(families(d, structure))
        want = [d, H0, 1 + 2 * H0 * n, 2 * H0 + 1]
        require(isinstance(row, list) and same_json(row, want),
                f"count-derivation: enumerated schedule {k} is {str(row)[:60]}, but the "
                f"structure gives [d, H0, count, max_length] = {want}")
        require(want[2] == 4 * H0 * d * d - 2 * H0 + 1, f"count-derivation: the structure's "
                f"count at d={d}, H0={H0} is not 4·H0·d² − 2·H0 + 1")
        total += want[2]
    return (f"the Schedule object's enumeration for every d ≤ {D}, H0 ≤ {K} ({D * K} schedules, "
            f"{total} queries) re-derived entry by entry from the structure")


def check_count_fit(c, checks=()):
    """Exact interpolation of the measured counts (or lengths) in (d, H0) → the published
    polynomial 4·H0·d² − 2·H0 + 1 (resp. 2·H0 + 1): a check on sampled points."""
    only(c, ("kind", "formula", "quantity", "variables", "degrees", "points", "coefficients"),
         "count-fit")
    quantity = c["quantity"]
    require(c["formula"] == "multi-head" and c["variables"] == ["d", "H0"] and
            quantity in ("queries", "max_length"), "count-fit: expected the multi-head count "
            "or length in (d, H0)")
    deg = c["degrees"]
    require(isinstance(deg, list) and len(deg) == 2 and all(type(x) is int and 0 <= x <= 4 for x in deg),
            "count-fit: degrees must be two small integers")
    monos = [(i, j) for i in range(deg[0] + 1) for j in range(deg[1] + 1)]
    pts = listed(c["points"], "count-fit.points", 400)
    require(pts, "count-fit: no points")
    require(len({tuple(p) for p in pts if isinstance(p, list)}) == len(pts), "count-fit: repeated point")
    A, b = [], []
    for k, p in enumerate(pts):
        require(isinstance(p, list) and len(p) == 3 and all(type(x) is int for x in p),
                f"count-fit: point {k} must be [d, H0, value]")
        d, H0, q = p
        require(1 <= d <= 64 and 1 <= H0 <= 64, f"count-fit: point {k} out of range")
        A.append([Fraction(d) ** i * Fraction(H0) ** j for i, j in monos])
        b.append(q)
        require(any(isinstance(x, dict) and x.get("kind") == "count" and
                    x.get("params") == {"d": d, "H0": H0} and x.get(quantity) == q
                    for x in checks), f"count-fit: point {p} is not a measured count of this "
                "certificate")
    require(len(pts) > len(monos), f"count-fit: {len(pts)} points for {len(monos)} monomials — "
            "an interpolation that cannot fail is no evidence (more points than monomials needed)")
    sol = solve_unique(A, b)
    require(sol is not None, "count-fit: the points do not determine a unique polynomial")
    fitted = {m: s for m, s in zip(monos, sol) if s}
    stated = {}
    for k, term in enumerate(listed(c["coefficients"], "count-fit.coefficients", 32)):
        require(isinstance(term, list) and len(term) == 3, f"count-fit: coefficient {k}")
        stated[(integer(term[0], "i"), integer(term[1], "j"))] = rat(term[2], f"coefficient {k}")
    require(fitted == stated, f"count-fit: interpolation gives {fitted}, certificate says {stated}")
    published = PUBLISHED[0] if quantity == "queries" else PUBLISHED[1]
    require(fitted == published, f"count-fit: fitted {fitted} ≠ the published polynomial")
    name = "4·H0·d² − 2·H0 + 1" if quantity == "queries" else "2·H0 + 1"
    return (f"count-fit: {len(pts)} measured points (a sample) interpolate uniquely to "
            f"{quantity} = {name}")
