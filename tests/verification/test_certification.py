"""Certification an outside maintainer can act on: per-instance declines, per-paper verdicts, refusals, reproducers
and replay, comparisons, JUnit XML, the table's reasons, method selection and -x (issue: certification)."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from refvi.verification.certificate import compare, coverage, junit, reproducers
from refvi.verification.implementation import REFVI
from refvi.verification.protocol import targets as specs
from refvi.verification.protocol.capabilities import Capabilities
from refvi.verification.running import runner
from refvi.verification.statement import Statement

STATEMENTS = runner.load_statements()


def _stmt(claim, uses=("energy",), sid="999.claim-test"):
    return Statement(sid, "t", "s", "exact", claim, None, ("ci", "deep"), uses)


class _Tril:
    """Energy through refvi, lower-triangular C only, Gaussian targets only, its own refusal class."""

    name = "tril-gaussian"
    capabilities = {"structure": ("tril", "diag"), "targets": ("gaussian",), "refusals": (FloatingPointError,)}

    def energy(self, target, m, C, U, structure="tril"):
        return REFVI.energy(target, m, C, U, structure)


def _gauss(d=2):
    return specs.gaussian(np.zeros(d), np.eye(d))


def test_a_declined_instance_is_counted_and_the_statement_goes_on():
    def claim(ctx):
        def check(structure):
            m, C, U = np.zeros(2), np.eye(2), np.ones((1, 2))
            gm, _ = ctx.impl.energy(_gauss(), m, C, U, structure)
            ctx.close(gm, np.ones(2), atol=1e-12, label="gm")
        ctx.forall(None, check, fixed=["tril", "sym", "full", "diag"])

    rec = runner.run_statement(_stmt(claim), _Tril())
    assert rec["verdict"] == "pass" and rec["examples"] == 2 and rec["instances_skipped"] == 2
    assert "structure='sym' not in declared" in rec["detail"] and "2 instance(s) declined" in rec["detail"]
    assert rec["declined"] and sum(rec["declined"].values()) == 2
    assert [o for _, _, o, _ in rec["instances"]] == ["ran", "declined", "declined", "ran"]


def test_a_missing_method_declines_instances_not_the_statement():
    def claim(ctx):
        ctx.instance(lambda _: ctx.impl.energy(_gauss(), np.zeros(2), np.eye(2), np.ones((1, 2))))
        ctx.instance(lambda _: ctx.impl.entropy(_gauss(), np.zeros(2), np.eye(2), np.ones((1, 2))))

    rec = runner.run_statement(_stmt(claim, ("energy", "entropy")), _Tril())
    assert rec["verdict"] == "pass" and rec["examples"] == 1 and rec["instances_skipped"] == 1
    assert "lacks method 'entropy'" in rec["detail"]
    assert _declined_column(runner.format_row(rec)) == "1"  # the table's "declined" column


def _declined_column(row: str) -> str:
    """The "declined" column of a table row (fixed width: id 28, verdict 6, kind 11, erratum 8, cases 6, then 8)."""
    return row[64:72].strip()


def test_every_instance_declined_is_a_skip_with_its_reason():
    def claim(ctx):
        ctx.instance(lambda _: ctx.impl.energy(_gauss(), np.zeros(2), np.eye(2), np.ones((1, 2)), "sym"))

    rec = runner.run_statement(_stmt(claim), _Tril())
    assert rec["verdict"] == "skip" and "every instance declined" in rec["detail"] and "structure" in rec["detail"]
    assert runner.format_row(rec).split()[2] == "exact"        # a skipped row shows no cases, slack or tightness
    assert rec["instances_skipped"] == 1 and _declined_column(runner.format_row(rec)) == ""  # nor declines
    assert runner.row_note(rec).strip().startswith("~ every instance declined")


def test_a_declined_call_outside_instances_keeps_what_ran():
    def claim(ctx):
        ctx.instance(lambda _: ctx.impl.energy(_gauss(), np.zeros(2), np.eye(2), np.ones((1, 2))))
        ctx.impl.energy(_gauss(), np.zeros(2), np.eye(2), np.ones((1, 2)), "sym")     # top level: declined
        raise AssertionError("never reached")

    rec = runner.run_statement(_stmt(claim), _Tril())
    assert rec["verdict"] == "pass" and rec.get("stopped") and "did not run" in rec["detail"]


def test_frames_are_an_optional_feature():
    class NoFrames(_Tril):
        capabilities = {"frame": (None,)}

        def fit(self, target, method="prox-sgd", steps=200, step_size=None, average="tail", seed=0, frame=None,
                init=None):
            return "plain run"

    def claim(ctx):
        ctx.instance(lambda _: ctx.impl.fit(_gauss(), frame=None))
        ctx.instance(lambda _: ctx.impl.fit(_gauss(), frame="laplace"))
        ctx.instance(lambda _: ctx.impl.frame(_gauss()))

    rec = runner.run_statement(_stmt(claim, ("fit", "frame")), NoFrames())
    assert rec["verdict"] == "pass" and rec["instances_skipped"] == 2 and rec["declined_optional"] == 2
    assert "optional: fit: frame='laplace' not in declared [None]" in rec["detail"]
    assert "optional: lacks method 'frame'" in rec["detail"]


def test_capabilities_name_target_kinds():
    caps = Capabilities.of(_Tril())
    assert caps.declines({"target": _gauss()}) is None
    reason = caps.declines({"target": specs.logistic(np.ones((2, 2)), np.array([1.0, -1.0]))})
    assert "target kind 'logistic' not in declared targets ['gaussian']" in reason
    # a target is a record with kind, dim and params: an argument with a kind and only one of the others (a base law
    # with params, an array-like with dim) is not a target and is never declined for its kind
    from types import SimpleNamespace

    assert caps.declines({"base": SimpleNamespace(kind="rademacher", params={})}) is None
    assert caps.declines({"x": SimpleNamespace(kind="logistic", dim=2)}) is None
    assert caps.refusals == (FloatingPointError,)
    with pytest.raises(TypeError, match="exception classes"):
        Capabilities.of(type("Bad", (), {"capabilities": {"refusals": ("ValueError",)}})())


def test_refusal_probes_all_run_and_declared_refusals_count():
    class Lib:
        name = "lib"
        capabilities = {"refusals": (FloatingPointError,)}

        def energy(self, target, m, C, U, structure="tril"):
            if np.isnan(U).any():
                raise FloatingPointError("nan in U")            # the library's own refusal
            if structure == "sym":
                raise KeyError("sym")                           # not a refusal
            return np.zeros(2), np.zeros((2, 2))                # accepts everything else

    def claim(ctx):
        g = _gauss()
        ctx.refuses(lambda: ctx.impl.energy(g, np.zeros(2), np.eye(2), np.full((1, 2), np.nan)), label="nan U")
        ctx.refuses(lambda: ctx.impl.energy(g, np.zeros(2), np.eye(2), np.ones((1, 2)), "sym"), label="sym")
        ctx.refuses(lambda: ctx.impl.energy(g, np.zeros(2), -np.eye(2), np.ones((1, 2))), label="negative C")
        ctx.refuses(lambda: ctx.impl.energy(g, np.zeros(3), np.eye(2), np.ones((1, 2))), label="shape")

    rec = runner.run_statement(_stmt(claim), Lib())
    assert rec["verdict"] == "fail" and rec["detail"].startswith("3 failing probes")
    assert "KeyError" in rec["detail"] and "capabilities['refusals']" in rec["detail"]
    assert "negative C" in rec["detail"] and "shape" in rec["detail"] and "nan U" not in rec["detail"]
    assert len(rec["reproducers"]) == 3 and rec["reproducers"][0]["calls"][0]["method"] == "energy"
    assert [o for s, _, o, _ in rec["instances"]] == ["ran", "fail", "fail", "fail"]


def test_shape_probes_lengthen_and_shorten_each_fixed_axis_and_name_what_was_let_through():
    """refuses_shapes: every axis a statement names is probed one longer and (above length 1) one shorter, the other
    arguments as given; a library that checks only some of them fails on exactly the shapes it let through."""

    class Lib:
        name = "lib"

        def energy(self, target, m, C, U, structure="tril"):
            d = C.shape[0]
            if C.shape != (d, d) or U.shape[1] != d:  # an m of another length slips through
                raise ValueError("shapes")
            return np.zeros(d), np.zeros((d, d))

    seen = []

    def claim(ctx):
        g = _gauss()
        args = {"target": g, "m": np.zeros(2), "C": np.eye(2), "U": np.ones((3, 2))}

        def call(**a):
            seen.append(tuple(np.shape(a[k]) for k in ("m", "C", "U")))
            return ctx.impl.energy(**a)

        ctx.refuses_shapes(call, args, {"m": (0,), "C": (0, 1), "U": (1,)}, label="energy")

    rec = runner.run_statement(_stmt(claim), Lib())
    assert seen == [((1,), (2, 2), (3, 2)), ((3,), (2, 2), (3, 2)),
                    ((2,), (1, 2), (3, 2)), ((2,), (3, 2), (3, 2)), ((2,), (2, 1), (3, 2)), ((2,), (2, 3), (3, 2)),
                    ((2,), (2, 2), (3, 1)), ((2,), (2, 2), (3, 3))]
    assert rec["verdict"] == "fail" and rec["detail"].startswith("2 failing probes:"), rec["detail"]
    assert "energy: m of shape (1,) (length 1 along axis 0, where the other arguments fix 2)" in rec["detail"]
    assert "energy: m of shape (3,) (length 3 along axis 0, where the other arguments fix 2)" in rec["detail"]
    assert [o for *_, o, _ in rec["instances"]].count("ran") == 6


def _cert(impl, ids):
    return runner.run(ids, "ci", impl)


def test_a_paper_block_counts_every_selected_statement_after_one_that_was_not_selected():
    """coverage.papers: statements left out of the selection are listed as not selected, and the ones after them
    (in id order) are still counted: their verdicts, instances and declines."""
    records = [dict(runner.statement_record(st, "pass"), examples=2) for sid, st in sorted(STATEMENTS.items())
               if sid.startswith("001.") and not st.oracle_only]
    first, rest = records[0], records[1:]
    rest[-1]["verdict"] = "fail"
    blk = coverage.papers(rest, STATEMENTS, "ci", REFVI)["001"]
    facing = [r["id"] for r in records]
    assert blk["statements"]["pass"] == len(rest) - 1 and blk["statements"]["fail"] == 1
    assert blk["statements"]["selected"] == blk["statements"]["total"] - 1 and blk["verdict"] == "failed"
    assert blk["instances"]["ran"] == 2 * len(rest)
    assert any(first["id"] in m and m.startswith("not selected: 1 of") for m in blk["missing"]), blk["missing"]
    assert facing == sorted(facing)


def test_per_paper_verdicts():
    cert = _cert(REFVI, ["002.lemma12"])
    block = cert["papers"]["002"]
    assert block["verdict"] == "partial" and any("not selected" in m for m in block["missing"])
    assert runner.exit_code(cert) == 0 and runner.exit_code(cert, require=[]) == runner.EXIT_NOT_CERTIFIED
    assert runner.exit_code(cert, require=["000"]) == runner.EXIT_NOT_CERTIFIED
    # a whole paper, synthesised: certified when every implementation-facing statement passed with no decline
    records = [dict(runner.statement_record(st, "pass"), examples=1) for sid, st in STATEMENTS.items()
               if sid.startswith("001.")]
    for r in records:
        if STATEMENTS[r["id"]].oracle_only:
            r["scope"] = "oracle-only"
    blk = coverage.papers(records, STATEMENTS, "ci", REFVI)
    assert blk["001"]["verdict"] == "certified", blk["001"]["missing"]
    records[0]["instances_skipped"], records[0]["detail"] = 1, "1 instance(s) declined: x"
    assert coverage.papers(records, STATEMENTS, "ci", REFVI)["001"]["verdict"] == "partial"
    records[0]["declined_optional"] = 1          # declined for refvi's affine frames only: not counted
    blk = coverage.papers(records, STATEMENTS, "ci", REFVI)["001"]
    assert blk["verdict"] == "certified" and blk["optional"]
    records[0]["declined_optional"] = 0
    records[1]["verdict"] = "fail"
    assert coverage.papers(records, STATEMENTS, "ci", REFVI)["001"]["verdict"] == "failed"
    deep_only = [st.id for st in STATEMENTS.values() if "ci" not in st.profiles]
    assert "003.thm6" in deep_only
    recs = [dict(runner.statement_record(st, "pass"), examples=1) for sid, st in STATEMENTS.items()
            if sid.startswith("003.") and "ci" in st.profiles]
    recs.append(dict(runner.statement_record(STATEMENTS["003.thm6"], "skip"), other_profile=True))
    blk = coverage.papers(recs, STATEMENTS, "ci", REFVI)["003"]
    assert blk["verdict"] == "certified" and blk["statements"]["other_profile"] == ["003.thm6"]


def test_methods_missing_are_named_per_paper():
    blk = coverage.papers([], STATEMENTS, "ci", _Tril(), not_run=["000.thm1"])["000"]
    assert blk["verdict"] == "partial" and "energy" in blk["methods"]["implemented"]
    assert "entropy_prox" in blk["methods"]["missing"] and any("not run" in m for m in blk["missing"])


class _WrongProx:
    """A seed-000 prox with a planted bug (sqrt(c^2 + 2 gamma) for sqrt(c^2 + 4 gamma))."""

    name = "wrong-prox"

    def entropy_prox(self, C, gamma):
        C = np.asarray(C, dtype=float)
        if gamma < 0:
            raise ValueError("gamma must be >= 0")
        out = C.copy()
        c = np.diag(C)
        np.fill_diagonal(out, 0.5 * (c + np.sqrt(c * c + 2.0 * gamma)))
        return out


def test_a_failure_leaves_a_replayable_reproducer(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wrongprox_mod", type(sys)("wrongprox_mod"))
    sys.modules["wrongprox_mod"].IMPL = _WrongProx()
    sid = next(s for s, st in STATEMENTS.items() if st.uses == ("entropy_prox",) and s.startswith("000."))
    rec = runner.run_statement(STATEMENTS[sid], _WrongProx(), "ci", artifacts=str(tmp_path),
                               impl_spec="wrongprox_mod:IMPL")
    assert rec["verdict"] == "fail"
    rep = rec["reproducers"][0]
    assert rep["calls"] and rep["calls"][-1]["method"] == "entropy_prox" and "C" in rep["calls"][-1]["arguments"]
    assert rep["check"]["tolerance"] and rep["check"]["expected_side"] is not None
    npz, snippet = rec["artifacts"]
    art = reproducers.load(npz)
    assert art["statement"] == sid and art["calls"][-1]["method"] == "entropy_prox"
    assert any(k.startswith("call") for k in art["arrays"]) and "check.rhs" in art["arrays"]
    compile(open(snippet).read(), snippet, "exec")
    lines = []
    assert reproducers.replay(npz, "wrongprox_mod:IMPL", out=lines.append) == 1
    assert any("verdict: fail" in x for x in lines) and any("call: entropy_prox" in x for x in lines)
    lines.clear()
    assert reproducers.replay(npz, "refvi", out=lines.append) == 0, lines     # the right prox passes it


def test_compare_lists_differing_verdicts_and_instances():
    def claim(ctx):
        ctx.forall(None, lambda s: ctx.impl.energy(_gauss(), np.zeros(2), np.eye(2), np.ones((1, 2)), s),
                   fixed=["tril", "sym"])

    a = {"implementation": "a", "profile": "ci", "statements": [runner.run_statement(_stmt(claim), _Tril())]}
    b = {"implementation": "refvi", "profile": "ci", "refvi_version": "x",
         "statements": [runner.run_statement(_stmt(claim), REFVI)]}
    diff = compare.compare(a, b)
    assert diff["statements"][0]["differs"]["instances_skipped"] == [1, 0]
    assert diff["instances"] == [{"id": "999.claim-test", "site": "0", "index": 1, "this": "declined",
                                  "other": "ran"}]
    assert "instance site 0 #1: declined vs ran" in compare.format_comparison(diff)


def test_junit_xml_has_one_case_per_statement():
    recs = [dict(runner.statement_record(STATEMENTS["000.thm1"], "pass"), examples=3),
            dict(runner.statement_record(STATEMENTS["000.thm3"], "fail"), detail="lhs > rhs"),
            dict(runner.statement_record(STATEMENTS["000.thm6"], "skip"), detail="lacks method 'prox_sgd'")]
    cert = {"implementation": "x", "statements": recs, "papers": {"000": {"verdict": "failed"}}, "complete": True}
    root = ET.fromstring(junit.to_xml(cert))
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["000.thm1", "000.thm3", "000.thm6"]
    assert cases[1].find("failure") is not None and cases[2].find("skipped").get("message")


def test_select_method():
    chosen = runner.select_methods(STATEMENTS.values(), ["entropy_prox"])
    assert chosen and all("entropy_prox" in st.uses for st in chosen)
    assert {st.id for st in runner.select_methods(STATEMENTS.values(), ["online.*"])} == \
        {st.id for st in STATEMENTS.values() if any(u.startswith("online.") for u in st.uses or ())}


def test_exitfirst_stops_and_lists_what_did_not_run():
    ids = ["000.lemma31", "000.lemma32", "000.lemma33"]
    cert = runner.run(ids, "ci", _WrongProx(), exitfirst=True)
    assert cert["interrupted"] == "exitfirst" and not cert["complete"]
    assert cert["statements"][-1]["verdict"] in ("fail", "error")
    assert len(cert["statements"]) + len(cert["not_run"]) == len(runner.select(STATEMENTS.values(), ids))


def test_an_erratum_demonstration_decline_names_its_reason():
    rec = runner.run_statement(STATEMENTS["000.thm26"], _Tril())
    assert rec["verdict"] in ("pass", "skip")
    assert rec.get("detail", "").strip().rstrip(":") and "declared capabilities: " != rec["detail"][-25:]
    if rec["instances_skipped"]:
        assert "x " in rec["detail"]          # "<count> x <reason>", never an empty reason


def test_cli_flushes_progress_on_a_pipe_and_reports_per_paper(tmp_path):
    path = tmp_path / "cert.json"
    proc = subprocess.Popen([sys.executable, "-m", "refvi.verification", "--select", "002.lemma11", "002.lemma12",
                             "--json", str(path), "--junit-xml", str(tmp_path / "j.xml"), "--strict"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    first = proc.stdout.readline()
    assert first.startswith("running 2 statement(s) against refvi") and proc.poll() is None
    out, err = proc.communicate(timeout=600)
    assert "per paper (certified:" in out and "002 PARTIAL" in out and "not selected" in out
    assert proc.returncode == runner.EXIT_NOT_CERTIFIED and "not certified: paper(s) 002" in err
    cert = json.loads(path.read_text())
    assert cert["papers"]["002"]["verdict"] == "partial" and ET.parse(tmp_path / "j.xml").getroot().tag == "testsuites"


def test_pytest_plugin_takes_several_patterns_and_counts_them(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--refvi-impl",
                           "refvi.verification.protocol:REFVI", "--refvi-select", "002.lemma11", "002.lemma12",
                           "-q", "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert "file or directory not found" not in proc.stdout + proc.stderr, proc.stdout
    assert "2 passed" in proc.stdout and "refvi certificate" in proc.stdout, proc.stdout


def test_the_paper_block_as_printed_names_other_profiles_long_gap_lists_and_optional_declines():
    """format_block: a statement that runs only in another profile is named (not counted), at most 12 gaps are
    listed with a count of the rest, and declines of the optional affine frames are counted apart; an oracle-only
    record adds no instance to what ran against the implementation."""
    recs = [dict(runner.statement_record(st, "pass"), examples=1) for sid, st in STATEMENTS.items()
            if sid.startswith("003.") and "ci" in st.profiles]
    recs.append(dict(runner.statement_record(STATEMENTS["003.thm6"], "skip"), other_profile=True))
    recs[0].update(instances_skipped=2, declined_optional=2, detail="2 instance(s) declined: an affine frame")
    blk = coverage.papers(recs, STATEMENTS, "ci", REFVI)
    text = coverage.format_block(blk).splitlines()
    assert "      runs only in another profile (not counted): 003.thm6" in text
    assert ("      optional features declined (not counted: refvi's affine frames): 1 statement(s), 2 instance(s)"
            in text)
    ran = blk["003"]["instances"]["ran"]
    recs[1] = dict(recs[1], scope="oracle-only", examples=40)
    assert coverage.papers(recs, STATEMENTS, "ci", REFVI)["003"]["instances"]["ran"] == ran - 1
    skipped = [dict(runner.statement_record(st, "skip"), detail="lacks a method") for sid, st in STATEMENTS.items()
               if sid.startswith("000.") and "ci" in st.profiles]
    blk = coverage.papers(skipped, STATEMENTS, "ci", REFVI)
    text = coverage.format_block({"000": blk["000"]}).splitlines()
    listed = [ln for ln in text if ln.startswith("      - ")]
    assert len(blk["000"]["missing"]) > 12 and len(listed) == 13
    assert listed[-1] == f"      - ... and {len(blk['000']['missing']) - 12} more (see the JSON certificate)"


def test_junit_keeps_a_passing_statements_detail_as_its_output():
    rec = dict(runner.statement_record(STATEMENTS["000.thm1"], "pass"), detail="3 instances declined: x")
    case = ET.fromstring(junit.to_xml({"implementation": "x", "statements": [rec], "papers": {}, "complete": True}))
    assert case.find(".//testcase/system-out").text == "3 instances declined: x"


def test_a_probe_with_a_right_answer_passes_on_it_or_on_a_refusal_and_fails_on_a_wrong_one():
    """ctx.refuses(call, correct=x): a refusal passes, so does returning x (within rtol/atol); another value is a
    failing probe labelled 'not refused: must then be right'. A method refvi itself lacks is its error, not a
    declined probe (strict_methods)."""
    from refvi.verification.protocol.recorder import MissingMethod
    from refvi.verification.statement import PROFILES, CheckFailed, Context

    ctx = Context(None, PROFILES["ci"], "test")
    ctx.refuses(lambda: 2.0 + 1e-12, label="right", correct=2.0, rtol=1e-9)
    ctx.refuses(lambda: (_ for _ in ()).throw(ValueError("no")), label="refused", correct=2.0)
    ctx.refuses(lambda: 2.5, label="wrong", correct=2.0, rtol=1e-9)
    with pytest.raises(CheckFailed, match=r"wrong \(not refused: must then be right\)"):
        ctx.raise_deferred()

    def lacks():
        raise MissingMethod("method 'energy'")

    ctx = Context(None, PROFILES["ci"], "test")
    ctx.refuses(lacks, label="declined")
    assert ctx.instances_skipped == 1 and ctx.examples == 0
    ctx.strict_methods = True
    with pytest.raises(MissingMethod):
        ctx.refuses(lacks, label="refvi lacks it")
