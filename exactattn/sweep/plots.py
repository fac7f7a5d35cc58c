"""Plots of a sweep summary (matplotlib, extra ``[plots]``; written only where asked):
failure rate against box size beside the Schwartz–Zippel bound D/|S| with Clopper–Pearson
error bars (P2 probability one), measured query counts against the formulas (P2 count,
P1 Thm 4.1), and time per trial against the size (docs/sweeps.md).  Display only."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_plots"]


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install \".[plots]\" from a clone of "
                         "exactattn (or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _series(configs):
    """Configurations grouped by everything except the box."""
    out = {}
    for c in configs:
        key = c.label()
        out.setdefault(key, []).append(c)
    return out


def _failure_plot(plt, summary, path):
    series = {k: v for k, v in _series(summary.configs).items()
              if any(c.bound is not None for c in v)}
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n, (label, cs) in enumerate(sorted(series.items())):
        cs = sorted(cs, key=lambda c: c.params["box"])
        S = [2 * c.params["box"] + 1 for c in cs]
        rate = [float(c.rate) for c in cs]
        lo = [max(0.0, float(c.rate - c.ci[0])) for c in cs]
        hi = [max(0.0, float(c.ci[1] - c.rate)) for c in cs]
        color = f"C{n}"
        seen = [i for i, r in enumerate(rate) if r > 0]
        ax.errorbar([S[i] for i in seen], [rate[i] for i in seen],
                    yerr=[[lo[i] for i in seen], [hi[i] for i in seen]], fmt="o", color=color,
                    capsize=3, label=f"{label}: measured")
        none = [i for i, r in enumerate(rate) if r == 0]  # no failure: the CI's upper end
        if none:
            ax.plot([S[i] for i in none], [float(cs[i].ci[1]) for i in none], "v",
                    color=color, label=f"{label}: no failure (CI upper end)")
        ax.plot(S, [min(1.0, float(c.bound)) for c in cs], "--", color=color,
                label=f"{label}: D/|S|, D = {cs[0].D}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("|S| = 2·box + 1")
    ax.set_ylabel("failure rate")
    ax.set_title(f"failures against the Schwartz–Zippel bound "
                 f"({float(summary.confidence):.0%} Clopper–Pearson)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


def _count_plot(plt, summary, path):
    cs = [c for c in summary.configs if c.queries and c.expected_queries]
    if not cs:
        return None
    fig, ax = plt.subplots(figsize=(5, 4.5))
    xs = [c.expected_queries for c in cs]
    for c in cs:
        for q in c.queries:
            ax.plot(c.expected_queries, q, "o", color="C0" if q == c.expected_queries else "C3")
    top = max(xs + [q for c in cs for q in c.queries])
    ax.plot([0, top], [0, top], "k:", label="measured = formula")
    ax.set_xlabel("published count (P2: 4H₀d²−2H₀+1; P1: d²+d)")
    ax.set_ylabel("measured queries")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


def _time_plot(plt, summary, path):
    cs = [c for c in summary.configs if c.seconds is not None and c.expected_queries]
    if not cs:
        return None
    fig, ax = plt.subplots(figsize=(5, 4.5))
    for c in cs:
        ax.plot(c.expected_queries, 1000 * c.seconds, "o", color="C0")
        if c.learner_seconds is not None:
            ax.plot(c.expected_queries, 1000 * c.learner_seconds, "x", color="C1")
    ax.plot([], [], "o", color="C0", label="trial (median)")
    ax.plot([], [], "x", color="C1", label="inside the learner (median)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("queries (published count)")
    ax.set_ylabel("ms per trial")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


def write_plots(summary, out_dir) -> list:
    """failure_rate.png, counts.png, time.png in ``out_dir`` (those with data)."""
    plt = _pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    made = [_failure_plot(plt, summary, out / "failure_rate.png"),
            _count_plot(plt, summary, out / "counts.png"),
            _time_plot(plt, summary, out / "time.png")]
    return [p for p in made if p]
