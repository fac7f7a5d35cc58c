"""Evidence-carrying certificates (docs/evidence.md; docs/design.md §8): every forgery an
outside auditor tried is rejected with a line saying why, each checker rule has a test that
plants the bug it catches, and the quick check passes with certificates that verify."""

import copy
import json
import subprocess
import sys

import pytest
from conftest import verified_once

from exactattn.cli.main import main
from proofs_checks import verify

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# ------------------------------------------------------------------ the quick certificates
@pytest.fixture(scope="module")
def quick(request):
    """`exactattn check --quick` once (the session's run, conftest ``quick_check``): its exit
    code and every certificate it wrote.  With EXACTATTN_QUICK_CERTS=DIR the certificates of
    a quick check that already passed (exit 0) are read from DIR instead (tools/mutation.py
    runs the check itself just before)."""
    import os
    from pathlib import Path
    given = os.environ.get("EXACTATTN_QUICK_CERTS")
    if given:
        out, code = Path(given), 0
    else:
        proc, cwd = request.getfixturevalue("quick_check")
        out, code = cwd / "certificates", proc.returncode
    certs = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in out.glob("*.json")}
    return code, certs, out


def test_check_quick_all_claims_ok_and_certificates_verify(quick, capsys):
    code, certs, out = quick
    assert code == 0
    assert {"P1-T4.1", "P1-T5.1", "P1-P7.1", "P2-rational", "P2-count", "P2-prob1",
            "P2-canonical", "P2-nonunique", "P2-unique"} <= set(certs)
    with verified_once():        # each file parsed strictly; each certificate checked once
        assert verify.main(["-q"] + [str(p) for p in sorted(out.glob("*.json"))]) == 0


def _verdict(tmp_path, capsys, cert=None, data=None):
    """Run the verify command's main() on a file; return (exit status, its output line)."""
    path = tmp_path / "forged.json"
    if data is None:
        data = json.dumps(cert, ensure_ascii=False).encode("utf-8")
    path.write_bytes(data)
    capsys.readouterr()
    status = verify.main([str(path)])
    return status, capsys.readouterr().out.strip()


def _rejected_for(tmp_path, capsys, reason, cert=None, data=None):
    status, line = _verdict(tmp_path, capsys, cert, data)
    assert status == 1 and line.startswith("REJECTED"), line
    assert reason in line, line
    assert len(line.splitlines()) == 1
    return line


def _of(cert, kind):
    return [c for c in cert["checks"] if c["kind"] == kind]


