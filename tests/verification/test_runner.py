"""The statement model, the errata mechanism, the runner, its command line and the certificate contract."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import strategies as st

from refvi.verification.errata import ERRATA, Erratum
from refvi.verification.implementation import METHODS, REFVI, load_implementation
from refvi.verification.running import runner
from refvi.verification.statement import PROFILES, CheckFailed, Context, Statement
from refvi.verification.statement.decorator import _check_id

CERT_KEYS = {"id", "title", "source", "kind", "printed", "erratum", "verdict", "examples", "worst_slack", "seconds"}


def _ctx():
    return Context(REFVI, PROFILES["ci"], "999.claim-test")


def test_leq_records_slack_and_fails_with_a_clear_message():
    ctx = _ctx()
    ctx.leq(1.0, 2.0, label="one below two")
    assert ctx.worst_slack == 1.0
    with pytest.raises(CheckFailed, match="three below two"):
        ctx.leq(3.0, 2.0, label="three below two")
    assert ctx.worst_slack == -1.0


def test_close_uses_stated_tolerance():
    ctx = _ctx()
    ctx.close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-13]), rtol=1e-12)
    with pytest.raises(CheckFailed):
        ctx.close(1.0, 1.0 + 1e-9, rtol=1e-12)
    with pytest.raises(CheckFailed):
        ctx.close(np.nan, np.nan, atol=1.0)        # NaN never passes


def test_statistical_checks_have_the_stated_direction():
    ctx = _ctx()
    rng = np.random.default_rng(0)
    ctx.mean_leq(rng.normal(0.0, 1.0, 1000), 0.0, alpha=1e-6)        # true claim at the boundary: passes
    with pytest.raises(CheckFailed):
        ctx.mean_leq(rng.normal(1.0, 1.0, 1000), 0.0, alpha=1e-6)    # mean 1 > 0: rejected
    ctx.mean_close(rng.normal(0.0, 1.0, (2000, 3)), np.zeros(3))
    with pytest.raises(CheckFailed):
        ctx.mean_close(rng.normal(0.5, 1.0, (2000, 3)), np.zeros(3))


def test_forall_counts_examples_and_shrinks_failures():
    ctx = _ctx()
    ctx.forall(st.floats(0, 1), lambda x: ctx.leq(x, 1.0), fixed=[0.5])
    assert ctx.examples == 1 + PROFILES["ci"].max_examples
    ctx2 = _ctx()
    with pytest.raises(CheckFailed):
        ctx2.forall(st.floats(0, 10), lambda x: ctx2.leq(x, 5.0, label="x below 5"))


def test_forall_drawn_hands_the_check_a_generator():
    seen = []
    ctx = _ctx()
    ctx.forall_drawn(lambda rng: seen.append(float(rng.uniform(0.0, 1.0))), seeds=[7], max_examples=3)
    assert ctx.examples == 4 and seen[0] == np.random.default_rng(7).uniform(0.0, 1.0)
    ctx2 = _ctx()
    ctx2.forall_drawn(lambda rng: seen.append(rng.integers(0, 10**6)), seeds=(), max_examples=5)
    assert 1 <= ctx2.examples <= 5 and ctx2.examples == len(seen) - 4     # no fixed seed unless asked
    ctx3 = _ctx()
    with pytest.raises(CheckFailed, match="DrawnRNG"):        # a failure names the draws, shrunk
        ctx3.forall_drawn(lambda rng: ctx3.leq(float(rng.uniform(0.0, 1.0)), 0.5, label="u below 1/2"), seeds=())


def test_rng_streams_are_reproducible():
    a = _ctx().rng(3).normal(size=4)
    b = _ctx().rng(3).normal(size=4)
    c = _ctx().rng(4).normal(size=4)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("bad", ["000.theorem3", "0.thm3", "000.Thm3", "000.thm", "000.claim_x"])
def test_statement_ids_are_validated(bad):
    with pytest.raises(ValueError):
        _check_id(bad)


@pytest.mark.parametrize("good", ["000.thm3", "002.example8", "000.claim-stl-zero-variance", "004.lemma1"])
def test_good_ids(good):
    _check_id(good)


def _stmt(claim, erratum=None):
    return Statement("999.claim-runner", "runner test", "test", "exact", claim, erratum)


def test_run_statement_verdicts():
    assert runner.run_statement(_stmt(lambda ctx: ctx.leq(0, 1)), REFVI)["verdict"] == "pass"
    rec = runner.run_statement(_stmt(lambda ctx: ctx.leq(2, 1, label="two<=one")), REFVI)
    assert rec["verdict"] == "fail" and "two<=one" in rec["detail"]

    def boom(ctx):
        raise RuntimeError("kaput")
    rec = runner.run_statement(_stmt(boom), REFVI)
    assert rec["verdict"] == "error" and "kaput" in rec["detail"]
    assert CERT_KEYS <= set(rec)


def test_erratum_statement_needs_the_printed_form_to_fail():
    ERRATA["E999-1"] = Erratum("E999-1", "test", "printed", "corrected", "instance",
                               lambda ctx: ctx.geq(2.0, 1.0, label="printed form violated"))
    ERRATA["E999-2"] = Erratum("E999-2", "test", "printed", "corrected", "instance",
                               lambda ctx: ctx.geq(0.0, 1.0, label="printed form violated"))
    try:
        ok = runner.run_statement(_stmt(lambda ctx: ctx.leq(0, 1), "E999-1"), REFVI)
        assert ok["verdict"] == "pass" and ok["printed"] == "erratum" and ok["erratum"] == "E999-1"
        # the demonstration does not show a failure of the printed form: the statement must not pass
        assert runner.run_statement(_stmt(lambda ctx: ctx.leq(0, 1), "E999-2"), REFVI)["verdict"] == "fail"
        assert runner.run_statement(_stmt(lambda ctx: ctx.leq(0, 1), "E999-9"), REFVI)["verdict"] == "error"
    finally:
        ERRATA.pop("E999-1")
        ERRATA.pop("E999-2")


def test_select_by_prefix_and_glob():
    sts = [Statement(i, i, "s", "exact", lambda ctx: None) for i in ("000.thm3", "000.thm26", "002.thm2")]
    assert [s.id for s in runner.select(sts, ["000.*"])] == ["000.thm3", "000.thm26"]
    assert [s.id for s in runner.select(sts, ["002.thm2"])] == ["002.thm2"]
    assert [s.id for s in runner.select(sts, ["000.thm2"])] == []              # a prefix never splits a number
    assert [s.id for s in runner.select(sts, ["000.thm"])] == ["000.thm3", "000.thm26"]
    assert [s.id for s in runner.select(sts, ["000"])] == ["000.thm3", "000.thm26"]


def test_every_registered_erratum_is_used_by_a_statement():
    stmts = runner.load_statements()
    used = {s.erratum for s in stmts.values() if s.erratum}
    assert set(k for k in ERRATA if not k.startswith("E999")) <= used
    assert used <= set(ERRATA), f"statements name unregistered errata: {used - set(ERRATA)}"


def test_refvi_implements_the_protocol():
    for name in METHODS:
        assert callable(getattr(REFVI, name))
    assert load_implementation(None) is REFVI
    with pytest.raises(ValueError, match="module:object"):
        load_implementation("nocolon")


def test_cli_certificate_schema(tmp_path):
    path = tmp_path / "cert.json"
    sts = sorted(runner.load_statements())
    assert sts, "no statements registered"
    one = sts[0]
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--select", one, "--json", str(path)],
                          capture_output=True, text=True, timeout=600)
    cert = json.loads(path.read_text())
    # the original contract's keys, and the documented additions (docs/conformance.md, "The certificate")
    assert set(cert) == {"refvi_version", "profile", "implementation", "statements", "complete", "not_run",
                         "selection", "papers"}
    assert cert["complete"] is True and cert["not_run"] == []
    assert cert["profile"] == "ci" and cert["implementation"] == "refvi"
    assert [r["id"] for r in cert["statements"]] == [one]
    rec = cert["statements"][0]
    assert CERT_KEYS <= set(rec)
    assert rec["kind"] in ("exact", "symbolic", "statistical") and rec["printed"] in ("holds", "erratum")
    assert rec["verdict"] in ("pass", "fail", "error", "skip")
    assert proc.returncode == (0 if rec["verdict"] in ("pass", "skip") else 1)
    assert one in proc.stdout


def test_cli_exit_code_when_nothing_matches():
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--select", "999.nothing"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2


class _Outside:
    name = "outside"

    def energy(self, target, m, C, U, structure="tril"):
        return target.no_such_attribute          # a bug inside a method


def test_missing_method_is_skip_but_a_bug_inside_a_method_is_error():
    def needs_score(ctx):
        ctx.impl.score(None, None, None, None)

    def calls_energy(ctx):
        ctx.impl.energy(object(), None, None, None)

    def needs_adapter(ctx):
        ctx.adapter("online")

    impl = _Outside()
    assert runner.run_statement(_stmt(needs_score), impl)["verdict"] == "skip"
    assert runner.run_statement(_stmt(needs_adapter), impl)["verdict"] == "skip"
    rec = runner.run_statement(_stmt(calls_energy), impl)
    assert rec["verdict"] == "error" and "no_such_attribute" in rec["detail"]
    # refvi itself never skips: a missing adapter there is an error in refvi
    assert runner.run_statement(_stmt(lambda ctx: ctx.impl.no_such_method()), REFVI)["verdict"] == "error"


def test_erratum_demonstration_must_record_evidence():
    ERRATA["E999-3"] = Erratum("E999-3", "test", "printed", "corrected", "instance", lambda ctx: None)
    try:
        rec = runner.run_statement(_stmt(lambda ctx: ctx.leq(0, 1), "E999-3"), REFVI)
        assert rec["verdict"] == "fail" and "no evidence" in rec["detail"]
    finally:
        ERRATA.pop("E999-3")


def test_an_erratum_demonstration_that_ran_counts_its_examples():
    """The record's examples are the claim's plus the demonstration's (at least one when it ran); a declined
    demonstration adds none."""
    from refvi.verification.statement import InstanceSkipped

    def claim(ctx):
        ctx.leq(0.0, 1.0)

    def shows(ctx):
        ctx.leq(0.0, 1.0, label="the corrected form holds where the printed one fails")

    ERRATA["E999-5"] = Erratum("E999-5", "test", "printed", "corrected", "instance", shows)
    ERRATA["E999-6"] = Erratum(
        "E999-6", "test", "printed", "corrected", "instance", lambda ctx: (_ for _ in ()).throw(InstanceSkipped("no"))
    )
    try:
        alone = runner.run_statement(_stmt(claim), REFVI)["examples"]
        ran = runner.run_statement(_stmt(claim, "E999-5"), REFVI)
        declined = runner.run_statement(_stmt(claim, "E999-6"), REFVI)
    finally:
        ERRATA.pop("E999-5")
        ERRATA.pop("E999-6")
    assert ran["verdict"] == "pass" and ran["examples"] == alone + 1
    assert declined["examples"] == alone


def test_declines_of_an_erratum_demonstration_join_the_statement_counts():
    """A demonstration outside the implementation's capabilities is a declined instance of the statement: its
    reasons are added to the record's ``declined`` counts, beside the claim's own."""
    from refvi.verification.statement import InstanceSkipped

    def skip(reason):
        def run(_case):
            raise InstanceSkipped(reason)

        return run

    def demonstrate(ctx):
        skip("the demonstration needs a method this implementation lacks")(None)

    def claim(ctx):
        ctx.leq(0.0, 1.0)
        ctx.instance(skip("shared reason"), None)
        ctx.instance(skip("shared reason"), None)

    ERRATA["E999-4"] = Erratum("E999-4", "test", "printed", "corrected", "instance", demonstrate)
    try:
        rec = runner.run_statement(_stmt(claim, "E999-4"), REFVI)
    finally:
        ERRATA.pop("E999-4")
    assert rec["verdict"] == "pass"
    assert rec["declined"] == {"shared reason": 2, "the demonstration needs a method this implementation lacks": 1}
    assert rec["instances_skipped"] == 3
