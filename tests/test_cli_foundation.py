"""CLI skeleton (docs/design.md §7): --version, `model random`, `eval`, exit status 2 on bad input."""

import json
import shutil
import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest

import exactattn as ea
from exactattn.cli.main import main


def _run(capsys, *argv):
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse exits for --version and usage errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def _one_line_error(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error" in lines[0]
    return lines[0]


def test_version(capsys):
    rc, out, _ = _run(capsys, "--version")
    assert rc == 0 and out.strip() == f"exactattn {ea.__version__}"


def test_model_random_json_round_trips(capsys):
    rc, out, err = _run(capsys, "model", "random", "--dim", "3", "--heads", "2", "--seed", "5")
    assert rc == 0 and err == ""
    data = json.loads(out)
    assert data["dim"] == 3 and len(data["heads"]) == 2 and data["entries"] == "rational"
    m = ea.model_from_json(out)
    assert m == ea.random_multi_head(3, 2, seed=5)
    assert json.loads(ea.model_to_json(m)) == data
    rc, out2, _ = _run(capsys, "model", "random", "--dim", "3", "--heads", "2", "--seed", "5")
    assert out2 == out                                     # seeded
    rc, out3, _ = _run(capsys, "model", "random", "--dim", "2", "--heads", "1", "--real")
    assert rc == 0 and json.loads(out3)["entries"] == "real"
    assert not ea.model_from_json(out3).is_rational


@pytest.fixture
def files(tmp_path, capsys):
    m = ea.random_multi_head(3, 2, seed=8)
    mp_ = tmp_path / "model.json"
    mp_.write_text(ea.model_to_json(m))
    q = [["1", "-2", "1/2"], [0, 1, "3"], ["2", "2", "-1"]]
    qp = tmp_path / "query.json"
    qp.write_text(json.dumps(q))
    tokens = [[Fraction(1), Fraction(-2), Fraction(1, 2)], [0, 1, 3], [2, 2, -1]]
    return m, str(mp_), str(qp), tokens, tmp_path


def test_eval_exact_and_mp_agree(capsys, files):
    m, model_path, query_path, tokens, _ = files
    rc, out, err = _run(capsys, "eval", model_path, query_path, "--json")
    assert rc == 0 and err == ""
    ex = json.loads(out)
    assert ex["backend"] == "exact" and isinstance(ex["L"], int)
    y = m(tokens, "exact")
    assert ex["value"] == str(y)
    rc, out, _ = _run(capsys, "eval", model_path, query_path, "--backend", "mp", "--dps", "40",
                      "--json")
    assert rc == 0
    mp_ = json.loads(out)
    with mpmath.workdps(45):
        ref = y.to_mpf(45)
        assert abs(mpmath.mpf(mp_["value"]) - ref) < mpmath.mpf(10) ** -35
        assert abs(mpmath.mpf(ex["approx"]) - ref) < mpmath.mpf(10) ** -20
        assert mp_["approx"] == ex["approx"]
    rc, out, _ = _run(capsys, "eval", model_path, query_path, "--backend", "float")
    assert rc == 0 and abs(float(out.splitlines()[0]) - float(ref)) < 1e-9
    rc, out, _ = _run(capsys, "eval", model_path, query_path)     # human-readable form
    assert rc == 0 and out.splitlines()[0] == str(y) and out.splitlines()[1].startswith("≈")


def test_eval_mp_reads_decimal_strings_at_full_precision(capsys, tmp_path):
    mp_ = tmp_path / "m.json"
    mp_.write_text(ea.model_to_json(ea.MultiHeadAttention([([[0]], [1])])))
    qp = tmp_path / "q.json"
    qp.write_text(json.dumps([["0.1000000000000000000000000000001"]]))
    rc, out, _ = _run(capsys, "eval", str(mp_), str(qp), "--backend", "mp", "--json")
    assert rc == 0
    # a single token: F = v·x = x, so every digit of the input must survive
    assert json.loads(out)["value"].startswith("0.1000000000000000000000000000001")


@pytest.mark.parametrize("argv_tail, match", [
    (["model", "random", "--dim", "0"], "--dim"),
    (["model", "random", "--dim", "x"], "--dim"),
    (["model", "random"], "--dim"),
    (["model", "random", "--dim", "2", "--heads", "-1"], "--heads"),
    (["frobnicate"], "invalid choice"),
    (["eval", "{missing}", "{query}"], "not found"),
    (["eval", "{model}", "{query}", "--backend", "quad"], "--backend"),
    (["eval", "{model}", "{query}", "--dps", "30"], "dps"),
    (["eval", "{model}", "{float_query}"], "token 0, entry 1"),
    (["eval", "{model}", "{short_query}"], "entries"),
    (["eval", "{model}", "{bad_json}"], "not valid JSON"),
    (["eval", "{bad_model}", "{query}"], r"heads\[0\]"),
    (["eval", "{real_model}", "{query}"], "W\\[0\\]\\[0\\]"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, files, argv_tail, match):
    m, model_path, query_path, _, tmp = files
    paths = {"missing": str(tmp / "nope.json"), "model": model_path, "query": query_path}
    for name, text in {"float_query": "[[1, 0.5, 0]]", "short_query": "[[1, 2]]",
                       "bad_json": "[[1, 2", "bad_model": '{"heads": [{"W": [["1.5"]], "v": ["1"]}]}',
                       "real_model": ea.model_to_json(ea.random_multi_head(3, 1, seed=1, kind="real"))
                       }.items():
        p = tmp / f"{name}.json"
        p.write_text(text)
        paths[name] = str(p)
    argv = [a.format(**paths) for a in argv_tail]
    rc, out, err = _run(capsys, *argv)
    assert rc == 2
    line = _one_line_error(err)
    import re
    assert re.search(match, line), line


@pytest.mark.slow
def test_console_script_subprocess(tmp_path):
    exe = shutil.which("exactattn")
    cmd = [exe] if exe else [sys.executable, "-m", "exactattn.cli"]
    r = subprocess.run(cmd + ["model", "random", "--dim", "2", "--heads", "2", "--seed", "1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ea.model_from_json(r.stdout) == ea.random_multi_head(2, 2, seed=1)
    r = subprocess.run(cmd + ["model", "random", "--dim", "-3"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
