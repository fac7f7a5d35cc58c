"""One-layer Transformer with a bias-free ReLU feed-forward network (docs/design.md §1; P1 one-layer
reduction; P2 Transformer extension).

**Definition.**  Head h has a bilinear score matrix W_h ∈ R^{d×d} and an output map
V_h ∈ R^{d×d}; the FFN has A ∈ R^{d×k} and w ∈ Rᵏ and no biases:

    α_h(X) = softmax(X W_h x_N),   p_h(X) = Xᵀ α_h(X)            (pooled token of head h)
    a(X)   = Σ_h V_hᵀ p_h(X) ∈ Rᵈ                                  (attention output)
    T(X)   = wᵀ ReLU(Aᵀ a(X)) = Σ_j w_j ReLU(z_j(X)),  z_j(X) = Σ_h (V_h a_j)·p_h(X).

So the pre-activation z_j of hidden unit j is itself multi-head attention with the heads
(W_h, V_h a_j) — that is how T is evaluated here, on every backend (exact: z_j ∈ Q(t) and
ReLU uses the certified sign ExpElement.sign(), so T(X) is an exact element of Q(t)).

**Φ-coordinates.**  With Φ(X) = (p_1(X), …, p_H(X)) ∈ R^{Hd}, T(X) = f(Φ(X)) for the
bias-free ReLU network f(P) = Σ_j w_j ReLU(U_j·P), U_j = (V_1 a_j, …, V_H a_j).  Since
α_h(−X) = α_h(X) and ReLU(z) − ReLU(−z) = z, the antisymmetric part T(X) − T(−X) is the
multi-head regressor Σ_h (V_h A w)·p_h(X) (:meth:`OneLayerTransformer.attention_part`).

**Symmetries and canonical forms.**  (i) Heads with equal W_h have equal pooled tokens: they
merge (V_h summed); a head with V_h A = 0 is invisible.  (ii) Units: (w_j, U_j) and
(w_j/λ, λ U_j), λ > 0, are the same unit; units with positively parallel U merge (w summed);
units with w_j = 0 or U_j = 0 vanish.  (iii) V_h and A enter only through the products
V_h a_j.  Two forms are defined:

* the *unit form* (:meth:`OneLayerTransformer.unit_form`): merged heads (sorted by W), and the
  set of units (U, w) with U scaled so that its first nonzero entry is ±1, positively
  parallel units merged, zero units dropped — "hidden units up to permutation and positive
  rescaling";
* the *kink form* (:meth:`OneLayerTransformer.kink_form`), canonical for the function f: since
  ReLU(z) = (z + |z|)/2, f(P) = ℓ·P + Σ_n c_n |N_n·P| with ℓ = ½ Σ_j w_j U_j and one term per
  line of units (N_n with first nonzero entry 1, c_n = ½ Σ w_j |λ_j| over U_j = λ_j N_n),
  terms with c_n = 0 dropped.  Units on the same line with opposite orientations
  (antiparallel U) are *not* distinguished by the function (w ReLU(z) + w' ReLU(−z) only
  fixes w + w' and the linear part), so the kink form, not the unit form, is what the
  function determines.  Equal kink forms imply equal functions.

Only rational parameters give exact canonical forms; real ("mp") models are compared with a
tolerance (:func:`transformer_distance`).
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from itertools import product

from ..arith import get_backend
from .attention import (_fmt, _param, _positive_int, _unfmt, model_type, random_head,
                        read_header, validate_tokens)
from ..arith.numbers import to_matrix, to_vector

__all__ = ["OneLayerTransformer", "KinkForm", "Scalars", "relu", "random_transformer",
           "transformer_to_json", "transformer_from_json", "transformer_distance",
           "same_transformer_function", "normalize_direction", "units_from_kink_form",
           "random_sequences", "first_disagreement"]


# ---------------------------------------------------------------------- scalars
class Scalars:
    """Scalar comparisons for the Transformer code: exact on rationals (no tolerance, no
    floats), relative tolerance ``tol`` on mp / float numbers."""

    def __init__(self, exact: bool, tol=None, convert=None):
        self.exact = exact
        self.tol = tol
        #: how a model parameter enters the arithmetic (identity on rationals; mp: an mpf)
        self.convert = convert or (lambda x: x)

    @classmethod
    def for_backend(cls, be, digits=None) -> "Scalars":
        """exact → exact; mp → tolerance 10^(−digits) (default dps/3); float → 1e-6."""
        if be.name in ("exact", "symbolic"):
            return cls(True)
        if be.name == "mp":
            return cls(False, be.ctx.mpf(10) ** (-(digits or be.dps // 3)), be.scalar)
        return cls(False, 1e-6, be.scalar)

    @property
    def half(self):
        return Fraction(1, 2) if self.exact else self.convert(Fraction(1, 2))

    def is_zero(self, x, scale=1) -> bool:
        return x == 0 if self.exact else abs(x) <= self.tol * (1 + abs(scale))

    def eq(self, a, b) -> bool:
        return a == b if self.exact else abs(a - b) <= self.tol * (1 + abs(a) + abs(b))

    def vec_eq(self, a, b) -> bool:
        return all(self.eq(x, y) for x, y in zip(a, b))

    def sign(self, x) -> int:
        if self.is_zero(x):
            return 0
        return 1 if x > 0 else -1


def relu(be, z):
    """ReLU of a backend element: exact — by the certified sign in Q(t) (ball arithmetic at
    t = e^{1/L}, docs/design.md §2); symbolic — sympy.Max; mp/float — the number's own sign."""
    if be.name == "symbolic":
        import sympy
        return sympy.Max(z, 0)
    return z if be.sign(z) > 0 else be.zero


