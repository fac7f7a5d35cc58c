"""Attention models (docs/design.md §1): single head (W, v), multi-head sums, canonical form,
seeded random generators and a JSON form with rationals as strings.

Parameters are stored as given after coercion: exact ``Fraction`` entries when every entry
is rational ("rational" models, evaluable on every backend), otherwise real numbers
("real" models, for the mp and float backends only).
"""

from __future__ import annotations

import json
import re
import os
import random
from fractions import Fraction

from ..arith import Backend, get_backend
from ..arith.numbers import (MAX_REAL_DIGITS, decimal_mpf, decimal_parts, format_rational,
                             is_rational_like, parse_rational, shown, to_matrix, to_rational,
                             to_vector)

__all__ = ["AttentionHead", "MultiHeadAttention", "same_function", "random_head",
           "random_multi_head", "model_from_json", "model_to_json", "load_model",
           "validate_tokens"]


def _param(x, where):
    """Rational entries stay exact; real ones (float, mpf, real sympy constants such as
    sqrt(2)) are kept as they are (a "real" model, for the mp and float backends)."""
    if is_rational_like(x):
        return to_rational(x, where)
    import numbers
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return x
    if type(x).__module__.startswith("sympy"):
        import sympy
        if isinstance(x, sympy.Basic) and x.is_number and x.is_real:
            return x
    return to_rational(x, where)  # raises the clear error


def _first_real_entry(heads):
    """(where, value) of the first non-rational parameter, for error messages."""
    for h, head in enumerate(heads):
        for i, r in enumerate(head.W):
            for j, x in enumerate(r):
                if not isinstance(x, Fraction):
                    return f"head {h}, W[{i}][{j}]", x
        for i, x in enumerate(head.v):
            if not isinstance(x, Fraction):
                return f"head {h}, v[{i}]", x
    return None, None


def validate_tokens(tokens, dim: int):
    """List of token vectors of length `dim`; raises QueryError naming what is wrong."""
    from ..errors import QueryError
    if hasattr(tokens, "tolist") and not isinstance(tokens, (list, tuple)):
        tokens = tokens.tolist()
    try:
        toks = [list(t.tolist() if hasattr(t, "tolist") else t) for t in tokens]
    except TypeError:
        raise QueryError("a query is a sequence of token vectors (a list of lists)") from None
    if not toks:
        raise QueryError("empty query: a query needs at least one token (the final token x_N)")
    for n, t in enumerate(toks):
        if len(t) != dim:
            raise QueryError(f"token {n} has {len(t)} entries, but the model dimension is {dim}")
    return toks


def clean_query(tokens, be: Backend, dim: int, rows: dict):
    """A query validated and converted to ``be``'s scalars (``be.tokens(validate_tokens(…))``),
    each distinct token row once: ``rows`` caches the converted rows of a batch, keyed by
    the row when its entries convert by value alone (:meth:`Backend.caches_row`: ints and
    Fractions, and mpf on mp); other entries take the full path every time, as do malformed
    queries, whose error names the token and entry as usual."""
    out = []
    prev = row = None
    for t in tokens:
        if t is prev and row is not None:        # a repeated token object (copy counts)
            out.append(row)
            continue
        prev = t
        key = t if type(t) is tuple else tuple(t) if type(t) is list else None
        # checked before the lookup: (1.0, 2) == (1, 2), and a float must not ride on an
        # integer row's conversion
        if key is None or len(key) != dim or not be.caches_row(key):
            return be.tokens(validate_tokens(tokens, dim))
        row = rows.get(key)
        if row is None:
            try:
                row = be.tokens([key])[0]
            except (TypeError, ValueError):     # the error again, naming this token
                return be.tokens(validate_tokens(tokens, dim))
            rows[key] = row
        out.append(row)
    if not out:
        validate_tokens(tokens, dim)            # the named QueryError of an empty query
    return out


