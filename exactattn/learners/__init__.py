"""The learners (docs/design.md §4, §10), in sub-layers that import downward only:

* :mod:`.result` — what every learner returns and says: ``LearnResult``, the oracle's
  precision and error bars, validation queries, the ``proves`` text, comparison with a truth;
* :mod:`.p1` — P1: the single head (Thm 4.1), low rank (exact skeleton; Thm 5.1's
  compressed-sensing baseline), the noisy oracle (Thm 6.1) and membership queries (App. B);
* :mod:`.p2` — P2: the copy-count schedule, rational interpolation, matching, the modular
  engine, exact and inexact recovery, enclosures, the approximate-oracle constant, cost;
* :mod:`.beyond` — beyond the papers (docs/design.md §10): the economy and adaptive
  schedules, multi-head low rank, their genericity;
* :mod:`.multi_head` — ``learn_multi_head``, the front door to every multi-head schedule;
* :mod:`.transformer` — the one-layer Transformer (P1 reduction, P2 extension) and its
  bias-free ReLU FFN learner.
"""
