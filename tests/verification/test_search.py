"""Tightness and counterexample search: ctx.bound records lhs/rhs of the tightest instance; --search maximises it
with Hypothesis targeting, reproducibly per seed, and reports a failing instance as a counterexample."""

import hypothesis.strategies as hs

from refvi.verification.protocol import REFVI
from refvi.verification.running import runner, search
from refvi.verification.statement import REGISTRY, Statement


def _register(sid, limit):
    def claim(ctx):
        ctx.forall(hs.floats(0.0, 1.0), lambda x: ctx.bound(x * x, limit, label="x^2 <= limit"))
    REGISTRY[sid] = Statement(sid, "toy bound", "test", "exact", claim, None, ("ci", "deep"), ())
    return REGISTRY[sid]


def test_bound_records_the_tightest_instance():
    st = _register("999.claim-toy-bound", 2.0)
    try:
        rec = runner.run_statement(st, REFVI, "ci")
        assert rec["verdict"] == "pass"
        t = rec["tightness"]
        assert t["label"] == "x^2 <= limit" and 0 <= t["ratio"] <= 0.5 and t["instance"] is not None
    finally:
        REGISTRY.pop("999.claim-toy-bound")


def test_search_pushes_toward_the_bound_and_is_reproducible():
    _register("999.claim-toy-bound", 1.0)
    try:
        a = search.search("999.claim-toy-bound", 60, [0, 1])
        b = search.search("999.claim-toy-bound", 60, [0, 1])
        assert a["best"]["ratio"] > 0.95 and not a["counterexamples"]
        assert a["best"] == b["best"]
    finally:
        REGISTRY.pop("999.claim-toy-bound")


def test_search_reports_a_counterexample():
    _register("999.claim-toy-false", 0.81)
    try:
        out = search.search("999.claim-toy-false", 100, [0])
        assert out["counterexamples"] and out["counterexamples"][0]["verdict"] == "fail"
        assert "x^2 <= limit" in out["counterexamples"][0]["detail"]
    finally:
        REGISTRY.pop("999.claim-toy-false")


def test_search_over_a_statement_that_tests_one_bound_many_times(tmp_path):
    """A check may call ctx.bound with the same label in a loop: the search reports one target per label and example
    (Hypothesis refuses two target() calls with one label), and a true bound gives no counterexample."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--search", "000.cor22", "--budget", "5",
                           "--seeds", "1"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-1500:] + proc.stderr[-1500:]
    assert "COUNTEREXAMPLE" not in proc.stdout and "best lhs/rhs" in proc.stdout


def test_search_steers_each_labelled_bound_by_its_own_label(monkeypatch):
    """In search mode every example reports one Hypothesis target per bound label (``"bound"`` for an unlabelled
    one): merging labels would steer the search by whichever bound is tightest."""
    import hypothesis
    from hypothesis import strategies as hst

    from refvi.verification.statement import PROFILES, Context

    seen = []
    monkeypatch.setattr(hypothesis, "target", lambda value, label="": seen.append((label, value)))
    ctx = Context(None, PROFILES["ci"], "999.claim-search-labels")
    ctx.search = {"seed": 0, "budget": 2}

    def check(x):
        ctx.bound(1.0, 4.0, label="first")
        ctx.bound(1.0, 2.0, label="second")
        ctx.bound(x, 10.0)

    ctx.forall(hst.floats(1.0, 2.0), check)
    assert seen and {label for label, _ in seen} == {"first", "second", "bound"}
    assert {(label, value) for label, value in seen if label != "bound"} == {("first", 0.25), ("second", 0.5)}
