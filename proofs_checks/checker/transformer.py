"""Check kinds ``transformer`` and ``transformer-condition``: a one-layer Transformer with a
bias-free ReLU FFN learned from value queries (P1 one-layer reduction, P2 Transformer
extension; docs/design.md §1), re-derived exactly in Q(t) with certified ReLU signs.

T(X) = Σ_j w_j ReLU(z_j(X)), z_j(X) = Σ_h (V_h a_j)·p_h(X): each pre-activation is multi-head
attention with the heads (W_h, V_h a_j) — an element num/den of Q(t), t = e^{1/L}, computed
as :func:`.qt.attention` does but over one denominator for every unit (:class:`Pooled`) —
and on the units with z_j > 0 the answer is one more attention element with the heads
(W_h, Σ_{j active} w_j V_h a_j).  The sign of z_j is certified: 0 exactly when num
is the zero polynomial (t is transcendental), one sign when every coefficient has it, else by
:func:`.interval.laurent_sign` (interval arithmetic at t = e^{1/L}, e^s by a certified
series, precision doubled until the interval excludes 0).

A ``transformer`` record (fields ``learner``, ``dim``, ``run``, ``attention_calls``,
``model``, ``recovered``, ``transcript``) is checked as follows:

1. *ReLU signs*: at every oracle call, the recorded sign of every hidden unit of the true
   and of the recovered Transformer is the certified sign re-derived here;
2. *answers*: the answer of every call is computed here from the true Transformer (the
   oracle; an answer's exponents can exceed the strict reader's 40 digits at the FFN's
   bisected path points, so it is not recorded) and the recovered Transformer gives it
   exactly in Q(t);
3. *attention part*: the first ``attention_calls`` calls are the pairs (X, −X) of the
   queries of the ``run`` record at index ``run`` (checked by :mod:`.run` as any run: its
   transcript is the learner's schedule, its heads reproduce every answer, generic draw), and
   each run answer is T(X) − T(−X) of the true Transformer at its pair, exactly; the run's true model is the true
   Transformer's attention part (W_h, V_h A w) and its recovered heads are the recovered
   Transformer's, as canonical forms;
4. *function*: the kink forms (merged heads; f(P) = ℓ·P + Σ_n c_n|N_n·P|, ℓ = ½ Σ_j w_j U_j,
   one term per line of units U_j = (V_h a_j)_h, invisible head blocks dropped) of the two
   Transformers, computed here, are equal — so they are the same function of every sequence,
   since T(X) = f(Φ(X)) with Φ the merged heads' pooled tokens (the claim's fresh sequences
   sample what this proves);
5. *counts*: the transcript holds every call the oracle answered (``calls``); the attention
   part costs 2 calls per run query (P1: d² + d queries; P2: 4Hd² − 2H + 1), the FFN the
   rest (P1: length-1 queries).  The FFN's queries are adaptive (kinks along a random path,
   :mod:`exactattn.learners.transformer`) and are not rebuilt: their answers are checked as
   above, their number is the record's.

A ``transformer-condition`` record names a violated learner condition: ``VAw=0`` (a one-head
Transformer with V A w = 0 ≠ V A: T(X) − T(−X) ≡ 0, so W is not identifiable from the
antisymmetric queries) or ``C1`` (a head h with V_h A w = 0 ≠ V_h A beside a visible one:
invisible to the antisymmetric queries yet not to the FFN).  The violation is re-derived
exactly; that the learner refused (the ``reported`` failure) is recorded, not re-run.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .interval import laurent_sign
from .parse import integer, listed, matrix, only, require, string, vector
from .poly import padd
from .qt import (MAX_TERM_WORK, canonical_form, common_denominator, element, lift, lmul,
                 product_work, same_element, tokens_of)
from .run import run_of

FIELDS = ("kind", "learner", "dim", "run", "calls", "attention_calls", "model", "recovered",
          "transcript")
#: Transformer learner → the attention learner its run record must name
LEARNERS = {"transformer-p1": "single-head", "transformer-p2": "multi-head"}
MAX_DIM, MAX_HEADS, MAX_HIDDEN, MAX_CALLS = 8, 8, 32, 4000
CONDITIONS = {"VAw=0": "not-identifiable", "C1": "invisible-head"}


def read_transformer(data, d, where):
    """{"heads": [{"W", "V"}], "A", "w"} → (heads [(W, V)], A (d×k), w)."""
    only(data, ("heads", "A", "w"), where)
    hs = listed(data["heads"], f"{where}.heads", MAX_HEADS)
    require(hs, f"{where}: no head")
    heads = []
    for h, hd in enumerate(hs):
        only(hd, ("W", "V"), f"{where}.heads[{h}]")
        W = matrix(hd["W"], f"{where}.heads[{h}].W", d, d)
        V = matrix(hd["V"], f"{where}.heads[{h}].V", d, d)
        heads.append((tuple(map(tuple, W)), tuple(map(tuple, V))))
    A = matrix(data["A"], f"{where}.A", d)
    k = len(A[0])
    require(1 <= k <= MAX_HIDDEN and all(len(r) == k for r in A),
            f"{where}.A: expected d rows of 1…{MAX_HIDDEN} entries")
    w = vector(data["w"], f"{where}.w", k)
    return heads, A, w


def _dot(a, b):
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def _mv(V, a):
    return tuple(_dot(r, a) for r in V)


def unit_vectors(T, j):
    """(V_h a_j)_h, the value vectors of unit j's pre-activation heads."""
    heads, A, _ = T
    a = [r[j] for r in A]
    return [_mv(V, a) for _, V in heads]


