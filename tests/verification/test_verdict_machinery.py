"""The verdict machinery, tested on instances where a plausible bug shows: each test is named for the bug it catches
(each was planted in the code and seen to fail this test before it was kept).

* coverage: how declines, value coverage, failures and unrun statements make a paper's verdict;
* compare: which differences between two certificates are reported (verdict, cases, declines, instances, slack);
* reproducers: the failure a record keeps (the shrunk instance, the last calls, a raised failure before deferred
  probes);
* resume: a partial certificate's records are kept and only the rest runs.
"""

import copy

import numpy as np
import pytest
from hypothesis import strategies as st

from refvi.verification.certificate import compare, coverage, reproducers
from refvi.verification.implementation import REFVI
from refvi.verification.running import runner
from refvi.verification.statement import PROFILES, CheckFailed, Context, Statement

STATEMENTS = runner.load_statements()


def _records(seed: str) -> list[dict]:
    """Passing records of every ci statement of a paper, as a run would make them (oracle-only ones marked)."""
    out = []
    for sid, st_ in STATEMENTS.items():
        if sid.startswith(seed + ".") and "ci" in st_.profiles:
            rec = dict(runner.statement_record(st_, "pass"), examples=1)
            if st_.oracle_only:
                rec["scope"] = "oracle-only"
            out.append(rec)
    return out


def _paper(records, seed="001", impl=REFVI):
    return coverage.papers(records, STATEMENTS, "ci", impl)[seed]


# ---- coverage -----------------------------------------------------------------------------------------------------


def test_a_mix_of_optional_and_required_declines_is_not_all_optional():
    records = _records("001")
    rec = records[0]
    rec.update(instances_skipped=3, declined_optional=1, detail="3 instance(s) declined: 1 x optional: frame; 2 x ...")
    blk = _paper(records)
    assert blk["verdict"] == "partial", "two required declines hidden behind one optional"
    assert any(rec["id"] in m for m in blk["missing"]) and not blk["optional"]
    rec["declined_optional"] = 3
    blk = _paper(records)
    assert blk["verdict"] == "certified" and any(rec["id"] in m for m in blk["optional"])
    rec["verdict"], rec["detail"] = "skip", "every instance declined: 3 x optional: frame"
    assert _paper(records)["verdict"] == "certified"  # skipped for the optional feature alone


def test_a_method_value_checked_on_too_few_calls_makes_the_paper_partial_naming_it():
    records = _records("001")
    one, two = [r for r in records if r["scope"] == "implementation"][:2]
    method = STATEMENTS[one["id"]].uses[0]
    one["values"] = {method: {"calls": 5, "checked": coverage.MIN_CHECKED_CALLS - 1, "used": 3, "probes": 0}}
    blk = _paper(records)
    assert blk["verdict"] == "partial"
    (line,) = [m for m in blk["missing"] if "value-checked" in m]
    assert method in line and f"{coverage.MIN_CHECKED_CALLS - 1} of 5 calls" in line and "3 used unchecked" in line
    # the threshold is summed over statements: another statement's checked call completes it
    two["values"] = {method: {"calls": 1, "checked": 1, "used": 0, "probes": 0}}
    blk = _paper(records)
    assert blk["verdict"] == "certified", blk["missing"]
    assert blk["methods"]["values"][method]["checked"] == coverage.MIN_CHECKED_CALLS
    assert blk["methods"]["values"][method]["statements"] == [one["id"], two["id"]]


def test_probes_and_unused_calls_are_not_value_checks():
    records = _records("004")
    records = [r for r in records if r["scope"] == "implementation"]
    records[0]["values"] = {"ngvi.natural_from_moment": {"calls": 7, "checked": 0, "used": 0, "probes": 7}}
    blk = _paper(records, "004")
    assert blk["verdict"] == "partial" and any("ngvi.natural_from_moment (0 of 7" in m for m in blk["missing"])


def test_a_missing_method_is_reported_as_missing_not_as_unchecked():
    class NoBoosting:
        name = "none"

    records = _records("001")
    records[0]["values"] = {"boosting.gram": {"calls": 0, "checked": 0, "used": 0, "probes": 0}}
    blk = _paper(records, impl=NoBoosting())
    assert "boosting.gram" in blk["methods"]["missing"]
    assert not any("value-checked" in m and "boosting.gram" in m for m in blk["missing"])


def test_a_failure_beats_everything_and_an_unrun_statement_is_named():
    records = _records("002")
    records[3]["verdict"] = "error"
    assert _paper(records, "002")["verdict"] == "failed"
    records[3]["verdict"] = "pass"
    gone = records.pop(5)
    blk = coverage.papers(records, STATEMENTS, "ci", REFVI, not_run=[gone["id"]])["002"]
    assert blk["verdict"] == "partial" and any(gone["id"] in m and "not run" in m for m in blk["missing"])
    assert blk["statements"]["not_run"] == 1


def test_oracle_only_statements_never_count_for_or_against():
    records = [r for r in _records("003") if r["scope"] != "oracle-only"]
    assert _paper(records, "003")["verdict"] == "certified"  # absent oracle-only rows are not "not selected"


def test_the_cli_table_flags_each_method_under_the_threshold():
    records = _records("001")
    records[0]["values"] = {
        "boosting.gap": {"calls": 6, "checked": 2, "used": 4, "probes": 0},
        "boosting.gram": {"calls": 9, "checked": 9, "used": 0, "probes": 0},
    }
    text = coverage.format_values({"001": _paper(records)})
    gap, gram = (next(line for line in text.splitlines() if m in line) for m in ("boosting.gap", "boosting.gram"))
    assert "not value-checked" in gap and "not value-checked" not in gram


# ---- compare ------------------------------------------------------------------------------------------------------


def _cert(records, profile="ci", name="x"):
    return {"implementation": name, "profile": profile, "refvi_version": "0", "statements": records}


def _rec(sid, verdict="pass", slack=0.5, examples=4, skipped=0, instances=None):
    return {
        "id": sid,
        "verdict": verdict,
        "worst_slack": slack,
        "examples": examples,
        "instances_skipped": skipped,
        "instances": instances if instances is not None else [[0, 0, "ran", slack], [0, 1, "ran", slack]],
    }


