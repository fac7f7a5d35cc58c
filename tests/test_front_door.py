"""The first hour of a user: a light command-line start-up, certificates written from Python,
and cost estimates that price a run at what it will really ask (README.md; docs/evidence.md;
docs/design.md §2.3, §7, §8)."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest

import exactattn as ea
from exactattn.cli.main import main
from exactattn.learners.p2 import cost

#: the heavy dependencies that `exactattn --version` / `--help` must not load
HEAVY = ("sympy", "mpmath", "flint", "numpy")


# ---------------------------------------------------------------------- start-up
def imported_at_start_up(*args) -> set:
    """Top-level names of the modules `python -X importtime ARGS` imports (from its report on
    stderr: one `import time: self | cumulative | name` line per module)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip().split(".")[0]
            for line in proc.stderr.splitlines() if line.startswith("import time:")
            and "|" in line}


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["learn", "--help"]],
                         ids=" ".join)
def test_cli_start_up_imports_no_heavy_dependency(args):
    """Structural, not timed: what `--version` and `--help` import (docs/design.md §7)."""
    names = imported_at_start_up("-m", "exactattn", *args)
    assert "exactattn" in names                       # the report was read
    assert not set(HEAVY) & names, sorted(set(HEAVY) & names)


@pytest.mark.slow
def test_the_start_up_check_sees_a_heavy_import():
    assert "numpy" in imported_at_start_up("-c", "import numpy")


# ---------------------------------------------------------------------- certificates from Python
def _exact_run(d=2, H=2, seed=0):
    model = ea.random_multi_head(d, H, seed=seed)
    return model, ea.learn_multi_head(ea.Oracle(model), d, heads=H, seed=seed)


def test_write_certificate_is_accepted_and_a_tampered_one_is_not(tmp_path):
    from proofs_checks.checker import Rejected, verify, verify_file
    model, res = _exact_run()
    path = tmp_path / "run.json"
    res.write_certificate(path)
    cert = json.loads(path.read_text(encoding="utf-8"))
    assert cert["claim"] == "run" and cert["checks"][0]["learner"] == "multi-head"
    assert "model" not in cert["checks"][0]
    findings = verify(cert)
    assert any("answers re-checked exactly" in f for f in findings), findings
    verify_file(str(path))
    answer = cert["checks"][0]["transcript"][3]["answer"]
    answer["num"][0][1] = str(Fraction(answer["num"][0][1]) + 1)  # one coefficient changed
    with pytest.raises(Rejected):
        verify(cert)


def test_write_certificate_with_the_truth_carries_it(tmp_path):
    from proofs_checks.checker import verify
    model, res = _exact_run(seed=3)
    res.write_certificate(tmp_path / "run.json", truth=model)
    cert = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert cert["checks"][0]["model"]
    verify(cert)
    cert["checks"][0]["model"] = cert["checks"][0]["model"][:1]   # a different true model
    from proofs_checks.checker import Rejected
    with pytest.raises(Rejected):
        verify(cert)


def test_write_certificate_is_what_learn_certificate_writes(tmp_path, capsys):
    """The CLI writes its file through the same method: a run of the CLI and of Python at
    the same seed give the same bytes."""
    cli = tmp_path / "cli.json"
    assert main(["learn", "single-head", "--dim", "2", "--seed", "4", "--quiet",
                 "--certificate", str(cli)]) == 0
    capsys.readouterr()
    cert = json.loads(cli.read_text(encoding="utf-8"))
    assert cert["claim"] == "run" and cert["checks"][0]["learner"] == "single-head"
    from proofs_checks.checker import verify
    verify(cert)


def test_write_certificate_refuses_an_inexact_result(tmp_path):
    model = ea.random_multi_head(2, 1, seed=0)
    res = ea.learn_multi_head(ea.Oracle(model, backend="mp"), 2, heads=1, seed=0)
    path = tmp_path / "run.json"
    with pytest.raises(ValueError, match="needs an exact result") as e:
        res.write_certificate(path)
    assert "\n" not in str(e.value) and not path.exists()


