"""Check kind ``run``: the consistency-and-genericity certificate of one exact learner run
(docs/design.md §8).

A record ``{"kind": "run", "learner": L, "dim": d, "params": {...}, "vectors": {...},
"transcript": [{"tokens", "answer"}], "recovered": [heads]}`` (optionally ``"model"``, the true
model, when the claim knows it) is checked from itself alone:

(a) the query schedule is rebuilt from the recorded vectors (and, for adaptive steps such as
    P1's probes chosen from v, from the recovered model) and the transcript must be exactly
    that schedule — same queries, same order, same count and lengths;
(b) the recovered model must reproduce every answer exactly in Q(t) (and so must the true
    model when it is given, whose canonical form must equal the recovered heads as a multiset);
(c) every genericity condition of the learner is evaluated at the recovered model itself.

What this proves is stated by each learner module (``PROVES``) and printed in the finding.

Dispatch: :data:`LEARNERS` maps the ``learner`` field to a module exposing ``NAME``,
``PARAMS`` (required parameter fields), ``VECTORS`` (required vector fields),
``read(dim, params, vectors)`` → a parsed run description with an upper bound on the number
of queries, ``schedule(run, recovered)`` → the list of queries, ``genericity(run, recovered)``
→ the list of conditions confirmed (raising Rejected if one fails), and ``PROVES`` (or
``proves(run, recovered)`` where what is proved depends on the run: Lemma B).  A new
learner adds one module and one line here (the economy and adaptive schedules share one module,
:mod:`.run_economy`, through one object per variant; the multi-head low-rank schedule is
:mod:`.run_multi_low_rank`).  :func:`rebuild` is the part that needs no answer: the
``economy-count`` check recounts its blocks on the schedule rebuilt from its run.
"""

from __future__ import annotations

from . import (run_causal, run_economy, run_low_rank, run_multi_head, run_multi_low_rank,
               run_single_head)
from .parse import field, heads, integer, listed, multiset, only, require, string
from .qt import attention, canonical_form, element, is_canonical, same_element, tokens_of

#: learner name → checker module (one module per learner)
LEARNERS = {
    run_multi_head.NAME: run_multi_head,
    run_single_head.NAME: run_single_head,
    run_low_rank.NAME: run_low_rank,
    run_economy.ECONOMY.NAME: run_economy.ECONOMY,
    run_economy.ADAPTIVE.NAME: run_economy.ADAPTIVE,
    run_multi_low_rank.NAME: run_multi_low_rank,
    run_causal.NAME: run_causal,
}

MAX_DIM = 16


def read_transcript(tr, dim, expected, where):
    """Parse a transcript whose length must be exactly `expected` (checked before any entry is
    read, so a forged length costs nothing)."""
    listed(tr, where)
    require(len(tr) == len(expected), f"{where}: {len(tr)} queries but the schedule rebuilt from "
            f"the recorded vectors has {len(expected)}")
    out = []
    for k, entry in enumerate(tr):
        only(entry, ("tokens", "answer"), f"{where}[{k}]")
        toks = tokens_of(entry["tokens"], dim, f"{where}[{k}].tokens")
        require(toks == expected[k], f"{where}[{k}]: the query is not query {k} of the schedule "
                f"rebuilt from the recorded vectors")
        out.append((toks, element(entry["answer"], f"{where}[{k}].answer")))
    return out


def rebuild(c):
    """(learner module, parsed run, recovered heads, rebuilt schedule) of a run record: steps
    that need no answer (the ``economy-count`` check reads the rebuilt blocks from here)."""
    only(c, ("kind", "learner", "dim", "params", "vectors", "transcript", "recovered"), "run",
         optional=("model",))
    name = string(c["learner"], "run.learner")
    require(name in LEARNERS, f"run: unknown learner {name!r} (known: {', '.join(LEARNERS)})")
    mod = LEARNERS[name]
    dim = integer(c["dim"], "run.dim", 1, MAX_DIM)
    params = only(c["params"], mod.PARAMS, "run.params")
    vectors = only(c["vectors"], mod.VECTORS, "run.vectors")
    run = mod.read(dim, params, vectors)
    rec = heads(c["recovered"], dim, "run.recovered", max_heads=run["max_heads"])
    require(is_canonical(rec), "run: the recovered heads are not canonical (repeated W or a "
            "zero v)")
    return mod, run, rec, mod.schedule(run, rec)


def check_run(c, checks=()):
    """Consistency-and-genericity certificate of one run: (a) transcript = rebuilt schedule, (b) every
    answer reproduced in Q(t), (c) genericity at the recovered model (docs/design.md §8).
    A learner module with a ``check`` of its own (vector answers: :mod:`.run_causal`) checks
    its records whole."""
    own = getattr(LEARNERS.get(c.get("learner")) if isinstance(c, dict) else None, "check", None)
    if own is not None:
        return own(c, checks)
    mod, run, rec, expected = rebuild(c)
    name, dim = c["learner"], c["dim"]
    transcript = read_transcript(c["transcript"], dim, expected, "run.transcript")
    models = [("recovered model", rec)]
    if "model" in c:
        model = heads(c["model"], dim, "run.model")
        require(canonical_form(model) == multiset(rec),
                "run: the recovered heads ≠ the canonical form of the true model (as multisets)")
        if hasattr(mod, "true_model"):
            mod.true_model(run, model)
        models.append(("true model", model))
    for k, (toks, ans) in enumerate(transcript):
        for what, m in models:
            require(same_element(attention(m, toks), ans),
                    f"run: the {what} does not reproduce answer {k} exactly in Q(t)")
    conditions = mod.genericity(run, rec)
    longest = max((len(t) for t in expected), default=0)
    truth = "; canonical form of the true model" if "model" in c else ""
    return (f"run {name} d={dim} {mod.describe(run)}: transcript = the schedule rebuilt from "
            f"the recorded vectors ({len(expected)} queries, max length {longest}); "
            f"{len(expected)} answers re-checked exactly in Q(t){truth}; generic for the "
            f"recovered model: {', '.join(conditions)} — "
            f"{mod.proves(run, rec) if hasattr(mod, 'proves') else mod.PROVES}")


def run_of(checks, k, where):
    """checks[k], which must be a run record (a count refers to its run by index)."""
    integer(k, f"{where}.run", 0, len(checks) - 1)
    r = checks[k]
    require(isinstance(r, dict) and r.get("kind") == "run", f"{where}: check {k} is not a run")
    return r


def transcript_lengths(r):
    """(queries, max length) of a run record (its transcript is checked by check_run)."""
    tr = field(r, "transcript", "run")
    listed(tr, "run.transcript")
    return len(tr), max((len(e["tokens"]) for e in tr if isinstance(e, dict)), default=0)
