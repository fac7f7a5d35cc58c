"""Check kind ``floor``: the answers of a run have a full-rank Jacobian with respect to the
H(d² + d) canonical parameters (beyond the papers; docs/design.md §10, "The floor").

The schedule first: the record names it (P1, P2, economy, adaptive, low-rank) and carries the
draw of its run (``draw``: learner, parameters, random vectors and recovered heads, as a
``run`` record writes them).  The checker rebuilds the named schedule from that draw with its
own copies of the schedules (:func:`.run.rebuild`: :mod:`.run_single_head`,
:mod:`.run_multi_head`, :mod:`.run_economy`, :mod:`.run_multi_low_rank`), requires the learner
and its H₀ (and rank) to be those of the named schedule at this model, the recovered heads to
be the canonical form of the recorded model, the draw to be generic for it (so that the
learner's adaptive choices, re-taken from the model, are the ones it made), and the recorded
queries to be exactly the rebuilt schedule — same queries, same order, same count.

Then the checker recomputes, from the recorded model and queries, the Jacobian rows named by
the certificate modulo the recorded prime p at t = e^{1/L} ↦ τ:

    ∂F/∂v_h[k] = x̄[k],  ∂F/∂W_h[p][q] = x_N[q]·(Σ_i α_i f_i x_i[p] − f̄·x̄[p]),

α = softmax of the scores x_iᵀW_h x_N (each score times L must be an integer), f_i = v_h·x_i,
x̄ = Σ α_i x_i, f̄ = Σ α_i f_i; it checks that p is prime, that every rational denominator is
prime to p and every softmax denominator Σ_j τ^{k_j − min k} is non-zero modulo p, and takes
the determinant of the P × P minor (P = H(d²+d), all columns) by elimination modulo p.

Why a non-zero value proves full rank: the entries lie in R = Z_(p)[t][1/Π D]; t ↦ τ is a ring
homomorphism R → F_p under the checked conditions; ring maps commute with determinants; so the
minor is non-zero in R ⊂ Q(t) and, e^{1/L} being transcendental, non-zero at t = e^{1/L}.
Certified curve: the minor's rows are independent, so rank(first k answers) ≥ #{rows < k};
in particular the first ``first_full`` answers have rank P exactly ("by answer k").  That
fewer answers fall short is certified only when k − 1 < P (no P × P minor exists): only then
does the finding say "at answer k".  A vanishing minor modulo p proves nothing over Q(t).

Schedule ``low-rank`` (heads of rank r, W_h = Q_h K_hᵀ): the checker requires the recorded
factors to multiply to the recorded W_h exactly, turns each row into derivatives with respect
to (Q_h, K_h, v_h) by the chain rule (∂F/∂Q[a][c] = Σ_b ∂F/∂W[a][b]·K[b][c], ∂F/∂K[b][c] =
Σ_a ∂F/∂W[a][b]·Q[a][c]) and takes the determinant of the minor on the recorded rows and
columns, P = H(r(2d − r) + d) of each (the dimension of such heads: the rank cannot exceed it,
so a non-zero minor certifies equality).
"""

from __future__ import annotations

from fractions import Fraction

from .parse import heads, integer, matrix, multiset, only, require, string, vector
from .qt import canonical_form
from .run import rebuild

#: schedule name → (learner of its run, H0 as a function of H)
SCHEDULES = {"P1": ("single-head", lambda H: None), "P2": ("multi-head", lambda H: H),
             "economy": ("multi-head-economy", lambda H: H),
             "adaptive": ("multi-head-adaptive", lambda H: H + 1),
             "low-rank": ("multi-head-low-rank", lambda H: H)}

_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def is_prime(n: int) -> bool:
    """Deterministic Miller–Rabin for n < 3.3·10²⁴ (the first 13 prime bases)."""
    if n < 2:
        return False
    for q in _MR_BASES:
        if n % q == 0:
            return n == q
    require(n < 3317044064679887385961981, "floor: p too large for the deterministic test")
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _mod(q: Fraction, p: int) -> int:
    require(q.denominator % p != 0, "floor: a rational denominator is divisible by p")
    return q.numerator * pow(q.denominator, -1, p) % p


