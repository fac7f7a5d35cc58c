"""P1 (arXiv 2601.16873): the single-head learner of Thm 4.1, the exact low-rank skeleton and
the compressed-sensing baseline of Thm 5.1, the noisy oracle of Thm 6.1 and the membership
queries of App. B (docs/design.md §4.1, §4.2, §4.4)."""
