"""Cost estimates before a run, and the budget they are held to (docs/design.md §2 exact,
§4.3 schedule).

An exact answer of an H-head model on a query with n distinct tokens is a ratio of sparse
polynomials in t with up to n^H terms each once expanded: 2^(H+1) terms for a copy-count
query (n = 2) — 130 k at H = 16, 7.7 M at H = 22.  The estimates price only what a run
really expands (docs/design.md §2.1, lazy exact answers):

* **lazy answers** (the library's own models: each answer kept as its heads' data, a
  :class:`~exactattn.arith.multiplicities.PackedElement`): the P2 run takes the answers'
  images from that data, certifies and validates by comparing it (the same heads' data give
  the same answer), and expands nothing; it costs per query a fixed part and a part
  growing with H₀ and with d (``LAZY_*``, measured by ``benchmarks/bench_heads.py`` and
  ``benchmarks/bench_core.py``) and a few hundred bytes of tokens and answer;
* **expanded answers** (a black box returning built elements of Q(t)): every answer and
  the model's answer it is compared with have their terms, priced at ``SECONDS_PER_TERM``
  per term over the whole run; such a run is refused beyond ``expfield.MAX_TERMS`` terms
  per answer (FLINT aborts the process on a failed allocation), and so is every expansion
  where it is built (:class:`~exactattn.arith.expfield.TooLarge`);
* **a certificate** writes every answer expanded: ``exactattn learn --certificate`` prices
  the schedule as expanded answers before the first query.

The P2 schedule asks 4H₀d² − 2H₀ + 1 queries of length ≤ 2H₀ + 1.  Before the first query it
is priced as lazy answers (:func:`estimate_multi_head` ``lazy=True``); the first copy-count
answer shows which kind the oracle gives (:func:`expanded_terms`, which expands nothing), and
an expanded one re-prices the schedule at its size before the rest is asked.  After the
schedule the validation queries are priced (:func:`estimate_validation`) at the shapes they
will have and the recovered head count H* (an oracle of the class has exactly H* canonical
heads; one that has more fails at its first validation query).  :func:`check_budget`
refuses, with the estimate in one line, a run above the budget unless ``force`` is given.

The figures are estimates for refusing hopeless runs, never a guarantee; ``MP_SECONDS_PER_OP``
prices the mp / float backends per head·token·d².
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from math import lcm

from ...arith import expfield
from .schedule import published_count, published_max_length

__all__ = ["CostEstimate", "CostExceeded", "Budget", "DEFAULT_BUDGET", "estimate_multi_head",
           "estimate_validation", "validation_floor", "expanded_terms", "lazy_run", "lazy_estimate",
           "heads_shown", "estimate_answer", "check_budget"]

#: a lazy exact P2 run, per query: a fixed part and parts per head of H₀ and per unit of d
#: (CPU seconds, oracle + images + interpolation + certification; measured at d = 4…32,
#: H₀ = 1…64 and at (128, 4) on the reference machine: 0.04–0.16 ms per query)
LAZY_SECONDS_PER_QUERY = 3e-5
LAZY_SECONDS_PER_HEAD = 1.5e-6
LAZY_SECONDS_PER_DIM = 1.3e-6
#: ... and bytes per query kept (answer, transcript entry) and per token of its length
LAZY_BYTES_PER_QUERY = 800
LAZY_BYTES_PER_TOKEN = 24
#: seconds per answer term over a whole certified exact run (measured at (d, H) = (16, 8))
SECONDS_PER_TERM = 1.5e-6
#: seconds per term and pass of an exact validation answer (evaluated and compared, not
#: interpolated): 0.9–2e-7 measured at d = 2, H = 6…8 on the reference machine
VALIDATION_SECONDS_PER_TERM = 2e-7
#: seconds per head × token × d² on the mp / float backends (answers are numbers; mp at 50
#: digits takes ~7 ms per length-17 query at (16, 8))
MP_SECONDS_PER_OP = 2e-7


class CostExceeded(ValueError):
    """A run's estimated cost is above the budget (raised before the first query)."""