def normalize_direction(U, num: Scalars):
    """(λ, N) with U = λ·N and the first nonzero entry of N equal to 1 (docs/design.md §1 kink form);
    (0, None) for U = 0.  Exact on rationals; mp: "nonzero" is |x| > tol·max|U|."""
    big = max((abs(x) for x in U), default=0)
    for x in U:
        if not num.is_zero(x, 0 if num.exact else big) and x != 0:
            return x, tuple(y / x for y in U)
    return 0, None


# ---------------------------------------------------------------------- kink form
class KinkForm:
    """f(P) = ℓ·P + Σ_n c_n |N_n·P| on Φ-coordinates P ∈ R^{Hd} (module docstring): the
    canonical form of a bias-free ReLU network's function.  ``heads`` are the W_h the
    coordinates refer to (empty for a plain ReLU network on Rⁿ)."""

    def __init__(self, heads, linear, terms, dim):
        self.heads = tuple(heads)
        self.linear = tuple(linear)
        self.terms = tuple(terms)
        self.dim = dim

    def key(self):
        """Exact comparison key (rational forms)."""
        return (self.heads, self.linear, frozenset(self.terms))

    def __eq__(self, other):
        return isinstance(other, KinkForm) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        return (f"KinkForm(H={len(self.heads)}, d={self.dim}, linear={_short(self.linear)}, "
                f"terms={len(self.terms)})")

    def gradient(self, signs):
        """ℓ + Σ_n c_n s_n N_n: the linear functional of f on the region with signs
        s_n = sgn(N_n·P)."""
        g = list(self.linear)
        for (N, c), s in zip(self.terms, signs):
            for i, x in enumerate(N):
                g[i] = g[i] + c * s * x
        return g

    def __call__(self, P, be):
        """f(P) for a vector of backend elements (exact: certified signs)."""
        total = be.zero
        for x, l in zip(P, self.linear):
            total = total + l * x
        for N, c in self.terms:
            z = be.zero
            for x, n in zip(P, N):
                z = z + n * x
            total = total + c * (z if be.sign(z) >= 0 else -z)
        return total


