"""`exactattn model random|show|canonical|compare|from-torch`: make, read and convert models
(model JSON: docs/design.md §1 models, §7 CLI, §9 foreign models).

* ``random --dim D --heads H --seed S [--real]`` — a seeded random multi-head model as JSON;
* ``show FILE`` — what the file holds: dimension, heads, entries, canonical heads, parameters;
* ``canonical FILE`` — the canonical form (P2: equal W merged, v summed, zero sums dropped)
  as model JSON;
* ``compare REFERENCE RECOVERED [--tolerance T]`` — canonical heads matched by permutation:
  exact equality (the same function) on rational models, else the error in digits and bits;
  exit 0 when equal (exact) or within T (real entries), 1 otherwise;
* ``from-torch FILE --readout R [--heads H] [--prefix P]`` — the ground-truth heads of a
  saved ``nn.MultiheadAttention`` (state dict or module; needs torch) as model JSON.
"""

from __future__ import annotations

from ._common import dim_int, heads_int, positive_int, seed_int


def register(sub):
    p = sub.add_parser("model", help="make, show and convert models (model JSON)",
                       description=__doc__.split("\n\n")[0])
    msub = p.add_subparsers(dest="model_command", parser_class=type(p))
    r = msub.add_parser("random", help="a seeded random multi-head model as JSON")
    r.add_argument("--dim", type=dim_int, required=True)
    r.add_argument("--heads", type=heads_int, default=1,
                   help="number of heads H ≥ 1 (default 1)")
    r.add_argument("--seed", type=seed_int, default=0)
    r.add_argument("--real", action="store_true",
                   help="Gaussian real entries (mp/float only) instead of rationals")
    r.set_defaults(func=run_random)
    s = msub.add_parser("show", help="describe the model in a JSON file")
    s.add_argument("file", help="model JSON (multi-head attention or one-layer Transformer)")
    s.set_defaults(func=run_show)
    c = msub.add_parser("canonical", help="the canonical form of the model in FILE as JSON "
                                          "(P2: equal W merged, zero sums dropped)")
    c.add_argument("file", help="model JSON of a multi-head attention model")
    c.set_defaults(func=run_canonical)
    k = msub.add_parser("compare", help="compare two models by their canonical heads")
    k.add_argument("reference", help="model JSON of the reference (true) model")
    k.add_argument("recovered", help="model JSON of the recovered model")
    k.add_argument("--tolerance", default="1e-9",
                   help="largest parameter error accepted when an entry is real (default "
                        "1e-9); rational models are compared exactly")
    k.add_argument("--dps", type=positive_int, default=30,
                   help="digits for real entries (default 30)")
    k.add_argument("--json", action="store_true", help="print one JSON object")
    k.set_defaults(func=run_compare)
    t = msub.add_parser("from-torch", help="the heads of a saved torch nn.MultiheadAttention "
                                           "as model JSON (needs torch)")
    t.add_argument("file", help="a torch.save file: state dict or nn.MultiheadAttention")
    t.add_argument("--readout", required=True,
                   help="read-out vector r: E comma-separated rationals (\"1,0,-1/2\") or eK "
                        "for the K-th unit vector (e0 = first output coordinate)")
    t.add_argument("--heads", type=positive_int, default=None,
                   help="num_heads (needed for a state dict; checked for a saved module)")
    t.add_argument("--prefix", default=None,
                   help="key prefix of the attention layer when the file holds several")
    t.add_argument("--dps", type=positive_int, default=50,
                   help="digits for 1/√d_head when d_head is not a perfect square (default 50)")
    t.add_argument("--raw", action="store_true",
                   help="one head per torch head (default: the canonical form)")
    t.set_defaults(func=run_from_torch)
    p.set_defaults(func=lambda a: p.print_help() or 2)


#: which commands read each kind of model file (for the message when a command gets the other)
_READ_BY = {"multi-head-attention": "'learn single-head|multi-head|low-rank --model', 'eval' "
                                    "and 'model show|canonical|compare'",
            "one-layer-transformer": "'learn transformer --model' and 'model show|compare'",
            "causal-attention": "'learn causal --model'"}


def read_model(path: str, want: str | None = None, command: str | None = None):
    """The model in a JSON file: a MultiHeadAttention, or a OneLayerTransformer when the file's
    type is "one-layer-transformer"; bad files raise UsageError / ValueError (exit 2) naming
    the file.  With ``want`` (a type of :data:`~exactattn.models.attention.MODEL_TYPES`), a
    file of the other kind is refused saying what it holds and which commands read it."""
    from ..models.attention import MODEL_TYPES, model_from_json, model_type
    from ._common import read_json
    data = read_json(path, "model")
    try:
        kind = model_type(data)
        if want is not None and kind != want:
            raise ValueError(f"holds {MODEL_TYPES[kind]} (\"type\": \"{kind}\"), but "
                             f"{command or 'this command'} takes {MODEL_TYPES[want]}; "
                             f"{MODEL_TYPES[kind][2:]} files are read by {_READ_BY[kind]}")
        if kind == "one-layer-transformer":
            from ..models.transformer import transformer_from_json
            return transformer_from_json(data)
        return model_from_json(data)
    except (ValueError, TypeError) as e:
        raise type(e)(f"{path}: {e}") from None


def run_random(args):
    from ..models.attention import model_to_json, random_multi_head
    m = random_multi_head(args.dim, args.heads, seed=args.seed,
                          kind="real" if args.real else "rational")
    print(model_to_json(m))
    return 0


