"""What an outside maintainer hit with the runner, each pinned by a test that failed before its fix: --compare with
an oracle-only statement in the selection, --resume keeping the interrupted run's selection, and the smaller
frictions (the summary's oracle-only count, --require of an unknown paper, --replay errors, parallel runs of an
object, reproducers that run from any directory)."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from refvi.verification import __main__ as cli
from refvi.verification.certificate import compare
from refvi.verification.running import runner

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
    for other in (["002.*"], ["004.*"], [*RESUMED, "002.thm1"]):  # sorting before, after, or extending the run's
        assert cli.main(["--resume", str(path), "--select", *other]) == 2, other
        assert "--resume" in capfd.readouterr().err
    assert cli.main(["--resume", str(path), "--select", "002.*"]) == 2
    err = capfd.readouterr().err
    assert "--resume" in err and "selection" in err and len(err.strip().splitlines()) == 1


def test_summary_counts_oracle_only_skips():
    """Against an outside implementation an oracle-only statement is a skip: the summary still counts it."""
    cert = {"profile": "ci", "implementation": "mine", "complete": True,
            "statements": [_rec("004.lemma4", "pass", 0.0), _rec("004.lemma6", "skip", None, "oracle-only")]}
    assert "1 oracle-only" in runner.summary(cert)


def test_summary_counts_the_declined_instances_of_every_statement():
    """The summary line adds up the instances each statement declined (a record without the field counts 0)."""
    recs = [dict(_rec("000.thm1", "pass", 0.0), instances_skipped=2), dict(_rec("000.thm3", "pass", 0.0),
            instances_skipped=3), {k: v for k, v in _rec("000.thm6", "pass", 0.0).items() if k != "instances_skipped"}]
    cert = {"profile": "ci", "implementation": "mine", "complete": True, "statements": recs}
    assert "5 instance(s) declined" in runner.summary(cert)
    assert "3 statements: 3 pass, 0 fail, 0 error, 0 skip" in runner.summary(cert)  # each verdict counted once


def test_require_of_an_unknown_paper_is_a_usage_error(capfd):
    assert cli.main(["--select", "002.lemma12", "--require", "007"]) == 2
    err = capfd.readouterr().err.strip()
    assert err.startswith("error: --require: no paper 007") and "000 001 002 003 004" in err and "\n" not in err


def test_replay_errors_go_to_stderr(tmp_path, capfd):
    bad = tmp_path / "x.npz"
    bad.write_bytes(b"not a reproducer")
    assert cli.main(["--replay", str(bad)]) == 2
    out, err = capfd.readouterr()
    assert "not a refvi reproducer" in err and "not a refvi reproducer" not in out


def test_replay_against_an_implementation_that_does_not_load_is_a_usage_error(tmp_path, capfd):
    from refvi.verification.certificate import reproducers

    fails = [{"site": 0, "index": 0, "instance": "x", "calls": [], "check": {"lhs": 1.0, "rhs": 0.0}}]
    npz, _ = reproducers.write_artifacts(str(tmp_path), "000.thm1", "ci", None, fails, "fail", "detail")
    assert cli.main(["--replay", npz, "--impl", "no_such_module_here:IMPL"]) == 2
    out, err = capfd.readouterr()
    assert err.startswith("error: ") and "no_such_module_here" in err and "Traceback" not in err + out


@pytest.mark.parametrize("argv", [[sys.executable, "-m", "refvi.verification", "--version"],
                                  [sys.executable, "-c", "import sys; from refvi.cli import main; sys.exit(main())",
                                   "--version"]])
def test_version(argv):
    import refvi

    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip().endswith(f"refvi {refvi.__version__}"), proc


def test_parallel_run_of_an_object_by_its_module_name(monkeypatch):
    """``runner.run(impl=obj, workers=...)`` hands the workers the module-level name that holds the object (each
    worker loads it by name); the pool itself is tested in test_parallel.py, here it runs the statements in turn."""
    from refvi.verification.examples.numpy_adapter import IMPL
    from refvi.verification.protocol.loading import load_implementation
    from refvi.verification.running import parallel

    handed = []

    def pool(ids, impl_spec, profile, workers, scheduler, durations, progress, timeout, artifacts=None):
        handed.append(impl_spec)
        for sid in ids:
            progress(runner.run_statement(runner.load_statements()[sid], load_implementation(impl_spec), profile))

    monkeypatch.setattr(parallel, "run_parallel", pool)
    assert runner.object_spec(IMPL) == NUMPY
    cert = runner.run(["002.lemma12"], "ci", IMPL, workers=2)
    assert handed == [NUMPY] and [r["verdict"] for r in cert["statements"]] == ["pass"]
    with pytest.raises(ValueError, match="module:object"):
        runner.object_spec(type("Local", (), {"energy": lambda self, *a: None})())


def test_reproducer_shows_each_method_called():
    """An instance that ran ``online.run`` and then checked it with many ``expected_loss`` calls shows the run."""
    from refvi.verification.certificate.reproducers import telling_calls

    calls = [{"method": "online.run"}] + [{"method": "online.expected_loss", "k": k} for k in range(5)]
    assert [c["method"] for c in telling_calls(calls)] == ["online.run", "online.expected_loss"]


def test_close_names_the_index_of_its_worst_element():
    from refvi.verification.statement import Statement

    def claim(ctx):
        got = np.zeros((4, 2))
        got[2, 1] = 1.0
        ctx.close(got, np.zeros((4, 2)), atol=1e-9, label="trajectory")

    from refvi.verification.protocol import REFVI

    rec = runner.run_statement(Statement("999.claim-test", "t", "s", "exact", claim, None, ("ci", "deep"),
                                         ("energy",)), REFVI, "ci")
    assert rec["verdict"] == "fail" and "at index (2, 1)" in rec["detail"], rec["detail"]

    def empty(ctx):                                    # an empty array compares equal: no index to name
        ctx.close(np.zeros((0, 2)), np.zeros((0, 2)), atol=1e-9, label="nothing")
        ctx.close(np.zeros((0, 2)), np.zeros((0, 3)), atol=1e-9, label="shapes")

    rec = runner.run_statement(Statement("999.claim-test", "t", "s", "exact", empty, None, ("ci", "deep"),
                                         ("energy",)), REFVI, "ci")
    assert rec["verdict"] == "fail" and "shape mismatch" in rec["detail"], rec["detail"]


ADAPTER = '''
import numpy as np
from refvi.verification.protocol import REFVI


class Wrong:
    name = "wrong-prox"

    def entropy_prox(self, C, gamma):
        out = np.array(C, dtype=float)
        c = np.diag(out).copy()
        np.fill_diagonal(out, 0.5 * (c + np.sqrt(c * c + 2.0 * gamma)))   # planted: 4 gamma
        return out


IMPL = Wrong()
'''


def test_an_adapter_in_the_current_directory_is_found(tmp_path, monkeypatch):
    """``pytest --refvi-impl mylib:IMPL`` and the ``refvi`` script do not put the current directory on sys.path
    (``python -m`` does): the loader looks there too."""
    from refvi.verification.protocol.loading import load_implementation

    (tmp_path / "adapter_beside_you.py").write_text(ADAPTER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert load_implementation("adapter_beside_you:IMPL").name == "wrong-prox"


def test_an_adapter_without_a_name_is_named_by_its_spec_when_it_can_be(tmp_path, monkeypatch):
    """An adapter object with no ``name`` gets its --impl spec as name; one that takes no new attribute (``__slots__``)
    is still loaded, unnamed, rather than refused."""
    from refvi.verification.protocol.loading import load_implementation

    (tmp_path / "nameless_adapter.py").write_text(
        "class Open:\n    def entropy_prox(self, C, gamma):\n        return C\n\n\n"
        "class Closed:\n    __slots__ = ()\n\n    def entropy_prox(self, C, gamma):\n        return C\n\n\n"
        "OPEN, CLOSED = Open(), Closed()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_implementation("nameless_adapter:OPEN").name == "nameless_adapter:OPEN"
    closed = load_implementation("nameless_adapter:CLOSED")
    assert type(closed).__name__ == "Closed" and not hasattr(closed, "name")


def test_the_import_root_of_an_adapter_in_a_package_is_above_the_package(tmp_path, monkeypatch):
    """A reproducer records the folder that makes ``mypkg.sub.adapter:IMPL`` importable: two levels above the module
    (the dots of the module's name, not of the object's)."""
    from refvi.verification.protocol.loading import import_root, load_implementation

    pkg = tmp_path / "mypkg_root" / "mypkg" / "sub"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "adapter.py").write_text("class Impl:\n    name = 'x'\n\n    def entropy_prox(self, C, g):\n        return C\n\n\nIMPL = Impl()\n")
    monkeypatch.syspath_prepend(str(tmp_path / "mypkg_root"))
    load_implementation("mypkg.sub.adapter:IMPL")
    assert import_root("mypkg.sub.adapter:IMPL") == str(tmp_path / "mypkg_root")
    assert import_root("mypkg.sub.adapter:IMPL.attr.deeper") == str(tmp_path / "mypkg_root")


def test_zero_workers_is_refused_by_name():
    from refvi.verification.running import parallel

    with pytest.raises(ValueError, match="--workers must be >= 1, got 0"):
        parallel.run_parallel([], None, "ci", 0, None, None, lambda rec: None, None)


def test_compare_lists_at_most_ten_slack_differences():
    """Worst slacks that differ are listed ten at most (they are the least telling lines), the count of them in full."""
    slacks = [{"id": f"000.s{k:02d}", "this": -1.0, "other": -2.0, "relative": 1.0} for k in range(12)]
    other = {"implementation": "refvi", "profile": "ci", "refvi_version": "x"}
    diff = {"other": other, "statements": [], "instances": [], "slacks": slacks, "same_selection": True,
            "same_profile": True}
    text = compare.format_comparison(diff)
    assert "12 worst slack(s) differ" in text
    assert "000.s09" in text and "000.s10" not in text


def test_a_resumed_selection_is_the_runs_own_patterns_and_methods_and_no_other():
    """--resume completes the interrupted run's selection, --select and --select-method both: given again they are
    accepted, any other is refused by naming the run's own; a certificate without a recorded selection takes the
    one given."""
    partial = {"selection": {"patterns": ["002.*"], "methods": ["entropy_prox"]}}
    assert runner.resumed_selection(partial, None, None) == (["002.*"], ["entropy_prox"])
    assert runner.resumed_selection(partial, ["002.*"], ["entropy_prox"]) == (["002.*"], ["entropy_prox"])
    for patterns, methods in ((["002.*"], None), (["002.*"], ["energy"]), (None, ["entropy_prox", "energy"])):
        with pytest.raises(ValueError, match=re.escape("--select 002.* --select-method entropy_prox;")):
            runner.resumed_selection(partial, patterns, methods)
    assert runner.resumed_selection({"selection": {"patterns": None, "methods": None}}, None, None) == (None, None)
    assert runner.resumed_selection({}, ["002.lemma12"], None) == (["002.lemma12"], None)
