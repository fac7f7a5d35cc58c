"""Check kind ``economy-count``: the query count of an economy / adaptive run derived from the
schedule's block structure (beyond the papers; docs/design.md §10).

The checker holds its own copy of the block structure (:data:`BLOCKS`: multiplicity ×
samples per block as polynomials in d, H, H0), requires the certificate to record the same
structure, evaluates every block at the run's (d, H, H0), compares with the measured per-block
counts and the total, and expands Σ multiplicity × samples with its own polynomial arithmetic
to the closed form

    dual path:    1 + 2H0 + (d−1)·S + (d−1)·(1 + Hd + H(H−1)/2),
    residue path: 1 + 2H0 + (d−1)·S + (d−1)·(1 + d(2H − 1)),

with S = 2H0 (economy: H known, H0 = H) or S = 2H (adaptive), for H ≥ 2.

The record names its run (``"run": k``, the index of a ``run`` record of the same variant,
size and H0, checked as a consistency-and-genericity certificate by its own check): the measured
per-block counts must be those of the schedule the run checker rebuilds
(:mod:`.run_economy`), and the queries and the maximum length those of its transcript.
"""

from __future__ import annotations

from fractions import Fraction

from .parse import integer, only, rat, require
from .run import rebuild, run_of, transcript_lengths


def _p(*terms):
    out = {}
    for c, i, j, k in terms:
        out[(i, j, k)] = out.get((i, j, k), Fraction(0)) + Fraction(c)
    return {m: c for m, c in out.items() if c}


def _add(a, b):
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, Fraction(0)) + c
    return {m: c for m, c in out.items() if c}


def _mul(a, b):
    out = {}
    for (i, j, k), c in a.items():
        for (p, q, r), e in b.items():
            m = (i + p, j + q, k + r)
            out[m] = out.get(m, Fraction(0)) + c * e
    return {m: c for m, c in out.items() if c}


def _eval(a, d, H, H0):
    return sum((c * d ** i * H ** j * H0 ** k for (i, j, k), c in a.items()), Fraction(0))


ONE, DM1, HALF = _p((1, 0, 0, 0)), _p((1, 1, 0, 0), (-1, 0, 0, 0)), Fraction(1, 2)


def blocks(variant, path, matching=True):
    """The checker's copy of the structure: name → (multiplicity, samples, length)."""
    col1 = _p((2, 0, 0, 1)) if variant == "economy" else _p((2, 0, 1, 0))
    fam_len = _p((2, 0, 0, 1), (1, 0, 0, 0))
    out = {"q0": (ONE, ONE, ONE), "first-family": (ONE, _p((2, 0, 0, 1)), fam_len),
           "column-1": (DM1, col1, fam_len)}
    if matching:
        out["matching"] = (DM1, ONE, _p((2, 0, 0, 0)))
    if path == "dual":
        out["single-visible"] = (_mul(DM1, _p((1, 1, 1, 0), (-1, 0, 2, 0), (1, 0, 1, 0))), ONE,
                                 _p((2, 0, 0, 0)))
        out["pair"] = (_mul(DM1, _p((HALF, 0, 2, 0), (-HALF, 0, 1, 0))), _p((3, 0, 0, 0)),
                       _p((4, 0, 0, 0)))
    else:
        out["residue-family"] = (_mul(DM1, _p((1, 1, 0, 0))), _p((2, 0, 1, 0), (-1, 0, 0, 0)),
                                 _p((2, 0, 1, 0)))
    return out


def closed_form(variant, path):
    S = _p((2, 0, 0, 1)) if variant == "economy" else _p((2, 0, 1, 0))
    if path == "dual":
        tail = _p((1, 0, 0, 0), (1, 1, 1, 0), (HALF, 0, 2, 0), (-HALF, 0, 1, 0))
    else:
        tail = _p((1, 0, 0, 0), (2, 1, 1, 0), (-1, 1, 0, 0))
    return _add(_add(_p((1, 0, 0, 0), (2, 0, 0, 1)), _mul(DM1, S)), _mul(DM1, tail))


#: the fields of an economy-count record
FIELDS = ("kind", "variant", "path", "params", "blocks", "measured", "queries", "max_length",
          "run")


