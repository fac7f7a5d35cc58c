"""Check kind ``fibre``: the answer fibre of a copy-count transcript, re-derived from the
record alone (beyond P2, answer fibres; docs/design.md §11).

The claim: every canonical model with ≤ H₀ heads (real parameters) that gives the
transcript's answers lies in one of the recorded pieces; when every piece is the same single
point, that point is the only such model.  What is checked, in order:

1. *The transcript* is exactly the P2 schedule rebuilt from U, X, H₀
   (:func:`.run_multi_head.schedule_queries`), then for each extra family I(u, x),
   u = Σ a_i u_i, x = Σ b_j x_j, the queries [(x+u) × m, x], m = 1…2H₀; det U, det X ≠ 0.
2. *Each family's function* G(m) = K + Σ_p c_p/(1 + m e^{σ_p}) (≤ H₀ poles, σ_p increasing,
   c_p ≠ 0) equals the 2H₀ answers m = 1…2H₀ exactly in Q(t), and G(0) = K + Σ_p c_p equals
   q₀ = F([x₁]) (a rational) when x = x₁, else v·x with v = U⁻¹ρ, ρ_i = K(I(u_i, x₁)) − q₀.
   Why this is G for *every* model with ≤ H₀ heads giving these answers: its G′ is of type
   ≤ (H₀, H₀) in m with denominators positive at m ≥ 0; its G′(0) is v′·x, v′ = Σ_h v_h,
   and v′·x₁ = q₀, v′·u_i = K′ − q₀ once G′ = G on the families I(u_i, x₁), so v′ = v.  Two
   such functions agreeing at the 2H₀ + 1 points m = 0…2H₀ are equal (their difference has a
   numerator of degree ≤ 2H₀), and the reduced partial fractions — the poles with non-zero
   residue sums, and K — are then unique.
3. *The search* (the contract of ``exactattn/learners/p2/fibre.py``, rebuilt here): for
   H′ = 0…H₀ the root equations Σ_h r_h = ρ and the "≠" conditions (r_h ≠ 0, then S_g ≠ S_h
   for g < h) of a canonical model in coordinates S_h = U W_h Xᵀ, r_h = U v_h; then families
   in the record's order.  At every open node the labellings are enumerated here and the
   node's children must be exactly that list, in that order; each child's equations are built
   here.  A child is closed by a combination of its equations reading 0 = c with c ≠ 0, or by
   a forced "≠" condition (each component is a combination of the equations, form and value),
   or is *dominated*: a head h at a pole shared with other heads whose residue aᵀr_h is
   forced to 0 by the parent's equations — its solutions lie in those of the listed sibling
   with h null (re-sorted in the parent's blocks; chains end, each step lowers the number of
   heads at poles).  Open nodes at the last depth are the pieces, in walk order.
4. *Each piece* is re-solved (exact elimination: its dimension is the number of free
   variables) and its recorded point satisfies its equations and its "≠" conditions, so it is
   not empty.
5. *The verdict*: with a ``model``, every piece has dimension 0 and is that model (W = U⁻¹ S
   X⁻ᵀ, v_h = U⁻¹ r_h, as a multiset of canonical heads), which reproduces every answer in
   Q(t); an optional ``truth`` must have that canonical form (with no model: reproduce every
   answer).  No genericity theorem is used: the search is exhaustive and every closed branch
   carries its witness.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .linalg import det, solve_unique
from .parse import heads, integer, listed, matrix, multiset, only, rat, require, vector
from .poly import padd
from .qt import attention, canonical_form, is_canonical, lmul, same_element
from .run import read_transcript
from .run_multi_head import combo, families, schedule_queries

MAX_DIM, MAX_H0, MAX_EXTRA = 8, 6, 16
#: tree nodes walked, and labelling-enumeration steps, before a record is rejected as too large
MAX_NODES, MAX_STEPS = 300_000, 5_000_000
#: the price of recombining witnesses, charged before each sum from sizes already read: a
#: combination costs its equation terms × (1 + its coefficients' characters // 64); the
#: record may spend WITNESS_BASE + WITNESS_PER_NODE × (nodes walked so far), so a forged
#: witness costs at most a fixed multiple of a node's own work (docs/evidence.md §7; genuine
#: records spend under 10 a node)
WITNESS_BASE, WITNESS_PER_NODE = 100_000, 1_000
#: the price of re-solving the pieces (exact elimination, rows × unknowns × min of the two per
#: system), charged before each piece against ELIMINATION_BASE (one piece at d = 8, H0 = 6
#: with every family: 858 rows × 384², 1.3·10⁸) + ELIMINATION_PER_NODE × nodes
ELIMINATION_BASE, ELIMINATION_PER_NODE = 200_000_000, 20_000
FIELDS = ("kind", "dim", "H0", "U", "X", "transcript", "extra", "functions", "order", "tree",
          "pieces", "model")


# ---------------------------------------------------------------------- family functions
def _g_element(K, poles, m):
    """G(m) = K + Σ c_p/(1 + m e^{σ_p}) as (num, den, L) with e^σ = t^{σL}."""
    L = 1
    for s, _ in poles:
        L = L * s.denominator // math.gcd(L, s.denominator)
    factors = [padd({0: Fraction(1)}, {int(s * L): Fraction(m)}) for s, _ in poles]
    den = {0: Fraction(1)}
    for f in factors:
        den = lmul(den, f)
    num = {e: K * x for e, x in den.items() if K}
    for p, (_, cp) in enumerate(poles):
        term = {0: cp}
        for q, f in enumerate(factors):
            if q != p:
                term = lmul(term, f)
        num = padd(num, term)
    return {e: x for e, x in num.items() if x}, den, L


def _function(f, H0, where):
    only(f, ("K", "poles"), where)
    K = rat(f["K"], f"{where}.K")
    poles = []
    for k, pc in enumerate(listed(f["poles"], f"{where}.poles", H0)):
        require(isinstance(pc, list) and len(pc) == 2, f"{where}.poles[{k}]: [σ, c]")
        poles.append((rat(pc[0], f"{where}.poles[{k}]"), rat(pc[1], f"{where}.poles[{k}]")))
    require(all(p[0] < q[0] for p, q in zip(poles, poles[1:])),
            f"{where}: the poles σ_p are not distinct and increasing")
    require(all(c != 0 for _, c in poles), f"{where}: a pole with residue 0")
    return K, poles


def _rational(y, where):
    num, den, _ = y
    require(set(num) <= {0} and set(den) == {0}, f"{where}: F([x1]) is not a rational number")
    return num.get(0, Fraction(0)) / den[0]


# ---------------------------------------------------------------------- the contract's equations
def _w(h, i, j, d):
    return (h * d + i) * d + j


def _score(fam, h, d, sign=1):
    a, b = fam["a"], fam["b"]
    return {_w(h, i, j, d): sign * a[i] * b[j] for i in range(d) for j in range(d)
            if a[i] and b[j]}


def _residue(fam, members, d):
    return {h * d + i: ai for h in members for i, ai in enumerate(fam["a"]) if ai}


def root_conditions(H, d, rho):
    """(r-equations, "≠" conditions) of H′ heads: Σ_h r_h[i] = ρ_i; r_h ≠ 0; S_g ≠ S_h."""
    req = [({h * d + i: Fraction(1) for h in range(H)}, rho[i]) for i in range(d)]
    ne = [("r", [({h * d + i: Fraction(1)}, Fraction(0)) for i in range(d)]) for h in range(H)]
    ne += [("W", [({_w(g, i, j, d): Fraction(1), _w(h, i, j, d): Fraction(-1)}, Fraction(0))
                  for i in range(d) for j in range(d)])
           for g in range(H) for h in range(g + 1, H)]
    return req, ne


def family_conditions(fam, E, d):
    """(W-, r-equations) of labelling E: W — per head, its score at its pole or equal to its
    hidden class's first head's; r — per label in increasing order, the residue sum of its
    heads (−c_p at a pole, 0 for a hidden class), each null head on its own."""
    n, first = len(fam["poles"]), {}
    for h, lab in enumerate(E):
        first.setdefault(lab, h)
    weq = []
    for h, lab in enumerate(E):
        if lab < n:
            weq.append((_score(fam, h, d), fam["poles"][lab][0]))
        elif lab > n and first[lab] != h:
            weq.append(({**_score(fam, first[lab], d), **_score(fam, h, d, -1)}, Fraction(0)))
    req = []
    for lab in sorted(first):
        members = [h for h, x in enumerate(E) if x == lab]
        if lab == n:
            req += [(_residue(fam, [h], d), Fraction(0)) for h in members]
        else:
            req.append((_residue(fam, members, d), -fam["poles"][lab][1] if lab < n
                        else Fraction(0)))
    return weq, req


def refine(blocks, E):
    """Split each block of heads where the labels change."""
    out = []
    for s, e in blocks:
        start = s
        for h in range(s + 1, e):
            if E[h] != E[h - 1]:
                out.append((start, h))
                start = h
        out.append((start, e))
    return out


# ---------------------------------------------------------------------- the walk
class _Walk:
    def __init__(self, d, fams, order, nsched):
        self.d, self.fams, self.order, self.nsched = d, fams, order, nsched
        self.nodes = self.steps = self.by_c = self.by_ne = self.dominated = self.p2 = 0
        self.work = self.H = 0
        self.pieces = []
        self.W, self.R = [], []                   # the equations along the current path

    def labellings(self, n, H, blocks, cap):
        """Labels 0…n−1 poles, n null, n+1+k hidden classes; every pole used, every hidden
        class ≥ 2 heads, classes in order of first use, non-decreasing inside each block; in
        lexicographic order (at most ``cap`` of them)."""
        first, out, E = {s for s, _ in blocks}, [], [0] * H

        def rec(h, used, left):
            self.steps += 1
            require(self.steps <= MAX_STEPS, "fibre: the labelling enumeration is too large")
            if len(out) > cap or H - h < len(left):
                return
            if h == H:
                if all(E.count(n + 1 + k) >= 2 for k in range(used)):
                    out.append(list(E))
                return
            for lab in range(0 if h in first else E[h - 1], n + 2 + used):
                E[h] = lab
                rec(h + 1, used + (lab == n + 1 + used), left - {lab})
        rec(0, 0, frozenset(range(n)))
        return out

    def price(self, lam, eqs, nvars, where):
        """Charge a combination's price (:data:`WITNESS_PER_NODE`) before it is summed: at most
        nvars + 1 terms (the support of a minimal witness: independent equations and the one
        they contradict), each an equation of the path."""
        require(isinstance(lam, dict), f"{where}: a combination is {{equation index: λ}}")
        require(len(lam) <= nvars + 1, f"{where}: {len(lam)} terms for {nvars} unknowns (a "
                f"witness needs at most {nvars + 1})")
        terms = chars = 0
        budget = WITNESS_BASE + WITNESS_PER_NODE * self.nodes
        for key, x in lam.items():
            require(isinstance(key, str) and key.isascii() and key.isdigit() and
                    str(int(key)) == key and int(key) < len(eqs),
                    f"{where}: no equation {key!r:.20}")
            terms += len(eqs[int(key)][0]) + 1
            chars += len(x) if isinstance(x, str) else 0
        self.work += terms * (1 + chars // 64)
        require(self.work <= budget, f"{where}: recombining the witnesses would cost {self.work:,}"
                f" (equation terms × digit weight) after {self.nodes} nodes, over the "
                f"{budget:,} allowed, refused")

    def combine(self, lam, eqs, where, nvars=None):
        """(Σ λ_e·left side, Σ λ_e·right side) of a recorded combination {index: λ}, priced
        first (:meth:`price`)."""
        self.price(lam, eqs, len(eqs) if nvars is None else nvars, where)
        lhs, rhs = {}, Fraction(0)
        for key, x in lam.items():
            x = rat(x, f"{where}[{key}]")
            require(x != 0, f"{where}[{key}]: a witness term with coefficient 0")
            form, value = eqs[int(key)]
            for k, y in form.items():
                lhs[k] = lhs.get(k, 0) + x * y
            rhs += x * value
        return {k: y for k, y in lhs.items() if y}, rhs

    def unknowns(self, system):
        """The number of unknowns of a system at the current head count: S (H′d²) or r (H′d)."""
        return self.H * self.d * (self.d if system == "W" else 1)

    def closed(self, why, ne, where):
        if isinstance(why, dict) and "ne" in why:
            only(why, ("ne", "combinations"), where)
            idx = integer(why["ne"], f"{where}.ne", 0, len(ne) - 1)
            system, comps = ne[idx]
            lams = listed(why["combinations"], f"{where}.combinations")
            require(len(lams) == len(comps), f"{where}: one combination per component")
            for k, (lam, (form, value)) in enumerate(zip(lams, comps)):
                got = self.combine(lam, self.W if system == "W" else self.R, f"{where}[{k}]",
                                   self.unknowns(system))
                require(got == (form, value), f"{where}: combination {k} does not force "
                        f"component {k} of \"≠\" condition {idx}")
            self.by_ne += 1
            return
        only(why, ("system", "combination"), where)
        require(why["system"] in ("W", "r"), f"{where}: system W or r")
        lhs, c = self.combine(why["combination"], self.W if why["system"] == "W" else self.R,
                              where, self.unknowns(why["system"]))
        require(not lhs, f"{where}: the combination's left side is not identically 0")
        require(c != 0, f"{where}: the combination reads 0 = 0, not 0 = c ≠ 0")
        self.by_c += 1

    def node(self, rec, H, ne, blocks, depth, where):
        """A node whose equations are on the path: closed, a piece, or its children."""
        self.nodes += 1
        self.H = H
        require(self.nodes <= MAX_NODES, f"fibre: more than {MAX_NODES} tree nodes")
        if "closed" in rec:
            return self.closed(rec["closed"], ne, f"{where}.closed")
        if depth == self.nsched and len(self.order) > self.nsched:
            self.p2 += 1
        if depth == len(self.order):
            require("piece" in rec, f"{where}: an open node after the last family must be a "
                    f"piece")
            integer(rec["piece"], f"{where}.piece")
            require(rec["piece"] == len(self.pieces), f"{where}: piece {rec['piece']} is not "
                    f"the next piece ({len(self.pieces)})")
            self.pieces.append((H, list(self.W), list(self.R), ne))
            return
        require("children" in rec, f"{where}: an open node after {depth} of the "
                f"{len(self.order)} families must have children")
        fam = self.fams[self.order[depth]]
        n = len(fam["poles"])
        kids = listed(rec["children"], f"{where}.children")
        expected = self.labellings(n, H, blocks, len(kids))
        require(len(kids) == len(expected), f"{where}: {len(kids)} children but "
                f"{'more than ' * (len(expected) > len(kids))}{min(len(expected), len(kids))} "
                f"labellings")
        seen = {tuple(E) for E in expected}
        nW, nR = len(self.W), len(self.R)
        for k, (ch, E) in enumerate(zip(kids, expected)):
            at = f"{where}[{k}]"
            require(isinstance(ch, dict) and len(ch) == 2 and "labels" in ch and
                    (set(ch) - {"labels"}) <= {"closed", "dominated", "children", "piece"},
                    f"{at}: a child is {{labels, closed | dominated | children | piece}}")
            labels = listed(ch["labels"], f"{at}.labels", H)
            require([integer(x, f"{at}.labels") for x in labels] == E,
                    f"{at}: the labels are not labelling {k} of the enumeration")
            if "dominated" in ch:
                self.dominate(ch["dominated"], fam, E, blocks, seen, nR, f"{at}.dominated")
                continue
            weq, req = family_conditions(fam, E, self.d)
            self.W.extend(weq)
            self.R.extend(req)
            self.node(ch, H, ne, refine(blocks, E), depth + 1, at)
            del self.W[nW:], self.R[nR:]

    def dominate(self, dom, fam, E, blocks, seen, nR, where):
        self.nodes += 1
        require(self.nodes <= MAX_NODES, f"fibre: more than {MAX_NODES} tree nodes")
        only(dom, ("head", "combination", "by"), where)
        n = len(fam["poles"])
        h = integer(dom["head"], f"{where}.head", 0, len(E) - 1)
        require(E[h] < n and E.count(E[h]) >= 2, f"{where}: head {h} is not at a shared pole")
        got = self.combine(dom["combination"], self.R[:nR], where, self.unknowns("r"))
        require(got == (_residue(fam, [h], self.d), 0), f"{where}: the combination of the "
                f"parent's equations is not a·r_{h} = 0")
        E2 = list(E)
        E2[h] = n
        for s, e in blocks:
            E2[s:e] = sorted(E2[s:e])
        by = [integer(x, f"{where}.by") for x in listed(dom["by"], f"{where}.by", len(E))]
        require(by == E2 and tuple(by) in seen, f"{where}: 'by' is not the sibling with head "
                f"{h} null")
        self.dominated += 1


# ---------------------------------------------------------------------- pieces and the verdict
def _rank(eqs):
    """Rank of the left sides (semi-echelon elimination over Q)."""
    rows = []
    for form, _ in eqs:
        vec = dict(form)
        for p, row in rows:
            c = vec.get(p)
            if c:
                for k, y in row.items():
                    z = vec.get(k, 0) - c * y
                    if z:
                        vec[k] = z
                    else:
                        vec.pop(k, None)
        if vec:
            p = min(vec)
            rows.append((p, {k: y / vec[p] for k, y in vec.items()}))
    return len(rows)


def _holds(form, value, x):
    return sum((c * x[k] for k, c in form.items()), Fraction(0)) == value


def _piece(p, H, d, where):
    only(p, ("heads", "S", "r"), where)
    require(integer(p["heads"], f"{where}.heads") == H, f"{where}: not {H} heads")
    S, r = listed(p["S"], f"{where}.S", H), listed(p["r"], f"{where}.r", H)
    require(len(S) == H and len(r) == H, f"{where}: {H} heads")
    S = [matrix(Sh, f"{where}.S[{h}]", d, d) for h, Sh in enumerate(S)]
    r = [vector(rh, f"{where}.r[{h}]", d) for h, rh in enumerate(r)]
    return S, r


def _inverse(M):
    d = len(M)
    cols = [solve_unique(M, [Fraction(int(i == k)) for i in range(d)]) for k in range(d)]
    return [[cols[j][i] for j in range(d)] for i in range(d)]


def _mul(A, B):
    return [[sum((A[i][k] * B[k][j] for k in range(len(B))), Fraction(0))
             for j in range(len(B[0]))] for i in range(len(A))]


def _n(k, one, many=None):
    return f"{k} {one if k == 1 else many or one + 's'}"


def check_fibre(c, checks=()):
    """The answer fibre of one transcript, re-derived (module docstring)."""
    only(c, FIELDS, "fibre", optional=("truth",))
    d = integer(c["dim"], "fibre.dim", 1, MAX_DIM)
    H0 = integer(c["H0"], "fibre.H0", 1, MAX_H0)
    U, X = matrix(c["U"], "fibre.U", d, d), matrix(c["X"], "fibre.X", d, d)
    require(det(U) != 0 and det(X) != 0, "fibre: det U = 0 or det X = 0")
    fams = [{"a": [Fraction(int(i in uk)) for i in range(d)],
             "b": [Fraction(int(j in xk)) for j in range(d)], "x": combo(X, xk),
             "x1": xk == (0,), "col1": uk if len(uk) == 1 and xk == (0,) else None}
            for uk, xk, _ in families(d)]
    nsched, queries = len(fams), schedule_queries(U, X, H0)
    for k, e in enumerate(listed(c["extra"], "fibre.extra", MAX_EXTRA)):
        only(e, ("a", "b"), f"fibre.extra[{k}]")
        a, b = vector(e["a"], f"fibre.extra[{k}].a", d), vector(e["b"], f"fibre.extra[{k}].b", d)
        require(any(a) and any(b), f"fibre.extra[{k}]: a = 0 or b = 0")
        u = [sum((a[i] * U[i][k2] for i in range(d)), Fraction(0)) for k2 in range(d)]
        x = [sum((b[j] * X[j][k2] for j in range(d)), Fraction(0)) for k2 in range(d)]
        xu = [p + q for p, q in zip(x, u)]
        queries += [[list(xu) for _ in range(m)] + [list(x)] for m in range(1, 2 * H0 + 1)]
        fams.append({"a": a, "b": b, "x": x, "x1": False, "col1": None})
    answers = [y for _, y in read_transcript(c["transcript"], d, queries, "fibre.transcript")]
    # 2. the family functions, and ρ, v
    fun = listed(c["functions"], "fibre.functions", len(fams))
    require(len(fun) == len(fams), f"fibre: {len(fun)} functions for {len(fams)} families")
    q0 = _rational(answers[0], "fibre.transcript[0]")
    for k, (fam, f) in enumerate(zip(fams, fun)):
        K, poles = _function(f, H0, f"fibre.functions[{k}]")
        fam["K"], fam["poles"] = K, poles
        for m in range(1, 2 * H0 + 1):          # family k's sample m is query 2H0·k + m
            require(same_element(_g_element(K, poles, m), answers[2 * H0 * k + m]),
                    f"fibre.functions[{k}]: G({m}) ≠ the answer of query {2 * H0 * k + m} "
                    f"in Q(t)")
    rho = [None] * d
    for fam in fams:
        if fam["col1"] is not None:
            rho[fam["col1"][0]] = fam["K"] - q0
    v = solve_unique(U, rho)
    for k, fam in enumerate(fams):
        g0 = fam["K"] + sum((cp for _, cp in fam["poles"]), Fraction(0))
        want = q0 if fam["x1"] else sum((p * q for p, q in zip(v, fam["x"])), Fraction(0))
        require(g0 == want, f"fibre.functions[{k}]: G(0) = {g0} but the m = 0 sample is {want}")
    # 3. the search
    order = [integer(k, "fibre.order") for k in listed(c["order"], "fibre.order", len(fams))]
    require(sorted(order) == list(range(len(fams))), "fibre: order is not a permutation")
    walk = _Walk(d, fams, order, nsched)
    tree = listed(c["tree"], "fibre.tree", H0 + 1)
    require(len(tree) == H0 + 1, "fibre: one tree per head count H′ = 0…H0")
    for H, root in enumerate(tree):
        at = f"fibre.tree[{H}]"
        require(isinstance(root, dict) and len(root) == 2 and root.get("heads") == H and
                type(root["heads"]) is int and
                (set(root) - {"heads"}) <= {"closed", "children", "piece"},
                f"{at}: a root is {{heads: {H}, closed | children | piece}}")
        req, ne = root_conditions(H, d, rho)
        walk.W, walk.R = [], req
        walk.node(root, H, ne, [(0, H)] if H else [], 0, at)
    # 4. the pieces
    recs = listed(c["pieces"], "fibre.pieces", len(walk.pieces))
    require(len(recs) == len(walk.pieces), f"fibre: {len(recs)} pieces recorded, "
            f"{len(walk.pieces)} in the tree")
    dims, models = [], []
    Ui, XiT = _inverse(U), [list(row) for row in zip(*_inverse(X))]
    budget, price = ELIMINATION_BASE + ELIMINATION_PER_NODE * walk.nodes, 0
    for k, (p, (H, weq, req, ne)) in enumerate(zip(recs, walk.pieces)):
        S, r = _piece(p, H, d, f"fibre.pieces[{k}]")
        price += sum(len(e) * n * min(len(e), n) for e, n in ((weq, H * d * d), (req, H * d)))
        require(price <= budget, f"fibre.pieces[{k}]: re-solving the pieces would cost {price:,} "
                f"row operations after {walk.nodes} nodes, over the {budget:,} allowed, refused")
        xw = [S[h][i][j] for h in range(H) for i in range(d) for j in range(d)]
        xr = [r[h][i] for h in range(H) for i in range(d)]
        require(all(_holds(f, val, xw) for f, val in weq) and
                all(_holds(f, val, xr) for f, val in req),
                f"fibre.pieces[{k}]: the point does not satisfy the piece's equations")
        for idx, (system, comps) in enumerate(ne):
            require(not all(_holds(f, val, xw if system == "W" else xr) for f, val in comps),
                    f"fibre.pieces[{k}]: the point violates \"≠\" condition {idx}")
        dims.append((H, H * d * d - _rank(weq) + H * d - _rank(req)))
        models.append([(tuple(map(tuple, _mul(_mul(Ui, Sh), XiT))),
                        tuple(row[0] for row in _mul(Ui, [[y] for y in rh])))
                       for Sh, rh in zip(S, r)])
    # 5. the verdict
    truth = heads(c["truth"], d, "fibre.truth") if "truth" in c else None
    counts = (f"{len(queries)} queries = the P2 schedule rebuilt + "
              f"{_n(len(fams) - nsched, 'extra family', 'extra families')}; "
              f"{_n(len(fams), 'family function')} re-derived exactly in Q(t); {walk.nodes} "
              f"branches re-walked ({walk.by_c} closed by 0 = c ≠ 0, {walk.by_ne} by a forced ≠, "
              f"{walk.dominated} dominated)")
    extras_last = sorted(order[nsched:]) == list(range(nsched, len(fams)))
    # with extra families the P2 fibre's branches are not solved, only counted: an upper bound
    p2 = (f"P2 fibre at most {_n(walk.p2, 'piece')} (branches open after the schedule's "
          f"families; only the final fibre's pieces are solved)" if len(fams) > nsched
          else f"P2 fibre {_n(len(walk.pieces), 'piece')}")
    p2 = (p2 if extras_last
          else "the order interleaves the extra families (no P2-only count)")
    if c["model"] is None:
        if truth is not None:
            for k, q in enumerate(queries):
                require(same_element(attention(truth, q), answers[k]),
                        f"fibre: the true model does not reproduce answer {k}")
        shapes = ", ".join(f"H′={H} dim {dim}" for H, dim in dims) or "empty"
        return (f"fibre d={d} H0={H0}: {counts}; {p2}; final fibre {_n(len(dims), 'piece')} "
                f"({shapes}): not certified unique")
    model = heads(c["model"], d, "fibre.model", H0)
    require(is_canonical(model), "fibre: the model is not canonical (repeated W or a zero v)")
    require(dims, "fibre: a model is recorded but the fibre is empty")
    require(all(dim == 0 for _, dim in dims), "fibre: a piece of positive dimension")
    require(all(multiset(m) == multiset(model) for m in models),
            "fibre: a piece is not the recorded model")
    for k, q in enumerate(queries):
        require(same_element(attention(model, q), answers[k]),
                f"fibre: the model does not reproduce answer {k} exactly in Q(t)")
    if truth is not None:
        require(canonical_form(truth) == multiset(model),
                "fibre: the canonical form of the true model ≠ the model (as multisets)")
    return (f"fibre d={d} H0={H0}: {counts}; {p2}; final fibre 1 point "
            f"({_n(len(dims), 'piece')}): every canonical model with "
            f"≤ H0 heads that gives these answers is the recorded model"
            f"{' (= the canonical form of the true model)' if truth is not None else ''} — "
            f"no genericity theorem used")
