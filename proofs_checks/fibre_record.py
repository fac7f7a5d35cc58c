"""The ``fibre`` record of a run whose uniqueness was certified (beyond P2, answer fibres;
docs/design.md §11): everything the stdlib checker needs to re-derive, from the transcript
alone, that the run's answer fibre is what the record says.

A record is ::

    {"kind": "fibre", "dim": d, "H0": H0, "U": rows, "X": rows,
     "transcript": [{"tokens", "answer"}],    # the P2 schedule's queries, then the extra ones
     "extra": [{"a": [...], "b": [...]}],      # each extra family I(Σ a_i u_i, Σ b_j x_j)
     "functions": [{"K": q, "poles": [[σ, c], ...]}],   # G of every family: the schedule's
                                                         # in schedule order, then the extra
     "order": [family index, ...],             # the labelling order of the search
     "tree": [{"heads": H′, ...}],             # the search tree, H′ = 0 … H0 (fibre.py)
     "pieces": [{"heads": H′, "S": [...], "r": [...]}],  # each leaf's representative point
     "model": heads or null}                   # the fibre's one model, when it is one

The functions are claims the checker verifies (each reproduces its family's samples exactly
in Q(t)); the tree is re-walked, every witness recombined; the pieces re-solved.  Numbers are
rationals as strings; tree witnesses {equation index: coefficient}.
"""

from __future__ import annotations

from .certificates import heads_json, rational, transcript_json, vector_json

__all__ = ["fibre_record", "unique_certificate", "UNIQUE_STATEMENT"]


def _function(f) -> dict:
    return {"K": rational(f.K), "poles": [[rational(s), rational(c)] for s, c in f.poles]}


def _combination(lam) -> dict:
    return {str(int(e)): rational(x) for e, x in sorted(lam.items())}


def _node(n):
    """A tree node with its witnesses as JSON (numbers as strings)."""
    out = {}
    for key, val in n.items():
        if key == "children":
            out[key] = [_node(c) for c in val]
        elif key == "closed":
            if "ne" in val:
                out[key] = {"ne": int(val["ne"]),
                            "combinations": [_combination(lam) for lam in val["combinations"]]}
            else:
                out[key] = {"system": val["system"],
                            "combination": _combination(val["combination"])}
        elif key == "dominated":
            out[key] = {"head": int(val["head"]), "combination": _combination(val["combination"]),
                        "by": [int(x) for x in val["by"]]}
        elif key == "labels":
            out[key] = [int(x) for x in val]
        else:
            out[key] = int(val)
    return out


def _piece(p) -> dict:
    S, r = p.representative()
    return {"heads": p.heads, "S": [[vector_json(row) for row in Sh] for Sh in S],
            "r": [vector_json(rh) for rh in r]}


def fibre_record(uniqueness, schedule, transcript) -> dict:
    """The ``fibre`` record (module docstring) of a
    :class:`~exactattn.learners.p2.unique.Uniqueness` for the P2 ``schedule`` whose
    ``transcript`` [(tokens, answer)] holds the schedule's queries (the extra ones are the
    Uniqueness's own)."""
    fib = uniqueness.fibre
    model = None
    if fib.unique_model() is not None:
        model = heads_json(uniqueness.heads)
    return {"kind": "fibre", "dim": schedule.d, "H0": schedule.H0,
            "U": [vector_json(r) for r in schedule.U], "X": [vector_json(r) for r in schedule.X],
            "transcript": transcript_json(list(transcript) + list(uniqueness.extra_transcript)),
            "extra": [{"a": vector_json(a), "b": vector_json(b)}
                      for a, b in uniqueness.extra_families],
            "functions": [_function(f) for f in fib.families],
            "order": [int(k) for k in fib.order],
            "tree": [_node(n) for n in fib.tree],
            "pieces": [_piece(p) for p in fib.pieces],
            "model": model}


UNIQUE_STATEMENT = ("certified uniqueness of one exact run: every canonical model with at most "
                    "H0 heads that gives the transcript's answers is the recovered model (the "
                    "answer fibre, re-derived from the transcript)")


def unique_certificate(result) -> dict:
    """A stand-alone certificate of a ``certify_unique=True`` run: claim ``unique``, one
    ``fibre`` record (``exactattn learn multi-head --certify-unique --certificate FILE``)."""
    from exactattn.learners.p2.schedule import Schedule

    from .certificates import FORMAT, VERSION
    ex = result.extra
    schedule = Schedule(ex["U"], ex["X"], ex["H0"])
    return {"format": FORMAT, "version": VERSION, "claim": "unique",
            "reference": "docs/design.md §11", "statement": UNIQUE_STATEMENT, "size": "full",
            "params": {"learner": result.algorithm, "dim": result.dim},
            "holds": True,
            "checks": [fibre_record(result.uniqueness, schedule, result.transcript)],
            "symbolic": []}
