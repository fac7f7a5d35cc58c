"""exactattn: checking, by exact computation, what P1 (arXiv 2601.16873) and P2
(arXiv 2608.03294) claim about learning softmax attention from value queries."""

from . import _env  # noqa: F401  (sets SYMPY_GROUND_TYPES before sympy is imported)
from .arith import ExpElement, get_backend
from .errors import (AmbiguousMatching, BudgetExceeded, CertificationFailed, CollidingPoles,
                     ExactAttnError, InvisibleHead, LearningFailure, NotAttention,
                     NotIdentifiable, PeekError, QueryError, SingularBasis)
from .models.attention import (AttentionHead, MultiHeadAttention, load_model, model_from_json,
                     model_to_json, random_head, random_multi_head, same_function)
from .oracles.oracle import Additive, Oracle, Rounding

__version__ = "0.1.0"

__all__ = [
    "__version__", "ExpElement", "get_backend", "AttentionHead", "MultiHeadAttention",
    "same_function", "random_head", "random_multi_head", "model_to_json", "model_from_json",
    "load_model", "Oracle", "Additive", "Rounding", "ExactAttnError", "QueryError",
    "BudgetExceeded", "PeekError", "LearningFailure", "SingularBasis", "CollidingPoles",
    "InvisibleHead", "AmbiguousMatching", "NotAttention", "CertificationFailed",
    "NotIdentifiable",
]


_LAZY = {
    "learn_single_head": "learners.single_head",
    "learn_multi_head": "learners.multi_head",
    "learn_low_rank": "learners.low_rank",
    "learn_single_head_noisy": "learners.noisy",
    "learn_multi_head_noisy": "learners.noisy",
    "learn_transformer": "learners.transformer",
}


def __getattr__(name):
    # learners are imported lazily so that `import exactattn` stays light
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'exactattn' has no attribute {name!r}")