@dataclass(frozen=True)
class Budget:
    """Memory (bytes) and time (seconds) a run may be estimated to take."""

    bytes: int = 4 << 30
    seconds: float = 3600.0


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True)
class CostEstimate:
    """What a run is estimated to need (docs/design.md §2, §4.3)."""

    what: str
    queries: int
    max_length: int
    terms_per_answer: int
    exponent_bits: int
    bytes: int
    seconds: float
    exact: bool = True
    #: the answers are kept unexpanded (``terms_per_answer`` is then 0: nothing is expanded)
    lazy: bool = False

    def summary(self) -> str:
        answers = ("numeric answers" if not self.exact else
                   "lazy exact answers (kept as their heads' data, never expanded)" if self.lazy
                   else f"exact answers of up to {_num(self.terms_per_answer)} terms once "
                        f"expanded (exponents of ~{self.exponent_bits} bits)")
        return (f"{self.what}: {self.queries:,} quer{'y' if self.queries == 1 else 'ies'} "
                f"of length ≤ {self.max_length}, {answers}: ~{_bytes(self.bytes)}, "
                f"~{_secs(self.seconds)}")


def _term_bytes(exponent_bits: int) -> int:
    """Bytes of one stored term: a packed exponent and an fmpz coefficient (~ 3 words)."""
    return 24 + 8 * max(0, (exponent_bits - 1) // 64)


def estimate_multi_head(d: int, H0: int, backend: str = "exact", exponent_bits: int = 40,
                        validation: int = 0, lazy: bool = False):
    """The P2 schedule at (d, H₀): 4H₀d² − 2H₀ + 1 queries of length ≤ 2H₀ + 1.  On the exact
    backend, ``lazy=True`` prices lazy answers (:func:`lazy_estimate`: nothing expanded);
    otherwise that and the terms of expanded answers: each answer of an ≤ H₀-head model has ≤ 2·2^H₀ terms (two distinct tokens per
    copy-count query), with exponents of about ``exponent_bits`` bits (default: the 40 bits
    of rational entries with small denominators on the default query box).  ``validation``
    validation queries (three distinct tokens, length ≤ 2H₀ + 4: ≤ 2·3^H₀ terms each
    expanded, and a comparison that may multiply two of them) are added."""
    queries, length = published_count(d, H0), published_max_length(H0)
    what = f"multi-head learner at d={d}, H0={H0} ({backend})"
    if validation:
        what += f" with {validation} validation queries"
    if backend != "exact":
        seconds = (queries * H0 * length + validation * H0 * (length + 3)) * d * d * \
            MP_SECONDS_PER_OP
        return CostEstimate(what, queries, length, 1, 0, queries * 64, seconds, exact=False)
    base = lazy_estimate(what, d, H0, [length] * queries + [length + 3] * validation,
                         exponent_bits)
    if lazy:
        return base
    terms = 2 * 2 ** H0
    total = queries * terms
    if validation:
        vterms = 2 * 3 ** H0
        total += validation * vterms * 3        # the answer, the model's, and their products
        terms = max(terms, vterms)
    return replace(base, terms_per_answer=terms, lazy=False,
                   bytes=base.bytes + total * _term_bytes(exponent_bits),
                   seconds=base.seconds + total * SECONDS_PER_TERM)


def lazy_estimate(what: str, d: int, H0: int, lengths, exponent_bits: int = 40,
                  passes: int = 1) -> CostEstimate:
    """Queries of these lengths answered lazily (module docstring): ``LAZY_SECONDS_*`` per
    query (times ``passes``: a validation query builds the model's data beside the
    oracle's) and ``LAZY_BYTES_*`` kept per query; no term is expanded."""
    per_query = LAZY_SECONDS_PER_QUERY + LAZY_SECONDS_PER_HEAD * H0 + LAZY_SECONDS_PER_DIM * d
    return CostEstimate(what, len(lengths), max(lengths, default=0), 0, exponent_bits,
                        sum(LAZY_BYTES_PER_QUERY + LAZY_BYTES_PER_TOKEN * L for L in lengths),
                        passes * per_query * len(lengths), lazy=True)


def estimate_validation(d: int, H0: int, heads: int, shapes, backend: str = "exact",
                        exponent_bits: int = 40, floor: bool = False,
                        lazy: bool = False) -> CostEstimate:
    """The validation queries of a multi-head run, priced after its schedule (module
    docstring): ``shapes`` are their (length, distinct tokens) in asking order
    (:func:`~exactattn.learners.result.validation.validation_shapes`), ``heads`` the recovered
    head count H*.  On the exact backend an answer of H* heads on k distinct tokens has
    ≤ 2·k^H* terms (k^H* in the numerator and in the denominator, as in
    :func:`estimate_answer`; the measured sizes are within a few per cent of it).  Memory:
    every answer is kept (``result.validation``) plus one comparison's two operands; time:
    three passes over each answer's terms (the oracle's answer, the model's, their cross
    products) at ``VALIDATION_SECONDS_PER_TERM``.  ``floor=True`` names ``shapes`` as the
    cheapest the queries can have (:func:`validation_floor`), priced before the schedule.
    ``lazy=True`` (the run's answers are lazy, :func:`lazy_run`): the oracle's answer and
    the model's are compared as their heads' data, expanded never (:func:`lazy_estimate`,
    two passes per query)."""
    shapes = [(int(L), int(k)) for L, k in shapes]
    length = max((L for L, _ in shapes), default=0)
    what = (f"validation after the multi-head schedule at d={d}, H0={H0} ({backend}), priced "
            f"at the {heads} recovered head{'' if heads == 1 else 's'}") if not floor else (
        f"validation after the multi-head schedule at d={d}, H0={H0} ({backend}), priced "
        f"before it at its cheapest shapes (k = 4, 3, 2, 1 distinct tokens) and {heads} "
        f"head{'' if heads == 1 else 's'}")
    if backend != "exact":
        seconds = sum(L for L, _ in shapes) * max(1, heads) * d * d * MP_SECONDS_PER_OP
        return CostEstimate(what, len(shapes), length, 1, 0, len(shapes) * 64, seconds,
                            exact=False)
    if lazy:
        return lazy_estimate(what, d, max(1, heads), [L for L, _ in shapes], exponent_bits,
                             passes=2)
    per_answer = [2 * k ** heads for _, k in shapes]
    top = max(per_answer, default=0)
    held = sum(per_answer) + 2 * top          # every answer is kept; one comparison at a time
    return CostEstimate(what, len(shapes), length, top, exponent_bits,
                        held * _term_bytes(exponent_bits),
                        3 * sum(per_answer) * VALIDATION_SECONDS_PER_TERM)


def validation_floor(count: int):
    """The cheapest shapes ``count`` validation queries can have, whatever the draw: a run
    of at least four asks k = 4, 3, 2 and 1 distinct tokens once each, a shorter one has its
    two special shapes at k ≥ 2 (:mod:`~exactattn.learners.result.validation`).  Priced
    before the schedule (:func:`estimate_validation` of these), they refuse up front a run
    whose validation could never be afforded at its head count."""
    from ..result.validation import FORCED_DISTINCT
    if count >= len(FORCED_DISTINCT):
        return [(k, k) for k in FORCED_DISTINCT]
    return [(2, 2)] * min(count, 2) + [(1, 1)] * max(0, count - 2)


def expanded_terms(answer) -> int:
    """The terms an exact answer holds expanded: 0 for a lazy answer (a
    :class:`~exactattn.arith.multiplicities.PackedElement` over its group's L — kept as its
    heads' data; images, certification and validation read that data, docs/design.md §2.1),
    else its numerator's and denominator's terms, already built (nothing is expanded here)."""
    if getattr(answer, "packed", None) is not None:
        return 0
    return len(answer.num) + len(answer.den)


def lazy_run(transcript) -> bool:
    """Whether a run's exact answers are lazy: its first answer is (an oracle answers every
    query alike); False for an empty transcript (priced as expanded)."""
    from ...arith.expfield import ExpElement
    first = transcript[0][1] if transcript else None
    return isinstance(first, ExpElement) and expanded_terms(first) == 0


def heads_shown(answer) -> int:
    """A lower bound of the head count behind one exact copy-count answer: its denominator
    Π_h (μ₁ t^(k_h1) + μ₂ t^(k_h2)) has at most 2^H terms, so H ≥ log₂(terms)."""
    return max(1, (len(answer.den) - 1).bit_length())


def estimate_answer(model, tokens):
    """One exact evaluation F(X) of a rational model (docs/design.md §2): numerator and
    denominator have up to min(Π_h n_h, 1 + Σ_h span_h) terms each (n_h ≤ n distinct
    tokens; span_h the spread of head h's exponents k = L·score, from the exact scores
    computed here — a few small rational products)."""
    from ...arith.numbers import to_rational
    toks = [[to_rational(x, f"token {n}, entry {i}") for i, x in enumerate(t)]
            for n, t in enumerate(tokens)]
    distinct = {tuple(t) for t in toks}
    xN = toks[-1]
    L, per_head = 1, []
    for h in model.heads:
        Wx = [sum((Fraction(w) * x for w, x in zip(row, xN)), Fraction(0)) for row in h.W]
        scores = {sum((a * b for a, b in zip(tok, Wx)), Fraction(0)) for tok in distinct}
        for s in scores:
            L = lcm(L, s.denominator)
        per_head.append(scores)
    product, span, top = 1, 0, 0
    for scores in per_head:
        product *= len(scores)
        span += int((max(scores) - min(scores)) * L)
        top = max(top, max(abs(s) for s in scores) * L)
    bits = max(1, int(top).bit_length())
    terms = 2 * min(product, span + 1)
    return CostEstimate(f"an exact answer of {len(model.heads)} heads on {len(distinct)} "
                        f"distinct tokens", 1, len(toks), terms, bits,
                        terms * _term_bytes(bits), terms * SECONDS_PER_TERM / 3)


def check_budget(estimate: CostEstimate, force: bool = False, budget: Budget | None = None):
    """Raise CostExceeded (one line: the estimate, the budget and the way out) when the
    estimate is above the budget (default DEFAULT_BUDGET) and ``force`` is not given; an
    estimate of expanded answers beyond FLINT's allocation limit (``expfield.MAX_TERMS``
    terms each) is refused even with ``force``: those terms would be built (a lazy estimate
    expands none)."""
    if estimate.terms_per_answer > expfield.MAX_TERMS:
        raise CostExceeded(f"refused: {estimate.summary()}; one answer exceeds the "
                           f"{_num(expfield.MAX_TERMS)}-term limit of exact arithmetic "
                           f"(use --backend mp{_skip_validation(estimate)})")
    if force:
        return estimate
    budget = DEFAULT_BUDGET if budget is None else budget
    over = estimate.bytes > budget.bytes or estimate.seconds > budget.seconds
    if over:
        raise CostExceeded(f"refused: {estimate.summary()}, above the budget of "
                           f"{_bytes(budget.bytes)} and {_secs(budget.seconds)}; pass "
                           f"--force (force=True) to run anyway"
                           f"{_skip_validation(estimate)}")
    return estimate


def _skip_validation(estimate) -> str:
    return (", or --validate 0 (validate=0) to skip the validation queries"
            if "validation" in estimate.what else "")


def _num(n: int) -> str:
    return f"{n:,}" if n < 10 ** 7 else f"{n:.2g}"


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} TB"


def _secs(s: float) -> str:
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    if s < 2 * 86400 * 365:
        return f"{s / 3600:.3g} h"
    return f"{s / (86400 * 365):.3g} years"
