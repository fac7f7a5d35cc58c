"""The answer fibre of a copy-count transcript (beyond P2: P2's "probability one" made a
certificate; docs/design.md §11): every canonical model with ≤ H₀ heads that gives the
transcript's answers, as a finite list of explicit pieces, found by an exhaustive search
whose every closed branch carries an exact witness.

**Coordinates.** In the bases U, X a head (W, v_h) is S = U W Xᵀ (d² numbers) and
r = U v_h (d numbers); a family I(Σ a_i u_i, Σ b_j x_j) sees the score aᵀ S b and the residue
−aᵀ r (:mod:`.family_function`). Every model M′ = {(S_h, r_h)} with H′ ≤ H₀ canonical heads
that reproduces the transcript has, in every family f, its heads in classes of equal score;
the classes with a non-zero residue sum are exactly the observed poles (σ_p, c_p) of G_f, the
others (*hidden* classes) have residue sum 0; and Σ_h r_h = U v = ρ, since v is fixed by q₀
and the constants K of the families I(u_i, x₁). Conversely every such labelled solution
reproduces every answer: its G_f has the observed poles, residues and K.

**The labelling.** For each family, each head gets a label: a pole index p < n_f, *null*
(n_f: its residue there is 0 and its score is free), or a hidden class n_f + 1 + k (two or more
heads of equal score whose residues sum to 0). A labelling gives linear equations

* W-system: aᵀ S_h b = σ_p for a head at pole p; aᵀ (S_g − S_h) b = 0 for each head h of a
  hidden class after its first head g;
* r-system: Σ_{h at p} aᵀ r_h = −c_p for each pole; Σ_{h in k} aᵀ r_h = 0 for each hidden
  class; aᵀ r_h = 0 for each null head; and, once per head count, Σ_h r_h[i] = ρ_i;

and, per head count, the "≠" conditions of a canonical model: r_h ≠ 0 and S_g ≠ S_h for
g < h. These equations are *sufficient*: the heads of any score value are the heads of one
pole (their residues sum to c_p), whole hidden classes (sum 0) and null heads (0), so G_f is
reproduced. They are *necessary* for some labelling: put the heads of a pole's score at that
pole, the others with residue 0 as null, the rest into classes by score. The fibre is the
union, over H′ = 0…H₀ and all labellings, of the affine solution sets minus the "≠" sets; over
an infinite field such a set is non-empty exactly when the equations are consistent and no
"≠" condition is forced by them, and then it has rational points (the equations are rational).
The pieces may overlap; their union is the fibre.

**The search.** Families are labelled one at a time in :data:`Fibre.order`. Head permutations
are factored out: heads with the same labels so far form contiguous blocks, and labels are
non-decreasing inside a block; hidden class numbers appear in order of first use
(restricted growth). Every orbit of labellings under head permutations has such a
representative. After each labelling the equations are reduced (exact rational elimination
that keeps, for every row, its combination of the original equations); a branch is closed
when an equation reduces to 0 = c ≠ 0, or a "≠" condition is forced — its witness is that
combination. A branch that puts a head h at a pole shared with other heads, where h's residue
aᵀ r_h is already forced to 0, is *dominated*: its solution set lies inside that of the
sibling with h null (the same equations, one score fewer), so it is not expanded — its
witness is the combination forcing aᵀ r_h = 0. Leaves are *pieces*: a point and directions of
each system's solution space and a representative point satisfying the "≠" conditions.

The equation and condition order is a contract with the stdlib checker
(``proofs_checks/checker/fibre.py``), which re-walks the search from the certificate.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction

from flint import fmpq

from ...errors import LearningFailure

__all__ = ["Fibre", "Piece", "compute_fibre", "labellings", "refine", "canonical",
           "root_conditions", "family_conditions", "dominated", "FibreTooLarge", "MAX_NODES",
           "MAX_ROW_OPS"]

#: the search gives up (named failure) beyond this many nodes: about a minute of CPU at
#: d = 3, H₀ = 3 (3 ms a node there; 0.1–0.3 ms at d = 2), where (H, H₀) = (1, 3) and (2, 3)
#: pass it; every other size up to (3, 3) certified below 12,000 nodes
MAX_NODES = 25_000
#: ... and beyond this many row operations (:data:`ROW_OPS`): the nodes' cost grows with d and
#: H₀, so the node count alone does not bound the time (d = 4, H₀ = 3 ran for minutes below
#: MAX_NODES); this is about a minute of CPU
MAX_ROW_OPS = 60_000_000


def row_budget(d: int) -> int:
    """The row-operation budget of a search at dimension d: MAX_ROW_OPS up to d = 4, then
    MAX_ROW_OPS·(4/d)³ — a row operation's entries grow with d (measured: at (d, H, H₀) =
    (8, 6, 6) 6·10⁷ of them took 349 s of CPU and 2.7 GB, 7.5·10⁶ take under a minute)."""
    return MAX_ROW_OPS if d <= 4 else MAX_ROW_OPS * 64 // d ** 3
#: row operations done by :meth:`Echelon.reduce` in this process (entries updated): the
#: search's deterministic measure of its work, the same on every machine
ROW_OPS = [0]


class FibreTooLarge(LearningFailure):
    """The fibre search exceeded its node budget."""

    reason = "fibre-too-large"


# ---------------------------------------------------------------------- linear algebra
def _q(x):
    """x as a flint fmpq (the echelon forms' number type: exact, and C-speed)."""
    if isinstance(x, fmpq):
        return x
    x = Fraction(x)
    return fmpq(x.numerator, x.denominator)


def _frac(x) -> Fraction:
    return Fraction(int(x.p), int(x.q)) if isinstance(x, fmpq) else Fraction(x)


def _qform(form: dict) -> dict:
    return {k: _q(x) for k, x in form.items()}


class Echelon:
    """Semi-echelon rows (pivot, coefficients, rhs, combination of the original equations):
    every row is reduced by the rows before it, so reducing by the rows in order leaves a
    vector with zeros at every pivot."""

    __slots__ = ("rows",)

    def __init__(self, rows=()):
        self.rows = list(rows)

    def reduce(self, vec: dict, rhs: Fraction, lam: dict):
        """Subtract rows from (vec, rhs) with their combinations subtracted from lam (numbers
        as fmpq)."""
        vec, lam, rhs = _qform(vec), _qform(lam), _q(rhs)
        for pivot, coeffs, r_rhs, combo in self.rows:
            c = vec.get(pivot)
            if not c:
                continue
            ROW_OPS[0] += len(coeffs) + len(combo)
            for k, x in coeffs.items():
                y = vec.get(k, 0) - c * x
                if y:
                    vec[k] = y
                else:
                    vec.pop(k, None)
            rhs = rhs - c * r_rhs
            for e, x in combo.items():
                y = lam.get(e, 0) - c * x
                if y:
                    lam[e] = y
                else:
                    lam.pop(e, None)
        return vec, rhs, lam

    def add(self, coeffs: dict, rhs: Fraction, eq: int):
        """(new Echelon, None) or (None, witness): the witness is the combination whose left
        side is 0 and right side is c ≠ 0."""
        vec, rhs, lam = self.reduce(coeffs, rhs, {eq: fmpq(1)})
        if not vec:
            if rhs != 0:
                return None, lam
            return self, None
        pivot = min(vec)
        inv = 1 / vec[pivot]
        row = (pivot, {k: x * inv for k, x in vec.items()}, rhs * inv,
               {e: x * inv for e, x in lam.items()})
        return Echelon(self.rows + [row]), None

    def forced(self, phi: dict):
        """(λ, value) if φ is constant on the solution set — φ = Σ_e λ_e·(left side of
        eq_e) and the constant is Σ_e λ_e·(right side) —, else None."""
        vec, rhs, lam = self.reduce(phi, fmpq(0), {})
        if vec:
            return None
        return {e: -x for e, x in lam.items()}, -rhs

    def solution(self, nvars: int):
        """A point (free variables 0) and a basis of directions of {x : rows hold}."""
        pivots = {}
        rows = [list(r) for r in self.rows]
        # back-substitute into reduced row echelon form (pivot columns cleared above)
        for idx in range(len(rows) - 1, -1, -1):
            p, coeffs, rhs, _ = rows[idx]
            for jdx in range(idx):
                q, co2, rhs2, cb2 = rows[jdx]
                c = co2.get(p)
                if c:
                    co2 = dict(co2)
                    for k, x in coeffs.items():
                        y = co2.get(k, 0) - c * x
                        if y:
                            co2[k] = y
                        else:
                            co2.pop(k, None)
                    rows[jdx] = [q, co2, rhs2 - c * rhs, cb2]
        for p, coeffs, rhs, _ in rows:
            pivots[p] = (coeffs, rhs)
        free = [k for k in range(nvars) if k not in pivots]
        point = [Fraction(0)] * nvars
        for p, (coeffs, rhs) in pivots.items():
            point[p] = _frac(rhs)
        directions = []
        for f in free:
            vec = [Fraction(0)] * nvars
            vec[f] = Fraction(1)
            for p, (coeffs, _) in pivots.items():
                vec[p] = -_frac(coeffs.get(f, 0))
            directions.append(vec)
        return point, directions


# ---------------------------------------------------------------------- the labelling
def labellings(n: int, H: int, blocks):
    """Every label list E (length H; labels 0…n−1 poles, n null, n + 1 + k hidden classes)
    with every pole used, every hidden class of two or more heads, hidden classes numbered in
    order of first use, and labels non-decreasing inside each block (contiguous (start, end)
    intervals), in lexicographic order."""
    return list(iter_labellings(n, H, blocks))


def iter_labellings(n: int, H: int, blocks):
    """:func:`labellings` one at a time (their number grows like a Bell number in H: the
    search charges each one to its budget as it comes, never holding them all); every step
    of the enumeration counts as a row operation (:data:`ROW_OPS`)."""
    first = {s for s, _ in blocks}
    E = [0] * H

    def rec(h, used, poles_left):
        ROW_OPS[0] += 1
        if H - h < len(poles_left):
            return
        if h == H:
            sizes = [E.count(n + 1 + k) for k in range(used)]
            if all(s >= 2 for s in sizes):
                yield list(E)
            return
        low = 0 if h in first else E[h - 1]
        for lab in range(low, n + 2 + used):
            E[h] = lab
            yield from rec(h + 1, used + (lab == n + 1 + used),
                           poles_left - {lab} if lab < n else poles_left)
        E[h] = 0

    yield from rec(0, 0, frozenset(range(n)))


def canonical(E, blocks):
    """E with the labels of each block sorted (an equivalent labelling under head
    permutations that keep the history)."""
    out = list(E)
    for s, e in blocks:
        out[s:e] = sorted(out[s:e])
    return out


def refine(blocks, E):
    """Split each block where the labels change."""
    out = []
    for s, e in blocks:
        start = s
        for h in range(s + 1, e):
            if E[h] != E[h - 1]:
                out.append((start, h))
                start = h
        out.append((start, e))
    return out


# ---------------------------------------------------------------------- equations
def _w(h, i, j, d):
    return (h * d + i) * d + j


def _score_form(fam, h, d, sign=Fraction(1)):
    out = {}
    for i, ai in enumerate(fam.a):
        if not ai:
            continue
        for j, bj in enumerate(fam.b):
            if bj:
                out[_w(h, i, j, d)] = sign * Fraction(ai) * Fraction(bj)
    return out


def _residue_form(fam, heads, d):
    out = {}
    for h in heads:
        for i, ai in enumerate(fam.a):
            if ai:
                out[h * d + i] = out.get(h * d + i, 0) + Fraction(ai)
    return {k: x for k, x in out.items() if x}


def _combine(p, q):
    out = dict(p)
    for k, x in q.items():
        y = out.get(k, 0) + x
        if y:
            out[k] = y
        else:
            out.pop(k, None)
    return out


def root_conditions(H: int, d: int, rho):
    """(r-equations, "≠" conditions) of a head count H′ (module docstring; the checker's
    contract): Σ_h r_h[i] = ρ_i; then r_h ≠ 0 for each h, then S_g ≠ S_h for g < h. A
    condition is (system, [(form, value), ...]): violated when every component is forced."""
    req = [({h * d + i: Fraction(1) for h in range(H)}, Fraction(rho[i])) for i in range(d)]
    ne = [("r", [({h * d + i: Fraction(1)}, Fraction(0)) for i in range(d)]) for h in range(H)]
    for g in range(H):
        for h in range(g + 1, H):
            ne.append(("W", [({_w(g, i, j, d): Fraction(1), _w(h, i, j, d): Fraction(-1)},
                              Fraction(0)) for i in range(d) for j in range(d)]))
    return req, ne


def residue_form(fam, h, d):
    """aᵀ r_h: head h's residue in the family is its negative."""
    return _residue_form(fam, [h], d)


def family_conditions(fam, E, d):
    """(W-equations, r-equations) of labelling E of family ``fam`` (a
    :class:`~.family_function.FamilyFunction`), in the checker's order: W — for each head
    in order, its score at its pole, or its score equal to its hidden class's first head's;
    r — for each label in increasing order, the residue sum of its heads (−c_p at a pole,
    0 for a hidden class), with each null head on its own (0)."""
    n, H = len(fam.poles), len(E)
    first_of = {}
    for h, lab in enumerate(E):
        first_of.setdefault(lab, h)
    weq = []
    for h, lab in enumerate(E):
        if lab < n:
            weq.append((_score_form(fam, h, d), fam.poles[lab][0]))
        elif lab > n and first_of[lab] != h:
            weq.append((_combine(_score_form(fam, first_of[lab], d),
                                 _score_form(fam, h, d, Fraction(-1))), Fraction(0)))
    req = []
    for lab in sorted(first_of):
        members = [h for h in range(H) if E[h] == lab]
        if lab == n:
            req.extend((_residue_form(fam, [h], d), Fraction(0)) for h in members)
        else:
            value = -fam.poles[lab][1] if lab < n else Fraction(0)
            req.append((_residue_form(fam, members, d), value))
    return weq, req


def dominated(fam, E, node_r, d):
    """(h, λ, E′) when labelling E puts a head h at a pole shared with other heads while the
    r-equations so far force aᵀ r_h = 0 (λ their combination), E′ the canonical sibling with
    h null; else None (module docstring)."""
    n = len(fam.poles)
    for h, lab in enumerate(E):
        if lab < n and E.count(lab) >= 2:
            got = node_r.forced(residue_form(fam, h, d))
            if got is not None and got[1] == 0:
                return h, got[0]
    return None


# ---------------------------------------------------------------------- search state
@dataclass
class _Node:
    H: int
    W: Echelon
    r: Echelon
    weqs: list
    reqs: list
    ne: list
    blocks: list
    path: list


def _add_all(ech, new, start):
    for k, (form, value) in enumerate(new):
        ech, wit = ech.add(form, value, start + k)
        if ech is None:
            return None, wit
    return ech, None


def _violated(node):
    """The first forced "≠" condition: (index, [λ per component]) or None."""
    for idx, (system, comps) in enumerate(node.ne):
        ech = node.W if system == "W" else node.r
        lams = []
        for form, value in comps:
            got = ech.forced(form)
            if got is None or got[1] != _q(value):
                break
            lams.append(got[0])
        else:
            return idx, lams
    return None


def _closed_by(node):
    """None if the node is open, else the witness of its closure."""
    bad = _violated(node)
    if bad is not None:
        idx, lams = bad
        return {"ne": idx, "combinations": lams}
    return None


@dataclass
class Piece:
    """One piece of the fibre: H′ heads, the labelling path, each system's point and
    directions, the "≠" conditions, and a representative point (coefficients of the
    directions) that satisfies them."""

    heads: int
    path: list
    W_point: list
    W_directions: list
    r_point: list
    r_directions: list
    W_coefficients: list
    r_coefficients: list
    ne: list = field(repr=False, default_factory=list)

    @property
    def dimension(self) -> int:
        return len(self.W_directions) + len(self.r_directions)

    def representative(self):
        """(S, r) lists of the representative point: S[h] d×d, r[h] length d."""
        W = _point(self.W_point, self.W_directions, self.W_coefficients)
        r = _point(self.r_point, self.r_directions, self.r_coefficients)
        H = self.heads
        d = len(r) // H if H else 0
        S = [[W[(h * d + i) * d:(h * d + i + 1) * d] for i in range(d)] for h in range(H)]
        return S, [r[h * d:(h + 1) * d] for h in range(H)]


def _point(p, dirs, coeffs):
    out = list(p)
    for c, v in zip(coeffs, dirs):
        if c:
            out = [x + c * y for x, y in zip(out, v)]
    return out


def _holds(ne, Wx, rx):
    for system, comps in ne:
        x = Wx if system == "W" else rx
        if all(sum((c * x[k] for k, c in form.items()), Fraction(0)) == value
               for form, value in comps):
            return False
    return True


def _representative(node, d, rng):
    H = node.H
    Wp, Wd = node.W.solution(H * d * d)
    rp, rd = node.r.solution(H * d)
    for attempt in range(2000):
        span = 1 + attempt // 20
        cw = [Fraction(rng.randint(-span, span)) if attempt else Fraction(0) for _ in Wd]
        cr = [Fraction(rng.randint(-span, span)) if attempt else Fraction(0) for _ in rd]
        if _holds(node.ne, _point(Wp, Wd, cw), _point(rp, rd, cr)):
            return Piece(H, [list(E) for E in node.path], Wp, Wd, rp, rd, cw, cr, node.ne)
    raise RuntimeError("no representative point found for a piece whose conditions are not "
                       "forced (cannot happen over an infinite field)")


# ---------------------------------------------------------------------- the fibre
@dataclass
class Fibre:
    """The answer fibre (module docstring): ``pieces``, the search ``tree`` (for the
    certificate), the family ``order``, and counts.  :meth:`extend` labels one more family
    below every piece (the tree grows at its leaves; nothing above them is redone)."""

    d: int
    H0: int
    families: list
    rho: list
    order: list
    pieces: list
    tree: list
    nodes: int
    closed: int
    dominated: int
    _search: object = field(default=None, repr=False)

    def unique_model(self):
        """The one model of the fibre as a set of (S, r) heads if every piece is a point
        and all are the same model, else None."""
        models = set()
        for p in self.pieces:
            if p.dimension:
                return None
            S, r = p.representative()
            models.add(frozenset((tuple(tuple(row) for row in Sh), tuple(rh))
                                 for Sh, rh in zip(S, r)))
        return next(iter(models)) if len(models) == 1 else None

    def extend(self, family, max_nodes: int = MAX_NODES) -> "Fibre":
        """The fibre of the families and ``family`` (labelled last): every piece's node is
        expanded by the new family's labellings, in place of its leaf in the tree."""
        search = self._search
        search.max_nodes = self.nodes + max_nodes
        search.ops_start = ROW_OPS[0]
        self.families.append(family)
        self.order.append(len(self.families) - 1)
        search.families, search.order = self.families, self.order
        leaves, search.leaves, search.pieces = search.leaves, [], []
        for node, slot in leaves:
            del slot["piece"]
            slot.update(search.expand(node, len(self.order) - 1))
        self.pieces = search.pieces
        self.nodes, self.closed, self.dominated = (search.count["nodes"], search.count["closed"],
                                                   search.count["dominated"])
        return self


class _Search:
    """The labelling search (module docstring, "The search")."""

    def __init__(self, d, families, order, max_nodes, seed):
        self.d, self.families, self.order, self.max_nodes = d, families, order, max_nodes
        self.ops_start = ROW_OPS[0]
        self.rng = random.Random(seed)
        self.pieces, self.leaves = [], []
        self.count = {"nodes": 0, "closed": 0, "dominated": 0}

    def closed(self, why):
        self.count["closed"] += 1
        return {"closed": why}

    def budget(self, node):
        """Stop (FibreTooLarge) past the node or row-operation budget: checked at every node
        and at every child, so a node with many children that close at once cannot outrun it."""
        d, count = self.d, self.count
        if count["nodes"] > self.max_nodes:
            raise FibreTooLarge(f"the answer fibre's search passed {self.max_nodes} nodes at "
                                f"d={d}, H0 ≥ {node.H}: too large to certify here",
                                nodes=count["nodes"])
        if ROW_OPS[0] - self.ops_start > row_budget(d):
            raise FibreTooLarge(f"the answer fibre's search passed {row_budget(d):,} row "
                                f"operations ({count['nodes']} nodes) at d={d}, H0 ≥ {node.H}: "
                                f"too large to certify here", nodes=count["nodes"],
                                row_operations=ROW_OPS[0] - self.ops_start)

    def expand(self, node, depth):
        d, count = self.d, self.count
        count["nodes"] += 1
        self.budget(node)
        if depth == len(self.order):
            self.pieces.append(_representative(node, d, self.rng))
            slot = {"piece": len(self.pieces) - 1}
            self.leaves.append((node, slot))
            return slot
        fam = self.families[self.order[depth]]
        children = []
        for E in iter_labellings(len(fam.poles), node.H, node.blocks):
            self.budget(node)
            ch = self.child(node, fam, E, depth)    # the dict itself: a leaf's slot grows
            ch["labels"] = E                        # in place when the fibre is extended
            children.append(ch)
        return {"children": children}

    def child(self, node, fam, E, depth):
        d = self.d
        dom = dominated(fam, E, node.r, d)
        if dom is not None:
            h, lam = dom
            E2 = list(E)
            E2[h] = len(fam.poles)
            self.count["dominated"] += 1
            return {"dominated": {"head": h, "combination": lam,
                                  "by": canonical(E2, node.blocks)}}
        weq, req = family_conditions(fam, E, d)
        W, wit = _add_all(node.W, weq, len(node.weqs))
        if W is None:
            return self.closed({"system": "W", "combination": wit})
        r, wit = _add_all(node.r, req, len(node.reqs))
        if r is None:
            return self.closed({"system": "r", "combination": wit})
        child = _Node(node.H, W, r, node.weqs + weq, node.reqs + req, node.ne,
                      refine(node.blocks, E), node.path + [E])
        why = _closed_by(child)
        if why is not None:
            return self.closed(why)
        return self.expand(child, depth + 1)


def compute_fibre(d: int, H0: int, families, rho, order=None, max_nodes: int = MAX_NODES,
                  seed: int = 0) -> Fibre:
    """The answer fibre of the families' functions (:class:`~.family_function.FamilyFunction`)
    under ≤ H₀ heads and Σ_h r_h = ρ (module docstring), labelling the families in ``order``
    (default: as given)."""
    order = list(range(len(families))) if order is None else list(order)
    if sorted(order) != list(range(len(families))):
        raise ValueError("order must be a permutation of the families")
    search = _Search(d, list(families), order, max_nodes, seed)
    tree = []
    for H in range(H0 + 1):
        req, ne = root_conditions(H, d, rho)
        r, wit = _add_all(Echelon(), req, 0)
        if r is None:
            tree.append({"heads": H, **search.closed({"system": "r", "combination": wit})})
            continue
        node = _Node(H, Echelon(), r, [], req, ne, [(0, H)] if H else [], [])
        why = _closed_by(node)
        tree.append({"heads": H, **(search.closed(why) if why is not None
                                    else search.expand(node, 0))})
    c = search.count
    return Fibre(d, H0, search.families, [Fraction(x) for x in rho], order, search.pieces, tree,
                 c["nodes"], c["closed"], c["dominated"], search)
