"""exactattn: checking, by exact computation, what P1 (arXiv 2601.16873) and P2
(arXiv 2608.03294) claim about learning softmax attention from value queries.

The public API is this module's ``__all__``: models and their canonical form, the counting
no-peek :class:`Oracle`, the learners (``learn_*``), comparison of results with a reference,
the named failures, and adapters for foreign models (``from_sympy``, ``numpy_oracle``;
``exactattn.adapters.torch`` for PyTorch).  Everything but the named failures is imported on
first use (``exactattn.Oracle`` loads the oracle, ``exactattn.learn_multi_head`` the learner),
so ``import exactattn`` and ``exactattn --version`` stay light.

Quick start::

    import exactattn as ea
    model = ea.random_multi_head(3, 2, seed=1)
    res = ea.learn_multi_head(ea.Oracle(model), 3, heads=2, seed=0)
    res.model.head_set() == model.head_set()      # True: exact canonical recovery
    res.write_certificate("run.json")             # the run's certificate, as learn --certificate

``python -m proofs_checks.verify run.json`` then re-checks the run from the file alone, with
the standard library only (:meth:`LearnResult.write_certificate`; docs/evidence.md).
"""

from typing import TYPE_CHECKING

from . import _env  # noqa: F401  (sets SYMPY_GROUND_TYPES before sympy is imported)
from .errors import (AmbiguousMatching, BudgetExceeded, CertificationFailed, CollidingPoles,
                     ConditionsNotMet, ExactAttnError, InvisibleHead, LearningFailure,
                     NotAttention, NotIdentifiable, OracleError, OracleTimeout, OutOfClass,
                     PeekError, QueryError, SingularBasis)

__version__ = "0.2.0"

if TYPE_CHECKING:   # the names of _LAZY as type checkers see them (imported on first use)
    from .arith import ExpElement, get_backend
    from .models.attention import (AttentionHead, MultiHeadAttention, load_model, model_from_json,
                                   model_to_json, random_head, random_multi_head, same_function)
    from .oracles.oracle import Additive, Oracle, Rounding, infer_backend
    from .learners.p1.single_head import learn_single_head
    from .learners.multi_head import learn_multi_head
    from .learners.p1.low_rank import learn_low_rank
    from .learners.p1.noisy import learn_single_head_noisy
    from .learners.p2.noisy import learn_multi_head_noisy
    from .learners.p1.membership import learn_single_head_membership
    from .learners.transformer.one_layer import learn_transformer
    from .learners.design.certify import Certification, certify
    from .learners.result import LearnResult
    from .learners.result.compare import parameter_error
    from .oracles.membership import MembershipOracle
    from .models.transformer import (OneLayerTransformer, random_transformer,
                                     same_transformer_function)
    from .arith.sympy_elements import from_sympy
    from .adapters.numpy import numpy_oracle

#: names imported on first use: name -> submodule
_LAZY = {
    "ExpElement": "arith",
    "get_backend": "arith",
    "AttentionHead": "models.attention",
    "MultiHeadAttention": "models.attention",
    "load_model": "models.attention",
    "model_from_json": "models.attention",
    "model_to_json": "models.attention",
    "random_head": "models.attention",
    "random_multi_head": "models.attention",
    "same_function": "models.attention",
    "Oracle": "oracles.oracle",
    "Additive": "oracles.oracle",
    "Rounding": "oracles.oracle",
    "learn_single_head": "learners.p1.single_head",
    "learn_multi_head": "learners.multi_head",
    "learn_low_rank": "learners.p1.low_rank",
    "learn_single_head_noisy": "learners.p1.noisy",
    "learn_multi_head_noisy": "learners.p2.noisy",
    "learn_single_head_membership": "learners.p1.membership",
    "learn_transformer": "learners.transformer.one_layer",
    "certify": "learners.design.certify",
    "Certification": "learners.design.certify",
    "LearnResult": "learners.result",
    "parameter_error": "learners.result.compare",
    "MembershipOracle": "oracles.membership",
    "OneLayerTransformer": "models.transformer",
    "random_transformer": "models.transformer",
    "same_transformer_function": "models.transformer",
    "from_sympy": "arith.sympy_elements",
    "numpy_oracle": "adapters.numpy",
    "infer_backend": "oracles.oracle",
}

#: subpackages reachable as attributes (``exactattn.adapters.torch.oracle``,
#: ``exactattn.arith.get_backend``) without an import of their own
_SUBPACKAGES = ["adapters", "analysis", "arith", "learners", "models", "oracles",
                "presentation", "sweep"]

__all__ = list(dict.fromkeys([
    "__version__", "ExpElement", "get_backend", "AttentionHead", "MultiHeadAttention",
    "same_function", "random_head", "random_multi_head", "model_to_json", "model_from_json",
    "load_model", "Oracle", "Additive", "Rounding", "ExactAttnError", "QueryError",
    "BudgetExceeded", "PeekError", "LearningFailure", "SingularBasis", "CollidingPoles",
    "InvisibleHead", "AmbiguousMatching", "NotAttention", "CertificationFailed",
    "NotIdentifiable", "ConditionsNotMet", "OutOfClass", "OracleTimeout", "OracleError",
    *_LAZY, "adapters",
]))


def __getattr__(name):
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'exactattn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
