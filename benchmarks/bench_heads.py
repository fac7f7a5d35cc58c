"""CPU seconds and peak memory of certified exact P2 runs as the head count grows
(docs/design.md §2.1 lazy exact answers, §2.3 cost estimates): one ``exactattn learn
multi-head`` process per H at a fixed d, with its default validation queries and no
``--force``, measured by the operating system (``os.wait4``: user + system CPU seconds and
peak resident memory of the whole process, interpreter start and imports included).

    python benchmarks/bench_heads.py [--dim 8] [--heads 1-20] [--seed 1] [--extra "--validate 0"]

The column "est s" is the command line's up-front estimate of the run's CPU seconds
(``exactattn.cli._common.p2_work``; a run above a minute is refused without ``--force``),
printed beside the measured CPU seconds to show how far the guard's price is from the cost.
Each row says how the run ended: ``certified`` (exit 0), ``refused`` (exit 2: the cost
estimate or the term limit, before or during the run) or the named failure (exit 1).
Targets (CPU seconds): at d = 8 every H ≤ 20 certified and validated by default in ≤ 2 s
with peak RSS ≤ 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

from exactattn.cli._common import p2_work


def heads_range(text: str):
    """"1-20" → 1…20; "4,8,12" → [4, 8, 12]."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of head counts like 1-20")
    return out


def run(d: int, H: int, seed: int, extra):
    """(exit status, CPU seconds, peak RSS in MB, the run's own seconds or None, last error
    line) of one learn process, its resources from ``os.wait4``."""
    cmd = [sys.executable, "-m", "exactattn", "learn", "multi-head", "--dim", str(d),
           "--heads", str(H), "--seed", str(seed), "--quiet", "--json", *extra]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode().strip()
    seconds = None
    try:
        seconds = json.loads(text).get("seconds")
    except ValueError:
        pass
    return (os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024, seconds, errors.splitlines()[-1] if errors else "")


def _validate(extra):
    """The --validate count among the extra options (None: the default)."""
    return int(extra[extra.index("--validate") + 1]) if "--validate" in extra else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dim", type=int, default=8)
    ap.add_argument("--heads", type=heads_range, default=heads_range("1-20"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--extra", default="", help="more learn options, e.g. \"--validate 0\"")
    a = ap.parse_args(argv)
    extra = shlex.split(a.extra)
    print(f"d = {a.dim}, seed {a.seed}{', ' + a.extra if extra else ''}; CPU seconds and peak "
          f"RSS of the whole process (imports included)")
    print(f"{'H':>3} {'outcome':>10} {'est s':>7} {'CPU s':>7} {'run s':>7} {'RSS MB':>7}")
    for H in a.heads:
        code, cpu, rss, secs, line = run(a.dim, H, a.seed, extra)
        outcome = {0: "certified", 2: "refused"}.get(code, f"exit {code}")
        shown = "—" if secs is None else f"{secs:.2f}"
        est = p2_work(a.dim, H, validate=_validate(extra)) / 1e6
        print(f"{H:>3} {outcome:>10} {est:>7.2f} {cpu:>7.2f} {shown:>7} {rss:>7.0f}"
              + (f"  {line[:100]}" if code else ""), flush=True)


if __name__ == "__main__":
    main()