def test_compare_reports_a_slack_change_and_only_above_its_tolerance():
    a, b = _cert([_rec("000.thm1", slack=0.5)]), _cert([_rec("000.thm1", slack=0.5 * (1 + 1e-3))])
    diff = compare.compare(a, b)
    assert [s["id"] for s in diff["slacks"]] == ["000.thm1"] and diff["slacks"][0]["relative"] == pytest.approx(
        1e-3, rel=1e-2
    )
    assert not compare.compare(a, _cert([_rec("000.thm1", slack=0.5 * (1 + 1e-9))]))["slacks"]
    assert compare.compare(a, _cert([_rec("000.thm1", slack=None)]))["slacks"]  # a slack that vanished


def test_compare_reports_changed_cases_declines_verdicts_and_instances():
    base = _rec("000.thm1")
    for change, field in (
        ({"examples": 3}, "examples"),
        ({"instances_skipped": 1}, "instances_skipped"),
        ({"verdict": "fail"}, "verdict"),
    ):
        other = dict(base, **change)
        (row,) = compare.compare(_cert([base]), _cert([other]))["statements"]
        assert field in row["differs"], change
    other = dict(base, instances=[[0, 0, "ran", 0.5], [0, 1, "declined", None]])
    (inst,) = compare.compare(_cert([base]), _cert([other]))["instances"]
    assert (inst["site"], inst["index"], inst["this"], inst["other"]) == ("0", 1, "ran", "declined")
    missing = compare.compare(_cert([base, _rec("000.thm2")]), _cert([base]))
    assert missing["statements"] == [{"id": "000.thm2", "this": "pass", "other": "absent"}]
    assert not missing["same_selection"]


# ---- reproducers: which failure a record keeps ----------------------------------------------------------------


class _Log:
    """An implementation whose protocol method ``energy`` returns its argument: each call is logged."""

    name = "log"

    def energy(self, target, m, C, U):
        return np.asarray(m, dtype=float)

    def entropy(self, target, m, C, U, structure="sym"):
        return np.asarray(m, dtype=float)

    stl = score = entropy


def _run_claim(claim):
    st_ = Statement(
        "000.claim-machinery", "machinery", "test", "exact", claim, uses=("energy", "entropy", "score", "stl")
    )
    return runner.run_statement(st_, _Log())


def test_the_kept_failure_is_the_shrunk_instance_not_the_first_found():
    def claim(ctx):
        def check(x):
            ctx.leq(ctx.impl.energy(None, np.array([float(x)]), None, None)[0], 1000.0, label="x <= 1000")

        ctx.forall(st.integers(0, 10**6), check)

    rec = _run_claim(claim)
    assert rec["verdict"] == "fail"
    (kept,) = rec["reproducers"]
    assert kept["instance"] == "1001", kept  # Hypothesis' minimal failing example, replayed last
    assert kept["calls"][-1]["arguments"]["m"]["array"] == [1001.0]


def test_an_error_inside_an_instance_keeps_its_instance_beside_an_earlier_deferred_failure():
    """A statement that has a deferred failing check and then errors inside an instance: the error's reproducer is
    that instance (with its calls), noted once, and the deferred failure is kept after it."""

    def claim(ctx):
        ctx.close(1.0, 2.0, label="a deferred failure first", defer=True)

        def check(x):
            ctx.impl.energy(None, np.array([x]), None, None)
            raise RuntimeError("raised inside the instance")

        ctx.forall(None, check, fixed=[3.0])

    rec = _run_claim(claim)
    assert rec["verdict"] == "error" and "raised inside the instance" in rec["detail"]
    first, deferred = rec["reproducers"]
    assert first["instance"] == "3.0" and first["error"].startswith("RuntimeError") and first["calls"]
    assert deferred["check"]["label"] == "a deferred failure first"


def test_the_kept_calls_are_the_last_of_each_method_of_the_instance():
    def claim(ctx):
        def check(n):
            for k in range(n):
                ctx.impl.energy(None, np.array([float(k)]), None, None)
            ctx.impl.score(None, np.array([-1.0]), None, None)
            for k in range(n, n + 2):
                ctx.impl.entropy(None, np.array([float(k)]), None, None)
            ctx.impl.stl(None, np.array([50.0]), None, None)
            ctx.impl.energy(None, np.array([99.0]), None, None)
            ctx.leq(1.0, 0.0, label="always fails after the calls")

        ctx.instance(check, 12)

    rec = _run_claim(claim)
    calls = rec["reproducers"][0]["calls"]
    shown = [(c["method"], c["arguments"]["m"]["array"]) for c in calls]
    assert shown == [("entropy", [13.0]), ("stl", [50.0]), ("energy", [99.0])]


def test_a_raised_failure_comes_before_the_deferred_probes():
    def claim(ctx):
        ctx.refuses(lambda: ctx.impl.energy(None, np.array([1.0]), None, None), label="probe that is not refused")

        def check(x):
            ctx.leq(x, 0.0, label="the raised failure")

        ctx.instance(check, 2.0)

    rec = _run_claim(claim)
    assert rec["verdict"] == "fail"
    labels = [r["check"]["label"] for r in rec["reproducers"]]
    assert labels == ["the raised failure", "probe that is not refused"]


def test_a_reproducer_record_names_the_check_sides_and_tolerance():
    ctx = Context(None, PROFILES["ci"], "t")
    with pytest.raises(CheckFailed):
        ctx.instance(lambda _: ctx.close(np.array([1.0, 2.0]), np.array([1.0, 2.5]), atol=0.1, label="pair"))
    rec = reproducers.record_of(ctx.failures[0])
    assert rec["check"]["returned_side"] == 2.0 and rec["check"]["expected_side"] == 2.5
    assert "atol=0.1" in rec["check"]["tolerance"] and "index (1,)" in rec["check"]["tolerance"]