def jacobian_row(model, tokens, p, tau, L):
    """The derivatives of F(tokens) modulo p, columns head by head: W_h row-major, then v_h."""
    d = len(tokens[-1])
    xn = tokens[-1]
    xm = [[_mod(x, p) for x in t] for t in tokens]
    row = []
    for W, v in model:
        Wx = [sum((W[a][b] * xn[b] for b in range(d)), Fraction(0)) for a in range(d)]
        ks = []
        for t in tokens:
            s = sum((t[a] * Wx[a] for a in range(d)), Fraction(0)) * L
            require(s.denominator == 1, f"floor: L = {L} does not clear a score")
            ks.append(s.numerator)
        low = min(ks)
        e = [pow(tau, k - low, p) for k in ks]
        D = sum(e) % p
        require(D != 0, "floor: a softmax denominator vanishes modulo p")
        inv = pow(D, -1, p)
        alpha = [x * inv % p for x in e]
        vm = [_mod(x, p) for x in v]
        f = [sum(a * b for a, b in zip(vm, t)) % p for t in xm]
        fbar = sum(a * b for a, b in zip(alpha, f)) % p
        n = len(tokens)
        xbar = [sum(alpha[i] * xm[i][k] for i in range(n)) % p for k in range(d)]
        cov = [(sum(alpha[i] * f[i] * xm[i][k] for i in range(n)) - fbar * xbar[k]) % p
               for k in range(d)]
        row += [cov[a] * xm[-1][b] % p for a in range(d) for b in range(d)] + xbar
    return row


def det_mod(M, p) -> int:
    """Determinant modulo a prime by Gaussian elimination."""
    A = [list(r) for r in M]
    n, out = len(A), 1
    for c in range(n):
        piv = next((r for r in range(c, n) if A[r][c] % p), None)
        if piv is None:
            return 0
        if piv != c:
            A[c], A[piv] = A[piv], A[c]
            out = -out
        out = out * A[c][c] % p
        inv = pow(A[c][c], -1, p)
        for r in range(c + 1, n):
            f = A[r][c] * inv % p
            if f:
                A[r] = [(a - f * b) % p for a, b in zip(A[r], A[c])]
    return out % p


def factored(row, factors, d, p):
    """A row over (W_h, v_h) as one over (Q_h, K_h, v_h): the chain rule (see above)."""
    out, width = [], d * d + d
    for h, (Q, K) in enumerate(factors):
        G, v = row[h * width: h * width + d * d], row[h * width + d * d: (h + 1) * width]
        r = len(Q[0])
        Qm = [[_mod(x, p) for x in q] for q in Q]
        Km = [[_mod(x, p) for x in k] for k in K]
        out += [sum(G[a * d + b] * Km[b][c] for b in range(d)) % p
                for a in range(d) for c in range(r)]
        out += [sum(G[a * d + b] * Qm[a][c] for a in range(d)) % p
                for b in range(d) for c in range(r)]
        out += v
    return out


def _factors(c, model, d):
    """The recorded (Q_h, K_h), d × r each, with Q_h K_hᵀ = W_h exactly: (r, factors)."""
    r = integer(c.get("rank"), "floor.rank")
    require(1 <= r <= d, "floor: rank out of range")
    fs = c.get("factors")
    require(isinstance(fs, list) and len(fs) == len(model), "floor: one factor pair per head")
    out = []
    for h, (f, (W, _)) in enumerate(zip(fs, model)):
        only(f, ("Q", "K"), f"floor.factors[{h}]")
        Q = matrix(f["Q"], f"floor.factors[{h}].Q", d, r)
        K = matrix(f["K"], f"floor.factors[{h}].K", d, r)
        require(all(sum((Q[a][k] * K[b][k] for k in range(r)), Fraction(0)) == W[a][b]
                    for a in range(d) for b in range(d)),
                f"floor: Q Kᵀ ≠ W for head {h + 1}")
        out.append((Q, K))
    return r, out


def rebuilt_schedule(c, name, model, d, rank=None):
    """The named schedule rebuilt from the record's draw (module docstring): its queries."""
    require(name in SCHEDULES, f"floor: unknown schedule {str(name)[:40]!r}")
    learner, H0 = SCHEDULES[name]
    H = len(model)
    draw = only(c.get("draw"), ("learner", "params", "vectors", "recovered"), "floor.draw")
    want = H0(H)
    params = draw["params"]
    require(string(draw["learner"], "floor.draw.learner") == learner,
            f"floor: the {name} schedule is the {learner} learner's, not {draw['learner']!r:.40}")
    if name == "P1":
        require(H == 1, "floor: the P1 schedule learns one head")
    else:
        require(isinstance(params, dict) and params.get("H0") == want,
                f"floor: the {name} schedule at H = {H} runs with H0 = {want}")
    if name == "low-rank":
        require(params.get("rank") == rank, f"floor: the low-rank run must be told r = {rank}")
    run = {"kind": "run", "learner": learner, "dim": d, "params": params,
           "vectors": draw["vectors"], "transcript": [], "recovered": draw["recovered"]}
    mod, parsed, rec, expected = rebuild(run)
    require(multiset(rec) == canonical_form(model),
            "floor: the draw's recovered heads are not the canonical form of the model")
    mod.genericity(parsed, rec)
    return expected


#: the fields of a floor record; the low-rank schedule's add its rank, factors and columns
FIELDS = ("kind", "dim", "model", "schedule", "draw", "queries", "parameters", "p", "tau", "L",
          "rows", "first_full", "curve")
LOW_RANK_FIELDS = ("rank", "factors", "columns")