def _read_poly(data, where):
    require(isinstance(data, list) and len(data) <= 16, f"{where}: a list of terms")
    out = {}
    for t in data:
        require(isinstance(t, list) and len(t) == 4, f"{where}: a term is [i, j, k, c]")
        i, j, k = (integer(x, where) for x in t[:3])
        require(0 <= i <= 3 and 0 <= j <= 3 and 0 <= k <= 3, f"{where}: exponent out of range")
        require((i, j, k) not in out, f"{where}: repeated monomial {[i, j, k]}")
        out[(i, j, k)] = rat(t[3], where)
    return {m: c for m, c in out.items() if c}


def check_economy_count(c, checks=()):
    """Measured per-block counts = the structure at (d, H, H0); the structure's sum = the
    closed form (docs/design.md §10)."""
    only(c, FIELDS, "economy-count")
    variant, path = c.get("variant"), c.get("path")
    require(variant in ("economy", "adaptive") and path in ("dual", "residue"),
            "economy-count: variant economy|adaptive, path dual|residue")
    params = c.get("params")
    require(isinstance(params, dict) and set(params) == {"d", "H", "H0"}, "economy-count: params")
    d, H, H0 = (integer(params[k], f"economy-count.{k}") for k in ("d", "H", "H0"))
    require(1 <= d <= 32 and 2 <= H <= H0 <= 32, "economy-count: need 1 ≤ d, 2 ≤ H ≤ H0 ≤ 32")
    require(variant == "adaptive" or H == H0, "economy-count: H known means H0 = H")
    require(path == "residue" or H <= d, "economy-count: the dual path needs H ≤ d")
    want = blocks(variant, path)
    got = c.get("blocks")
    require(isinstance(got, list) and [b.get("name") for b in got] == list(want),
            f"economy-count: the blocks must be {list(want)}")
    for b in got:
        only(b, ("name", "multiplicity", "samples", "length"), f"economy-count.blocks[{b['name']}]")
        m, s, length = want[b["name"]]
        for key, ref in (("multiplicity", m), ("samples", s), ("length", length)):
            require(_read_poly(b.get(key), f"block {b['name']}.{key}") == ref,
                    f"economy-count: block {b['name']} {key} differs from the structure")
    total = {}
    for m, s, _ in want.values():
        total = _add(total, _mul(m, s))
    require(total == closed_form(variant, path),
            "economy-count: the structure's sum is not the closed form")
    measured = c.get("measured")
    require(isinstance(measured, dict) and set(measured) <= set(want),
            "economy-count: measured counts must be keyed by block")
    for name, (m, s, _) in want.items():
        n = _eval(_mul(m, s), d, H, H0)
        require(measured.get(name, 0) == n, f"economy-count: block {name} measured "
                f"{measured.get(name, 0)} ≠ structure {n}")
    q = _eval(total, d, H, H0)
    require(c.get("queries") == q == sum(measured.values()),
            f"economy-count: {c.get('queries')} queries ≠ structure {q}")
    ml = max(_eval(ln, d, H, H0) for _, _, ln in want.values())
    require(c.get("max_length") == ml, f"economy-count: max length {c.get('max_length')} ≠ {ml}")
    _same_run(c, checks, variant, d, H, H0, measured)
    floor = H * (d * d + d)
    return (f"economy-count {variant}/{path} d={d} H={H} H0={H0}: {q} queries "
            f"({len(want)} blocks = structure = closed form = the blocks of the schedule "
            f"rebuilt from run {c['run']}), length {ml}; floor {floor}, "
            f"ratio {Fraction(int(q), floor)}")


def _same_run(c, checks, variant, d, H, H0, measured):
    """The count is that of its run: same learner, d, H (recovered heads) and H0; per-block
    counts of the schedule rebuilt from the run record; its transcript's count and length."""
    r = run_of(checks, c.get("run"), "economy-count")
    require(r.get("learner") == f"multi-head-{variant}" and r.get("dim") == d and
            isinstance(r.get("params"), dict) and r["params"].get("H0") == H0 and
            isinstance(r.get("recovered"), list) and len(r["recovered"]) == H,
            f"economy-count: check {c['run']} is not a {variant} run with d={d}, H={H}, H0={H0}")
    _, run, _, _ = rebuild(r)
    rebuilt = run["q"].per_block()
    require(rebuilt == {k: v for k, v in measured.items() if v},
            f"economy-count: the measured blocks {measured} are not those of the schedule "
            f"rebuilt from run {c['run']} ({rebuilt})")
    n, longest = transcript_lengths(r)
    require((n, longest) == (c["queries"], c["max_length"]),
            f"economy-count: {c['queries']} queries, length {c['max_length']} but the transcript "
            f"of check {c['run']} has {n}, {longest}")