def test_a_comparison_records_its_worst_error_as_its_slack():
    """close() records -max |lhs - rhs| as the check's slack (what tightness and worst_slack report): an exact
    match, including two empty arrays, has slack 0; a mismatch within tolerance its negative error."""
    ctx = Context(None, PROFILES["ci"], "t")
    ctx.instance(lambda _: ctx.close(np.zeros((0, 3)), np.zeros((0, 3)), label="empty"))
    ctx.instance(lambda _: ctx.close(np.array([1.0, 2.0]), np.array([1.0, 2.0]), label="same"))
    ctx.instance(lambda _: ctx.close(np.array([1.0, 2.0]), np.array([1.0, 2.05]), atol=0.1, label="near"))
    ctx.instance(lambda _: ctx.true(True, label="holds"))  # a boolean claim that holds: slack 0
    slack = {e.label: e.slack for e in ctx.evidence}
    assert slack["empty"] == 0.0 and slack["same"] == 0.0 and slack["near"] == pytest.approx(-0.05)
    assert slack["holds"] == 0.0 and ctx.worst_slack == pytest.approx(-0.05)


def test_a_record_keeps_the_first_ten_failures_in_order():
    """docs/conformance.md: ``reproducers`` holds the first ten failing instances, as they failed (a cap one
    higher or lower, or a record keeping the last ones, fails this)."""
    failures = [{"site": "probe", "index": k, "instance": k} for k in range(13)]
    kept = reproducers.records(failures)
    assert [r["index"] for r in kept] == list(range(10))
    assert [r["index"] for r in reproducers.records(failures[:4])] == [0, 1, 2, 3]


# ---- resume -------------------------------------------------------------------------------------------------------


def test_resume_keeps_the_records_it_is_given_and_runs_only_the_rest():
    ids = ["002.lemma12", "002.example8"]
    full = runner.run(ids, "ci", REFVI)
    planted = copy.deepcopy(full)  # as an interrupted run leaves it: the first record, the second not run
    planted["statements"] = [r for r in planted["statements"] if r["id"] == ids[0]]
    planted["statements"][0]["examples"] = 12345  # a record the resumed run must keep, not recompute
    planted.update(complete=False, not_run=[ids[1]])
    cert = runner.run(None, "ci", REFVI, resume=planted)
    by_id = {r["id"]: r for r in cert["statements"]}
    assert by_id["002.lemma12"]["examples"] == 12345 and by_id["002.example8"]["verdict"] == "pass"
    assert cert["complete"] and not cert["not_run"]
    with pytest.raises(ValueError, match="profile"):
        runner.run(ids, "deep", REFVI, resume=planted)


def test_power_is_relative_to_a_positive_bound_below_one():
    """mean_leq's recorded power: (z_(1-alpha) + z_0.8) se / bound for any positive bound, 0.5 here (a rule that took
    the draws' magnitude as the scale for bounds up to 1 reports 0.5 / 0.1 = 5x less power)."""
    import math

    from scipy.stats import norm

    ctx = Context(None, PROFILES["ci"], "t")
    x = np.array([0.05, 0.15, 0.1, 0.08, 0.12, 0.1])
    ctx.instance(lambda _: ctx.mean_leq(x, 0.5, label="small bound"))
    se = x.std(ddof=1) / math.sqrt(x.size)
    expected = (norm.ppf(1 - 1e-6) + norm.ppf(0.8)) * se / 0.5
    assert ctx.power["resolution"] == pytest.approx(expected, rel=1e-9)


def test_a_call_outside_a_bad_input_probe_is_not_counted_as_one():
    """Value coverage: a call a statement makes and ignores is an unchecked call, not a bad-input probe (a ledger that
    started inside a probe would count every call before the first probe as one, hiding an ignored value)."""

    def claim(ctx):
        ctx.impl.energy(None, np.array([3.0]), None, None)  # called, its value ignored

    rec = _run_claim(claim)
    row = rec["values"]["energy"]
    assert row["calls"] == 1 and row["probes"] == 0 and row["checked"] == 0 and row["used"] == 0, row


# ---- survivors of mutation sweep s46 (tests/mutation/triage.toml): each test fails on the mutant it names -------
def test_a_long_failure_detail_keeps_its_last_2000_characters():
    """A record's detail is the end of the message (where the failing check is), at most 2000 characters."""
    from refvi.verification.running import execute

    text = "".join(f"{k:05d}" for k in range(1000))  # 5000 characters, every position distinct
    assert execute._short(ValueError(text)) == text[-2000:]


#: the first integers(0, 2**62) of two statement streams, drawn 2026-11-29 (sha256 of "<id>/<stream>", 8 bytes)
GOLDEN_RNG = {"000.thm1/targets": 4579673062487879534, "000.thm1/0": 2187221959863561763}


def test_a_statement_rng_is_the_same_in_every_version():
    """Instances a certificate recorded are drawn again the same way by any later refvi: a statement's generator is
    fixed by its id and stream (these values were drawn when the derivation was written down)."""
    ctx = Context(REFVI, PROFILES["ci"], statement_id="000.thm1")
    assert ctx.rng("targets").integers(0, 2**62) == GOLDEN_RNG["000.thm1/targets"]
    assert ctx.rng(0).integers(0, 2**62) == GOLDEN_RNG["000.thm1/0"]


def test_a_decay_check_with_no_values_at_a_horizon_is_a_failure_not_a_nan():
    ctx = Context(REFVI, PROFILES["ci"], statement_id="x")
    with pytest.raises(CheckFailed, match="positive finite values at every horizon"):
        ctx.decay([10, 100, 1000], [np.ones(4), np.empty(0), np.ones(4)], -0.5, label="empty")


def test_a_run_on_a_scheduler_without_a_worker_count_passes_one(monkeypatch):
    from refvi.verification.running import parallel

    handed = []

    def pool(ids, impl_spec, profile, workers, scheduler, durations, progress, timeout, artifacts=None):
        handed.append((workers, scheduler))
        for sid in ids:
            progress(runner.run_statement(STATEMENTS[sid], REFVI, profile))

    monkeypatch.setattr(parallel, "run_parallel", pool)
    runner.run(["002.lemma12"], "ci", None, scheduler="tcp://127.0.0.1:8786")
    assert handed == [(1, "tcp://127.0.0.1:8786")]


def test_a_probe_outside_the_capabilities_is_declined_not_failed():
    from refvi.verification.statement import InstanceSkipped

    def claim(ctx):
        ctx.leq(0.0, 1.0)

        def outside():
            raise InstanceSkipped("the probe needs a structure this implementation declines")

        ctx.refuses(outside, label="bad structure")

    rec = runner.run_statement(Statement("999.claim-probe", "probe test", "test", "exact", claim), REFVI)
    assert rec["verdict"] == "pass", rec["detail"]
    assert rec["declined"] == {"the probe needs a structure this implementation declines": 1}


