"""`exactattn noise single-head|multi-head --dim D [--heads H] [--taus 1e-10,1e-20,...]
[--mode adversarial|random|worst-case] [--dps N] [--seed S] [--json] [--plot FILE.png]
[--quiet]` (docs/design.md §4.4).

Learns a seeded random real model through oracles whose answers are off by ±τ, for every τ of
the sweep, and prints the measured parameter error beside the predicted bound and their
ratio: for single-head the P1 Thm 6.1 bounds ε_W (Frobenius) and ε_v, for multi-head the P2
approximate-oracle bound C·τ with C computed for the model and the learner's queries.  Exit
status 0 when every error is within its bound wherever the conditions hold, 1 otherwise.
``--plot`` draws error against τ on log axes (needs matplotlib: the ``[plots]`` extra).
"""

from __future__ import annotations

from ._common import MAX_DPS, check_work, dim_int, dump, heads_int, int_in, output_file, p2_work, seed_int

VARIANTS = ("single-head", "multi-head")


def register(sub):
    p = sub.add_parser("noise", help="parameter error against noise level τ, beside the bounds",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("variant", choices=VARIANTS,
                   help="single-head (P1 Thm 6.1) or multi-head (P2 approximate-oracle bound)")
    p.add_argument("--dim", type=dim_int, required=True, help="token dimension d")
    p.add_argument("--heads", type=heads_int, default=None,
                   help="multi-head: number of heads H (default 2)")
    p.add_argument("--taus", default=None,
                   help="comma-separated noise levels τ (default: single-head "
                        "1e-4,…,1e-20; multi-head 1e-10,…,1e-30)")
    p.add_argument("--mode", choices=["adversarial", "random", "worst-case"],
                   default="adversarial",
                   help="±τ with seeded random signs, uniform in [−τ, τ], or (multi-head) the "
                        "sign pattern that attains C")
    from ._common import MIN_DPS
    p.add_argument("--dps", type=int_in(MIN_DPS, MAX_DPS), default=50,
                   help=f"mp digits (default 50, at least {MIN_DPS})")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the model, bases and noise")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", default=None, type=output_file("file"),
                   help="draw error against τ on log axes (matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.add_argument("--force", action="store_true",
                   help="run even when the cost estimate is above the limit")
    p.set_defaults(func=run)


def run(a):
    from ..analysis.noise_sweep import DEFAULT_TAUS, sweep_multi_head, sweep_single_head
    from ..presentation.progress import Progress
    if a.heads is not None and a.variant == "single-head":
        raise ValueError("--heads applies to multi-head only")
    if a.mode == "worst-case" and a.variant != "multi-head":
        raise ValueError("--mode worst-case applies to multi-head only")
    taus = noise_levels(a.taus or DEFAULT_TAUS[a.variant], a.dps)
    check_work(f"noise {a.variant} at d={a.dim} with {len(taus)} noise levels",
               _work(a, len(taus)), a.force)
    # every --plot error before the sweep: matplotlib absent, a format it cannot write, a
    # directory that does not exist or cannot be written
    plt = _pyplot() if a.plot else None
    if plt is not None:
        _check_plot_path(plt, a.plot)
    with Progress(f"noise {a.variant}", quiet=a.quiet, json=a.json) as progress:
        if a.variant == "single-head":
            out = sweep_single_head(a.dim, taus, a.dps, a.seed, a.mode, progress=progress)
        else:
            out = sweep_multi_head(a.dim, a.heads or 2, taus, a.dps, a.seed, a.mode,
                                   progress=progress)
    report = _report(out)
    print(dump(report) if a.json else _table(report))
    if plt is not None:
        _plot(plt, report, a.plot)
    return 0 if all(r["holds"] is not False for r in report["rows"]
                    if r["conditions_met"]) else 1


