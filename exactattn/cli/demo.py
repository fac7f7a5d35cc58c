"""`exactattn demo [--dim D] [--heads H] [--seed S] [--box B] [--json] [--quiet]`: a narrated walk
through one exact multi-head recovery (P2): the model, one copy-count family with its
samples, the interpolated poles and residues (z_h = t^k → score k/L), the matching step, the
final heads and the exact check.  ``--json`` prints the same content as one JSON object."""

from __future__ import annotations

import sys

from ._common import MAX_BOX, dump, int_in, seed_int


def register(sub):
    p = sub.add_parser("demo", help="narrated walk through one exact multi-head recovery",
                       description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    p.add_argument("--dim", type=int_in(1, 8), default=2, help="token dimension d (default 2)")
    p.add_argument("--heads", type=int_in(1, 4), default=2, help="number of heads H (default 2)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the model and the learner")
    p.add_argument("--box", type=int_in(1, MAX_BOX), default=None,
                   help="query vectors from {-B…B}^d (default 5: small exponents to read)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=run)


def run(a):
    from ..presentation.demo import DEFAULT_BOX, narrate, run_demo
    from ..errors import LearningFailure
    from ..presentation.progress import Progress
    try:
        with Progress("demo", quiet=a.quiet, json=a.json) as progress:
            data = run_demo(a.dim, a.heads, a.seed, a.box or DEFAULT_BOX, progress)
    except LearningFailure as e:
        sys.stderr.write(f"exactattn demo: {e.reason}: {e}\n")
        if a.json:
            print(dump({"demo": "multi-head (P2)", "error": e.reason, "message": str(e)}))
        return 1
    print(dump(data) if a.json else narrate(data), end="" if not a.json else "\n")
    return 0 if data["check"]["same_function"] and data["check"]["certified"] else 1