def test_the_reproducer_files_hold_the_first_failure(tmp_path):
    """Of several failing instances the .npz/.py files replay the first (the one the verdict's detail names)."""
    fails = [
        {"site": 0, "index": k, "instance": f"instance {k}", "calls": [], "check": {"lhs": float(k), "rhs": 0.0}}
        for k in (3, 7)
    ]
    npz, _ = reproducers.write_artifacts(str(tmp_path), "000.thm1", "ci", None, fails, "fail", "detail")
    art = reproducers.load(npz)
    assert art["instance"] == "instance 3" and art["index"] == 3


def test_replay_prints_the_first_failing_check_of_the_instance(tmp_path, monkeypatch):
    """An instance that fails two checks (both deferred): its reproducer replays to the first, as the run's detail
    lists it first."""
    import sys

    def claim(ctx):
        def check(x):
            v = ctx.impl.energy(None, np.array([float(x)]), None, None)[0]
            ctx.close(v, -1.0, label="the first check", defer=True)
            ctx.close(v, -2.0, label="the second check", defer=True)

        ctx.forall(None, check, fixed=[1.0])

    stmt = Statement("000.claim-machinery", "machinery", "test", "exact", claim, uses=("energy",))
    monkeypatch.setitem(sys.modules, "replay_log_mod", type(sys)("replay_log_mod"))
    sys.modules["replay_log_mod"].IMPL = _Log()
    rec = runner.run_statement(stmt, _Log(), "ci", artifacts=str(tmp_path), impl_spec="replay_log_mod:IMPL")
    assert rec["verdict"] == "fail" and rec["detail"].index("the first check") < rec["detail"].index("the second")
    monkeypatch.setattr(runner, "load_statements", lambda: {stmt.id: stmt})
    lines = []
    assert reproducers.replay(rec["artifacts"][0], "replay_log_mod:IMPL", out=lines.append) == 1
    checks = [x for x in lines if x.lstrip().startswith("check:")]
    assert len(checks) == 1 and checks[0].lstrip().startswith("check: the first check: 1.0"), lines
    # the replayed call has the recorded arguments: no note that they differ
    assert any(x.lstrip().startswith("call: energy(") for x in lines) and not any("differ" in x for x in lines)


def test_junit_messages_are_the_first_300_characters_and_the_text_the_whole_detail():
    import xml.etree.ElementTree as ET

    from refvi.verification.certificate import junit

    long = "".join(f"{k:05d}" for k in range(200))  # 1000 distinct characters
    recs = [
        dict(runner.statement_record(STATEMENTS[sid], verdict), detail=long)
        for sid, verdict in (("000.thm1", "fail"), ("000.thm3", "error"), ("000.thm6", "skip"))
    ]
    cert = {"implementation": "x", "statements": recs, "papers": {}, "complete": True}
    cases = ET.fromstring(junit.to_xml(cert)).findall(".//testcase")
    for case, tag in zip(cases, ("failure", "error", "skipped"), strict=True):
        assert case.find(tag).get("message") == long[:300]
    assert cases[0].find("failure").text == long and cases[1].find("error").text == long


