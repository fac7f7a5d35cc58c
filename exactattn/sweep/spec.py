"""Sweep grids: a spec of learner runs, claim checks or any trial function, expanded into
trials (docs/sweeps.md; the count regression and the Monte Carlo of P2 probability one).

A spec is a dict (from CLI flags, a TOML or a JSON file) with up to three lists of groups::

    [[run]]                     # learner runs: exactattn.sweep.trials:learner_trial
    learner = "multi-head"      # multi-head | single-head | low-rank
    "d,H" = [[2, 2], [2, 3], [3, 3]]   # a comma-joined key is a zipped axis
    box = [10, 100, 1000, 10000]
    trials = 1000               # seeds 0…999; or seeds = "0-999" / [0, 5, 9]

    [[claim]]                   # claim checks: exactattn.sweep.trials:claim_trial
    id = ["P2-count", "P2-rational"]
    size = "quick"

    [[trial]]                   # any pure trial function, by dotted name
    fn = "package.module:function"
    grid = {a = [1, 2], b = [3]}    # or params = [{...}, ...]
    trials = 100

Every scalar axis may be a list; the groups expand to the product of their axes.  A trial is
(fn, params, seed); its identity key is the SHA-256 of the canonical JSON of the three, so the
same trial always has the same key (the store's primary key: resuming never duplicates).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field

__all__ = ["Trial", "SweepSpec", "SpecError", "canonical_json", "trial_key", "parse_seeds",
           "LEARNERS", "LEARNER_TRIAL", "CLAIM_TRIAL"]

LEARNER_TRIAL = "exactattn.sweep.trials:learner_trial"
CLAIM_TRIAL = "exactattn.sweep.trials:claim_trial"

#: learner → the parameters it takes (beyond learner, d, backend, dps, model_seed)
LEARNERS = {"multi-head": ("H", "H0", "box", "schedule"), "single-head": (),
            "low-rank": ("rank",)}
_COMMON = ("learner", "d", "backend", "dps", "model_seed")
_DEFAULTS = {"backend": "exact", "dps": None, "model_seed": 0, "H": 1, "H0": None,
             "box": 1000, "schedule": "p2", "rank": None}
_ALIASES = {"dim": "d", "heads": "H", "heads_bound": "H0", "H_0": "H0"}
MAX_TRIALS = 10 ** 6


class SpecError(ValueError):
    """A malformed sweep spec: the message says which key is wrong and what to write."""


def canonical_json(obj) -> str:
    """One text per value: sorted keys, no spaces (trial identity and bit-for-bit comparison).
    An object with an exact ``to_dict()`` (a model: rationals as strings) is written as that
    dict, so a trial's parameters may hold a model itself."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=_as_dict)


def _as_dict(obj):
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    raise TypeError(f"{type(obj).__name__} is not a JSON value (and has no to_dict())")


def trial_key(fn: str, params: dict, seed) -> str:
    """The identity of a trial: SHA-256 of canonical JSON [fn, params, seed]."""
    return hashlib.sha256(canonical_json([fn, params, seed]).encode()).hexdigest()


@dataclass(frozen=True)
class Trial:
    """One trial: ``fn(params, seed)`` is a pure function of these; ``key`` is its identity
    and ``config`` (canonical JSON of fn and params) groups the seeds of one configuration."""

    fn: str
    params: dict = field(hash=False, compare=False)
    seed: object
    key: str
    config: str


def make_trial(fn: str, params: dict, seed) -> Trial:
    return Trial(fn, params, seed, trial_key(fn, params, seed), canonical_json([fn, params]))


