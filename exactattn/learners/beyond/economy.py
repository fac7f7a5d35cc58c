"""The economy schedule (docs/design.md §10, beyond P2): canonical heads from about
Hd² + Hd + d + (d−1)H(H−1)/2 value queries — 17–25 % above the floor H(d² + d) at the
measured sizes (1.174× at d = 8, H = 4; 1.217× at d = 4, H = 3; docs/beyond.md §6), the excess
d + (d−1)H(H−1)/2 shrinking relative to it only as d grows — exact and certified.  ``schedule="adaptive"`` reads H* from the first family when only a bound
H0 is known.

Steps (random bases U, X as in P2, docs/design.md §4.3):

1. **Column 1.**  q0 = F([x1]) and the P2 copy-count families I(u_i, x1), i = 1…d (2H0 samples
   each; with ``adaptive`` only the first has 2H0, the others 2H*, H* the first family's pole
   count).  Poles give the scores u_iᵀW_h x1, residues c_h(u_i) = −v_h·u_i, constants K_i, so
   v·u_i = K_i − q0 and v = Σ v_h is known.  Every family's interpolant is checked exactly in
   Q(t) against its answers before any later query depends on it.
2. **One-query matching.**  The heads of I(u_i, x1) are paired with those of I(u1, x1) by ONE
   query [(x1+u1+u_i), x1] (the m = 1 sample of P2's matching family): for a pairing π its
   answer would be K'' + Σ_a C_{a,π(a)}/(1 + t^{e_{a,π(a)}}), e_ab = L(s_a(u1) + s_b(u_i)),
   C_ab = c_a(u1) + c_b(u_i).  The functions 1 and 1/(1 + t^n), n ≥ 1, are linearly
   independent over Q (the primitive 2n-th roots of unity are poles of 1/(1+t^n) and of no
   1/(1+t^m) with m < n), and 1/(1+t^{−n}) = 1 − 1/(1+t^n); so when the H*² values |e_ab|
   are pairwise distinct and non-zero and every C_ab ≠ 0 — checked exactly before the query
   is asked — at most one pairing fits.  Otherwise (or for H* > 6) the learner falls back to
   P2's matching family I(u1+u_i, x1), with 2H*−1 samples since its limit K is known.
3. **Columns j ≥ 2, dual path** (H* ≤ d and the v_h independent).  With v_h known, for each
   head a the vectors b with v_g·b = 0 (g ≠ a) form a (d−H*+1)-dimensional space on which
   only head a is visible: the query [(x_j + b), x_j] answers v·x_j + (v_a·b)·σ(bᵀW_a x_j),
   and P1's sigmoid inversion gives bᵀW_a x_j exactly — one query per score, no genericity
   needed.  The remaining H*−1 directions of head a come from pair families
   I(α b_a + β b_g, x_j) (only heads a, g visible, residues −α v_a·b_a ≠ −β v_g·b_g known):
   3 samples with the limit known, poles labelled by their residues, which must be exactly
   the two known ones.  Per column: H*(d − H* + 1) + 3·H*(H*−1)/2 queries.
   **Residue path** (H* > d or dependent v_h): I(u_i, x_j) with 2H*−1 samples (K known), poles
   matched to heads by the known residues c_h(u_i); a row whose residues are not distinct is
   matched by P2's family I(u_i, x1+x_j) (2H*−1 samples), detected before it is needed.
4. W_h from W_h x_j (all j), v_h = −U⁻¹ c_h; the model must reproduce every transcript answer
   exactly in Q(t).

The count of every block is in :mod:`.economy_structure`; degeneracies are named failures
(:mod:`exactattn.errors`), modular mishaps retry at a larger prime without new queries.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import gcd, lcm

from flint import fmpz_mat

from ...arith.expfield import ExpElement
from ...arith.rational_vectors import dot as _dot
from ...arith.modular import BadReduction
from ...errors import (CertificationFailed, CollidingPoles, InvisibleHead,
                      LearningFailure, NotAttention)
from ...models.attention import AttentionHead, MultiHeadAttention
from ..p1.session import _exact_logit
from .economy_structure import economy_count, economy_max_length
from ..p2.engines import PRIME_BITS, ModularEngine, repeated_structural
from ..p2.interpolation import solve_family
from .limit_interpolation import solve_family_with_limit
from ..p2.matching import Close, match
from ..p2.matching import certify as certify_exactly
from ..p2.recovery import check_observed
from ..gc_pause import without_gc
from ..result import LearnResult

__all__ = ["run_economy", "MAX_ONE_QUERY_HEADS", "one_query_condition", "dual_directions",
           "column_one", "ask_dual_column", "recover_dual_columns", "dual_rows", "assemble",
           "certify_run"]

#: one-query matching tries the H*! pairings; above this the matching family is cheaper to run
MAX_ONE_QUERY_HEADS = 6
#: entries of the random recombination of each head's single-visible directions: small, since
#: the directions' size sets the exponents of the answers (and the modular engine's tables)
MIX = 16


# ---------------------------------------------------------------------- small exact functions
def _add(a, b):
    return [x + y for x, y in zip(a, b)]


def _scale(c, a):
    return [c * x for x in a]


def _primitive(vec):
    """The integer vector on the line of a rational vector (denominators cleared, gcd 1)."""
    den = 1
    for x in vec:
        den = lcm(den, Fraction(x).denominator)
    ints = [int(Fraction(x) * den) for x in vec]
    g = 0
    for x in ints:
        g = gcd(g, x)
    return [x // g for x in ints] if g else ints


def _kernel(rows, d):
    """An integer basis of {b : r·b = 0 for every row} (python-flint fmpz_mat.nullspace)."""
    if not rows:
        return [[1 if i == k else 0 for i in range(d)] for k in range(d)]
    ints = [_primitive(r) for r in rows]
    M = fmpz_mat(len(ints), d, [x for r in ints for x in r])
    N, nullity = M.nullspace()
    return [_primitive([int(N[i, k]) for i in range(d)]) for k in range(nullity)]


class _Asker:
    """Asks the oracle, tags every query with its block (docs/design.md §10 count structure)."""

    def __init__(self, orc, progress, total, observe=None):
        self.orc, self.progress, self.total, self.observe = orc, progress, total, observe
        self.tags, self.answers = [], []

    def __call__(self, tokens, block):
        y = self.orc([list(t) for t in tokens])
        self.tags.append(block)
        self.answers.append(y)
        if len(self.answers) == 2 and self.observe is not None:
            self.observe(y)                 # the first copy-count answer (after q0)
        self.progress("queries", len(self.answers), max(self.total, len(self.answers)))
        return y

    def family(self, u, x, ms, block):
        xu = _add(x, u)
        return [self([xu] * m + [x], block) for m in ms]

    def per_block(self):
        out = {}
        for t in self.tags:
            out[t] = out.get(t, 0) + 1
        return out


def _with_prime_sizes(step):
    """Run ``step(bits)`` at the growing prime sizes of the modular ladder
    (:data:`~exactattn.learners.p2.engines.PRIME_BITS`): a modular mishap (BadReduction) or a
    failure that a larger prime may cure is retried without new queries; the last failure is
    raised, or the repeated one when two sizes in a row fail with the same structural reason
    (:data:`~.engines.STRUCTURAL`)."""
    last, reasons = None, []
    for bits in PRIME_BITS:
        try:
            return step(bits)
        except BadReduction as e:
            last = e
            reasons.append("bad-reduction")
        except LearningFailure as e:
            last = e
            reasons.append(e.reason)
            if repeated_structural(reasons):
                break
    if isinstance(last, BadReduction):
        raise NotAttention(f"no prime size recovers a consistent answer ({last}): not attention "
                           f"on these queries") from None
    raise last


def _engine(answers, bits, rng, L=1):
    """A modular engine whose t-exponent denominator L* is a multiple of L."""
    extra = [ExpElement.t_power(1, L)] if L > 1 else []
    return ModularEngine(list(answers) + extra, bits, rng)


def _z(engine, s: Fraction):
    """The image of e^s = t^{sL*}."""
    k = s * engine.L
    if k.denominator != 1:
        raise BadReduction(f"the score {s} is not a multiple of 1/{engine.L}")
    tau = engine.image.tau
    k = int(k)
    return tau ** k if k >= 0 else engine.field.one / tau ** (-k)


def _family_value(K, heads, m, L):
    """K + Σ c_h/(1 + m t^{L s_h}) exactly in Q(t)."""
    acc = ExpElement.from_rational(K)
    for s, c in heads:
        z = ExpElement.t_power(int(s * L), L)
        acc = acc + ExpElement.from_rational(c) / (1 + m * z)
    return acc


# ---------------------------------------------------------------------- column 1
def _solve_col1_family(answers, q0, H0, bits, rng, hint):
    """(K, [(score, residue)]) of one P2 family, checked exactly against its answers."""
    eng = _engine(answers, bits, rng)
    ys = [eng.constant(q0)] + [eng.sample(a) for a in answers]
    K, heads = solve_family(eng.field, ys, H0, hint)
    K = eng.scalar(K)
    heads = [(eng.score(z), eng.scalar(c)) for z, c in heads]
    L = eng.L
    for s, _ in heads:
        L = lcm(L, s.denominator)
    same = _same_family(K, heads, answers)
    for m, a in enumerate(answers, 1):
        if not same and _family_value(K, heads, m, L) != a:
            raise BadReduction("the interpolant does not reproduce the family exactly")
    if _family_value(K, heads, 0, L) != q0:
        raise BadReduction("the interpolant does not reproduce G(0) exactly")
    return K, heads


def _same_family(K, heads, answers) -> bool:
    """True when the answers G(1), G(2), … are lazy members (m, 1) of one two-token group
    whose partial fractions K + Σ c/(1 + m e^s)
    (:meth:`~exactattn.arith.multiplicities.TokenGroup.copy_count_form`) are the
    interpolant's (equal scores merged, zero residues dropped): then the interpolant equals
    every member as a function of m, without expanding them.  False means "not shown": the
    caller compares each answer in Q(t)."""
    packed = [getattr(a, "packed", None) for a in answers]
    if not packed or packed[0] is None:
        return False
    group = packed[0][0]
    if any(p is None or p[0] is not group or p[1] != (m, 1)
           for m, p in enumerate(packed, 1)):
        return False
    form = group.copy_count_form()
    poles = {}
    for s, c in heads:
        poles[s] = poles.get(s, 0) + c
    return form is not None and form == (K, {s: c for s, c in poles.items() if c})


def one_query_condition(ref, fam) -> bool:
    """The exact sufficient condition for one-query matching (module docstring, step 2): the
    values |s_a + s'_b| over all pairs are pairwise distinct and non-zero, and every
    c_a + c'_b ≠ 0."""
    es = [abs(s + t) for s, _ in ref for t, _ in fam]
    if 0 in es or len(set(es)) != len(es):
        return False
    return all(c + e != 0 for _, c in ref for _, e in fam)