class AttentionHead:
    """f(X) = Σ_i softmax(X W x_N)_i · v·x_i (P1 §2; docs/design.md §1)."""

    def __init__(self, W, v):
        self.W = tuple(tuple(r) for r in to_matrix(W, _param, "W"))
        self.dim = len(self.W)
        self.v = tuple(to_vector(v, _param, "v", self.dim))
        self._prepared: dict = {}
        self._rational = None

    @property
    def is_rational(self) -> bool:
        if self._rational is None:
            self._rational = all(isinstance(x, Fraction) for r in self.W for x in r) and \
                all(isinstance(x, Fraction) for x in self.v)
        return self._rational

    def prepared(self, backend: Backend):
        key = repr(backend)
        if key not in self._prepared:
            self._prepared[key] = backend.prepare_head(self.W, self.v)
        return self._prepared[key]

    def __call__(self, tokens, backend="exact", dps=None):
        return MultiHeadAttention([self])(tokens, backend, dps)

    def __iter__(self):
        """``W, v = head``: a head is the pair (W, v)."""
        return iter((self.W, self.v))

    def __getstate__(self):  # pickled without the per-backend cache (it holds flint objects)
        return {**self.__dict__, "_prepared": {}}

    def __eq__(self, other):
        return isinstance(other, AttentionHead) and self.W == other.W and self.v == other.v

    def __hash__(self):
        return hash((self.W, self.v))

    def __repr__(self):
        return f"AttentionHead(d={self.dim}, W={_short(self.W)}, v={_short(self.v)})"

    def _repr_latex_(self):
        """Notebook display: W and v as matrices."""
        from .latex import latex_heads
        return latex_heads([(self.W, self.v)],
                           r"&\text{head: } f(X) = \textstyle\sum_i \mathrm{softmax}"
                           r"(X W x_N)_i\, v^{\top} x_i")

    def to_dict(self):
        return {"W": [[_fmt(x) for x in r] for r in self.W], "v": [_fmt(x) for x in self.v]}


