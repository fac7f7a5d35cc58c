"""PyTorch ``nn.MultiheadAttention`` as a value oracle, and its ground-truth heads
(docs/design.md §9 foreign models; P2 canonical heads).  torch is imported lazily: only
:func:`oracle` and :func:`load` need it; :func:`heads` also reads a state dict of NumPy
arrays or nested lists.

**The model.**  Self-attention ``mha(X, X, X)`` on one sequence X = (x_1, …, x_N) of
E-dimensional tokens (batch_first or not), read at the final position N (the query token)
through a read-out vector r ∈ Q^E: F(X) = rᵀ · out(X)_N.  With head h's rows
W_q,h = W_q[h·d_h:(h+1)·d_h, :] (likewise W_k,h, W_v,h) and columns W_o[:, h] of the output
map, d_h = E/H:

* score  s_j = (W_q,h x_N)·(W_k,h x_j)/√d_h = x_jᵀ W_h x_N  with  **W_h = W_k,hᵀ W_q,h / √d_h**
  (key on the left: the transpose W_q,hᵀ W_k,h is a different, wrong model);
* value  **v_h = (W_o[:, h] W_v,h)ᵀ r**, so rᵀ W_o[:, h] W_v,h x_j = v_h·x_j.

Every float is a dyadic rational, so the weights are exact inputs: W_h and v_h are exact
rationals when √d_h is rational (d_h a perfect square), and mp numbers at ``dps`` digits
otherwise.

**Biases** (``bias=True``, torch's default, initialises them to 0):

* key bias b_k adds q_N·b_k to every score of a query: it cancels in the softmax;
* value and output biases add the constant c = rᵀ(Σ_h W_o[:, h] b_v,h + b_o) to every answer
  (the softmax weights sum to 1): :func:`oracle` subtracts it, :func:`constant_offset` gives
  it exactly;
* a nonzero query bias b_q adds x_jᵀ W_k,hᵀ b_q,h/√d_h, a term linear in x_j alone, which no
  bias-free head x_jᵀ W x_N can express: refused, with a ValueError saying so;
* ``add_bias_kv`` (extra key/value rows) and ``add_zero_attn`` are refused likewise.

**Precision.**  :func:`oracle` declares the precision of the dtype the forward pass runs in
(256 units in its last place; float32 η ≈ 3.1·10⁻⁵): torch builds layers in float32, and a
float32 layer read at float64's precision was reported as certainly not attention.

**Scale.**  Default initialisation (Xavier-uniform) gives scores of about 0.05–0.1 on the
float learner's Gaussian queries (:func:`typical_score`), so every pole e^{s} of P2's
copy-count rational functions sits near 1 and near the other heads' poles, and float
interpolation breaks from H = 2.  Learning X ↦ F(cX) instead (``oracle(...,
input_scale=c)``, c a power of two; heads c²W_h, c·v_h, mapped back by :func:`unscale`)
separates the poles; too large a c puts a pole so far from 1 that its residue is lost.
:func:`suggested_scale` takes c²·score ≈ 1.  benchmarks/bench_torch_layer.py measures it at
E = 4, H = 2 (docs/models.md): c = 4 certifies 7 of 10 default float64 layers, c = 1 and
c = 8 none.  The declared precision's remedy names the scale and the weights' exact route,
so an ill-conditioned failure says both.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..arith.numbers import to_rational, to_vector
from ..models.attention import AttentionHead, MultiHeadAttention
from ..oracles.oracle import Oracle

__all__ = ["AttentionWeights", "constant_offset", "heads", "load", "oracle", "state_of",
           "suggested_scale", "typical_score", "unscale", "weights_command"]


def _torch():
    try:
        import torch
    except ImportError:
        raise ImportError("the torch adapter needs PyTorch: install its CPU wheel, pip "
                          "install torch --index-url https://download.pytorch.org/whl/cpu "
                          "(a plain pip install torch fetches the CUDA build on Linux, "
                          "several GB), or any torch build for your machine") from None
    return torch


# ---------------------------------------------------------------------- weights, exactly
def _exact(x, where):
    """A weight as the exact rational it is (every float is dyadic)."""
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"{where}: {x!r} is not a finite number")
        return Fraction(x)
    return to_rational(x, where)


def _matrix(t, where, shape=None):
    rows = t.tolist() if hasattr(t, "tolist") else t
    M = [[_exact(x, f"{where}[{i}][{j}]") for j, x in enumerate(r)] for i, r in enumerate(rows)]
    if shape is not None and (len(M), len(M[0]) if M else 0) != shape:
        raise ValueError(f"{where} has shape {len(M)}×{len(M[0]) if M else 0}, expected "
                         f"{shape[0]}×{shape[1]}")
    return M


def _vector(t, where, n):
    items = t.tolist() if hasattr(t, "tolist") else list(t)
    if len(items) != n:
        raise ValueError(f"{where} has {len(items)} entries, expected {n}")
    return [_exact(x, f"{where}[{i}]") for i, x in enumerate(items)]


class AttentionWeights:
    """The exact weights of one self-attention layer, read from a state dict
    (docs/design.md §9): ``E`` (embed_dim), ``H`` (num_heads), W_q, W_k, W_v, W_o (rows of
    Fractions) and the biases b_q, b_k, b_v, b_o (None when absent)."""

    def __init__(self, state, num_heads: int):
        keys = set(state)
        if any(state.get(k) is not None for k in ("bias_k", "bias_v")):
            raise ValueError("add_bias_kv=True adds a learned key/value row to every query; that "
                             "is not the attention model of docs/design.md §1: build the layer "
                             "with add_bias_kv=False")
        if "in_proj_weight" in keys and state["in_proj_weight"] is not None:
            W = _matrix(state["in_proj_weight"], "in_proj_weight")
            if len(W) % 3 or not W or len(W) // 3 != len(W[0]):
                raise ValueError(f"in_proj_weight has shape {len(W)}×{len(W[0]) if W else 0}, "
                                 f"expected 3E×E")
            E = len(W[0])
            self.Wq, self.Wk, self.Wv = W[:E], W[E:2 * E], W[2 * E:]
        elif {"q_proj_weight", "k_proj_weight", "v_proj_weight"} <= keys:
            E = len(_matrix(state["q_proj_weight"], "q_proj_weight")[0])
            self.Wq, self.Wk, self.Wv = (_matrix(state[f"{n}_proj_weight"], f"{n}_proj_weight",
                                                 (E, E)) for n in "qkv")
        else:
            raise ValueError("not the state of an nn.MultiheadAttention: no in_proj_weight "
                             "(nor q/k/v_proj_weight) among its keys")
        if not isinstance(num_heads, int) or isinstance(num_heads, bool) or num_heads < 1 \
                or E % num_heads:
            raise ValueError(f"num_heads={num_heads!r} must be a positive divisor of "
                             f"embed_dim={E}")
        self.E, self.H, self.d_head = E, num_heads, E // num_heads
        if "out_proj.weight" not in keys:
            raise ValueError("not the state of an nn.MultiheadAttention: no out_proj.weight")
        self.Wo = _matrix(state["out_proj.weight"], "out_proj.weight", (E, E))
        b = state.get("in_proj_bias")
        b = None if b is None else _vector(b, "in_proj_bias", 3 * E)
        self.bq, self.bk, self.bv = (None, None, None) if b is None else \
            (b[:E], b[E:2 * E], b[2 * E:])
        bo = state.get("out_proj.bias")
        self.bo = None if bo is None else _vector(bo, "out_proj.bias", E)

    @classmethod
    def of(cls, mha) -> "AttentionWeights":
        """The weights of an ``nn.MultiheadAttention`` module."""
        if getattr(mha, "add_zero_attn", False):
            raise ValueError("add_zero_attn=True appends a zero token to every query; that is "
                             "not the attention model of docs/design.md §1")
        return cls(state_of(mha), mha.num_heads)

    def rows(self, h):
        return slice(h * self.d_head, (h + 1) * self.d_head)

    def check_query_bias(self):
        if self.bq is not None and any(self.bq):
            i = next(i for i, x in enumerate(self.bq) if x)
            raise ValueError(
                f"the query bias is nonzero (in_proj_bias[{i}] = {float(self.bq[i]):.6g}): it "
                f"adds x_jᵀ W_kᵀ b_q/√d_head to the scores, a term no bias-free head "
                f"x_jᵀ W x_N can express (docs/design.md §9); build the layer with bias=False "
                f"or zero it: mha.in_proj_bias.data[:embed_dim] = 0")


def state_of(mha) -> dict:
    """The state dict of a module, tensors detached."""
    return {k: v.detach() for k, v in mha.state_dict().items()}


def _readout(readout, E):
    return to_vector(readout, lambda x, where: _exact(x, where), "readout", E)


def _matmul(A, B):
    from flint import fmpq, fmpq_mat
    a = fmpq_mat(len(A), len(A[0]), [fmpq(x.numerator, x.denominator) for r in A for x in r])
    b = fmpq_mat(len(B), len(B[0]), [fmpq(x.numerator, x.denominator) for r in B for x in r])
    c = a * b
    return [[Fraction(int(c[i, j].p), int(c[i, j].q)) for j in range(c.ncols())]
            for i in range(c.nrows())]


def _T(A):
    return [list(r) for r in zip(*A)]


def _inverse_sqrt(n: int, dps: int):
    """1/√n: an exact Fraction when n is a perfect square, else an mpf at ``dps`` digits."""
    root = math.isqrt(n)
    if root * root == n:
        return Fraction(1, root)
    import mpmath
    ctx = mpmath.MPContext()
    ctx.dps = dps
    return 1 / ctx.sqrt(n)


def heads(mha, readout, num_heads=None, dps: int = 50, canonical: bool = True):
    """The ground-truth heads (W_h, v_h) of a self-attention layer read out by r
    (docs/design.md §9): W_h = W_k,hᵀ W_q,h / √d_head, v_h = (W_o[:, h] W_v,h)ᵀ r.

    ``mha`` is an ``nn.MultiheadAttention``, or its state dict (tensors, NumPy arrays or
    nested lists) with ``num_heads`` given.  ``readout`` has E entries: int, Fraction,
    "p/q" string or float (read as the exact dyadic it is).  Entries are exact Fractions
    when d_head is a perfect square, mp numbers at ``dps`` digits otherwise.  Returns a
    :class:`~exactattn.MultiHeadAttention`: canonical (P2: equal W_h merged, zero v_h
    dropped) unless ``canonical=False`` (one head per torch head)."""
    w = _weights(mha, num_heads)
    w.check_query_bias()
    r = _readout(readout, w.E)
    scale = _inverse_sqrt(w.d_head, dps)
    out = []
    for h in range(w.H):
        rows = w.rows(h)
        KtQ = _matmul(_T(w.Wk[rows]), w.Wq[rows])
        Wh = [[x * scale for x in row] for row in KtQ]
        Wo_h = [row[rows] for row in w.Wo]                   # E × d_head
        u = [sum(Wo_h[i][a] * r[i] for i in range(w.E)) for a in range(w.d_head)]
        vh = [sum(w.Wv[rows][a][j] * u[a] for a in range(w.d_head)) for j in range(w.E)]
        out.append(AttentionHead(Wh, vh))
    model = MultiHeadAttention(out, dim=w.E)
    return model.canonical() if canonical else model


def constant_offset(mha, readout, num_heads=None) -> Fraction:
    """c = rᵀ(Σ_h W_o[:, h] b_v,h + b_o), exactly: what the value and output biases add to
    every answer (docs/design.md §9); 0 without biases."""
    w = _weights(mha, num_heads)
    r = _readout(readout, w.E)
    c = Fraction(0)
    if w.bv is not None:
        Wo_bv = [sum(w.Wo[i][j] * w.bv[j] for j in range(w.E)) for i in range(w.E)]
        c += sum(ri * x for ri, x in zip(r, Wo_bv))
    if w.bo is not None:
        c += sum(ri * x for ri, x in zip(r, w.bo))
    return c


def _weights(mha, num_heads):
    if isinstance(mha, AttentionWeights):
        return mha
    if isinstance(mha, dict):
        if num_heads is None:
            raise ValueError("a state dict does not record num_heads: pass num_heads=")
        return AttentionWeights(mha, num_heads)
    w = AttentionWeights.of(mha)
    if num_heads is not None and num_heads != w.H:
        raise ValueError(f"num_heads={num_heads} but the module has {w.H} heads")
    return w


# ---------------------------------------------------------------------- the oracle
def oracle(mha, readout, dtype=None, threads: int | None = 1, input_scale=1,
           **oracle_args) -> Oracle:
    """A counting, no-peek :class:`~exactattn.Oracle` whose answers are torch's own forward
    pass F(X) = rᵀ mha(X, X, X)[final position] (docs/design.md §3, §9), or F(cX) with
    ``input_scale`` = c, a power of two (exact in binary floating point): its heads are
    (c²W_h, c·v_h), mapped back by :func:`unscale` (module docstring, Scale).

    The query's tokens become one sequence (batch of 1, in the layer's batch_first layout)
    in ``dtype`` (default: the layer's own, float32 or float64; ``dtype=torch.float64`` runs
    a float64 copy of a float32 layer: the same exact weights, a rounder arithmetic); the
    forward pass runs under ``torch.no_grad()``; the answer, minus the bias offset
    :func:`constant_offset`, is a Python float (the read-out rᵀ out_N taken in float64), so the
    backend is the learner's, else float.

    **Precision.**  The Oracle declares the precision of its dtype
    (:func:`~exactattn.learners.result.precision.format_precision`, 256 units in the last
    place: float64 5.7·10⁻¹⁴, float32 3.1·10⁻⁵, float16 1/4, bfloat16 2, relative; times
    1 + |c| when the biases add a constant c), so that an inexact learner's error bar and its
    verdicts hold at the precision torch actually computes in, not float64's.  A float32
    layer that the learner cannot certify at 3·10⁻⁵ is ill-conditioned: run the forward pass
    in float64 (``dtype=torch.float64`` here, or ``layer.double()``).
    ``readout`` has E entries (int, Fraction, "p/q" string or float).  Each forward pass runs
    on ``threads`` CPU threads (default 1: a query is a handful of tokens, and torch's thread
    pool costs ~50× more than it saves there; torch's own setting is restored after each call;
    None keeps torch's setting).  ``oracle_args`` go to
    :class:`~exactattn.Oracle` (``backend``, ``budget``, ``noise``...).  A nonzero query
    bias, ``add_bias_kv``, ``add_zero_attn`` or active dropout is refused."""
    torch = _torch()
    _formats(torch)
    w = AttentionWeights.of(mha)
    w.check_query_bias()
    if mha.training and mha.dropout > 0:
        raise ValueError(f"the layer is in training mode with dropout {mha.dropout}: its "
                         f"answers are random; call mha.eval() first")
    param = next(iter(mha.parameters()))
    dtype = param.dtype if dtype is None else dtype
    fmt = _FORMATS.get(dtype)
    if fmt is None:
        raise ValueError(f"dtype {dtype} is not a real floating-point type: use torch.float64, "
                         f"float32, float16 or bfloat16")
    if dtype != param.dtype:
        import copy
        mha = copy.deepcopy(mha).to(dtype)
    c_in = _power_of_two(input_scale)
    scale_in = float(c_in)
    r_exact = _readout(readout, w.E)
    r = torch.tensor([float(x) for x in r_exact], dtype=torch.float64, device=param.device)
    c_exact = constant_offset(mha, r_exact)
    offset = float(c_exact)
    batch_first = bool(getattr(mha, "batch_first", False))

    def query(tokens):
        X = torch.tensor([[scale_in * float(x) for x in tok] for tok in tokens], dtype=dtype,
                         device=param.device)
        X = X.unsqueeze(0) if batch_first else X.unsqueeze(1)
        before = torch.get_num_threads()
        if threads is not None and threads != before:
            torch.set_num_threads(threads)
        try:
            with torch.no_grad():
                out, _ = mha(X, X, X, need_weights=False)
        finally:
            if torch.get_num_threads() != before:
                torch.set_num_threads(before)
        last = out[0, -1] if batch_first else out[-1, 0]
        return float(last.to(torch.float64) @ r) - offset

    query.__name__ = f"torch_{type(mha).__name__}"
    o = Oracle(query, dim=w.E, **oracle_args)
    o.declared_precision = _precision(fmt, c_exact, _remedy(w, r_exact, c_in))
    return o


#: torch dtypes by float format name (the keys of precision.FORMAT_BITS)
_FORMATS = {}


def _formats(torch):
    if not _FORMATS:
        _FORMATS.update({torch.float64: "float64", torch.float32: "float32",
                         torch.float16: "float16", torch.bfloat16: "bfloat16"})
    return _FORMATS


def _precision(fmt, c, remedy):
    """The declared precision of a forward pass in ``fmt`` (oracle docstring), as the plain
    record the learners read (:func:`exactattn.learners.result.precision.declared_precision`): the
    format, the factor 1 + |c| for a bias constant c, and what to do when the learner cannot
    certify at it (``remedy``, behind the float format's own)."""
    out = {"format": fmt, "scale": 1 + abs(c),
           "source": f"torch {fmt} forward pass (the module's dtype)", "remedy": remedy}
    if fmt != "float64":
        out["remedy"] = (f"the layer computes in {fmt}: run its forward pass in float64 "
                         f"(η ≈ 5.7e-14) — layer.double(), or "
                         f"exactattn.adapters.torch.oracle(layer, readout, "
                         f"dtype=torch.float64); {remedy}")
    return out


# ---------------------------------------------------------------------- scale
def _power_of_two(c) -> Fraction:
    """``input_scale`` as the exact power of two it must be (c·x is then exact in binary
    floating point, so F(cX) is asked exactly)."""
    q = _exact(c, "input_scale") if not isinstance(c, bool) else None
    if q is None or q <= 0 or q.numerator & (q.numerator - 1) or \
            q.denominator & (q.denominator - 1):
        raise ValueError(f"input_scale must be a power of two (1, 2, 4, 8, 1/2 …: c·x is then "
                         f"exact in floating point), got {c!r}")
    return q


def _float_heads(w):
    """Each head's W_h = W_k,hᵀ W_q,h/√d_head in float64 (display and suggestions only)."""
    import numpy as np
    out = []
    for h in range(w.H):
        rows = w.rows(h)
        Wq = np.array([[float(x) for x in r] for r in w.Wq[rows]])
        Wk = np.array([[float(x) for x in r] for r in w.Wk[rows]])
        out.append(Wk.T @ Wq / math.sqrt(w.d_head))
    return out


#: samples of :func:`typical_score` (a fixed seed: the same figure for the same layer)
SCORE_SAMPLES = 256


def typical_score(mha, num_heads: int | None = None) -> float:
    """``mha`` (a module, a state dict with ``num_heads``, or AttentionWeights): the median
    over the multi-head learner's random (u, x) — Gaussian entries of variance
    1/E (:func:`exactattn.learners.p2.recovery.random_bases`) — of max_h |uᵀW_h x|: the size of
    the scores s = u·W_h x behind the poles z_h = e^s of P2's copy-count families (module
    docstring, Scale).  Float64, from the weights; a fixed sample of SCORE_SAMPLES pairs."""
    import random
    w = _weights(mha, num_heads)
    Ws = _float_heads(w)
    rng = random.Random(0)
    sd = w.E ** -0.5
    import numpy as np
    got = []
    for _ in range(SCORE_SAMPLES):
        u = np.array([rng.gauss(0, sd) for _ in range(w.E)])
        x = np.array([rng.gauss(0, sd) for _ in range(w.E)])
        got.append(max(abs(float(u @ W @ x)) for W in Ws))
    return float(np.median(got))


def suggested_scale(mha, num_heads: int | None = None) -> int | Fraction:
    """The input scale c (a power of two) that brings c²·:func:`typical_score` nearest to 1 on
    a log scale: poles e^s spread out from 1 without growing so far from 1 that a term
    c_h/(1 + m·z_h) drops below the answers' precision (module docstring, Scale; the figures
    of docs/models.md)."""
    return _scale_for(typical_score(mha, num_heads))


def _scale_for(s: float):
    """The power of two c nearest (on a log scale) to 1/√s, so that c²s ≈ 1."""
    if not s > 0:
        return 1
    k = round(-math.log2(s) / 2)
    return 2 ** k if k >= 0 else Fraction(1, 2 ** -k)


def unscale(result, input_scale) -> tuple:
    """(model, bound): the heads learned from ``oracle(..., input_scale=c)`` mapped back to
    F's own, W_h = W'/c², v_h = v'/c, and the result's error bar mapped with them: a bar b
    on (W', v') bounds their error by b/min(c, c²) (None without a bar)."""
    from ..models.attention import AttentionHead, MultiHeadAttention
    c = _power_of_two(input_scale)
    heads = result.heads if hasattr(result, "heads") else result
    pairs = [(h.W, h.v) if hasattr(h, "W") else h for h in heads]
    model = MultiHeadAttention([AttentionHead([[x / (c * c) for x in row] for row in W],
                                              [x / c for x in v]) for W, v in pairs])
    bar = getattr(result, "error_bar", None)
    return model, None if bar is None else bar.bound / min(c, c * c)


def _readout_text(r) -> str:
    """The ``--readout`` argument of ``exactattn model from-torch`` for r."""
    if sum(1 for x in r if x) == 1 and max(r) == 1:
        return f"e{r.index(1)}"
    return ",".join(str(x) for x in r)


def weights_command(readout, E: int | None = None) -> str:
    """The commands that learn a saved layer from its weights, exactly (docs/models.md,
    Files): ``torch.save`` then ``exactattn model from-torch … | learn --model``."""
    r = _readout(readout, E if E is not None else len(list(readout)))
    return (f"torch.save(layer, 'mha.pt'), then exactattn model from-torch mha.pt --readout "
            f"{_readout_text(r)} > m.json && exactattn learn multi-head --model m.json")


def _remedy(w, r, c_in) -> str:
    """What an ill-conditioned run of this layer can do (the declared precision's remedy):
    the input scale the scores suggest, and the weights' exact route."""
    s = typical_score(w)
    now = s * float(c_in) ** 2
    best = _scale_for(s)
    where = ("the poles e^score crowd near 1" if now < 0.5 else
             "poles far from 1 hide their residues" if now > 3 else "")
    if best != c_in:
        step = (f"learn X ↦ F(cX) with c = {best}: "
                f"exactattn.adapters.torch.oracle(layer, r, input_scale={best}), then "
                f"exactattn.adapters.torch.unscale(result, {best})")
    else:
        step = f"input_scale={best} is the scale the scores suggest"
    return (f"this layer's scores on the learner's queries are about {now:.2g}"
            f"{f' ({where})' if where else ''}: {step}; or learn it from its weights, exactly: "
            f"{weights_command(r, w.E)}")



# ---------------------------------------------------------------------- files
def load(path, num_heads=None, prefix=None, source=None):
    """(state dict, num_heads) of the attention layer saved in ``path`` by ``torch.save``:
    a state dict (``num_heads`` needed), a saved ``nn.MultiheadAttention``, or a module or
    state dict that contains exactly one such layer (else pick it by ``prefix``, e.g.
    "encoder.attn.").  Loads with ``weights_only=True``: no code from the file is run.
    ``source`` (a binary file object, e.g. ``io.BytesIO`` of the file's bytes) is read
    instead of opening ``path``, which then only names it in messages.  A path that is not
    a regular file (a FIFO would make torch wait forever) and a file torch cannot load are
    ValueErrors of one line."""
    torch = _torch()
    safe = [torch.nn.MultiheadAttention, torch.nn.modules.linear.NonDynamicallyQuantizableLinear,
            torch.nn.Linear]
    if source is None:
        import io
        from ..files import read_regular
        try:
            source = io.BytesIO(read_regular(path, "torch"))
        except FileNotFoundError:
            raise ValueError(f"torch file {str(path)!r} not found") from None
    try:
        with torch.serialization.safe_globals(safe):
            obj = torch.load(source, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - unpickling errors have many types
        raise ValueError(_load_error(str(path), e)) from None
    if isinstance(obj, torch.nn.MultiheadAttention):
        if num_heads is not None and num_heads != obj.num_heads:
            raise ValueError(f"--heads {num_heads} but the saved layer has {obj.num_heads}")
        if obj.add_zero_attn:
            AttentionWeights.of(obj)  # raises the clear error
        return state_of(obj), obj.num_heads
    if isinstance(obj, torch.nn.Module):
        obj = state_of(obj)
    if not isinstance(obj, dict):
        raise TypeError(f"{str(path)!r} holds a {type(obj).__name__}, not a state dict or module")
    return _select(obj, prefix), num_heads


_SAVE = "save the layer with torch.save(mha.state_dict(), FILE) and pass --heads"


def _load_error(path: str, e: Exception) -> str:
    """One line of our own for a file torch.load(weights_only=True) refused: torch's messages
    run to many lines and advise weights_only=False, which runs code from the file."""
    import re
    text = str(e)
    if "Weights only load failed" in text:
        found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", text)
        if found:
            return (f"{path!r} holds objects other than tensors and nn.MultiheadAttention "
                    f"(such as {found.group(1)}), which exactattn does not unpickle (that could "
                    f"run code from the file); {_SAVE}")
        return (f"{path!r} is not a file written by torch.save (torch's safe unpickler cannot "
                f"read it); {_SAVE}")
    if isinstance(e, EOFError) or "failed reading zip archive" in text:
        return (f"{path!r} is empty, cut short or damaged: not a complete file written by "
                f"torch.save; {_SAVE}")
    first = text.strip().splitlines()[0][:120] if text.strip() else type(e).__name__
    return f"{path!r} is not a file written by torch.save ({type(e).__name__}: {first}); {_SAVE}"


def _select(state, prefix):
    """The keys of one attention layer, its prefix stripped."""
    ends = ("in_proj_weight", "q_proj_weight")
    found = sorted({k[: -len(e)] for k in state for e in ends if k.endswith(e)})
    if prefix is None:
        if len(found) > 1:
            raise ValueError(f"the file holds {len(found)} attention layers "
                             f"({', '.join(p or '(top level)' for p in found)}): choose one "
                             f"with --prefix")
        prefix = found[0] if found else ""
    elif prefix not in found:
        raise ValueError(f"no attention layer at prefix {prefix!r}; found: "
                         f"{', '.join(p or '(top level)' for p in found) or 'none'}")
    return {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