def _kink_form_from_units(heads, units, dim, num: Scalars, blocks: int) -> KinkForm:
    """ℓ = ½ Σ w_j U_j, terms grouped by line (normalize_direction), c summed, zeros dropped;
    head blocks that are zero in ℓ and every term are removed (their heads are invisible)."""
    n = blocks * dim
    half = num.half
    linear: list = [0] * n
    lines: list = []  # [(N, c)]
    for w, U in units:
        for i in range(n):
            linear[i] = linear[i] + half * w * U[i]
        lam, N = normalize_direction(U, num)
        if N is None or num.is_zero(w):
            continue
        _accumulate(lines, N, half * w * abs(lam), num)
    terms = [(N, c) for N, c in lines if not num.is_zero(c)]
    linear = [Fraction(0) if num.exact and x == 0 else x for x in linear]
    keep = [h for h in range(blocks)
            if not all(num.is_zero(x) for x in linear[h * dim:(h + 1) * dim])
            or any(not all(num.is_zero(x) for x in N[h * dim:(h + 1) * dim]) for N, _ in terms)]
    cut = lambda v: tuple(x for h in keep for x in v[h * dim:(h + 1) * dim])  # noqa: E731
    terms = [(cut(N), c) for N, c in terms]
    if num.exact:
        terms.sort()
    return KinkForm([heads[h] for h in keep], cut(linear), terms, dim)


def units_from_kink_form(form: KinkForm, num: Scalars, max_search: int = 16):
    """Hidden units (w, U) realizing the kink form (P2 Transformer extension, last step).

    Each term c|N·P| = 2c·ReLU(sN·P) − c·s N·P; orientations s ∈ {±1}ⁿ with
    Σ_n c_n s_n N_n = ℓ make the linear parts cancel, so one unit per line suffices — that is
    the case for every network without antiparallel units.  Returns (units, unique) where
    ``unique`` says the orientation was the only one (then the units are the network's own,
    up to permutation and positive rescaling).  When no orientation fits (antiparallel units
    in the network), the residual r = ℓ − Σ c_n N_n adds the two units ReLU(r·P) −
    ReLU(−r·P): a functionally equivalent network, reported as not unique."""
    terms = form.terms
    target = list(form.linear)
    found = []
    if len(terms) <= max_search:
        for signs in product((1, -1), repeat=len(terms)):
            acc = [Fraction(0) if num.exact else 0 * t for t in target]
            for (N, c), s in zip(terms, signs):
                for i, x in enumerate(N):
                    acc[i] = acc[i] + c * s * x
            if num.vec_eq(acc, target):
                found.append(signs)
                if len(found) > 1:
                    break
    if found:
        signs = found[0]
        units = [(2 * c, tuple(s * x for x in N)) for (N, c), s in zip(terms, signs)]
        return units, len(found) == 1
    units = [(2 * c, tuple(N)) for N, c in terms]
    r = list(target)
    for N, c in terms:
        for i, x in enumerate(N):
            r[i] = r[i] - c * x
    if not all(num.is_zero(x) for x in r):
        units += [(1, tuple(r)), (-1, tuple(-x for x in r))]
    return units, False


def _unit_form(heads, units, num: Scalars):
    """(heads, frozenset of (U, w)): U scaled to first nonzero entry ±1, positively parallel
    units merged, zero units dropped (docs/design.md §1: up to permutation and positive rescaling)."""
    merged: list = []
    for w, U in units:
        lam, N = normalize_direction(U, num)
        if N is None or num.is_zero(w):
            continue
        s = 1 if lam > 0 else -1
        V = tuple(s * x for x in N)
        _accumulate(merged, V, w * abs(lam), num)
    return tuple(heads), frozenset((U, w) for U, w in merged if not num.is_zero(w))


def _accumulate(groups, key, value, num):
    """Add ``value`` to the group whose direction equals ``key`` (num.vec_eq), or open one."""
    for k, (M, total) in enumerate(groups):
        if num.vec_eq(M, key):
            groups[k] = (M, total + value)
            return
    groups.append((key, value))


