"""Forgeries the independent checker once accepted (audit of the certificate checker), each
planted in a genuine certificate and rejected with its own one-line reason; and the checker's
cost bounds, which refuse certificate-supplied sizes before any super-linear work."""

import copy
import json
import random
from fractions import Fraction

import pytest

from conftest import verify_once
from proofs_checks.checker import Rejected, verify
from proofs_checks.checker.qt import MAX_TERM_WORK, same_element


def rejected(cert, match):
    with pytest.raises(Rejected, match=match):
        verify(cert)


def _of(cert, kind):
    return [c for c in cert["checks"] if c["kind"] == kind]


# ---------------------------------------------------------------------- (a1) a negative bound
def test_negative_eps_v_is_rejected(quick_certificate):
    cert = quick_certificate("P1-T6.1")
    verify_once(copy.deepcopy(cert))
    for c in cert["checks"]:
        for r in c["rows"]:
            r["bound_v"] = "-" + r["bound_v"]
    rejected(cert, r"a stated bound ε_W or ε_v is negative")


# ---------------------------------------------------------------------- (a2) P2-canonical
def test_canonical_runs_on_a_canonical_model_are_rejected(quick_certificate):
    cert = quick_certificate("P2-canonical")
    verify_once(copy.deepcopy(cert))
    for c in _of(cert, "run"):
        c["model"] = copy.deepcopy(c["recovered"])
    rejected(cert, r"a run's true model is not the raw \(non-canonical\) model")


def test_canonical_raw_model_must_merge_and_drop(quick_certificate):
    cert = quick_certificate("P2-canonical")
    raw = _of(cert, "same-function")[0]["models"]["raw"]
    merged_only = [h for h in raw if h != raw[-1] and h != raw[-2]]     # no zero-sum group left
    _of(cert, "same-function")[0]["models"]["raw"] = merged_only
    rejected(cert, r"the raw model is not non-canonical")


# ---------------------------------------------------------------------- (a3), (a7) P2-count
def _runs(cert):
    return [(i, c) for i, c in enumerate(cert["checks"]) if c["kind"] == "run"]


def test_count_run_replaced_by_one_with_fewer_heads_is_rejected(quick_certificate):
    cert = quick_certificate("P2-count")
    verify_once(copy.deepcopy(cert))
    info = [(i, c["dim"], c["params"]["H0"], len(c["model"])) for i, c in _runs(cert)]
    src = next(i for i, d, h0, H in info if (d, h0, H) == (1, 2, 1))
    dst = next(i for i, d, h0, H in info if (d, h0, H) == (1, 2, 2))
    cert["checks"][dst] = copy.deepcopy(cert["checks"][src])
    rejected(cert, r"each with a true model of exactly H canonical heads")


def test_counts_pointing_at_other_runs_of_the_same_size_are_rejected(quick_certificate):
    cert = quick_certificate("P2-count")
    counts = [c for c in _of(cert, "count") if c["params"] == {"d": 1, "H0": 2}]
    counts[0]["run"], counts[1]["run"] = counts[1]["run"], counts[0]["run"]
    rejected(cert, r"count k does not refer to run k of the grid")


def test_count_without_its_symbolic_record_is_rejected(quick_certificate):
    cert = quick_certificate("P2-count")
    cert["symbolic"] = []
    rejected(cert, r"P2-count records exactly one symbolic result, not 0")


# ---------------------------------------------------------------------- (a4) low rank
@pytest.fixture(scope="module")
def low_rank_runs():
    """Multi-head low-rank run certificates at d = 2, rank 1 given: a rank-1 model on the dual
    path (seed 0), and full-rank heads told rank 1 (more heads than d: every column measured)."""
    from exactattn import Oracle, learn_multi_head
    from exactattn.analysis.beyond import low_rank_model
    from exactattn.models.attention import random_multi_head
    from proofs_checks.common import run_certificate
    out = []
    for model, H in ((low_rank_model(2, 2, 1, seed=0), 2),
                     (random_multi_head(2, 3, seed=1, kind="rational"), 3)):
        res = learn_multi_head(Oracle(model), 2, heads=H, rank=1, seed=1 if H == 2 else 0,
                               schedule="low-rank", validate=0)
        out.append(json.loads(json.dumps(run_certificate(res, model))))
    return out


@pytest.mark.slow
def test_low_rank_run_accepted_and_unused_pair_coefficients_named(low_rank_runs):
    finding = verify(copy.deepcopy(low_rank_runs[0]))[0]
    assert "dual path; no pair family asked: α, β recorded, unused" in finding
    assert "when a pair family is asked, α, β" in finding


@pytest.mark.slow
def test_low_rank_rank_zero_is_rejected(low_rank_runs):
    cert = copy.deepcopy(low_rank_runs[0])
    cert["checks"][0]["params"]["rank"] = 0
    rejected(cert, r"run.params.rank: 0 < 1")


@pytest.mark.slow
def test_low_rank_heads_above_the_given_rank_are_rejected(low_rank_runs):
    cert = copy.deepcopy(low_rank_runs[1])
    rejected(cert, r"head \d of the true model has rank 2 > the given rank 1")
    del cert["checks"][0]["model"]
    rejected(cert, r"head \d of the recovered model has rank 2 > the given rank 1")


# ---------------------------------------------------------------------- (a5) vector lengths
def test_copy_count_vectors_of_the_wrong_length_are_rejected(quick_certificate):
    cert = quick_certificate("P2-rational")
    verify_once(copy.deepcopy(cert))
    c = _of(cert, "copy-count")[0]
    c["u"], c["x"] = c["u"] + ["12345"], c["x"] + ["-7"]
    rejected(cert, r"copy-count.u: expected 2 entries, got 3")