def test_a_decay_check_weighs_each_horizons_variance_by_its_squared_weight():
    """The exponent's standard error is sqrt(sum_i w_i^2 var_i) for the least-squares weights w (which sum to zero):
    with equal noise at every horizon the sum of w_i var_i is 0, so a standard error taken from it passes nothing
    that the noise allows: here values decaying like T^-0.5 with the same relative noise (sd 78 % of the mean) at
    every horizon, against a claimed T^-1 (slack 0.2), pass only because the noise is that large (se 0.085)."""
    ctx = Context(REFVI, PROFILES["ci"], statement_id="x")
    T = [10, 100, 1000]
    noise = np.array([0.1, 0.3, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    values = [t**-0.5 * noise for t in T]
    slope = ctx.decay(T, values, -1.0, slack=0.2, label="noisy")
    assert slope > -0.8 and not ctx.deferred  # measured above the claim, within its noise: passes


def test_mean_close_bands_each_coordinate_at_the_two_sided_bonferroni_quantile():
    """The band of each of k coordinates is z se with z the normal quantile at 1 - alpha / (2 k) (two-sided, Bonferroni
    over k): alpha = 1e-6 and k = 2 give z = 5.0263; a mean 5.00 se off passes and 5.05 se off fails."""
    from scipy.stats import norm

    z = norm.ppf(1.0 - 1e-6 / 4.0)
    assert 5.02 < z < 5.03
    n = 400
    base = np.tile([1.0, -1.0], n // 2)
    se = np.std(base, ddof=1) / np.sqrt(n)
    for c, passes in ((5.00, True), (5.05, False)):
        X = np.stack([base + c * se, base], axis=1)
        ctx = Context(REFVI, PROFILES["ci"], statement_id="x")
        if passes:
            ctx.mean_close(X, np.zeros(2), alpha=1e-6, label="within the band")
            # its power: the bias flagged with probability 80 %, (z + z_0.8) se, relative to the draws' magnitude
            # (the target is 0)
            scale = np.max(np.mean(np.abs(X), axis=0))
            want = (z + norm.ppf(0.8)) * np.max(np.std(X, axis=0, ddof=1)) / np.sqrt(n) / scale
            assert ctx.power["resolution"] == pytest.approx(want, rel=1e-12)
        else:
            with pytest.raises(CheckFailed):
                ctx.mean_close(X, np.zeros(2), alpha=1e-6, label="outside the band")
    # relative to max |target| when the target is not 0 (here 0.5: a scale below 1 is still a scale)
    ctx = Context(REFVI, PROFILES["ci"], statement_id="x")
    X = np.stack([base + 0.5, base], axis=1)
    ctx.mean_close(X, np.array([0.5, 0.0]), alpha=1e-6, label="a target of scale 0.5")
    want = (z + norm.ppf(0.8)) * np.max(np.std(X, axis=0, ddof=1)) / np.sqrt(n) / 0.5
    assert ctx.power["resolution"] == pytest.approx(want, rel=1e-12)


def test_tightness_is_none_for_a_violated_negative_bound_and_for_a_zero_one():
    from refvi.verification.statement.evidence import tightness

    assert tightness(-5.0, -0.5) == pytest.approx(0.1)  # both negative: 10x headroom
    assert tightness(1.0, -1.0) is None  # a violated bound below zero has no headroom to report
    assert tightness(0.0, -1.0) is None  # (and no division by zero)
    assert tightness(-1.0, 0.0) is None  # a zero bound is a sign, not a scale


def test_an_oracle_class_property_still_reads_after_its_marks_pass_through():
    from refvi.verification.statement.provenance.instrument import _pass_through_class

    class Oracle:
        def __init__(self, x):
            self.x = x

        @property
        def doubled(self):
            return 2.0 * self.x

    _pass_through_class(Oracle)
    assert Oracle(3.0).doubled == 6.0


def test_a_certificate_without_a_complete_flag_is_compared_with_the_reference(capsys, tmp_path):
    """Certificates written before the flag existed are complete runs: --compare compares them."""
    import argparse

    from refvi.verification.certificate import report

    recs = [dict(runner.statement_record(STATEMENTS["000.thm1"], "pass"), examples=1, seconds=0.1)]
    cert = {"implementation": "x", "profile": "ci", "statements": recs, "papers": {}}
    other = {"implementation": "y", "profile": "ci", "statements": [dict(recs[0], verdict="fail")], "papers": {}}
    args = argparse.Namespace(junit_xml=None, artifacts=None, impl=None, strict=False, require=None)
    report.report(args, cert, None, other)
    assert "comparison" in cert


def test_an_array_valued_argument_is_never_declined_by_a_value_list():
    from refvi.verification.protocol.capabilities import _member

    assert _member(np.array([1.0, 2.0]), ("tril", "sym")) is True  # `in` would raise: ambiguous truth value
    assert _member("tril", ("tril", "sym")) is True and _member("full", ("tril", "sym")) is False


def test_a_failed_boolean_claim_records_a_slack_of_minus_one():
    """ctx.true's slack is 0 when it holds and -1 when it fails (the certificate's worst slack of such a claim)."""

    def claim(ctx):
        ctx.true(False, label="a false identity")

    rec = runner.run_statement(Statement("999.claim-bool", "bool test", "test", "exact", claim), REFVI)
    assert rec["verdict"] == "fail" and rec["worst_slack"] == -1.0


def test_a_mean_check_needs_two_finite_draws():
    ctx = Context(REFVI, PROFILES["ci"], statement_id="x")
    for values in ([0.5], [0.5, np.nan, 0.1]):
        with pytest.raises(CheckFailed, match=">= 2 finite Monte Carlo values"):
            ctx.mean_leq(values, 1.0, label="few")


def test_a_check_counts_every_time_it_ran():
    """The certificate's per-check record counts the times a check ran (a check that ran once is weaker evidence)."""

    def claim(ctx):
        for lhs in (0.2, 0.5, 0.4):
            ctx.bound(lhs, 1.0, label="a bound")

    rec = runner.run_statement(Statement("999.claim-count", "count test", "test", "exact", claim), REFVI)
    (check,) = rec["checks"].values()
    assert check["count"] == 3 and check["tightness"] == 0.5


def test_a_watchdog_that_did_not_fire_leaves_no_file(tmp_path):
    from refvi.verification.running import timeouts

    with timeouts.worker_watchdog("000.thm1", (str(tmp_path), 60.0)):
        pass
    assert list(tmp_path.iterdir()) == []
    kept = tmp_path / "000.thm2.timeout"  # a traceback a fired watchdog wrote is kept for the report
    with timeouts.worker_watchdog("000.thm2", (str(tmp_path), 60.0)):
        pass
    kept.write_text("Thread 0x1 (most recent call first):")
    with timeouts.worker_watchdog("000.thm3", (str(tmp_path), 60.0)):
        kept.write_text("Thread 0x1 (most recent call first):")
    assert kept.is_file()


def test_the_statement_rows_print_without_tqdm(monkeypatch, capsys):
    import sys

    from refvi.verification.certificate import report

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    show, close = report.progress(3, bar=True)
    show(dict(runner.statement_record(STATEMENTS["000.thm1"], "pass"), examples=1, seconds=0.1))
    close()
    assert "000.thm1" in capsys.readouterr().out


def test_a_decay_check_needs_three_horizons_and_takes_more():
    ctx = Context(REFVI, PROFILES["ci"], statement_id="x")
    T = [10, 100, 1000, 10000]
    assert ctx.decay(T, [[t**-1.0] for t in T], -1.0, label="four horizons") == pytest.approx(-1.0)
    with pytest.raises(CheckFailed, match=">= 3 horizons"):
        ctx.decay(T[:2], [[1.0], [0.1]], -1.0, label="two")


def test_an_affine_base_needs_its_inner_law_and_keeps_it():
    from refvi.verification.protocol import bases

    inner = bases.BaseSpec("gaussian")
    b = bases.affine(inner, [0.0, 1.0], np.eye(2))
    assert b.inner is inner and b.dim == 2
    assert repr(b) == "affine(gaussian(), shift=[0.0, 1.0], scale=[[1.0, 0.0], [0.0, 1.0]])"  # named in a detail
    with pytest.raises(ValueError, match="needs inner, shift and scale"):
        bases.BaseSpec("affine", shift=np.zeros(2), scale=np.eye(2))
    with pytest.raises(ValueError, match="unknown base kind 'cauchy'; expected one of"):
        bases.BaseSpec("cauchy")
    # discreteness is the inner law's: an affine image of Rademacher draws is discrete, of Gaussian ones is not
    assert bases.affine(bases.BaseSpec("rademacher"), [0.0], [[2.0]]).discrete and not b.discrete
    assert bases.BaseSpec("two_point", p=0.3).discrete and not bases.BaseSpec("student_t", nu=5.0).discrete
    with pytest.raises(ValueError, match="read-only"):
        b.shift[0] = 3.0  # frozen with the spec: an instance's base cannot change under a statement


def test_every_function_of_an_oracle_module_passes_marks_through():
    """pass_marks_through wraps each function and class a module defines, past the names it imports (which come first
    in the module's namespace)."""
    import refvi.verification.oracles as oracles
    from refvi.verification.oracles import sgd_reference
    from refvi.verification.statement import provenance

    provenance.pass_marks_through(oracles)
    for name in ("model_params", "neg_grad_logp", "neg_logp", "point_of_gradient", "prox_entropy", "sgd"):
        assert getattr(getattr(sgd_reference, name), "_passes_marks", False), name


def test_the_statements_see_numpy_and_math_through_the_marking_wrappers():
    """instrument(statements) gives every statement module that imports numpy as np (and math) the marking versions,
    so what a statement computes inline from a reported value stays marked; a module without them gets none."""
    import math

    import refvi.verification.statements as statements
    from refvi.verification.statement import provenance
    from refvi.verification.statement.provenance.instrument import MarkingMath, MarkingNumpy
    from refvi.verification.statements.convergence_000 import _user_models, fit_defaults

    provenance.instrument(statements)
    provenance.instrument(statements)  # idempotent
    assert isinstance(fit_defaults.np, MarkingNumpy) and isinstance(fit_defaults.math, MarkingMath)
    assert _user_models.numpy is np  # the name numba compiles against stays NumPy itself
    assert not hasattr(statements.convergence_000, "np") and math.pi == fit_defaults.math.pi  # a package: no np


def test_the_marks_of_a_list_are_the_union_of_its_items():
    from refvi.verification.statement.provenance.marks import marks_of

    led = __import__("refvi.verification.statement.provenance", fromlist=["Ledger"]).Ledger()
    a = led.mark(np.ones(2), led.call("a"))
    b = led.mark(np.ones(2), led.call("b"))
    assert marks_of([a, b]) == marks_of(a) | marks_of(b) and marks_of(a) != marks_of(b)
    assert marks_of([a, 1.0]) == marks_of(a)


def test_a_timeout_below_one_second_is_a_limit_and_zero_is_none():
    from refvi.verification.running import timeouts

    assert timeouts.limit("ci", 0.5) == 0.5 and timeouts.limit("ci", 0.0) == 0.0
    with pytest.raises(ValueError, match="--timeout must be >= 0 seconds"):
        timeouts.limit("ci", -1.0)


def test_method_values_sum_the_counts_a_record_has_and_read_a_missing_one_as_zero():
    recs = [
        {"id": "000.thm1", "values": {"energy": {"calls": 3, "checked": 2, "used": 1, "probes": 0}}},
        {"id": "000.thm3", "values": {"energy": {"calls": 2, "used": 1}}},  # no "checked" nor "probes"
    ]
    row = coverage.method_values(recs)["energy"]
    assert row == {"calls": 5, "checked": 2, "used": 2, "probes": 0, "statements": ["000.thm1"]}


def test_exit_codes_of_a_certificate():
    """0: passed on the implementation's own code; 1: a fail or an error; 2: nothing of the implementation exercised;
    3: a required paper not certified."""
    from refvi.verification.certificate.record import EXIT_NOT_CERTIFIED, exit_code

    def cert(*verdicts):
        return {
            "statements": [
                dict(runner.statement_record(STATEMENTS["000.thm1"], v), scope="implementation") for v in verdicts
            ],
            "papers": {},
        }

    assert exit_code(cert("pass")) == 0
    assert exit_code(cert("pass", "fail")) == 1 and exit_code(cert("error", "pass")) == 1
    assert exit_code(cert("skip")) == 2
    assert exit_code(cert("pass"), require=["000"]) == EXIT_NOT_CERTIFIED == 3  # paper 000 has no verdict here


def test_has_method_needs_a_callable_that_can_be_read():
    class Impl:
        energy = staticmethod(lambda: None)
        online = None

        @property
        def entropy(self):
            raise RuntimeError("not available in this build")

    assert coverage.has_method(Impl(), "energy")
    assert not coverage.has_method(Impl(), "entropy")  # a property that raises: not offered
    assert not coverage.has_method(Impl(), "online.run") and not coverage.has_method(Impl(), "score")


def test_a_generated_block_is_rewritten_between_its_markers_and_missing_markers_are_named(tmp_path):
    from refvi.verification.certificate import summary

    rel, (start, end), _ = summary.BLOCKS["papers"]
    page = tmp_path / rel
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f"before\n{start}\nstale\n{end}\nafter\n", encoding="utf-8")
    assert summary.update("papers", tmp_path) is True
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"before\n{start}") and text.endswith(f"{end}\nafter\n") and "stale" not in text
    assert summary.update("papers", tmp_path) is False  # already up to date
    page.write_text(f"before\n{start}\nno end marker\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="markers"):
        summary.update("papers", tmp_path)


def test_a_failing_comparison_with_a_non_finite_side_reports_an_infinite_error():
    """close() against a NaN or an infinity on either side fails with max |lhs - rhs| = inf (never nan, which would
    sort as no error at all), and equal() records 0 for a match and 1 for a mismatch."""
    for lhs, rhs in ((np.nan, 1.0), (1.0, np.nan), (np.inf, 1.0), (np.array([1.0, np.nan]), np.array([1.0, 2.0]))):
        ctx = Context(REFVI, PROFILES["ci"], statement_id="x")
        with pytest.raises(CheckFailed, match=r"max \|lhs - rhs\| = inf"):
            ctx.close(lhs, rhs, rtol=1e-9, label="non-finite")
    ctx = Context(REFVI, PROFILES["ci"], statement_id="x")
    ctx.equal(3, 3, label="same")
    assert (ctx.evidence[-1].lhs, ctx.evidence[-1].slack) == (0.0, 0.0)
    with pytest.raises(CheckFailed):
        ctx.equal(3, 4, label="different")
    assert (ctx.evidence[-1].lhs, ctx.evidence[-1].slack) == (1.0, -1.0)


@pytest.mark.parametrize("relation", ["leq", "geq"])
def test_leq_and_geq_allow_atol_plus_rtol_times_the_bound_and_no_more(relation):
    """ctx.leq(lhs, rhs) passes for lhs <= rhs + atol + rtol |rhs|, ctx.geq for lhs >= rhs - atol - rtol |rhs|: a value
    just inside that allowance passes, one just outside fails, and each tolerance counts on its own and added up."""
    from refvi.verification.statement import PROFILES, CheckFailed, Context

    sign = 1.0 if relation == "leq" else -1.0
    for atol, rtol in ((0.3, 0.0), (0.0, 0.2), (0.3, 0.2)):
        allowance = atol + rtol * 2.0  # the bound is rhs = -2 or 2: |rhs| = 2
        for rhs in (2.0, -2.0):
            ctx = Context(None, PROFILES["ci"], "test")
            check = getattr(ctx, relation)
            check(rhs + sign * (allowance - 1e-9), rhs, atol=atol, rtol=rtol, label="inside")
            with pytest.raises(CheckFailed):
                check(rhs + sign * (allowance + 1e-9), rhs, atol=atol, rtol=rtol, label="outside")


def test_member_checks_each_value_against_its_own_admissible_set():
    """ctx.member(values, allowed): value i must be in allowed[i]; the failure names how many fell outside and the
    first index, a count mismatch is a failure of its own, a scalar value is checked against one set, and the
    evidence records the number outside (0 when all are in)."""
    from refvi.verification.statement import PROFILES, CheckFailed, Context

    ctx = Context(None, PROFILES["ci"], "test")
    ctx.member(np.array([2, 0, 5]), [[1, 2], [0], [5, 6, 7]], label="in")
    ctx.member(3, [3, 4], label="scalar")
    assert [(e.label, e.lhs, e.rhs, e.relation, e.passed) for e in ctx.evidence] == [
        ("in", 0.0, 0.0, "member", True),
        ("scalar", 0.0, 0.0, "member", True),
    ]
    with pytest.raises(CheckFailed, match=r"^out: 2 of 3 outside the admissible set; the first at index 1: 1 not in"):
        ctx.member(np.array([2, 1, 9]), [[1, 2], [0], [5, 6, 7]], label="out")
    assert ctx.evidence[-1].lhs == 2.0 and ctx.evidence[-1].slack == -2.0 and not ctx.evidence[-1].passed
    with pytest.raises(
        CheckFailed, match=r"^one: 1 of 1 outside the admissible set; the first at index 0: 3 not in \[4, 5\]"
    ):
        ctx.member(3, [4, 5], label="one")
    with pytest.raises(CheckFailed, match=r"^sizes: 2 values, 3 sets"):
        ctx.member(np.array([1, 2]), [[1], [2], [3]], label="sizes")


def test_close_refuses_complex_values_and_fails_on_a_shape_mismatch():
    """ctx.close compares real arrays of one shape: a complex side is a TypeError (a float cast would drop the
    imaginary part), arrays of different shapes fail the check (no broadcasting), whatever their values."""
    from refvi.verification.statement import PROFILES, CheckFailed, Context

    ctx = Context(None, PROFILES["ci"], "test")
    with pytest.raises(TypeError, match="complex values"):
        ctx.close(np.array([1.0 + 1e-3j]), np.array([1.0]), rtol=1.0, label="cplx")
    with pytest.raises(CheckFailed, match=r"shape mismatch \(3,\) vs \(1, 3\)"):
        ctx.close(np.ones(3), np.ones((1, 3)), atol=1.0, label="shape")
    ctx.close(np.ones(3), np.ones(3) + 0.5, atol=0.5, label="ok")
    assert ctx.evidence[-1].passed and ctx.evidence[-1].label == "ok"


class _Switch(_Log):
    """``energy`` returns its argument, or raises while ``broken`` is set (an implementation that changed)."""

    broken = False

    def energy(self, target, m, C, U):
        if self.broken:
            raise FloatingPointError("energy overflowed")
        return np.asarray(m, dtype=float)


def _artifact(tmp_path, monkeypatch, claim, module="replay_switch_mod"):
    """Run ``claim`` as 000.claim-machinery against a _Switch, loadable as ``module:IMPL``; the failure's .npz and
    the statement (``load_statements`` patched to know it)."""
    import sys

    stmt = Statement("000.claim-machinery", "machinery", "test", "exact", claim, uses=("energy",))
    monkeypatch.setitem(sys.modules, module, type(sys)(module))
    sys.modules[module].IMPL = impl = _Switch()
    rec = runner.run_statement(stmt, impl, "ci", artifacts=str(tmp_path), impl_spec=f"{module}:IMPL")
    assert rec["verdict"] == "fail", rec
    monkeypatch.setattr(runner, "load_statements", lambda: {stmt.id: stmt})
    return rec["artifacts"][0], impl


def test_replay_reports_an_implementation_that_now_raises_or_now_passes(tmp_path, monkeypatch):
    """Replaying a failing instance: 1 with the call's exception and verdict error when the implementation now raises,
    0 and verdict pass when it now gives the right value."""
    target = {"value": 1.0}

    def claim(ctx):
        ctx.forall(
            None, lambda x: ctx.close(ctx.impl.energy(None, np.array([x]), None, None)[0], target["value"]), fixed=[2.0]
        )

    npz, impl = _artifact(tmp_path, monkeypatch, claim)
    impl.broken = True
    lines: list[str] = []
    assert reproducers.replay(npz, None, out=lines.append) == 1
    assert "    raised: FloatingPointError: energy overflowed" in lines, lines
    assert lines[-1].startswith("  verdict: error: FloatingPointError: energy overflowed ("), lines
    impl.broken, target["value"], lines = False, 2.0, []
    assert reproducers.replay(npz, None, out=lines.append) == 0
    assert lines[-1].startswith("  verdict: pass ("), lines


def test_replay_notes_arguments_that_differ_from_the_recorded_call(tmp_path, monkeypatch):
    """A statement whose second site uses state the first site's instances built: the replay skips the first site, so
    its call's arguments differ from the recorded ones, and it says so."""

    def claim(ctx):
        seen = []
        ctx.forall(None, lambda x: seen.append(x), fixed=[1.0, 2.0])
        ctx.forall(
            None, lambda x: ctx.close(ctx.impl.energy(None, np.array([x + len(seen)]), None, None)[0], 0.0), fixed=[0.5]
        )

    npz, _ = _artifact(tmp_path, monkeypatch, claim)
    lines: list[str] = []
    assert reproducers.replay(npz, None, out=lines.append) == 1
    assert any("its arguments differ from the recorded call's" in x for x in lines), lines
    assert any(x.lstrip().startswith("check: ") and "0.5" in x for x in lines), lines  # 0.5 + 0 now, 2.5 in the run


def test_replay_of_a_failure_outside_any_instance_runs_the_whole_statement(tmp_path, monkeypatch):
    """A check outside every instance site leaves a reproducer that is not replayable: the replay runs the statement
    again and gives its verdict (1 while it fails, 0 once it passes)."""
    bound = {"value": 0.0}

    def claim(ctx):
        ctx.leq(ctx.impl.energy(None, np.array([1.0]), None, None)[0], bound["value"], label="outside")

    npz, _ = _artifact(tmp_path, monkeypatch, claim)
    assert not reproducers.load(npz)["replayable"]
    lines: list[str] = []
    assert reproducers.replay(npz, None, out=lines.append) == 1
    assert "whole statement" in lines[1] and lines[-1].startswith("  verdict: fail: outside: 1.0 <= 0.0 fails"), lines
    bound["value"], lines = 1.0, []
    assert reproducers.replay(npz, None, out=lines.append) == 0 and lines[-1] == "  verdict: pass", lines


def test_replay_says_when_the_statement_is_unknown_or_no_longer_reaches_the_site(tmp_path, monkeypatch):
    """An artifact of a statement this refvi does not know is a usage error (2, said on err); one whose statement no
    longer reaches the recorded site replays to an error verdict (1)."""

    def claim(ctx):
        ctx.forall(None, lambda x: ctx.close(ctx.impl.energy(None, np.array([x]), None, None)[0], 0.0), fixed=[1.0])

    npz, _ = _artifact(tmp_path, monkeypatch, claim)
    changed = Statement("000.claim-machinery", "machinery", "test", "exact", lambda ctx: None, uses=("energy",))
    monkeypatch.setattr(runner, "load_statements", lambda: {changed.id: changed})
    lines: list[str] = []
    assert reproducers.replay(npz, None, out=lines.append) == 1
    assert "the replayed instance's site was never reached" in lines[-1], lines
    monkeypatch.setattr(runner, "load_statements", lambda: {})
    out, err = [], []
    assert reproducers.replay(npz, None, out=out.append, err=err.append) == 2
    assert not out and err == [f"error: {npz}: statement 000.claim-machinery is not known to this refvi"]


def test_a_fired_watchdogs_dump_becomes_an_error_record_quoting_the_statements_thread(tmp_path):
    """timed_out reads the traceback a worker's watchdog wrote: an error record naming the limit and the first three
    frames (innermost first) of the thread that ran the statement, not of another thread; no watch, no file, or a
    file the watchdog did not fill (it did not fire) give None."""
    from refvi.verification.running import timeouts

    watch = (str(tmp_path), 2.5)
    assert timeouts.timed_out("000.thm1", watch) is None and timeouts.timed_out("000.thm1", None) is None
    dump = tmp_path / "000.thm1.timeout"
    dump.write_text("")
    assert timeouts.timed_out("000.thm1", watch) is None
    dump.write_text(
        "Timeout (0:00:02)!\n"
        "Thread 0x0000000000000002 (most recent call first):\n"
        '  File "/lib/threading.py", line 320 in wait\n'
        '  File "/lib/threading.py", line 600 in run\n'
        "\n"
        "Thread 0x0000000000000001 (most recent call first):\n"
        '  File "/impl/slow.py", line 7 in spin\n'
        '  File "/impl/slow.py", line 12 in energy\n'
        '  File "/v/recorder.py", line 150 in call\n'
        '  File "/v/runner.py", line 90 in run_statement\n'
    )
    rec = timeouts.timed_out("000.thm1", watch)
    assert rec["id"] == "000.thm1" and rec["verdict"] == "error" and rec["seconds"] == 2.5
    assert rec["detail"].startswith(
        'timed out: no result after 2.5 s (an endless loop or a hang in the implementation?); it was at: '
        'File "/impl/slow.py", line 7 in spin <- File "/impl/slow.py", line 12 in energy <- '
        'File "/v/recorder.py", line 150 in call.  Raise the limit'
    ), rec["detail"]


@pytest.mark.parametrize("signum, name", [(2, "SIGINT"), (15, "SIGTERM")])
def test_a_signal_during_a_run_stops_it_with_a_partial_certificate_naming_the_signal(signum, name):
    """runner.run: Interrupted(SIGINT or SIGTERM) raised while a statement runs (as the command line's handlers do)
    stops the run; the certificate keeps what finished, lists the rest in not_run, is marked incomplete and names
    the signal. A bad profile is refused before anything runs."""

    class Stops(_Log):
        calls = 0

        def energy(self, target, m, C, U, structure="tril"):
            Stops.calls += 1
            if Stops.calls > 1:
                raise runner.Interrupted(signum)
            return np.zeros(len(m)), np.zeros((len(m), len(m)))

    with pytest.raises(ValueError, match=r"profile must be one of \['ci', .*got 'fast'"):
        runner.run(["000.def4"], profile="fast", impl=Stops())
    assert Stops.calls == 0
    cert = runner.run(["000.def4", "000.thm1", "000.thm2"], impl=Stops())
    assert cert["interrupted"] == name and cert["complete"] is False
    assert [r["id"] for r in cert["statements"]] + cert["not_run"] == ["000.def4", "000.thm1", "000.thm2"]
    assert cert["not_run"] and Stops.calls == 2


def test_a_serial_statement_over_its_limit_is_an_error_naming_where_it_was():
    """run_statement(timeout=1) in the main thread: an implementation that hangs is stopped at the limit and the
    statement recorded as an error "timed out", quoting the implementation's frame first."""
    import time

    class Hangs(_Log):
        def energy(self, target, m, C, U, structure="tril"):
            while True:
                time.sleep(0.05)

    t0 = time.perf_counter()
    rec = runner.run_statement(STATEMENTS["000.def4"], Hangs(), "ci", timeout=1.0)
    assert time.perf_counter() - t0 < 30
    assert rec["verdict"] == "error" and rec["seconds"] == 1.0, rec
    assert rec["detail"].startswith("timed out: no result after 1 s"), rec["detail"]
    assert "in energy <- " in rec["detail"] and "test_verdict_machinery.py" in rec["detail"]