class MultiHeadAttention:
    """F(X) = Σ_h f_{W_h, v_h}(X) (P2; docs/design.md §1)."""

    def __init__(self, heads, dim: int | None = None):
        self.heads = tuple(h if isinstance(h, AttentionHead) else AttentionHead(*h) for h in heads)
        dims = {h.dim for h in self.heads}
        if len(dims) > 1:
            raise ValueError(f"heads of different dimensions {sorted(dims)}")
        if dim is not None and dims and dims != {dim}:
            raise ValueError(f"dim={dim} but the heads have dimension {dims.pop()}")
        # a model with no heads (e.g. the canonical form of heads that cancel) keeps `dim`
        self.dim = dims.pop() if dims else dim
        self._prepared: dict = {}
        self._canonical: MultiHeadAttention | None = None

    def __getstate__(self):  # pickled without the per-backend cache (it holds flint objects)
        return {**self.__dict__, "_prepared": {}, "_canonical": None}

    def __len__(self):
        return len(self.heads)

    def __iter__(self):
        return iter(self.heads)

    @property
    def is_rational(self) -> bool:
        """Every head's entries are Fractions (computed once: the heads are a tuple)."""
        r = getattr(self, "_rational", None)     # (a model pickled before the cache)
        if r is None:
            r = self._rational = all(h.is_rational for h in self.heads)
        return r

    def __call__(self, tokens, backend="exact", dps=None):
        """F(X) on a backend; exact: an element of Q(e^{1/L}) (docs/design.md §2)."""
        be = get_backend(backend, dps)
        if self.dim is None:
            return be.zero
        toks = validate_tokens(tokens, self.dim)
        if not self.heads:
            return be.zero
        if be.exact and be.name == "exact" and not self.is_rational:
            where, x = _first_real_entry(self.heads)
            raise TypeError(f"{where}: {x!r} is not rational; the exact backend needs a model "
                            f"with rational parameters (use backend='mp' or 'float', or "
                            f"Fraction entries)")
        return be.attention(be.prepare_tokens(toks), self._heads_on(be))

    evaluate = __call__

    def evaluate_clean(self, tokens, be: Backend):
        """F(X) for tokens already validated and converted to ``be``'s scalars (what the
        Oracle holds after its own checks): the same answer as ``self(tokens, be)``."""
        if self.dim is None or not self.heads:
            return be.zero
        if be.name == "exact" and not self.is_rational:
            return self(tokens, be)                 # the named TypeError
        return be.attention(be.prepare_clean(tokens), self._heads_on(be))

    def evaluate_many(self, queries, backend="exact", dps=None):
        """[F(X) for X in queries] (docs/design.md §2.1, batched evaluation): each distinct token
        row is validated and converted once, and on the exact backend the queries with the
        same distinct tokens share one group (:mod:`exactattn.arith.multiplicities`)."""
        be = get_backend(backend, dps)
        if self.dim is None:
            return [be.zero for _ in queries]
        rows = {}
        return [self.evaluate_clean(clean_query(q, be, self.dim, rows), be) for q in queries]

    def first_disagreement(self, transcript, backend="exact", dps=None, done=None):
        """The index of the first (query, answer) of ``transcript`` whose answer is not F's
        exactly, or None (the certification of P2's learner; batched as
        :meth:`evaluate_many`; on the exact backend via ``be.agrees``).  ``done(n)``, if
        given, is called after each of the n queries that agreed."""
        be = get_backend(backend, dps)
        agrees = getattr(be, "agrees", None)
        if agrees is not None and self.heads and self.is_rational:
            heads = self._heads_on(be)

            def same(clean, answer):
                return agrees(be.prepare_clean(clean), heads, answer)
        else:
            def same(clean, answer):
                return self.evaluate_clean(clean, be) == answer
        rows = {}
        for n, (tokens, answer) in enumerate(transcript):
            clean = [] if self.dim is None else clean_query(tokens, be, self.dim, rows)
            if not same(clean, answer):
                return n
            if done is not None:
                done(n + 1)
        return None

    def _heads_on(self, be: Backend):
        """The heads prepared for ``be`` (cached per backend, as each head caches its own)."""
        key = repr(be)
        hit = self._prepared.get(key)
        if hit is None:
            hit = self._prepared[key] = [h.prepared(be) for h in self.heads]
        return hit

    def canonical(self) -> "MultiHeadAttention":
        """Merge heads with equal W, sum their v, drop zero sums (P2 canonical form).

        Exact for rational models; heads are returned in a deterministic order
        (lexicographic in W, exact comparison).  Computed once per model (a model is
        immutable)."""
        canonical = getattr(self, "_canonical", None)   # (a model pickled before the cache)
        if canonical is None:
            canonical = self._canonical = self._merged()
        return canonical

    def _merged(self) -> "MultiHeadAttention":
        groups: dict = {}
        for h in self.heads:
            if h.W in groups:
                groups[h.W] = tuple(a + b for a, b in zip(groups[h.W], h.v))
            else:
                groups[h.W] = h.v
        kept = [(W, v) for W, v in groups.items() if any(x != 0 for x in v)]
        kept.sort(key=lambda wv: (wv[0], wv[1]))
        return MultiHeadAttention([AttentionHead(W, v) for W, v in kept], dim=self.dim)

    def head_set(self):
        return frozenset((h.W, h.v) for h in self.canonical().heads)

    def __eq__(self, other):
        return isinstance(other, MultiHeadAttention) and self.heads == other.heads

    def __hash__(self):
        return hash(self.heads)

    def __repr__(self):
        shown = ", ".join(repr(h) for h in self.heads[:_REPR_HEADS])
        more = len(self.heads) - _REPR_HEADS
        if more > 0:
            shown += f", ... ({more} more)"
        return f"MultiHeadAttention(d={self.dim}, H={len(self.heads)}, heads=[{shown}])"

    def _repr_latex_(self):
        """Notebook display: every head's W_h and v_h as matrices."""
        from .latex import latex_heads
        return latex_heads([(h.W, h.v) for h in self.heads],
                           rf"&\text{{multi-head, }} d = {self.dim},\ H = {len(self.heads)}:"
                           rf"\ F = \textstyle\sum_h f_{{W_h, v_h}}")

    def to_dict(self):
        kind = "rational" if self.is_rational else "real"
        out = {"type": "multi-head-attention", "dim": self.dim, "entries": kind,
               "heads": [h.to_dict() for h in self.heads]}
        if kind == "real":
            # the decimal precision to read the entries back at (mpf entries round-trip exactly)
            from mpmath.ctx_mp_python import _mpf
            out["dps"] = max([15] + [x.context.dps for h in self.heads
                                     for x in (*[y for r in h.W for y in r], *h.v)
                                     if isinstance(x, _mpf)])
        return out


def same_function(a: AttentionHead | MultiHeadAttention,
                  b: AttentionHead | MultiHeadAttention) -> bool:
    """Two multi-head models compute the same function iff their canonical forms are equal
    as sets (P1 Prop 7.1; P2 canonical heads).  Exact on rational models."""
    a = a if isinstance(a, MultiHeadAttention) else MultiHeadAttention(a)
    b = b if isinstance(b, MultiHeadAttention) else MultiHeadAttention(b)
    return a.head_set() == b.head_set()


# ---------------------------------------------------------------------- random models
def _rand_rational(rng, num, den):
    return Fraction(rng.randint(-num, num), den)


