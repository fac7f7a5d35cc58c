"""The causal learner (docs/decoders.md): exact recovery with its counts, shared and distinct
ALiBi slopes, the residual read-out, named failures, the CLI and its errors."""

import json
from fractions import Fraction as F

import pytest

from exactattn.cli.main import main
from exactattn.errors import LearningFailure
from exactattn.learners.decoder import causal_count, learn_causal
from exactattn.learners.decoder.family import DependentSlopes
from exactattn.learners.p2.schedule import published_count
from exactattn.models.decoder import CausalAttention, random_causal
from exactattn.oracles.causal import CausalOracle
from exactattn.oracles.oracle import Oracle


def _learn(d, H, seed=2, **kw):
    model = random_causal(d, H, seed=seed, slopes=kw.get("slopes"),
                          residual=kw.get("residual", False))
    return learn_causal(Oracle(model), d, heads=H, seed=seed, **kw), model


@pytest.mark.parametrize("d, H", [(1, 1), (2, 2), (4, 3), (8, 4)])
def test_causal_recovery_exact_with_its_count(d, H):
    res, model = _learn(d, H)
    assert res.model.head_set() == model.canonical().head_set()
    assert res.certificate["certified"]
    q, n, outs = causal_count(d, H)
    assert (res.queries, res.max_length, res.extra["outputs_read"]) == (q, n, outs)
    assert (q, n) == (2 * d * d - 1, 2 * H + 1)
    assert q < published_count(d, H) or d == H == 1
    assert res.validation_queries == 2 and len(res.validation) == 2


def test_residual_recovered_with_w():
    res, model = _learn(3, 2, residual=True)
    assert res.model.residual == model.residual and res.model.residual is not None
    assert res.model.head_set() == model.canonical().head_set()
    assert res.max_length == 2 * 2 + 2 and res.queries == 17


@pytest.mark.parametrize("slopes", [F(1, 2), [F(1, 3), F(1, 3)]])
def test_shared_slope(slopes):
    res, model = _learn(3, 2, slopes=slopes)
    assert res.model.head_set() == model.canonical().head_set()
    assert res.queries == 17 and res.extra["mode"] == "copy-count"


def test_distinct_slopes_need_only_the_basis_queries():
    res, model = _learn(3, 3, slopes=[F(1, 2), F(1, 4), F(1, 8)], residual=True)
    assert res.model.head_set() == model.canonical().head_set()
    assert res.queries == 9 and res.max_length == 2 ** 4 - 1 + 1


def test_dependent_slopes_are_a_named_failure():
    with pytest.raises(DependentSlopes) as e:
        _learn(2, 3, slopes=[F(1, 4), F(1, 2), F(3, 4)])
    assert e.value.reason == "dependent-slopes"


def test_residual_model_learned_without_residual_is_a_named_failure():
    model = random_causal(2, 1, seed=1, residual=True)
    with pytest.raises(LearningFailure) as e:
        learn_causal(Oracle(model), 2, heads=1, seed=1)
    assert e.value.reason in ("not-attention", "certification-failed")


def test_more_heads_than_told_is_a_named_failure():
    model = random_causal(2, 3, seed=1)
    with pytest.raises(LearningFailure):
        learn_causal(Oracle(model), 2, heads=1, seed=1)


def test_wrong_slope_is_a_named_failure():
    model = random_causal(2, 2, seed=1, slopes=F(1, 2))
    with pytest.raises(LearningFailure):
        learn_causal(Oracle(model), 2, heads=2, slopes=F(1, 3), seed=1)


def test_a_non_causal_oracle_is_a_named_failure():
    """Full (bidirectional) attention read at every position is not a causal model."""
    from exactattn.models.attention import MultiHeadAttention
    mh = MultiHeadAttention(random_causal(2, 1, seed=3).heads)

    def bidirectional(tokens):
        return [mh([*tokens[:p], *tokens[p + 1:], tokens[p]]) for p in range(len(tokens))]
    with pytest.raises(LearningFailure):
        learn_causal(CausalOracle(bidirectional, dim=2, backend="exact"), 2, heads=1, seed=1)


