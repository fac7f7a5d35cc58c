"""The one-layer Transformer (docs/design.md §1.1, §4.5; P1 reduction, P2 extension): the
learner of the attention part and the FFN (:mod:`.one_layer`) and the bias-free ReLU network
learner (:mod:`.relu_ffn`)."""