def parse_seeds(value, where: str = "seeds") -> list:
    """'A-B' (inclusive), 'A', an int list, or {'start': A, 'stop': B} (exclusive)."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*", value)
        if not m:
            raise SpecError(f"{where}: {value!r} is not a seed range like 0-999")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise SpecError(f"{where}: {value!r} is empty (need A ≤ B)")
        if b - a + 1 > MAX_TRIALS:
            raise SpecError(f"{where}: {value!r} names {b - a + 1} seeds, above the limit "
                            f"{MAX_TRIALS}; give a shorter range")
        seeds = list(range(a, b + 1))
    elif isinstance(value, dict) and set(value) <= {"start", "stop"} and "stop" in value:
        start, stop = _int(value.get("start", 0), where), _int(value["stop"], where)
        if stop - start > MAX_TRIALS:
            raise SpecError(f"{where}: {stop - start} seeds, above the limit {MAX_TRIALS}")
        seeds = list(range(start, stop))
    elif isinstance(value, list):
        seeds = [_int(s, where) for s in value]
    else:
        raise SpecError(f"{where}: write a range 'A-B', a list of integers or "
                        f"{{start = A, stop = B}}, not {value!r}")
    if not seeds:
        raise SpecError(f"{where}: no seeds")
    if len(set(seeds)) != len(seeds):
        raise SpecError(f"{where}: a seed is repeated")
    return seeds


def _int(x, where):
    if isinstance(x, bool) or not isinstance(x, int):
        raise SpecError(f"{where}: {x!r} is not an integer")
    return x


def _seeds_of(group: dict, where: str):
    if "seeds" in group and "trials" in group:
        raise SpecError(f"{where}: give seeds or trials, not both")
    if "trials" in group:
        n = group["trials"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_TRIALS:
            raise SpecError(f"{where}.trials must be an integer in 1…{MAX_TRIALS}, got {n!r}")
        return list(range(n))
    if "seeds" in group:
        return parse_seeds(group["seeds"], f"{where}.seeds")
    return None


def _axes(group: dict, where: str) -> list:
    """[(names, values)] with zipped axes for comma-joined keys; scalars become 1-lists."""
    out = []
    for key, value in group.items():
        names = tuple(_ALIASES.get(n.strip(), n.strip()) for n in key.split(","))
        vals = value if isinstance(value, list) else [value]
        if not vals:
            raise SpecError(f"{where}.{key}: empty list")
        if len(names) > 1:
            for v in vals:
                if not isinstance(v, list) or len(v) != len(names):
                    raise SpecError(f"{where}.{key}: each entry must list {len(names)} values "
                                    f"({', '.join(names)}), got {v!r}")
            vals = [tuple(v) for v in vals]
        else:
            vals = [(v,) for v in vals]
        out.append((names, vals))
    seen = [n for names, _ in out for n in names]
    dup = {n for n in seen if seen.count(n) > 1}
    if dup:
        raise SpecError(f"{where}: {', '.join(sorted(dup))} given twice")
    return out


def _product(axes):
    for combo in itertools.product(*(vals for _, vals in axes)):
        point = {}
        for (names, _), values in zip(axes, combo):
            point.update(zip(names, values))
        yield point


def _positive(p, name, where, allow_none=False):
    x = p[name]
    if x is None and allow_none:
        return
    if isinstance(x, bool) or not isinstance(x, int) or x < 1:
        raise SpecError(f"{where}: {name} must be a positive integer, got {x!r}")


def _learner_params(point: dict, where: str):
    """Normalised parameters of one learner run, or None when H0 < H (skipped, counted)."""
    learner = point.get("learner", "multi-head")
    if learner not in LEARNERS:
        raise SpecError(f"{where}: learner must be one of {', '.join(LEARNERS)}, got {learner!r}")
    allowed = set(_COMMON) | set(LEARNERS[learner])
    extra = sorted(set(point) - allowed)
    if extra:
        raise SpecError(f"{where}: {', '.join(extra)} do{'es' if len(extra) == 1 else ''} not "
                        f"apply to the {learner} learner (it takes "
                        f"{', '.join(sorted(allowed - {'learner'}))})")
    if "d" not in point:
        raise SpecError(f"{where}: d (the dimension) is required")
    p = {k: point.get(k, _DEFAULTS.get(k)) for k in sorted(allowed)}
    p["learner"] = learner
    _positive(p, "d", where)
    for name, top in (("d", 64), ("H", 64), ("H0", 64), ("dps", 10000), ("box", 10 ** 9)):
        x = p.get(name)
        if isinstance(x, int) and x > top:
            raise SpecError(f"{where}: {name} = {x} is above the limit {top}; use at most {top}")
    if p["backend"] not in ("exact", "mp", "float"):
        raise SpecError(f"{where}: backend must be exact, mp or float, got {p['backend']!r}")
    if p["backend"] == "mp":
        p["dps"] = 50 if p["dps"] is None else p["dps"]
        _positive(p, "dps", where)
    elif p["dps"] is not None:
        raise SpecError(f"{where}: dps applies to the mp backend only")
    if isinstance(p["model_seed"], bool) or not isinstance(p["model_seed"], int):
        raise SpecError(f"{where}: model_seed must be an integer, got {p['model_seed']!r}")
    if learner == "multi-head":
        _positive(p, "H", where)
        _positive(p, "H0", where, allow_none=True)
        if p["H0"] is not None and p["H0"] < p["H"]:
            return None
        if p["backend"] == "exact":
            _positive(p, "box", where)
        elif "box" in point:
            raise SpecError(f"{where}: box applies to the exact backend (mp/float draw "
                            "Gaussian query vectors)")
        else:
            p["box"] = None
        if not isinstance(p["schedule"], str):
            raise SpecError(f"{where}: schedule must be a name such as 'p2'")
    if learner == "low-rank":
        r = p["rank"]
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= p["d"]:
            raise SpecError(f"{where}: low-rank needs rank in 0…d, got {r!r}")
    return p


@dataclass
class SweepSpec:
    """Groups of trials (module docstring); ``trials()`` expands them in a fixed order."""

    groups: list  # [(fn, [params...], [seeds...])]
    skipped: int = 0  # grid points dropped because H0 < H
    name: str | None = None

    @classmethod
    def from_dict(cls, spec: dict) -> SweepSpec:
        if not isinstance(spec, dict):
            raise SpecError("a sweep spec is a table/object with run, claim or trial lists")
        unknown = sorted(set(spec) - {"run", "claim", "trial", "name"})
        if unknown:
            raise SpecError(f"unknown top-level key(s) {', '.join(unknown)}: a spec has "
                            "[[run]], [[claim]] and [[trial]] lists (and an optional name)")
        out = cls([], 0, spec.get("name"))
        for kind in ("run", "claim", "trial"):
            groups = spec.get(kind, [])
            groups = [groups] if isinstance(groups, dict) else groups
            if not isinstance(groups, list):
                raise SpecError(f"{kind} must be a list of tables")
            for n, g in enumerate(groups):
                where = f"{kind}[{n}]"
                if not isinstance(g, dict):
                    raise SpecError(f"{where} must be a table of axes")
                getattr(out, f"_add_{kind}")(dict(g), where)
        if not out.groups and out.skipped:
            raise SpecError(f"every grid point has H0 < H ({out.skipped} dropped): the bound "
                            f"H0 must be at least the number of heads H")
        if not out.groups:
            raise SpecError("the spec names no trials (add a [[run]], [[claim]] or [[trial]])")
        total = sum(len(p) * len(s) for _, p, s in out.groups)
        if total > MAX_TRIALS:
            raise SpecError(f"the spec expands to {total} trials (limit {MAX_TRIALS})")
        return out

    @classmethod
    def from_file(cls, path) -> SweepSpec:
        """A TOML (.toml) or JSON file."""
        from pathlib import Path
        path = Path(path)
        import os
        import stat
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise SpecError(f"spec file {str(path)!r} is not a regular file; give a file")
        if st is not None and st.st_size > 16 * 2 ** 20:
            raise SpecError(f"spec file {str(path)!r} has {st.st_size} bytes, above the limit "
                            f"of 16 MiB")
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise SpecError(f"spec file {str(path)!r} not found") from None
        except (OSError, UnicodeDecodeError) as e:
            raise SpecError(f"spec file {str(path)!r} cannot be read ({e})") from None
        if path.suffix == ".toml":
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                try:
                    import tomli as tomllib
                except ModuleNotFoundError:
                    raise SpecError("TOML specs need Python ≥ 3.11 (or `pip install tomli`); "
                                    "or write the spec as JSON") from None
            try:
                data = tomllib.loads(text)
            except RecursionError:
                raise SpecError(f"spec file {str(path)!r} is nested too deeply") from None
            except tomllib.TOMLDecodeError as e:
                raise SpecError(f"spec file {str(path)!r} is not valid TOML ({e})") from None
        else:
            try:
                data = json.loads(text)
            except RecursionError:
                raise SpecError(f"spec file {str(path)!r} is nested too deeply") from None
            except json.JSONDecodeError as e:
                raise SpecError(f"spec file {str(path)!r} is not valid JSON ({e})") from None
        try:
            return cls.from_dict(data)
        except RecursionError:
            raise SpecError(f"spec file {str(path)!r} is nested too deeply") from None

    # ------------------------------------------------------------------ groups
    def _add_run(self, g, where):
        seeds = _seeds_of(g, where) or [0]
        g.pop("seeds", None), g.pop("trials", None)
        params = []
        for point in _product(_axes(g, where)):
            p = _learner_params(point, where)
            if p is None:
                self.skipped += 1
            elif p not in params:
                params.append(p)
        if params:
            self.groups.append((LEARNER_TRIAL, params, seeds))

    def _add_claim(self, g, where):
        seeds = _seeds_of(g, where)
        g.pop("seeds", None), g.pop("trials", None)
        ids = g.pop("id", None)
        size = g.pop("size", "quick")
        if g:
            raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(g))} (a claim group "
                            "has id, size, seeds or trials)")
        ids = ids if isinstance(ids, list) else [ids]
        if not ids or not all(isinstance(i, str) and i for i in ids):
            raise SpecError(f"{where}: id must name claims, e.g. id = [\"P2-count\"]")
        sizes = size if isinstance(size, list) else [size]
        for s in sizes:
            if s not in ("quick", "full"):
                raise SpecError(f"{where}: size must be quick or full, got {s!r}")
        params = [{"claim": i, "size": s} for i in ids for s in sizes]
        self.groups.append((CLAIM_TRIAL, params, seeds or [None]))

    def _add_trial(self, g, where):
        seeds = _seeds_of(g, where) or [0]
        fn = g.pop("fn", None)
        if not isinstance(fn, str) or ":" not in fn:
            raise SpecError(f"{where}: fn must be a dotted name 'package.module:function'")
        g.pop("seeds", None), g.pop("trials", None)
        if "params" in g and "grid" in g:
            raise SpecError(f"{where}: give params or grid, not both")
        if "grid" in g:
            grid = g.pop("grid")
            if not isinstance(grid, dict):
                raise SpecError(f"{where}.grid must be a table of axes")
            params = list(_product(_axes(grid, where + ".grid")))
        else:
            params = g.pop("params", [{}])
            if not isinstance(params, list) or not all(isinstance(p, dict) for p in params):
                raise SpecError(f"{where}.params must be a list of tables")
        if g:
            raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(g))} (a trial group "
                            "has fn, params or grid, seeds or trials)")
        for p in params:
            try:
                canonical_json(p)
            except (TypeError, ValueError) as e:
                raise SpecError(f"{where}: parameters must be JSON values ({e})") from None
        self.groups.append((fn, params, seeds))

    # ------------------------------------------------------------------ expansion
    def trials(self) -> list:
        """Every trial, configuration-major, seeds in the order given."""
        return [make_trial(fn, p, s) for fn, params, seeds in self.groups
                for p in params for s in seeds]

    def __len__(self):
        return sum(len(p) * len(s) for _, p, s in self.groups)
