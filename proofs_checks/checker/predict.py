"""The multi-head learner's outcome re-derived from the true model and the draw (P2;
docs/design.md §4.3) — the checker's own small copy of the learner's rules, so that the
outcome of a Monte Carlo trial is not the prover's word.

On the exact backend every copy-count family I(u, x) interpolates to its *reduced* partial
fractions: heads with equal score uᵀW_h x merge (residues −v_h·u add) and zero residues drop.
The learner then applies, in this order:

1. det U = 0 or det X = 0 → ``singular-basis`` (before any query);
2. pole counts, u by u in schedule order: families sharing u with different counts →
   ``colliding-poles``; a common count different from that of I(u_1, x_1) → ``invisible-head``;
3. matching, I(u_1+u_i, x_1) for i = 2…d, then I(u_i, x_1+x_j) for j = 2…d, i = 1…d: a
   reference head with no candidate → ``not-attention``; else one with several candidates,
   or two reference heads on one candidate → ``ambiguous-matching``;
4. Σ_h v_h ≠ v → ``not-attention``;
5. the canonical form of the recovered heads: equal to the true one → ``recovered``;
   otherwise it either reproduces every answer of the schedule (``wrong-model``, possible only
   in the bad set, see the non-uniqueness lemma in docs/evidence.md) or not
   (``certification-failed``).
"""

from __future__ import annotations

from fractions import Fraction

from .linalg import det, solve_unique
from .qt import attention, canonical_form, same_element
from .run_multi_head import combo, dot, families, schedule_queries, score

OUTCOMES = ("recovered", "wrong-model", "singular-basis", "colliding-poles", "invisible-head",
            "ambiguous-matching", "not-attention", "certification-failed")


def reduced(model, u, x):
    """The reduced (score, residue) pairs of I(u, x)."""
    groups = {}
    for W, v in model:
        s = score(W, u, x)
        groups[s] = groups.get(s, Fraction(0)) - dot(v, u)
    return [(s, c) for s, c in groups.items() if c != 0]


def _match(ref, fam, sumfam, shared_u):
    cands_of = []
    for s_a, c_a in ref:
        cands = []
        for b, (s_b, c_b) in enumerate(fam):
            if shared_u and c_b != c_a:
                continue
            want = c_a if shared_u else c_a + c_b
            if any(s_c == s_a + s_b and c_c == want for s_c, c_c in sumfam):
                cands.append(b)
        cands_of.append(cands)
    if any(not cs for cs in cands_of):
        return "not-attention"
    if any(len(cs) > 1 for cs in cands_of):
        return "ambiguous-matching"
    chosen = [cs[0] for cs in cands_of]
    if len(set(chosen)) != len(chosen):
        return "ambiguous-matching"
    return [fam[b] for b in chosen]


def _solve_columns(M, B):
    """Y with M·Y = B (M invertible, B a matrix), column by column."""
    cols = [solve_unique(M, [row[j] for row in B]) for j in range(len(B[0]))]
    return [[cols[j][i] for j in range(len(cols))] for i in range(len(M))]


def predict(model, U, X, H0):
    """(outcome, recovered canonical heads or None) of the learner on the oracle `model`
    (canonical heads) at the draw U, X with bound H0."""
    d = len(U)
    if det(U) == 0 or det(X) == 0:
        return "singular-basis", None
    fams = families(d)
    solved = {(uk, xk): reduced(model, combo(U, uk), combo(X, xk)) for uk, xk, _ in fams}
    H_star = len(solved[((0,), (0,))])
    by_u = {}
    for uk, xk, _ in fams:
        by_u.setdefault(uk, []).append(len(solved[(uk, xk)]))
    for counts in by_u.values():
        if len(set(counts)) > 1:
            return "colliding-poles", None
        if counts[0] != H_star:
            return "invisible-head", None
    ref = solved[((0,), (0,))]
    col = [ref]
    for i in range(1, d):
        got = _match(ref, solved[((i,), (0,))], solved[((0, i), (0,))], False)
        if isinstance(got, str):
            return got, None
        col.append(got)
    S = [[[None] * d for _ in range(d)] for _ in range(H_star)]
    C = [[None] * d for _ in range(H_star)]
    for i in range(d):
        for a, (s, c) in enumerate(col[i]):
            S[a][i][0], C[a][i] = s, c
    for j in range(1, d):
        for i in range(d):
            got = _match(col[i], solved[((i,), (j,))], solved[((i,), (0, j))], True)
            if isinstance(got, str):
                return got, None
            for a, (s, _) in enumerate(got):
                S[a][i][j] = s
    heads = []
    for a in range(H_star):
        Y = _solve_columns(U, S[a])                      # U·Y = S_a, Y = W Xᵀ
        Wt = _solve_columns(X, [list(r) for r in zip(*Y)])  # X·Wᵀ = Yᵀ
        W = tuple(tuple(r) for r in zip(*Wt))
        va = tuple(-x for x in solve_unique(U, C[a]))
        heads.append((W, va))
    v = [sum((h[1][k] for h in model), Fraction(0)) for k in range(d)]
    total = [sum((h[1][k] for h in heads), Fraction(0)) for k in range(d)]
    if total != v:
        return "not-attention", None
    got = canonical_form(heads)
    if got == canonical_form(model):
        return "recovered", sorted(got)
    for q in schedule_queries(U, X, H0):
        if not same_element(attention(sorted(got), q), attention(model, q)):
            return "certification-failed", None
    return "wrong-model", sorted(got)
