"""Check kinds ``count`` and ``count-fit``: published query counts and maximum lengths
(P1 Thm 4.1, the exact skeleton, P2)."""

from __future__ import annotations

from fractions import Fraction

from .linalg import solve_unique
from .parse import Rejected, integer, rat, require


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


def check_count(c, checks=()):
    """Measured queries / maximum length = the published formula (P1 Thm 4.1: d²+d, 2;
    exact skeleton: d+r(2d−r), 2, at most 2r+1 more when revealing; P2: 4H₀d²−2H₀+1, 2H₀+1)."""
    params = c.get("params")
    require(isinstance(params, dict) and all(isinstance(v, int) and v >= 0 for v in params.values()),
            "count: params must be non-negative integers")
    q, ml = formula(c.get("formula"), params)
    if "run" in c:  # the measured numbers must be those of a recorded transcript
        k = integer(c["run"], "count.run")
        require(0 <= k < len(checks) and isinstance(checks[k], dict) and
                checks[k].get("kind") == "recovery" and "transcript" in checks[k],
                f"count: run {k} is not a recovery check with a transcript")
        tr = checks[k]["transcript"]
        require(params.get("d") == checks[k].get("dim"), f"count: d differs from the dimension "
                f"of check {k}")
        require(c.get("queries") == len(tr), f"count: {c.get('queries')} queries but the "
                f"transcript of check {k} has {len(tr)}")
        require(c.get("max_length") == max(len(e["tokens"]) for e in tr),
                f"count: max length differs from the transcript of check {k}")
    if c.get("formula") == "low-rank-revealing":
        low = q - 2 * params["r"] - 1
        require(isinstance(c.get("queries"), int) and low <= c["queries"] <= q,
                f"count low-rank-revealing {params}: {c.get('queries')} queries not in "
                f"[d + r(2d−r), d + r(2d−r) + 2r + 1] = [{low}, {q}]")
        require(c.get("max_length") == ml, f"count {params}: max length {c.get('max_length')} ≠ {ml}")
        return f"count low-rank-revealing {params}: {c['queries']} ≤ {q} queries"
    require(c.get("queries") == q, f"count {c.get('formula')} {params}: measured queries "
            f"{c.get('queries')} ≠ published {q}")
    require(c.get("max_length") == ml, f"count {c.get('formula')} {params}: measured max length "
            f"{c.get('max_length')} ≠ published {ml}")
    return f"count {c['formula']} {params}: {q} queries, length {ml}"


def check_count_fit(c, checks=()):
    """Exact interpolation of the measured counts (or lengths) in (d, H0) → the published
    polynomial 4·H0·d² − 2·H0 + 1 (resp. 2·H0 + 1)."""
    quantity = c.get("quantity")
    require(c.get("formula") == "multi-head" and c.get("variables") == ["d", "H0"] and
            quantity in ("queries", "max_length"), "count-fit: expected the multi-head count "
            "or length in (d, H0)")
    deg = c.get("degrees")
    require(isinstance(deg, list) and len(deg) == 2 and all(isinstance(x, int) and 0 <= x <= 4 for x in deg),
            "count-fit: degrees must be two small integers")
    monos = [(i, j) for i in range(deg[0] + 1) for j in range(deg[1] + 1)]
    pts = c.get("points")
    require(isinstance(pts, list) and pts, "count-fit: no points")
    require(len({tuple(p) for p in pts if isinstance(p, list)}) == len(pts), "count-fit: repeated point")
    A, b = [], []
    for k, p in enumerate(pts):
        require(isinstance(p, list) and len(p) == 3 and all(isinstance(x, int) for x in p),
                f"count-fit: point {k} must be [d, H0, value]")
        d, H0, q = p
        A.append([Fraction(d) ** i * Fraction(H0) ** j for i, j in monos])
        b.append(q)
        q_pub, l_pub = formula("multi-head", {"d": d, "H0": H0})
        require(q == (q_pub if quantity == "queries" else l_pub),
                f"count-fit: point {p} is off the published {quantity}")
        require(any(x.get("kind") == "count" and x.get("params") == {"d": d, "H0": H0} and
                    x.get(quantity) == q for x in checks if isinstance(x, dict)),
                f"count-fit: point {p} is not a measured count of this certificate")
    sol = solve_unique(A, b)
    require(sol is not None, "count-fit: the points do not determine a unique polynomial")
    fitted = {m: s for m, s in zip(monos, sol) if s}
    stated = {}
    for k, term in enumerate(c.get("coefficients", [])):
        require(isinstance(term, list) and len(term) == 3, f"count-fit: coefficient {k}")
        stated[(integer(term[0], "i"), integer(term[1], "j"))] = rat(term[2], f"coefficient {k}")
    require(fitted == stated, f"count-fit: interpolation gives {fitted}, certificate says {stated}")
    published = {(2, 1): 4, (0, 1): -2, (0, 0): 1} if quantity == "queries" else {(0, 1): 2, (0, 0): 1}
    require(fitted == published, f"count-fit: fitted {fitted} ≠ the published polynomial")
    name = "4·H0·d² − 2·H0 + 1" if quantity == "queries" else "2·H0 + 1"
    return f"count-fit: {len(pts)} measured points interpolate uniquely to {quantity} = {name}"