def test_write_certificate_refuses_a_learner_without_a_run_record(tmp_path):
    res = ea.LearnResult("transformer", 2, "exact", [], 0, 0)
    path = tmp_path / "run.json"
    with pytest.raises(ValueError, match="no run record") as e:
        res.write_certificate(path)
    assert "\n" not in str(e.value) and not path.exists()


# ---------------------------------------------------------------------- honest cost
def test_a_loose_head_bound_is_priced_at_the_heads_recovered(capsys):
    """--heads-bound 20 for a one-head model: validation is priced after the schedule at
    H* = 1 (not at 3^20-term answers), so the run goes through without --force."""
    assert main(["learn", "multi-head", "--dim", "2", "--heads", "1", "--heads-bound", "20",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "recovered: yes" in out and "+ 42 validation queries" in out


@pytest.mark.slow
def test_validation_over_the_budget_is_refused_after_the_schedule():
    """Ten real heads behind a black box that answers expanded elements: the schedule is
    cheap, its 22 validation queries (answers of up to 2·6^10 terms, compared term by term)
    are not — refused in one line after the schedule, with the ways out."""
    from exactattn.arith.expfield import ExpElement
    model = ea.random_multi_head(2, 10, seed=0)

    def box(tokens):
        e = model(tokens, "exact")
        return ExpElement(e.num, e.den, e.L)
    oracle = ea.Oracle(box, dim=2, backend="exact")
    with pytest.raises(cost.CostExceeded, match="refused: validation.*10 recovered heads") as e:
        ea.learn_multi_head(oracle, 2, heads=10, seed=0)
    assert "--validate 0" in str(e.value) and oracle.queries == 141


def test_validation_estimate_follows_the_recovered_head_count():
    shapes = [(5, 3), (9, 6), (2, 2)]
    one, ten = (cost.estimate_validation(2, 20, h, shapes) for h in (1, 10))
    assert one.terms_per_answer == 2 * 6 and ten.terms_per_answer == 2 * 6 ** 10
    assert one.bytes < 10 ** 4 < cost.DEFAULT_BUDGET.bytes < ten.bytes
    cost.check_budget(one)
    with pytest.raises(cost.CostExceeded, match="--validate 0"):
        cost.check_budget(ten)


def test_an_over_budget_schedule_is_still_refused_before_any_query(monkeypatch):
    """Over the budget even at one-head answers (29 queries × 4 terms > 2 KB): refused up
    front, no query asked."""
    monkeypatch.setattr(cost, "DEFAULT_BUDGET", cost.Budget(bytes=2000, seconds=1e9))
    oracle = ea.Oracle(ea.random_multi_head(2, 2, seed=0))
    with pytest.raises(cost.CostExceeded, match="lazy exact answers"):
        ea.learn_multi_head(oracle, 2, heads=2)
    assert oracle.queries == 0


def test_a_lazy_schedule_estimate_prices_no_expanded_term():
    worst = cost.estimate_multi_head(2, 20)
    with pytest.raises(cost.CostExceeded):
        cost.check_budget(worst)                      # every answer expanded: over the budget
    cost.check_budget(cost.estimate_multi_head(2, 20, lazy=True))     # what a P2 run does
    with pytest.raises(cost.CostExceeded, match="term limit"):   # expanded: the term limit
        cost.check_budget(cost.estimate_multi_head(2, 40), force=True)
    cost.check_budget(cost.estimate_multi_head(2, 40, lazy=True))


def test_a_sweep_configuration_every_trial_would_refuse_is_refused_up_front():
    from exactattn.sweep import SweepSpec
    from exactattn.sweep.spec import SpecError
    from exactattn.sweep.trials import preflight
    spec = SweepSpec.from_dict({"run": [{"learner": "multi-head", "d,H": [[2, 1], [2, 17]],
                                         "schedule": "economy", "trials": 1}]})
    fn, params, seeds = spec.groups[0]
    preflight(fn, params[0], seeds[0])
    with pytest.raises(SpecError, match="H=17.*drop it from the sweep"):
        preflight(fn, params[1], seeds[0])
