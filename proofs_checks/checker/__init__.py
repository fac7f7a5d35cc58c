"""Independent certificate checker: ``python -m proofs_checks.verify CERT.json ...``
(docs/evidence.md says what each certificate proves).

Standard library only (``json``, ``fractions``, ``itertools``, ``math``, ``random``, ``re``): it
shares no code with exactattn, never evaluates certificate text (no ``eval``, no ``sympify``)
and re-derives what it checks from the definitions.

Strict reading (:mod:`.parse`): size, UTF-8, nesting depth and integer literals are bounded
before any work; duplicate keys, floats, NaN/Infinity and booleans-for-integers are rejected;
every field a verdict relies on is required; every loop over a count the certificate supplies
is bounded by the claim's sizes.  Anything wrong ends in one ``REJECTED`` line, never a
traceback.

One module per certificate kind:

* ``run`` (:mod:`.run`, dispatched by learner to :mod:`.run_multi_head`,
  :mod:`.run_single_head`, :mod:`.run_low_rank`) — a consistency-and-genericity certificate: the
  transcript must be exactly the schedule rebuilt from the recorded vectors (and, for P1's
  adaptive probes, from the recovered v), the recovered model must reproduce every answer in
  Q(t), and every genericity condition is evaluated at the recovered model;
* ``count`` / ``count-derivation`` / ``count-fit`` (:mod:`.count`) — published counts against
  a run's transcript; the P2 count as a polynomial identity read off the schedule structure
  this checker rebuilds transcripts from; an exact fit over the measured grid (sampled);
* ``same-function`` (:mod:`.recovery`) — pairwise different raw parameterisations with one
  canonical form and equal outputs (P1 Prop 7.1);
* ``copy-count`` / ``rational-form`` (:mod:`.copy_count`), ``determinant``
  (:mod:`.determinant`) — the P2 copy-count family and its interpolation determinant;
* ``bad-set`` (:mod:`.bad_set`) — the genericity polynomials recomputed, factorisations,
  witness, D, D/|S|, exact enumeration where small, and the Monte Carlo trials re-drawn from
  their seeds, classified here and their outcomes predicted by :mod:`.predict` (the learner's
  rules), with exact binomial tests (:mod:`.binomial`);
* ``non-unique`` (:mod:`.nonunique`) — the non-uniqueness lemma at one instance;
* ``noisy-single-head`` (:mod:`.noisy_single`), ``noisy-multi-head`` (:mod:`.noisy_multi`),
  ``transformer`` / ``transformer-condition`` (:mod:`.transformer`) — the approximate-oracle
  and Transformer claims, re-derived with rational interval arithmetic (:mod:`.interval`:
  e^s and log by certified series, endpoints rounded outward; ReLU signs certified in Q(t)).

The header must name a known claim with its reference and statement, and ``params`` must be
exactly the sizes the checks cover (:mod:`.claims`).  Exit status 0 when every certificate is
accepted, 1 when one is rejected, 2 on usage errors.  Symbolic proofs done with sympy are
recorded under ``symbolic`` for the reader; this checker does not re-prove them but
spot-checks them through the kinds above.
"""

from .parse import Rejected
from .verify import main, verify, verify_bytes, verify_file

__all__ = ["Rejected", "verify", "verify_bytes", "verify_file", "main"]