#: the most heads, and parameters H(d² + d), a random model is drawn with (the learners'
#: cost checks refuse far smaller models; 10⁶ entries take seconds to draw)
MAX_HEADS, MAX_RANDOM_ENTRIES = 1000, 1_000_000


def _check_random_size(dim, heads):
    """One-line errors for random-model sizes that are not integers or are unboundedly large."""
    for name, val in (("dim", dim), ("heads", heads)):
        if isinstance(val, bool) or not isinstance(val, int):
            raise ValueError(f"{name} must be an integer, got {val!r}")
    if heads > MAX_HEADS or heads * (dim * dim + dim) > MAX_RANDOM_ENTRIES:
        raise ValueError(f"a random model with heads={heads} at dim={dim} has "
                         f"{heads * (dim * dim + dim):,} parameters (at most {MAX_HEADS} heads "
                         f"and {MAX_RANDOM_ENTRIES:,} parameters); draw a smaller one")


def random_head(dim: int, seed: int | None = None, kind: str = "rational",
                rng: random.Random | None = None) -> AttentionHead:
    """A seeded random head.  rational: W_ij ∈ {−3..3}/4, v_i ∈ {±1..±4}/2 (v_i ≠ 0), so
    scores on the learners' integer query boxes stay moderate; real: Gaussian entries,
    W scaled by 1/(2√d)."""
    _check_random_size(dim, 1)
    rng = rng or random.Random(seed)
    if dim < 1:
        raise ValueError(f"dim must be ≥ 1, got {dim}")
    if kind == "rational":
        W: list = [[_rand_rational(rng, 3, 4) for _ in range(dim)] for _ in range(dim)]
        v: list = [Fraction(rng.choice([-4, -3, -2, -1, 1, 2, 3, 4]), 2) for _ in range(dim)]
    elif kind == "real":
        s = 1.0 / (2 * dim ** 0.5)
        W = [[rng.gauss(0, s) for _ in range(dim)] for _ in range(dim)]
        v = [rng.gauss(0, 1) for _ in range(dim)]
    else:
        raise ValueError(f"kind must be 'rational' or 'real', got {kind!r}")
    return AttentionHead(W, v)


def random_multi_head(dim: int, heads: int, seed: int | None = None, kind: str = "rational",
                      distinct: bool = True) -> MultiHeadAttention:
    """H seeded random heads; with distinct=True the W_h are pairwise different, so the model
    is already canonical with exactly H heads."""
    _check_random_size(dim, heads)
    if heads < 0:
        raise ValueError(f"heads must be ≥ 0, got {heads}")
    if distinct and kind == "rational" and dim < 4 and heads > 7 ** (dim * dim):
        raise ValueError(f"cannot draw {heads} distinct rational heads in dimension {dim} "
                         f"(there are {7 ** (dim * dim)} rational W)")
    rng = random.Random(seed)
    out: list = []
    seen: set = set()
    tries = 0
    while len(out) < heads:
        h = random_head(dim, kind=kind, rng=rng)
        tries += 1
        if distinct and h.W in seen:
            if tries > 1000 * (heads + 1):
                raise ValueError(f"cannot draw {heads} distinct rational heads in dimension {dim}")
            continue
        seen.add(h.W)
        out.append(h)
    return MultiHeadAttention(out, dim=dim)


# ---------------------------------------------------------------------- JSON
def _fmt(x):
    if isinstance(x, Fraction):
        return format_rational(x)
    from mpmath.ctx_mp_python import _mpf
    if isinstance(x, _mpf):  # any mpmath context: enough digits to read it back exactly
        from mpmath.libmp import repr_dps, to_str
        return to_str(x._mpf_, repr_dps(x.context.prec))
    if type(x).__module__.startswith("sympy"):
        import sympy
        return str(sympy.N(x, 60))
    return repr(float(x))


_RATIONAL = re.compile(r"[+-]?[0-9]+(?:/[0-9]+)?")
_REAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def strict_rational(s, where: str = "value"):
    """A rational written strictly: ASCII digits, an optional sign, at most one slash and a
    positive denominator, no spaces or underscores ("3", "-2/7"); ints and Fractions pass.
    Refuses " 1 / 2", "١/2", "1/-2", "1_000" (which int() and Fraction() accept)."""
    if isinstance(s, str) and not _RATIONAL.fullmatch(s):
        raise ValueError(f"{where}: {shown(s)} is not a rational written \"p\" or \"p/q\" (ASCII "
                         f"digits, an optional sign, a positive denominator, no spaces)")
    return parse_rational(s, where)