def _one_query_match(ref, fam, Kpp, y, bits, rng, label):
    L = 1
    for s, _ in ref + fam:
        L = lcm(L, s.denominator)
    eng = _engine([y], bits, rng, L)
    F = eng.field
    target = eng.sample(y)
    terms = []
    for s, c in ref:
        row = []
        for t, e in fam:
            den = F.one + _z(eng, s + t)
            if F.is_zero(den):
                raise BadReduction("1 + z vanishes modulo p")
            row.append(eng.constant(c + e) / den)
        terms.append(row)
    base = eng.constant(Kpp)
    fits = []
    for perm in itertools.permutations(range(len(fam))):
        acc = base
        for a, b in enumerate(perm):
            acc = acc + terms[a][b]
        if F.is_zero(acc - target):
            fits.append(perm)
            if len(fits) > 1:
                raise BadReduction("two pairings agree modulo p")  # distinct in Q(t)
    if not fits:
        raise NotAttention(f"matching {label}: no pairing of heads reproduces the matching "
                           f"query's answer", family=label)
    return [fam[b] for b in fits[0]]


# ---------------------------------------------------------------------- columns j ≥ 2
def dual_directions(vs, rng, box, coefficients=None):
    """(singles, pairs): for each head a, d−H+1 vectors spanning {b : v_g·b = 0, g ≠ a}, each
    with v_a·b ≠ 0 (head a alone visible) — a random basis of that space (random integer
    combinations with entries in −MIX…MIX of an integer kernel basis, so that the first r of
    them are generic for the skeleton of a rank-r head); and for each pair a < g the vector
    α b_a + β b_g (α, β random in 1…box, residues α v_a·b_a ≠ β v_g·b_g) on which heads a and g alone are visible
    (docs/design.md §10).  Returns None when the v_h are dependent (H > d included)."""
    H, d = len(vs), len(vs[0])
    V = fmpz_mat(H, d, [x for r in vs for x in _primitive(r)]) if H else None
    if H == 0 or H > d or V.rank() < H:
        return None
    singles = []
    for a in range(H):
        basis = _kernel([vs[g] for g in range(H) if g != a], d)
        m = len(basis)
        while True:     # a random basis of the same space, every vector seeing head a
            R = [[rng.randint(-MIX, MIX) for _ in range(m)] for _ in range(m)]
            if fmpz_mat(m, m, [x for r in R for x in r]).det() == 0:
                continue
            mixed = [[sum(R[k][l] * basis[l][i] for l in range(m)) for i in range(d)]
                     for k in range(m)]
            if all(_dot(vs[a], b) != 0 for b in mixed):
                break
        singles.append([_primitive(b) for b in mixed])
    pairs = {}
    coefficients = {} if coefficients is None else coefficients   # (α, β) per pair, filled in
    for a, g in itertools.combinations(range(H), 2):
        ba, bg = singles[a][0], singles[g][0]
        while True:
            al, be = rng.randint(1, box), rng.randint(1, box)
            if al * _dot(vs[a], ba) != be * _dot(vs[g], bg):
                break
        pairs[(a, g)] = _add(_scale(al, ba), _scale(be, bg))
        coefficients[(a, g)] = (al, be)
    return singles, pairs