# ---------------------------------------------------------------------- the model
class OneLayerTransformer:
    """T(X) = wᵀ ReLU(Aᵀ Σ_h V_hᵀ Xᵀ α_h(X)) (docs/design.md §1; P1 one-layer reduction; P2
    Transformer extension).  ``heads`` is a list of (W_h, V_h); A is d×k, w has k entries."""

    #: an exactattn.Oracle evaluates the model on its own backend (like MultiHeadAttention)
    evaluates_on_backend = True

    def __init__(self, heads, A, w):
        heads = list(heads)
        if not heads:
            raise ValueError("a Transformer needs at least one head (W_h, V_h)")
        self.heads = []
        for h, hv in enumerate(heads):
            try:
                W, V = hv
            except (TypeError, ValueError):
                raise ValueError(f"heads[{h}] must be a pair (W_h, V_h)") from None
            W = tuple(tuple(r) for r in to_matrix(W, _param, f"heads[{h}].W"))
            d = len(W)
            V = tuple(tuple(r) for r in to_matrix(V, _param, f"heads[{h}].V", shape=(d, d)))
            self.heads.append((W, V))
        self.heads = tuple(self.heads)
        dims = {len(W) for W, _ in self.heads}
        if len(dims) > 1:
            raise ValueError(f"heads of different dimensions {sorted(dims)}")
        self.dim = dims.pop()
        rows = A.tolist() if hasattr(A, "tolist") else A
        k = len(list(rows)[0]) if rows else 0
        if k < 1:
            raise ValueError("A must be a d×k matrix with k ≥ 1 hidden units")
        self.A = tuple(tuple(r) for r in to_matrix(rows, _param, "A", shape=(self.dim, k)))
        self.hidden = k
        self.w = tuple(to_vector(w, _param, "w", k))
        self._prepared = {}

    # ------------------------------------------------------------------ structure
    @property
    def is_rational(self) -> bool:
        return all(isinstance(x, Fraction) for x in self._entries())

    def _entries(self):
        for W, V in self.heads:
            yield from (x for r in W for x in r)
            yield from (x for r in V for x in r)
        yield from (x for r in self.A for x in r)
        yield from self.w

    def column(self, j):
        """a_j, the j-th column of A."""
        return [r[j] for r in self.A]

    def unit_values(self, j, be=None):
        """(V_1 a_j, …, V_H a_j): the value vectors of unit j's pre-activation heads,
        computed in the backend's arithmetic (exact: Fractions)."""
        conv = (lambda x: x) if be is None or be.name == "exact" else be.scalar
        a = [conv(x) for x in self.column(j)]
        return [[sum((conv(V[i][k]) * a[k] for k in range(self.dim)), conv(0))
                 for i in range(self.dim)] for _, V in self.heads]

    def attention_part(self):
        """The multi-head regressor T(X) − T(−X) = Σ_h (V_h A w)·p_h(X) (docs/design.md §1)."""
        from .attention import MultiHeadAttention
        Aw = [sum((self.A[i][j] * self.w[j] for j in range(self.hidden)), Fraction(0)
                  if self.is_rational else 0) for i in range(self.dim)]
        return MultiHeadAttention([(W, [sum((V[i][k] * Aw[k] for k in range(self.dim)),
                                            0 * Aw[0]) for i in range(self.dim)])
                                   for W, V in self.heads], dim=self.dim)

    # ------------------------------------------------------------------ evaluation
    def _units(self, be):
        key = repr(be)
        if key not in self._prepared:
            units = []
            for j in range(self.hidden):
                vals = self.unit_values(j, be)
                units.append((be.scalar(self.w[j], f"w[{j}]"),
                              [be.prepare_head(W, u) for (W, _), u in zip(self.heads, vals)]))
            self._prepared[key] = units
        return self._prepared[key]

    def _active_heads(self, be, active):
        """Heads (W_h, Σ_{j active} w_j V_h a_j): T(X) on a region where exactly the units in
        ``active`` are positive — one attention evaluation, no sum of fractions in Q(t)."""
        key = (repr(be), active)
        if key not in self._prepared:
            zero = be.scalar(0)
            vals = [self.unit_values(j, be) for j in active]
            ws = [be.scalar(self.w[j]) for j in active]
            self._prepared[key] = [
                be.prepare_head(W, [sum((w * v[h][i] for w, v in zip(ws, vals)), zero)
                                    for i in range(self.dim)])
                for h, (W, _) in enumerate(self.heads)]
        return self._prepared[key]

    def _prepare(self, tokens, be):
        toks = validate_tokens(tokens, self.dim)
        if be.name == "exact" and not self.is_rational:
            raise TypeError("the exact backend needs a Transformer with rational parameters "
                            "(use backend='mp' or 'float', or Fraction entries)")
        return be.prepare_tokens(toks)

    def preactivations(self, tokens, backend="exact", dps=None):
        """[z_1(X), …, z_k(X)], z_j = Σ_h (V_h a_j)·p_h(X) (exact: elements of Q(t))."""
        be = get_backend(backend, dps)
        X = self._prepare(tokens, be)
        return [be.attention(X, heads) for _, heads in self._units(be)]

    def __call__(self, tokens, backend="exact", dps=None):
        """T(X) at the final position on a backend; exact: an element of Q(t) (docs/design.md §1–2)."""
        be = get_backend(backend, dps)
        X = self._prepare(tokens, be)
        if be.name == "symbolic":
            total = be.zero
            for w, heads in self._units(be):
                total = total + w * relu(be, be.attention(X, heads))
            return total
        active = tuple(j for j, (_, heads) in enumerate(self._units(be))
                       if be.sign(be.attention(X, heads)) > 0)
        if not active:
            return be.zero
        return be.attention(X, self._active_heads(be, active))

    evaluate = __call__

    # ------------------------------------------------------------------ canonical forms
    def merged(self):
        """Heads with equal W_h merged (V_h summed), sorted lexicographically by W (as the
        multi-head learner's canonical heads; exact order on rationals); returns [(W, V)]."""
        groups = {}
        for W, V in self.heads:
            if W in groups:
                groups[W] = tuple(tuple(a + b for a, b in zip(r, s))
                                  for r, s in zip(groups[W], V))
            else:
                groups[W] = V
        return sorted(groups.items(), key=lambda WV: WV[0])

    def phi_units(self, num: Scalars | None = None):
        """[(w_j, U_j)], U_j = (V_h a_j)_h over the merged heads: the ReLU network
        f(P) = Σ_j w_j ReLU(U_j·P) with T(X) = f(Φ(X)) (module docstring).  Products are
        taken after ``num.convert`` (exact on rationals; at mp precision for real models)."""
        c = (num or Scalars(True)).convert
        merged = self.merged()
        out = []
        for j in range(self.hidden):
            a = [c(x) for x in self.column(j)]
            U = tuple(sum((c(V[i][k]) * a[k] for k in range(self.dim)), 0 * a[0])
                      for _, V in merged for i in range(self.dim))
            out.append((c(self.w[j]), U))
        return [W for W, _ in merged], out

    def kink_form(self, num: Scalars | None = None) -> KinkForm:
        """The canonical form of T's function (module docstring): merged heads and
        f(P) = ℓ·P + Σ c_n|N_n·P|.  Exact for rational models."""
        num = num or Scalars(True)
        heads, units = self.phi_units(num)
        return _kink_form_from_units(heads, units, self.dim, num, len(heads))

    def unit_form(self, num: Scalars | None = None):
        """Merged heads and hidden units up to permutation and positive rescaling, parallel
        units merged (module docstring).  Heads invisible in every unit are dropped."""
        num = num or Scalars(True)
        form = self.kink_form(num)
        heads, units = self.phi_units(num)
        keep = [i for i, W in enumerate(heads) if W in form.heads]
        d = self.dim
        units = [(w, tuple(x for h in keep for x in U[h * d:(h + 1) * d])) for w, U in units]
        return _unit_form([heads[i] for i in keep], units, num)

    # ------------------------------------------------------------------ JSON
    def to_dict(self):
        kind = "rational" if self.is_rational else "real"
        out = {"type": "one-layer-transformer", "dim": self.dim, "hidden": self.hidden,
               "entries": kind,
               "heads": [{"W": [[_fmt(x) for x in r] for r in W],
                          "V": [[_fmt(x) for x in r] for r in V]} for W, V in self.heads],
               "A": [[_fmt(x) for x in r] for r in self.A], "w": [_fmt(x) for x in self.w]}
        if kind == "real":
            from mpmath.ctx_mp_python import _mpf
            out["dps"] = max([15] + [x.context.dps for x in self._entries()
                                     if isinstance(x, _mpf)])
        return out

    def __eq__(self, other):
        return isinstance(other, OneLayerTransformer) and (self.heads, self.A, self.w) == \
            (other.heads, other.A, other.w)

    def __hash__(self):
        return hash((self.heads, self.A, self.w))

    def __repr__(self):
        return (f"OneLayerTransformer(d={self.dim}, H={len(self.heads)}, k={self.hidden}, "
                f"w={_short(self.w)})")

    def _repr_latex_(self):
        """Notebook display: W_h, V_h of every head, and the FFN's A and w."""
        from .latex import latex_transformer
        return latex_transformer(self.heads, self.A, self.w,
                                 rf"&\text{{one-layer Transformer, }} d = {self.dim},\ "
                                 rf"H = {len(self.heads)},\ k = {self.hidden}:\ "
                                 r"T(X) = w^{\top}\mathrm{ReLU}(A^{\top} a(X))")


