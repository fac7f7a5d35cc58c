"""Every statement the README and the docs/ pages show is true today: each shell command they
show runs (in a temporary directory, with this environment's `exactattn` and `python`) and
succeeds, each Python example runs and prints what its `# → …` comments say, the set-up
commands are self-contained and the test command is exactly the one CI runs, every link
points at a file that ships, and every "docs/design.md §N" reference names a section that
exists.

`exactattn ...`, `python -m proofs_checks.verify ...` and `python SCRIPT.py ...` commands run
in this process (the command's own main(), or the script as ``__main__``, in the page's
directory, stdout to a string or to the `>` file): a subprocess would add only the
interpreter's start-up.  `check --quick` commands read the session's claim outcomes (conftest
``replayed_quick_claims``), so no claim runs twice; each certificate is verified in full once
per session (conftest ``verified_once``); an example script's run is shared with
tests/test_examples.py.  The console scripts themselves run as shown in :data:`AS_SHOWN` and
:func:`test_the_console_scripts_run`; pipelines, quoted arguments and other programs run in
bash."""

from __future__ import annotations

import ast
import contextlib
import glob
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import replayed_quick_claims, run_cli, run_script, verified_once

import exactattn as ea

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: pages whose shell and Python blocks are run (design.md and multi_head.md show no commands)
PAGES = [README] + sorted(p for p in DOCS.glob("*.md"))

#: shown but not run here: command → how it is checked instead
NOT_RUN = {
    "exactattn check": "full sizes take minutes: the arguments are checked by the parser",
    "pip install jupyterlab && jupyter lab docs/notebooks/": "installs software and opens a "
    "browser; the notebooks themselves are run by tests/test_notebooks.py",
    'pip install ".[docs]" && sphinx-build -W -b html docs docs/_build/html': "installs "
    "software; tests/test_docs_site.py builds the site with -W",
    "python -m mypy --cache-dir /tmp/exactattn-mypy": "runs from the repository's root: "
    "tests/test_typing.py runs it there",
    "ruff check .": "runs from the repository's root: tests/test_typing.py runs it there",
}
#: linked pages that are written on other branches and have not landed yet
PENDING = set()

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(path: Path, lang: str):
    """The fenced code blocks of a page in language `lang`, in order."""
    return [body for tag, body in _FENCE.findall(path.read_text(encoding="utf-8")) if tag == lang]