def _unfmt(s, kind, where, dps=None):
    """One entry of model JSON: a rational (strict "p"/"p/q") or a real written as decimal
    text or "p/q", read at ``dps`` digits (default: every digit written).  Numbers beyond the
    limits of :mod:`exactattn.arith.numbers` (digits, decimal exponent) are refused by
    name before they are built."""
    if kind == "rational":
        return strict_rational(s, where)
    if not isinstance(s, str):
        raise TypeError(f"{where}: numbers are written as strings in model JSON")
    if not (_REAL.fullmatch(s) or _RATIONAL.fullmatch(s)):
        raise ValueError(f"{where}: {shown(s)} is not a real number written like -1.25e-3 or "
                         f"-17/4 (ASCII digits, no spaces or underscores)")
    import mpmath
    from mpmath.libmp import from_rational
    if "/" in s:
        q = strict_rational(s, where)
    else:
        q = None
        decimal_parts(s, where)                 # the limits, checked on the text
    if dps is None:  # no precision recorded: keep every digit written
        dps = max(15, sum(c.isdigit() for c in s.split("e")[0].split("E")[0]) + 2)
    with mpmath.workdps(dps):
        if q is not None:                       # rounded once, as mpf("p/q")
            return mpmath.mpf(from_rational(q.numerator, q.denominator,
                                            *mpmath.mp._prec_rounding))
        return decimal_mpf(s, where)


def model_to_json(model: AttentionHead | MultiHeadAttention) -> str:
    if isinstance(model, AttentionHead):
        model = MultiHeadAttention([model])
    return json.dumps(model.to_dict(), indent=1)


#: the "type" of each kind of model file, and what it holds
MODEL_TYPES = {"multi-head-attention": "a multi-head attention model",
               "one-layer-transformer": "a one-layer Transformer",
               "causal-attention": "a causal (decoder) attention model"}
#: the top-level keys each kind of file may have (what to_dict writes)
_KEYS = {"multi-head-attention": ("type", "dim", "entries", "dps", "heads"),
         "one-layer-transformer": ("type", "dim", "hidden", "entries", "dps", "heads", "A", "w"),
         "causal-attention": ("type", "dim", "entries", "dps", "heads", "residual")}


def model_type(data) -> str:
    """The kind of model a parsed model JSON document holds: "multi-head-attention" (also
    when it has no "type") or "one-layer-transformer"; ValueError for anything else."""
    if not isinstance(data, dict):
        raise ValueError("model JSON must be an object with a 'heads' list, not a "
                         f"{type(data).__name__}")
    kind = data.get("type", "multi-head-attention")
    if kind not in MODEL_TYPES:
        raise ValueError(f"model JSON: unknown \"type\" {shown(str(kind))}; a model file has "
                         f"\"type\" \"multi-head-attention\", \"one-layer-transformer\" or "
                         f"\"causal-attention\"")
    return kind


def read_header(data, kind: str, what: str):
    """(entries, dps) of a model JSON object of ``kind``, after refusing a top-level key the
    format does not have (a misspelt or foreign key would otherwise be ignored silently) and
    a bad "entries" or "dps"."""
    allowed = _KEYS[kind]
    unknown = [k for k in data if k not in allowed]
    if unknown:
        names = ", ".join(shown(k) for k in unknown)
        hint = ""
        if kind == "multi-head-attention" and set(unknown) <= {"A", "w", "hidden"}:
            hint = " (a one-layer Transformer file needs \"type\": \"one-layer-transformer\")"
        raise ValueError(f"{what}: unknown key(s) {names}; {MODEL_TYPES[kind]} file has only "
                         f"{', '.join(repr(k) for k in allowed)}{hint}")
    entries = data.get("entries", "rational")
    if entries not in ("rational", "real"):
        raise ValueError(f"{what}: 'entries' must be 'rational' or 'real', got "
                         f"{shown(entries) if isinstance(entries, str) else shown(str(entries))}")
    dps = data.get("dps")
    if dps is not None and (not isinstance(dps, int) or isinstance(dps, bool) or dps < 1
                            or dps > MAX_REAL_DIGITS):
        raise ValueError(f"{what}: 'dps' must be an integer from 1 to {MAX_REAL_DIGITS}, got "
                         f"{repr(dps)[:40]}")
    return entries, dps


