"""Every code block of README.md and docs/*.md, collected by Sybil (the MyST parsers: fenced blocks, skip comments),
runs as written, in order within its page, in one namespace per page:

* ``python`` blocks are executed (in a scratch directory, so nothing is written into the checkout); a page whose
  blocks import a peer library (JAX, PyMC, ...) skips without it, and fails without it under
  ``REFVI_REQUIRE_PEERS=1``, as the peer tests do (``tests/_peers.py``);
* ``bash`` blocks are checked for their syntax (``bash -n``) and every command line in them for its options, by
  the real argument parser of the program it runs: ``python -m refvi.verification``, ``refvi``, ``pytest`` (with
  refvi's plugin, xdist, pytest-benchmark), ``python -m sphinx``, the scripts under ``tests/benchmarks/`` and
  ``notebooks/``, and ``pip install`` (each extra must exist in pyproject.toml; refvi is installed from its
  checkout, ``.[extra]``, never by name from an index).  The command lines that run in minutes or install nothing
  run for real under ``pytest --run-slow`` (``test_shell_blocks_run``);
* a block that is a fragment on purpose is preceded by ``<!-- skip: next "why" -->``; the reason is required and
  such blocks are counted (``MAX_FRAGMENTS``);
* every fence names its language (``text`` for output, schemas and synopses), so that no block escapes.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import pathlib
import re
import shlex
import subprocess
import sys
import tomllib
from unittest import SkipTest, mock

import pytest
from sybil import Sybil
from sybil.parsers.myst import CodeBlockParser, PythonCodeBlockParser, SkipParser

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _env import env_with  # noqa: E402  (tests/_env.py)
from _peers import need  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
#: the languages a fence may name; only python and bash blocks are code to run or check
LANGUAGES = {"python", "bash", "text", "toml", "json"}
#: blocks marked as fragments on purpose, across all pages: the exception, not the rule
MAX_FRAGMENTS = 2
PEERS = ("jax", "numpyro", "blackjax", "pymc", "pytensor", "arviz")
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


class _Parsed(Exception):
    """Raised by the patched ``ArgumentParser.parse_args``: the command line parsed, nothing is run."""


def _parse_only(main, argv: list[str]) -> None:
    """Call ``main(argv)`` with argparse stopped right after parsing: an unknown option or a bad value fails."""
    real = argparse.ArgumentParser.parse_args
    depth = {"n": 0}

    def parse(self, args=None, namespace=None):
        depth["n"] += 1
        try:
            result = real(self, args, namespace)
        finally:
            depth["n"] -= 1
        if depth["n"] == 0:
            raise _Parsed(result)
        return result

    err = []
    with mock.patch.object(argparse.ArgumentParser, "parse_args", parse), \
            mock.patch.object(argparse.ArgumentParser, "error",
                              lambda self, message: (err.append(message), sys.exit(2))):
        try:
            main(argv)
        except _Parsed:
            return
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise AssertionError(f"options refused: {' '.join(argv)}: {err[-1] if err else exc}") from None
            return
    raise AssertionError(f"{main.__module__}.main({argv}) did not parse its arguments with argparse")


def _script_main(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"_docs_script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module.main


def _check_pytest(argv: list[str], cwd: pathlib.Path) -> None:
    from _pytest.config import _prepareconfig

    with contextlib.chdir(cwd):
        try:
            config = _prepareconfig(list(argv))
        except pytest.UsageError as exc:
            raise AssertionError(f"pytest options refused: {' '.join(argv)}: {exc}") from None
        config._ensure_unconfigure()


def _check_pip(argv: list[str]) -> None:
    assert argv and argv[0] == "install", f"pip {' '.join(argv)}: only 'pip install' is documented"
    for arg in argv[1:]:
        if arg.startswith("-"):
            assert arg in ("-e", "--quiet", "-q", "--upgrade", "-U"), f"pip install {arg}: not an option the docs use"
            continue
        m = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", arg)
        assert m, (f"pip install {arg}: refvi is installed from its checkout ('.' or '.[extra]'), "
                   f"not by name from a package index")
        missing = set((m.group(1) or "").split(",")) - EXTRAS - {""}
        assert not missing, f"pip install {arg}: no extra {sorted(missing)} in pyproject.toml"


def check_command(argv: list[str], cwd: pathlib.Path) -> None:
    """Check one simple command of a bash block with the real parser of the program it runs."""
    while argv and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", argv[0]):       # VAR=value cmd ...
        argv = argv[1:]
    if not argv:
        return
    prog, args = pathlib.PurePath(argv[0]).name, argv[1:]
    if prog in ("python", "python3"):
        if args[:1] == ["-m"]:
            module, args = args[1], args[2:]
            if module == "venv":
                return
            if module == "pip":
                return _check_pip(args)
            if module == "pytest":
                return _check_pytest(args, cwd)
            if module == "sphinx":
                from sphinx.cmd.build import main as sphinx_main
                return _parse_only(sphinx_main, args)
            if module == "refvi.verification":
                from refvi.verification.__main__ import main as verification_main
                return _parse_only(verification_main, args)
            return _parse_only(importlib.import_module(module).main, args)
        script = ROOT / args[0]
        assert script.is_file(), f"python {args[0]}: no such file in the repository"
        return _parse_only(_script_main(script), args[1:])
    if prog == "pytest":
        return _check_pytest(args, cwd)
    if prog == "pip":
        return _check_pip(args)
    if prog == "refvi":
        from refvi import cli
        if args[:1] == ["verify"]:
            from refvi.verification.__main__ import main as verification_main
            return _parse_only(verification_main, args[1:])
        return _parse_only(cli.main, args)
    raise AssertionError(f"the docs test does not know how to check {prog!r} ({' '.join(argv)}): add it to "
                         f"tests/test_docs_code.py:check_command")


def command_lines(source: str) -> list[list[str]]:
    """The simple commands of a bash block: continuation lines joined, comments dropped, split at line ends and at
    ``&&``, ``;``, ``||`` and ``|``."""
    commands = []
    for line in source.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        for token in lexer:
            if token in ("&&", ";", "||", "|", "&"):
                commands.append(current)
                current = []
            else:
                current.append(token)
        commands.append(current)
    return [c for c in commands if c]


def _check_bash(example) -> None:
    source = example.parsed
    proc = subprocess.run(["bash", "-n"], input=source, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, f"bash syntax: {proc.stderr}"
    for line in source.splitlines():           # one command per line (or continued with a backslash)
        assert not line.rstrip().endswith(("&&", "|")), f"a command line ends in an operator: {line!r}"
    for argv in command_lines(source):
        check_command(argv, pathlib.Path.cwd())


SYBIL = Sybil(parsers=[PythonCodeBlockParser(), CodeBlockParser("bash", _check_bash), SkipParser()])
FENCE = re.compile(r"^[ \t]*(`{3,})(.*)$")


def fences(text: str) -> list[str]:
    """The info strings of the opening fences of a page (a directive such as ``{toctree}`` included)."""
    infos, open_fence = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if not m:
            continue
        if open_fence is None:
            infos.append(m.group(2).strip())
            open_fence = m.group(1)
        elif m.group(1).startswith(open_fence) and not m.group(2).strip():
            open_fence = None
    return infos


@pytest.mark.parametrize("page", PAGES)
def test_every_fence_names_its_language(page):
    bad = [info or "(none)" for info in fences((ROOT / page).read_text(encoding="utf-8"))
           if not info.startswith("{") and info not in LANGUAGES]
    assert not bad, f"{page}: fences must name one of {sorted(LANGUAGES)} (or a MyST directive), found {bad}"


def _document(page):
    return SYBIL.parse(ROOT / page)


def _run_page(page, tmp_path, monkeypatch) -> dict:
    """Evaluate every example of ``page`` in order; returns counts by kind and the skipped reasons."""
    doc = _document(page)
    sources = "\n".join(ex.region.parsed for ex in doc if isinstance(ex.region.parsed, str))
    for peer in sorted({m for m in re.findall(r"^\s*(?:import|from)\s+(\w+)", sources, re.M) if m in PEERS}):
        need(peer, f"{page} imports {peer}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    counts = {"python": 0, "bash": 0, "fragment": 0}
    skipped = []
    for example in doc:
        language = example.region.lexemes.get("arguments")
        try:
            example.evaluate()
        except SkipTest as exc:
            skipped.append((example.line, str(exc)))
            counts["fragment"] += 1
            continue
        except Exception as exc:
            raise AssertionError(f"{page}, block at line {example.line}: {type(exc).__name__}: {exc}") from exc
        if language in counts:
            counts[language] += 1
    return {"counts": counts, "skipped": skipped}


@pytest.mark.parametrize("page", PAGES)
def test_page_code_runs(page, tmp_path, monkeypatch):
    result = _run_page(page, tmp_path, monkeypatch)
    for line, reason in result["skipped"]:
        assert reason.strip(), f"{page}, line {line}: a fragment needs a reason: <!-- skip: next \"why\" -->"


def test_fragments_are_the_exception():
    marks = [(page, m.group(0)) for page in PAGES
             for m in re.finditer(r"<!--\s*skip:.*?-->", (ROOT / page).read_text(encoding="utf-8"))]
    assert all(re.search(r'skip: next "[^"]+"', mark) for _, mark in marks), \
        f"every skip is 'skip: next \"reason\"': {marks}"
    assert len(marks) <= MAX_FRAGMENTS, f"{len(marks)} fragments (at most {MAX_FRAGMENTS}): {marks}"


def test_command_lines_are_checked_for_real():
    """The checker itself: a wrong option, an unknown extra and a package-index install fail."""
    for argv, message in ([["python", "-m", "refvi.verification", "--no-such-option"], "options refused"],
                          [["refvi", "fit", "breast_cancer", "--stepz", "3"], "options refused"],
                          [["pip", "install", ".[nosuchextra]"], "no extra"],
                          [["pip", "install", "refvi[pymc]"], "from its checkout"],
                          [["pytest", "--refvi-nope"], "pytest options refused"],
                          [["python", "tests/benchmarks/track.py", "check", "--recrod"], "options refused"]):
        with pytest.raises(AssertionError, match=message):
            check_command(argv, ROOT)
    check_command(["python", "-m", "refvi.verification", "--select", "000.*", "--workers", "2"], ROOT)
    assert command_lines("A=1 python -m x --a 'b c' && pip install . # comment\nrefvi \\\n  fit x") == [
        ["A=1", "python", "-m", "x", "--a", "b c"], ["pip", "install", "."], ["refvi", "fit", "x"]]


# ------------------------------------------------------------------------------------------- slow: run for real
#: programs whose documented command lines are run by ``test_shell_blocks_run`` (the others install, or name an
#: adapter of the reader's own, ``mylib``)
RUNNABLE = re.compile(r"^(python3? -m refvi\.verification|refvi |python3? -m refvi\.verification\.summary)")
#: a synopsis, not a command: ``[--first-catch]``, ``MUTANT-GLOB``, ``...``
PLACEHOLDER = re.compile(r"^\[|\]$|^\.\.\.$|^[A-Z][A-Z_-]{2,}$")


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_shell_blocks_run(page, tmp_path):
    """The documented command lines that install nothing and need no adapter of the reader's own, run as written
    from a scratch directory (minutes: ``pytest --run-slow``)."""
    ran = 0
    for example in _document(page):
        if example.region.lexemes.get("arguments") != "bash":
            continue
        for argv in command_lines(example.parsed):
            line = shlex.join(argv)
            if not RUNNABLE.match(line) or "mylib" in line or "--update" in line or any(map(PLACEHOLDER.search, argv)):
                continue
            exe = [sys.executable] + argv[1:] if argv[0].startswith("python") else \
                [sys.executable, "-c", "import sys; from refvi.cli import main; sys.exit(main())", *argv[1:]]
            proc = subprocess.run(exe, cwd=tmp_path, capture_output=True, text=True, timeout=3600,
                                  env=env_with(ROOT, tmp_path))
            assert proc.returncode == 0, f"{page}: {line} exited {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
            ran += 1
    if not ran:
        pytest.skip(f"{page} has no command line to run")