def _pair_scores(u, vs, a, g, x, answers, eng):
    """Scores of heads a and g from the 3 samples of I(u, x), residues known (``eng``: a
    modular engine covering the answers)."""
    v = [sum(col) for col in zip(*vs)]
    K = _dot(v, _add(x, u))
    G0 = _dot(v, x)
    ca, cg = -_dot(vs[a], u), -_dot(vs[g], u)
    ys = [eng.constant(G0)] + [eng.sample(y) for y in answers]
    heads = solve_family_with_limit(eng.field, eng.constant(K), ys, 2)
    if len(heads) != 2:
        raise CollidingPoles(f"the pair family of heads {a + 1}, {g + 1} shows {len(heads)} "
                             f"pole(s), not 2: their scores collide at this x", heads=[a, g],
                             poles=len(heads))
    got = {eng.scalar(c): eng.score(z) for z, c in heads}
    if set(got) != {ca, cg}:
        raise NotAttention(f"the pair family of heads {a + 1}, {g + 1} shows residues "
                           f"{sorted(map(str, got))}, not the known {ca}, {cg}",
                           residues=[str(c) for c in got])
    return got[ca], got[cg]


def ask_dual_column(ask, x, singles, pairs, take=None, block="single-visible"):
    """Ask one column x_j of the dual path: the single-visible probes [(x + b), x] (the first
    ``take[a]`` directions of head a, all when ``take`` is None) and, for a full column, the
    pair families (docs/design.md §10).  Returns the column's answers."""
    one = {}
    for a, basis in enumerate(singles):
        for k, b in enumerate(basis[: None if take is None else take[a]]):
            one[(a, k)] = ask([_add(x, b), x], block)
    two = {} if take is not None else \
        {key: ask.family(u, x, (1, 2, 3), "pair") for key, u in pairs.items()}
    return x, one, two