def _positive_int(data, key, what):
    x = data.get(key)
    if x is not None and (not isinstance(x, int) or isinstance(x, bool) or x < 1):
        raise ValueError(f"{what}: '{key}' must be a positive integer, got {repr(x)[:40]}")
    return x


def model_from_json(text_or_dict: str | dict) -> MultiHeadAttention:
    """Inverse of :func:`model_to_json`; never evaluates text.  A top-level or head key the
    format does not have, a key written twice, a file of another type (a one-layer
    Transformer: :func:`~exactattn.models.transformer.transformer_from_json`) and numbers
    beyond the limits of :mod:`exactattn.arith.numbers` are ValueErrors naming them."""
    from .json_text import loads
    try:
        data = loads(text_or_dict) if isinstance(text_or_dict, str) else text_or_dict
    except json.JSONDecodeError as e:
        raise ValueError(f"model JSON is not valid JSON ({e})") from None
    if model_type(data) == "one-layer-transformer":
        raise ValueError("model JSON holds a one-layer Transformer (\"type\": "
                         "\"one-layer-transformer\"), not a multi-head attention model; read it "
                         "with transformer_from_json (exactattn learn transformer --model, "
                         "model show, model compare)")
    if model_type(data) == "causal-attention":
        raise ValueError("model JSON holds a causal attention model (\"type\": "
                         "\"causal-attention\"), not a multi-head attention model; read it "
                         "with causal_from_json (exactattn learn causal --model)")
    if "heads" not in data:
        raise ValueError("model JSON must be an object with a 'heads' list")
    kind, dps = read_header(data, "multi-head-attention", "model JSON")
    if not isinstance(data["heads"], list):
        raise ValueError("model JSON: 'heads' must be a list of {\"W\": ..., \"v\": ...} objects")
    heads = []
    for h, hd in enumerate(data["heads"]):
        if isinstance(hd, dict) and "V" in hd and "v" not in hd:
            raise ValueError(f"model JSON: heads[{h}] has 'V' (a Transformer head's d×d output "
                             f"map), not 'v'; a one-layer Transformer file needs \"type\": "
                             f"\"one-layer-transformer\"")
        if not isinstance(hd, dict) or "W" not in hd or "v" not in hd:
            raise ValueError(f"model JSON: heads[{h}] must be an object with keys 'W' and 'v'")
        unknown = sorted(set(hd) - {"W", "v"})
        if unknown:
            raise ValueError(f"model JSON: heads[{h}] has unknown key(s) "
                             f"{', '.join(shown(k) for k in unknown)}; a head has only 'W' and "
                             f"'v'")
        if not isinstance(hd["W"], list) or not all(isinstance(r, list) for r in hd["W"]):
            raise ValueError(f"model JSON: heads[{h}].W must be a list of rows")
        if not isinstance(hd["v"], list):
            raise ValueError(f"model JSON: heads[{h}].v must be a list")
        W = [[_unfmt(x, kind, f"heads[{h}].W[{i}][{j}]", dps) for j, x in enumerate(r)]
             for i, r in enumerate(hd["W"])]
        v = [_unfmt(x, kind, f"heads[{h}].v[{i}]", dps) for i, x in enumerate(hd["v"])]
        try:
            heads.append(AttentionHead(W, v))
        except (ValueError, TypeError) as e:
            raise type(e)(f"model JSON: heads[{h}].{e}") from None
    m = MultiHeadAttention(heads)
    dim = _positive_int(data, "dim", "model JSON")
    if dim is not None:
        if m.dim is not None and dim != m.dim:
            raise ValueError(f"model JSON: dim is {dim} but the heads are {m.dim}×{m.dim}")
        m.dim = dim
    return m


def load_model(path: str | os.PathLike) -> MultiHeadAttention:
    """The multi-head attention model in the JSON file ``path`` (:func:`model_from_json`); a
    FIFO, device or directory is refused before it is read (reading one would wait forever)."""
    from ..files import read_regular
    return model_from_json(read_regular(path, "model").decode("utf-8"))


_REPR_HEADS = 4  # repr lists at most this many heads


def _short(x, limit=60):
    """[[a, b], [c, d]] / [a, b] with entries unquoted, cut at ``limit`` characters."""
    if x and isinstance(x[0], tuple):
        s = "[" + ", ".join("[" + ", ".join(_fmt(a) for a in r) + "]" for r in x) + "]"
    else:
        s = "[" + ", ".join(_fmt(a) for a in x) + "]"
    return s if len(s) <= limit else s[: limit - 3] + "..."
