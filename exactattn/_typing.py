"""Type aliases of the public API's signatures (PEP 484), used in annotations only: a number,
a matrix and a query as the models and learners accept them (docs/design.md §3 models), an
oracle as the learners accept it, and the progress callback."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    from .arith.base import Backend
    from .oracles.oracle import Oracle

#: an entry of a parameter or a token: an integer, a Fraction or (mp/float paths) a float
Number = Union[int, Fraction, float]
#: a vector of entries
Vector = Sequence[Number]
#: a d × d matrix, by rows
Matrix = Sequence[Sequence[Number]]
#: a query: a sequence of token vectors (the answer is the output at the last one)
Tokens = Sequence[Sequence[Number]]
#: what a learner accepts as its oracle: an :class:`exactattn.Oracle`, or a callable on a
#: query (wrapped in one)
OracleLike = Union["Oracle", Callable[[Any], Any]]
#: a backend as the learners accept it: a name ("exact", "mp", "float") or an instance
BackendLike = Union[str, "Backend"]
#: the progress callback of the learners: progress(stage, done, total)
Progress = Callable[[str, int, int], None]
#: a precision or accuracy bound: a rational, a float or an mpf
Bound = Any
