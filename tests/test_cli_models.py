"""A user's own model through the CLI (docs/design.md §7): model → learn → save → compare,
and `model show|canonical|compare`."""

import json
import sys

import pytest
from conftest import run_cli

import exactattn as ea
from exactattn.cli.main import main


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def model_file(tmp_path, capsys):
    path = tmp_path / "model.json"
    assert main(["model", "random", "--dim", "3", "--heads", "2", "--seed", "5"]) == 0
    path.write_text(capsys.readouterr().out)
    return path


def test_round_trip_exact(tmp_path, capsys, model_file):
    saved = tmp_path / "recovered.json"
    code, out, _ = _run(capsys, "learn", "multi-head", "--model", model_file, "--save", saved,
                        "--json")
    o = json.loads(out)
    assert code == 0 and o["recovered"] is True and o["model_file"] == str(model_file)
    assert o["dim"] == 3 and o["heads"] == 2 and o["queries"] == o["expected_queries"] == 69
    truth, back = ea.load_model(model_file), ea.load_model(saved)
    assert ea.same_function(truth, back) and back == truth.canonical()
    code, out, _ = _run(capsys, "model", "compare", model_file, saved)
    assert code == 0 and "exact: equal" in out


def test_round_trip_with_a_head_bound_and_merging_heads(tmp_path, capsys):
    """A file with two equal-W heads: 'show' says so, 'canonical' merges them, and the learner
    told only a bound recovers the canonical form."""
    W = [["1/2", "0"], ["1/4", "-1"]]
    data = {"type": "multi-head-attention", "dim": 2, "entries": "rational",
            "heads": [{"W": W, "v": ["1", "2"]}, {"W": W, "v": ["1/2", "-1"]},
                      {"W": [["0", "1"], ["1", "0"]], "v": ["-1", "1/3"]}]}
    f = tmp_path / "m.json"
    f.write_text(json.dumps(data))
    code, out, _ = _run(capsys, "model", "show", f)
    assert code == 0 and "3 head(s), 2 canonical head(s)" in out and "1/4" in out
    code, out, _ = _run(capsys, "model", "canonical", f)
    canon = ea.model_from_json(out)
    assert code == 0 and len(canon.heads) == 2 and ea.same_function(canon, ea.load_model(f))
    saved = tmp_path / "r.json"
    code, out, _ = _run(capsys, "learn", "multi-head", "--model", f, "--heads-bound", "3",
                        "--save", saved, "--json")
    assert code == 0 and json.loads(out)["recovered"] is True
    assert _run(capsys, "model", "compare", f, saved)[0] == 0


def test_round_trip_on_mp_compares_within_a_tolerance(tmp_path, capsys, model_file):
    saved = tmp_path / "r.json"
    code, _, _ = _run(capsys, "learn", "multi-head", "--model", model_file, "--backend", "mp",
                      "--dps", "30", "--save", saved, "--quiet")
    assert code == 0 and json.loads(saved.read_text())["entries"] == "real"
    code, out, _ = _run(capsys, "model", "compare", model_file, saved, "--tolerance", "1e-20")
    assert code == 0 and "digits" in out and "within tolerance" in out
    code, out, _ = _run(capsys, "model", "compare", model_file, saved, "--tolerance", "1e-40")
    assert code == 1 and "NOT within" in out


def test_compare_detects_a_different_model(tmp_path, capsys, model_file):
    other = tmp_path / "other.json"
    other.write_text(ea.model_to_json(ea.random_multi_head(3, 2, seed=6)))
    code, out, _ = _run(capsys, "model", "compare", model_file, other, "--json")
    o = json.loads(out)
    assert code == 1 and o["exact"] is True and o["equal"] is False and o["ok"] is False
    one = tmp_path / "one.json"
    one.write_text(ea.model_to_json(ea.load_model(model_file).heads[0]))
    code, out, _ = _run(capsys, "model", "compare", model_file, one)
    assert code == 1 and "unmatched" in out