# ------------------------------------------------------------------ the auditor's forgeries
def test_forgery_single_head_transcript_of_copies_of_e1(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P1-T4.1"])
    run = next(r for r in _of(cert, "run") if r["dim"] == 3)
    first, last = run["transcript"][0], run["transcript"][-1]
    run["transcript"] = [first] * 11 + [last]      # 12 queries: cannot determine W at d = 3
    _rejected_for(tmp_path, capsys, "is not query 1 of the schedule", cert)


def test_forgery_p71_with_A_equal_B_equal_C(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P1-P7.1"])
    sf = _of(cert, "same-function")[0]
    sf["models"]["B"] = sf["models"]["C"] = sf["models"]["A"]
    _rejected_for(tmp_path, capsys, "models A, B, C with 1, 2, 3 heads", cert)


def test_same_function_requires_different_raw_parameters(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P2-canonical"])
    sf = _of(cert, "same-function")[0]
    sf["models"]["canonical"] = sf["models"]["raw"]
    _rejected_for(tmp_path, capsys, "raw and canonical are the same raw parameters", cert)


def test_forgery_model_and_recovered_replaced_together(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P2-count"])
    runs = [r for r in _of(cert, "run") if r["dim"] == 2]
    one, other = next((a, b) for a in runs for b in runs
                      if a["params"] == b["params"] and a["model"] != b["model"])
    one["model"], one["recovered"] = other["model"], other["recovered"]
    _rejected_for(tmp_path, capsys, "does not reproduce answer", cert)


def test_forgery_monte_carlo_failures_relabelled_recovered(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P2-prob1"])
    mc = next(c["monte_carlo"] for c in _of(cert, "bad-set") if len(c["monte_carlo"]["outcomes"]) >= 3)
    del mc["outcomes"][:3]
    mc["failures"] -= 3
    _rejected_for(tmp_path, capsys, "but the learner's rules give", cert)


def test_forgery_success_relabelled_as_failure(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P2-prob1"])
    mc = _of(cert, "bad-set")[-1]["monte_carlo"]
    seed = next(s for s in range(mc["first_seed"], mc["first_seed"] + mc["trials"])
                if s not in {o[0] for o in mc["outcomes"]} and
                s not in {x["seed"] for x in mc["sample"]})
    mc["outcomes"].append([seed, "invisible-head"])
    mc["failures"] += 1
    _rejected_for(tmp_path, capsys, "at a draw outside the bad set", cert)


def test_forgery_failure_renamed(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P2-prob1"])
    mc = next(c["monte_carlo"] for c in _of(cert, "bad-set")
              if any(o[1] != "singular-basis" for o in c["monte_carlo"]["outcomes"]))
    entry = next(o for o in mc["outcomes"] if o[1] != "singular-basis")
    entry[1] = "ambiguous-matching" if entry[1] != "ambiguous-matching" else "colliding-poles"
    _rejected_for(tmp_path, capsys, "but the learner's rules give", cert)


def test_forgery_duplicate_keys_last_one_wins(quick, tmp_path, capsys):
    text = json.dumps(quick[1]["P2-rational"], ensure_ascii=False)
    forged = text.replace('"holds": true', '"holds": false, "holds": true', 1)
    assert forged != text
    _rejected_for(tmp_path, capsys, "duplicate key 'holds'", data=forged.encode())


def test_forgery_recovered_head_duplicated(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P2-count"])
    run = next(r for r in _of(cert, "run") if r["params"]["H0"] > len(r["recovered"]))
    run["recovered"].append(run["recovered"][0])     # v of that head doubled
    _rejected_for(tmp_path, capsys, "not canonical", cert)
    cert = copy.deepcopy(quick[1]["P2-prob1"])
    run = _of(cert, "bad-set")[-1]["monte_carlo"]["sample"][0]["run"]
    run["recovered"].append(run["recovered"][0])
    _rejected_for(tmp_path, capsys, "run.recovered: 4 entries (at most 3)", cert)


@pytest.mark.parametrize("claim, path, reason", [
    ("P2-prob1", ("bad-set", "exact_probability"), "required field(s) ['exact_probability']"),
    ("P2-count", ("count", "run"), "required field(s) ['run']"),
    ("P1-P7.1", ("same-function", "parameterisations_differ"),
     "required field(s) ['parameterisations_differ']"),
])
def test_forgery_required_field_deleted(quick, tmp_path, capsys, claim, path, reason):
    cert = copy.deepcopy(quick[1][claim])
    del _of(cert, path[0])[0][path[1]]
    _rejected_for(tmp_path, capsys, reason, cert)


def test_forgery_loose_types(quick, tmp_path, capsys):
    text = json.dumps(quick[1]["P1-T4.1"], ensure_ascii=False)
    forged = text.replace('"version": 1', '"version": 1.0')
    _rejected_for(tmp_path, capsys, "float literal", data=forged.encode())
    cert = copy.deepcopy(quick[1]["P1-T4.1"])
    cert["checks"][0]["dim"] = True
    _rejected_for(tmp_path, capsys, "expected an integer, got True", cert)
    cert = copy.deepcopy(quick[1]["P1-T4.1"])
    cert["version"] = True
    _rejected_for(tmp_path, capsys, "version 1", cert)
    cert = copy.deepcopy(quick[1]["P1-T4.1"])
    cert["checks"][0]["transcript"][0]["tokens"][0][0] = 1
    _rejected_for(tmp_path, capsys, "expected a rational written as a string", cert)
    text = json.dumps(cert).replace('"tokens": [[1', '"tokens": [[1.0', 1)
    _rejected_for(tmp_path, capsys, "float literal", data=text.encode())


def test_forgery_huge_multiplicity_is_rejected_before_any_power(quick, tmp_path, capsys):
    cert = copy.deepcopy(quick[1]["P2-prob1"])
    poly = _of(cert, "bad-set")[-1]["polynomials"][0]
    poly["factorisation"][0][1] = 10 ** 9
    _rejected_for(tmp_path, capsys, "multiplicity: 1000000000 >", cert)


@pytest.mark.parametrize("data, reason", [
    (b"[" * 100_000 + b"]" * 100_000, "nesting deeper"),
    (b'{"a": ' + b"7" * 5000 + b"}", "digits"),
    (b'{"format": "exactattn-certificate\xff\xfe"}', "not UTF-8"),
    (b'{"a": "\x00"}', "NUL"),
    (b"\x89PNG\r\n\x1a\n", "not UTF-8"),
    (b'{"a": NaN}', "NaN is not allowed"),
])
def test_forgery_unreadable_input_is_one_rejected_line(tmp_path, capsys, data, reason):
    _rejected_for(tmp_path, capsys, reason, data=data)


def test_verify_command_never_prints_a_traceback(tmp_path):
    paths = []
    for k, data in enumerate([b"[" * 200_000, b'{"x": ' + b"9" * 10_000 + b"}", b"\xff" * 100]):
        p = tmp_path / f"bad{k}.json"
        p.write_bytes(data)
        paths.append(str(p))
    done = subprocess.run([sys.executable, "-m", "proofs_checks.verify"] + paths,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr + done.stdout
    assert done.stdout.count("REJECTED") == 3


# ------------------------------------------------------------------ tampering, every kind
def _digit_positions(text, start):
    return [i for i in range(start, len(text)) if text[i].isdigit()]


#: claim → digits tampered, one at a time; fewer where one verification takes longest (a
#: tampered digit late in the file costs nearly a whole verification: P2-unique ~0.6 s,
#: P2-prob1 ~0.6 s, P2-count and P2-canonical ~0.3 s), so that each kind costs at most ~3.5 s
TAMPERED = [("P1-T4.1", 20), ("P1-T5.1", 20), ("P1-P7.1", 20), ("P2-count", 8),
            ("P2-canonical", 8), ("P2-nonunique", 20), ("P2-prob1", 5), ("P2-unique", 6)]


@pytest.mark.parametrize("claim, samples", TAMPERED)
def test_every_certificate_kind_rejects_tampered_digits(quick, claim, samples):
    import random
    text = json.dumps(quick[1][claim], ensure_ascii=False)
    positions = _digit_positions(text, text.index('"checks"'))
    accepted = []
    for i in random.Random(claim).sample(positions, samples):
        forged = text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:]
        try:
            verify.verify_bytes(forged.encode("utf-8"))
            accepted.append(text[max(0, i - 50):i + 5])
        except verify.Rejected:
            pass
    assert not accepted, accepted


# ------------------------------------------------------------------ statuses
def _replay(monkeypatch, outcome):
    """`exactattn check CLAIM --quick` reads this outcome (a copy each time) instead of
    running the claim again: what is tested is what the command makes of it."""
    import proofs_checks
    monkeypatch.setattr(proofs_checks, "run_claim", lambda claim, quick=True:
                        copy.deepcopy(outcome) if claim.id == outcome.claim.id else None)


def test_missing_cvxpy_skips_only_the_optional_baseline(monkeypatch, capsys):
    """Without cvxpy (a base install) P1-T5.1's float baseline is skipped with a note that says
    how to install it; the claim's exact content still holds, so it is ``ok`` and check
    exits 0."""
    import exactattn.learners.p1.cs_baseline as cs
    from proofs_checks import get_claim, run_claim
    from proofs_checks.p1_t51 import BASELINE_SKIPPED

    def no_cvxpy():
        raise ImportError("cvxpy is not installed")
    monkeypatch.setattr(cs, "require_cvxpy", no_cvxpy)
    out = run_claim(get_claim("P1-T5.1"), quick=True)
    assert out.status == "ok" and not out.verdict.unchecked
    assert BASELINE_SKIPPED in out.verdict.notes and 'pip install ".[cvx]"' in BASELINE_SKIPPED
    assert not any("baseline" in line for line in out.verdict.details)   # nothing ran of it
    _replay(monkeypatch, out)                   # the command on this very outcome
    assert main(["check", "P1-T5.1", "--quick", "--no-out", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["check", "P1-T5.1", "--quick", "--no-out"]) == 0
    assert BASELINE_SKIPPED in capsys.readouterr().out      # said without -v too


@pytest.mark.slow
def test_a_part_not_checked_is_partial_and_check_exits_nonzero(monkeypatch, capsys):
    import proofs_checks.p1_t51 as t51
    from proofs_checks import get_claim, run_claim
    monkeypatch.setattr(t51, "_cs_baseline", lambda verdict, *args: verdict.skip("left out"))
    out = run_claim(get_claim("P1-T5.1"), quick=True)
    assert out.verdict.holds and out.status == "partial"
    _replay(monkeypatch, out)                   # the command on this very outcome
    assert main(["check", "P1-T5.1", "--quick", "--no-out", "--quiet"]) == 1
    assert main(["check", "P1-T5.1", "--quick", "--no-out", "--quiet", "--allow-partial"]) == 0
    assert "partial" in capsys.readouterr().out


def test_compressed_sensing_baseline_is_checked_where_it_means_something(quick):
    pytest.importorskip("cvxpy")
    from proofs_checks import get_claim
    params = get_claim("P1-T5.1").params(quick=False)
    assert params["cs_d"] == 16 and all(f * 16 * 16 < 256 for f in params["cs_m_over_d2"])


# ------------------------------------------------------------------ the user's own run
@pytest.mark.parametrize("variant", [["multi-head", "--heads", "2"], ["single-head"],
                                     ["low-rank", "--rank", "1", "--reveal-rank"]])
def test_learn_certificate_is_accepted_and_a_tampered_one_is_not(tmp_path, capsys, variant):
    path = tmp_path / "run.json"
    assert main(["learn"] + variant + ["--dim", "2", "--backend", "exact", "--quiet",
                                       "--certificate", str(path)]) == 0
    capsys.readouterr()
    assert verify.main(["-v", str(path)]) == 0
    assert "answers re-checked exactly" in capsys.readouterr().out
    cert = json.loads(path.read_text())
    tr = cert["checks"][0]["transcript"]
    tr[-1]["answer"] = next(e["answer"] for e in tr if e["answer"] != tr[-1]["answer"])
    _rejected_for(tmp_path, capsys, "does not reproduce answer", cert)


def test_learn_certificate_needs_the_exact_backend(capsys):
    assert main(["learn", "multi-head", "--dim", "2", "--backend", "float",
                 "--certificate", "x.json"]) == 2
    assert "exact backend" in capsys.readouterr().err
