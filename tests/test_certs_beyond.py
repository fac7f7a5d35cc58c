"""Identifiability certificates of the beyond-P2 schedules (docs/design.md §10, docs/evidence.md):
the stdlib checker's run modules for the economy, adaptive and multi-head low-rank schedules
accept the learner's runs, and each rule rejects the tampered certificate or planted bug it
exists for — a changed answer, a swapped query, a changed direction or recovered head, a
forged record whose answers are consistent but whose draw is not generic for the recovered
model; the economy-count records are tied to their runs; the CLI writes such certificates;
``result.proves`` states the genericity result only where the draw is generic."""

import copy
import json
from fractions import Fraction

import pytest
import sympy
from conftest import verify_once

import exactattn as ea
from exactattn.analysis.beyond import low_rank_model
from exactattn.arith import get_backend
from exactattn.cli.main import main
from exactattn.learners.beyond import economy
from exactattn.learners.beyond.genericity import economy_violations
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.beyond.genericity import statement
from exactattn.learners.result.proves import state
from proofs_checks import verify
from proofs_checks.certificates import element_json, heads_json, vector_json
from proofs_checks.checker import economy_count as checker_count
from proofs_checks.checker import run_economy
from proofs_checks.checker.parse import Rejected
from proofs_checks.checker.run import check_run, rebuild
from proofs_checks.common import run_record


def _json(x):
    return json.loads(json.dumps(x))


def _record(model, **kw):
    res = learn_multi_head(ea.Oracle(model), model.dim, seed=2, **kw)
    rec = _json(run_record(res, model))
    check_run(rec)                                   # the untampered record is accepted
    return res, rec


@pytest.fixture(scope="module")
def economy_run():
    return _record(ea.random_multi_head(3, 2, seed=1), heads=2, schedule="economy")


@pytest.fixture(scope="module")
def low_rank_run():
    return _record(low_rank_model(4, 2, 1, seed=3), heads=2, rank=1)


def _reanswer(rec, model):
    """A forged record whose transcript is the schedule the checker rebuilds, answered exactly
    by `model`: consistent answers, so only the genericity rules can reject it."""
    _, _, _, queries = rebuild(rec)
    be = get_backend("exact")
    rec["transcript"] = [{"tokens": [vector_json(t) for t in q],
                          "answer": element_json(model(q, be))} for q in queries]
    return rec


def _heads(rec):
    """The recovered heads of a record as a model, and in the learner's internal order."""
    model = ea.MultiHeadAttention([(h["W"], h["v"]) for h in rec["recovered"]])
    model = ea.MultiHeadAttention([(h.W, h.v) for h in model.heads])
    order = rec["params"]["head_order"]
    return model, [model.heads[k] for k in order]


def _fr(v):
    return [Fraction(x) for x in v]


# ------------------------------------------------------------------ accepted runs
@pytest.mark.parametrize("d,H,kw", [
    (1, 2, {"schedule": "economy", "heads": 2}), (2, 1, {"schedule": "adaptive", "heads_bound": 2}),
    (3, 3, {"schedule": "adaptive", "heads_bound": 4}), (2, 4, {"schedule": "economy", "heads": 4}),
    (2, 3, {"schedule": "low-rank", "heads": 3})])
@pytest.mark.slow
def test_runs_of_every_path_are_accepted(d, H, kw):
    res, rec = _record(ea.random_multi_head(d, H, seed=d + H), **kw)
    finding = check_run(rec)
    assert f"{res.queries} answers re-checked exactly in Q(t)" in finding
    assert f"({res.extra['path']} path)" in finding or d == 1


@pytest.mark.slow
def test_low_rank_runs_skeleton_given_and_revealed(low_rank_run):
    assert "F_h C_h invertible for 3 skeleton columns" in check_run(low_rank_run[1])
    _, rec = _record(low_rank_model(4, 3, 2, seed=9), heads=3, schedule="low-rank")
    assert "rank revealed" in check_run(rec)


