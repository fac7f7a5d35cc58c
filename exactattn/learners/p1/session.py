"""Pieces shared by the P1 learners (single head, low rank): a recording query session,
v from length-1 queries, the sigmoid inversion of a length-2 query, and certification of a
recovered head against the transcript.

The two-token identity (P1 Thm 4.1; docs/design.md §4.1): for the query [(a + b), b] a single head
(W, v) scores the tokens (a+b)ᵀWb and bᵀWb, so the score gap is aᵀWb and

    f = v·b + σ(aᵀWb) · (a·v),     σ(z) = 1/(1 + e^{−z}).

With v known and a·v ≠ 0, σ = (f − v·b)/(a·v) and σ/(1−σ) = exp(aᵀWb).  On the exact backend
exp(aᵀWb) = t^k with t = e^{1/L}, so aᵀWb = k/L is an exact rational (ExpElement.log); an
answer for which σ/(1−σ) is not such a power is not a single head's, and is reported.
"""

from __future__ import annotations

import random
from fractions import Fraction

from ...arith import get_backend
from ...arith.rational_vectors import dot
from ...errors import CertificationFailed, NotAttention, NotIdentifiable
from ...models.attention import AttentionHead, MultiHeadAttention
from ...arith.numbers import format_rational
from ...oracles.oracle import as_oracle

__all__ = ["Session", "ReplaySession", "check_dim", "unit", "read_value_vector", "bilinear",
           "certify", "holdout_check", "fmt", "attach_error_bar", "validate_p1"]


def check_dim(dim) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    return dim


def unit(d: int, i: int) -> list:
    """The standard basis vector e_i of length d (integer entries, exact on every backend)."""
    return [1 if k == i else 0 for k in range(d)]


def fmt(x) -> str:
    """A scalar as text: "p/q" for rationals, 30 significant digits otherwise."""
    if isinstance(x, (int, Fraction)):
        return format_rational(x)
    import mpmath
    return mpmath.nstr(mpmath.mpf(x), 30)


def _silent(stage, done, total=None):
    pass


class Session:
    """One learner run against an oracle: every query and answer of *this run* is recorded
    (the wrapped Oracle may have been used before), answers are converted to the learner's
    backend.  ``progress(stage, done, total)`` is told of every query ("queries", out of
    ``expected`` when the count is known) and of the certification (docs/design.md §7)."""

    def __init__(self, oracle, dim: int, backend=None, dps=None, progress=None,
                 expected=None):
        self.progress = progress or _silent
        self.expected = expected
        self.dim = check_dim(dim)
        # backend=None: the Oracle's own backend (inferred for a plain callable), as in as_oracle
        self.oracle = as_oracle(oracle, self.dim, backend, dps)
        # the learner computes at its own precision when one is asked for explicitly
        own = self.oracle.backend
        self.be = own if dps is None or getattr(own, "dps", None) == dps \
            else get_backend(own.name, dps)
        if self.be.name == "symbolic":
            raise ValueError("the learners run on the exact, mp or float backend; the symbolic "
                             "backend is for identities (docs/design.md §2)")
        self.transcript: list = []
        self.max_length = 0
        self._dots = {}

    @property
    def exact(self) -> bool:
        return self.be.name == "exact"

    #: ``oracle_precision=`` as given to the learner (None: inferred)
    stated_precision = None

    @property
    def precision(self):
        """mp/float: the oracle precision η, stated or inferred from the oracle and the answers
        so far (:func:`~exactattn.learners.result.precision.infer_precision`)."""
        from ..result.precision import infer_precision
        return infer_precision(self.oracle, [y for _, y in self.transcript],
                               self.stated_precision)

    @property
    def tolerance(self):
        """mp/float: the residual tolerance η^(1/3) of the oracle precision η (one rule,
        :func:`~exactattn.learners.result.precision.approximate_tolerances`), and never below the
        learner's own arithmetic precision."""
        from ..result.precision import approximate_tolerances
        tol = self.be.scalar(approximate_tolerances(self.precision)["residual"])
        return max(self.be.tolerance, tol)

    @property
    def queries(self) -> int:
        return len(self.transcript)

    def ask(self, tokens):
        y = self.oracle(tokens)
        if not self.exact:
            y = self.be.scalar(y, "oracle answer")
        self.transcript.append((tuple(tuple(t) for t in tokens), y))
        self.max_length = max(self.max_length, len(tokens))
        self.progress("queries", len(self.transcript), self.expected)
        return y

    # ---------------------------------------------------------------- small helpers
    def dot(self, a, b):
        """a·b on the learner's backend; on the exact backend each pair once per session
        (P1's d² queries need the same 2d probe dot products again and again; the exact
        vectors are the key)."""
        if not self.exact:
            return sum((self._s(x) * self._s(y) for x, y in zip(a, b)), self.be.scalar(0))
        key = (tuple(a), tuple(b))
        got = self._dots.get(key)
        if got is None:
            got = self._dots[key] = dot(a, b)
        return got

    def _s(self, x):
        if self.exact:
            return Fraction(x)
        return self.be.scalar(x)

    def is_zero(self, x) -> bool:
        """Exact zero test on the exact backend; |x| ≤ tolerance on mp/float."""
        if self.exact:
            return x == 0
        return abs(x) <= self.tolerance

    def rational_answer(self, y, where: str):
        """An answer that must be a real number (a length-1 query): exact rationals stay exact."""
        if not self.exact:
            return y
        if not y.is_rational():
            raise NotAttention(f"{where}: the answer {y} depends on e^(1/L); a one-token "
                               f"query to attention returns the rational v·x",
                               query=where, answer=str(y))
        return y.as_rational()