def recover_dual_columns(columns, vs, singles, pairs, rng):
    """{(a, j): scores of head a at column j, in the order of :func:`dual_rows`} for the
    columns asked by :func:`ask_dual_column` (prime sizes retried on a modular mishap)."""
    v = [sum(col) for col in zip(*vs)]

    every = [y for _, _, two in columns.values() for ys in two.values() for y in ys]
    seen = {}               # v_a·b of each direction, the same at every column

    def recover(bits):
        out = {}
        eng = _engine(every, bits, rng) if every else None      # one engine: one power table
        for j, (x, one, two) in columns.items():
            for a in range(len(vs)):
                out[(a, j)] = []
            vx = _dot(v, x)
            for (a, k), y in one.items():
                if (a, k) not in seen:
                    seen[(a, k)] = _dot(vs[a], singles[a][k])
                sigma = (y - vx) / seen[(a, k)]
                out[(a, j)].append(_exact_logit(sigma, f"single-visible a={a + 1} j={j + 1}"))
            for (a, g), ys in two.items():
                sa, sg = _pair_scores(pairs[(a, g)], vs, a, g, x, ys, eng)
                out[(a, j)].append(sa)
                out[(g, j)].append(sg)
        return out

    return _with_prime_sizes(recover)


def dual_rows(singles, pairs, a):
    """The d directions of head a, in the order of its scores: its single-visible directions,
    then its pair vectors with g = 1 … H (g ≠ a)."""
    return singles[a] + [pairs[tuple(sorted((a, g)))] for g in range(len(singles)) if g != a]


