"""Small parts of the command line: when the progress bar is drawn (a terminal and more than one statement, never
on a pipe), the interrupt handler's test for code it must not interrupt (Numba's compiler, llvmlite, a
garbage-collector callback), the order of declined instances' reasons, the exit code of the generated blocks'
``--check``, how a reproducer summarizes a large array, and the self-test's row."""

import sys
import types

import numpy as np
import pytest

from refvi.verification.certificate import report
from refvi.verification.running import commands

REC = {"id": "000.thm1", "verdict": "pass", "kind": "exact", "erratum": None, "examples": 3, "instances_skipped": 0,
       "worst_slack": 0.5, "checks": {}, "seconds": 0.1, "title": "a statement"}


@pytest.mark.parametrize("tty, total, bar", [(False, 3, False), (True, 1, False), (True, 3, True)])
def test_the_progress_bar_only_on_a_terminal_and_for_more_than_one_statement(tty, total, bar, monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty, raising=False)
    show, close = report.progress(total, bar=True)
    show(REC)
    close()
    out, err = capsys.readouterr()
    assert "000.thm1" in out  # the row, either way
    assert ("stmt" in err) == bar, err  # tqdm draws on stderr: "0/3 [...stmt/s]"
    if bar:  # and clears itself when the run ends: the rows stay, the bar does not
        assert err.endswith("\r") and err.split("\r")[-2].strip() == "", repr(err[-80:])  # blanked, no newline


def test_the_progress_bar_steps_once_per_finished_statement(monkeypatch, capsys):
    """tqdm redraws at most ten times a second, so what it drew cannot show the count: a stand-in bar records it."""
    import tqdm

    steps = []

    class Bar:
        def __init__(self, total, **kwargs):
            assert total == 3 and kwargs["unit"] == "stmt"

        def update(self, n):
            steps.append(n)

        def write(self, line):
            print(line)

        def close(self):
            steps.append("closed")

    monkeypatch.setattr(tqdm, "tqdm", Bar)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    show, close = report.progress(3, bar=True)
    show(REC)
    show(dict(REC, id="000.thm2"))
    close()
    assert steps == [1, 1, "closed"]
    assert "000.thm2" in capsys.readouterr().out


def _frame_in(module_name: str, code: str = "def f():\n    return sys._getframe()\n"):
    """A frame whose code runs in a module named ``module_name``, called from this test (so it has a parent)."""
    mod = types.ModuleType(module_name)
    mod.sys = sys
    exec(compile(code, f"<{module_name}>", "exec"), mod.__dict__)
    return mod.f()


def test_the_interrupt_handler_waits_inside_numba_llvmlite_and_gc_callbacks():
    assert commands.in_compiler(_frame_in("numba.core.compiler"))
    assert commands.in_compiler(_frame_in("llvmlite.binding.ffi"))
    assert commands.in_compiler(_frame_in("distributed.gc"))
    assert commands.in_compiler(_frame_in("anything", "def f():\n    def on_gc_callback():\n"
                                          "        return sys._getframe()\n    return on_gc_callback()\n"))
    assert not commands.in_compiler(sys._getframe())  # this test's own frame and its callers
    assert not commands.in_compiler(None)


def test_declined_reasons_are_listed_most_frequent_first():
    from refvi.verification.running.execute import _reasons

    assert _reasons({"a": 1, "b": 3, "c": 2}) == "3 x b; 2 x c; 1 x a"
    many = {f"r{k}": k for k in range(1, 7)}
    assert _reasons(many) == "6 x r6; 5 x r5; 4 x r4; 3 x r3; and 2 other reason(s)"
    assert _reasons({}) == "no reason given"


@pytest.mark.parametrize("stale, code", [(["README.md (papers)"], 1), ([], 0)])
def test_the_generated_blocks_check_fails_when_one_is_stale(stale, code, monkeypatch, capsys):
    from refvi.verification.certificate import summary

    monkeypatch.setattr(summary, "stale", lambda: stale)
    assert summary.main(["--check"]) == code
    assert ("stale: " in capsys.readouterr().out) == bool(stale)


def test_a_large_array_in_a_reproducer_is_summarized_by_its_finite_range():
    from refvi.verification.certificate.reproducers import summarize

    x = np.tile([1.0, np.nan, -np.inf, 3.0], 10)
    assert summarize(x) == {"shape": [40], "dtype": "float64", "range": [1.0, 3.0]}
    assert summarize(np.arange(40))["range"] == [0.0, 39.0]
    assert summarize(np.array([1.0, 2.0])) == {"array": [1.0, 2.0], "shape": [2]}
    # lists and tuples: the first `limit` entries, and "..." only when some were left out
    assert summarize([1, 2, 3], limit=3) == [1, 2, 3] and summarize((1.5,), limit=3) == [1.5]
    assert summarize(list(range(5)), limit=3) == [0, 1, 2, "..."]
    # a long text is cut at the limit and marked; one exactly as long is kept whole
    from refvi.verification.certificate.reproducers import _short

    assert _short("x" * 300) == "x" * 300 and _short("x" * 301) == "x" * 300 + "..."


