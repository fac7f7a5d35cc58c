"""Independent certificate checker (DESIGN §5): ``python -m proofs_checks.verify CERT.json ...``.

Standard library only (``json``, ``fractions``, ``itertools``, ``math``, ``random``, ``re``): it shares
no code with exactattn, never evaluates certificate text (no ``eval``, no ``sympify``; numbers
are parsed by a strict ``p/q`` reader) and re-derives what it checks from the definitions:

* ``count`` — recomputes the published query count and maximum length (P1 Thm 4.1: d²+d and 2;
  exact skeleton: d + r(2d−r) and 2; P2: 4H₀d²−2H₀+1 and 2H₀+1) and compares them with what was
  measured.
* ``count-fit`` — redoes the exact polynomial interpolation of the measured counts in (d, H₀)
  by Gaussian elimination over the rationals and compares the coefficients with the published
  polynomial 4H₀d²−2H₀+1.
* ``recovery`` / ``same-function`` — its own canonical form (merge equal W, sum v, drop zero
  sums) and its own softmax attention in Q(t), t = e^{1/L} (Laurent polynomials with
  rational coefficients): the recovered heads must equal the canonical form of the true heads,
  and both must reproduce every recorded oracle answer exactly.
* ``copy-count`` — evaluates attention on [(x+u)×m, x] in Q(t) and compares with
  K + Σ_h c_h/(1 + m z_h) (P2 copy-count family).
* ``rational-form`` — rebuilds N and D of G(m) = N(m)/D(m) as polynomials in (m, z, c, K).
* ``determinant`` — rebuilds the cleared (2H+1)×(2H+1) linearised interpolation matrix at the
  witness and at points of its own choosing, takes determinants by exact elimination, and
  compares with the certificate's polynomial, its factorisation and its closed form.
* ``bad-set`` — recomputes the genericity polynomials of DESIGN §4.3 from the model (det U,
  det X, pole separation, visibility, unique matching), checks the stated factorisations by
  multiplying them out, the witness values, the degree D, the Schwartz–Zippel bound D/|S|,
  the exact bad-set probability (by enumeration when small) and the Monte Carlo tallies.

Beyond the checks, the header must name a known claim with its reference and statement, the
``params`` must be exactly the sizes the checks cover, and every recorded sympy result must be
true.  What a changed digit cannot break is what does not change the truth of the record:
e.g. the W of a head whose v is 0 (P1 Prop 7.1: it is invisible) or a singular basis of a
failed Monte Carlo run replaced by another singular matrix.

Exit status 0 when every certificate is accepted, 1 when one is rejected, 2 on usage errors.
Symbolic proofs done with sympy are recorded under ``symbolic`` for the reader; this checker
does not re-prove them but spot-checks them through the kinds above.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import sys
from fractions import Fraction

FORMAT = "exactattn-certificate"
VERSION = 1

#: claim id -> (reference, statement, kinds that its certificate must contain)
CLAIMS = {
    "P1-T4.1": ("P1 Thm 4.1",
                "a single head (W, v) is learned exactly from d²+d value queries of length ≤ 2",
                {"count", "recovery"}),
    "P1-T5.1": ("P1 Thm 5.1",
                "low rank: exact skeleton with d+r(2d−r) queries (rank revealed with ≤ 2r+1 "
                "more); P1's nuclear-norm baseline from 5rd projections",
                {"count", "recovery"}),
    "P1-P7.1": ("P1 Prop 7.1",
                "multi-head parameters are not identifiable: (W, v1+v2), (W, v1)+(W, v2) and "
                "+(W', 0) are one function; the learner returns one canonical form",
                {"same-function"}),
    "P2-rational": ("P2 copy-count interpolation",
                    "G(m) = K + Σ c_h/(1+m z_h) is type (H,H), poles −1/z_h, residues c_h/z_h; "
                    "2H+1 samples determine it (det ≠ 0)",
                    {"determinant", "copy-count", "rational-form"}),
    "P2-count": ("P2 query count",
                 "multi-head learning uses exactly 4Hd²−2H+1 queries of length ≤ 2H+1 "
                 "(H0 for a bound H0 ≥ H)",
                 {"count", "count-fit", "recovery"}),
    "P2-prob1": ("P2 probability one",
                 "the bad set is a proper algebraic set: Pr[fail] ≤ D/|S| for entries from S, "
                 "and every failure is detected",
                 {"bad-set"}),
    "P2-canonical": ("P2 canonical heads",
                     "heads with equal W merge (v summed), zero-sum groups drop; the learner "
                     "returns exactly this canonical form",
                     {"recovery", "same-function", "count"}),
    # approximate-oracle claims (issue 6): real arithmetic, no certificate is written
    "P1-T6.1": ("P1 Thm 6.1",
                "answers within ±τ: d²+d queries of length ≤ 2 give ‖Ŵ−W‖_F ≤ ε_W, ‖v̂−v‖ ≤ ε_v "
                "with τ = O(min{μ, ε_v/√d, μ ε_W/(B²d)}); error linear in τ", set()),
    "P2-approx": ("P2 approximate-oracle bound",
                  "answers within ±τ: multi-head parameter error ≤ C·τ·(1+o(1)) as τ → 0, with "
                  "the model- and query-dependent C computed (and attained)", set()),
    # one-layer Transformer claims (issue 7): exact checks in the claim, no certificate written
    "P1-transformer": ("P1 one-layer reduction",
                       "a one-head Transformer with a bias-free ReLU FFN is recovered up to "
                       "functional equivalence from antisymmetric and length-1 queries", set()),
    "P2-transformer": ("P2 Transformer extension",
                       "a one-layer Transformer with a bias-free ReLU FFN is recovered up to "
                       "functional equivalence: exact agreement on the transcript and on fresh "
                       "sequences", set()),
}

LEARNING_FAILURES = {"singular-basis", "colliding-poles", "invisible-head", "ambiguous-matching",
                     "not-attention", "certification-failed", "not-identifiable",
                     "learning-failure"}


class Rejected(Exception):
    """The certificate does not verify; the message says which check and why."""


def require(cond, message):
    """Raise Rejected(message) unless cond."""
    if not cond:
        raise Rejected(message)


# ============================================================ strict number parsing
_RAT = re.compile(r"-?[0-9]+(/[0-9]+)?")


def rat(s, where="number") -> Fraction:
    """A rational from its certificate text "p" or "p/q" (no evaluation of any kind)."""
    if not isinstance(s, str):
        raise Rejected(f"{where}: expected a rational written as a string \"p/q\", got {s!r}")
    require(_RAT.fullmatch(s) is not None, f"{where}: {s!r} is not a rational \"p\" or \"p/q\"")
    p, _, q = s.partition("/")
    require(not q or int(q) != 0, f"{where}: zero denominator in {s!r}")
    value = Fraction(int(p), int(q) if q else 1)
    require(fmt(value) == s, f"{where}: {s!r} is not in lowest terms")
    return value


def integer(n, where="integer") -> int:
    require(isinstance(n, int) and not isinstance(n, bool), f"{where}: expected an integer, got {n!r}")
    return n


def fmt(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def vector(v, where):
    require(isinstance(v, list), f"{where}: expected a list")
    return [rat(x, f"{where}[{i}]") for i, x in enumerate(v)]


def matrix(M, where):
    require(isinstance(M, list) and M, f"{where}: expected a non-empty list of rows")
    return [vector(r, f"{where}[{i}]") for i, r in enumerate(M)]


def heads(data, dim, where):
    """[(W, v)] with W a tuple of row tuples and v a tuple, all Fractions, d×d and d."""
    require(isinstance(data, list), f"{where}: expected a list of heads")
    out = []
    for h, hd in enumerate(data):
        require(isinstance(hd, dict) and set(hd) == {"W", "v"}, f"{where}[{h}]: a head is {{W, v}}")
        W = matrix(hd["W"], f"{where}[{h}].W")
        v = vector(hd["v"], f"{where}[{h}].v")
        require(len(W) == dim and all(len(r) == dim for r in W) and len(v) == dim,
                f"{where}[{h}]: not of dimension {dim}")
        out.append((tuple(map(tuple, W)), tuple(v)))
    return out


# ============================================================ small exact linear algebra
def det(M) -> Fraction:
    """Determinant by Gaussian elimination over Q."""
    A = [list(map(Fraction, r)) for r in M]
    n, sign, out = len(A), 1, Fraction(1)
    for c in range(n):
        p = next((r for r in range(c, n) if A[r][c] != 0), None)
        if p is None:
            return Fraction(0)
        if p != c:
            A[c], A[p], sign = A[p], A[c], -sign
        out *= A[c][c]
        for r in range(c + 1, n):
            f = A[r][c] / A[c][c]
            if f:
                A[r] = [a - f * b for a, b in zip(A[r], A[c])]
    return sign * out


def solve_unique(A, b):
    """The unique x with A x = b (A may have more rows than columns); None if not unique or
    inconsistent."""
    rows = [list(map(Fraction, r)) + [Fraction(y)] for r, y in zip(A, b)]
    n = len(A[0])
    piv = 0
    for c in range(n):
        p = next((r for r in range(piv, len(rows)) if rows[r][c] != 0), None)
        if p is None:
            return None
        rows[piv], rows[p] = rows[p], rows[piv]
        rows[piv] = [a / rows[piv][c] for a in rows[piv]]
        for r in range(len(rows)):
            if r != piv and rows[r][c]:
                f = rows[r][c]
                rows[r] = [a - f * q for a, q in zip(rows[r], rows[piv])]
        piv += 1
    if any(r[-1] != 0 for r in rows[n:]):
        return None
    return [rows[i][-1] for i in range(n)]


# ============================================================ sparse polynomials
# A polynomial is a dict {exponent tuple: Fraction} over a fixed list of variables.
def poly_from(data, variables, where):
    require(isinstance(data, dict), f"{where}: expected a polynomial object")
    require(data.get("variables") == variables, f"{where}: variables {data.get('variables')} "
            f"differ from the expected {variables}")
    terms = data.get("terms")
    require(isinstance(terms, list), f"{where}: 'terms' must be a list")
    p = {}
    for k, term in enumerate(terms):
        require(isinstance(term, list) and len(term) == 2, f"{where}.terms[{k}]: [exponents, coeff]")
        e, c = term
        require(isinstance(e, list) and len(e) == len(variables) and
                all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in e),
                f"{where}.terms[{k}]: bad exponent list {e!r}")
        e = tuple(e)
        require(e not in p, f"{where}: repeated monomial {list(e)}")
        c = rat(c, f"{where}.terms[{k}]")
        require(c != 0, f"{where}.terms[{k}]: zero coefficient listed")
        p[e] = c
    if "degree" in data:
        require(data["degree"] == degree(p), f"{where}: stated degree {data['degree']} but the "
                f"terms have total degree {degree(p)}")
    return p


def degree(p) -> int:
    return max((sum(e) for e in p), default=-1)


def padd(p, q):
    """Sum of two sparse polynomials {exponent(s): coefficient} (univariate or not)."""
    out = dict(p)
    for e, c in q.items():
        s = out.get(e, 0) + c
        if s:
            out[e] = s
        else:
            out.pop(e, None)
    return out


def pscale(p, c):
    return {e: a * c for e, a in p.items()} if c else {}


def pmul(p, q):
    out = {}
    for e1, a in p.items():
        for e2, b in q.items():
            e = tuple(x + y for x, y in zip(e1, e2))
            s = out.get(e, 0) + a * b
            if s:
                out[e] = s
            else:
                out.pop(e)
    return out


def ppow(p, n, nvars):
    out = {(0,) * nvars: Fraction(1)}
    for _ in range(n):
        out = pmul(out, p)
    return out


def peval(p, point):
    total = Fraction(0)
    for e, c in p.items():
        term = c
        for x, k in zip(point, e):
            if k:
                term *= x ** k
        total += term
    return total


def pvar(i, n):
    return {tuple(int(j == i) for j in range(n)): Fraction(1)}


def pconst(c, n):
    return {(0,) * n: Fraction(c)} if c else {}


def pdet(M, n):
    """Determinant of a small matrix of polynomials (Laplace expansion)."""
    if len(M) == 1:
        return M[0][0]
    out = {}
    for j in range(len(M)):
        minor = [row[:j] + row[j + 1:] for row in M[1:]]
        term = pmul(M[0][j], pdet(minor, n))
        out = padd(out, term if j % 2 == 0 else pscale(term, -1))
    return out


def normalise(p):
    """p divided by its leading coefficient (lexicographically largest monomial)."""
    if not p:
        return p
    lead = p[max(p)]
    return {e: c / lead for e, c in p.items()}


# ============================================================ attention in Q(t)
# A Laurent polynomial in t is a dict {exponent: Fraction}; a field element is (num, den, L)
# meaning num(t)/den(t) with t = e^{1/L}.
def lmul(p, q):
    out = {}
    for a, x in p.items():
        for b, y in q.items():
            s = out.get(a + b, 0) + x * y
            if s:
                out[a + b] = s
            else:
                out.pop(a + b)
    return out


def lift(p, m):
    """p(t) -> p(t^m): rewrite over t' = e^{1/(mL)}."""
    return {k * m: c for k, c in p.items()}


