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
* ``gc``: a P2 run with the cyclic garbage collector paused against running;
* ``finals``: a P2 run whose integer tokens go to FLINT as integers with each final token's
  scores W_h x_N cached against every query group scored through rational matrices in full;
* ``solves``: an economy run solving each head's basis once for all its columns
  (``Backend.solve_columns``) against one solve per column;
* ``logit``: an economy run reading each single-visible score from the odds num/(den − num)
  (``ExpElement.logit``) against σ/(1 − σ) computed in Q(t) and tested twice;
* ``mp``: a P2 run on mp at 60 digits with scores cached per distinct tokens and final token
  and one LU factorisation per solve, against every query scored afresh and lu_solve per
  column.

    python benchmarks/bench_overheads.py [--only images,economy,dot,single,gc,finals,solves,logit,mp]
                                         [--repeat 1]

Each line prints the run with the shortcut ("on"), without it ("off") and off/on.  The
results of the two runs are checked equal (the same recovered heads).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from fractions import Fraction

import exactattn as ea
from exactattn.arith import exact, modular
from exactattn.arith.base import Backend
from exactattn.arith.mp import MPBackend
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


def _multi(d, H, schedule="p2", backend="exact", dps=None):
    model = ea.random_multi_head(d, H, seed=1)
    return lambda: learn_multi_head(ea.Oracle(model, backend=backend, dps=dps), d, heads=H,
                                    seed=1, schedule=schedule, backend=backend, dps=dps,
                                    validate=0, force=True).model.head_set()


def _rational_products(order, heads):
    return exact._products(exact.Prepared(order, ()).matrix(), heads)


def _column_by_column(self, A, columns):
    return [[r[0] for r in self.solve(A, [[c] for c in col])] for col in columns]


def _logit_in_q_t(sigma, where):
    rho = sigma / (1 - sigma)
    assert rho.monomial() is not None
    return rho.log()


def _mp_scored_afresh(self, tokens, keys, heads):
    fdot = self.ctx.fdot
    out = []
    for W, v in heads:
        Wx = [fdot(row, tokens[-1]) for row in W]
        out.append(([fdot(tok, Wx) for tok in tokens], [fdot(tok, v) for tok in tokens]))
    return out


def _mp_lu_solve(self, A, B):
    ctx = self.ctx
    Am = ctx.matrix(A)
    cols = [ctx.lu_solve(Am, ctx.matrix([r[j] for r in B])) for j in range(len(B[0]))]
    return [[c[i] for c in cols] for i in range(len(A))]


def _off_mp():
    stack = contextlib.ExitStack()
    stack.enter_context(_patched(MPBackend, "_scored", _mp_scored_afresh))
    stack.enter_context(_patched(MPBackend, "solve", _mp_lu_solve))
    return stack


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

CASES["finals"] = [(f"P2 d={d}, H=4", lambda d=d: _multi(d, 4),
                    lambda: _patched(exact, "_products_integer", _rational_products))
                   for d in (32, 64)]
CASES["solves"] = [("economy d=64, H=4", lambda: _multi(64, 4, "economy"),
                    lambda: _patched(Backend, "solve_columns", _column_by_column))]
CASES["logit"] = [("economy d=64, H=4", lambda: _multi(64, 4, "economy"),
                   lambda: _patched(economy, "_exact_logit", _logit_in_q_t))]
CASES["mp"] = [("P2 d=16, H=4, mp 60", lambda: _multi(16, 4, backend="mp", dps=60), _off_mp)]
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