def noise_levels(text: str, dps: int) -> list:
    """The noise levels τ of ``--taus`` as exact rationals (:func:`~exactattn.analysis.
    noise_sweep.parse_taus`: decimal or "p/q" text within the number limits, each τ 0 or a
    normal float64), each refused (ValueError, exit 2) unless it is positive and at least
    10^-dps (a smaller τ is lost in the rounding of the mp answers, about 1 in size, at
    ``dps`` digits)."""
    from fractions import Fraction
    from ..analysis.noise_sweep import parse_taus
    try:
        taus = parse_taus(text)
    except ValueError as e:
        raise ValueError(f"--taus: {e}") from None
    for part, tau in zip((p.strip() for p in text.split(",")), taus):
        if tau == 0:
            raise ValueError(f"--taus: τ = {part} is not a noise level: τ must be > 0 (learn "
                             f"without noise with 'exactattn learn')")
        if tau < Fraction(1, 10 ** dps):
            raise ValueError(f"--taus: τ = {part} is below 1e-{dps}, the rounding of answers "
                             f"(about 1 in size) at --dps {dps}: the noise would be lost in it; "
                             f"give τ ≥ 1e-{dps} or raise --dps")
    return taus


#: a single-head sweep's run costs about this many CPU microseconds per scalar operation of
#: its d² + d queries of length 2 (measured at the default five levels and dps 50: d = 32
#: took 7 s, 48 30 s, 64 83 s)
SINGLE_HEAD_US = 0.45


#: the multi-head constant C costs about this many CPU microseconds per mp operation of its
#: Jacobian (measured: d = 4, H = 6 took 96 s, of which the Jacobian's 385 recoveries 95 %)
JACOBIAN_US = 1.8


def _work(a, levels: int) -> float:
    """The sweep's estimated CPU microseconds (:data:`._common.MAX_WORK`): one run per noise
    level at mp precision (:func:`._common.p2_work` on mp; a single-head operation costs about
    1 + dps/50 float operations); for multi-head also the constant C, a Jacobian by one
    recovery per schedule answer (4Hd² + 1 of them), each a rational fit of cost about
    (2H + 1)³ on each of the 2d² − 1 families."""
    d, H, scale = a.dim, a.heads or 2, 1 + a.dps // 50
    if a.variant == "single-head":
        return levels * (d * d + d) * 2 * d * d * SINGLE_HEAD_US * scale
    jacobian = (4 * H * d * d + 1) * (2 * d * d - 1) * (2 * H + 1) ** 3 * JACOBIAN_US * scale
    return levels * p2_work(d, H, validate=0, backend="mp", dps=a.dps) + jacobian


# ---------------------------------------------------------------------- display
def _f(x):
    """A number for display / JSON (floats here only)."""
    return None if x is None else float(x)


def _report(out) -> dict:
    from ..analysis.noise_sweep import loglog_slope
    rows = []
    for r in out["rows"]:
        bound = r.get("bound", r.get("predicted"))
        row = {"tau": _f(r["tau"]), "error": _f(r["error"]), "bound": _f(bound),
               "ratio": _f(r["error"] / bound) if r["error"] is not None and bound else None,
               "holds": r["holds"], "conditions_met": r["conditions_met"],
               "flags": r["flags"], "queries": r["queries"]}
        if "error_v" in r:
            row.update(error_v=_f(r["error_v"]), bound_v=_f(r["bound_v"]),
                       ratio_v=_f(r["error_v"] / r["bound_v"]))
        if r.get("notes"):
            row["notes"] = r["notes"]
        rows.append(row)
    good = [(r["tau"], r["error"]) for r in rows if r["error"] and r["conditions_met"]]
    rep = {"algorithm": out["algorithm"], "dim": out["dim"], "heads": out["heads"],
           "dps": out["dps"], "seed": out["seed"], "mode": out["mode"],
           "expected_queries": out["expected_queries"], "slope": loglog_slope(good),
           "rows": rows}
    if out["algorithm"] == "single-head":
        rep.update(bound="P1 Thm 6.1: ‖Ŵ−W‖_F ≤ ε_W, ‖v̂−v‖₂ ≤ ε_v",
                   norm_bound=_f(out["norm_bound"]), margin=_f(out["margin"]))
    else:
        sens = out["sensitivity"]
        rep.update(bound="P2 approximate-oracle bound: max |Δparameter| ≤ C·τ",
                   C=_f(out["C"]), constant=sens.summary())
        rep["constant"].pop("families")
    return rep


