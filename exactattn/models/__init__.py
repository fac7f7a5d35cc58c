"""Models (layer 2, above arith): one attention head, multi-head attention and its canonical
form (P2 canonical heads), the one-layer Transformer, seeded generators, model JSON, and the
LaTeX notation that notebooks show."""

from .attention import (AttentionHead, MultiHeadAttention, load_model, model_from_json,
                        model_to_json, random_head, random_multi_head, same_function,
                        validate_tokens)

__all__ = ["AttentionHead", "MultiHeadAttention", "same_function", "random_head",
           "random_multi_head", "model_from_json", "model_to_json", "load_model",
           "validate_tokens"]
