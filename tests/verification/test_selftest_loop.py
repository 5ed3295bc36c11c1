"""The self-test's loop over statements, on stand-ins (no statement runs): which statements run for a planted bug,
in which order, and where ``first_catch`` stops.  The zoo itself is run by tests/verification/test_selftest.py."""

from types import SimpleNamespace

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