def dot(a, b):
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def attention(model, tokens):
    """F(X) = Σ_h Σ_i softmax(X W_h x_N)_i v_h·x_i as (num, den, L) in Q(t) (DESIGN §1)."""
    xN = tokens[-1]
    parts = []
    for W, v in model:
        Wx = [dot(row, xN) for row in W]
        scores = [dot(tok, Wx) for tok in tokens]
        values = [dot(tok, v) for tok in tokens]
        parts.append((scores, values))
    L = 1
    for scores, _ in parts:
        for s in scores:
            L = L * s.denominator // math.gcd(L, s.denominator)
    num, den = {}, {0: Fraction(1)}
    for scores, values in parts:
        n_h, d_h = {}, {}
        for s, a in zip(scores, values):
            k = int(s * L)
            d_h = padd(d_h, {k: Fraction(1)})
            if a:
                n_h = padd(n_h, {k: a})
        num = padd(lmul(num, d_h), lmul(n_h, den))
        den = lmul(den, d_h)
    return num, den, L


def element(data, where):
    """A Q(t) element (num, den, L) from its certificate form, written over the smallest L."""
    require(isinstance(data, dict) and set(data) == {"L", "num", "den"},
            f"{where}: an element is {{L, num, den}}")
    L = integer(data["L"], f"{where}.L")
    require(L >= 1, f"{where}: L must be ≥ 1")
    out = []
    for part in ("num", "den"):
        terms = data[part]
        require(isinstance(terms, list), f"{where}.{part}: expected [[exponent, coeff], ...]")
        p = {}
        for k, term in enumerate(terms):
            require(isinstance(term, list) and len(term) == 2, f"{where}.{part}[{k}]: [k, c]")
            e = integer(term[0], f"{where}.{part}[{k}]")
            require(e not in p, f"{where}.{part}: repeated exponent {e}")
            p[e] = rat(term[1], f"{where}.{part}[{k}]")
        out.append({e: c for e, c in p.items() if c})
    require(out[1], f"{where}: zero denominator")
    g = L
    for e in list(out[0]) + list(out[1]):
        g = math.gcd(g, e)
    require(g == 1, f"{where}: not written over the smallest L (gcd of L and the exponents is {g})")
    return out[0], out[1], L


