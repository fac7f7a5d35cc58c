"""The multi-head query schedule (docs/design.md §4.3 — our construction meeting P2's counts).

Random bases U = (u_1…u_d), X = (x_1…x_d).  The copy-count family I(u, x) is the 2H₀
queries [(x+u) repeated m times, x], m = 1…2H₀ (length m + 1); its m = 0 sample
F([x]) = v·x is the single query q₀ = F([x_1]) for the families ending in x_1 and is known
without a query for the others once v is known.

The schedule is generated from the declarative :data:`STRUCTURE` (read by the count
derivation of the P2-count claim and, in a copy of its own, by the independent checker):

  initial query  [x_1];
  block 1        for i = 1…d:              I(u_i, x_1);
  block 2        for i = 2…d:              I(u_1+u_i, x_1)   (matches I(u_1, x_1), I(u_i, x_1));
  block 3        for j = 2…d, for i = 1…d: I(u_i, x_j), I(u_i, x_1+x_j)
                                           (the second matches I(u_i, x_1), I(u_i, x_j)).
Count: 1 + 2H₀[(d) + (d − 1) + 2d(d − 1)] = 4H₀d² − 2H₀ + 1; maximum length 2H₀ + 1.

Indices in STRUCTURE are 1-based as in the text; the ``Family`` keys are 0-based tuples,
(i,) for u_{i+1} and (0, i) for u_1 + u_{i+1}.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

__all__ = ["Family", "Schedule", "STRUCTURE", "published_count", "published_max_length",
           "expand_structure"]

#: The schedule as data: loops over basis indices (bounds are integers or "d"), and per loop
#: point the families, each a sum of basis vectors for u and for x (an int is a fixed index, a
#: letter is a loop variable); a matching family names the two families it pairs.  Every
#: family contributes the samples m = 1 … 2·H0, query [(x+u) × m, x] of length m + 1.
STRUCTURE = {
    "initial": [{"tokens": [{"x": [1]}]}],
    "blocks": [
        {"loops": [["i", 1, "d"]], "families": [{"u": ["i"], "x": [1]}]},
        {"loops": [["i", 2, "d"]],
         "families": [{"u": [1, "i"], "x": [1], "matches": [[[1], [1]], [["i"], [1]]]}]},
        {"loops": [["j", 2, "d"], ["i", 1, "d"]],
         "families": [{"u": ["i"], "x": ["j"]},
                      {"u": ["i"], "x": [1, "j"], "matches": [[["i"], [1]], [["i"], ["j"]]]}]},
    ],
    "samples": {"m": [1, "2*H0"], "query": "[(x+u) × m, x]", "length": "m+1"},
}


def published_count(d: int, H: int) -> int:
    """P2: exactly 4Hd² − 2H + 1 value queries (H₀ in place of H for a bound)."""
    return 4 * H * d * d - 2 * H + 1


def published_max_length(H: int) -> int:
    """P2: queries of length at most 2H + 1 (2H₀ + 1 for a bound)."""
    return 2 * H + 1


def _bound(b, d: int) -> int:
    return d if b == "d" else int(b)


def _key(combo, env) -> tuple:
    """A 1-based index sum such as [1, "i"] at a loop point → the 0-based key (0, i−1)."""
    return tuple(env[c] - 1 if isinstance(c, str) else c - 1 for c in combo)


def expand_structure(d: int, structure=None):
    """The families of `structure` (default :data:`STRUCTURE`) in order, as
    (u_key, x_key, matches) with 0-based keys; `matches` is None or
    ((u_key, x_key), (u_key, x_key)) (docs/design.md §4.3).  The default structure's is
    expanded once per d (every run and its statement build a schedule)."""
    if structure is not None:
        return list(_expand(d, structure))
    hit = _EXPANDED.get(d)
    if hit is None or hit[0] is not STRUCTURE:       # (a structure swapped in is re-read)
        hit = _EXPANDED[d] = (STRUCTURE, _expand(d, STRUCTURE))
    return list(hit[1])


_EXPANDED = {}


def _expand(d: int, structure) -> tuple:
    out = []
    for block in structure["blocks"]:
        names = [lp[0] for lp in block["loops"]]
        ranges = [range(_bound(lp[1], d), _bound(lp[2], d) + 1) for lp in block["loops"]]
        for point in itertools.product(*ranges):
            env = dict(zip(names, point))
            for fam in block["families"]:
                match = fam.get("matches")
                if match is not None:
                    match = tuple((_key(u, env), _key(x, env)) for u, x in match)
                out.append((_key(fam["u"], env), _key(fam["x"], env), match))
    return tuple(out)


def _add(a, b):
    return [p + q for p, q in zip(a, b)]


@dataclass(frozen=True)
class Family:
    """I(u, x): ``u_key`` is (i,) for u_i or (0, i) for u_1+u_i; ``x_key`` likewise;
    ``matches`` the keys of the two families a matching family pairs (None otherwise)."""

    u_key: tuple
    x_key: tuple
    u: tuple
    x: tuple
    matches: tuple | None = None
    xu: tuple = ()

    def query(self, m: int):
        """[(x+u) × m, x] — length m + 1 (P2 copy-count query); the m copies are one list
        object, so an oracle converts and counts the repeated token once."""
        xu = list(self.xu) if self.xu else [a + b for a, b in zip(self.x, self.u)]
        return [xu] * m + [list(self.x)]

    @property
    def ends_in_x1(self) -> bool:
        return self.x_key == (0,)


class Schedule:
    """The full non-adaptive schedule for bases U, X and head bound H₀, generated from
    :data:`STRUCTURE` (docs/design.md §4.3)."""

    def __init__(self, U, X, H0: int):
        self.U, self.X, self.H0 = [list(u) for u in U], [list(x) for x in X], H0
        self.d = len(self.U)
        self._entries = {}
        self.families = [self._fam(u, x, m) for u, x, m in expand_structure(self.d)]
        del self._entries

    def _sum(self, rows, key):
        out = list(rows[key[0]])
        for k in key[1:]:
            out = _add(out, rows[k])
        return self._shared(out)

    def _shared(self, row) -> tuple:
        """The row with equal integer entries as one object: the 2d² − d families' tokens
        (and the transcript, which keeps them) hold d pointers each, not d new integers.
        Other entries (Fractions, mp and float numbers, balls) are kept as they are."""
        entries = self._entries
        return tuple([entries.setdefault(a, a) if type(a) is int else a for a in row])

    def _fam(self, u_key, x_key, matches=None):
        u, x = self._sum(self.U, u_key), self._sum(self.X, x_key)
        return Family(u_key, x_key, u, x, matches, self._shared(_add(x, u)))

    def first_query(self):
        """q₀ = F([x_1]): the m = 0 sample of every family ending in x_1."""
        return [list(self.X[0])]

    def queries(self):
        """Every query in order: q₀, then each family's m = 1…2H₀."""
        yield self.first_query()
        for fam in self.families:
            for m in range(1, 2 * self.H0 + 1):
                yield fam.query(m)

    def batches(self):
        """The same queries in order, in batches for :meth:`~exactattn.Oracle.ask_many`:
        [q₀], the first query of the first family alone (the learner checks the cost of a
        real copy-count answer before asking more), then each family's rest."""
        yield [self.first_query()]
        for n, fam in enumerate(self.families):
            queries = [fam.query(m) for m in range(1, 2 * self.H0 + 1)]
            if n == 0:
                yield queries[:1]
                queries = queries[1:]
            yield queries

    @property
    def count(self) -> int:
        return 1 + 2 * self.H0 * len(self.families)

    @property
    def max_length(self) -> int:
        return 2 * self.H0 + 1