def section(text: str, title: str) -> str:
    """The text of the '## title' section of a page."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no '## {title}' section"
    return match.group(1)


def section_of_toml(name: str) -> str:
    """The body of a [name] table of pyproject.toml (read by hand: tomllib needs 3.11)."""
    text = (ROOT / "pyproject.toml").read_text()
    match = re.search(rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    assert match, name
    return match.group(1)


def setup_commands():
    return [line for body in _FENCE.findall(section(README.read_text(encoding="utf-8"),
                                                    "Set-up"))
            for line in body[1].splitlines() if line.strip()]


def shell_commands(path: Path):
    """Command lines of the page's sh blocks (the README's set-up commands excluded)."""
    skip = set(setup_commands()) if path == README else set()
    return [line for body in blocks(path, "sh") for line in body.splitlines()
            if line.strip() and line not in skip]


def _bare(line: str) -> str:
    return line.split("  #", 1)[0].strip()


# ---------------------------------------------------------------------- set-up commands
def test_two_setup_commands_each_self_contained():
    """Each works in a fresh shell: it makes the venv and then calls only .venv/bin/... (no
    activated environment is assumed), and installs only extras that exist."""
    cmds = setup_commands()
    assert len(cmds) == 2, cmds
    extras = set(re.findall(r"^(\w+) = \[", section_of_toml("project.optional-dependencies"),
                            re.M))
    assert {"test", "plots"} <= extras
    for cmd in cmds:
        parts = [p.strip() for p in cmd.split("&&")]
        assert parts[0] == "python3 -m venv .venv", cmd
        assert all(p.startswith(".venv/bin/") for p in parts[1:]), cmd
        for spec in re.findall(r'"\.\[([\w,]+)\]"', cmd):
            assert set(spec.split(",")) <= extras, (spec, extras)


def test_the_test_command_is_exactly_what_ci_runs():
    test_cmd = setup_commands()[1]
    assert test_cmd.endswith("python -m pytest -q")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd in ci, "'.ci/run' must run the README's test command verbatim"


def test_the_first_setup_command_ends_with_a_command_that_is_run():
    """Its last step (`.venv/bin/exactattn check --quick`) is run below as `exactattn check
    --quick`: the README shows it among the common commands."""
    last = setup_commands()[0].split("&&")[-1].strip()
    assert last.startswith(".venv/bin/")
    assert last[len(".venv/bin/"):] in {_bare(c) for c in shell_commands(README)}


# ---------------------------------------------------------------------- shell commands
def _env():
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _workdir(tmp_path: Path) -> Path:
    for name in ("examples", "benchmarks"):          # `python examples/x.py` as from a clone
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


_RUN = set()   # commands already run by an earlier page (each distinct command runs once)


#: commands a session fixture of tests/conftest.py runs exactly as shown (once per session,
#: shared with the tests that read their output): command → fixture
SESSION_RUN = {"exactattn check --quick": "quick_check"}

#: commands run as shown, by bash with this environment's console scripts, though this
#: process could run them: a `learn` and a `verify` (`check` and `--version`:
#: test_the_console_scripts_run)
AS_SHOWN = {"exactattn learn multi-head --dim 2 --heads 2 --certificate out/run.json",
            "python -m proofs_checks.verify out/run.json"}

_SHELL = set("|&;<()$`\\'\"")      # anything but words and one `> FILE`: bash runs the line
_WRITES = ("--save", "--certificate", "--out", "--plot")    # files a later command may read


def in_process(cmd: str):
    """(runner, arguments, stdout file or None) for an `exactattn ...`, `python -m
    proofs_checks.verify ...` or `python SCRIPT.py ...` command this process can run as bash
    would; None otherwise."""
    if _SHELL & set(cmd) or cmd in AS_SHOWN:
        return None
    words = shlex.split(cmd)
    out = None
    if ">" in words:
        if words.index(">") != len(words) - 2:
            return None
        words, out = words[:-2], words[-1]
    if words[0] == "exactattn":
        return "exactattn", words[1:], out
    if words[:3] == ["python", "-m", "proofs_checks.verify"]:
        return "verify", words[3:], out
    if len(words) >= 2 and words[0] == "python" and words[1].endswith(".py"):
        return "script", words[1:], out
    return None


def run_in_process(runner, args, cwd: Path):
    """Run a command of :func:`in_process` here: a CompletedProcess."""
    if runner == "script":
        return run_script(cwd / args[0], args[1:], cwd)
    with verified_once():
        if runner == "exactattn":
            quick = args[:1] == ["check"] and "--quick" in args
            with replayed_quick_claims() if quick else contextlib.nullcontext():
                return run_cli(args, cwd)
        from proofs_checks.verify import main
        files = [m for a in args for m in (sorted(glob.glob(a, root_dir=cwd))
                                           if glob.has_magic(a) else [a])]
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            mp.chdir(cwd)
            code = main(files)
        return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def run_block(code: str, cwd: Path, name: str = "<block>"):
    """A page's Python block, run here as `python -c CODE` would run it in `cwd` (a fresh
    __main__ namespace, MPLBACKEND=Agg): its stdout.  An exception fails the test."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.chdir(cwd)
        mp.setenv("MPLBACKEND", "Agg")
        exec(compile(code, name, "exec"), {"__name__": "__main__"})
    return out.getvalue()


def _example(here):
    """(script, arguments) of a `python examples/SCRIPT --out pictures ARGS` command."""
    if here and here[0] == "script" and here[1][0].startswith("examples/") and \
            here[1][1:3] == ["--out", "pictures"] and here[2] is None:
        return here[1][0][len("examples/"):], here[1][3:]
    return None


