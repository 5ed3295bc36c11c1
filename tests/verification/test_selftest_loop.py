"""The self-test's loop over statements, on stand-ins (no statement runs): which statements run for a planted bug,
in which order, and where ``first_catch`` stops.  The zoo itself is run by tests/verification/test_selftest.py."""

from types import SimpleNamespace

import pytest

from refvi.verification.running import runner, selftest


def _statement(sid, uses, kind="exact"):
    return SimpleNamespace(id=sid, uses=uses, kind=kind)


STATEMENTS = {
    "000.a": _statement("000.a", ("energy",), "statistical"),
    "000.b": _statement("000.b", ("energy", "grad")),
    "000.c": _statement("000.c", ("grad",)),
    "000.d": _statement("000.d", ("energy",)),
}


class _Mutant:
    id, seed, method, bug = "planted", 0, "energy", "a planted bug"

    def build(self):
        return "the planted implementation"


def _run_with(monkeypatch, verdicts, first_catch, recorded=None):
    calls = []

    def run_statement(st, impl, profile, shrink):
        assert impl == "the planted implementation" and profile == "ci" and shrink is False
        calls.append(st.id)
        return {"verdict": verdicts[st.id]}

    monkeypatch.setattr(runner, "load_statements", lambda: STATEMENTS)
    monkeypatch.setattr(runner, "run_statement", run_statement)
    (row,) = selftest.self_test([_Mutant()], "ci", first_catch=first_catch, recorded=recorded)
    return row, calls


def test_only_statements_using_the_method_run_exact_ones_first(monkeypatch):
    verdicts = {"000.a": "fail", "000.b": "pass", "000.d": "error"}
    row, calls = _run_with(monkeypatch, verdicts, first_catch=False)
    assert calls == row["ran"] == ["000.b", "000.d", "000.a"]
    assert row["caught_by"] == ["000.d", "000.a"]
    assert (row["id"], row["method"], row["bug"]) == ("planted", "energy", "a planted bug")


def test_first_catch_stops_at_the_first_failing_statement(monkeypatch):
    verdicts = {"000.a": "fail", "000.b": "fail", "000.d": "fail"}
    row, calls = _run_with(monkeypatch, verdicts, first_catch=True)
    assert calls == row["ran"] == ["000.b"]
    assert row["caught_by"] == ["000.b"]


def test_a_recorded_first_catch_runs_first_and_a_stale_one_changes_no_verdict(monkeypatch):
    verdicts = {"000.a": "fail", "000.b": "pass", "000.d": "pass"}
    monkeypatch.setattr(selftest, "recorded_first_catches", lambda: {"planted": "000.a"})
    row, calls = _run_with(monkeypatch, verdicts, first_catch=True)
    assert calls == row["ran"] == ["000.a"] and row["caught_by"] == ["000.a"]
    # the record names a statement that no longer catches the bug: every other one still runs, in the usual order
    monkeypatch.setattr(selftest, "recorded_first_catches", lambda: {"planted": "000.d"})
    row, calls = _run_with(monkeypatch, verdicts, first_catch=True)
    assert calls == row["ran"] == ["000.d", "000.b", "000.a"] and row["caught_by"] == ["000.a"]
    # an explicit record (the --record run passes {}) replaces the file's
    row, calls = _run_with(monkeypatch, verdicts, first_catch=False, recorded={})
    assert calls == ["000.b", "000.d", "000.a"]


def test_the_recorded_first_catches_name_planted_bugs_and_statements_that_call_their_method():
    from refvi.verification.examples.bug_zoo import load_zoo

    zoo, statements = load_zoo(), runner.load_statements()
    recorded = selftest.recorded_first_catches()
    assert recorded and set(recorded) <= set(zoo), set(recorded) - set(zoo)
    for bug, sid in recorded.items():
        assert sid in statements and zoo[bug].method in statements[sid].uses, (bug, sid)
    assert selftest.record([{"id": "b", "caught_by": ["x", "y"]}, {"id": "a", "caught_by": []}]) == {"b": "x"}


def test_only_statistical_statements_go_last():
    statements = [_statement("c", ("energy",), "statistical"), _statement("b", ("energy",), "symbolic"),
                  _statement("a", ("energy",), "exact")]
    assert [st.id for st in selftest.statements_for(_Mutant(), statements, recorded={})] == ["b", "a", "c"]


def test_no_record_file_is_no_record(monkeypatch, tmp_path):
    monkeypatch.setattr(selftest, "FIRST_CATCH_FILE", tmp_path / "first_catch.json")
    selftest.recorded_first_catches.cache_clear()
    try:
        assert selftest.recorded_first_catches() == {}
    finally:
        selftest.recorded_first_catches.cache_clear()


def test_record_runs_the_zoo_in_the_default_order_and_writes_each_first_catch(monkeypatch, tmp_path, capsys):
    path = tmp_path / "first_catch.json"
    monkeypatch.setattr(selftest, "FIRST_CATCH_FILE", path)
    seen = {}
    rows = [{"id": "b", "caught_by": ["s2", "s3"]}, {"id": "a", "caught_by": ["s1"]}]

    def self_test(mutants, profile, first_catch=False, progress=None, recorded=None):
        seen.update(n=len(list(mutants)), profile=profile, first_catch=first_catch, recorded=recorded)
        return rows

    monkeypatch.setattr(selftest, "self_test", self_test)
    assert selftest.main(["--record"]) == 0
    assert seen["n"] > 100 and seen["profile"] == "ci" and seen["first_catch"] is True and seen["recorded"] == {}
    assert path.read_text() == '{\n "a": "s1",\n "b": "s2"\n}\n'
    assert capsys.readouterr().out.strip() == "wrote first_catch.json: 2 first catches"
    rows.append({"id": "c", "caught_by": []})
    assert selftest.main(["--record"]) == 1
    assert capsys.readouterr().out.strip() == "wrote first_catch.json: 2 first catches; missed: ['c']"
    with pytest.raises(SystemExit) as exc:
        selftest.main([])
    assert exc.value.code == 2


def test_the_record_command_runs_as_a_module():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "refvi.verification.running.selftest"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "--record" in proc.stderr, proc.stderr