def check_floor(c, checks=()):
    """A non-zero P × P minor of the Jacobian modulo p certifies rank H(d² + d) (see above);
    for the low-rank schedule, rank H(r(2d − r) + d) over the factors."""
    low = isinstance(c, dict) and c.get("schedule") == "low-rank"
    only(c, FIELDS, "floor", optional=LOW_RANK_FIELDS if low else ())
    d = integer(c.get("dim"), "floor.dim")
    require(1 <= d <= 16, "floor: dim out of range")
    model = heads(c.get("model"), d, "floor.model")
    H = len(model)
    require(1 <= H <= 16, "floor: the model needs 1 to 16 heads")
    if low:
        rk, factors = _factors(c, model, d)
        P, width = H * (rk * (2 * d - rk) + d), H * (2 * d * rk + d)
        require(c.get("parameters") == P, f"floor: parameters must be H(r(2d−r)+d) = {P}")
        cols = c.get("columns")
        require(isinstance(cols, list) and len(cols) == P and
                all(isinstance(x, int) and not isinstance(x, bool) for x in cols) and
                cols == sorted(set(cols)) and 0 <= cols[0] and cols[-1] < width,
                f"floor: columns must be {P} increasing distinct indices below {width}")
    else:
        P = H * (d * d + d)
        require(c.get("parameters") == P, f"floor: parameters must be H(d²+d) = {P}")
    name = c.get("schedule")
    expected = rebuilt_schedule(c, name, model, d, rk if low else None)
    qs = c.get("queries")
    require(isinstance(qs, list) and 0 < len(qs) <= 20000, "floor: queries must be a list")
    require(len(qs) == len(expected), f"floor: {len(qs)} queries, but the {name} schedule "
            f"rebuilt from the recorded draw has {len(expected)}")
    queries = []
    for n, q in enumerate(qs):
        require(isinstance(q, list) and 0 < len(q) <= 64, f"floor: query {n} is malformed")
        toks = [vector(t, f"floor.queries[{n}][{k}]", d) for k, t in enumerate(q)]
        require(toks == expected[n], f"floor: query {n} is not query {n} of the {name} schedule "
                f"rebuilt from the recorded draw")
        queries.append(toks)
    p, tau, L = (integer(c.get(k), f"floor.{k}") for k in ("p", "tau", "L"))
    require(is_prime(p) and p > 1 << 32, "floor: p is not a prime above 2^32")
    require(1 < tau < p - 1, "floor: τ must lie in 2 … p−2")
    require(1 <= L <= 1 << 64, "floor: L out of range")
    rows = c.get("rows")
    require(isinstance(rows, list) and len(rows) == P and
            all(isinstance(r, int) and not isinstance(r, bool) for r in rows) and
            rows == sorted(set(rows)) and 0 <= rows[0] and rows[-1] < len(queries),
            f"floor: rows must be {P} increasing distinct query indices")
    M = [jacobian_row(model, queries[k], p, tau, L) for k in rows]
    if low:
        M = [[row[j] for j in cols] for row in (factored(x, factors, d, p) for x in M)]
    value = det_mod(M, p)
    require(value != 0, "floor: the minor vanishes modulo p (no certificate of full rank)")
    require(c.get("first_full") == rows[-1] + 1,
            f"floor: first_full must be {rows[-1] + 1} (one past the last minor row)")
    curve = c.get("curve")
    require(isinstance(curve, list) and len(curve) == len(queries) and
            all(isinstance(x, int) and not isinstance(x, bool) for x in curve),
            "floor: curve must list one rank per answer")
    below = 0
    rowset = set(rows)
    for k, r in enumerate(curve):
        below += k in rowset
        require(below <= r <= min(k + 1, P), f"floor: curve[{k}] = {r} is outside the certified "
                f"range [{below}, {min(k + 1, P)}]")
    k = rows[-1] + 1
    # "at answer k" only where k − 1 answers certainly fall short (k − 1 < P rows)
    when = f"at answer {k} (fewer than {P} answers cannot have rank {P})" if k == P else \
        f"by answer {k}"
    sched = (f"queries = the {name} schedule rebuilt from the recorded draw ({len(queries)} "
             f"queries, generic for the model)")
    if low:
        return (f"floor low-rank d={d} H={H} r={rk}: {sched}; Q Kᵀ = W for every head; {P}×{P} "
                f"minor of the Jacobian over (Q, K, v) of {len(queries)} answers non-zero modulo "
                f"a {p.bit_length()}-bit prime (det ≡ {value}); rank H(r(2d−r)+d) = {P} (the "
                f"dimension of rank-{rk} heads) reached {when}")
    return (f"floor {name} d={d} H={H}: {sched}; {P}×{P} minor of the Jacobian of "
            f"{len(queries)} answers non-zero modulo a {p.bit_length()}-bit prime "
            f"(det ≡ {value}); rank H(d²+d) = {P} reached {when}")