@pytest.mark.slow
@pytest.mark.quick_claims          # `exactattn check --quick` and other quick checks
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_and_example_shown_succeeds(page, tmp_path, request):
    """The page's shell commands, in order, then its Python examples in the same directory
    (an example may read a file a command wrote, as a reader following the page would)."""
    cwd = _workdir(tmp_path)
    for line in shell_commands(page):
        cmd = _bare(line)
        if cmd in NOT_RUN:
            continue
        if cmd in SESSION_RUN:       # run once per session, as shown; its files copied here
            proc, where = request.getfixturevalue(SESSION_RUN[cmd])
            assert proc.returncode == 0, f"{page.name}: `{line}` exited {proc.returncode}\n" \
                                         f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            shutil.copytree(where, cwd, dirs_exist_ok=True)
            _RUN.add(cmd)
            continue
        if cmd in _RUN and cmd.startswith("exactattn ") and ">" not in cmd and \
                not any(w in cmd for w in _WRITES):
            continue     # shown on an earlier page too, and nothing after it reads its files
        here = in_process(cmd)
        if _example(here):           # the session's run of it (shared with test_examples.py)
            proc, where = request.getfixturevalue("example_run")(*_example(here))
            shutil.copytree(where, cwd / "pictures", dirs_exist_ok=True)
        elif here:
            proc = run_in_process(*here[:2], cwd)
            if here[2] is not None and proc.returncode == 0:
                (cwd / here[2]).write_text(proc.stdout, encoding="utf-8")
        else:
            proc = subprocess.run(["bash", "-c", line], cwd=cwd, env=_env(),
                                  capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{page.name}: `{line}` exited {proc.returncode}\n" \
                                     f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        _RUN.add(cmd)
    skipped = []
    for k, code in enumerate(blocks(page, "python")):
        missing = missing_modules(code)
        if missing:
            skipped.append(missing)
            continue
        stdout = run_block(code, cwd, f"<{page.name}, Python block {k + 1}>")
        expected = expected_outputs(code)
        if expected is not None:
            assert stdout.splitlines() == expected, code
    if skipped:
        pytest.skip(f"{page.name}: every other block ran; {len(skipped)} Python block(s) need "
                    f"{', '.join(sorted({m for ms in skipped for m in ms}))}, not installed "
                    f"(an extra: pip install \".[torch]\" from a clone)")


#: optional packages a page's Python block may import (an extra each)
OPTIONAL_MODULES = ("torch",)


def missing_modules(code: str) -> list:
    """The optional modules (:data:`OPTIONAL_MODULES`) that `code` imports and this
    environment lacks: such a block is skipped, with the reason, instead of failing."""
    tree = ast.parse(code)
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
             for a in n.names}
    names |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
              if isinstance(n, ast.ImportFrom) and not n.level}
    return [m for m in OPTIONAL_MODULES
            if m in names and importlib.util.find_spec(m) is None]


def test_a_block_importing_an_absent_optional_module_is_skipped(monkeypatch):
    """The skip applies only where the module is really missing, and only to blocks that
    import it."""
    code = "import torch\nprint(torch.__version__)\n"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert missing_modules(code) == ["torch"]
    assert missing_modules("from torch import nn\n") == ["torch"]
    assert missing_modules("import exactattn as ea\n") == []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    assert missing_modules(code) == []


def test_commands_not_run_are_shown_and_parse():
    shown = {_bare(c) for p in PAGES for c in shell_commands(p)}
    assert set(NOT_RUN) <= shown, set(NOT_RUN) - shown      # no stale entries
    from exactattn.cli.main import build_parser
    for cmd in NOT_RUN:
        if cmd.startswith("exactattn "):
            args = build_parser().parse_args(cmd.split()[1:])
            assert args.func


