"""Every run ends with a result or one line (docs/honesty.md, "Hostile input"): precisions
below float64's range, budgets that bound a search by its work rather than its node count,
a precision stated beyond what the backend computes, and the independent checker stopped by
Ctrl-C or a closed pipe.  The one-line refusals themselves are rows of the hostile-input
table (tests/test_hostile.py)."""

from __future__ import annotations

import io
import json
import math
import random
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import exactattn as ea
from exactattn.arith.numbers import exact_fraction
from exactattn.learners.p2 import fibre
from exactattn.learners.p2.unique import with_fibre
from exactattn.learners.result.compare import _short
from exactattn.learners.result.precision import (OraclePrecision, approximate_tolerances,
                                                 decimal_digits, shown_eta)
from conftest import run_cli


# ------------------------------------------------------------- η beyond float64's range
@given(st.integers(1, 10 ** 6), st.integers(0, 700))
def test_decimal_digits_is_the_least_k_with_ten_to_minus_k_below_eta(m, k):
    eta = Fraction(m, 10 ** k)
    got = decimal_digits(eta)
    assert got >= 0
    assert eta >= 1 or Fraction(1, 10 ** got) <= eta
    assert got == 0 or Fraction(1, 10 ** (got - 1)) > eta
    if eta < 1 and float(eta) > 1e-300:           # where float64 can say it, it agrees
        assert got == max(0, math.ceil(-math.log10(eta)))


def test_an_eta_below_float64_is_shown_and_used_not_zeroed():
    eta = Fraction(1, 10 ** 400)
    p = OraclePrecision(eta)
    assert shown_eta(eta) == "1e-400" and "1e-400" in str(p)
    assert p.digits == 400 and p.describe()["eta"] == "1e-400"
    tol = approximate_tolerances(p)
    assert all(0 < t < 1 for t in tol.values()) and tol["zero"] < tol["interpolation"]
    assert shown_eta(Fraction(1, 10 ** 47)) == "1e-47"        # in range: as before


@pytest.mark.parametrize("variant", ["multi-head", "single-head"])
def test_an_mp_run_at_400_digits_certifies(variant):
    d = 2
    model = ea.random_multi_head(d, 1, seed=3, kind="real")
    oracle = ea.Oracle(model, backend="mp", dps=400)
    if variant == "multi-head":
        res = ea.learn_multi_head(oracle, d, heads=1, seed=0)
    else:
        res = ea.learn_single_head(oracle, d, seed=0)
    bar = res.error_bar
    assert bar.rigorous and 0 < bar.constant
    assert exact_fraction(bar.bound) < Fraction(1, 10 ** 380)
    assert bar.precision.digits == 397


# ------------------------------------------------------------- the fibre search's work
def test_the_fibre_search_stops_at_its_row_operation_budget(monkeypatch):
    model = ea.random_multi_head(2, 1, seed=0)
    monkeypatch.setattr(fibre, "MAX_ROW_OPS", 2000)
    orc = ea.Oracle(model, backend="exact")
    res = ea.learn_multi_head(orc, 2, heads_bound=2, seed=0)
    with pytest.raises(fibre.FibreTooLarge, match="2,000 row operations"):
        with_fibre(res, orc, random.Random(0))


def test_the_row_operations_count_the_eliminations():
    before = fibre.ROW_OPS[0]
    e, _ = fibre.Echelon().add({0: 1, 1: 2}, Fraction(3), 0)
    assert fibre.ROW_OPS[0] == before                      # nothing to reduce by
    e.add({0: 2, 1: 1}, Fraction(1), 1)
    assert fibre.ROW_OPS[0] == before + 3                  # one row: 2 entries, 1 combination


# ------------------------------------------------------------- named, not a traceback
@pytest.mark.slow
def test_a_noise_sweep_whose_constant_cannot_be_computed_is_a_named_failure():
    proc = run_cli(["noise", "multi-head", "--dim", "2", "--heads", "7", "--quiet"])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("exactattn noise: conditions-not-met: the noise-free run")


# ------------------------------------------------------------- check --list
def test_check_list_takes_claim_names_and_json(tmp_path):
    proc = run_cli(["check", "--list", "--json", "P2-count"], cwd=tmp_path)
    assert proc.returncode == 0
    assert [c["claim"] for c in json.loads(proc.stdout)] == ["P2-count"]
    every = run_cli(["check", "--list"], cwd=tmp_path).stdout.splitlines()
    assert len(every) > 10 and any(line.startswith("P2-count ") for line in every)


# ------------------------------------------------------------- a long exact error
def test_a_long_exact_max_error_is_rounded_up_for_display():
    q = Fraction(10 ** 3000 + 7, 3 * 10 ** 3005)
    text = _short(q)
    assert len(text) < 100 and "rounded up" in text
    assert Fraction(text.split()[0]) >= q
    assert _short(Fraction(1, 3)) == "1/3"


# ------------------------------------------------------------- the checker, interrupted
def _verify_main(monkeypatch, capsys, raised=None, stdout=None):
    import sys
    import proofs_checks.verify  # noqa: F401  (loads the module below)
    checker = sys.modules["proofs_checks.checker.verify"]

    def verify_file(path):
        if raised is not None:
            raise raised
        return ["a finding"]
    monkeypatch.setattr(checker, "verify_file", verify_file)
    if stdout is not None:
        monkeypatch.setattr("sys.stdout", stdout)
    return checker.main(["some.json"])


def test_the_checker_stopped_by_ctrl_c_exits_130(monkeypatch, capsys):
    assert _verify_main(monkeypatch, capsys, KeyboardInterrupt()) == 130
    assert "Traceback" not in capsys.readouterr().err


class _ClosedPipe(io.StringIO):
    def __init__(self):
        super().__init__()
        import os
        self.r, self.w = os.pipe()

    def fileno(self):
        return self.w

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_the_checker_with_its_output_closed_exits_141_not_0(monkeypatch, capsys):
    import os
    out = _ClosedPipe()
    try:
        assert _verify_main(monkeypatch, capsys, stdout=out) == 141
    finally:
        os.close(out.r)
        os.close(out.w)



# ------------------------------------------------------------- fibre certificates the checker reads
@pytest.mark.slow
def test_a_fibre_certificate_at_d_8_is_read_by_the_checker(tmp_path):
    # 127 schedule families nest 254 levels: the checker's depth bound must admit them
    from proofs_checks.common import run_certificate
    from proofs_checks.verify import verify_bytes
    model = ea.random_multi_head(8, 4, seed=0)
    orc = ea.Oracle(model)
    res = with_fibre(ea.learn_multi_head(orc, 8, heads=4, seed=0, validate=0), orc,
                     random.Random(0))
    (line,) = verify_bytes(json.dumps(run_certificate(res)).encode())
    assert line.startswith("fibre d=8 H0=4:") and "final fibre 1 point" in line
