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


def _run_with(monkeypatch, verdicts, first_catch):
    calls = []

    def run_statement(st, impl, profile, shrink):
        assert impl == "the planted implementation" and profile == "ci" and shrink is False
        calls.append(st.id)
        return {"verdict": verdicts[st.id]}

    monkeypatch.setattr(runner, "load_statements", lambda: STATEMENTS)
    monkeypatch.setattr(runner, "run_statement", run_statement)
    (row,) = selftest.self_test([_Mutant()], "ci", first_catch=first_catch)
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