def read_value_vector(s: Session) -> list:
    """v from the d length-1 queries [e_i]: one token gets weight 1, so f = v_i
    (P1 Thm 4.1, first step).  Raises NotIdentifiable when v = 0: then every answer is 0
    whatever W is, so W is not determined by the function."""
    d = s.dim
    v = [s.rational_answer(s.ask([unit(d, i)]), f"query [e_{i}]") for i in range(d)]
    if all(s.is_zero(x) for x in v):
        raise NotIdentifiable("v = 0: every answer of a head with v = 0 is 0, so W is not "
                              "identifiable (P1 Thm 4.1 needs v ≠ 0)", v=[fmt(x) for x in v])
    return v


def bilinear(s: Session, a, b, v, where: str = ""):
    """aᵀWb from the length-2 query [(a + b), b] by sigmoid inversion (P1 Thm 4.1; docs/design.md §4.1).

    Needs a·v ≠ 0.  Exact: the answer's σ/(1−σ) must be t^k, and aᵀWb = k/L exactly; mp/float:
    0 < σ < 1 must hold and aᵀWb = log(σ/(1−σ))."""
    c = s.dot(a, v)
    if s.is_zero(c):
        raise ValueError(f"probe with a·v = 0 at {where}: the query would not see W")
    # probes are rational (int / Fraction) on every backend, so the queries are exact
    f = s.ask([[x + y for x, y in zip(a, b)], list(b)])
    sigma = (f - s.dot(v, b)) / c
    return _exact_logit(sigma, where) if s.exact else _approx_logit(s, sigma, where)


def _exact_logit(sigma, where):
    """log(σ/(1−σ)) for σ in Q(t): exact, or NotAttention when σ/(1−σ) is not t^k."""
    try:
        score = sigma.logit()
    except ZeroDivisionError:
        raise NotAttention(f"{where}: σ = 1 exactly, impossible for a softmax weight of a "
                           f"single head", query=where) from None
    if score is None:
        rho = sigma / (1 - sigma)
        raise NotAttention(f"{where}: σ/(1−σ) = {rho} is not a power t^k of t = e^(1/L), so "
                           f"σ is not a two-token softmax weight: the oracle is not a single "
                           f"attention head", query=where, ratio=str(rho))
    return score


