"""Decoder-style attention (docs/decoders.md): a causal mask with an output at every position,
optional per-head ALiBi slopes and an optional residual read-out.

For a query X = (x_1, …, x_N) the oracle returns the vector (F_1, …, F_N), where position p
sees only x_1 … x_p and its own token x_p is the query token:

    F_p = Σ_h Σ_{i ≤ p} softmax_i(x_iᵀ W_h x_p − s_h·(p − i)) · v_h·x_i  +  w·x_p.

s_h is head h's ALiBi slope (0: no position bias) and w the residual read-out (0: none).
With s_h rational, e^{−s_h (p−i)} is a power of t = e^{1/L} for a common L, so every F_p is an
exact element of Q(t) (docs/design.md §2), computed by the existing evaluation: without
slopes each F_p is :class:`~.attention.MultiHeadAttention` at the prefix (its cached exact
path); with slopes each head is the backend's own softmax average of the biased scores.

**Canonical form** (docs/decoders.md §canonical form): heads with equal W *and* equal slope
merge (their v summed), groups whose v sum to 0 drop; heads with equal W but different slopes
are different functions of the position and stay apart.  A slope is stored only when some
head has a nonzero one (all slopes 0 is the plain causal model), the residual only when
w ≠ 0.
"""

from __future__ import annotations

import json
from fractions import Fraction

from ..arith import Backend, get_backend
from ..arith.numbers import shown, to_vector
from .attention import (AttentionHead, MultiHeadAttention, _fmt, _param, _positive_int,
                        _unfmt, model_type, read_header, validate_tokens)

__all__ = ["CausalAttention", "causal_from_json", "causal_to_json", "load_causal",
           "random_causal"]


def _slopes(slopes, H):
    """Per-head slopes from None, one number (shared) or H numbers; rational ones exact."""
    if slopes is None:
        return None
    if not isinstance(slopes, (list, tuple)):
        slopes = [slopes] * H
    if len(slopes) != H:
        raise ValueError(f"slopes: {len(slopes)} slopes for {H} heads (give one shared slope "
                         f"or one per head)")
    out = tuple(_param(s, f"slope {h}") for h, s in enumerate(slopes))
    return out if any(s != 0 for s in out) else None