def test_a_self_test_row_names_at_most_six_catching_statements():
    from refvi.verification.running.selftest import format_row

    row = {"id": "bug", "caught_by": [f"000.s{k}" for k in range(8)], "ran": ["x"] * 8, "seconds": 1.0}
    line = format_row(row)
    assert line.endswith("000.s0, 000.s1, 000.s2, 000.s3, 000.s4, 000.s5 ...") and "000.s6" not in line
    assert "8/8" in line and format_row({**row, "caught_by": []}).split()[1] == "MISSED"
    # the ellipsis marks exactly the rows that name more than six: seven has one, six has none
    assert format_row({**row, "caught_by": row["caught_by"][:7]}).endswith("000.s5 ...")
    assert format_row({**row, "caught_by": row["caught_by"][:6]}).endswith("000.s5")


def test_the_profiles_are_as_the_verification_page_says():
    """docs/verification.md states how hard each profile looks: the numbers are the profiles' own."""
    import pathlib

    from refvi.verification.statement import PROFILES

    page = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "verification.md").read_text(encoding="utf-8")
    page = " ".join(page.split())
    ci, deep = PROFILES["ci"], PROFILES["deep"]
    assert ci.mc_scale == 1 and f"`--profile ci` (the default) draws {ci.max_examples} Hypothesis examples" in page
    assert f"`--profile deep` draws {deep.max_examples} and repeats the Monte Carlo checks {deep.mc_scale} times" in page


def test_the_summary_commands_help_opens_with_its_modules_first_line(capsys):
    from refvi.verification.certificate import summary

    with pytest.raises(SystemExit):
        summary.main(["--help"])
    assert summary.__doc__.splitlines()[0] in " ".join(capsys.readouterr().out.split())


def test_the_self_test_command_exits_1_when_a_planted_bug_is_missed(monkeypatch, capsys):
    """--self-test's exit code: 0 when the certificate caught every chosen bug, 1 when it missed one (named on the
    last line), 2 when no planted bug matches."""
    from types import SimpleNamespace

    from refvi.verification.running import commands, selftest

    caught = {"energy-mean-factor": ["000.def4"], "prox-factor-2": []}
    monkeypatch.setattr(selftest, "self_test", lambda chosen, *a, **k: [
        {"id": m.id, "caught_by": caught[m.id]} for m in chosen])
    monkeypatch.setattr(selftest, "format_row", lambda r: r["id"])
    args = SimpleNamespace(self_test=["energy-mean-factor"], profile="ci", first_catch=False, json=None)
    assert commands.run_self_test(args) == 0
    assert "1 of 1 planted bugs caught by the certificate alone" in capsys.readouterr().out
    args.self_test = ["energy-mean-factor", "prox-factor-2"]
    assert commands.run_self_test(args) == 1
    assert capsys.readouterr().out.rstrip().endswith("1 of 2 planted bugs caught by the certificate alone; missed: prox-factor-2")
    args.self_test = ["no-such-bug"]
    assert commands.run_self_test(args) == 2


def test_the_search_command_prints_each_counterexample_and_exits_1(monkeypatch, capsys, tmp_path):
    """--search: every counterexample found is printed with its seed and verdict, and the exit code is 1."""
    from types import SimpleNamespace

    from refvi.verification.running import commands, search

    found = [{"seed": 3, "verdict": "fail", "detail": "lhs 2 > rhs 1"}, {"seed": 5, "verdict": "error", "detail": "x"}]
    out = {"best": None, "counterexamples": found, "examples": 7}
    monkeypatch.setattr(search, "search", lambda *a: out)
    monkeypatch.setattr(search, "save", lambda o, path: None)
    args = SimpleNamespace(search="000.cor22", budget=5, seeds=None, workers=None, impl=None, profile="ci",
                           scheduler=None, json=str(tmp_path / "s.json"))
    assert commands.run_search(args) == 1
    text = capsys.readouterr().out
    assert "COUNTEREXAMPLE (seed 3, fail): lhs 2 > rhs 1" in text and "COUNTEREXAMPLE (seed 5, error): x" in text
    out["counterexamples"] = []
    assert commands.run_search(args) == 0