def _dual_columns(ask, X, vs, rng, box):
    """Scores s_a(b, x_j) for j ≥ 2 on the dual path; returns (rows, scores) or None."""
    coefficients = {}
    dirs = dual_directions(vs, rng, box, coefficients)
    if dirs is None:
        return None
    singles, pairs = dirs
    ask.directions = {"singles": singles, "pairs": pairs, "coefficients": coefficients}
    columns = {j: ask_dual_column(ask, X[j], singles, pairs) for j in range(1, len(X))}
    scores = recover_dual_columns(columns, vs, singles, pairs, rng)
    return {a: dual_rows(singles, pairs, a) for a in range(len(vs))}, scores


def _residue_columns(ask, U, X, col, vs, H, rng):
    """Scores s_a(u_i, x_j) for j ≥ 2 on the residue path (module docstring, step 3)."""
    d = len(U)
    v = [sum(c) for c in zip(*vs)] if vs else [Fraction(0)] * d
    ms = list(range(1, 2 * H))
    fams, extra = {}, {}
    for j in range(1, d):
        for i in range(d):
            fams[(i, j)] = ask.family(U[i], X[j], ms, "residue-family")
            residues = [c for _, c in col[i]]
            if len(set(residues)) != len(residues):
                x1j = _add(X[0], X[j])
                extra[(i, j)] = ask.family(U[i], x1j, ms, "residue-matching")

    def solve(u, x, ys, bits):
        eng = _engine(ys, bits, rng)
        K, G0 = _dot(v, _add(x, u)), _dot(v, x)
        heads = solve_family_with_limit(eng.field, eng.constant(K),
                                        [eng.constant(G0)] + [eng.sample(y) for y in ys], H)
        return [(eng.score(z), eng.scalar(c)) for z, c in heads]

    def recover(bits):
        close = Close(_ExactBE)
        out = {}
        for (i, j), ys in fams.items():
            got = solve(U[i], X[j], ys, bits)
            if len(got) != len(col[i]):
                raise CollidingPoles(f"I(u{i + 1}, x{j + 1}) shows {len(got)} poles, not "
                                     f"{len(col[i])}: two heads' poles collide", u=i + 1,
                                     x=j + 1, poles=len(got))
            if (i, j) in extra:
                sumfam = solve(U[i], _add(X[0], X[j]), extra[(i, j)], bits)
                _same_count(sumfam, H, f"I(u{i + 1}, x1+x{j + 1})")
                matched = match(col[i], got, sumfam, close, True,
                                     f"I(u{i + 1}, x{j + 1})")
            else:
                by_c = {c: s for s, c in got}
                if set(by_c) != {c for _, c in col[i]}:
                    raise NotAttention(f"I(u{i + 1}, x{j + 1}) shows residues other than the "
                                       f"known c_h(u{i + 1})", u=i + 1, x=j + 1)
                matched = [(by_c[c], c) for _, c in col[i]]
            for a, (s, _) in enumerate(matched):
                out[(a, i, j)] = s
        return out

    return _with_prime_sizes(recover)


