"""Arithmetic backends: one interface (``Backend``) over exact / mp / float / symbolic,
after mpmath's contexts (docs/design.md §2)."""

from __future__ import annotations

from .base import Backend
from .exact import ExactBackend
from .expfield import ExpElement, exp_rational
from .fp import FloatBackend
from .mp import MPBackend
from .symbolic import SymbolicBackend

__all__ = ["Backend", "ExactBackend", "MPBackend", "FloatBackend", "SymbolicBackend",
           "ExpElement", "exp_rational", "get_backend", "BACKENDS"]

BACKENDS = ("exact", "mp", "float", "symbolic")


def get_backend(backend: str | Backend = "exact", dps: int | None = None) -> Backend:
    """A backend by name ("exact", "mp", "float", "symbolic") or the instance itself."""
    if isinstance(backend, Backend):
        if dps is not None and getattr(backend, "dps", dps) != dps:
            raise ValueError(f"backend {backend!r} has dps={getattr(backend, 'dps', None)}, "
                             f"but dps={dps} was asked")
        return backend
    if backend == "exact":
        _no_dps(backend, dps)
        return ExactBackend()
    if backend == "mp":
        return MPBackend(50 if dps is None else dps)
    if backend == "float":
        _no_dps(backend, dps)
        return FloatBackend()
    if backend == "symbolic":
        _no_dps(backend, dps)
        return SymbolicBackend()
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")


def _no_dps(name, dps):
    if dps is not None:
        raise ValueError(f"--dps applies to the mp backend only, not to {name!r}")