def same_element(a, b) -> bool:
    """Exact equality in Q(t): lift to a common L and cross-multiply."""
    (n1, d1, L1), (n2, d2, L2) = a, b
    L = L1 * L2 // math.gcd(L1, L2)
    n1, d1, n2, d2 = lift(n1, L // L1), lift(d1, L // L1), lift(n2, L // L2), lift(d2, L // L2)
    return lmul(n1, d2) == lmul(n2, d1)


def tokens_of(q, dim, where):
    require(isinstance(q, list) and q, f"{where}: a query is a non-empty list of tokens")
    toks = [vector(t, f"{where}[{n}]") for n, t in enumerate(q)]
    require(all(len(t) == dim for t in toks), f"{where}: tokens must have {dim} entries")
    return toks


# ============================================================ canonical form (P2)
def canonical(model):
    """Group heads with equal W, sum v, drop zero sums: a set of (W, v) pairs (DESIGN §1)."""
    groups = {}
    for W, v in model:
        groups[W] = tuple(a + b for a, b in zip(groups[W], v)) if W in groups else v
    return frozenset((W, v) for W, v in groups.items() if any(groups[W]))


# ============================================================ check kinds
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


def _transcript(c, models, dim, where):
    tr = c.get("transcript", [])
    require(isinstance(tr, list), f"{where}: transcript must be a list")
    if tr:
        require(c.get("queries") == len(tr), f"{where}: queries ≠ transcript length")
        require(c.get("max_length") == max(len(e.get("tokens", ())) for e in tr),
                f"{where}: max_length ≠ longest query of the transcript")
    for k, entry in enumerate(tr):
        require(isinstance(entry, dict) and set(entry) == {"tokens", "answer"},
                f"{where}: transcript[{k}] is {{tokens, answer}}")
        toks = tokens_of(entry["tokens"], dim, f"{where}.transcript[{k}].tokens")
        ans = element(entry["answer"], f"{where}.transcript[{k}].answer")
        for name, model in models:
            require(same_element(attention(model, toks), ans),
                    f"{where}: the {name} does not reproduce oracle answer {k}")
    return len(tr)


def check_recovery(c, checks=()):
    """Recovered heads = the canonical form of the true heads, recomputed here, and both
    models reproduce every transcript answer in Q(t) (P1 Thm 4.1, P1 Thm 5.1, P2 canonical heads)."""
    dim = integer(c.get("dim"), "recovery.dim")
    model = heads(c.get("model"), dim, "recovery.model")
    rec = heads(c.get("recovered"), dim, "recovery.recovered")
    require(len(set(W for W, _ in rec)) == len(rec) and all(any(v) for _, v in rec),
            "recovery: the recovered heads are not canonical (repeated W or zero v)")
    require(canonical(model) == frozenset(rec),
            "recovery: recovered heads ≠ canonical form of the true heads")
    n = _transcript(c, [("true model", model), ("recovered model", rec)], dim, "recovery")
    return f"recovery d={dim}: {len(rec)} canonical heads equal, {n} answers reproduced"


def check_same_function(c, checks=()):
    """Different parameterisations with one canonical form and equal outputs on the
    recorded queries (P1 Prop 7.1, P2 canonical heads)."""
    dim = integer(c.get("dim"), "same-function.dim")
    models = c.get("models")
    require(isinstance(models, dict) and len(models) >= 2, "same-function: need ≥ 2 models")
    parsed = [(name, heads(m, dim, f"same-function.{name}")) for name, m in models.items()]
    forms = {canonical(m) for _, m in parsed}
    require(len(forms) == 1, "same-function: canonical forms differ")
    distinct = {tuple(sorted(m)) for _, m in parsed}
    if c.get("parameterisations_differ"):
        require(len(distinct) >= 2, "same-function: the parameterisations are not different")
    queries = c.get("test_queries", [])
    values = c.get("test_values", [])
    require(isinstance(queries, list) and isinstance(values, list) and len(values) == len(queries),
            "same-function: test_queries and test_values must be lists of equal length")
    for k, (q, y) in enumerate(zip(queries, values)):
        toks = tokens_of(q, dim, f"same-function.test_queries[{k}]")
        want = element(y, f"same-function.test_values[{k}]")
        require(all(same_element(attention(m, toks), want) for _, m in parsed),
                f"same-function: an output differs from the recorded value on query {k}")
    n = _transcript(c, parsed, dim, "same-function")
    return (f"same-function d={dim}: {len(parsed)} parameterisations, one canonical form, "
            f"{len(queries)} queries agree, {n} answers reproduced")


def check_copy_count(c, checks=()):
    """Attention on [(x+u)×m, x] = K + Σ_h c_h/(1 + m z_h) in Q(t) for m = 0…2H, and the
    recorded values are those outputs (P2 copy-count family)."""
    dim = integer(c.get("dim"), "copy-count.dim")
    model = heads(c.get("model"), dim, "copy-count.model")
    u, x = vector(c.get("u"), "copy-count.u"), vector(c.get("x"), "copy-count.x")
    ms = c.get("m_values")
    require(ms == list(range(2 * len(model) + 1)), "copy-count: m_values must be 0 … 2H")
    values = c.get("values")
    require(isinstance(values, list) and len(values) == len(ms), "copy-count: one value per m")
    a = [p + q for p, q in zip(x, u)]
    scores = [dot(u, [dot(row, x) for row in W]) for W, _ in model]
    L = 1
    for s in scores:
        L = L * s.denominator // math.gcd(L, s.denominator)
    K = sum((dot(v, a) for _, v in model), Fraction(0))
    for m, y in zip(ms, values):
        # K + Σ_h c_h / (1 + m t^{k_h}), c_h = −v_h·u
        num, den = {0: K} if K else {}, {0: Fraction(1)}
        for (W, v), s in zip(model, scores):
            dh = padd({0: Fraction(1)}, {int(s * L): Fraction(m)})
            ch = -dot(v, u)
            num = padd(lmul(num, dh), lmul({0: ch} if ch else {}, den))
            den = lmul(den, dh)
        got = attention(model, [a] * m + [x])
        require(same_element(got, (num, den, L)), f"copy-count: identity fails at m={m}")
        require(same_element(got, element(y, f"copy-count.values[{m}]")),
                f"copy-count: recorded value at m={m} is not the attention output")
    return f"copy-count d={dim} H={len(model)}: G(m) = K + Σ c_h/(1+m z_h) at m={ms}"


def _copy_count_matrix(H, z, c, K, sign=1):
    """Row m = 0..2H: [D(m)·m^j]_{j≤H} ++ [−P(m)·m^j]_{1≤j≤H}, D = Π(1+m z_h),
    P = G·D = K·D + Σ_h c_h Π_{g≠h}(1+m z_g)  (the cleared linearised system)."""
    rows = []
    for m in range(2 * H + 1):
        Dm = math.prod((1 + m * zh for zh in z), start=Fraction(1))
        Pm = K * Dm + sum((c[h] * math.prod((1 + m * z[g] for g in range(H) if g != h),
                                            start=Fraction(1)) for h in range(H)), Fraction(0))
        rows.append([Dm * m ** j for j in range(H + 1)] + [-Pm * m ** j for j in range(1, H + 1)])
    return rows


def check_determinant(c, checks=()):
    """The linearised interpolation determinant (P2 copy-count interpolation): factors
    multiply out, closed form, degree, nonzero witness, and equal to the matrix determinant
    at the witness and at points chosen here, for several K."""
    H = integer(c.get("H"), "determinant.H")
    require(1 <= H <= 6, "determinant: H out of range")
    names = [f"z{h}" for h in range(1, H + 1)] + [f"c{h}" for h in range(1, H + 1)]
    n = len(names)
    p = poly_from(c.get("determinant"), names, "determinant.determinant")
    require(p, "determinant: the determinant polynomial is zero")
    # factorisation: constant · Π factor^mult multiplies out to p
    const = rat(c.get("constant"), "determinant.constant")
    prod = pconst(const, n)
    for k, f in enumerate(c.get("factors", [])):
        require(isinstance(f, dict) and set(f) == {"factor", "multiplicity"}, f"factor {k}")
        fp = poly_from(f["factor"], names, f"determinant.factors[{k}]")
        prod = pmul(prod, ppow(fp, integer(f["multiplicity"], "multiplicity"), n))
    require(prod == p, "determinant: the factors do not multiply out to the determinant")
    # closed form (−1)^{H(H−1)/2} Π_{k≤2H} k! · Π c_h z_h · Π_{a<b} (z_a − z_b)^2
    closed = pconst((-1) ** (H * (H - 1) // 2) * math.prod(math.factorial(k) for k in range(1, 2 * H + 1)), n)
    for h in range(H):
        closed = pmul(closed, pmul(pvar(h, n), pvar(H + h, n)))
    for a in range(H):
        for b in range(a + 1, H):
            diff = padd(pvar(a, n), pscale(pvar(b, n), -1))
            closed = pmul(closed, pmul(diff, diff))
    require(closed == p, "determinant: differs from the closed form "
            "(−1)^{H(H−1)/2} Π k! Π c_h z_h Π (z_a − z_b)²")
    require(c.get("degree") == degree(p) == 2 * H + H * (H - 1),
            f"determinant: degree {c.get('degree')} ≠ 2H + H(H−1)")
    # the polynomial is the determinant of the matrix, for any K: witness plus points chosen here
    wit = vector(c.get("witness"), "determinant.witness")
    require(len(wit) == n, "determinant: witness has the wrong length")
    val = rat(c.get("value"), "determinant.value")
    require(val != 0 and peval(p, wit) == val, "determinant: value at the witness is wrong or zero")
    rng = random.Random(20260803 + H)
    points = [wit + [Fraction(0)], wit + [Fraction(7, 3)]] + \
        [[Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(n + 1)] for _ in range(3)]
    for pt in points:
        M = _copy_count_matrix(H, pt[:H], pt[H:2 * H], pt[2 * H])
        require(det(M) == peval(p, pt[:n]), f"determinant: matrix determinant ≠ polynomial at {pt}")
    return (f"determinant H={H}: degree {degree(p)}, nonzero at the witness ({fmt(val)}), equals "
            f"the matrix determinant at {len(points)} points (any K) and the closed form")


def check_rational_form(c, checks=()):
    """G = N/D with D = Π(1 + m z_h), N = K·D + Σ_h c_h Π_{g≠h}(1 + m z_g), in (m, z, c, K)."""
    H = integer(c.get("H"), "rational-form.H")
    require(1 <= H <= 6, "rational-form: H out of range")
    names = ["m"] + [f"z{h}" for h in range(1, H + 1)] + [f"c{h}" for h in range(1, H + 1)] + ["K"]
    n = len(names)
    N = poly_from(c.get("numerator"), names, "rational-form.numerator")
    D = poly_from(c.get("denominator"), names, "rational-form.denominator")
    one = pconst(1, n)

    def lin(h):  # 1 + m z_h
        return padd(one, pmul(pvar(0, n), pvar(1 + h, n)))
    want_D = one
    for h in range(H):
        want_D = pmul(want_D, lin(h))
    want_N = pmul(pvar(n - 1, n), want_D)
    for h in range(H):
        term = pvar(1 + H + h, n)
        for g in range(H):
            if g != h:
                term = pmul(term, lin(g))
        want_N = padd(want_N, term)
    require(D == want_D, "rational-form: denominator ≠ Π(1 + m z_h)")
    require(N == want_N, "rational-form: numerator ≠ K·D + Σ c_h Π_{g≠h}(1 + m z_g)")
    require(max(e[0] for e in N) == H == max(e[0] for e in D), "rational-form: not of type (H, H)")
    return f"rational-form H={H}: G = N/D with D = Π(1 + m z_h), degrees ({H},{H}) in m"


# ------------------------------------------------------------ genericity (DESIGN §4.3)
def families(d):
    """Copy-count families of the schedule as (u index tuple, x index tuple), 0-based; a pair
    (0, i) means u_1 + u_i (resp. x_1 + x_j).  Matching families carry their two bases."""
    out = [((i,), (0,), None) for i in range(d)]
    out += [((0, i), (0,), (((0,), (0,)), ((i,), (0,)))) for i in range(1, d)]
    for j in range(1, d):
        for i in range(d):
            out.append(((i,), (j,), None))
            out.append(((i,), (0, j), (((i,), (0,)), ((i,), (j,)))))
    return out


def _sym_vec(kind, idx, d, n):
    """u_i (kind 0) or x_j (kind 1) as vectors of polynomials; idx is a tuple of indices."""
    off = 0 if kind == 0 else d * d
    vec = []
    for k in range(d):
        p = {}
        for i in idx:
            p = padd(p, pvar(off + i * d + k, n))
        vec.append(p)
    return vec


def _bilinear(u, M, x, n):
    out = {}
    for i in range(len(u)):
        for j in range(len(x)):
            if M[i][j]:
                out = padd(out, pscale(pmul(u[i], x[j]), M[i][j]))
    return out


def _linear(v, u, n):
    out = {}
    for a, p in zip(v, u):
        if a:
            out = padd(out, pscale(p, a))
    return out


def bad_set_polynomials(model, d):
    """The genericity polynomials of DESIGN §4.3, recomputed here: name -> polynomial in the
    2d² entries u_{i,k}, x_{j,k}."""
    n = 2 * d * d
    H = len(model)
    polys = {}
    polys["det U"] = pdet([_sym_vec(0, (i,), d, n) for i in range(d)], n)
    polys["det X"] = pdet([_sym_vec(1, (j,), d, n) for j in range(d)], n)

    def score(h, ui, xj):
        return _bilinear(_sym_vec(0, ui, d, n), model[h][0], _sym_vec(1, xj, d, n), n)

    def name(ui, xj):
        u = "+".join(f"u{i + 1}" for i in ui)
        x = "+".join(f"x{j + 1}" for j in xj)
        return f"I({u},{x})"

    seen_u = []
    for ui, xj, match in families(d):
        for a in range(H):
            for b in range(a + 1, H):
                polys[f"poles {name(ui, xj)} heads {a + 1},{b + 1}"] = padd(
                    score(a, ui, xj), pscale(score(b, ui, xj), -1))
        if ui not in seen_u:
            seen_u.append(ui)
            for a in range(H):
                polys[f"visible head {a + 1} at {'+'.join(f'u{i + 1}' for i in ui)}"] = \
                    _linear(model[a][1], _sym_vec(0, ui, d, n), n)
        if match:
            (u1, x1), (u2, x2) = match
            for a, b, cc in itertools.product(range(H), repeat=3):
                if (a, b) == (cc, cc):
                    continue
                p = padd(padd(score(a, u1, x1), score(b, u2, x2)),
                         pscale(padd(score(cc, u1, x1), score(cc, u2, x2)), -1))
                polys[f"matching {name(ui, xj)} ({a + 1},{b + 1})~{cc + 1}"] = p
    return polys


def check_bad_set(c, checks=()):
    """Genericity certificate (P2 probability one, DESIGN §4.3): polynomials recomputed from
    the model, factorisations, witness values, D, the bound D/|S|, the exact bad-set
    probability (by enumeration) and the Monte Carlo records."""
    d = integer(c.get("dim"), "bad-set.dim")
    require(1 <= d <= 4, "bad-set: dim out of range")
    model = heads(c.get("model"), d, "bad-set.model")
    require(canonical(model) == frozenset(model) and len(model) == len(set(model)),
            "bad-set: the model is not canonical")
    n = 2 * d * d
    names = [f"u{i}_{k}" for i in range(1, d + 1) for k in range(1, d + 1)] + \
            [f"x{j}_{k}" for j in range(1, d + 1) for k in range(1, d + 1)]
    factors = [poly_from(f, names, f"bad-set.factors[{k}]") for k, f in enumerate(c.get("factors", []))]
    require(all(degree(f) >= 1 for f in factors), "bad-set: a factor is constant")
    recomputed = bad_set_polynomials(model, d)
    listed = c.get("polynomials")
    require(isinstance(listed, list), "bad-set: polynomials must be a list")
    listed_names = [e.get("name") for e in listed if isinstance(e, dict)]
    require(sorted(listed_names) == sorted(recomputed), "bad-set: the listed polynomials are not "
            "those of DESIGN §4.3 for this model and dimension")
    wit = vector(c.get("witness"), "bad-set.witness")
    require(len(wit) == n, "bad-set: witness has the wrong length")
    for k, e in enumerate(listed):
        where = f"bad-set.polynomials[{k}] ({e['name']})"
        p = poly_from(e.get("polynomial"), names, where)
        require(p == recomputed[e["name"]], f"{where}: differs from the recomputed polynomial")
        require(p, f"{where}: identically zero")
        prod = pconst(rat(e.get("constant"), where + ".constant"), n)
        for t, (fi, mult) in enumerate(e.get("factorisation", [])):
            require(isinstance(fi, int) and 0 <= fi < len(factors), f"{where}: bad factor index")
            prod = pmul(prod, ppow(factors[fi], integer(mult, "multiplicity"), n))
        require(prod == p, f"{where}: the factorisation does not multiply out")
        require(rat(e.get("value"), where + ".value") == peval(p, wit) != 0,
                f"{where}: witness value wrong or zero")
    D = sum(degree(f) for f in factors)
    require(c.get("D") == D, f"bad-set: D = {c.get('D')} but the distinct factors have total degree {D}")
    require(len({tuple(sorted(normalise(f).items())) for f in factors}) == len(factors),
            "bad-set: repeated factor")
    box = integer(c.get("box"), "bad-set.box")
    S = 2 * box + 1
    require(c.get("S") == S, "bad-set: |S| ≠ 2·box + 1")
    bound = Fraction(D, S)
    require(rat(c.get("bound"), "bad-set.bound") == bound, "bad-set: bound ≠ D/|S|")

    def in_bad_set(point):
        return any(peval(f, point) == 0 for f in factors)

    exact = c.get("exact_probability")
    if exact is not None:
        require(S ** n <= 20000, "bad-set: enumeration too large to re-check")
        bad = sum(in_bad_set(list(map(Fraction, pt)))
                  for pt in itertools.product(range(-box, box + 1), repeat=n))
        require(rat(exact, "exact_probability") == Fraction(bad, S ** n),
                f"bad-set: exact probability is {fmt(Fraction(bad, S ** n))}")
        require(Fraction(bad, S ** n) <= bound, "bad-set: exact probability exceeds the bound")
    mc = c.get("monte_carlo")
    msg = ""
    if mc is not None:
        trials = mc.get("trials")
        require(isinstance(trials, list) and trials, "monte_carlo: no trials")
        canon = canonical(model)
        failures = 0
        for k, t in enumerate(trials):
            where = f"monte_carlo.trials[{k}]"
            require(isinstance(t, dict), where)
            if "rows" in t:  # stopped before any query: the singular basis it reported
                require(t.get("outcome") == "singular-basis" and t.get("basis") in ("U", "X"),
                        f"{where}: only a singular-basis failure reports just one basis")
                rows = matrix(t["rows"], where + ".rows")
                require(len(rows) == d and all(len(r) == d for r in rows) and
                        all(abs(x) <= box and x.denominator == 1 for r in rows for x in r),
                        f"{where}: reported basis is not a d×d matrix from the box")
                require(det(rows) == 0, f"{where}: the reported basis is not singular")
                require(t.get("in_bad_set") is True, f"{where}: a singular basis is in the bad set")
            else:
                U, X = matrix(t.get("U"), where + ".U"), matrix(t.get("X"), where + ".X")
                require(len(U) == len(X) == d and all(len(r) == d for r in U + X) and
                        all(abs(x) <= box and x.denominator == 1 for r in U + X for x in r),
                        f"{where}: bases are not d×d matrices from the box")
                point = [x for r in U for x in r] + [x for r in X for x in r]
                require(t.get("in_bad_set") == in_bad_set(point),
                        f"{where}: bad-set membership misstated")
                # the oracle's answers to [(x1+u_i), x1] and [(x_j+u1), x_j] tie U, X to the run
                asked = [[[a + b for a, b in zip(X[0], u)], X[0]] for u in U] + \
                        [[[a + b for a, b in zip(x, U[0])], x] for x in X[1:]]
                answers = t.get("answers")
                require(isinstance(answers, list) and len(answers) == len(asked),
                        f"{where}: one recorded answer per read-back query")
                for q, y in zip(asked, answers):
                    require(same_element(attention(model, q), element(y, where + ".answers")),
                            f"{where}: a recorded answer is not the model's output on its query")
            outcome = t.get("outcome")
            if outcome == "recovered":
                require(frozenset(heads(t.get("recovered"), d, where)) == canon,
                        f"{where}: a silent wrong answer is recorded as recovered")
            else:
                require(outcome in LEARNING_FAILURES, f"{where}: outcome {outcome!r} is not a "
                        "named learning failure")
                failures += 1
                require(t["in_bad_set"], f"{where}: failure outside the bad set")
        require(mc.get("failures") == failures, "monte_carlo: failure count misstated")
        rate = Fraction(failures, len(trials))
        require(rat(mc.get("rate"), "rate") == rate, f"monte_carlo: rate {fmt(rate)} misstated")
        # Hoeffding allowance 2nε² = 69/10 < ln 1000
        require(rate <= bound or 2 * len(trials) * (rate - bound) ** 2 <= Fraction(69, 10),
                f"monte_carlo: rate {fmt(rate)} above the bound {fmt(bound)} beyond the allowance")
        msg = f", Monte Carlo {failures}/{len(trials)} failures, all detected and in the bad set"
    return (f"bad-set d={d} H={len(model)}: {len(listed)} polynomials nonzero at the witness, "
            f"D={D}, |S|={S}, bound {fmt(bound)}" + msg)


KINDS = {
    "count": check_count,
    "count-fit": check_count_fit,
    "recovery": check_recovery,
    "same-function": check_same_function,
    "copy-count": check_copy_count,
    "determinant": check_determinant,
    "rational-form": check_rational_form,
    "bad-set": check_bad_set,
}


def _of(checks, kind):
    return [c for c in checks if isinstance(c, dict) and c.get("kind") == kind]


def _int_list(x, where):
    require(isinstance(x, list) and all(isinstance(a, int) and not isinstance(a, bool) for a in x),
            f"params: {where} must be a list of integers")
    return x


def params_p1_t41(p, checks):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d"}, "params: expected {d}")
    ds = _int_list(p["d"], "d")
    require([c["params"].get("d") for c in _of(checks, "count")] == ds, "params: d ≠ the counted d")
    require([c.get("dim") for c in _of(checks, "recovery")] == ds, "params: d ≠ the recovered d")


def params_p1_t51(p, checks):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d", "r"}, "params: expected {d, r}")
    grid = [(d, r) for d in _int_list(p["d"], "d") for r in _int_list(p["r"], "r") if r <= d]
    for name in ("low-rank-skeleton", "low-rank-revealing"):
        got = [(c["params"].get("d"), c["params"].get("r")) for c in _of(checks, "count")
               if c.get("formula") == name]
        require(got == grid, f"params: the {name} counts do not cover d × r")


def params_p1_p71(p, checks, symbolic):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d", "N"}, "params: expected {d, N}")
    require(all(c.get("dim") == p["d"] for c in _of(checks, "same-function")), "params: d")
    require(len(symbolic) == 1 and symbolic[0].get("token_lengths") == _int_list(p["N"], "N"),
            "params: N ≠ the token lengths of the symbolic proof")


def params_p2_rational(p, checks, symbolic):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"H", "d"}, "params: expected {H, d}")
    Hs = _int_list(p["H"], "H")
    require([c.get("H") for c in _of(checks, "determinant")] == Hs, "params: H ≠ determinant H")
    require([c.get("H") for c in _of(checks, "rational-form")] == Hs, "params: H ≠ rational-form H")
    require([len(c.get("model", [])) for c in _of(checks, "copy-count")] == Hs, "params: H ≠ copy-count H")
    require([s.get("H") for s in symbolic] == Hs, "params: H ≠ symbolic H")
    require(all(s.get("d") == p["d"] for s in symbolic), "params: d ≠ the symbolic proof's d")


def params_p2_count(p, checks):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d", "H"}, "params: expected {d, H}")
    grid = [{"d": d, "H0": H0} for d in _int_list(p["d"], "d") for H in _int_list(p["H"], "H")
            for H0 in (H, H + 1)]
    require([c.get("params") for c in _of(checks, "count")] == grid,
            "params: the counts do not cover d × H × {H, H+1}")
    require(len(_of(checks, "recovery")) == len(grid), "params: one recovery per count")


def params_p2_prob1(p, checks):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d,H,box,trials"}, "params: expected {d,H,box,trials}")
    want = p["d,H,box,trials"]
    got = [[c.get("dim"), len(c.get("model", [])), c.get("box"),
            len((c.get("monte_carlo") or {}).get("trials", []))] for c in _of(checks, "bad-set")]
    require(got == want, "params: configurations ≠ the bad-set checks")


def params_p2_canonical(p, checks):
    """The certificate's sizes are exactly those its checks cover."""
    require(set(p) == {"d", "H0"}, "params: expected {d, H0}")
    H0s = _int_list(p["H0"], "H0")
    rec = _of(checks, "recovery")
    require(len(rec) == len(H0s) and all(c.get("dim") == p["d"] for c in rec), "params: d, H0")
    require([c["params"] for c in _of(checks, "count")] == [{"d": p["d"], "H0": min(H0s)}],
            "params: the count is not that of the smallest H0")
    sf = _of(checks, "same-function")
    require(len(sf) == 1 and sorted(k for k in sf[0].get("models", {}) if k.startswith("recovered"))
            == sorted(f"recovered H0={h}" for h in H0s), "params: recovered models ≠ H0 list")


PARAMS = {"P1-T4.1": params_p1_t41, "P1-T5.1": params_p1_t51, "P1-P7.1": params_p1_p71,
          "P2-rational": params_p2_rational, "P2-count": params_p2_count,
          "P2-prob1": params_p2_prob1, "P2-canonical": params_p2_canonical}


#: the fields of the sympy records each claim writes
SYMBOLIC_KEYS = {
    "P1-P7.1": {"all_lengths_merge", "all_lengths_zero_head", "token_lengths", "identities"},
    "P2-rational": {"H", "d", "copy_count_identity_symbolic_m", "copy_count_identity_token_lists",
                    "G0_is_v_dot_x", "lowest_terms", "residues_c_over_z", "limit_at_infinity_is_K",
                    "determinant_equals_closed_form"},
    "P2-count": {"count_fit_equals_formula", "schedule_sum_equals_formula"},
}


def check_symbolic(cid, symbolic):
    """The sympy results recorded for the reader: the expected fields, every boolean true (not
    re-proved here; the numeric kinds spot-check them)."""
    require(isinstance(symbolic, list) and all(isinstance(e, dict) for e in symbolic),
            "symbolic: a list of records")
    keys = SYMBOLIC_KEYS.get(cid)
    require(keys is not None or not symbolic, f"symbolic: {cid} records no symbolic results")
    for e in symbolic:
        require(set(e) == keys, f"symbolic: fields {sorted(set(e) ^ keys)} unexpected or missing")
        for k, v in e.items():
            if isinstance(v, bool):
                require(v, f"symbolic: {k} is false")


def verify(cert) -> list:
    """Verify one certificate (a parsed JSON object); return the list of findings or raise
    :class:`Rejected`."""
    require(isinstance(cert, dict), "a certificate is a JSON object")
    require(cert.get("format") == FORMAT and cert.get("version") == VERSION,
            f"not an {FORMAT} version {VERSION} file")
    cid = cert.get("claim")
    require(cid in CLAIMS, f"unknown claim {cid!r}")
    ref, statement, kinds = CLAIMS[cid]
    require(cert.get("reference") == ref, f"{cid}: reference {cert.get('reference')!r} ≠ {ref!r}")
    require(cert.get("statement") == statement, f"{cid}: the statement is not that of {cid}")
    require(cert.get("size") in ("quick", "full"), f"{cid}: size must be quick or full")
    require(cert.get("holds") is True, f"{cid}: the certificate records that the claim did not hold")
    checks = cert.get("checks")
    require(isinstance(checks, list) and checks, f"{cid}: no checks")
    present = {c.get("kind") for c in checks if isinstance(c, dict)}
    require(kinds <= present, f"{cid}: missing checks {sorted(kinds - present)}")
    symbolic = cert.get("symbolic", [])
    check_symbolic(cid, symbolic)
    params = cert.get("params")
    require(isinstance(params, dict), f"{cid}: params must be an object")
    try:
        fn = PARAMS[cid]
        fn(params, checks, symbolic) if cid in ("P1-P7.1", "P2-rational") else fn(params, checks)
    except Rejected as e:
        raise Rejected(f"{cid}: {e}") from None
    except (KeyError, TypeError, AttributeError) as e:
        raise Rejected(f"{cid}: params malformed ({type(e).__name__}: {e})") from None
    findings = []
    for k, c in enumerate(checks):
        require(isinstance(c, dict) and c.get("kind") in KINDS, f"{cid}: check {k} has an unknown kind")
        try:
            findings.append(KINDS[c["kind"]](c, checks))
        except Rejected as e:
            raise Rejected(f"{cid}: check {k} ({c['kind']}): {e}") from None
        except (KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError) as e:
            raise Rejected(f"{cid}: check {k} ({c['kind']}) is malformed: "
                           f"{type(e).__name__}: {e}") from None
    return findings


def verify_file(path) -> list:
    """Verify one certificate file; raises Rejected."""
    try:
        with open(path, encoding="utf-8") as f:
            cert = json.load(f)
    except json.JSONDecodeError as e:
        raise Rejected(f"not valid JSON ({e})") from None
    return verify(cert)


def main(argv=None) -> int:
    """``python -m proofs_checks.verify [-q] CERT.json ...``: exit 0 if all are accepted."""
    args = sys.argv[1:] if argv is None else list(argv)
    quiet = "-q" in args
    paths = [a for a in args if a != "-q"]
    if not paths or any(a.startswith("-") for a in paths):
        sys.stderr.write("usage: python -m proofs_checks.verify [-q] CERT.json [CERT.json ...]\n")
        return 2
    status = 0
    for path in paths:
        try:
            findings = verify_file(path)
        except OSError as e:
            sys.stderr.write(f"{path}: cannot read ({e.strerror})\n")
            status = max(status, 2)
            continue
        except Rejected as e:
            print(f"REJECTED {path}: {e}")
            status = max(status, 1)
            continue
        print(f"accepted {path}: {len(findings)} checks")
        if not quiet:
            for line in findings:
                print(f"  - {line}")
    return status


if __name__ == "__main__":
    sys.exit(main())