@pytest.mark.slow
def test_residue_matching_rows_are_rebuilt():
    W = [[[Fraction(1, 2), 0], [Fraction(-1, 4), Fraction(3, 4)]],
         [[0, Fraction(1, 4)], [Fraction(1, 2), Fraction(-1, 2)]],
         [[Fraction(1, 4), Fraction(-3, 4)], [0, Fraction(1, 4)]]]
    model = ea.MultiHeadAttention(list(zip(W, [[1, 2], [1, 2], [-1, Fraction(3, 2)]])))
    res, rec = _record(model, heads=3, schedule="economy")
    assert "residue-matching" in res.extra["blocks"]
    rows = res.extra["blocks"]["residue-matching"] // 5          # 2H − 1 samples each
    assert f"unique matching in {rows} residue-matching families" in check_run(rec)


# ------------------------------------------------------------------ (a) schedule, (b) answers
@pytest.mark.slow
def test_a_changed_answer_is_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    rec["transcript"][7]["answer"] = rec["transcript"][8]["answer"]
    with pytest.raises(Rejected, match="does not reproduce answer 7"):
        check_run(rec)


def test_a_swapped_query_is_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    tr = rec["transcript"]
    tr[-1], tr[-5] = tr[-5], tr[-1]
    with pytest.raises(Rejected, match="is not query"):
        check_run(rec)


def test_a_changed_direction_is_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    b = rec["vectors"]["singles"][1][0]
    b[0] = str(Fraction(b[0]) + 1)
    with pytest.raises(Rejected, match="is not query"):
        check_run(rec)


def test_a_changed_recovered_head_is_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    del rec["model"]
    W = rec["recovered"][0]["W"]
    W[1][2] = str(Fraction(W[1][2]) + 1)
    with pytest.raises(Rejected, match="is not query|does not reproduce"):
        check_run(rec)


def test_a_head_order_that_is_not_a_permutation_is_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    rec["params"]["head_order"] = [0, 0]
    with pytest.raises(Rejected, match="head_order"):
        check_run(rec)


@pytest.mark.slow
def test_an_adaptive_run_relabelled_economy_is_rejected():
    _, rec = _record(ea.random_multi_head(3, 2, seed=1), heads_bound=3, schedule="adaptive")
    rec["learner"] = "multi-head-economy"
    with pytest.raises(Rejected, match="queries but the schedule"):
        check_run(rec)


def test_the_matching_decision_is_retaken_from_the_model(monkeypatch):
    """Planted: the learner never matches by one query.  Its record is rejected, since the
    checker takes the decision itself from the recovered model."""
    monkeypatch.setattr(economy, "one_query_condition", lambda ref, fam: False)
    model = ea.random_multi_head(3, 2, seed=1)
    res = learn_multi_head(ea.Oracle(model), 3, heads=2, seed=2, schedule="economy")
    with pytest.raises(Rejected, match="queries but the schedule"):
        check_run(_json(run_record(res, model)))


# ------------------------------------------------------------------ (c) genericity, forged draws
def test_a_draw_with_an_invisible_head_is_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    model, internal = _heads(rec)
    v = internal[0].v
    rec["vectors"]["U"][1] = vector_json([v[1], -v[0], 0])          # v_1·u_2 = 0
    with pytest.raises(Rejected, match="invisible at u2"):
        check_run(_reanswer(rec, model))


def test_a_direction_seen_by_another_head_is_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    singles = rec["vectors"]["singles"]
    singles[0][0] = singles[1][0]
    with pytest.raises(Rejected, match="seen by another head"):
        check_run(_reanswer(rec, _heads(rec)[0]))


def test_a_direction_that_does_not_see_its_head_is_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    model, internal = _heads(rec)
    kernel = sympy.Matrix([_fr(h.v) for h in internal]).nullspace()[0]
    rec["vectors"]["singles"][0][1] = vector_json(list(kernel))
    with pytest.raises(Rejected, match="does not see it"):
        check_run(_reanswer(rec, model))


def test_directions_that_are_not_a_basis_are_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    S = rec["vectors"]["singles"][0]
    S[1] = vector_json([2 * x for x in _fr(S[0])])
    with pytest.raises(Rejected, match="not a basis"):
        check_run(_reanswer(rec, _heads(rec)[0]))


def test_equal_pair_residues_are_rejected(economy_run):
    rec = copy.deepcopy(economy_run[1])
    model, internal = _heads(rec)
    ba, bg = (_fr(rec["vectors"]["singles"][a][0]) for a in (0, 1))
    dot = lambda v, b: sum(Fraction(x) * y for x, y in zip(v, b))  # noqa: E731
    rec["vectors"]["coefficients"][0] = vector_json([dot(internal[1].v, bg),
                                                     dot(internal[0].v, ba)])
    with pytest.raises(Rejected, match="must be distinct"):
        check_run(_reanswer(rec, model))