def test_foreign_callable_answers_through_the_causal_oracle():
    model = random_causal(2, 2, seed=6)
    res = learn_causal(CausalOracle(lambda q: model(q), dim=2, backend="exact"), 2, heads=2,
                       seed=3)
    assert res.model.head_set() == model.canonical().head_set()


def test_irrational_slope_on_exact_backend_is_one_line_error():
    import mpmath
    with pytest.raises(ValueError) as e:
        learn_causal(Oracle(random_causal(2, 1, seed=1)), 2, heads=1, slopes=mpmath.sqrt(2))
    assert "not rational" in str(e.value) and "\n" not in str(e.value)


def _cli(capsys, *argv):
    code = main(["learn", "causal", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_counts_against_p2(capsys):
    code, out, _ = _cli(capsys, "--dim", "4", "--heads", "3", "--json")
    o = json.loads(out)
    assert code == 0 and o["recovered"] and o["certified"]
    assert (o["queries"], o["p2_queries"], o["max_length"]) == (31, 187, 7)


def test_cli_model_file_and_certificate(capsys, tmp_path):
    from exactattn.models.decoder import causal_to_json
    from proofs_checks.checker import verify_file
    m = random_causal(2, 2, seed=4, slopes=F(1, 2), residual=True)
    path = tmp_path / "m.json"
    path.write_text(causal_to_json(m))
    cert = tmp_path / "c.json"
    code, out, _ = _cli(capsys, "--model", str(path), "--certificate", str(cert))
    assert code == 0 and "recovered: yes" in out
    assert "run causal d=2" in verify_file(cert)[0]


@pytest.mark.parametrize("argv, words", [
    (["--dim", "2", "--heads", "2", "--alibi", "sqrt(2)"], "not a rational"),
    (["--dim", "2", "--heads", "2", "--alibi", "1/2,1/4,1/8"], "3 slopes for 2 heads"),
    (["--dim", "2", "--backend", "mp"], "exact backend"),
    (["--dim", "2", "--rank", "1"], "--rank does not apply"),
])
def test_cli_bad_arguments_exit_2(capsys, argv, words):
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and words in err and err.count("\n") == 1


def test_cli_mixed_kind_file_exits_2(capsys, tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"type": "multi-head-attention", "residual": ["1"],
                                "heads": [{"W": [["1"]], "v": ["1"]}]}))
    code, _, err = _cli(capsys, "--model", str(path))
    assert code == 2 and "mixing kinds" in err


def test_alibi_flag_on_another_variant_exits_2(capsys):
    code = main(["learn", "multi-head", "--dim", "2", "--alibi", "1/2"])
    assert code == 2 and "causal' only" in capsys.readouterr().err


def test_a_model_that_does_not_reproduce_the_transcript_fails_certification(monkeypatch):
    """The exact certification is what vouches for the model: a wrong recovery is caught."""
    import exactattn.learners.decoder.learner as L
    real = L.recover

    def off_by_one(*a, **k):
        m = real(*a, **k)
        h = m.heads[0]
        return CausalAttention([L.AttentionHead(h.W, [x + 1 for x in h.v]), *m.heads[1:]],
                               dim=m.dim)
    monkeypatch.setattr(L, "recover", off_by_one)
    with pytest.raises(LearningFailure) as e:
        _learn(2, 2)
    assert e.value.reason == "certification-failed"


def test_an_oracle_that_differs_off_the_schedule_fails_validation():
    from exactattn.errors import OutOfClass
    model = random_causal(2, 1, seed=1)

    def liar(tokens):
        out = list(model(tokens))
        if len({tuple(t) for t in tokens}) > 2:       # never on the schedule's shape
            out[-1] = out[-1] + 1
        return out
    with pytest.raises(OutOfClass):
        learn_causal(CausalOracle(liar, dim=2, backend="exact"), 2, heads=1, seed=1)


