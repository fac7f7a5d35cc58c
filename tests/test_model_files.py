"""Model files and numbers read from text (docs/honesty.md, "Hostile input"), beyond the rows
of its table that tests/test_hostile.py runs: the limits at their edges, every file the
project writes still read by the stricter readers, the Python API's own refusals, the torch
adapter's messages, a failed write naming what it was writing, and --taus at its edges.
Each test names the planted bug it catches."""

from __future__ import annotations

import argparse
import errno
import json
import os
import random
import signal
import sys
from contextlib import contextmanager
from fractions import Fraction

import mpmath
import pytest

import exactattn as ea
from exactattn.arith.numbers import (MAX_EXPONENT, MAX_INT_DIGITS, MAX_REAL_DIGITS,
                                     NumberTooLarge, decimal_mpf, decimal_parts)
from exactattn.cli.main import main
from exactattn.models.transformer import (random_transformer, transformer_from_json,
                                          transformer_to_json)


def _one_line(capsys, status, code):
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == status and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@contextmanager
def _within(seconds=5):
    """Fail, not hang, when the block waits (a FIFO opened for reading waits for a writer)."""
    def hung(signum, frame):
        raise TimeoutError
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    except TimeoutError:
        pytest.fail(f"did not finish within {seconds} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ---------------------------------------------------------------------- decimal text
def test_decimal_mpf_rounds_as_mpmath_does():
    """Planted bug: a reader of its own (to pass Python's 4300-digit limit) that rounds
    differently from mpf(text) would change every real model read back."""
    rng = random.Random(3)
    checked = 0
    for dps in (15, 50, 400):
        with mpmath.workdps(dps):
            for _ in range(800):
                whole = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25)))
                frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 25)))
                text = rng.choice(["", "-", "+"]) + whole + ("." + frac if frac else "")
                if rng.random() < 0.7:
                    text += rng.choice("eE") + str(rng.randint(-900, 900))
                assert decimal_mpf(text)._mpf_ == mpmath.mpf(text)._mpf_, text
                checked += 1
    assert checked == 2400


@pytest.mark.parametrize("text, ok", [
    (f"1e{MAX_EXPONENT}", True), (f"1e-{MAX_EXPONENT}", True), ("0.1e-9999", True),
    (f"1e{MAX_EXPONENT + 1}", False), (f"9.9e{MAX_EXPONENT}", True),
    ("99e9999", True), ("100e9999", False), ("0.01e-9999", False), ("0e5000", True),
    ("0e99999", False),
    ("1e9999999", False), ("1" * MAX_REAL_DIGITS, False),
    ("1." + "1" * (MAX_REAL_DIGITS - 1), True), ("1." + "1" * MAX_REAL_DIGITS, False)])
def test_decimal_limits_at_their_edges(text, ok):
    """Planted bugs: a limit on the written exponent alone ("100e9999" is 1e10001, "0.01e-9999"
    1e-10001), an off-by-one at ±10 000, a digit count that misses the fraction."""
    if ok:
        decimal_parts(text)
    else:
        with pytest.raises(NumberTooLarge):
            decimal_parts(text)


def test_a_long_rational_is_named_not_printed():
    """Planted bug: Python's "Exceeds the limit (4300 digits)" caught as "not a rational", with
    all 5000 digits in the message."""
    text = json.dumps({"heads": [{"W": [["1" * (MAX_INT_DIGITS + 1)]], "v": ["1"]}]})
    with pytest.raises(NumberTooLarge) as e:
        ea.model_from_json(text)
    assert "heads[0].W[0][0]" in str(e.value) and f"{MAX_INT_DIGITS + 1} digits" in str(e.value)
    assert len(str(e.value)) < 300
    ea.model_from_json(json.dumps({"heads": [{"W": [["1" * MAX_INT_DIGITS]], "v": ["1"]}]}))


def test_a_long_value_where_a_number_belongs_is_named_not_printed():
    """Planted bug: the repr of a 100 000-element list in the one line of the error."""
    for kind in ("rational", "real"):
        data = {"entries": kind, "heads": [{"W": [[list(range(100000))]], "v": ["1"]}]}
        with pytest.raises((TypeError, ValueError)) as e:
            ea.model_from_json(data)
        assert "heads[0].W[0][0]" in str(e.value) and len(str(e.value)) < 300


def test_real_models_at_high_precision_read_back():
    """Planted bug: real entries read through int() of the text: a model written at more than
    about 4290 digits (--dps 5000, allowed) could not be read back."""
    with mpmath.workdps(5000):
        m = ea.MultiHeadAttention([ea.AttentionHead([[mpmath.sqrt(2), -mpmath.mpf(1) / 3],
                                                     [mpmath.mpf(10) ** -200, mpmath.e + 0]],
                                                    [mpmath.sqrt(3), mpmath.mpf(7)])])
        text = ea.model_to_json(m)
    back = ea.model_from_json(text)
    assert json.loads(text)["dps"] == 5000
    assert [x._mpf_ for r in back.heads[0].W for x in r] == \
        [x._mpf_ for r in m.heads[0].W for x in r]


