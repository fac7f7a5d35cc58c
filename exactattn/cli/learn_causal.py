"""`exactattn learn causal --dim D --heads H [--heads-bound H0] [--alibi SLOPES] [--residual]
[--schedule p2|economy] [--model FILE] [--certificate FILE] [--design-certificate FILE]
[--json]` (docs/decoders.md): a seeded random causal model (or the one in
FILE) behind a no-peek oracle that answers every position, learned exactly; the report gives
the query count beside P2's on the same model, the outputs read, and exact canonical equality.
Exact backend.  Bad arguments exit 2; a named failure exits 1."""

from __future__ import annotations

import sys
import time

from ._common import dump, output_file

__all__ = ["add_causal_args", "run_causal", "parse_alibi"]

#: flags of other variants that 'learn causal' does not take
_OTHER = (("rank", "--rank"), ("rank_bound", "--rank-bound"),
          ("hidden", "--hidden"), ("method", "--method"), ("oracle_digits", "--oracle-digits"),
          ("accuracy", "--accuracy"), ("unique_families", "--unique-families"),
          ("holdout", "--holdout"))


def add_causal_args(p):
    p.add_argument("--alibi", default=None, metavar="SLOPES",
                   help="causal: known ALiBi slopes, one shared (1/2) or one per head "
                        "(1/2,1/4,1/8), rational (docs/decoders.md)")
    p.add_argument("--residual", action="store_true",
                   help="causal: the model has a residual read-out w, recovered too")
    p.add_argument("--design-certificate", metavar="FILE", default=None,
                   type=output_file("file"),
                   help="causal: after learning, ask Theorem A's design (one causal query per "
                        "moment-curve family, counted apart) and write its certificate: every "
                        "oracle with ≤ H0 heads giving these outputs is the recovered model")


def parse_alibi(text):
    """'1/2' or '1/2,1/4,1/8' → rationals; anything else is a one-line ValueError."""
    from ..models.attention import strict_rational
    out = []
    for k, item in enumerate(text.split(",")):
        try:
            out.append(strict_rational(item.strip(), f"--alibi slope {k + 1}"))
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"--alibi slope {k + 1}: {item.strip()!r} is not a rational "
                             f"written p or p/q; the exact backend needs rational slopes "
                             f"(e^(-s) lies in Q(t) only for rational s)") from None
    return out


def _check(a):
    if a.backend is None:                       # the default: the causal learner is exact
        a.backend = "exact"
    if a.backend != "exact":
        raise ValueError("learn causal runs on the exact backend (float decoders: the Python "
                         "API exactattn.learners.decoder.inexact, docs/decoders.md)")
    for attr, flag in _OTHER:
        if getattr(a, attr, None) is not None:
            raise ValueError(f"{flag} does not apply to learn causal")
    if a.certify_unique:
        raise ValueError("--certify-unique does not apply to learn causal")
    if a.schedule not in (None, "p2", "economy"):
        raise ValueError(f"learn causal takes --schedule p2 (P2's families, 2d²−1 queries) or "
                         f"economy (the heads of a row matched by their residues, d²+d−1), "
                         f"not {a.schedule}")


def _model(a):
    from ..models.decoder import load_causal, random_causal
    slopes = parse_alibi(a.alibi) if a.alibi is not None else None
    if a.model:
        try:
            model = load_causal(a.model)
        except FileNotFoundError:
            raise ValueError(f"model file {a.model!r} not found") from None
        if a.dim is not None and a.dim != model.dim:
            raise ValueError(f"--dim {a.dim} but the model in {a.model} has dimension "
                             f"{model.dim}")
        if not model.is_rational:
            raise ValueError(f"{a.model} has real entries; the exact backend needs rationals")
        model = model.canonical()
        a.dim = model.dim
        if a.heads is None and a.heads_bound is None:
            a.heads = max(1, len(model.heads))
        if slopes is None and model.slopes is not None:
            slopes = list(model.slopes)
        a.residual = a.residual or model.residual is not None
        return model, slopes
    if a.dim is None:
        raise ValueError("give --dim D (or --model FILE)")
    a.heads = 1 if a.heads is None else a.heads
    if slopes is not None and len(slopes) not in (1, a.heads):
        raise ValueError(f"--alibi: {len(slopes)} slopes for {a.heads} heads (give one shared "
                         f"slope or one per head)")
    return random_causal(a.dim, a.heads, seed=a.seed,
                         slopes=slopes if slopes is None or len(slopes) > 1 else slopes[0],
                         residual=a.residual), slopes


