"""The learners' overheads, each measured with its shortcut on and off in one process (CPU
seconds, ``time.process_time``; docs/design.md §2.1, §10):

* ``images``: a P2 run at d = 8, H heads with two-token answers imaged from their heads'
  data (pair polynomials) against the same run with every answer imaged from its expanded
  polynomials (the path of groups too large for the weights);
* ``economy``: an economy run with each column-1 family checked through the group's partial
  fractions against the same run comparing every answer in Q(t);
* ``dot``: the exact dot products of economy's statement and single head over one common
  denominator against the Fraction loop (economy at (24, 4));
* ``single``: a single-head run with Session.dot memoised against recomputed each time;
* ``gc``: a P2 run with the cyclic garbage collector paused against running.

    python benchmarks/bench_overheads.py [--only images,economy,dot,single,gc] [--repeat 1]

Each line prints the run with the shortcut ("on"), without it ("off") and off/on.  The
results of the two runs are checked equal (the same recovered heads).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from fractions import Fraction

import exactattn as ea
from exactattn.arith import modular
from exactattn.learners import gc_pause
from exactattn.learners.beyond import economy, genericity
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.p1 import session
from exactattn.learners.p2 import engines
from exactattn.learners.p1.single_head import learn_single_head


def _cpu(run, repeat):
    best = None
    for _ in range(repeat):
        t = time.process_time()
        out = run()
        s = time.process_time() - t
        best = s if best is None else min(best, s)
    return best, out


@contextlib.contextmanager
def _patched(obj, name, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def _fraction_dot(a, b):
    return sum((Fraction(x) * Fraction(y) for x, y in zip(a, b)), Fraction(0))


def _plain_dot(self, a, b):
    return _fraction_dot(a, b)


def _expanded_image(self, e):
    P = self.field.p
    scale = self.L // e.L
    den = self._value(e.den, scale)
    return self.field.ctx(self._value(e.num, scale) * pow(den, -1, P))


def _multi(d, H, schedule="p2"):
    model = ea.random_multi_head(d, H, seed=1)
    return lambda: learn_multi_head(ea.Oracle(model), d, heads=H, seed=1, schedule=schedule,
                                    validate=0, force=True).model.head_set()


def _single(d):
    model = ea.random_multi_head(d, 1, seed=1)
    return lambda: learn_single_head(ea.Oracle(model), d, seed=1).model.head_set()


def _off_images():
    class Expanded(modular.ModularImage):
        image = _expanded_image

        def images(self, elems):
            return [self.image(e) for e in elems]
    return _patched(engines, "ModularImage", Expanded)


def _off_dot():
    stack = contextlib.ExitStack()
    stack.enter_context(_patched(economy, "_dot", _fraction_dot))
    stack.enter_context(_patched(genericity, "_dot", _fraction_dot))
    return stack


CASES = {
    "images": [("P2 d=8, H=12", lambda: _multi(8, 12), _off_images)],
    "economy": [(f"economy d=8, H={H}", lambda H=H: _multi(8, H, "economy"),
                 lambda: _patched(economy, "_same_family", lambda *a: False)) for H in (8, 10)],
    "single": [(f"single head d={d}", lambda d=d: _single(d),
                lambda: _patched(session.Session, "dot", _plain_dot)) for d in (64, 128)],
    "gc": [("P2 d=16, H=8", lambda: _multi(16, 8),
            lambda: _patched(gc_pause, "gc_paused", contextlib.nullcontext))],
}

CASES["dot"] = [("economy d=24, H=4", lambda: _multi(24, 4, "economy"), lambda: _off_dot())]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args(argv)
    print(f"{'case':<24} {'shortcut':<9} {'on s':>7} {'off s':>7} {'off/on':>7}")
    for name in a.only.split(","):
        for label, make, off in CASES[name]:
            run = make()
            on_s, on = _cpu(run, a.repeat)
            with off():
                off_s, got = _cpu(run, a.repeat)
            assert got == on, f"{label}: the two runs recovered different heads"
            print(f"{label:<24} {name:<9} {on_s:>7.2f} {off_s:>7.2f} {off_s / on_s:>7.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