# ---------------------------------------------------------------------- Python examples
def expected_outputs(code: str):
    """The `# → VALUE` of every print line, in order (VALUE ends at two spaces), or None for
    a block that states no outputs (it must still run); a block that states some but not all
    is an error."""
    prints = [line for line in code.splitlines() if "print(" in line]
    stated = [line for line in prints if "# → " in line]
    if not stated:
        return None
    assert len(stated) == len(prints), f"prints without their expected output: {prints}"
    return [re.split(r"\s{2,}", line.split("# → ", 1)[1])[0].strip() for line in stated]


@pytest.mark.slow
def test_a_wrong_expected_output_is_caught(tmp_path):
    """A check that cannot fail is a defect: a README claim changed to a false one fails."""
    code = blocks(README, "python")[0].replace("# → 69 5", "# → 70 5", 1)
    assert code != blocks(README, "python")[0]
    assert run_block(code, tmp_path).splitlines() != expected_outputs(code)


def test_commands_are_run_in_process_only_where_bash_would_run_the_same():
    """`exactattn` and `verify` words with at most one `> FILE`; pipelines, quotes, other
    programs and the AS_SHOWN lines go to bash."""
    assert in_process("exactattn model random --dim 3 > model.json") == \
        ("exactattn", ["model", "random", "--dim", "3"], "model.json")
    assert in_process("python -m proofs_checks.verify certs/*.json") == \
        ("verify", ["certs/*.json"], None)
    assert in_process("python benchmarks/bench_core.py --sizes 4x3") == \
        ("script", ["benchmarks/bench_core.py", "--sizes", "4x3"], None)
    for cmd in ["exactattn check --list | head", "echo '[1]' > q.json", "exactattn a > b > c",
                "python -c 'print(1)'", "pip install x && exactattn demo", *AS_SHOWN]:
        assert in_process(cmd) is None, cmd
    shown = {_bare(c) for p in PAGES for c in shell_commands(p)}
    assert AS_SHOWN <= shown, AS_SHOWN - shown                  # no stale entries


@pytest.mark.slow
def test_the_console_scripts_run(tmp_path):
    """This environment's console script as a reader runs it (with AS_SHOWN, which the page
    test runs so: a `learn` and a `verify`): `--version`, and a `check` of P1-T4.1 (the
    cheapest claim, a hundredth of a second; the one claim this session runs twice)."""
    proc = subprocess.run(["bash", "-c", "exactattn --version && exactattn check P1-T4.1 "
                           "--quick --out certs"], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"exactattn {ea.__version__}"
    assert lines[1].split()[:2] == ["ok", "P1-T4.1"] and "cert ok" in lines[1]
    assert lines[-1].startswith("1/1 claims hold") and (tmp_path / "certs/P1-T4.1.json").exists()


def test_the_readme_and_these_pages_state_their_outputs():
    for page in (README, DOCS / "learners.md", DOCS / "backends.md", DOCS / "approximate.md",
                 DOCS / "transformer.md"):
        assert all(expected_outputs(code) for code in blocks(page, "python")), page.name


def test_the_readme_example_uses_only_top_level_names():
    (code,) = blocks(README, "python")
    tree = ast.parse(code)
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [(a.name, a.asname) for n in imports for a in n.names] == [("exactattn", "ea")]
    used = {n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "ea"}
    assert used and used <= set(ea.__all__), used - set(ea.__all__)


# ---------------------------------------------------------------------- what the README has
def test_the_sample_output_is_what_the_command_prints(tmp_path):
    """The README's sample output is its command's output, line for line."""
    text = section(README.read_text(encoding="utf-8"), "Sample output")
    (cmd,), (shown,) = [b for t, b in _FENCE.findall(text) if t == "sh"], \
        [b for t, b in _FENCE.findall(text) if t == "text"]
    runner, args, out = in_process(cmd.strip())
    assert runner == "exactattn" and out is None
    proc = run_in_process(runner, args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == shown.splitlines()


def test_the_readme_has_what_a_new_user_needs():
    """What it is in three lines, one committed picture, the field and L defined, the install
    with the CPU wheel of torch, the two set-up commands, how to cite, the license."""
    text = README.read_text(encoding="utf-8")
    intro = text.split("\n\n")[1]
    assert not intro.startswith("#") and len(intro.splitlines()) == 3, intro
    pictures = re.findall(r"!\[[^]]+\]\((docs/[\w.]+\.png)\)", text)
    assert len(pictures) == 1 and (ROOT / pictures[0]).stat().st_size > 20_000
    assert "Let **L** be the common denominator of the scores" in text and "Q(e^{1/L})" in text
    install = section(text, "Install")
    assert "install the CPU wheel of torch first" in install
    assert re.search(r"pip install torch==[\d.]+ --index-url \S+/cpu", install)
    assert "CITATION.cff" in section(text, "How to cite")
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_version_citation_and_changelog_agree():
    """One version: exactattn.__version__ (pyproject reads it), CITATION.cff and the newest
    section of CHANGELOG.md."""
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(rf"^version: {re.escape(ea.__version__)}$", cff, re.M)
    assert 'version = { attr = "exactattn.__version__" }' in section_of_toml("tool.setuptools.dynamic")
    releases = re.findall(r"^## \[([\w.]+)\]", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"),
                          re.M)
    assert releases[0] in (ea.__version__, "Unreleased") and ea.__version__ in releases[:2]


_HISTORY = re.compile(r"round [0-9]|this round|issue [0-9]+|host of", re.I)
#: files that tell history (CHANGELOG.md is where it belongs); those written elsewhere that
#: still do are expected to fail here (strict: once cleaned, they must leave this set)
HISTORY_PENDING: set = set()
_CURRENT = sorted([README, *DOCS.glob("*.md"), *(ROOT / "examples").glob("*.py"),
                   *(DOCS / "notebooks").glob("*.ipynb")])


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.xfail(
    strict=True, reason="history not yet moved to CHANGELOG.md"))
    if str(p.relative_to(ROOT)) in HISTORY_PENDING else p for p in _CURRENT],
    ids=lambda p: str(p.relative_to(ROOT)))