def transformer_to_json(model: OneLayerTransformer) -> str:
    return json.dumps(model.to_dict(), indent=1)


def transformer_from_json(text_or_dict) -> OneLayerTransformer:
    """Inverse of :func:`transformer_to_json` (rationals as strings; never evaluates text).  A
    key the format does not have, a key written twice, a "dim" or "hidden" that disagrees with
    the matrices, a file of another type and numbers beyond the limits of
    :mod:`exactattn.arith.numbers` are ValueErrors naming them."""
    from .json_text import loads
    try:
        data = loads(text_or_dict) if isinstance(text_or_dict, str) else text_or_dict
    except json.JSONDecodeError as e:
        raise ValueError(f"Transformer JSON is not valid JSON ({e})") from None
    if not isinstance(data, dict) or data.get("type") != "one-layer-transformer":
        held = ""
        if isinstance(data, dict) and model_type(data) == "multi-head-attention":
            held = (" (this one holds a multi-head attention model: read it with "
                    "model_from_json)")
        raise ValueError(f"Transformer JSON must be an object with type "
                         f"'one-layer-transformer'{held}")
    what = "Transformer JSON"
    kind, dps = read_header(data, "one-layer-transformer", what)
    for key, shape in (("heads", "a list of {\"W\": ..., \"V\": ...} objects"),
                       ("A", "the d×k matrix of the feed-forward network, a list of rows"),
                       ("w", "the k read-out weights of the feed-forward network, a list")):
        if not isinstance(data.get(key), list):
            got = "missing" if key not in data else f"a {type(data[key]).__name__}"
            hint = ""
            if key != "heads" and isinstance(data.get("heads"), list) and \
                    any(isinstance(hd, dict) and "v" in hd for hd in data["heads"]):
                hint = ("; its heads have 'v', as a multi-head attention model's do: if it is "
                        "one, its \"type\" is \"multi-head-attention\"")
            raise ValueError(f"{what}: '{key}' ({shape}) is {got}{hint}")

    def mat(M, where):
        if not all(isinstance(r, list) for r in M):
            raise ValueError(f"{what}: {where} must be a list of rows")
        return [[_unfmt(x, kind, f"{where}[{i}][{j}]", dps) for j, x in enumerate(r)]
                for i, r in enumerate(M)]

    heads = []
    for h, hd in enumerate(data["heads"]):
        if isinstance(hd, dict) and "v" in hd and "V" not in hd:
            raise ValueError(f"{what}: heads[{h}] has 'v' (a multi-head attention head's value "
                             f"vector), not 'V' (the d×d output map of a Transformer head)")
        if not isinstance(hd, dict) or "W" not in hd or "V" not in hd:
            raise ValueError(f"{what}: heads[{h}] must have keys 'W' and 'V'")
        if set(hd) - {"W", "V"}:
            raise ValueError(f"{what}: heads[{h}] has unknown key(s) "
                             f"{', '.join(map(repr, sorted(set(hd) - {'W', 'V'})))}; a head "
                             f"has only 'W' and 'V'")
        for key in ("W", "V"):
            if not isinstance(hd[key], list):
                raise ValueError(f"{what}: heads[{h}].{key} must be a list of rows")
        heads.append((mat(hd["W"], f"heads[{h}].W"), mat(hd["V"], f"heads[{h}].V")))
    A = mat(data["A"], "A")
    w = [_unfmt(x, kind, f"w[{i}]", dps) for i, x in enumerate(data["w"])]
    try:
        model = OneLayerTransformer(heads, A, w)
    except (ValueError, TypeError) as e:
        raise type(e)(f"{what}: {e}") from None
    for key, have in (("dim", model.dim), ("hidden", model.hidden)):
        given = _positive_int(data, key, what)
        if given is not None and given != have:
            raise ValueError(f"{what}: '{key}' is {given} but the matrices give {have}")
    return model