# ---------------------------------------------------------------------- (a6) unknown fields
def test_unknown_fields_on_a_floor_record_are_rejected(quick_certificate):
    cert = quick_certificate("floor")
    verify_once(copy.deepcopy(cert))
    cert["checks"][0]["verified_by"] = "nobody"
    cert["checks"][0]["holds"] = False
    rejected(cert, r"floor: unexpected field\(s\) \['holds', 'verified_by'\]")


def test_unknown_field_on_a_polynomial_is_rejected(quick_certificate):
    cert = quick_certificate("P2-rational")
    _of(cert, "rational-form")[0]["numerator"]["note"] = "not checked"
    rejected(cert, r"rational-form.numerator: unexpected field\(s\) \['note'\]")


def test_unknown_fields_on_an_economy_count_are_rejected(quick_certificate):
    cert = quick_certificate("economy-count")
    verify_once(copy.deepcopy(cert))
    _of(cert, "economy-count")[0]["note"] = "x"
    rejected(cert, r"economy-count: unexpected field\(s\) \['note'\]")
    cert = quick_certificate("economy-count")
    _of(cert, "economy-count")[0]["blocks"][0]["note"] = "x"
    rejected(cert, r"economy-count.blocks\[q0\]: unexpected field\(s\) \['note'\]")


# ---------------------------------------------------------------------- (b) cost bounds
def _long_query(n, seed=1):
    rnd = random.Random(seed)
    return [[str(rnd.randint(-10**6, 10**6)), str(rnd.randint(-10**6, 10**6))] for _ in range(n)]


def test_a_long_same_function_query_is_refused_before_evaluation(quick_certificate):
    cert = quick_certificate("P1-P7.1")
    verify_once(copy.deepcopy(cert))
    sf = _of(cert, "same-function")[0]
    sf["models"] = {k: sf["models"][k] for k in ["C", *[k for k in sf["models"] if k != "C"]]}
    sf["test_queries"].insert(0, _long_query(120))          # 3 heads: ~1.8·10⁶ products
    sf["test_values"].insert(0, {"L": 1, "num": [[0, "1"]], "den": [[0, "1"]]})
    rejected(cert, r"attention: exact evaluation would cost over \d+ term products")


def test_huge_denominators_are_refused_before_a_common_denominator(quick_certificate):
    cert = quick_certificate("P1-P7.1")
    sf = _of(cert, "same-function")[0]
    q = [[f"1/{(1 << 3000) + 2 * k + 1}", "1"] for k in range(30)]
    sf["test_queries"].insert(0, q)
    sf["test_values"].insert(0, {"L": 1, "num": [[0, "1"]], "den": [[0, "1"]]})
    rejected(cert, r"attention: the denominators total \d+ bits")


def test_a_long_distinguishing_query_is_refused(quick_certificate):
    cert = quick_certificate("P2-nonunique")
    verify_once(copy.deepcopy(cert))
    _of(cert, "non-unique")[0]["distinguishing_query"] = _long_query(2000)
    rejected(cert, r"attention: exact evaluation would cost over \d+ term products")


def _lemma_records(cert):
    k = len(cert["params"]["d,H,H0"])
    return cert["checks"][k], cert["checks"][k + 1]


def test_unique_lemma_answers_too_long_to_cross_multiply_are_refused(quick_certificate):
    cert = quick_certificate("P2-unique")
    verify_once(copy.deepcopy(cert))
    n = 1100                                   # 2·n² > MAX_TERM_WORK, not proportional
    assert 2 * n * n > MAX_TERM_WORK
    for r, c in zip(_lemma_records(cert), ("1", "2")):
        r["transcript"][0]["answer"] = {"L": 1, "num": [[e, c] for e in range(n)],
                                        "den": [[e, "1"] for e in range(n)]}
    rejected(cert, r"P2-unique: comparing elements of Q\(t\) .* would cost \d+ term "
                   r"products \(at most \d+\), refused")


def test_unique_lemma_answers_written_alike_are_compared_in_linear_time(quick_certificate):
    cert = quick_certificate("P2-unique")
    n = 30000
    big = {"L": 1, "num": [[e, "1"] for e in range(n)], "den": [[e, "1"] for e in range(n)]}
    for r in _lemma_records(cert):
        r["transcript"][0]["answer"] = big
    rejected(cert, r"check \d+ \(fibre\): fibre.transcript\[0\]: F\(\[x1\]\) is not a rational")


def test_same_element_is_exact():
    one = ({0: Fraction(1), 3: Fraction(2)}, {0: Fraction(1), 1: Fraction(1)}, 2)
    scaled = ({0: Fraction(3), 3: Fraction(6)}, {0: Fraction(3), 1: Fraction(3)}, 2)
    times = ({0: Fraction(1), 1: Fraction(1), 3: Fraction(2), 4: Fraction(2)},
             {0: Fraction(1), 1: Fraction(2), 2: Fraction(1)}, 2)       # × (1 + t)/(1 + t)
    other = ({0: Fraction(1), 3: Fraction(3)}, {0: Fraction(1), 1: Fraction(1)}, 2)
    assert same_element(one, scaled) and same_element(one, times)
    assert not same_element(one, other) and not same_element(scaled, other)


def test_a_long_transformer_query_is_refused_before_evaluation(quick_certificate):
    cert = quick_certificate("P2-transformer")
    record = next(c for c in _of(cert, "transformer") if len(c["model"]["heads"]) >= 2
                  and c["dim"] == 2)
    record["transcript"][0]["tokens"] = _long_query(800)   # 2 heads: ~6·10⁶ products
    rejected(cert, r"transformer: exact evaluation would cost over \d+ term products")
