"""Hostile input (docs/honesty.md, "Hostile input"): every row of the table there is run
here, so the document cannot drift from what the commands do — exit status, one line on
stderr containing the stated words, no traceback, within a few seconds."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
from pathlib import Path

import pytest

from exactattn.cli.main import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "honesty.md"
ROW = re.compile(r"^\| `([^`]+)` \| (\d) \| (.+?) \|$")
SECONDS = 5


def _rows():
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- hostile-table -->", 1)[1].split("<!-- /hostile-table -->", 1)[0]
    rows = [m.groups() for line in table.splitlines() if (m := ROW.match(line.strip()))]
    assert len(rows) >= 20, "the hostile-input table of docs/honesty.md was not found"
    return rows


ROWS = _rows()


def _model(entry_w, extra=""):
    return '{"heads": [{"W": [["%s"]], "v": ["1"]%s}]}' % (entry_w, extra)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    os.mkfifo(d / "fifo")
    (d / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (d / "space.json").write_text(_model(" 1 / 2"))
    (d / "arabic.json").write_text(_model("\u0661/2"), encoding="utf-8")
    (d / "negden.json").write_text(_model("1/-2"))
    (d / "underscore.json").write_text(_model("1_000"))
    (d / "extrakey.json").write_text(_model("1/2", ', "bias": "1"'))
    (d / "good.json").write_text(_model("1/2"))
    (d / "badquery.json").write_text('[["1_000"]]')
    (d / "query.json").write_text('[["1"]]')
    (d / "overflow.json").write_text('[[1e200]]')       # its score 1.5e400 overflows float64
    # two heads whose outputs of about ±2·10^100 cancel to 6 (tests/test_enclosure.py)
    (d / "cancelmodel.json").write_text(
        '{"heads": [{"W": [["-1/2", "1/4", "3/4"], ["3/4", "3/4", "-3/4"], ["-1/4", "-3/4", "0"]],'
        ' "v": ["2", "2", "3/2"]}, {"W": [["3/4", "-1/2", "-3/4"], ["0", "-3/4", "3/4"],'
        ' ["0", "0", "1/4"]], "v": ["-2", "2", "1/2"]}]}')
    (d / "cancelquery.json").write_text('[["1e100", 1, 1]]')
    (d / "cancelhuge.json").write_text('[["1e9999", 1, 1]]')   # ±2·10^9999 cancel to 6
    (d / "longquery.json").write_text("[[%s]]" % ("1" * 5001))
    (d / "hugeanswer.json").write_text(json.dumps([[f"{7 ** (1200 + k)}/{3 ** (1500 + k)}"]
                                                   for k in range(40)]))
    real = '{"entries": "real", "heads": [{"W": [["%s"]], "v": ["1"]}]%s}'
    (d / "realgood.json").write_text(real % ("1.5", ""))
    (d / "realhuge.json").write_text(real % ("1e999999999", ""))
    (d / "realbig.json").write_text(real % ("1e100000", ""))
    (d / "realdigits.json").write_text(real % ("1." + "1" * 30001, ""))
    (d / "realdps.json").write_text(real % ("1.5", ', "dps": 1000000000'))
    (d / "longint.json").write_text('{"heads": [{"W": [[1%s]], "v": ["1"]}]}' % ("0" * 100000))
    (d / "longrational.json").write_text(_model("1" * 5000))
    (d / "topkey.json").write_text(_model("1/2")[:-1] + ', "bias": 1}')
    (d / "twoheads.json").write_text('{"heads": [], "heads": [{"W": [["1/2"]], "v": ["1"]}]}')
    (d / "badtype.json").write_text('{"type": "bogus", "heads": [{"W": [["1/2"]], "v": ["1"]}]}')
    t = '{"type": "one-layer-transformer", %s"heads": [{"W": [["1/2"]], "V": [["1"]]}], ' \
        '"A": [["1"]], "w": ["1"]}'
    (d / "transformer.json").write_text(t % "")
    (d / "hidden.json").write_text(t % '"hidden": 3, ')
    (d / "transformerbias.json").write_text(t % '"bias": "0", ')
    (d / "transformerkeys.json").write_text(     # a Transformer without its "type"
        '{"heads": [{"W": [["1/2"]], "v": ["1"]}], "A": [["1"]], "w": ["1"]}')
    (d / "transformertyped.json").write_text(    # a multi-head model typed as a Transformer
        '{"type": "one-layer-transformer", "heads": [{"W": [["1/2"]], "v": ["1"]}]}')
    from exactattn.sweep import Store
    s = Store(str(d / "damaged.sqlite"))
    s.close()
    path = d / "damaged.sqlite"
    size = path.stat().st_size
    with open(path, "r+b") as f:                  # 4 KiB overwritten mid-file
        f.seek(max(100, size // 2 - 2048))
        f.write(os.urandom(4096))
    return d


class _Hung(Exception):
    pass


def _alarm(signum, frame):
    raise _Hung


@pytest.mark.parametrize("command,status,says", ROWS, ids=[r[0] for r in ROWS])
def test_hostile_input_is_one_line_and_the_right_status(command, status, says, files,
                                                        monkeypatch, capsys):
    monkeypatch.chdir(files)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS)
    try:
        try:
            code = main(shlex.split(command))
        except SystemExit as e:                   # argparse's bad arguments
            code = e.code
    except _Hung:
        pytest.fail(f"exactattn {command} did not finish within {SECONDS} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == int(status), err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert says in lines[0], lines[0]