def test_a_singular_skeleton_block_is_rejected(low_rank_run):
    rec = copy.deepcopy(low_rank_run[1])
    model, internal = _heads(rec)
    a, g = 0, 1
    x1 = _fr(rec["vectors"]["X"][0])
    c = [sum(Fraction(w) * x for w, x in zip(row, x1)) for row in internal[a].W]   # W_a x1
    for f in sympy.Matrix([_fr(internal[g].v), c]).nullspace():
        if sum(Fraction(p) * q for p, q in zip(internal[a].v, f)) != 0:
            break
    rec["vectors"]["singles"][a][0] = vector_json(list(f))          # F_a C_a = f·c = 0
    with pytest.raises(Rejected, match="F_h C_h of head 1 is singular"):
        check_run(_reanswer(rec, model))


def test_measured_columns_that_do_not_span_the_head_are_rejected(low_rank_run):
    """A rank-1 promise whose recovered model has a full-rank head: the one measured column
    does not span it."""
    rec = copy.deepcopy(low_rank_run[1])
    del rec["model"]
    model, _ = _heads(rec)
    full = ea.random_multi_head(4, 1, seed=5).heads[0].W
    k = rec["params"]["head_order"][0]
    heads = [(full if n == k else h.W, h.v) for n, h in enumerate(model.heads)]
    rec["recovered"] = heads_json(heads)
    with pytest.raises(Rejected, match="measured columns have rank 1"):
        check_run(_reanswer(rec, ea.MultiHeadAttention(heads)))


def test_skipping_the_direction_rules_is_caught(monkeypatch, economy_run):
    """Planted bug in the checker (the direction rules skipped): the forged record passes —
    so the test above is what stands between it and acceptance."""
    rec = copy.deepcopy(economy_run[1])
    singles = rec["vectors"]["singles"]
    singles[0][0] = singles[1][0]
    rec = _reanswer(rec, _heads(rec)[0])
    monkeypatch.setattr(run_economy, "dual_conditions", lambda run, heads, cols: [])
    assert "answers re-checked" in check_run(rec)


# ------------------------------------------------------------------ economy-count ↔ run
@pytest.fixture(scope="module")
def count_cert(quick_certificate):
    return quick_certificate("economy-count")


def test_economy_count_records_point_at_their_runs(count_cert):
    checks = count_cert["checks"]
    counts = [k for k, c in enumerate(checks) if c["kind"] == "economy-count"]
    assert counts and all(checks[checks[k]["run"]]["kind"] == "run" for k in counts)
    assert len(verify_once(count_cert)) == len(checks)
    c = copy.deepcopy(checks[counts[0]])
    c["run"] = checks[counts[1]]["run"]                 # the adaptive run of the same (d, H)
    with pytest.raises(Rejected, match="is not a economy run"):
        checker_count.check_economy_count(c, checks)


def test_economy_count_blocks_are_recounted_on_the_rebuilt_schedule(count_cert, monkeypatch):
    """Planted: the checker's rebuild matches no row by one query.  Every count record's
    blocks then differ from its run's rebuilt schedule."""
    checks = count_cert["checks"]
    k = next(k for k, c in enumerate(checks) if c["kind"] == "economy-count")
    checker_count.check_economy_count(checks[k], checks)
    monkeypatch.setattr(run_economy, "one_query_condition", lambda ref, fam: False)
    with pytest.raises(Rejected, match="not those of the schedule rebuilt"):
        checker_count.check_economy_count(checks[k], checks)


# ------------------------------------------------------------------ the CLI and result.proves
@pytest.mark.parametrize("args", [["--schedule", "economy", "--heads", "2"],
                                  ["--schedule", "adaptive", "--heads-bound", "3"],
                                  ["--heads", "2", "--rank", "1"]])
def test_learn_certificate_of_a_beyond_schedule(tmp_path, capsys, args):
    path = tmp_path / "run.json"
    assert main(["learn", "multi-head", "--dim", "3", "--backend", "exact", "--quiet",
                 "--certificate", str(path)] + args) == 0
    capsys.readouterr()
    assert verify.main(["-v", str(path)]) == 0
    assert "answers re-checked exactly" in capsys.readouterr().out
    cert = json.loads(path.read_text())
    tr = cert["checks"][0]["transcript"]
    tr[-1]["answer"] = next(e["answer"] for e in tr if e["answer"] != tr[-1]["answer"])
    path.write_text(json.dumps(cert))
    assert verify.main([str(path)]) == 1
    assert "does not reproduce answer" in capsys.readouterr().out