def test_real_p_over_q_is_rounded_once():
    """Planted bug: "p/q" read as mpf(p)/q rounds p first (this 60-digit p / 25 at dps 15
    then differs in its last bit)."""
    pq = "246829001202639276021848604285238647905475348943852370322213/25"
    data = {"entries": "real", "dps": 15, "heads": [{"W": [[pq]], "v": ["1"]}]}
    x = ea.model_from_json(data).heads[0].W[0][0]
    with mpmath.workdps(15):
        assert x._mpf_ == mpmath.mpf(pq)._mpf_


# ---------------------------------------------------------------------- strict model JSON
@pytest.mark.parametrize("text, says", [
    ('{"heads": [], "heads": [{"W": [["1"]], "v": ["1"]}]}', "'heads' is written twice"),
    ('{"heads": [{"W": [["1"]], "v": ["1"], "v": ["2"]}]}', "'v' is written twice"),
    ('{"heads": [{"W": [["1"]], "v": ["1"]}], "bias": "1"}', "unknown key(s) 'bias'"),
    ('{"heads": [{"W": [["1"]], "v": ["1"]}], "entries": "real", "dps": 30001}', "'dps'"),
    ('{"type": "bogus", "heads": []}', "unknown \"type\""),
    ('{"heads": [{"W": [[%s]], "v": ["1"]}]}' % ("1" * 4301), "4301 digits"),
    ('{"type": "one-layer-transformer", "heads": [], "A": [], "w": []}', "one-layer Transformer"),
])
def test_model_from_json_refuses_by_name(text, says):
    """Planted bugs: json.loads keeping the last "heads", a top-level key ignored, a file dps
    of a billion digits accepted, an unknown type read as multi-head, Python's int-limit
    message, a Transformer file read as "heads[0] must have 'W' and 'v'"."""
    with pytest.raises(ValueError) as e:
        ea.model_from_json(text)
    assert says in str(e.value)


@pytest.mark.parametrize("change, says", [
    (lambda d: d.update(bias=1), "unknown key(s) 'bias'"),
    (lambda d: d.update(hidden=d["hidden"] + 1), "'hidden' is"),
    (lambda d: d.update(dim=d["dim"] + 1), "'dim' is"),
    (lambda d: d.update(dps="x"), "'dps'"),
    (lambda d: d.pop("A"), "'A'"),
    (lambda d: d.update(A=[1]), "A must be a list of rows"),
    (lambda d: d.update(type="multi-head-attention"), "multi-head attention model"),
])
def test_transformer_from_json_refuses_by_name(change, says):
    """Planted bugs: "dim", "hidden" and unknown keys ignored, a "dps" never checked, a row
    that is not a list ending in Python's "'int' object is not iterable"."""
    data = random_transformer(2, 1, 2, seed=1).to_dict()
    change(data)
    with pytest.raises(ValueError) as e:
        transformer_from_json(json.dumps(data))
    assert says in str(e.value)