def element_sign(e) -> int:
    """The certified sign of an element num/den of Q(t) (module docstring)."""
    num, den, L = e
    return _poly_sign(num, L) * _poly_sign(den, L)


def _poly_sign(p, L):
    cs = [c for c in p.values() if c]
    if not cs:
        return 0
    if all(c > 0 for c in cs):
        return 1
    if all(c < 0 for c in cs):
        return -1
    return laurent_sign(p, L)


class Pooled:
    """The pooled tokens of heads W_1 … W_H at one query, over one denominator: D = Π_h d_h
    (d_h = Σ_i t^{k_hi}, k_hi = L·x_iᵀW_h x_N) and N_hi = (Σ_tok t^{k} x_tok[i])·Π_{g≠h} d_g, so
    that attention with value vectors (v_h) is (Σ_{h,i} v_h[i]·N_hi, D, L) — the same element
    as :func:`.qt.attention`, computed once for every unit of a Transformer."""

    def __init__(self, Ws, tokens):
        xN = tokens[-1]
        scores = [[_dot(t, [_dot(r, xN) for r in W]) for t in tokens] for W in Ws]
        L = common_denominator([sc for row in scores for sc in row], "transformer")
        d = len(xN)
        product_work([{int(sc * L) for sc in row} for row in scores], "transformer",
                     len(Ws) + d + 1)
        dens, nums = [], []
        for row in scores:
            ks = [int(sc * L) for sc in row]
            den, num = {}, [{} for _ in range(d)]
            for k, t in zip(ks, tokens):
                den = padd(den, {k: Fraction(1)})
                for i in range(d):
                    if t[i]:
                        num[i] = padd(num[i], {k: t[i]})
            dens.append(den)
            nums.append(num)
        D = {0: Fraction(1)}
        for den in dens:
            D = lmul(D, den)
        self.basis = []
        for h, num in enumerate(nums):
            rest = {0: Fraction(1)}
            for g, den in enumerate(dens):
                if g != h:
                    rest = lmul(rest, den)
            self.basis.append([lmul(n, rest) for n in num])
        self.D, self.L = D, L

    def negated(self):
        """The pooled tokens at −X: the same scores (x_iᵀW x_N is even), p_h(−X) = −p_h(X)."""
        out = Pooled.__new__(Pooled)
        out.D, out.L = self.D, self.L
        out.basis = [[{k: -x for k, x in N.items()} for N in b] for b in self.basis]
        return out

    def element(self, values, where=None):
        """Σ_h v_h·p_h(X) for value vectors ``values`` as (num, D, L): one per W of the
        pooled heads, or, with ``where`` (the index of each value's W), one per head."""
        if where is not None:
            merged = [[Fraction(0)] * len(b) for b in self.basis]
            for k, v in zip(where, values):
                merged[k] = [a + b for a, b in zip(merged[k], v)]
            values = merged
        num = {}
        for basis, v in zip(self.basis, values):
            for N, c in zip(basis, v):
                if c:
                    for k, x in N.items():
                        y = num.get(k, 0) + c * x
                        if y:
                            num[k] = y
                        else:
                            num.pop(k)
        return num, self.D, self.L


