"""What an outside maintainer hit with the runner, each pinned by a test that failed before its fix: --compare with
an oracle-only statement in the selection, --resume keeping the interrupted run's selection, and the smaller
frictions (the summary's oracle-only count, --require of an unknown paper, --replay errors, parallel runs of an
object, reproducers that run from any directory)."""

import json
import os
import subprocess
import sys

import pytest

from refvi.verification import __main__ as cli
from refvi.verification import compare, runner

NUMPY = "refvi.verification.examples.numpy_adapter:IMPL"


def _rec(sid, verdict, slack, scope="implementation"):
    return {"id": sid, "verdict": verdict, "examples": 0 if verdict == "skip" else 3, "instances_skipped": 0,
            "worst_slack": slack, "scope": scope, "instances": []}


def test_compare_formats_a_statement_without_slack():
    """An oracle-only statement is a skip (no worst slack) for an outside implementation and a pass for refvi: the
    comparison lists it instead of crashing on None."""
    mine = {"implementation": "mine", "profile": "ci", "statements": [_rec("004.lemma6", "skip", None, "oracle-only")]}
    ref = {"implementation": "refvi", "profile": "ci", "refvi_version": "x",
           "statements": [_rec("004.lemma6", "pass", -1e-12, "oracle-only")]}
    text = compare.format_comparison(compare.compare(mine, ref))
    assert "004.lemma6" in text and "worst slack none vs -1e-12" in text


def test_cli_compare_refvi_with_an_oracle_only_statement(tmp_path, capfd):
    """The smallest case of the report: ``--select 004.lemma4 004.lemma6 --compare refvi`` exits 0 and writes
    the certificate with its comparison."""
    path = tmp_path / "cert.json"
    code = cli.main(["--impl", NUMPY, "--select", "004.lemma4", "004.lemma6", "--compare", "refvi",
                     "--json", str(path), "--no-progress"])
    out = capfd.readouterr().out
    assert code == 0, out
    cert = json.loads(path.read_text())
    assert cert["comparison"]["statements"][0]["id"] == "004.lemma6"
    assert "comparison with refvi" in out


RESUMED = ["002.lemma12", "002.lemma15"]


@pytest.fixture
def partial(tmp_path):
    """A certificate of ``RESUMED`` whose run stopped after the first statement (as an interrupt leaves it)."""
    cert = runner.run(RESUMED, "ci", None)
    cert["statements"] = cert["statements"][:1]
    cert.update(complete=False, not_run=RESUMED[1:], interrupted="SIGINT")
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(cert))
    return path, cert


def _only(monkeypatch, allowed):
    """Fail at once if the run reaches a statement outside ``allowed`` (before the fix: every other statement)."""
    real = runner.run_statement

    def guarded(st, *args, **kwargs):
        assert st.id in allowed, f"--resume ran {st.id}, outside the interrupted run's selection"
        return real(st, *args, **kwargs)

    monkeypatch.setattr(runner, "run_statement", guarded)


def test_resume_keeps_the_selection_of_the_interrupted_run(partial, monkeypatch):
    _, cert = partial
    _only(monkeypatch, RESUMED[1:])
    done = runner.run(resume=cert)
    assert [r["id"] for r in done["statements"]] == RESUMED and done["complete"]
    assert done["selection"]["patterns"] == RESUMED


def test_cli_resume_keeps_the_selection(partial, monkeypatch, capfd):
    path, _ = partial
    _only(monkeypatch, RESUMED[1:])
    assert cli.main(["--resume", str(path), "--no-progress"]) == 0
    assert "running 1 statement(s)" in capfd.readouterr().out
    done = json.loads(path.read_text())
    assert [r["id"] for r in done["statements"]] == RESUMED and done["complete"]


def test_cli_resume_refuses_another_selection(partial, capfd):
    path, _ = partial
    assert cli.main(["--resume", str(path), "--select", "002.*"]) == 2
    err = capfd.readouterr().err
    assert "--resume" in err and "selection" in err and len(err.strip().splitlines()) == 1