def test_every_file_the_project_writes_is_read(tmp_path, capsys):
    """Planted bug: a reader stricter than the writers (a key the writers emit, such as "dps"
    or "hidden", refused)."""
    files = {}
    for name, argv in [("rational", ["model", "random", "--dim", "2", "--heads", "2"]),
                       ("real", ["model", "random", "--dim", "2", "--heads", "2", "--real"])]:
        assert main(argv) == 0
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(capsys.readouterr().out)
    assert main(["model", "canonical", str(files["real"])]) == 0
    (tmp_path / "canonical.json").write_text(capsys.readouterr().out)
    for name, argv in [("saved_mp", ["learn", "multi-head", "--dim", "2", "--heads", "1",
                                     "--backend", "mp", "--dps", "30"]),
                       ("saved_tr", ["learn", "transformer", "--dim", "2", "--heads", "1",
                                     "--hidden", "2"])]:
        assert main(argv + ["--quiet", "--save", str(tmp_path / f"{name}.json")]) == 0
    capsys.readouterr()
    for f in sorted(tmp_path.glob("*.json")):
        assert main(["model", "show", str(f)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    T = random_transformer(2, 2, 3, seed=4, kind="real")
    assert transformer_from_json(transformer_to_json(T)) == T


def test_load_model_refuses_a_fifo(tmp_path):
    """Planted bug: ea.load_model(FIFO) waits forever in open()."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with _within(), pytest.raises(ValueError, match="not a regular file"):
        ea.load_model(str(fifo))


# ---------------------------------------------------------------------- kinds of file
def test_a_file_of_the_other_kind_says_what_it_holds(tmp_path, capsys):
    """Planted bug: "Transformer JSON: 'A' must be a list" for a multi-head model typed as a
    Transformer, "heads[0] must be an object with keys 'W' and 'v'" for a Transformer given
    to eval."""
    tr = tmp_path / "t.json"
    tr.write_text(transformer_to_json(random_transformer(2, 1, 2, seed=1)))
    q = tmp_path / "q.json"
    q.write_text('[["1", "0"]]')
    line = _one_line(capsys, 2, main(["eval", str(tr), str(q)]))
    assert "holds a one-layer Transformer" in line and "'learn transformer --model'" in line
    assert str(tr) in line
    assert main(["model", "show", str(tr)]) == 0
    capsys.readouterr()


# ---------------------------------------------------------------------- --taus
@pytest.mark.parametrize("taus, dps, ok", [
    ("1e-50", 50, True), ("9e-51", 50, False), ("1e-30,0", 50, False),
    ("2.2250738585072014e-308", 400, True), ("2.225073858507201e-308", 400, False),
    ("1/1000", 50, True), ("1e-1_0", 50, False), ("1e-99999999", 50, False)])
def test_noise_levels_at_their_edges(taus, dps, ok):
    """Planted bugs: τ = 10^-dps refused (or 9·10^-(dps+1) let through, its noise lost in the
    rounding), the smallest normal float64 refused, or a subnormal one let through."""
    from exactattn.cli.noise import noise_levels
    if ok:
        assert noise_levels(taus, dps) == [Fraction(t) for t in taus.split(",")]
    else:
        with pytest.raises(ValueError):
            noise_levels(taus, dps)


# ---------------------------------------------------------------------- failed writes
def test_a_full_standard_output_is_named(monkeypatch, capsys, tmp_path):
    """Planted bugs: "[Errno 28] No space left on device", naming nothing; and, when the
    output failed at the final flush (so it was the standard output), --save named too."""
    saved = tmp_path / "r.json"
    lines = []
    for argv in (["model", "random", "--dim", "2"],
                 ["learn", "multi-head", "--dim", "1", "--heads", "1", "--quiet", "--save",
                  str(saved)]):
        full = open("/dev/full", "w")
        monkeypatch.setattr(sys, "stdout", full)
        try:
            lines.append(_one_line(capsys, 2, main(argv)))
        finally:
            monkeypatch.undo()
            try:
                full.close()
            except OSError:
                pass
    for line in lines:
        assert line.endswith("error: cannot write the standard output (No space left on "
                             "device); free space there or choose another path"), line
    assert ea.load_model(str(saved)).dim == 1


def test_a_failed_write_without_a_file_names_the_outputs():
    """Planted bug: a write error with no file open in the traceback named as one of the
    outputs for certain; it may be either, and the line says so."""
    from exactattn.cli.main import _os_error
    e = OSError(errno.ENOSPC, "No space left on device")
    line = _os_error(e, argparse.Namespace(save="r.json", certificate=None))
    assert line.startswith("cannot write --save r.json or the standard output (No space")
    assert _os_error(OSError(errno.ENOENT, "No such file", "x.json"),
                     argparse.Namespace()) == "[Errno 2] No such file: 'x.json'"


# ---------------------------------------------------------------------- torch files
class Custom:
    """A class torch's safe unpickler does not allow."""


def test_torch_files_get_our_own_line(tmp_path, capsys):
    """Planted bugs: torch's advice to re-run with weights_only=False (which runs code from
    the file) repeated, and a FIFO given to torch.load from Python (it waits forever)."""
    torch = pytest.importorskip("torch")
    from exactattn.adapters import torch as eat
    (tmp_path / "text.pt").write_text("hello\n")
    (tmp_path / "random.pt").write_bytes(random.Random(1).randbytes(1000))
    (tmp_path / "empty.pt").write_bytes(b"")
    torch.save([Custom()], tmp_path / "custom.pt")
    torch.save(torch.nn.MultiheadAttention(4, 2).state_dict(), tmp_path / "sd.pt")
    data = (tmp_path / "sd.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[:len(data) // 2])
    for name, says in [("text.pt", "not a file written by torch.save"),
                       ("random.pt", "not a file written by torch.save"),
                       ("empty.pt", "empty, cut short or damaged"),
                       ("cut.pt", "empty, cut short or damaged"),
                       ("custom.pt", "holds objects other than tensors")]:
        line = _one_line(capsys, 2, main(["model", "from-torch", str(tmp_path / name),
                                          "--readout", "e0", "--heads", "2"]))
        assert says in line and "weights_only" not in line and len(line) < 400, line
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with _within(), pytest.raises(ValueError, match="not a regular file"):
        eat.load(str(fifo))


def test_a_torch_layer_too_wide_is_refused_before_its_weights_are_read(tmp_path, capsys):
    """Planted bug: a 128-wide layer converted to 65 536 Fractions per matrix and multiplied
    out, for a model no command takes (d ≤ 64)."""
    torch = pytest.importorskip("torch")
    torch.save(torch.nn.MultiheadAttention(128, 2).state_dict(), tmp_path / "wide.pt")
    line = _one_line(capsys, 2, main(["model", "from-torch", str(tmp_path / "wide.pt"),
                                      "--readout", "e0", "--heads", "2"]))
    assert "embed_dim 128, above the limit 64" in line
