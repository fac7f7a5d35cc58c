"""The economy schedules' query counts as a declarative structure (docs/design.md §10): a list
of *blocks*, each with a multiplicity, a number of samples per item and a query length, all
polynomials in d, H (the canonical heads found) and H0 (the samples bound of the first
family: H0 = H when H is known).  The count is Σ multiplicity × samples, derived from the
blocks and nothing else; the learner tags every query with its block, so a run's per-block
counts can be compared with the structure, and :mod:`proofs_checks` expands the sum
symbolically (the stdlib checker re-expands it with its own polynomial arithmetic).

Polynomials are dicts {(i, j, k): coefficient} meaning Σ c · d^i H^j H0^k (coefficients are
Fractions: the pair count H(H−1)/2 has halves).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Block", "economy_blocks", "economy_count", "economy_max_length", "peval", "padd",
           "pmul", "count_polynomial", "VARIANTS", "PATHS"]

#: economy: H known (every column-1 family with 2H0 samples); adaptive: only a bound H0
VARIANTS = ("economy", "adaptive")
#: dual: H ≤ d and independent v_h (single-head-visible probes); residue: otherwise
PATHS = ("dual", "residue")


def _p(*terms):
    """_p((c, i, j, k), ...) = Σ c·d^i H^j H0^k."""
    out = {}
    for c, i, j, k in terms:
        out[(i, j, k)] = out.get((i, j, k), Fraction(0)) + Fraction(c)
    return {m: c for m, c in out.items() if c}


ONE = _p((1, 0, 0, 0))
D_MINUS_1 = _p((1, 1, 0, 0), (-1, 0, 0, 0))


def padd(a, b):
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, Fraction(0)) + c
    return {m: c for m, c in out.items() if c}


def pmul(a, b):
    out = {}
    for (i, j, k), c in a.items():
        for (p, q, r), e in b.items():
            m = (i + p, j + q, k + r)
            out[m] = out.get(m, Fraction(0)) + c * e
    return {m: c for m, c in out.items() if c}


def peval(a, d, H, H0) -> Fraction:
    return sum((c * d ** i * H ** j * H0 ** k for (i, j, k), c in a.items()), Fraction(0))


@dataclass(frozen=True)
class Block:
    """``multiplicity`` items of ``samples`` queries each, every query of length ≤ ``length``."""

    name: str
    multiplicity: dict
    samples: dict
    length: dict
    meaning: str

    def count(self) -> dict:
        return pmul(self.multiplicity, self.samples)

    def to_json(self):
        enc = lambda p: [[i, j, k, str(c)] for (i, j, k), c in sorted(p.items())]  # noqa: E731
        return {"name": self.name, "multiplicity": enc(self.multiplicity),
                "samples": enc(self.samples), "length": enc(self.length)}


def economy_blocks(variant: str = "economy", path: str = "dual", matching: bool = True):
    """The blocks of the economy schedule (docs/design.md §10).  ``matching`` is False for
    H = 1 (one head needs no matching across u)."""
    if variant not in VARIANTS or path not in PATHS:
        raise ValueError(f"variant must be one of {VARIANTS} and path one of {PATHS}")
    col1 = _p((2, 0, 0, 1)) if variant == "economy" else _p((2, 0, 1, 0))
    blocks = [
        Block("q0", ONE, ONE, ONE, "F([x1]): the m = 0 sample of every family ending in x1"),
        Block("first-family", ONE, _p((2, 0, 0, 1)), _p((2, 0, 0, 1), (1, 0, 0, 0)),
              "I(u1, x1), m = 1…2H0: H* is read here"),
        Block("column-1", D_MINUS_1, col1, _p((2, 0, 0, 1), (1, 0, 0, 0)),
              "I(ui, x1), i = 2…d: poles, residues c_h(ui) and K(ui) (hence v)"),
    ]
    if matching:
        blocks.append(Block("matching", D_MINUS_1, ONE, _p((2, 0, 0, 0)),
                            "[(x1+u1+ui), x1]: the m = 1 sample of I(u1+ui, x1) picks the "
                            "pairing of heads across u1 and ui"))
    if path == "dual":
        blocks += [
            Block("single-visible", pmul(D_MINUS_1, _p((1, 1, 1, 0), (-1, 0, 2, 0),
                                                      (1, 0, 1, 0))), ONE, _p((2, 0, 0, 0)),
                  "[(xj+b), xj] with b ⊥ v_g (g ≠ a): one head visible, sigmoid inversion"),
            Block("pair", pmul(D_MINUS_1, _p((Fraction(1, 2), 0, 2, 0), (Fraction(-1, 2), 0, 1, 0))),
                  _p((3, 0, 0, 0)), _p((4, 0, 0, 0)),
                  "I(α b_a + β b_g, xj), m = 1…3: heads a, g visible, known residues"),
        ]
    else:
        blocks.append(Block("residue-family", pmul(D_MINUS_1, _p((1, 1, 0, 0))),
                            _p((2, 0, 1, 0), (-1, 0, 0, 0)), _p((2, 0, 1, 0)),
                            "I(ui, xj), m = 1…2H−1 with K and G(0) known; poles matched "
                            "by their residues c_h(ui)"))
    return blocks


def count_polynomial(blocks) -> dict:
    """Σ multiplicity × samples over the blocks."""
    total = {}
    for b in blocks:
        total = padd(total, b.count())
    return total


def economy_count(d: int, H: int, H0: int | None = None, variant: str = "economy",
                  path: str = "dual") -> int:
    """The count from the structure, for H canonical heads found (H0 = H when known)."""
    H0 = H if H0 is None else H0
    if H == 0:  # no visible head: q0 and the column-1 families only
        blocks = economy_blocks(variant, path, False)[:3]
    else:
        blocks = economy_blocks(variant, path, H >= 2)
    return int(peval(count_polynomial(blocks), d, H, H0))


def economy_max_length(H: int, H0: int | None = None, path: str = "dual") -> int:
    H0 = H if H0 is None else H0
    lengths = [2 * H0 + 1, 1]
    if H >= 2:
        lengths.append(4 if path == "dual" else 2 * H)
    return max(lengths)
