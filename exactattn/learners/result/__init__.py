"""What every learner returns (docs/design.md §7): :class:`LearnResult`, the recovered heads
and the query accounting; beside it what every result says about itself — the oracle's
precision and error bars (:mod:`.precision`), validation queries (:mod:`.validation`), the
``proves`` text (:mod:`.proves`) and comparison with a truth (:mod:`.compare`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LearnResult:
    """Recovered heads as :class:`~exactattn.models.AttentionHead` objects (``.W[i][j]``,
    ``.v[i]``; a head also unpacks as ``W, v = head``) plus counts, transcript and checks.

    ``heads`` are canonical (P2) for multi-head learners; ``model`` is the recovered model
    (a :class:`~exactattn.models.MultiHeadAttention` here; a one-layer Transformer for
    ``learn_transformer``); ``compare(truth)``, ``to_numpy()``, ``to_json()`` and ``save(path)``
    use it; ``write_certificate(path)`` writes the run's stand-alone certificate for
    ``python -m proofs_checks.verify``; ``certificate`` holds the exact certification record
    on the exact backend (None elsewhere); ``error_bar`` what an mp / float result proves about its parameters (an
    :class:`~exactattn.learners.result.precision.ErrorBar`; None on exact); ``notes`` lists
    non-fatal observations (e.g. fewer canonical heads than the bound).  The learners pass
    (W, v) pairs; they are turned into heads once, here.

    ``queries`` and ``transcript`` are the schedule's (the published count);
    ``validation_queries`` counts the validation queries asked after it and ``validation``
    holds them with their answers (:mod:`exactattn.learners.result.validation`: shapes the schedule
    never uses, counted apart); ``proves`` says in words what the result proves
    (:mod:`exactattn.learners.result.proves`; docs/design.md §8)."""

    algorithm: str
    dim: int
    backend: str
    heads: list
    queries: int
    max_length: int
    expected_queries: int | None = None
    expected_max_length: int | None = None
    transcript: list = field(default_factory=list, repr=False)
    certificate: dict | None = field(default=None, repr=False)
    notes: list = field(default_factory=list)
    extra: dict = field(default_factory=dict, repr=False)
    seconds: float | None = None
    error_bar: object = None
    validation_queries: int = 0
    validation: list = field(default_factory=list, repr=False)
    proves: str | None = None
    #: ``certify_unique=True`` (P2 answer fibres, docs/design.md §11): the queries asked
    #: beyond the schedule to shrink the fibre to one model, and the
    #: :class:`~exactattn.learners.p2.unique.Uniqueness` (fibre, extra families), else None
    unique_queries: int = 0
    uniqueness: object = field(default=None, repr=False)

    def __post_init__(self):
        from ...models.attention import AttentionHead
        self.heads = [h if isinstance(h, AttentionHead) else AttentionHead(*h)
                      for h in self.heads]

    @property
    def model(self):
        """The recovered model: the heads as a MultiHeadAttention of dimension ``dim``."""
        from ...models.attention import MultiHeadAttention
        return MultiHeadAttention(self.heads, dim=self.dim)

    # ------------------------------------------------------------------ using a result
    def compare(self, truth, dps: int | None = None):
        """The recovered model beside a reference ``truth`` (a model, a head, (W, v) pairs, or
        a OneLayerTransformer): heads matched by permutation, errors exact on rational
        models (``equal``: the same function), else in digits / bits
        (:class:`~exactattn.learners.result.compare.Comparison`; P2 canonical heads)."""
        from .compare import compare_models
        return compare_models(truth, self.model, dps)

    def to_numpy(self, dtype=None):
        """``(W, v)``: the recovered heads as arrays of shape (H, d, d) and (H, d), float64 by
        default (``dtype=object`` keeps the exact Fractions / mpf entries)."""
        import numpy as np
        dtype = np.float64 if dtype is None else dtype
        conv = float if dtype is not object else (lambda x: x)
        d, H = self.dim, len(self.heads)
        W = np.array([[[conv(x) for x in r] for r in h.W] for h in self.heads], dtype=dtype)
        v = np.array([[conv(x) for x in h.v] for h in self.heads], dtype=dtype)
        return W.reshape(H, d, d), v.reshape(H, d)

    def to_json(self) -> str:
        """The recovered model as model JSON (rationals as "p/q" strings; the format of
        ``exactattn model`` and :func:`~exactattn.model_to_json`; a Transformer in its own
        JSON type)."""
        import json
        return json.dumps(self.model.to_dict(), indent=1)

    def save(self, path) -> None:
        """Write :meth:`to_json` to ``path``."""
        _write_text(path, self.to_json() + "\n")

    def write_certificate(self, path, truth=None) -> None:
        """Write the run's stand-alone consistency-and-genericity certificate (claim ``run``,
        docs/design.md §8; docs/evidence.md) to ``path``: exactly what ``exactattn learn ...
        --backend exact --certificate FILE`` writes, which ``python -m proofs_checks.verify
        FILE`` re-checks from the file alone.  With ``truth`` (the model the oracle answers
        from) the file carries it too, and the checker confirms the recovered heads are its
        canonical form.

        ValueError (one line, nothing written) for an inexact result (mp / float answers are
        not exact, so there is nothing to re-check exactly) and for a learner without a
        ``run`` record (single-head, low-rank and the multi-head schedules have one; the
        Transformer, noisy and membership learners do not)."""
        if self.backend != "exact":
            raise ValueError(f"write_certificate needs an exact result: this {self.algorithm} "
                             f"result is on the {self.backend} backend, whose answers the "
                             f"checker cannot re-check exactly (learn with backend='exact')")
        from proofs_checks.common import run_certificate    # the format the checker reads
        try:
            cert = run_certificate(self, truth)
        except (KeyError, ValueError):
            raise ValueError(f"write_certificate: the {self.algorithm} learner has no run "
                             f"record (single-head, low-rank and the multi-head schedules "
                             f"have one)") from None
        import json
        _write_text(path, json.dumps(cert, ensure_ascii=False) + "\n")

    def __repr__(self):
        return (f"LearnResult({self.algorithm}, d={self.dim}, backend={self.backend}, "
                f"heads={len(self.heads)}, queries={self.queries}"
                f"{'' if self.expected_queries is None else '/' + str(self.expected_queries)}, "
                f"max_length={self.max_length}, validation={self.validation_queries}, "
                f"certified={bool(self.certificate)})")

    def _repr_markdown_(self):
        """Notebook display: the accounting line and the recovered heads as matrices."""
        from ...models.latex import latex_heads
        expected = "" if self.expected_queries is None else f" (expected {self.expected_queries})"
        line = (f"**LearnResult** {self.algorithm} · d = {self.dim} · backend {self.backend} · "
                f"{self.queries} queries{expected} + {self.validation_queries} validation · "
                f"max length {self.max_length} · "
                f"{'certified exactly' if self.certificate else 'not certified'}")
        notes = "".join(f"\n- {n}" for n in self.notes)
        if self.proves:
            notes = f"\n- proves: {self.proves}" + notes
        return f"{line}\n{notes}\n\n{latex_heads([(h.W, h.v) for h in self.heads])}"


def _write_text(path, text: str) -> None:
    """Write ``text`` to ``path``; an OSError names the path (a write to a full disk or
    /dev/full fails after the file opened, so the error would carry no name)."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        if e.filename is not None:
            raise
        raise OSError(e.errno, e.strerror, str(path)) from None
