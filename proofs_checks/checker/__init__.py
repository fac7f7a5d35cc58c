"""Independent certificate checker: ``python -m proofs_checks.verify CERT.json ...``.

One module per certificate kind (``count``, ``recovery``, ``copy_count``, ``determinant``,
``bad_set``), over small exact layers of its own (``parse``, ``linalg``, ``poly``, ``qt``).

Standard library only (``json``, ``fractions``, ``itertools``, ``math``, ``random``, ``re``): it shares
no code with exactattn, never evaluates certificate text (no ``eval``, no ``sympify``; numbers
are parsed by a strict ``p/q`` reader) and re-derives what it checks from the definitions:

* ``count`` — recomputes the published query count and maximum length (P1 Thm 4.1: d²+d and 2;
  exact skeleton: d + r(2d−r) and 2; P2: 4H₀d²−2H₀+1 and 2H₀+1) and compares them with what was
  measured.
* ``count-fit`` — redoes the exact polynomial interpolation of the measured counts in (d, H₀)
  by Gaussian elimination over the rationals and compares the coefficients with the published
  polynomial 4H₀d²−2H₀+1.
* ``recovery`` / ``same-function`` — its own canonical form (merge equal W, sum v, drop zero
  sums) and its own softmax attention in Q(t), t = e^{1/L} (Laurent polynomials with
  rational coefficients): the recovered heads must equal the canonical form of the true heads,
  and both must reproduce every recorded oracle answer exactly.
* ``copy-count`` — evaluates attention on [(x+u)×m, x] in Q(t) and compares with
  K + Σ_h c_h/(1 + m z_h) (P2 copy-count family).
* ``rational-form`` — rebuilds N and D of G(m) = N(m)/D(m) as polynomials in (m, z, c, K).
* ``determinant`` — rebuilds the cleared (2H+1)×(2H+1) linearised interpolation matrix at the
  witness and at points of its own choosing, takes determinants by exact elimination, and
  compares with the certificate's polynomial, its factorisation and its closed form.
* ``bad-set`` — recomputes the genericity polynomials of docs/design.md §4.3 from the model (det U,
  det X, pole separation, visibility, unique matching), checks the stated factorisations by
  multiplying them out, the witness values, the degree D, the Schwartz–Zippel bound D/|S|,
  the exact bad-set probability (by enumeration when small) and the Monte Carlo tallies.

Beyond the checks, the header must name a known claim with its reference and statement, the
``params`` must be exactly the sizes the checks cover, and every recorded sympy result must be
true.  What a changed digit cannot break is what does not change the truth of the record:
e.g. the W of a head whose v is 0 (P1 Prop 7.1: it is invisible) or a singular basis of a
failed Monte Carlo run replaced by another singular matrix.

Exit status 0 when every certificate is accepted, 1 when one is rejected, 2 on usage errors.
Symbolic proofs done with sympy are recorded under ``symbolic`` for the reader; this checker
does not re-prove them but spot-checks them through the kinds above.
"""

from .parse import Rejected
from .verify import main, verify, verify_bytes, verify_file

__all__ = ["Rejected", "verify", "verify_bytes", "verify_file", "main"]