def test_learn_schedule_flags_bad_combinations(capsys):
    for args in (["single-head", "--schedule", "economy"],
                 ["multi-head", "--schedule", "economy", "--heads-bound", "3"],
                 ["multi-head", "--schedule", "adaptive", "--rank", "1"],
                 ["multi-head", "--reveal-rank"]):
        assert main(["learn"] + args + ["--dim", "3", "--quiet"]) == 2
        assert "Traceback" not in capsys.readouterr().err


def test_proves_states_genericity_only_where_the_draw_is_generic():
    res, _ = _record(ea.random_multi_head(3, 2, seed=1), heads=2, schedule="economy")
    assert economy_violations(res) == []
    assert "is generic for it" in res.proves and "its own bad set" in res.proves
    v = res.heads[res.extra["head_order"][0]].v
    res.extra["U"][1] = [v[1], -v[0], Fraction(0)]              # head invisible at u2
    assert "a head is invisible at u2" in economy_violations(res)
    state(res, 2, statement(res, 2))
    assert "not generic for it" in res.proves and "may give the same answers" in res.proves


def test_proves_for_low_rank_names_the_rank_promise(low_rank_run):
    res = low_rank_run[0]
    assert "rank ≤ 1 (a promise" in res.proves and "single head" not in res.proves


# ---------------------------------------------------------------------- economy-prob1
@pytest.fixture(scope="module")
def prob1_cert(quick_certificate):
    return quick_certificate("economy-prob1")


def test_economy_prob1_certificate_verifies(prob1_cert):
    (finding,) = verify_once(prob1_cert)
    c = prob1_cert["checks"][0]
    assert f"{len(c['generic'])} of {c['trials']} seeded draws carry a verified generic run" \
        in finding


def _prob1(cert):
    return copy.deepcopy(cert["checks"][0])


def _other_seed(c):
    c["generic"][0]["seed"] = c["first_seed"] + c["trials"] - 1 if c["generic"][0]["seed"] \
        != c["first_seed"] + c["trials"] - 1 else c["first_seed"]
    c["generic"] = [c["generic"][0]]          # the seed now names a draw the run was not from


def _rate_too_high(c):
    c["generic"] = c["generic"][:len(c["generic"]) // 4]


def _answer_changed(c):
    ans = c["generic"][0]["run"]["transcript"][3]["answer"]
    ans["num"][0][1] = str(Fraction(ans["num"][0][1]) + 1)


def _another_model(c):
    W = c["generic"][0]["run"]["model"][0]["W"]
    W[0][0] = str(Fraction(W[0][0]) + 1)


def _fallback_as_generic(c):
    c["generic"][0]["run"]["transcript"].pop()


@pytest.mark.parametrize("tamper, message", [
    (_other_seed, "not the draw of its seed"),
    (lambda c: c["generic"].__setitem__(1, copy.deepcopy(c["generic"][0])), "recorded twice"),
    (_rate_too_high, "a run left out"),
    (_answer_changed, "answer"),
    (_another_model, "not of the recorded model"),
    (_fallback_as_generic, "not the generic count"),
    (lambda c: c.update(alpha="1/2"), "α must be"),
    (lambda c: c.update(tests=2), "Bonferroni"),
    (lambda c: c["generic"][0].update(seed=c["first_seed"] + c["trials"]), r"seed: \d+ > \d+"),
])
def test_economy_prob1_checker_rejects_forgeries(prob1_cert, tamper, message):
    from proofs_checks.checker.economy_prob1 import check_economy_prob1
    c = _prob1(prob1_cert)
    tamper(c)
    with pytest.raises(Rejected, match=message):
        check_economy_prob1(c, [c])


def test_economy_prob1_generic_count_is_the_structure_count():
    from proofs_checks.checker.economy_prob1 import generic_count
    from exactattn.learners.beyond.economy_structure import economy_count
    assert all(generic_count(d, H) == economy_count(d, H)
               for d in range(1, 7) for H in range(1, d + 1))