def test_learn_single_head_and_low_rank_from_files(tmp_path, capsys):
    f = tmp_path / "h.json"
    f.write_text(ea.model_to_json(ea.AttentionHead([[1, 2], [2, 4]], ["1/2", -1])))
    code, out, _ = _run(capsys, "learn", "single-head", "--model", f, "--json")
    assert code == 0 and json.loads(out)["recovered"] is True
    code, out, _ = _run(capsys, "learn", "low-rank", "--model", f, "--json")
    o = json.loads(out)
    assert code == 0 and o["recovered"] is True and o["rank"] == 1 and o["rank_revealed"] == 1


def test_learn_transformer_from_a_file(tmp_path, capsys):
    from exactattn.models.transformer import transformer_to_json
    f = tmp_path / "t.json"
    t = ea.random_transformer(2, 1, 2, seed=0)
    f.write_text(transformer_to_json(t))
    saved = tmp_path / "r.json"
    code, out, _ = _run(capsys, "learn", "transformer", "--model", f, "--hidden", "2",
                        "--save", saved, "--json")
    assert code == 0 and json.loads(out)["recovered"] is True
    assert json.loads(saved.read_text())["type"] == "one-layer-transformer"
    assert _run(capsys, "model", "compare", f, saved)[0] == 0
    code, out, _ = _run(capsys, "model", "show", f)
    assert code == 0 and "one-layer Transformer" in out


def test_a_failure_saves_nothing(tmp_path, capsys, model_file):
    saved = tmp_path / "r.json"
    code, _, err = _run(capsys, "learn", "single-head", "--model", model_file, "--save", saved)
    assert code == 1 and "not-attention" in err and not saved.exists()


@pytest.mark.parametrize("argv,match", [
    (["learn", "multi-head", "--model", "{missing}"], "not found"),
    (["learn", "multi-head", "--model", "{bad}"], "not valid JSON"),
    (["learn", "multi-head", "--model", "{model}", "--dim", "4"], "dimension 3"),
    (["learn", "transformer", "--model", "{model}"], "multi-head attention model"),
    (["learn", "multi-head", "--model", "{real}", "--backend", "exact"], "real entries"),
    (["learn", "multi-head"], "--dim"),
    (["model", "canonical", "{bad}"], "not valid JSON"),
    # exact models are compared exactly, but a bad --tolerance is still refused
    (["model", "compare", "{model}", "{model}", "--tolerance", "x"], "not a number like 1e-9"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, model_file, argv, match):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    real = tmp_path / "real.json"
    assert main(["model", "random", "--dim", "2", "--real"]) == 0
    real.write_text(capsys.readouterr().out)
    paths = {"missing": tmp_path / "none.json", "bad": bad, "model": model_file, "real": real}
    argv = [a.format(**paths) for a in argv]
    code, _, err = _run(capsys, *argv)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1


def test_round_trip_through_the_commands(tmp_path):
    """The documented commands, as a user types them (docs/models.md), in this process in a
    fresh directory (conftest ``run_cli``; the console script itself: tests/test_readme.py)."""
    def run(*args):
        return run_cli([str(a) for a in args], tmp_path)
    r = run("model", "random", "--dim", "2", "--heads", "2", "--seed", "1")
    assert r.returncode == 0
    (tmp_path / "m.json").write_text(r.stdout)
    r = run("learn", "multi-head", "--model", "m.json", "--save", "r.json")
    assert r.returncode == 0 and "recovered: yes" in r.stdout and "r.json" in r.stdout
    r = run("model", "compare", "m.json", "r.json")
    assert r.returncode == 0 and "exact: equal" in r.stdout


def test_from_torch_without_torch_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)          # import torch → ImportError
    f = tmp_path / "sd.pt"
    f.write_bytes(b"")
    code, _, err = _run(capsys, "model", "from-torch", f, "--heads", "1", "--readout", "e0")
    assert code == 2 and "pip install torch --index-url https://download.pytorch.org/whl/cpu" in err
    assert len(err.strip().splitlines()) == 1                # one line, no traceback
    from exactattn.adapters import torch as eat
    with pytest.raises(ImportError, match=r"download\.pytorch\.org/whl/cpu"):
        eat.oracle(object(), [1])