def test_the_search_command_prints_the_best_instance_and_where_the_search_was_saved(monkeypatch, capsys, tmp_path):
    """--search with a bound recorded: the best lhs/rhs with its label, seed, budget and instance, then the file it was
    saved to (--json, else search-<statement>.json in the working directory); a search that cannot start (an unknown
    statement, a budget below 1) or cannot be saved is a usage error (2), said on stderr."""
    from types import SimpleNamespace

    from refvi.verification.running import search

    best = {"ratio": 0.8125, "label": "Thm 2", "seed": 4, "instance": "d=3"}
    monkeypatch.setattr(search, "search", lambda *a: {"best": best, "counterexamples": [], "examples": 12})
    saved = []
    monkeypatch.setattr(search, "save", lambda o, path: saved.append(path))
    args = SimpleNamespace(search="000.cor22", budget=5, seeds=None, workers=None, impl=None, profile="ci",
                           scheduler=None, json=None)
    monkeypatch.chdir(tmp_path)
    assert commands.run_search(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["000.cor22: best lhs/rhs = 0.8125 (Thm 2), seed 4, budget 5", "  instance: d=3",
                   "search written to search-000.cor22.json (12 instances)"]
    assert saved == ["search-000.cor22.json"]
    monkeypatch.setattr(search, "search", lambda *a: {"best": None, "counterexamples": [], "examples": 0})
    assert commands.run_search(args) == 0
    assert "000.cor22: no bound recorded with ctx.bound(); nothing to search" in capsys.readouterr().out

    def unwritable(o, path):
        raise OSError(f"{path}: read-only file system")

    monkeypatch.setattr(search, "save", unwritable)
    assert commands.run_search(args) == 2
    assert capsys.readouterr().err == "error: search-000.cor22.json: read-only file system\n"

    def refuses(*a):
        raise ValueError("--budget must be >= 1, got 0")

    monkeypatch.setattr(search, "search", refuses)
    assert commands.run_search(args) == 2
    assert capsys.readouterr().err == "error: --budget must be >= 1, got 0\n"


def test_search_refuses_an_unknown_statement_and_a_budget_below_one():
    from refvi.verification.running import search

    with pytest.raises(KeyError, match="no statement '000.nope'"):
        search.search("000.nope", 5, [0], None, "ci", 1, None)
    with pytest.raises(ValueError, match="--budget must be >= 1, got 0"):
        search.search("000.cor22", 0, [0], None, "ci", 1, None)


def test_the_self_test_command_writes_its_rows_as_json_or_says_why_it_cannot(monkeypatch, capsys, tmp_path):
    import json
    from types import SimpleNamespace

    from refvi.verification.running import selftest

    monkeypatch.setattr(selftest, "self_test", lambda chosen, *a, **k: [
        {"id": m.id, "caught_by": ["000.def4"]} for m in chosen])
    monkeypatch.setattr(selftest, "format_row", lambda r: r["id"])
    path = tmp_path / "zoo.json"
    args = SimpleNamespace(self_test=["energy-mean-factor"], profile="ci", first_catch=False, json=str(path))
    assert commands.run_self_test(args) == 0
    assert json.loads(path.read_text()) == {
        "profile": "ci", "mutants": [{"id": "energy-mean-factor", "caught_by": ["000.def4"]}]}
    args.json = str(tmp_path / "missing" / "zoo.json")
    capsys.readouterr()
    assert commands.run_self_test(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "missing" in err and len(err.splitlines()) == 1, err


def test_check_writable_names_a_directory_a_missing_folder_and_an_unwritable_path(tmp_path, monkeypatch):
    """--json PATH is refused before the run, by what is wrong with it."""
    import os

    from refvi.verification.certificate import record

    record.check_writable(str(tmp_path / "c.json"))  # a new file in a writable folder: fine
    with pytest.raises(IsADirectoryError, match=f"--json {tmp_path}: is a directory"):
        record.check_writable(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="folder .*nope does not exist"):
        record.check_writable(str(tmp_path / "nope" / "c.json"))
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # (root may write anywhere: os.access says no here)
    with pytest.raises(PermissionError, match="c.json: not writable"):
        record.check_writable(str(tmp_path / "c.json"))


def test_a_failing_row_says_why_under_it_and_an_incomplete_run_says_how_much_did_not_run():
    from refvi.verification.certificate import table

    rec = dict(REC, verdict="error", detail="ValueError: " + "x" * 600)
    assert table.row_note(rec) == "    -> " + rec["detail"][:500]
    cert = {"statements": [REC], "profile": "ci", "implementation": "refvi", "complete": False,
            "not_run": ["000.thm2", "000.thm3"]}
    assert table.summary(cert).endswith("\nINCOMPLETE: 2 selected statement(s) not run")
    assert "INCOMPLETE" not in table.summary(dict(cert, complete=True))


def test_a_comparison_notes_other_profiles_and_selections():
    from refvi.verification.certificate import compare

    mine = {"implementation": "a", "profile": "ci", "refvi_version": "1", "statements": [REC]}
    other = {"implementation": "b", "profile": "deep", "refvi_version": "1",
             "statements": [REC, dict(REC, id="000.thm2")]}
    text = compare.format_comparison(compare.compare(mine, other)).splitlines()
    assert text[:3] == ["comparison with b (profile deep, refvi 1):",
                        "  note: the profiles differ, so the instances differ",
                        "  note: the selections differ (statements absent from one side are listed)"]
    same = compare.format_comparison(compare.compare(mine, dict(mine, implementation="b")))
    assert "note:" not in same
    # worst slacks that are both (nearly) zero are the same, not an infinite relative difference
    tiny = compare.compare(mine, dict(mine, statements=[dict(REC, worst_slack=1e-14)]))
    assert compare.compare(dict(mine, statements=[dict(REC, worst_slack=0.0)]),
                           dict(mine, statements=[dict(REC, worst_slack=1e-13)]))["slacks"] == []
    assert tiny["slacks"] and tiny["slacks"][0]["id"] == "000.thm1"  # 0.5 against 1e-14 does differ
