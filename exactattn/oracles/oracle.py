"""The value-query oracle (docs/design.md §3), after the CJM20 extraction code: one object between
learner and model that counts every query, records the maximum length and a transcript,
enforces an optional budget, hides the parameters in no-peek mode and applies noise.

Noise modes (``noise=``):

* ``None`` / ``"exact"`` — the true answer;
* ``Additive(tau, mode="random")`` — answer + uniform noise in [−τ, τ];
* ``Additive(tau, mode="adversarial")`` — answer ± τ exactly, the sign from a seeded
  pattern (the extreme points of the allowed interval);
* ``Rounding(digits)`` — the answer rounded to ``digits`` significant digits.

Noise needs the mp or float backend (an exact answer with noise is no longer exact).

**Backends and types.**  ``backend=None`` (the default) leaves the backend to be decided: a
learner given ``backend=`` makes the oracle adopt it; otherwise a model decides by its entries
(rational → exact, real → mp) and a plain callable by its first answer (see
:func:`infer_backend`), at the cost of one probe call on the single zero token, recorded in
``probe`` and never counted in ``queries``.  A callable receives the query as a list of
token vectors whose entries are the backend's scalars: ``int``/``Fraction`` on exact, ``mpf``
on mp, ``float`` on float.  It must answer:

* exact — an element of Q(e^{1/L}): an :class:`~exactattn.ExpElement` (e.g. from
  ``exactattn.from_sympy(expr)`` or ``exp_rational``), or a rational (``int``, ``Fraction``,
  "p/q" string, sympy Rational); never a float;
* mp — an mpmath ``mpf`` (or anything mpmath converts exactly: int, Fraction, float);
* float — a Python/NumPy float (or an int / Fraction).
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from dataclasses import dataclass

from ..arith import Backend, ExpElement, get_backend
from ..errors import BudgetExceeded, ExactAttnError, OracleError, OracleTimeout, PeekError, QueryError
from ..models.attention import AttentionHead, MultiHeadAttention, clean_query, validate_tokens

__all__ = ["Oracle", "Additive", "Rounding", "as_oracle", "infer_backend"]


@dataclass(frozen=True)
class Additive:
    """Additive tolerance τ: random uniform in [−τ, τ] or adversarial ±τ (docs/design.md §3)."""

    tau: object
    mode: str = "random"
    seed: int | None = 0

    def __post_init__(self):
        if self.mode not in ("random", "adversarial"):
            raise ValueError(f"Additive noise mode must be 'random' or 'adversarial', got {self.mode!r}")
        try:
            negative = self.tau < 0
        except TypeError:
            raise TypeError(f"Additive noise: tau must be a number, got {self.tau!r}") from None
        if negative:
            raise ValueError(f"Additive noise: tau must be ≥ 0, got {self.tau!r}")


@dataclass(frozen=True)
class Rounding:
    """Answers rounded to `digits` significant decimal digits (docs/design.md §3)."""

    digits: int

    def __post_init__(self):
        from ..arith.mp import MAX_DPS
        if not isinstance(self.digits, int) or isinstance(self.digits, bool) \
                or not 1 <= self.digits <= MAX_DPS:
            raise ValueError(f"Rounding needs digits in 1..{MAX_DPS}, got {self.digits!r}")


class Oracle:
    """Counts value queries to a model or any callable ``f(tokens) -> number`` (docs/design.md §3).

    ``target``: an AttentionHead, MultiHeadAttention, OneLayerTransformer, or a callable (what
    it receives and must return: the module docstring).  ``backend``: "exact", "mp", "float",
    a backend instance, or None (decided later: the learner's, else inferred).
    ``oracle(tokens)`` takes a list, tuple, generator or NumPy array of token vectors with
    entries int, Fraction, "p/q" string, NumPy integer or SymPy Rational (and floats / mpf on
    mp and float) and returns one number: the output at the final token (exact: an
    ExpElement).  Malformed queries raise :class:`QueryError` and are not counted; a query
    past ``budget`` raises :class:`BudgetExceeded` before it is asked.
    """

    #: the declared precision of the answers, where one is set (numpy_oracle for float32 and
    #: float16; read by learners/result/precision.py)
    declared_precision: dict

    def __init__(self, target, dim: int | None = None, backend=None, dps=None,
                 budget: int | None = None, noise=None, no_peek: bool = True,
                 record: bool = True, timeout=None):
        if isinstance(target, AttentionHead):
            target = MultiHeadAttention([target])
        self._target = target
        # models evaluate on the oracle's backend (a class may opt in with evaluates_on_backend)
        self._is_model = isinstance(target, MultiHeadAttention) or \
            getattr(target, "evaluates_on_backend", False) is True
        if self._is_model:
            if dim is not None and dim != target.dim:
                raise ValueError(f"dim={dim} but the model has dimension {target.dim}")
            dim = target.dim
        elif not callable(target):
            raise TypeError("an oracle wraps a model or a callable f(tokens) -> number")
        if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool) or dim < 1):
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        self.dim = dim
        if backend is None and dps is not None:
            backend = "mp"
        self._backend: Backend | None = None if backend is None else get_backend(backend, dps)
        if budget is not None and (not isinstance(budget, int) or budget < 0):
            raise ValueError(f"budget must be a non-negative integer, got {budget!r}")
        self.budget = budget
        if timeout is not None and (isinstance(timeout, bool) or
                                    not isinstance(timeout, (int, float)) or not timeout > 0
                                    or timeout == float("inf")):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = timeout
        if noise == "exact":
            noise = None
        if noise is not None and not isinstance(noise, (Additive, Rounding)):
            raise TypeError("noise must be None, 'exact', Additive(tau, mode) or Rounding(digits)")
        self.noise = noise
        if noise is not None:
            if self._backend is None and not self._is_model:
                raise ValueError("noise needs the mp or float backend: pass backend='mp' or "
                                 "backend='float' to the Oracle")
            self._check_noise(self.backend)
        self._rng = random.Random(noise.seed if isinstance(noise, Additive) else 0)
        self.no_peek = no_peek
        self.record = record
        self.queries = 0
        self.max_length = 0
        self.transcript: list[tuple[tuple, object]] = []
        self.validation_queries = 0
        self.validation_transcript: list[tuple[tuple, object]] = []
        self._validating = False
        #: (query, answer) of the probe that chose the backend of a plain callable, else None
        self.probe: tuple | None = None

    # ------------------------------------------------------------------ the backend
    @property
    def backend(self) -> Backend:
        """The arithmetic backend; decided on first use when the Oracle was built without one
        (a model by its entries, a plain callable by one probe answer: :func:`infer_backend`)."""
        if self._backend is None:
            self._backend = self._decide()
        return self._backend

    @property
    def backend_decided(self) -> bool:
        return self._backend is not None

    def decide(self) -> Backend:
        """Decide the backend now (a no-op when it is decided); returns it."""
        return self.backend

    def adopt(self, backend, dps=None):
        """Take the learner's backend; an Oracle whose backend is already decided keeps it and
        must agree (raises ValueError otherwise)."""
        be = get_backend(backend, dps)
        if self._backend is None:
            if self.noise is not None:
                self._check_noise(be)
            self._backend = be
        elif self._backend.name != be.name:
            raise ValueError(f"the oracle answers on the {self._backend.name} backend but the "
                             f"learner was asked for {be.name}; make them agree (pass the same "
                             f"backend= to both, or build the Oracle without one)")
        return self._backend

    def _decide(self, dim=None) -> Backend:
        if self._is_model:
            return get_backend("exact" if getattr(self._target, "is_rational", True) else "mp")
        dim = self.dim if dim is None else dim
        if dim is None:
            raise ValueError("the backend of a plain callable is inferred from a probe answer, "
                             "which needs the dimension: pass dim= (or backend=) to the Oracle")
        probe = [[0] * dim]
        with self._named_errors("the probe query (one zero token, which infers the backend)"):
            answer = self._target(probe)
        be = infer_backend(answer)
        self.probe = (tuple(tuple(t) for t in probe), answer)
        return be

    @staticmethod
    def _check_noise(be):
        if be.name not in ("mp", "float"):
            raise ValueError("noise needs the mp or float backend; exact answers cannot be noisy")

    # ------------------------------------------------------------------ access control
    @property
    def model(self):
        """The wrapped model: refused in no-peek mode (learners must not see parameters)."""
        if self.no_peek:
            raise PeekError("this oracle is in no-peek mode: the learner may only send queries")
        return self._target

    # ------------------------------------------------------------------ queries
    def __call__(self, tokens):
        if hasattr(tokens, "tolist") and not isinstance(tokens, (list, tuple)):
            tokens = tokens.tolist()
        try:
            tokens = list(tokens)  # once: a generator must not be consumed twice
        except TypeError:
            raise QueryError("a query is a sequence of token vectors (a list of lists)") from None
        dim = self.dim
        if dim is None:  # a plain callable without dim: the first valid query fixes it
            try:
                last = tokens[-1]
                dim = len(last.tolist() if hasattr(last, "tolist") else last)
            except IndexError:
                raise QueryError("empty query: a query needs at least one token") from None
            except TypeError:
                raise QueryError("a query is a sequence of token vectors (a list of lists)") from None
        toks = validate_tokens(tokens, dim)
        if self._backend is None:
            self._backend = self._decide(dim)
        be = self._backend
        clean = be.tokens(toks)
        self.dim = dim
        self._check_budget()
        return self._record(clean, self._perturb(self._timed(clean)))

    def ask_many(self, queries):
        """``[oracle(q) for q in queries]``, with the same counting, transcript, budget and
        errors (a failing query raises, the ones before it stay counted), batched: for
        exactattn's own models with a decided backend, no noise and no timeout, each distinct
        token row is validated and converted once, and the model evaluates the batch without
        re-checking it (docs/design.md §2.1, batched evaluation).  A subclass that overrides
        ``__call__`` is asked query by query, through its ``__call__`` (unless that method
        is marked ``batch_safe = True``: it adds nothing a batch may skip)."""
        target = self._target
        call = type(self).__call__
        if (call is not Oracle.__call__ and not getattr(call, "batch_safe", False)) \
                or not self._is_model \
                or not _is_library_model(target) or self.noise is not None \
                or self.timeout is not None or self.dim is None \
                or not hasattr(target, "evaluate_clean"):
            return [self(q) for q in queries]
        be, rows, out = self.backend, {}, []
        for tokens in queries:
            if hasattr(tokens, "tolist") and not isinstance(tokens, (list, tuple)):
                tokens = tokens.tolist()
            if not isinstance(tokens, (list, tuple)):
                out.append(self(tokens))         # the general path and its errors
                continue
            clean = clean_query(tokens, be, self.dim, rows)
            self._check_budget()
            out.append(self._record(clean, target.evaluate_clean(clean, be)))
        return out

    def _check_budget(self):
        if self.budget is not None and self.spent >= self.budget:
            raise BudgetExceeded(f"query budget of {self.budget} exhausted "
                                 f"(raise budget= or use fewer queries)",
                                 budget=self.budget, needed=self.spent + 1, remaining=0)

    def _record(self, clean, answer):
        """Count an answered query (a validation query inside :meth:`validating`) and keep it
        in its transcript when ``record``; returns the answer."""
        if self._validating:
            self.validation_queries += 1
            if self.record:
                self.validation_transcript.append((tuple(map(tuple, clean)), answer))
            return answer
        self.queries += 1
        self.max_length = max(self.max_length, len(clean))
        if self.record:
            self.transcript.append((tuple(map(tuple, clean)), answer))
        return answer

    @property
    def spent(self) -> int:
        """Every query answered: the schedule's and the validation queries."""
        return self.queries + self.validation_queries

    @contextmanager
    def validating(self):
        """Within the block, queries are validation queries (class docstring)."""
        old, self._validating = self._validating, True
        try:
            yield self
        finally:
            self._validating = old

    def reserve(self, needed: int, what: str):
        """Refuse (:class:`BudgetExceeded`, before any query) a run of ``needed`` more queries
        that the remaining budget cannot cover; ``what`` names them in the message."""
        if self.budget is None:
            return
        remaining = self.budget - self.spent
        if needed > remaining:
            raise BudgetExceeded(
                f"{what} needs {needed} queries but the oracle's budget has {remaining} left "
                f"(budget={self.budget}); refused before the first query: raise budget=",
                budget=self.budget, needed=needed, remaining=remaining)

    def _timed(self, tokens):
        """The answer, within ``timeout`` seconds when one is set (class docstring).  A plain
        callable is asked in a worker thread and abandoned when it does not answer in time;
        every oracle kind (models too, whose exact arithmetic may hold the interpreter while
        it runs) is also timed, and an answer that came too late is the same OracleTimeout
        (not counted)."""
        if self.timeout is None:
            return self._answer(tokens)
        import time
        start = time.perf_counter()
        answer = self._answer(tokens) if self._is_model else self._threaded(tokens)
        elapsed = time.perf_counter() - start
        if elapsed > self.timeout:
            raise OracleTimeout(f"the oracle took {elapsed:.3g} s to answer query {self.spent}, "
                                f"beyond its timeout of {self.timeout:g} s (timeout=); raise "
                                f"the timeout or use a smaller model",
                                timeout=self.timeout, query_index=self.spent)
        return answer

    def _threaded(self, tokens):
        import threading
        box = {}

        def call():
            try:
                box["answer"] = self._answer(tokens)
            except BaseException as e:  # re-raised in the caller's thread
                box["error"] = e
        worker = threading.Thread(target=call, name="exactattn-oracle-query", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            raise OracleTimeout(f"the oracle did not answer query {self.spent} within "
                                f"{self.timeout:g} s (timeout=); the call is abandoned",
                                timeout=self.timeout, query_index=self.spent)
        if "error" in box:
            raise box["error"]
        return box["answer"]

    def _answer(self, tokens):
        be = self.backend
        if self._is_model and _is_library_model(self._target):
            evaluate = getattr(self._target, "evaluate_clean", None)
            # the tokens were validated and converted by __call__
            return evaluate(tokens, be) if evaluate else self._target(tokens, be)
        tokens = [list(t) for t in tokens]     # the caller's own lists (the exact rows are shared)
        with self._named_errors():
            raw = self._target(tokens, be) if self._is_model else self._target(tokens)
            return raw if self._is_model else _as_element(be, raw, inferred=self.probe is not None)

    def _named_errors(self, index=None):
        """An exception of the oracle itself (a callable or a foreign model class: its
        RuntimeError, ZeroDivisionError, StopIteration..., or an answer the backend cannot take)
        as the named failure OracleError, chained; exactattn's own failures, Ctrl-C and exits
        pass as they are.  A context manager object, not a generator: contextlib's generator
        path re-raises a StopIteration whose chained RuntimeError it sees (PEP 479), and
        OracleError is a RuntimeError."""
        return _NamedErrors(self, index)

    def _perturb(self, y):
        n = self.noise
        if n is None:
            return y
        be = self.backend
        if isinstance(n, Rounding):
            import mpmath
            if be.name == "mp":
                s = mpmath.nstr(y, n.digits, min_fixed=1, max_fixed=0)
                return be.ctx.mpf(s)
            return float(f"{float(y):.{n.digits - 1}e}")
        tau = be.scalar(n.tau, "tau")
        if n.mode == "adversarial":
            return y + (tau if self._rng.random() < 0.5 else -tau)
        u = be.scalar(self._rng.uniform(-1.0, 1.0), "noise")
        return y + tau * u

    def reset(self):
        self.queries, self.max_length, self.transcript = 0, 0, []
        self.validation_queries, self.validation_transcript = 0, []

    def __repr__(self):
        tgt = type(self._target).__name__
        backend = self._backend.name if self._backend is not None else "undecided"
        return (f"Oracle({tgt}, dim={self.dim}, backend={backend}, "
                f"queries={self.queries}, max_length={self.max_length}"
                f"{f', validation_queries={self.validation_queries}' if self.validation_queries else ''})")


def _is_library_model(target) -> bool:
    """exactattn's own models (their failures are exactattn's, never the oracle's)."""
    return type(target).__module__.startswith("exactattn.")


def _unwrap(raw):
    """A 0-d array or tensor (numpy, torch: anything with ``shape == ()`` and ``item()``) as
    the Python number it holds."""
    if getattr(raw, "shape", None) == () and callable(getattr(raw, "item", None)):
        return raw.item()
    return raw


def _is_sympy(raw) -> bool:
    return type(raw).__module__.startswith("sympy")


def infer_backend(answer: object) -> Backend:
    """The backend a plain callable's answer calls for (docs/design.md §3, §7):

    * ``float`` (Python or NumPy floating, a 0-d array/tensor holding one) → float;
    * mpmath ``mpf`` → mp at the mpf's own precision (its context's dps);
    * :class:`~exactattn.ExpElement`, ``int``, ``Fraction``, "p/q" string, sympy
      expression (exp of rationals with rational arithmetic) → exact.

    Anything else raises TypeError saying how to choose the backend explicitly."""
    import numbers
    from mpmath.ctx_mp_python import _mpf
    raw = _unwrap(answer)
    if isinstance(raw, ExpElement):
        return get_backend("exact")
    if isinstance(raw, _mpf):
        return get_backend("mp", max(raw.context.dps, 15))
    if isinstance(raw, bool):
        raise TypeError(f"the oracle answered {raw!r}, a bool, not a number")
    if isinstance(raw, (numbers.Rational, str)) or _is_sympy(raw):
        return get_backend("exact")
    if isinstance(raw, numbers.Real):
        return get_backend("float")
    raise TypeError(f"cannot infer the backend from the oracle answer {raw!r} "
                    f"({type(raw).__name__}): pass backend='exact' (answers ExpElement or "
                    f"rational), 'mp' (mpf) or 'float' (float) to the learner or the Oracle")


class _NamedErrors:
    """The context of :meth:`Oracle._named_errors`."""

    def __init__(self, oracle, index):
        self.oracle, self.index = oracle, index

    def __enter__(self):
        return self

    def __exit__(self, typ, e, tb):
        if e is None or isinstance(e, ExactAttnError) or not isinstance(e, Exception):
            return False
        spent = self.oracle.spent
        where = f"query {spent}" if self.index is None else self.index
        try:
            text = " ".join(str(e).split()) or "no message"
        except ValueError:                   # a message that cannot be written (a huge int)
            text = "its message cannot be printed"
        raise OracleError(f"the oracle raised {type(e).__name__} while answering {where}: "
                          f"{text[:300]}; fix the oracle (it must return one number per query)",
                          query_index=spent if self.index is None else None,
                          error=type(e).__name__) from e


def _as_element(be: Backend, raw, inferred: bool = False):
    """A plain callable's answer as an element of the backend (docs/design.md §3, §7)."""
    raw = _unwrap(raw)
    if be.name == "exact":
        if isinstance(raw, ExpElement):
            return raw
        if _is_sympy(raw):
            from ..arith.sympy_elements import from_sympy
            return from_sympy(raw)
        import numbers
        if isinstance(raw, numbers.Real) and not isinstance(raw, (bool, numbers.Rational)):
            how = ("the backend was inferred as exact from the probe answer"
                   if inferred else "the oracle is on the exact backend")
            raise TypeError(
                f"oracle answer: {raw!r} is a {type(raw).__name__}, but {how}: an exact "
                f"oracle answers with an element of Q(e^(1/L)), an exactattn.ExpElement (e.g. "
                f"exactattn.from_sympy(expr)) or a rational (int, Fraction); for float answers "
                f"pass backend='float' or backend='mp'")
        return be.element(be.scalar(raw, "oracle answer"))
    return be.scalar(raw, "oracle answer")


def as_oracle(oracle, dim: int, backend=None, dps=None) -> Oracle:
    """The learners' entry (docs/design.md §3): an Oracle as is, or a callable wrapped in one.

    ``backend=None`` keeps an Oracle's own backend; an Oracle built without one, or a plain
    callable, then has it inferred (:func:`infer_backend`: one probe call, recorded in
    ``oracle.probe``).  A given ``backend`` is adopted by an Oracle built without one and must
    agree with an Oracle's own backend otherwise."""
    return wrapped_oracle(oracle, dim, backend, dps, (AttentionHead, MultiHeadAttention), Oracle,
                          "a callable on a list of tokens")


def wrapped_oracle(oracle, dim: int, backend, dps, models: tuple, wrap, callable_is: str) -> Oracle:
    """:func:`as_oracle` for one kind of oracle: a model of ``models`` is refused (its queries
    would not be counted), a callable wrapped in ``wrap``, the dimension checked or set, the
    backend adopted and decided before the learner's first query."""
    if isinstance(oracle, models):
        raise TypeError("pass Oracle(model) rather than the model itself, so that queries are "
                        "counted and the parameters hidden")
    if not isinstance(oracle, Oracle):
        if not callable(oracle):
            raise TypeError(f"oracle must be an exactattn.Oracle or {callable_is}")
        oracle = wrap(oracle, dim=dim)
    if oracle.dim is not None and oracle.dim != dim:
        raise ValueError(f"the oracle has dimension {oracle.dim} but dim={dim} was given")
    if oracle.dim is None:
        oracle.dim = dim
    if backend is not None or dps is not None:
        oracle.adopt("mp" if backend is None else backend, dps)
    oracle.decide()  # before the learner's first query
    return oracle
