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


def test_a_real_model_file_picks_mp_as_the_python_api_does(tmp_path, capsys):
    """`learn --model` of a file with real entries runs on mp without --backend (Oracle(model)
    decides the same way), says so in a note, and --backend exact is still refused (exit 2)."""
    f = tmp_path / "real.json"
    assert main(["model", "random", "--dim", "2", "--heads", "2", "--real"]) == 0
    f.write_text(capsys.readouterr().out)
    code, out, _ = _run(capsys, "learn", "multi-head", "--model", str(f), "--json", "--quiet")
    o = json.loads(out)
    assert code == 0 and o["backend"] == "mp" and o["recovered"] is True
    assert any("backend mp chosen" in n for n in o["notes"])
    code, _, err = _run(capsys, "learn", "multi-head", "--model", str(f), "--backend", "exact")
    assert code == 2 and "real entries" in err
    rational = tmp_path / "q.json"
    assert main(["model", "random", "--dim", "2", "--heads", "2"]) == 0
    rational.write_text(capsys.readouterr().out)
    code, out, _ = _run(capsys, "learn", "multi-head", "--model", str(rational), "--json",
                        "--quiet")
    o = json.loads(out)
    assert code == 0 and o["backend"] == "exact" and not any("chosen" in n for n in o["notes"])


@pytest.mark.parametrize("backend", ["exact", "mp"])
def test_proves_line_is_short_and_the_full_text_is_under_verbose(capsys, backend):
    """The default `proves:` line is the statement's headline (one short line); -v prints the
    full statement, which --json carries beside the headline."""
    argv = ["learn", "multi-head", "--dim", "3", "--heads", "2", "--backend", backend,
            "--quiet"]
    code, out, _ = _run(capsys, *argv)
    line = next(x for x in out.splitlines() if x.startswith("proves: "))
    code_v, out_v, _ = _run(capsys, *argv, "-v")
    full = next(x for x in out_v.splitlines() if x.startswith("proves: "))
    code_j, out_j, _ = _run(capsys, *argv, "--json")
    o = json.loads(out_j)
    assert code == code_v == code_j == 0
    assert len(line) <= 200 < len(full)
    assert full == f"proves: {o['proves']}"
    assert line == f"proves: {o['proves_headline']} (-v: the full statement)"
    assert "6 validation queries agree" in line


def test_one_validation_query_is_singular(capsys):
    code, out, _ = _run(capsys, "learn", "multi-head", "--dim", "2", "--validate", "1",
                        "--quiet", "-v")
    assert code == 0 and "+ 1 validation query (counted apart)" in out
    assert "; 1 validation query (random shapes" in out and "1 validation queries" not in out