# ---------------------------------------------------------------------- random models
def random_transformer(dim: int, heads: int, hidden: int, seed: int | None = None,
                       kind: str = "rational",
                       generic: bool = True) -> OneLayerTransformer:
    """A seeded random Transformer (docs/design.md §1).  rational: W_h as in random_head
    ({−3..3}/4), V_h entries {−2..2}/2, A entries {−3..3}, w_j ∈ {±1, ±2, ±3}; real: W_h as
    random_head(kind="real"), Gaussian V_h, A, w.  With generic=True (rational only) draws are
    repeated until the W_h are distinct, every V_h A w ≠ 0 and the units are nonzero and
    pairwise non-parallel (when d ≥ 2) — the conditions of the learners
    (learners/transformer/one_layer.py) and of unit identifiability."""
    if heads < 1 or hidden < 1 or dim < 1:
        raise ValueError("dim, heads and hidden must be ≥ 1")
    rng = random.Random(seed)
    for _ in range(1000):
        model = _draw(rng, dim, heads, hidden, kind)
        if not generic or kind != "rational" or _is_generic(model):
            return model
    raise ValueError(f"no generic Transformer drawn for d={dim}, H={heads}, k={hidden} in 1000 "
                     f"draws (distinct W_h, every V_h·A·w ≠ 0, k pairwise non-parallel units "
                     f"with entries in −3…3): give a smaller --hidden or another --seed")