class _ExactBE:
    name = "exact"


# ---------------------------------------------------------------------- the run
def column_one(ask, U, X, H0, known, be, rng):
    """Steps 1–2 (module docstring): q0, the column-1 families, v, the matching across u.
    Returns a dict with q0, col (per u_i the heads [(score, residue)] in the order of
    I(u1, x1)), v, vs (the v_h), y1 (W_h x1), H_star and the matching methods per row."""
    d = len(U)
    x1 = X[0]
    q0 = ask([x1], "q0")
    if not q0.is_rational():
        raise NotAttention("F([x1]) of a single token is not a rational number: not attention")
    q0 = q0.as_rational()
    col, Ks = [], []
    H_star = None
    for i in range(d):
        n = 2 * H0 if (i == 0 or known) else 2 * H_star
        ys = ask.family(U[i], x1, range(1, n + 1), "first-family" if i == 0 else "column-1")
        bound = H0 if (i == 0 or known) else H_star
        try:
            K, heads = _with_prime_sizes(
                lambda bits, ys=ys, n=bound, h=H_star: _solve_col1_family(ys, q0, n, bits, rng, h))
        except LearningFailure as e:
            if known or i == 0:
                raise
            # with 2H* samples a family of a ≤ H0-head oracle fails to fit only if it has
            # more than H* poles: a head invisible at u1 (v_h·u1 = 0) or colliding at x1
            raise InvisibleHead(
                f"I(u{i + 1}, x1) is not fitted by the H* = {H_star} poles read from I(u1, x1) "
                f"({e}): a head invisible at u1 (v_h·u1 = 0) or colliding at x1, or the "
                f"oracle is not attention", u=i + 1, reference=H_star) from None
        if H_star is None:
            H_star = len(heads)
        elif len(heads) != H_star:
            raise InvisibleHead(
                f"I(u{i + 1}, x1) shows {len(heads)} poles but I(u1, x1) shows {H_star}: a "
                f"head is invisible (v_h·u = 0) at one of them or two poles collide at x1",
                u=i + 1, poles=len(heads), reference=H_star)
        col.append(heads)
        Ks.append(K)
    v = [r[0] for r in be.solve(U, [[K - q0] for K in Ks])]
    methods = []
    for i in range(1, d):
        if H_star <= 1:
            break
        ref, fam = col[0], col[i]
        label = f"I(u{i + 1}, x1)"
        if H_star <= MAX_ONE_QUERY_HEADS and one_query_condition(ref, fam):
            u = _add(U[0], U[i])
            y = ask([_add(x1, u), x1], "matching")
            Kpp = _dot(v, _add(x1, u))
            col[i] = _with_prime_sizes(
                lambda bits, r=ref, f=fam, K=Kpp, y=y, lb=label:
                _one_query_match(r, f, K, y, bits, rng, lb))
            methods.append("one-query")
        else:
            col[i] = _family_match(ask, U, x1, v, q0, ref, fam, i, H_star, rng, label)
            methods.append("matching-family")
    C = [[col[i][a][1] for i in range(d)] for a in range(H_star)]
    vs = [[-r[0] for r in be.solve(U, [[c] for c in C[a]])] for a in range(H_star)]
    total = [sum((h[k] for h in vs), Fraction(0)) for k in range(d)]
    if total != v:
        raise NotAttention("the heads' v_h do not sum to v read from the constants: not "
                           "attention with these heads", v=[str(x) for x in v])
    y1 = [[r[0] for r in be.solve(U, [[col[i][a][0]] for i in range(d)])] for a in range(H_star)]
    return {"q0": q0, "col": col, "v": v, "vs": vs, "y1": y1, "H_star": H_star,
            "methods": methods}


