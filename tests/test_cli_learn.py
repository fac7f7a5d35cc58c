"""`exactattn learn ...` (docs/design.md §7)."""

import json

import pytest

from exactattn.cli.main import main

KEYS = {"algorithm", "dim", "heads", "backend", "queries", "max_length", "expected_queries",
        "expected_max_length", "recovered", "max_error", "tolerance", "seconds"}


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_single_head_json_exact(capsys):
    code, out, _ = _run(capsys, "learn", "single-head", "--dim", "3", "--backend", "exact",
                        "--seed", "4", "--json")
    assert code == 0
    o = json.loads(out)
    assert KEYS <= o.keys()
    assert o["algorithm"] == "single-head" and o["recovered"] is True
    assert o["queries"] == o["expected_queries"] == 12 and o["max_length"] == 2
    assert o["max_error"] == 0 and o["certified"] is True


def test_single_head_json_mp(capsys):
    code, out, _ = _run(capsys, "learn", "single-head", "--dim", "3", "--backend", "mp",
                        "--dps", "40", "--json")
    o = json.loads(out)
    assert code == 0 and o["recovered"] is True and o["dps"] == 40
    # mp: the measured error lies within the certified error bar, which is below the asked
    # accuracy (the default 1e-6, printed as the tolerance)
    assert o["max_error"] <= o["error_bar_value"] < 1e-20 and o["error_bar"]["rigorous"]
    assert o["tolerance"] == o["accuracy"] == 1e-6


def test_low_rank_json(capsys):
    code, out, _ = _run(capsys, "learn", "low-rank", "--dim", "6", "--rank", "2",
                        "--backend", "exact", "--json")
    o = json.loads(out)
    assert code == 0 and KEYS <= o.keys() and o["recovered"] is True
    assert o["queries"] == 6 + 2 * (12 - 2) == o["expected_queries"]
    code, out, _ = _run(capsys, "learn", "low-rank", "--dim", "6", "--rank", "2",
                        "--reveal-rank", "--backend", "float", "--json")
    o = json.loads(out)
    assert code == 0 and o["recovered"] is True and o["rank_revealed"] == 2
    assert o["queries"] - (6 + 2 * 10) <= 5


def test_readable_summary(capsys):
    code, out, _ = _run(capsys, "learn", "single-head", "--dim", "2")
    assert code == 0 and "recovered: yes" in out and "queries 6" in out


def test_learning_failure_exits_1(capsys):
    code, out, err = _run(capsys, "learn", "single-head", "--dim", "3", "--heads", "2",
                          "--json")
    assert code == 1 and "not-attention" in err
    assert json.loads(out)["error"] == "not-attention"


@pytest.mark.parametrize("argv", [
    ["learn", "single-head"],                                       # --dim missing
    ["learn", "single-head", "--dim", "0"],
    ["learn", "sideways", "--dim", "3"],
    ["learn", "low-rank", "--dim", "4"],                            # --rank missing
    ["learn", "low-rank", "--dim", "4", "--rank", "5"],
    ["learn", "single-head", "--dim", "3", "--rank", "1"],
    ["learn", "single-head", "--dim", "3", "--heads-bound", "2"],
    ["learn", "multi-head", "--dim", "3", "--heads", "3", "--heads-bound", "2"],
    ["learn", "single-head", "--dim", "3", "--backend", "float", "--dps", "30"],
    ["learn", "single-head", "--dim", "3", "--backend", "symbolic"],
])
def test_bad_arguments_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as e:
        code = main(argv)
        raise SystemExit(code)
    assert e.value.code == 2


@pytest.mark.parametrize("flag", ["--save", "--certificate"])
def test_an_output_file_in_a_missing_directory_is_refused_before_the_run(flag, tmp_path,
                                                                         monkeypatch, capsys):
    """The run's result is never lost at the end: a file whose directory does not exist (or
    a directory given as a file) is a one-line error, exit 2, before any learning."""
    import exactattn.learners.multi_head as mh
    monkeypatch.setattr(mh, "learn_multi_head", lambda *a, **k: pytest.fail("the run started"))
    for target, says in ((tmp_path / "missing" / "x.json", "does not exist"),
                         (tmp_path, "is a directory")):
        with pytest.raises(SystemExit) as e:
            main(["learn", "multi-head", "--dim", "2", "--heads", "2", flag, str(target)])
        err = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 2 and len(err) == 1 and says in err[0], err
    ok = tmp_path / "ok.json"
    monkeypatch.undo()
    assert main(["learn", "multi-head", "--dim", "2", "--heads", "2", "--quiet", flag,
                 str(ok)]) == 0 and ok.exists()