def test_the_docs_state_what_is_true_now(path):
    """No rounds, hosts or issue numbers in the docs, examples and notebooks: history goes to
    CHANGELOG.md."""
    hits = [line for line in path.read_text(encoding="utf-8").splitlines()
            if _HISTORY.search(line)]
    assert not hits, hits[:3]


def test_the_history_check_sees_a_round():
    assert _HISTORY.search("the last Round 3 figures") and _HISTORY.search("see issue 12")
    assert not _HISTORY.search("a round trip of the model file")


# ---------------------------------------------------------------------- references
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def dangling_links(path: Path):
    out = []
    for target in _LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"\w+://", target):
            continue
        resolved = (path.parent / target).resolve()
        if not resolved.exists():
            out.append(str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT)
                       else target)
    return out


@pytest.mark.parametrize("page", [README] + sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_links_point_at_files_that_ship(page):
    missing = [t for t in dangling_links(page) if t not in PENDING]
    assert not missing, missing


_TEST_REF = re.compile(r"`(tests/test_\w+\.py)::(test_\w+)")
_TEST_NAME = re.compile(r"`(test_\w+)[`\[(]")


def missing_tests(text: str):
    """Tests a page names that do not exist: ``tests/test_x.py::test_y`` must be defined in
    that file, a bare ``test_y`` in some test file."""
    sources = {f.name: f.read_text(encoding="utf-8") for f in (ROOT / "tests").glob("test_*.py")}
    out = [f"{f}::{name}" for f, name in _TEST_REF.findall(text)
           if f"def {name}(" not in sources.get(Path(f).name, "")]
    out += [name for name in _TEST_NAME.findall(text)
            if not any(f"def {name}(" in src for src in sources.values())]
    return out


@pytest.mark.parametrize("page", [README] + sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_pages_name_only_tests_that_exist(page):
    assert not missing_tests(page.read_text(encoding="utf-8"))


def test_the_test_name_check_sees_a_removed_test():
    text = ("`tests/test_core.py::test_no_such_test`, `test_links_point_at_files_that_ship`, "
            "`test_nor_this_one`")
    assert missing_tests(text) == ["tests/test_core.py::test_no_such_test", "test_nor_this_one"]


def test_the_link_check_sees_a_dangling_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("see [there](nowhere.md) and [design](https://example.org/x)\n")
    assert dangling_links(page) == ["nowhere.md"]


def test_pending_pages_are_only_those_still_missing():
    """Once a page in PENDING lands, it must leave the list (and be link-checked)."""
    assert not [p for p in PENDING if (ROOT / p).exists()], "remove landed pages from PENDING"


def design_sections():
    text = (DOCS / "design.md").read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, re.M))