def _table(rep) -> str:
    single = rep["algorithm"] == "single-head"
    title = (f"{rep['algorithm']} noise sweep: d={rep['dim']}"
             + ("" if single else f", H={rep['heads']}")
             + f", {rep['mode']} noise, dps {rep['dps']}, seed {rep['seed']}")
    lines = [title, rep["bound"]]
    if single:
        lines.append(f"B = {rep['norm_bound']:.4g} (≥ ‖W‖_F), μ = {rep['margin']:.4g} "
                     f"(≤ min|v_i|), {rep['expected_queries']} queries of length ≤ 2")
        lines.append(f"{'tau':>9} {'|W^-W|_F':>11} {'eps_W':>11} {'ratio':>7} "
                     f"{'|v^-v|':>11} {'eps_v':>11} {'ratio':>7}  flags")
    else:
        c = rep["constant"]
        lines.append(f"C = {rep['C']:.4g} (worst {c['worst']}; cond U {c['cond_U']}, cond X "
                     f"{c['cond_X']}, min pole separation {c['min_pole_separation']}, "
                     f"min |residue| {c['min_residue']})")
        lines.append(f"{'tau':>9} {'max error':>11} {'C*tau':>11} {'ratio':>7}  conditions")
    for r in rep["rows"]:
        err = "failed" if r["error"] is None else f"{r['error']:.3e}"
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.3f}"
        line = f"{r['tau']:>9.1e} {err:>11} {r['bound']:>11.3e} {ratio:>7}"
        if single:
            line += f" {r['error_v']:>11.3e} {r['bound_v']:>11.3e} {r['ratio_v']:>7.3f}"
            line += "  " + (", ".join(r["flags"]) or "-")
        else:
            line += "  " + ("met" if r["conditions_met"] else "NOT MET")
        lines.append(line)
    if rep["slope"] is not None:
        lines.append(f"log-log slope of the error against τ: {rep['slope']:.3f}")
    for r in rep["rows"]:
        for note in r.get("notes", [])[:2]:
            lines.append(f"note (τ={r['tau']:.1e}): {note}")
    return "\n".join(lines)


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install \".[plots]\" from a clone of "
                         "exactattn (or pip install matplotlib)") from None
    return plt


def _check_plot_path(plt, path):
    """ValueError (exit 2) now, not after the sweep, for a --plot FILE that cannot be written."""
    import os
    fig = plt.figure()
    try:
        formats = fig.canvas.get_supported_filetypes()
    finally:
        plt.close(fig)
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if ext not in formats:
        raise ValueError(f"--plot {path}: unknown picture format {ext or '(none)'!r}; use one "
                         f"of {', '.join(sorted(formats))}")
    if os.path.isdir(path):
        raise ValueError(f"--plot {path} is a directory; give a file name such as error.png")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"--plot {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ValueError(f"--plot {path}: not writable")


def _plot(plt, rep, path):
    """Error and bound against τ on log axes."""
    rows = [r for r in rep["rows"] if r["error"] and r["tau"] > 0]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    taus = [r["tau"] for r in rows]
    if rep["algorithm"] == "single-head":
        ax.loglog(taus, [r["error"] for r in rows], "o-", label="‖Ŵ−W‖_F measured")
        ax.loglog(taus, [r["bound"] for r in rows], "--", label="ε_W (P1 Thm 6.1)")
        ax.loglog(taus, [r["error_v"] for r in rows], "s-", label="‖v̂−v‖₂ measured")
        ax.loglog(taus, [r["bound_v"] for r in rows], ":", label="ε_v (P1 Thm 6.1)")
    else:
        ax.loglog(taus, [r["error"] for r in rows], "o-", label="max parameter error")
        ax.loglog(taus, [r["bound"] for r in rows], "--", label=f"C·τ, C = {rep['C']:.3g}")
    off = [r for r in rows if not r["conditions_met"]]
    if off:
        ax.loglog([r["tau"] for r in off], [r["error"] for r in off], "rx", markersize=10,
                  label="conditions not met")
    ax.set_xlabel("noise level τ")
    ax.set_ylabel("parameter error")
    heads = "" if rep["algorithm"] == "single-head" else f", H={rep['heads']}"
    ax.set_title(f"{rep['algorithm']}, d={rep['dim']}{heads}, {rep['mode']} noise")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