def _draw(rng, d, H, k, kind):
    if kind == "rational":
        Ws = [random_head(d, rng=rng).W for _ in range(H)]
        Vs = [[[Fraction(rng.randint(-2, 2), 2) for _ in range(d)] for _ in range(d)]
              for _ in range(H)]
        A = [[Fraction(rng.randint(-3, 3)) for _ in range(k)] for _ in range(d)]
        w = [Fraction(rng.choice([-3, -2, -1, 1, 2, 3])) for _ in range(k)]
    elif kind == "real":
        Ws = [random_head(d, kind="real", rng=rng).W for _ in range(H)]
        Vs = [[[rng.gauss(0, 1) for _ in range(d)] for _ in range(d)] for _ in range(H)]
        A = [[rng.gauss(0, 1) for _ in range(k)] for _ in range(d)]
        w = [rng.gauss(0, 1) for _ in range(k)]
    else:
        raise ValueError(f"kind must be 'rational' or 'real', got {kind!r}")
    return OneLayerTransformer(list(zip(Ws, Vs)), A, w)


def _is_generic(model: OneLayerTransformer) -> bool:
    if len({W for W, _ in model.heads}) < len(model.heads):
        return False
    if any(all(x == 0 for x in v) for v in (h.v for h in model.attention_part().heads)):
        return False
    num = Scalars(True)
    dirs = []
    for w, U in model.phi_units()[1]:
        lam, N = normalize_direction(U, num)
        # for d = 1 every U_j = a_j (V_1, …, V_H) lies on one line (rank ≤ d)
        if N is None or w == 0 or (N in dirs and model.dim > 1):
            return False
        dirs.append(N)
    return True


