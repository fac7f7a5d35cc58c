"""Analyses (layer 5, above learners): the genericity polynomials of the probability-one
claim, experiments shared by benchmarks and examples, and noise sweeps."""