class CausalAttention:
    """Causal multi-head attention read at every position, with optional ALiBi slopes and a
    residual read-out (module docstring; docs/decoders.md)."""

    #: the Oracle evaluates this model on its own backend (exactattn.oracles.oracle)
    evaluates_on_backend = True

    def __init__(self, heads, slopes=None, residual=None, dim: int | None = None):
        self.attention = MultiHeadAttention(heads, dim)
        self.heads = self.attention.heads
        self.dim = self.attention.dim
        self.slopes = _slopes(slopes, len(self.heads))
        w = None
        if residual is not None:
            if self.dim is None:
                self.dim = len(residual)
            w = tuple(to_vector(residual, _param, "residual", self.dim))
            w = w if any(x != 0 for x in w) else None
        self.residual = w
        self._prepared = {}

    def __getstate__(self):
        return {**self.__dict__, "_prepared": {}}

    # ------------------------------------------------------------------ properties
    @property
    def is_rational(self) -> bool:
        return self.attention.is_rational and all(
            isinstance(x, Fraction) for x in (*(self.slopes or ()), *(self.residual or ())))

    def __len__(self):
        return len(self.heads)

    def slope(self, h):
        """Head h's slope (0 when the model has none)."""
        return Fraction(0) if self.slopes is None else self.slopes[h]

    # ------------------------------------------------------------------ evaluation
    def __call__(self, tokens, backend="exact", dps=None):
        """(F_1, …, F_N) on a backend; exact: a tuple of elements of Q(t)."""
        be = get_backend(backend, dps)
        toks = validate_tokens(tokens, self.dim)
        self._check_exact(be)
        return self.evaluate_clean(be.tokens(toks), be)

    evaluate = __call__

    def _check_exact(self, be):
        if be.name != "exact" or self.is_rational:
            return
        for h, s in enumerate(self.slopes or ()):
            if not isinstance(s, Fraction):
                raise TypeError(f"slope {h}: {s!r} is not rational; the exact backend needs "
                                f"rational ALiBi slopes (e^(-s) lies in Q(t) only for rational "
                                f"s): give a rational slope or use backend='mp'")
        for i, x in enumerate(self.residual or ()):
            if not isinstance(x, Fraction):
                raise TypeError(f"residual[{i}]: {x!r} is not rational; the exact backend "
                                f"needs a rational residual read-out (or backend='mp')")
        self.attention(self.dim and [[0] * self.dim], be)      # the heads' named TypeError

    def evaluate_clean(self, tokens, be: Backend):
        """The outputs at every position for tokens already converted to ``be``'s scalars."""
        self._check_exact(be)
        zero = be.scalar(0)
        if self.slopes is None:
            outs = [self.attention.evaluate_clean(tokens[:p], be)
                    for p in range(1, len(tokens) + 1)]
        else:
            outs = self._biased(tokens, be)
        if self.residual is not None:
            w = self._on(be)[1]
            outs = [o + be.element(sum((a * b for a, b in zip(w, x)), zero))
                    for o, x in zip(outs, tokens)]
        return tuple(outs)

    def _on(self, be):
        """(heads as scalar lists, residual as scalars) on ``be`` (cached per backend)."""
        key = repr(be)
        hit = self._prepared.get(key)
        if hit is None:
            heads = [([[be.scalar(x) for x in r] for r in h.W], [be.scalar(x) for x in h.v],
                      be.scalar(self.slope(n))) for n, h in enumerate(self.heads)]
            w = None if self.residual is None else [be.scalar(x) for x in self.residual]
            hit = self._prepared[key] = (heads, w)
        return hit

    def _biased(self, tokens, be):
        """Σ_h softmax with ALiBi biases at every position, by the backend's softmax average
        (:meth:`~exactattn.arith.base.Backend.softmax_mean`)."""
        zero = be.scalar(0)
        heads = self._on(be)[0]
        outs = []
        for p in range(len(tokens)):
            xp = tokens[p]
            total = be.zero
            for W, v, s in heads:
                Wx = [sum((a * b for a, b in zip(row, xp)), zero) for row in W]
                scores = [sum((a * b for a, b in zip(x, Wx)), zero) - s * (p - i)
                          for i, x in enumerate(tokens[:p + 1])]
                values = [sum((a * b for a, b in zip(x, v)), zero) for x in tokens[:p + 1]]
                total = total + be.softmax_mean(scores, values)
            outs.append(total)
        return outs

    def evaluate_many(self, queries, backend="exact", dps=None):
        return [self(q, backend, dps) for q in queries]

    # ------------------------------------------------------------------ canonical form
    def canonical(self) -> "CausalAttention":
        """Heads with equal (W, slope) merged, zero sums dropped, sorted (module docstring)."""
        groups = {}
        for n, h in enumerate(self.heads):
            key = (h.W, self.slope(n))
            groups[key] = tuple(a + b for a, b in zip(groups[key], h.v)) \
                if key in groups else h.v
        kept = sorted(((W, s, v) for (W, s), v in groups.items() if any(x != 0 for x in v)),
                      key=lambda t: (t[0], t[1], t[2]))
        return CausalAttention([AttentionHead(W, v) for W, _, v in kept],
                               [s for _, s, _ in kept] if kept else None,
                               self.residual, dim=self.dim)

    def head_set(self):
        """The canonical form as a set of (W, slope, v), with the residual."""
        c = self.canonical()
        return (frozenset((h.W, c.slope(n), h.v) for n, h in enumerate(c.heads)),
                c.residual)

    def same_function(self, other) -> bool:
        return self.head_set() == other.head_set()

    def __eq__(self, other):
        return isinstance(other, CausalAttention) and (self.heads, self.slopes,
                                                       self.residual) == \
            (other.heads, other.slopes, other.residual)

    def __hash__(self):
        return hash((self.heads, self.slopes, self.residual))

    def __repr__(self):
        extra = ""
        if self.slopes is not None:
            extra += ", slopes=[" + ", ".join(_fmt(s) for s in self.slopes) + "]"
        if self.residual is not None:
            extra += ", residual=[" + ", ".join(_fmt(x) for x in self.residual) + "]"
        return f"CausalAttention(d={self.dim}, H={len(self.heads)}{extra})"

    # ------------------------------------------------------------------ JSON
    def to_dict(self):
        out = self.attention.to_dict()
        out["type"] = CAUSAL
        for n, hd in enumerate(out["heads"]):
            if self.slopes is not None:
                hd["slope"] = _fmt(self.slopes[n])
        if self.residual is not None:
            out["residual"] = [_fmt(x) for x in self.residual]
        if not self.is_rational:
            out["entries"] = "real"
        return out