def assemble(be, X, Y, vs):
    """The canonical model from W_h x_j (Y[a][j]) and v_h: W_h = Y_h X⁻ᵀ."""
    d = len(X)
    heads = []
    for a, va in enumerate(vs):
        Yt = [[Y[a][j][p] for p in range(d)] for j in range(d)]   # row j = (W_a x_j)ᵀ
        W = be.transpose(be.solve(X, Yt))                          # X Wᵀ = Yᵀ
        heads.append(AttentionHead(W, va))
    return MultiHeadAttention(heads, dim=d).canonical()


def certify_run(orc, first, model, be, progress, certify, zero_first_family=False):
    """Exact certification (every transcript answer reproduced in Q(t)); returns
    (transcript, certificate)."""
    transcript = orc.transcript[first:] if orc.record else None
    if not certify:
        return transcript, None
    if transcript is None:
        raise ValueError("certification needs the oracle's transcript (record=True)")
    cert = certify_exactly(model, transcript, be, progress)
    if not cert["certified"] and zero_first_family:
        raise InvisibleHead("I(u1, x1) shows no pole but the oracle is not the zero "
                            "function: every head is invisible at u1 (v_h·u1 = 0)",
                            reference=0, **cert)
    if not cert["certified"]:
        raise CertificationFailed("the recovered model does not reproduce the transcript "
                                  "exactly: the oracle is not attention with these heads "
                                  "on these queries", **cert)
    return transcript, cert