def design_references():
    """(file, section) for every "docs/design.md §N" in the repository's code and docs."""
    refs = []
    for path in ROOT.rglob("*"):
        if path.suffix not in (".py", ".md", ".toml", ".ipynb") or not path.is_file() \
                or {".venv", "build", ".git"} & set(path.relative_to(ROOT).parts):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r"design(?:\.md)?\]?(?:\([^)\n]*\))?\s?§\s?(\d+(?:\.\d+)?)"
                             r"(?:[–-](\d+))?", text):
            refs.append((str(path.relative_to(ROOT)), m.group(1)))
            if m.group(2):
                refs.append((str(path.relative_to(ROOT)), m.group(2)))
    return refs


def test_every_design_reference_names_a_section_that_exists():
    sections = design_sections()
    assert {"1", "2", "3", "4", "4.1", "4.2", "4.3", "4.4", "5", "6", "7", "8", "9",
            "10"} <= sections
    refs = design_references()
    assert len(refs) > 100
    bad = sorted({(f, s) for f, s in refs if s.rstrip(".") not in sections})
    assert not bad, bad


def test_design_names_only_files_that_ship():
    """Module paths written in docs/design.md exist (relative to the repository or to the
    exactattn package)."""
    text = (DOCS / "design.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:[\w.]+/)+[\w.]+\.(?:py|md))`", text))
    assert len(paths) > 20
    missing = [p for p in paths if not (ROOT / p).exists() and not (ROOT / "exactattn" / p).exists()
               and not (ROOT / "docs" / p).exists()]
    assert not missing, missing


# ---------------------------------------------------------------------- the floor table
_FLOOR_ROW = re.compile(r"^\| \((\d+), (\d+)\) \| (\d+) \| (\d+) \(([\d.]+)×\) \| (\d+) \(([\d.]+)×\) \|$")


def floor_rows(text):
    """(d, H, floor, P2, its ratio, economy, its ratio) of the README's floor table."""
    return [tuple(int(g) if "." not in g else g for g in m.groups())
            for m in map(_FLOOR_ROW.match, text.splitlines()) if m]


@pytest.mark.slow
def test_the_floor_table_is_what_the_learners_measure():
    """Every row of the README's table: the floor, and the counts of certified exact P2 and
    economy runs (the README shows the ratio to the floor that they measure)."""
    from exactattn.analysis.floor import dimension_floor
    rows = floor_rows(README.read_text(encoding="utf-8"))
    assert len(rows) == 2
    for d, H, floor, p2, p2_ratio, econ, econ_ratio in rows:
        assert floor == dimension_floor(d, H)
        for schedule, count, ratio in (("p2", p2, p2_ratio), ("economy", econ, econ_ratio)):
            res = ea.learn_multi_head(ea.Oracle(ea.random_multi_head(d, H, seed=2)), d,
                                      heads=H, schedule=schedule, seed=0)
            assert res.certificate["certified"] is True
            assert (res.queries, f"{res.queries / floor:.2f}") == (count, ratio)


def test_a_wrong_floor_row_is_caught():
    """The table's parser sees a changed row (the check above cannot pass vacuously)."""
    text = README.read_text(encoding="utf-8")
    assert floor_rows(text.replace("338 (1.17×)", "337 (1.17×)")) != floor_rows(text)