#: the "type" of a causal model file
CAUSAL = "causal-attention"


def causal_to_json(model) -> str:
    return json.dumps(model.to_dict(), indent=1)


def causal_from_json(text_or_dict) -> CausalAttention:
    """A causal model file ("type": "causal-attention"; a plain multi-head file is the same
    heads under a causal mask).  A key of another kind of file — a head's "slope" or a
    top-level "residual" in a multi-head file, Transformer keys in a causal one — is a
    ValueError naming it."""
    from .json_text import loads
    try:
        data = loads(text_or_dict) if isinstance(text_or_dict, str) else text_or_dict
    except json.JSONDecodeError as e:
        raise ValueError(f"model JSON is not valid JSON ({e})") from None
    kind = model_type(data)
    if kind == "one-layer-transformer":
        raise ValueError("model JSON holds a one-layer Transformer, not a causal attention "
                         "model (\"type\": \"causal-attention\" or \"multi-head-attention\")")
    what = "causal model JSON"
    if kind != CAUSAL:
        extra = [k for k in ("residual",) if k in data] + \
            [f"heads[{h}].slope" for h, hd in enumerate(data.get("heads") or [])
             if isinstance(hd, dict) and "slope" in hd]
        if extra:
            raise ValueError(f"{what}: {', '.join(extra)} belong to a causal model, but the "
                             f"file says \"type\": \"{kind}\"; mixing kinds in one file is "
                             f"refused: write \"type\": \"{CAUSAL}\"")
        from .attention import model_from_json
        return CausalAttention(model_from_json(data).heads, dim=data.get("dim"))
    entries, dps = read_header(data, CAUSAL, what)
    heads = data.get("heads")
    if not isinstance(heads, list):
        raise ValueError(f"{what}: 'heads' must be a list of {{\"W\", \"v\", \"slope\"}} objects")
    plain, slopes = [], []
    for h, hd in enumerate(heads):
        if not isinstance(hd, dict):
            raise ValueError(f"{what}: heads[{h}] must be an object")
        unknown = sorted(set(hd) - {"W", "v", "slope"})
        if unknown:
            raise ValueError(f"{what}: heads[{h}] has unknown key(s) "
                             f"{', '.join(shown(k) for k in unknown)}; a causal head has only "
                             f"'W', 'v' and 'slope'")
        slopes.append(_unfmt(hd.get("slope", "0"), entries, f"heads[{h}].slope", dps))
        plain.append({k: hd[k] for k in hd if k != "slope"})
    base = {"type": "multi-head-attention", "heads": plain, "entries": entries}
    if dps is not None:
        base["dps"] = dps
    from .attention import model_from_json
    mh = model_from_json(base)
    dim = _positive_int(data, "dim", what) or mh.dim
    w = data.get("residual")
    if w is not None:
        if not isinstance(w, list):
            raise ValueError(f"{what}: 'residual' must be a list of {dim} numbers")
        w = [_unfmt(x, entries, f"residual[{i}]", dps) for i, x in enumerate(w)]
    try:
        return CausalAttention(mh.heads, slopes if mh.heads else None, w, dim=dim)
    except (ValueError, TypeError) as e:
        raise type(e)(f"{what}: {e}") from None


def load_causal(path) -> CausalAttention:
    """The causal model in the JSON file ``path`` (:func:`causal_from_json`)."""
    from ..files import read_regular
    return causal_from_json(read_regular(path, "model").decode("utf-8"))


def random_causal(dim: int, heads: int, seed=None, slopes=None, residual: bool = False):
    """A seeded random causal model (the heads of
    :func:`~.attention.random_multi_head`; residual entries in {±1..±4}/2 when asked)."""
    import random
    from .attention import random_multi_head
    mh = random_multi_head(dim, heads, seed=seed)
    w = None
    if residual:
        rng = random.Random(f"residual-{seed}")
        w = [Fraction(rng.choice([-4, -3, -2, -1, 1, 2, 3, 4]), 2) for _ in range(dim)]
    return CausalAttention(mh.heads, slopes, w, dim=dim)