@without_gc
def run_economy(orc, U, X, H0, known: bool, be, rng, certify, progress, box, force=False,
                validation=0):
    """One run of the economy schedule on bases U, X (docs/design.md §10); the caller draws
    and checks the bases and handles resampling.  ``known``: H0 is the number of heads
    (economy); otherwise a bound (adaptive).  P2's matching rule and exact certification
    come from :mod:`.matching`, shared with the P2 learner.  The first copy-count answer is
    priced as P2's is (:func:`~exactattn.learners.p2.recovery.check_observed`: lazy answers
    confirm the estimate made up front, a black box's expanded ones re-price the run at
    P2's count, an upper bound of this one, and ``validation`` queries)."""
    if be.name != "exact":
        raise ValueError("the economy and adaptive schedules run on the exact backend")
    d = len(U)
    first = len(orc.transcript)
    variant = "economy" if known else "adaptive"
    ask = _Asker(orc, progress, economy_count(d, H0, H0, variant),
                 lambda y: check_observed(y, d, H0, force, validation))
    one = column_one(ask, U, X, H0, known, be, rng)
    H_star, vs, col, methods = one["H_star"], one["vs"], one["col"], one["methods"]
    path = "dual"
    Y = [[one["y1"][a]] for a in range(H_star)]       # Y[a][j] = W_a x_j
    if d > 1 and H_star:
        dual = _dual_columns(ask, X, vs, rng, box)
        if dual is not None:
            rows, scores = dual
            for a in range(H_star):
                Y[a] += be.solve_columns(rows[a], [scores[(a, j)] for j in range(1, d)])
        else:
            path = "residue"
            S = _residue_columns(ask, U, X, col, vs, H_star, rng)
            for a in range(H_star):
                Y[a] += be.solve_columns(U, [[S[(a, i, j)] for i in range(d)]
                                             for j in range(1, d)])
    model = assemble(be, X, Y, vs)
    transcript, cert = certify_run(orc, first, model, be, progress, certify,
                                   zero_first_family=H_star == 0 and not known)
    blocks = ask.per_block()
    expected = economy_count(d, H_star, H0, variant, path) + _fallback_extra(methods, blocks,
                                                                             H_star)
    return LearnResult(
        algorithm=f"multi-head-{variant}", dim=d, backend=be.name,
        heads=[(h.W, h.v) for h in model.heads], queries=len(ask.answers),
        max_length=max((len(q) for q, _ in transcript), default=0) if transcript else 0,
        expected_queries=expected,
        expected_max_length=economy_max_length(H_star, H0, path),
        transcript=transcript or [], certificate=cert,
        extra={"U": U, "X": X, "H0": H0, "H_star": H_star, "v": one["v"], "path": path,
               "matching": methods, "blocks": blocks, "certification": cert,
               "variant": variant, "directions": getattr(ask, "directions", None),
               "head_order": head_order(one, Y, X, be, model)})


def _family_match(ask, U, x1, v, q0, ref, fam, i, H, rng, label):
    """P2's matching family I(u1+u_i, x1) with the limit known: 2H−1 samples."""
    u = _add(U[0], U[i])
    ys = ask.family(u, x1, range(1, 2 * H), "matching-family")
    K = _dot(v, _add(x1, u))

    def step(bits):
        eng = _engine(ys, bits, rng)
        got = solve_family_with_limit(eng.field, eng.constant(K),
                                      [eng.constant(q0)] + [eng.sample(y) for y in ys], H)
        sumfam = [(eng.score(z), eng.scalar(c)) for z, c in got]
        _same_count(sumfam, H, label)
        return match(ref, fam, sumfam, Close(_ExactBE), False, label)

    return _with_prime_sizes(step)


def _same_count(sumfam, H, label):
    if len(sumfam) != H:
        raise CollidingPoles(f"the matching family {label} shows {len(sumfam)} poles, not "
                             f"{H}: two pole products collide", family=label, poles=len(sumfam))


def head_order(one, Y, X, be, model):
    """head_order[a] = the index in ``model.heads`` of internal head a (the order of
    I(u1, x1)'s poles, in which the schedule asks its directions; run certificates record it)."""
    return [next(k for k, h in enumerate(model.heads) if h.W == W)
            for W in _internal_W(one, Y, X, be)] if one["H_star"] else []


def _internal_W(one, Y, X, be):
    """The W_h in the learner's internal head order (that of I(u1, x1)'s poles)."""
    return [assemble(be, X, [Y[a]], [one["vs"][a]]).heads[0].W for a in range(one["H_star"])]


def _fallback_extra(methods, blocks, H):
    """Queries beyond the structure's count: a matching family (2H−1 samples) in place of the
    one matching query of a row, and on the residue path a matching family I(u_i, x1+x_j)
    (2H−1) for every (i, j) whose row has repeated residues."""
    rows = blocks.get("residue-matching", 0) // max(1, 2 * H - 1)
    return sum(2 * H - 2 for m in methods if m == "matching-family") + rows * (2 * H - 1)