def test_wrong_distinct_slopes_are_not_attention_by_the_product_check():
    """The told slopes differ from the oracle's: the family's denominator is no product of one
    factor per slope (the square exponential-sum system itself always solves)."""
    from exactattn.errors import NotAttention
    model = random_causal(2, 2, seed=1, slopes=[F(1, 2), F(1, 4)])
    with pytest.raises(NotAttention, match="not a product"):
        learn_causal(Oracle(model), 2, heads=2, slopes=[F(1, 2), F(1, 8)], seed=1)


def test_counts_causal_table_against_p2(capsys):
    code = main(["counts", "--causal", "--dims", "2-3", "--heads", "2-2", "--json", "--quiet"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0
    for r in rows:
        d, H = r["dim"], r["heads"]
        assert r["p2_queries"] == 4 * H * d * d - 2 * H + 1 and r["causal_queries"] == 2 * d * d - 1
        assert r["p2_recovered"] and r["causal_recovered"]


@pytest.mark.parametrize("d, H, kw", [(2, 2, {}), (4, 3, {}), (3, 2, {"slopes": F(1, 2),
                                                                     "residual": True})])
def test_residue_matching_needs_d2_plus_d_minus_1(d, H, kw):
    res, model = _learn(d, H, matching="residue", **kw)
    assert res.model.head_set() == model.canonical().head_set()
    assert res.queries == d * d + d - 1 == causal_count(d, H, "residue")[0]


def test_shared_residues_are_a_named_failure():
    """Two heads with the same v: their residues agree at every u, so residue matching
    cannot pair them (P2's row-matching families can)."""
    from exactattn.models.attention import AttentionHead
    heads = [AttentionHead([[1, 0], [0, 1]], [1, 2]), AttentionHead([[0, 1], [-1, 0]], [1, 2])]
    model = CausalAttention(heads)
    with pytest.raises(LearningFailure) as e:
        learn_causal(Oracle(model), 2, heads=2, seed=1, matching="residue")
    assert e.value.reason in ("ambiguous-matching", "colliding-poles")
    res = learn_causal(Oracle(model), 2, heads=2, seed=1)
    assert res.model.head_set() == model.canonical().head_set()


def test_cli_heads_bound_tells_the_learner_only_h0(capsys):
    code, out, _ = _cli(capsys, "--dim", "3", "--heads", "2", "--heads-bound", "3", "--json")
    o = json.loads(out)
    assert code == 0 and o["recovered"] and o["max_length"] == 7 and o["p2_queries"] == 103


def test_cli_design_certificate(capsys, tmp_path):
    from proofs_checks.checker import verify_file
    path = tmp_path / "design.json"
    code, out, _ = _cli(capsys, "--dim", "2", "--heads", "2", "--design-certificate", str(path),
                        "--json")
    o = json.loads(out)
    assert code == 0 and o["design_holds"] and o["design_queries"] == 2 + 3 * 3 + 2
    assert "causal design d=2 H=2 H0=2" in verify_file(path)[0]


@pytest.mark.parametrize("argv", [["certify", "--model", "{f}", "--against", "{f}"],
                                  ["model", "show", "{f}"], ["learn", "multi-head", "--model", "{f}"]])
def test_other_commands_refuse_a_causal_file_in_one_line(capsys, tmp_path, argv):
    from exactattn.models.decoder import causal_to_json
    path = tmp_path / "causal.json"
    path.write_text(causal_to_json(random_causal(2, 2, seed=1)))
    code = main([a.format(f=path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and "causal" in err and err.count("\n") == 1


@pytest.mark.parametrize("kw, words", [({"box": 0}, "box"), ({"validate": -1}, "validate"),
                                       ({"matching": "x"}, "matching"),
                                       ({"slopes": [F(1, 2), F(1, 2), F(1, 3)]}, "repeats")])
def test_bad_arguments_are_one_line_value_errors(kw, words):
    with pytest.raises(ValueError) as e:
        learn_causal(Oracle(random_causal(2, 3, seed=1)), 2, heads=3, **kw)
    assert words in str(e.value) and "\n" not in str(e.value)
