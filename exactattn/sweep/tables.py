"""Text tables of a sweep summary (docs/sweeps.md): failures against the Schwartz–Zippel
bound (P2 probability one), query counts against the formulas (P2 count, P1 Thm 4.1), time
per trial.  Display only: every verdict was decided exactly in :mod:`.summary`."""

from __future__ import annotations

from .summary import SUCCESS, decimal

__all__ = ["count_table", "failure_table", "outcome_table", "time_table"]


def _render(header, rows) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    def fmt(r):
        return "  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip()
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])


def _named(c) -> str:
    named = sorted((k, n) for k, n in c.outcomes.items() if k not in SUCCESS)
    return ", ".join(f"{k} {n}" for k, n in named) or "none"


def failure_table(summary) -> str:
    """Per multi-head configuration with a box: failures, rate, Clopper–Pearson interval,
    D, D/|S| and the verdict."""
    pct = summary.confidence * 100
    conf = str(pct.numerator) if pct.denominator == 1 else decimal(pct, 6)
    rows = []
    for c in summary.configs:
        if c.params.get("box") is None or (c.bound is None and c.trials < 2):
            continue
        box = c.params.get("box")
        S = 2 * box + 1 if box else "-"
        if c.bound is None:
            verdict = c.bound_note
        elif c.exceeds:
            verdict = "EXCEEDS"
        elif c.bound >= 1:
            verdict = "vacuous (D/|S| ≥ 1)"
        else:
            verdict = "≤ bound" if c.rate <= c.bound else "within CI"
        if c.wrong or c.errors or c.outside:
            verdict = f"FAIL ({c.wrong} wrong, {c.errors} errors, {c.outside or 0} outside)"
        rows.append([c.label(), box, S, c.trials, c.failures, decimal(c.rate),
                     f"[{decimal(c.ci[0])}, {decimal(c.ci[1])}]", c.D if c.D is not None
                     else "-", decimal(c.bound), "-" if c.outside is None else c.outside,
                     c.wrong, verdict, _named(c)])
    if not rows:
        return ""
    head = ["configuration", "box", "|S|", "trials", "failures", "rate", f"{conf}% CI", "D",
            "D/|S|", "outside", "wrong", "verdict", "named failures"]
    note = (f"failure rate against the Schwartz–Zippel bound D/|S| (P2 probability one); "
            f"{conf}% Clopper–Pearson intervals; 'EXCEEDS' = exact one-sided binomial test "
            f"significant at α = {decimal(summary.alpha, 3)} per configuration (Bonferroni); "
            "'outside' = failures whose draw is not in the bad set (must be 0)")
    return note + "\n" + _render(head, rows)


def count_table(summary) -> str:
    """Measured query counts and maximum lengths (successful runs) beside the formulas."""
    rows = []
    for c in summary.configs:
        if c.expected_queries is None and not c.queries:
            continue
        match = {True: "yes", False: "NO", None: "-"}[c.counts_match]
        rows.append([c.label() + (f" box={c.params['box']}" if c.params.get("box") else ""),
                     ",".join(map(str, c.queries)) or "-", c.expected_queries or "-",
                     ",".join(map(str, c.max_lengths)) or "-", c.expected_max_length or "-",
                     match])
    if not rows:
        return ""
    return ("query counts of the successful runs against the published formulas "
            "(P2: 4H₀d²−2H₀+1, length 2H₀+1; P1 Thm 4.1: d²+d, length 2)\n" +
            _render(["configuration", "queries", "formula", "max length", "formula", "match"],
                    rows))


def time_table(summary) -> str:
    rows = [[c.label() + (f" box={c.params['box']}" if c.params.get("box") else ""),
             c.trials, _ms(c.learner_seconds), _ms(c.seconds)] for c in summary.configs]
    return ("time per trial (medians; learner = inside learn_*, trial = the whole trial in "
            "its worker)\n" + _render(["configuration", "trials", "learner ms", "trial ms"],
                                      rows))


def outcome_table(summary) -> str:
    rows = [[c.label(), c.trials, _named_all(c), c.status] for c in summary.configs]
    return _render(["configuration", "trials", "outcomes", "status"], rows)


def _named_all(c) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(c.outcomes.items()))


def _ms(s) -> str:
    return "-" if s is None else f"{1000 * s:.2f}"