# ---------------------------------------------------------------------- comparison
def same_transformer_function(a: OneLayerTransformer, b: OneLayerTransformer) -> bool:
    """Equal kink forms (exact): a sufficient condition for a(X) = b(X) for every X."""
    return a.kink_form() == b.kink_form()


def transformer_distance(a: OneLayerTransformer, b: OneLayerTransformer, tol=None, dps=30):
    """Largest difference between the kink forms of two Transformers (docs/design.md §1): W_h of the
    merged heads (in canonical order), ℓ, and the terms (N_n, c_n) matched greedily by N.
    Exact (a Fraction, 0 iff the kink forms are equal) for rational models; otherwise an
    mpmath number at ``dps`` digits.  Infinite when the shapes differ."""
    import mpmath
    exact = a.is_rational and b.is_rational
    conv = Fraction if exact else _to_mpf
    with mpmath.workdps(dps):
        if exact:
            fa, fb = a.kink_form(), b.kink_form()
        else:
            num = Scalars(False, mpmath.mpf(10) ** (-(dps // 2)) if tol is None else tol, conv)
            fa, fb = a.kink_form(num), b.kink_form(num)
    if len(fa.heads) != len(fb.heads) or len(fa.terms) != len(fb.terms):
        return mpmath.inf
    with mpmath.workdps(dps):
        dist = lambda u, v: max((abs(conv(x) - conv(y)) for x, y in zip(u, v)),  # noqa: E731
                                default=conv(0))
        err = conv(0)
        for Wa, Wb in zip(fa.heads, fb.heads):
            err = max(err, max(dist(r, s) for r, s in zip(Wa, Wb)))
        err = max(err, dist(fa.linear, fb.linear))
        left = list(fb.terms)
        for N, c in fa.terms:
            k = min(range(len(left)), key=lambda i: dist(N, left[i][0]))
            M, cm = left.pop(k)
            err = max(err, dist(N, M), abs(conv(c) - conv(cm)))
        return err


def random_sequences(dim: int, count: int, max_length: int, seed=None, kind="rational"):
    """``count`` seeded random query sequences of lengths 1…max_length (rational: entries
    p/q with |p| ≤ 20, 1 ≤ q ≤ 8; real: Gaussian) — fresh test queries for functional
    agreement."""
    rng = random.Random(seed)
    out: list = []
    for _ in range(count):
        n = rng.randint(1, max_length)
        if kind == "rational":
            out.append([[Fraction(rng.randint(-20, 20), rng.randint(1, 8)) for _ in range(dim)]
                        for _ in range(n)])
        else:
            out.append([[rng.gauss(0, 1) for _ in range(dim)] for _ in range(n)])
    return out


def first_disagreement(a, b, sequences, backend="exact", dps=None, tol=None):
    """Index of the first sequence on which the two models differ (exact equality in Q(t) on
    the exact backend; |a − b| ≤ tol·(1 + |a|) otherwise), or None when they agree on all."""
    be = get_backend(backend, dps)
    for k, X in enumerate(sequences):
        ya, yb = a(X, be), b(X, be)
        if be.name == "exact" and ya != yb:
            return k
        if be.name != "exact" and abs(ya - yb) > tol * (1 + abs(ya)):
            return k
    return None


def _to_mpf(x):
    import mpmath
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def _short(x, limit=50):
    s = str([_fmt(a) for a in x])
    return s if len(s) <= limit else s[: limit - 3] + "..."
