"""The multi-head query schedule (docs/design.md §4.3 — our construction meeting P2's counts).

Random bases U = (u_1…u_d), X = (x_1…x_d) (0-indexed here).  The copy-count family
I(u, x) is the 2H₀ queries [(x+u) repeated m times, x], m = 1…2H₀; its m = 0 sample
F([x]) = v·x is the single query q₀ = F([x_1]) for the families ending in x_1 and is known
without a query for the others once v is known.

Families, in order:
  1. I(u_i, x_1) for i = 1…d, and the matching families I(u_1+u_i, x_1) for i = 2…d;
  2. for j = 2…d, i = 1…d: I(u_i, x_j) and the matching family I(u_i, x_1+x_j).
Count: 1 + 2H₀[(2d−1) + 2d(d−1)] = 4H₀d² − 2H₀ + 1; maximum length 2H₀ + 1.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Family", "Schedule", "published_count", "published_max_length"]


def published_count(d: int, H: int) -> int:
    """P2: exactly 4Hd² − 2H + 1 value queries (H₀ in place of H for a bound)."""
    return 4 * H * d * d - 2 * H + 1


def published_max_length(H: int) -> int:
    """P2: queries of length at most 2H + 1 (2H₀ + 1 for a bound)."""
    return 2 * H + 1


def _add(a, b):
    return [p + q for p, q in zip(a, b)]


@dataclass(frozen=True)
class Family:
    """I(u, x): ``u_key`` is (i,) for u_i or (0, i) for u_1+u_i; ``x_key`` likewise."""

    u_key: tuple
    x_key: tuple
    u: tuple
    x: tuple

    def query(self, m: int):
        """[(x+u) × m, x] — length m + 1 (P2 copy-count query)."""
        xu = [a + b for a, b in zip(self.x, self.u)]
        return [list(xu) for _ in range(m)] + [list(self.x)]

    @property
    def ends_in_x1(self) -> bool:
        return self.x_key == (0,)


class Schedule:
    """The full non-adaptive schedule for bases U, X and head bound H₀ (docs/design.md §4.3)."""

    def __init__(self, U, X, H0: int):
        self.U, self.X, self.H0 = [list(u) for u in U], [list(x) for x in X], H0
        self.d = len(self.U)
        self.families = self._families()

    def _fam(self, u_key, x_key):
        u = self.U[u_key[0]] if len(u_key) == 1 else _add(self.U[0], self.U[u_key[1]])
        x = self.X[x_key[0]] if len(x_key) == 1 else _add(self.X[0], self.X[x_key[1]])
        return Family(u_key, x_key, tuple(u), tuple(x))

    def _families(self):
        d = self.d
        fams = [self._fam((i,), (0,)) for i in range(d)]
        fams += [self._fam((0, i), (0,)) for i in range(1, d)]
        for j in range(1, d):
            for i in range(d):
                fams.append(self._fam((i,), (j,)))
                fams.append(self._fam((i,), (0, j)))
        return fams

    def first_query(self):
        """q₀ = F([x_1]): the m = 0 sample of every family ending in x_1."""
        return [list(self.X[0])]

    def queries(self):
        """Every query in order: q₀, then each family's m = 1…2H₀."""
        yield self.first_query()
        for fam in self.families:
            for m in range(1, 2 * self.H0 + 1):
                yield fam.query(m)

    @property
    def count(self) -> int:
        return 1 + 2 * self.H0 * len(self.families)

    @property
    def max_length(self) -> int:
        return 2 * self.H0 + 1
