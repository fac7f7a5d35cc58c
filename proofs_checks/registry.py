"""The claim registry (docs/design.md §5): every paper claim is one named check, like a theorem label.

A :class:`Claim` has an id (``P2-count``), the paper reference, a one-line statement, the sizes
it runs at (``quick`` and ``full`` parameter dicts) and a ``run(params) -> Verdict`` function.
:func:`run_claim` times a run, turns exceptions into a FAIL verdict, and reports learner
modules that are not installed as "not checked" (a FAIL: the claim's core was not verified).
A claim's status is ``ok``, ``FAIL`` or ``partial`` (everything that ran holds but some part
was not checked, e.g. an optional dependency is missing) — ``partial`` is never ``ok``.
"""

from __future__ import annotations

import importlib
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Claim", "Verdict", "Outcome", "register", "claims", "get_claim", "run_claim",
           "UnknownClaim", "describe_sizes", "CLAIM_MODULES"]

#: modules that register claims, in display order
CLAIM_MODULES = ("p1_t41", "p1_t51", "p1_p71", "p2_rational", "p2_count", "p2_prob1",
                 "p2_canonical", "p2_nonunique", "p2_unique", "design_unique", "query_complexity", "p1_t61", "p2_approx", "p1_transformer",
                 "p2_transformer", "floor", "beyond_economy", "decoder_count", "decoder_alibi",
                 "decoder_residual")


@dataclass
class Verdict:
    """What a claim's run found: ``holds``, the findings (one line each), notes (skipped
    parts, caveats) and an optional JSON certificate (docs/design.md §5)."""

    holds: bool
    details: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    certificate: dict | None = None
    unchecked: list = field(default_factory=list)

    def skip(self, message: str) -> "Verdict":
        """A part that was not checked (e.g. an optional dependency is missing): the claim is
        then ``partial``, never ``ok``."""
        self.unchecked.append(message)
        self.notes.append("NOT CHECKED: " + message)
        return self

    @property
    def partial(self) -> bool:
        return bool(self.unchecked)

    def fail(self, message: str) -> "Verdict":
        self.holds = False
        self.details.append("FAILED: " + message)
        return self

    def expect(self, condition: bool, ok_message: str, fail_message: str | None = None) -> bool:
        """Record one finding; a false condition makes the verdict fail."""
        if condition:
            self.details.append(ok_message)
        else:
            self.fail(fail_message or ("not " + ok_message))
        return bool(condition)


@dataclass(frozen=True)
class Claim:
    """One paper claim as a named check (docs/design.md §5)."""

    id: str
    reference: str
    statement: str
    sizes: dict
    run: Callable[[dict], Verdict]
    needs: tuple = ()

    def params(self, quick: bool) -> dict:
        return dict(self.sizes["quick" if quick else "full"])


@dataclass
class Outcome:
    """A timed run of one claim, as printed by ``exactattn check``."""

    claim: Claim
    size: str
    verdict: Verdict
    seconds: float

    @property
    def status(self) -> str:
        """``FAIL`` (a check failed), ``partial`` (all that ran holds, some part was not
        checked) or ``ok`` (everything checked and holds)."""
        if not self.verdict.holds:
            return "FAIL"
        return "partial" if self.verdict.partial else "ok"

    def to_dict(self) -> dict:
        return {"claim": self.claim.id, "reference": self.claim.reference,
                "statement": self.claim.statement, "status": self.status, "size": self.size,
                "sizes": describe_sizes(self.claim.params(self.size == "quick")),
                "seconds": round(self.seconds, 3), "details": list(self.verdict.details),
                "notes": list(self.verdict.notes), "unchecked": list(self.verdict.unchecked)}


_REGISTRY: dict[str, Claim] = {}


class UnknownClaim(KeyError):
    """A claim id that is not registered."""

    def __str__(self):
        return self.args[0]


def register(claim: Claim) -> Claim:
    """Add a claim to the registry (each claim module calls this once)."""
    if claim.id in _REGISTRY and _REGISTRY[claim.id] is not claim:
        raise ValueError(f"claim {claim.id} registered twice")
    _REGISTRY[claim.id] = claim
    return claim


def _claim_module_names() -> list:
    """CLAIM_MODULES first (display order), then any other proofs_checks module named like
    ``p1_…`` / ``p2_…`` (later issues add claims by adding a module)."""
    import pkgutil
    import re
    from pathlib import Path
    here = [m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])]
    extra = sorted(n for n in here if re.fullmatch(r"p[0-9]+_\w+", n) and n not in CLAIM_MODULES)
    return [n for n in CLAIM_MODULES if n in here] + extra


def _load():
    for name in _claim_module_names():
        importlib.import_module(f"proofs_checks.{name}")


def claims() -> list:
    """All registered claims in display order (that of their modules, whatever order they
    were imported in)."""
    _load()
    order = {f"proofs_checks.{n}": k for k, n in enumerate(_claim_module_names())}
    return sorted(_REGISTRY.values(),
                  key=lambda c: order.get(getattr(c.run, "__module__", ""), len(order)))


def get_claim(claim_id: str) -> Claim:
    """The claim with this id (case-insensitive); UnknownClaim otherwise."""
    _load()
    for cid, claim in _REGISTRY.items():
        if cid.lower() == claim_id.lower():
            return claim
    raise UnknownClaim(f"unknown claim {claim_id!r}; known claims: {', '.join(_REGISTRY)}")


def describe_sizes(params: dict) -> str:
    """'d=1,2,3 H=1,2' from {'d': [1, 2, 3], 'H': [1, 2]}."""
    parts = []
    for k, v in params.items():
        if k == "seed":
            continue
        if isinstance(v, (list, tuple)) and v and isinstance(v[0], (list, tuple)):
            v = " ".join("(" + ",".join(str(x) for x in t) + ")" for t in v)
        elif isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        parts.append(f"{k}={v}")
    return " ".join(parts)


def missing_modules(claim: Claim) -> list:
    """The modules a claim needs (e.g. a learner) that cannot be imported."""
    out = []
    for mod in claim.needs:
        try:
            importlib.import_module(mod)
        except ImportError:
            out.append(mod)
    return out


def run_claim(claim: Claim, quick: bool = True) -> Outcome:
    """Run one claim at its quick or full sizes; never raises (errors become FAIL)."""
    size = "quick" if quick else "full"
    start = time.perf_counter()
    missing = missing_modules(claim)
    if missing:
        verdict = Verdict(False, [f"not checked: {', '.join(missing)} is not available"])
    else:
        try:
            verdict = claim.run(claim.params(quick))
        except Exception as e:  # a crash is a failed check, reported with its place
            tb = traceback.extract_tb(e.__traceback__)[-1]
            verdict = Verdict(False, [f"error: {type(e).__name__}: {e} "
                                      f"({tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})"])
    if verdict.certificate is not None:
        verdict.certificate["size"] = size
        verdict.certificate["holds"] = verdict.holds
    return Outcome(claim, size, verdict, time.perf_counter() - start)