def _approx_logit(s: Session, sigma, where):
    if not 0 < sigma < 1:
        raise NotAttention(f"{where}: σ = {fmt(sigma)} lies outside (0, 1), so it is not a "
                           f"softmax weight of a single head", query=where, sigma=fmt(sigma))
    return s.be.log(sigma / (1 - sigma))


def _agrees(s: Session, model, tokens, y, tol) -> bool:
    got = model(list(list(t) for t in tokens), s.be)
    if s.exact:
        return got == y
    return abs(got - y) <= tol * (1 + abs(y))


def certify(s: Session, heads, tol=None) -> int:
    """The recovered heads must reproduce every transcript answer: exactly (equality in Q(t))
    on the exact backend, within `tol`·(1+|y|) on mp/float.  Returns the number of answers
    checked; raises CertificationFailed naming the first answer that disagrees."""
    model = MultiHeadAttention([AttentionHead(W, v) for W, v in heads])
    tol = s.tolerance if tol is None and not s.exact else tol
    total = len(s.transcript)
    for n, (tokens, y) in enumerate(s.transcript):
        if not _agrees(s, model, tokens, y, tol):
            raise CertificationFailed(f"the recovered head does not reproduce answer {n} of "
                                      f"the transcript", index=n, answer=str(y))
        s.progress("certification", n + 1, total)
    return total


def holdout_check(s: Session, result, count: int, rng: random.Random, tol=None) -> int:
    """`count` random length-2 validation queries (integer entries in −2..2, the schedule's own
    shape) that the recovered heads must answer as the oracle does, asked after the run and
    counted apart from the schedule (:meth:`~exactattn.Oracle.validating`; added to
    ``result.validation_queries``); raises OutOfClass otherwise.  For a multi-head oracle the
    disagreement is a nonzero function of the random tokens, so a random query sees it with
    high probability."""
    from ...errors import OutOfClass
    model = result.model
    tol = s.tolerance if tol is None and not s.exact else tol
    for n in range(count):
        tokens = [[rng.randint(-2, 2) for _ in range(s.dim)] for _ in range(2)]
        with s.oracle.validating():
            y = s.oracle(tokens)
        if not s.exact:
            y = s.be.scalar(y, "oracle answer")
        result.validation.append((tuple(tuple(t) for t in tokens), y))
        result.validation_queries += 1
        if not _agrees(s, model, tokens, y, tol):
            raise OutOfClass(f"held-out length-2 query {n} disagrees with the recovered head: "
                             f"the oracle is not a single attention head", index=n,
                             query=[[str(x) for x in t] for t in tokens], answer=str(y),
                             schedule_queries=result.queries,
                             validation_queries=result.validation_queries)
    return count


# ---------------------------------------------------------------------- error bars (mp/float)
class ReplaySession(Session):
    """A recorded run replayed on answer balls [ŷ ± η·max(1, |ŷ|)] in certified ball
    arithmetic (docs/design.md §8): ``ask`` returns the recorded answer's ball (a query the
    run never asked is an error), zero tests refuse to decide (0 ∈ ball counts as zero, so
    a needed nonzero that cannot be certified stops the replay)."""

    def __init__(self, dim: int, transcript, precision, prec_bits: int):
        from ...arith.ball import BallBackend, ball
        from ...arith.numbers import exact_fraction
        self.dim = check_dim(dim)
        self.oracle = None
        self.be = BallBackend(prec_bits)
        self.transcript, self.max_length = [], 0
        self._answers = {}
        for tokens, y in transcript:
            key = tuple(tuple(t) for t in tokens)
            self._answers.setdefault(key, ball(y, precision.radius(exact_fraction(y))))

    @property
    def tolerance(self):
        return 0

    def ask(self, tokens):
        key = tuple(tuple(t) for t in tokens)
        if key not in self._answers:
            raise ValueError(f"the replay asked {key}, which the recorded run never asked")
        self.transcript.append((key, self._answers[key]))
        return self._answers[key]

    def is_zero(self, x) -> bool:
        return x.contains(0)


