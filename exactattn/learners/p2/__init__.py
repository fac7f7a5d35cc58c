"""P2 (arXiv 2608.03294): the copy-count schedule and its rational interpolation, matching
families, the modular engine, exact and inexact recovery, certified enclosures, the
approximate-oracle constant, the cost estimate, and the genericity of a run
(docs/design.md §2.2, §2.3, §4.3, §4.4)."""