def active_values(T, units, signs):
    """The value vectors Σ_{j: s_j > 0} w_j V_h a_j of T(X) on the units' signs (None when no
    unit is active: T(X) = 0)."""
    heads, _, w = T
    active = [j for j, s in enumerate(signs) if s > 0]
    if not active:
        return None
    return [tuple(sum((w[j] * units[j][h][i] for j in active), Fraction(0))
                  for i in range(len(W))) for h, (W, _) in enumerate(heads)]


def difference(a, b):
    """a − b in Q(t) (over a common L)."""
    (n1, d1, L1), (n2, d2, L2) = a, b
    L = L1 * L2 // math.gcd(L1, L2)
    n1, d1, n2, d2 = lift(n1, L // L1), lift(d1, L // L1), lift(n2, L // L2), lift(d2, L // L2)
    work = len(n1) * len(d2) + len(n2) * len(d1) + len(d1) * len(d2)
    require(work <= MAX_TERM_WORK, f"transformer: a difference in Q(t) would cost {work} term "
            f"products (at most {MAX_TERM_WORK}), refused")
    num = padd(lmul(n1, d2), {k: -c for k, c in lmul(n2, d1).items()})
    return num, lmul(d1, d2), L


def attention_part(T):
    """The heads (W_h, V_h A w) of T(X) − T(−X) (docs/design.md §1)."""
    heads, A, w = T
    Aw = [_dot(r, w) for r in A]
    return [(W, _mv(V, Aw)) for W, V in heads]


def kink_form(T):
    """(merged heads' W, ℓ, the set of terms (N, c)) with invisible head blocks dropped
    (module docstring, item 4)."""
    heads, A, w = T
    groups = {}
    for W, V in heads:
        groups[W] = V if W not in groups else tuple(
            tuple(x + y for x, y in zip(r, s)) for r, s in zip(groups[W], V))
    Ws = sorted(groups)
    d = len(Ws[0])
    n = len(Ws) * d
    units = []
    for j in range(len(w)):
        a = [r[j] for r in A]
        units.append((w[j], tuple(x for W in Ws for x in _mv(groups[W], a))))
    half = Fraction(1, 2)
    linear = [sum((half * wj * U[i] for wj, U in units), Fraction(0)) for i in range(n)]
    lines = {}
    for wj, U in units:
        lam = next((x for x in U if x), None)
        if lam is None or wj == 0:
            continue
        N = tuple(x / lam for x in U)
        lines[N] = lines.get(N, Fraction(0)) + half * wj * abs(lam)
    terms = {N: c for N, c in lines.items() if c}
    keep = [h for h in range(len(Ws))
            if any(linear[h * d:(h + 1) * d]) or any(any(N[h * d:(h + 1) * d]) for N in terms)]
    cut = lambda v: tuple(x for h in keep for x in v[h * d:(h + 1) * d])  # noqa: E731
    return (tuple(Ws[h] for h in keep), cut(linear),
            frozenset((cut(N), c) for N, c in terms.items()))


def _calls(data, d, T, R, where):
    """The transcript with items 1 and 2 checked: [(tokens, the true answer)] and the number
    of signs re-derived."""
    listed(data, where, MAX_CALLS)
    require(data, f"{where}: no oracle call")
    out, signs = [], 0
    units = {id(m): [unit_vectors(m, j) for j in range(len(m[2]))] for m in (T, R)}
    previous, values = {}, {}
    for k, entry in enumerate(data):
        at = f"{where}[{k}]"
        only(entry, ("tokens", "signs", "recovered_signs"), at)
        toks = tokens_of(entry["tokens"], d, f"{at}.tokens")
        neg = tuple(tuple(-a for a in t) for t in toks)
        pooled, shown = {}, None
        for what, model, key in (("true", T, "signs"), ("recovered", R, "recovered_signs")):
            rec = listed(entry[key], f"{at}.{key}", len(model[2]))
            require(len(rec) == len(model[2]) and all(type(s) is int and s in (-1, 0, 1)
                                                      for s in rec),
                    f"{at}.{key}: one sign −1, 0 or 1 per hidden unit of the {what} Transformer")
            Ws = tuple(sorted({W for W, _ in model[0]}))
            index = [Ws.index(W) for W, _ in model[0]]
            if Ws not in pooled:     # the call before was −X: its pooled tokens, negated
                before = previous.get((Ws, neg))
                pooled[Ws] = before.negated() if before is not None else Pooled(Ws, toks)
            P = pooled[Ws]
            for j, s in enumerate(rec):
                got = element_sign(P.element(units[id(model)][j], index))
                require(got == s, f"{at}: the ReLU sign of unit {j + 1} of the {what} "
                        f"Transformer is not {s} (certified sign {got})")
            pattern = (id(model), tuple(rec))
            if pattern not in values:
                values[pattern] = active_values(model, units[id(model)], rec)
            vals = values[pattern]
            y = ({}, {0: Fraction(1)}, 1) if vals is None else P.element(vals, index)
            if shown is None:
                shown = y
            else:       # over one denominator, equal numerators suffice
                same = (shown[1] is y[1] and shown[0] == y[0]) or same_element(y, shown)
                require(same, f"{at}: the recovered Transformer does not give the true "
                        f"Transformer's answer exactly in Q(t)")
            signs += len(rec)
        key_t = tuple(tuple(t) for t in toks)
        previous = {(Ws, key_t): P for Ws, P in pooled.items()}
        out.append((toks, shown))
    return out, signs


def check_transformer(c, checks):
    """Items 1–5 of the module docstring."""
    only(c, FIELDS, "transformer")
    learner = string(c["learner"], "learner")
    require(learner in LEARNERS, f"transformer: unknown learner {learner!r:.40}")
    d = integer(c["dim"], "dim", 1, MAX_DIM)
    T = read_transformer(c["model"], d, "model")
    R = read_transformer(c["recovered"], d, "recovered")
    run = run_of(checks, c["run"], "transformer")
    require(run.get("learner") == LEARNERS[learner] and run.get("dim") == d,
            f"transformer: the run record is not a {LEARNERS[learner]} run in dimension {d}")
    if learner == "transformer-p1":
        require(len(T[0]) == 1, "transformer: the P1 reduction is for one head")
    calls, n_signs = _calls(c["transcript"], d, T, R, "transcript")
    require(integer(c["calls"], "calls", 1, MAX_CALLS) == len(calls), f"transformer: "
            f"{len(calls)} calls recorded but the oracle answered {c['calls']}")
    # 3. the attention part
    rt = listed(run.get("transcript"), "run.transcript")
    n_att = integer(c["attention_calls"], "attention_calls", 0, len(calls))
    require(n_att == 2 * len(rt), f"transformer: {n_att} attention calls but the run has "
            f"{len(rt)} antisymmetric queries (two calls each)")
    for n, entry in enumerate(rt):
        toks = tokens_of(entry["tokens"], d, f"run.transcript[{n}].tokens")
        (x, ya), (mx, yb) = calls[2 * n], calls[2 * n + 1]
        require(x == toks and mx == [[-a for a in t] for t in toks],
                f"transformer: calls {2 * n}, {2 * n + 1} are not X, −X of run query {n}")
        require(same_element(difference(ya, yb), element(entry["answer"], f"run.answer[{n}]")),
                f"transformer: run answer {n} is not T(X) − T(−X) of the true Transformer at "
                f"its two calls")
    from .parse import heads as read_heads
    run_model = read_heads(run.get("model"), d, "run.model")
    run_rec = read_heads(run.get("recovered"), d, "run.recovered")
    require(canonical_form(run_model) == canonical_form(attention_part(T)),
            "transformer: the run's model is not the true Transformer's attention part")
    require(canonical_form(run_rec) == canonical_form(attention_part(R)),
            "transformer: the run's recovered heads are not the recovered Transformer's "
            "attention part (W_h, V_h A w)")
    # 4. the function
    require(kink_form(T) == kink_form(R), "transformer: the kink forms of the true and the "
            "recovered Transformer differ (not the same function)")
    # 5. counts
    ffn = calls[n_att:]
    if learner == "transformer-p1":
        require(all(len(t) == 1 for t, _ in ffn), "transformer: a P1 FFN query is not of "
                "length 1")
    H = len(kink_form(T)[0])
    longest = max(len(t) for t, _ in calls)
    return (f"transformer {learner} d={d} H={len(T[0])} k={len(T[2])}: {len(calls)} oracle "
            f"calls = {n_att} attention (2 × {len(rt)} antisymmetric queries of run record "
            f"{c['run']}) + {len(ffn)} FFN, max length {longest}; {n_signs} ReLU signs "
            f"re-derived (certified in Q(t)); every answer given exactly by the true and the "
            f"recovered Transformer; the run's answers = T(X) − T(−X) of the paired calls, its "
            f"heads = the recovered attention part (W_h, V_h A w); kink forms equal ({H} "
            f"visible head(s), {len(kink_form(T)[2])} term(s)): the same function on every "
            f"sequence")


def check_transformer_condition(c, checks):
    """The violated condition, re-derived (module docstring)."""
    only(c, ("kind", "condition", "model", "head", "reported"), "transformer-condition")
    cond = string(c["condition"], "condition")
    require(cond in CONDITIONS, f"transformer-condition: unknown condition {cond!r:.40}")
    heads = c["model"].get("heads") if isinstance(c["model"], dict) else None
    rows = c["model"].get("A") if isinstance(c["model"], dict) else None
    d = len(rows) if isinstance(rows, list) else 0
    integer(d, "model.A rows", 1, MAX_DIM)
    T = read_transformer(c["model"], d, "model")
    h = integer(c["head"], "head", 0, len(T[0]) - 1)
    require(isinstance(heads, list), "model.heads")
    W, V = T[0][h]
    _, A, w = T
    VA = [[_dot(r, [row[j] for row in A]) for j in range(len(w))] for r in V]
    VAw = [_dot(r, w) for r in VA]
    require(not any(VAw) and any(any(r) for r in VA),
            f"transformer-condition: head {h + 1} does not have V A w = 0 ≠ V A")
    if cond == "VAw=0":
        require(len(T[0]) == 1, "transformer-condition: VAw=0 is the one-head case")
        what = "T(X) − T(−X) ≡ 0: W is not identifiable from the antisymmetric queries"
    else:
        part = attention_part(T)
        require(any(any(v) for g, (_, v) in enumerate(part) if g != h),
                "transformer-condition: C1 needs another, visible head")
        what = (f"head {h + 1} is invisible to the antisymmetric queries (its v = V A w = 0) "
                f"but not to the FFN (V A ≠ 0)")
    reported = string(c["reported"], "reported")
    require(reported == CONDITIONS[cond], f"transformer-condition: the learner must report "
            f"{CONDITIONS[cond]}")
    return (f"transformer-condition {cond} d={d}: V A w = 0 ≠ V A re-derived exactly ({what}); "
            f"the learner's refusal ({reported}) is recorded, not re-run")


def _grid_params(p, keys, grid, checks, learner, condition):
    require(set(p) == set(keys), f"params: expected {{{', '.join(keys)}}}")
    got = []
    for c in checks:
        if isinstance(c, dict) and c.get("kind") == "transformer":
            m = c.get("model") if isinstance(c.get("model"), dict) else {}
            got.append((c.get("learner"), c.get("dim"), len(m.get("heads") or ()),
                        len(m.get("w") or ())))
    require(got == [(learner,) + g for g in grid], "params: the transformer records do not "
            "cover the grid in order")
    kinds = [c.get("kind") if isinstance(c, dict) else None for c in checks]
    require(kinds == ["run", "transformer"] * len(grid) + ["transformer-condition"],
            "params: expected a run and a transformer record per grid point, then the "
            "condition record")
    require(all(checks[2 * n + 1].get("run") == 2 * n for n in range(len(grid))),
            "params: each transformer record refers to the run record just before it")
    require(checks[-1].get("condition") == condition, f"params: the condition record must "
            f"be {condition}")


def _ints(x, where):
    require(isinstance(x, list) and x and all(type(a) is int and 1 <= a <= MAX_HIDDEN
                                              for a in x), f"params: {where} must be a list "
            f"of small positive integers")
    return x


def params_p1_transformer(p, checks):
    """One (run, transformer) pair per (d, k), in order, then the V A w = 0 record; ``fresh``
    is the claim's own sample (item 4 proves equality on every sequence)."""
    grid = [(d, 1, k) for d in _ints(p.get("d"), "d") for k in _ints(p.get("k"), "k")]
    _grid_params(p, ("d", "k", "fresh"), grid, checks, "transformer-p1", "VAw=0")


def params_p2_transformer(p, checks):
    """One (run, transformer) pair per (d, H, k), in order, then the C1 record."""
    grid = [(d, H, k) for d in _ints(p.get("d"), "d") for H in _ints(p.get("H"), "H")
            for k in _ints(p.get("k"), "k")]
    _grid_params(p, ("d", "H", "k", "fresh"), grid, checks, "transformer-p2", "C1")