def run_causal(a):
    from ..errors import LearningFailure
    from ..learners.decoder import learn_causal
    from ..learners.p2.schedule import published_count
    from ..oracles.oracle import Oracle
    _check(a)
    model, slopes = _model(a)
    if a.heads_bound is not None and a.heads is not None and a.heads_bound < a.heads:
        raise ValueError(f"--heads-bound {a.heads_bound} is below --heads {a.heads}")
    told = None if a.heads_bound is not None else a.heads      # the learner is told H or H0
    H0 = a.heads_bound if a.heads_bound is not None else a.heads
    oracle = Oracle(model, no_peek=True, timeout=a.timeout)
    base = {"algorithm": "causal", "dim": a.dim, "heads": a.heads,
            "heads_bound": a.heads_bound, "alibi": None if slopes is None else
            [str(s) for s in slopes], "residual": bool(a.residual), "backend": "exact",
            "seed": a.seed, "p2_queries": published_count(a.dim, H0)}
    start = time.perf_counter()
    try:
        result = learn_causal(oracle, a.dim, heads=told, heads_bound=a.heads_bound,
                              slopes=slopes, residual=a.residual, seed=a.seed,
                              validate=a.validate,
                              matching="residue" if a.schedule == "economy" else "p2",
                              force=a.force)
    except LearningFailure as e:
        sys.stderr.write(f"exactattn learn: {e.reason}: {e}\n")
        if a.json:
            print(dump(dict(base, recovered=False, error=e.reason, message=str(e),
                            queries=oracle.queries)))
        return 1
    recovered = result.model.head_set() == model.canonical().head_set()
    out = dict(base, queries=result.queries, expected_queries=result.expected_queries,
               max_length=result.max_length, outputs_read=result.extra["outputs_read"],
               validation_queries=result.validation_queries, mode=result.extra["mode"],
               recovered=bool(recovered), recovered_heads=len(result.heads),
               certified=bool(result.certificate), proves=result.proves,
               seconds=round(time.perf_counter() - start, 6))
    if a.model:
        out["model_file"] = a.model
    if a.save:
        result.save(a.save)
        out["saved"] = a.save
    if a.certificate is not None:
        result.write_certificate(a.certificate, model)
        out["certificate"] = a.certificate
    if a.design_certificate is not None and recovered:
        from ..learners.decoder.design import certify_causal
        c = certify_causal(oracle, result.model, heads_bound=H0)
        out.update(design_queries=c.queries, design_outputs=c.outputs,
                   design_max_length=c.max_length, design_holds=c.holds,
                   design_proves=c.proves)
        if c.holds:
            c.write_certificate(a.design_certificate)
            out["design_certificate"] = a.design_certificate
        recovered = c.holds
    print(dump(out) if a.json else _summary(out))
    return 0 if recovered else 1


def _summary(o):
    extra = "" if o["alibi"] is None else f", ALiBi slopes {','.join(o['alibi'])}"
    extra += ", residual" if o["residual"] else ""
    lines = [f"causal: d={o['dim']}, H={o['heads']}{extra}, backend exact",
             (f"queries {o['queries']} (expected {o['expected_queries']}; P2 on the same model: "
              f"{o['p2_queries']}), max length {o['max_length']}, outputs read "
              f"{o['outputs_read']}; + {o['validation_queries']} validation queries "
              f"(counted apart)"),
             f"recovered: {'yes' if o['recovered'] else 'NO'} (exact canonical equality)"
             + (", certified exactly" if o["certified"] else ""),
             f"proves: {o['proves']}",
             f"time {o['seconds']:.3f} s"]
    if o.get("certificate"):
        lines.append(f"certificate written to {o['certificate']}")
    if "design_queries" in o:
        lines.append(f"design (Theorem A): + {o['design_queries']} queries of length ≤ "
                     f"{o['design_max_length']} ({o['design_outputs']} outputs, counted apart): "
                     f"{o['design_proves']}")
    if o.get("design_certificate"):
        lines.append(f"design certificate written to {o['design_certificate']}")
    if o.get("saved"):
        lines.append(f"recovered model written to {o['saved']}")
    return "\n".join(lines)