def attach_error_bar(s: Session, result, replay, oracle_precision=None, accuracy=None):
    """Set ``result.error_bar`` for an mp/float P1 run: ``replay(session) -> (W, v)`` re-runs
    the learner's own steps on a :class:`ReplaySession` of the transcript; the enclosure then
    holds for every answer within the oracle precision, and the bar bounds the distance of
    the reported (W, v) from every such head.  IllConditioned when the balls cannot be
    carried through (with the precision it assumed) or the bar exceeds ``accuracy``."""
    import mpmath
    from ...errors import IllConditioned, LearningFailure, SingularSystem
    from ..result.precision import bar_for, check_accuracy
    from ..result.precision import ErrorBar, infer_precision, shown_eta, working_bits, working_dps
    prec = infer_precision(s.oracle, [y for _, y in s.transcript], oracle_precision)
    wdps = working_dps(prec, getattr(s.be, "dps", None))
    bits = 53 if s.be.name == "float" else working_bits(wdps)
    ctx = mpmath.MPContext()
    ctx.dps = wdps
    from ...arith.ball import BallBackend
    with BallBackend(bits).working():
        rs = ReplaySession(s.dim, s.transcript, prec, bits)
        try:
            W, v = replay(rs)
        except (LearningFailure, SingularSystem, ValueError, ZeroDivisionError) as e:
            raise IllConditioned(
                f"the {result.algorithm} recovery cannot be certified at the oracle precision "
                f"{prec}: {getattr(e, 'reason', type(e).__name__)}: {e}",
                precision=prec.describe(), needed_precision=None) from None
    reported = [(h.W, h.v) for h in result.heads]
    bound = bar_for([(W, v)], reported, ctx, bits)
    bar = ErrorBar(bound=bound, method="ball", precision=prec, working_dps=wdps,
                   constant=bound / prec.mpf(), enclosure=[(W, v)],
                   assumes=f"every answer within {shown_eta(prec.eta)}"
                           f"{'·max(1,|y|)' if prec.relative else ''} of one attention head's",
                   details={"prec_bits": bits})
    check_accuracy(bar, accuracy, None)
    result.error_bar = bar
    result.notes.append(f"error bar {bar}")


def validate_p1(s: Session, result, count: int, seed, kind: str):
    """Validation queries after a P1 run (:mod:`.validation`, H₀ = 1: random shapes of
    length 1…8, length 3 always among them), asked of the oracle directly so that the session's transcript stays the
    schedule's; then ``result.proves`` (:mod:`.proves`).  The draw is seeded apart from
    the run's own (``seed`` mixed with a fixed tag)."""
    from ..result.proves import state
    from ..result.validation import validate
    rng = random.Random(f"validation:{seed}")
    validate(result, s.oracle, 1, count, rng, progress=s.progress)
    state(result, 1, _exact_single(result) if kind == "single-head" else _exact_low_rank(result))
    return result


def _exact_single(result) -> str:
    N = result.queries
    return (f"the recovered head reproduces all {N} answers exactly in Q(t); any single head "
            f"giving these answers is this head (v from the [e_i], then every u_kᵀW e_j by "
            f"the sigmoid inversion, W = P⁻¹(P W)); a multi-head oracle is not excluded by "
            f"the schedule")


def _exact_low_rank(result) -> str:
    N, r = result.queries, result.extra.get("rank")
    return (f"the recovered head reproduces all {N} answers exactly in Q(t); any single head "
            f"of rank ≤ {r} giving these answers is this head (M = C U⁻¹ R on the measured "
            f"rows and columns); a head of higher rank has this draw in its own bad set, and "
            f"a multi-head oracle is not excluded by the schedule")
