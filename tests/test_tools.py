"""tools/mutation.py: the fixed mutant set applies to the repository as it is (a mutant whose
text no longer occurs exactly once would silently test nothing)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def mutation():
    spec = importlib.util.spec_from_file_location("mutation", ROOT / "tools" / "mutation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mutant_set_is_fixed_large_and_applies(mutation):
    ids = [m[0] for m in mutation.MUTANTS]
    assert len(ids) >= 30 and len(set(ids)) == len(ids)
    files = {f for _, _, patches in mutation.MUTANTS for f, _, _ in patches}
    assert any(f.startswith("proofs_checks/checker/") for f in files)
    assert any(f.startswith("exactattn/learners/") for f in files)
    assert any(f.startswith("proofs_checks/p") for f in files)
    assert mutation.check_applies() == []


def test_apply_changes_exactly_the_text_and_refuses_stale_text(mutation, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    mutation.apply(tmp_path, [("a.py", "y = 2", "y = 3")])
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 3\n"
    with pytest.raises(ValueError, match="0 times"):
        mutation.apply(tmp_path, [("a.py", "y = 2", "y = 4")])
    assert mutation.check_applies([("X", "stale", [("a.py", "nothing", "")])], tmp_path) == ["X"]