def run_show(args):
    m = read_model(args.file)
    data = m.to_dict()                      # entries as written in model JSON
    kind = data["entries"]
    if hasattr(m, "kink_form"):
        print(f"one-layer Transformer: d = {m.dim}, {len(m.heads)} head(s), "
              f"{m.hidden} hidden unit(s), {kind} entries (docs/design.md §1)")
        for h, hd in enumerate(data["heads"]):
            print(f"head {h}: W = {_rows(hd['W'])}\n        V = {_rows(hd['V'])}")
        print(f"A = {_rows(data['A'])}\nw = [{', '.join(data['w'])}]")
        return 0
    canon = m.canonical()
    print(f"multi-head attention: d = {m.dim}, {len(m.heads)} head(s), {len(canon.heads)} "
          f"canonical head(s), {kind} entries (docs/design.md §1)")
    for h, hd in enumerate(data["heads"]):
        print(f"head {h}: W = {_rows(hd['W'])}\n        v = [{', '.join(hd['v'])}]")
    if len(canon.heads) != len(m.heads):
        print(f"canonical form (equal W merged, zero sums dropped): "
              f"exactattn model canonical {args.file}")
    return 0


def _rows(M):
    return "[" + ", ".join("[" + ", ".join(r) + "]" for r in M) + "]"


def run_canonical(args):
    from ..models.attention import model_to_json
    m = read_model(args.file, "multi-head-attention", "'model canonical'")
    print(model_to_json(m.canonical()))
    return 0


def run_compare(args):
    import mpmath
    from ..learners.result.compare import compare_models
    from ._common import dump
    ref, rec = read_model(args.reference), read_model(args.recovered)
    # a bad --tolerance is refused before the comparison, even where it is not used
    # (rational models are compared exactly)
    tol = _tolerance(args.tolerance, args.dps)
    c = compare_models(ref, rec, dps=args.dps)
    ok = bool(c.equal) if c.exact else c.within(tol)
    if args.json:
        print(dump({"exact": c.exact, "equal": c.equal, "ok": ok, "what": c.what,
                    "max_error": str(c.max_error) if c.exact else mpmath.nstr(c.max_error, 6),
                    "digits": c.digits, "bits": c.bits, "matched": len(c.pairs),
                    "unmatched_reference": c.missing, "unmatched_recovered": c.extra,
                    "tolerance": None if c.exact else args.tolerance}))
    else:
        verdict = "" if c.exact else \
            f" — {'within' if ok else 'NOT within'} tolerance {args.tolerance}"
        print(f"{c}{verdict}")
    return 0 if ok else 1


def _embed_dim(state):
    """embed_dim E of a state dict from its projection's shape (no entry converted), or None."""
    for key in ("in_proj_weight", "q_proj_weight"):
        shape = getattr(state.get(key), "shape", None)
        if shape is not None and len(shape) == 2:
            return int(shape[1])
    return None


def _tolerance(text: str, dps: int):
    """--tolerance as an mpf at ``dps`` digits: a decimal ("1e-9") or "p/q" in ASCII digits,
    within the limits of exactattn.arith.numbers, and ≥ 0 (ValueError, exit 2: "nan" or
    "-1" would make every comparison fail, a claim about the models that is not one)."""
    import mpmath
    from ..arith.numbers import NumberTooLarge, decimal_mpf, shown
    from ..models.attention import strict_rational
    t = text.strip()
    try:
        with mpmath.workdps(dps):
            if "/" in t:
                q = strict_rational(t, "--tolerance")
                tol = mpmath.mpf(q.numerator) / q.denominator
            else:
                tol = decimal_mpf(t, "--tolerance")
    except NumberTooLarge:
        raise
    except ValueError:
        raise ValueError(f"--tolerance {shown(text)} is not a number like 1e-9 (ASCII digits, "
                         f"or p/q)") from None
    if tol < 0:
        raise ValueError(f"--tolerance {text} must be ≥ 0 (the largest parameter error "
                         f"accepted)")
    return tol


def parse_readout(text: str):
    """"1,0,-1/2" → rationals; "eK" → None, K (the unit vector, built once E is known)."""
    from ..models.attention import strict_rational as parse_rational
    t = text.strip()
    if t[:1] in "eE" and t[1:].isdigit():
        return None, int(t[1:])
    return [parse_rational(x, f"--readout entry {i}") for i, x in enumerate(t.split(","))], None


def run_from_torch(args):
    import io
    from ..models.attention import model_to_json
    from ._common import MAX_DIM, read_text
    data = read_text(args.file, "torch", binary=True)   # regular, at most 16 MiB: not a FIFO
    try:
        from ..adapters import torch as adapter
        state, heads = adapter.load(args.file, args.heads, args.prefix, source=io.BytesIO(data))
    except ImportError as e:
        raise ValueError(str(e)) from None
    E = _embed_dim(state)
    if E is not None and E > MAX_DIM:
        raise ValueError(f"{args.file}: the layer has embed_dim {E}, above the limit {MAX_DIM} "
                         f"of exactattn's models (d ≤ {MAX_DIM}); use a smaller layer")
    if heads is None:
        raise ValueError(f"{args.file} holds a state dict, which does not record num_heads: "
                         f"pass --heads H")
    r, unit = parse_readout(args.readout)
    if r is None:
        E = len(adapter.AttentionWeights(state, heads).Wo)
        if unit >= E:
            raise ValueError(f"--readout e{unit}: the layer has embed_dim {E} (e0…e{E - 1})")
        r = [int(i == unit) for i in range(E)]
    m = adapter.heads(state, r, num_heads=heads, dps=args.dps, canonical=not args.raw)
    print(model_to_json(m))
    return 0
