"""docs/compatibility.md is what the committed certificates render (verification/certificate/compatibility.py), every
statement of the registry is in it and in every certificate, and the certificates are of this refvi version and
profile ci.  Runs no certificate: it only re-renders from docs/certificates/*.json (a few seconds, mostly importing
the statements)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import refvi
from refvi.verification.certificate import compatibility as compat
from refvi.verification.running.runner import load_statements

# the checkout's docs/ (refvi itself may be imported from an installed copy, as in CI, where compat.DOCS is not)
DOCS = Path(__file__).resolve().parents[2] / "docs"
CERTS = DOCS / "certificates"
PAGE = DOCS / "compatibility.md"


@pytest.fixture(scope="module")
def registry():
    return load_statements()


@pytest.fixture(scope="module")
def certs():
    return compat.load_certificates(CERTS)


def test_page_is_what_the_certificates_render(certs, registry):
    assert PAGE.read_text(encoding="utf-8") == compat.render(certs, registry), (
        "docs/compatibility.md is stale: run `python -m refvi.verification.certificate.compatibility` (or --run to refresh "
        "the certificates too)")


def test_the_command_renders_the_page(tmp_path, certs, registry):
    """``python -m refvi.verification.certificate.compatibility --docs DIR`` writes DIR/compatibility.md from
    DIR/certificates (the command the page's maintainers run)."""
    shutil.copytree(CERTS, tmp_path / "certificates")
    proc = subprocess.run(
        [sys.executable, "-m", "refvi.verification.certificate.compatibility", "--docs", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0 and "wrote" in proc.stdout, proc.stderr[-2000:]
    assert (tmp_path / "compatibility.md").read_text(encoding="utf-8") == compat.render(certs, registry)


def test_every_column_has_a_certificate_of_this_version_and_profile(certs):
    assert set(certs) == {c.key for c in compat.COLUMNS}
    for key, cert in certs.items():
        assert cert["refvi_version"] == refvi.__version__, (key, cert["refvi_version"])
        assert cert["profile"] == "ci", key
        assert cert["date"] and cert["libraries"], key
    # refvi and the three adapters that ship with it always run; PyMC's column may be "not run" with its reason
    for key in ("refvi", "numpy", "jax", "blackjax"):
        assert certs[key]["status"] == "run" and certs[key]["complete"], key
    if certs["pymc"]["status"] != "run":
        assert certs["pymc"]["reason"]


def test_every_statement_of_the_registry_is_in_the_page_and_in_every_certificate(certs, registry):
    page = PAGE.read_text(encoding="utf-8")
    absent = [sid for sid in registry if f"| `{sid}` |" not in page]
    assert not absent, absent
    for key, cert in certs.items():
        if cert["status"] == "run":
            ids = [r["id"] for r in cert["statements"]]
            assert sorted(ids) == sorted(registry), key
    for seed in sorted({sid.partition(".")[0] for sid in registry}):
        assert f"## {seed}: " in page


def _rec(verdict, **kw):
    return {"id": "000.thm1", "verdict": verdict, "scope": "implementation", "examples": 3, "instances_skipped": 0,
            "declined": {}, "declined_optional": 0, **kw}


def test_cell_rules():
    cell = compat.cell
    assert cell(_rec("pass"), "numpy") == ("✓", None)
    sym, text = cell(_rec("pass", instances_skipped=4, declined={"structure='full' not in declared ['tril']": 3,
                                                                    "lacks method 'stl'": 1}), "blackjax")
    assert sym == "✓ 4" and text.startswith("declined: 3 × structure='full'") and "1 × lacks method 'stl'" in text
    assert cell(_rec("fail", detail="000.thm1: lhs 2 > rhs 1\n  more"), "jax") == ("✗", "000.thm1: lhs 2 > rhs 1 more")
    assert cell(_rec("error", detail="ValueError: boom"), "jax") == ("E", "ValueError: boom")
    # a skip whose declines all name a missing protocol method: not implemented
    missing = {"lacks method 'prox_sgd'": 2, "optional: lacks method 'frame'": 1}
    assert cell(_rec("skip", examples=0, instances_skipped=3, declined=missing), "jax") == ("—", None)
    # a skip with a capability decline among its reasons: declined, with the reasons
    mixed = {"lacks method 'prox_sgd'": 2, "structure='sym' not in declared ['tril', 'diag']": 5}
    sym, text = compat.cell(_rec("skip", examples=0, instances_skipped=7, declined=mixed), "blackjax")
    assert sym == "⊘ 7" and text.index("5 ×") < text.index("2 ×")
    assert cell(_rec("skip", examples=0, detail="exercised nothing"), "numpy") == ("skip", "exercised nothing")
    assert cell(_rec("skip", other_profile=True, detail="runs only in profiles ['deep']"), "refvi") == ("deep", None)
    assert cell(_rec("pass", scope="oracle-only"), "refvi") == ("o✓", None)
    assert cell(_rec("skip", scope="oracle-only", detail="oracle-only: ..."), "pymc") == ("o", None)
    assert cell(None, "pymc") == ("?", None)


def test_a_column_that_did_not_run_says_so(certs, registry):
    column = next(c for c in compat.COLUMNS if c.key == "pymc")
    fake = dict(certs)
    fake["pymc"] = compat.not_run(column, "the adapter does not import: ModuleNotFoundError: No module named 'x'",
                                  compat.library_versions(["pymc"]), "2026-01-01 00:00 UTC")
    page = compat.render(fake, registry)
    assert "| PyMC | not run: the adapter does not import: ModuleNotFoundError" in page
    row = next(line for line in page.splitlines() if line.startswith("| `000.thm1` |"))
    assert row.endswith("| not run |")


def test_slim_keeps_what_the_table_reads_and_refuses_other_json():
    column = compat.COLUMNS[0]
    full = {"refvi_version": "0", "profile": "ci", "implementation": "refvi", "complete": True, "papers": {},
            "statements": [{**_rec("pass"), "instances": [["a", 0, "ran", 0.0]], "calls": {"energy": 3},
                            "detail": "x" * 5000, "reproducers": []}]}
    data = compat.slim(full, column, 12.34, 2, {"numpy": "2"}, "2026-01-01 00:00 UTC")
    rec = data["statements"][0]
    assert set(rec) <= set(compat.KEPT) and len(rec["detail"]) == compat.DETAIL_CHARS
    assert data["seconds"] == 12.3 and data["workers"] == 2 and data["status"] == "run"
    json.dumps(data)
    # "complete" is copied; a certificate without it (written before the field existed) was a complete run
    older = {k: v for k, v in full.items() if k != "complete"}
    assert data["complete"] is True and compat.slim(older, column, 1.0, 2, {}, "")["complete"] is True
    assert compat.slim({**full, "complete": False}, column, 1.0, 2, {}, "")["complete"] is False
    with pytest.raises(ValueError, match="not a refvi certificate"):
        compat.slim({"statements": []}, column, 1.0, 2, {}, "")


def test_markdown_escaping_keeps_cells_whole():
    assert compat.md("E||g||^2 <= a*b_c $x$ [1]") == r"E\|\|g\|\|^2 \<= a\*b\_c \$x\$ \[1\]"


def test_every_fail_or_error_is_an_explained_finding(certs):
    """Issue 30, item 3: a fail of an outside library is reduced, decided (which side is wrong) and written up."""
    bad = [(key, r["id"]) for key, cert in certs.items() if cert["status"] == "run"
           for r in cert["statements"] if r["verdict"] in ("fail", "error")]
    unexplained = [b for b in bad if b not in compat.FINDINGS]
    assert not unexplained, unexplained
    stale = [f for f in compat.FINDINGS if f not in bad]
    assert not stale, f"findings for statements that no longer fail: {stale}"


def test_import_refuses_an_unknown_column_and_another_profile_and_writes_nothing(tmp_path, capsys):
    """--import COLUMN CERT SECONDS: a column the table does not have, or a certificate of another profile than the
    table's, is a usage error (exit 2, said on stderr) and leaves the docs folder as it was; so is --workers 0."""
    cert = tmp_path / "deep.json"
    cert.write_text(json.dumps({"profile": "deep", "statements": []}), encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    key = compat.COLUMNS[0].key
    assert compat.main(["--docs", str(docs), "--import", "no-such-column", str(cert), "10"]) == 2
    assert "--import: no column 'no-such-column'" in capsys.readouterr().err
    assert compat.main(["--docs", str(docs), "--import", key, str(cert), "10"]) == 2
    assert "profile 'deep', the table is 'ci'" in capsys.readouterr().err
    assert compat.main(["--docs", str(docs), "--workers", "0"]) == 2
    assert "--workers must be >= 1, got 0" in capsys.readouterr().err
    assert list(docs.iterdir()) == []


def test_a_cells_detail_is_cut_after_400_characters():
    from refvi.verification.certificate.compatibility_page import _detail

    assert _detail({"detail": "x" * 400}) == "x" * 400
    assert _detail({"detail": "x" * 401}) == "x" * 399 + "…"
    assert _detail({"detail": "a  b\n c"}) == "a b c" and _detail({}) == "no detail recorded"


def test_run_reruns_only_the_named_columns_and_keeps_each_note_with_its_column(tmp_path, monkeypatch, capsys):
    """--run --only COLUMN reruns that column alone (the others keep their certificates) and --note COLUMN TEXT is
    stored with that column's certificate and no other."""
    shutil.copytree(CERTS, tmp_path / "certificates")
    key, other = compat.COLUMNS[1].key, compat.COLUMNS[0].key
    ran = []

    def fake_run(column, workers):
        ran.append((column.key, workers))
        data = json.loads((CERTS / f"{column.key}.json").read_text(encoding="utf-8"))
        data.pop("note", None)
        return data

    monkeypatch.setattr(compat, "run_column", fake_run)
    before = (tmp_path / "certificates" / f"{other}.json").read_text(encoding="utf-8")
    argv = ["--docs", str(tmp_path), "--run", "--only", key, "--workers", "1"]
    assert compat.main([*argv, "--note", key, "timed by hand", "--note", other, "not this one"]) == 0
    assert ran == [(key, 1)]
    assert json.loads((tmp_path / "certificates" / f"{key}.json").read_text(encoding="utf-8"))["note"] == "timed by hand"
    assert (tmp_path / "certificates" / f"{other}.json").read_text(encoding="utf-8") == before
    assert f"{compat.COLUMNS[1].label}: running" in capsys.readouterr().out


def test_run_column_runs_the_certificate_in_a_fresh_process_and_says_why_a_column_did_not_run(monkeypatch):
    """run_column: an adapter that does not import is a column "not run" with the import's error; the certificate
    itself runs as ``python -m refvi.verification --impl ... --json PATH`` in a subprocess whose output is captured,
    and a run that wrote no certificate is "not run" with the last line of its stderr."""
    from refvi.verification.certificate.compatibility_page import Column

    gone = Column("gone", "Gone", "no_such_module_for_refvi:IMPL", ())
    rec = compat.run_column(gone, 1)
    assert rec["status"] == "not run" and rec["column"] == "gone"
    assert rec["reason"].startswith("the adapter does not import: ModuleNotFoundError"), rec["reason"]

    calls = []

    def fake_run(cmd, capture_output=False, text=False, cwd=None):
        calls.append((cmd, capture_output, text))
        out = "first line\nthe adapter raised at load" if capture_output else None
        return subprocess.CompletedProcess(cmd, 1, stdout="" if capture_output else None, stderr=out)

    monkeypatch.setattr(compat, "_import_error", lambda module: None)
    monkeypatch.setattr(compat.subprocess, "run", fake_run)
    column = compat.COLUMNS[1]
    rec = compat.run_column(column, 3)
    ((cmd, captured, text),) = calls
    assert captured and text
    assert cmd[1:3] == ["-m", "refvi.verification"] and cmd[-2:] == ["--impl", column.impl]
    assert cmd[cmd.index("--workers") + 1] == "3" and cmd[cmd.index("--profile") + 1] == "ci"
    assert rec["status"] == "not run" and rec["reason"] == "the run wrote no certificate: the adapter raised at load"


def test_library_versions_says_which_are_not_installed():
    versions = compat.library_versions(["numpy", "no-such-distribution-for-refvi"])
    assert versions["numpy"] == np.__version__ and versions["no-such-distribution-for-refvi"] == "not installed"


def test_import_slims_a_certificate_run_elsewhere_dates_it_by_its_start_and_renders_the_page(tmp_path, capsys):
    """--import COLUMN CERT SECONDS --note COLUMN TEXT: the certificate slimmed into docs/certificates/COLUMN.json with
    the given wall time, the note, and the run's start (the file's time less SECONDS: 12:30 - 90 s) as its date; the page is
    rendered from the folder, and --check then passes until the page is edited."""
    import datetime
    import os

    from refvi.verification.implementation import REFVI
    from refvi.verification.running import runner

    full = runner.run(["000.def4"], impl=REFVI)
    path = tmp_path / "full.json"
    path.write_text(json.dumps(full), encoding="utf-8")
    written = datetime.datetime(2026, 5, 1, 12, 30, tzinfo=datetime.UTC).timestamp()
    os.utime(path, (written, written))
    docs = tmp_path / "docs"
    key = compat.COLUMNS[0].key
    argv = ["--docs", str(docs), "--import", key, str(path), "90", "--note", key, "timed by hand"]
    assert compat.main(argv) == 0
    assert capsys.readouterr().out.strip() == f"wrote {docs / 'compatibility.md'}"
    data = json.loads((docs / "certificates" / f"{key}.json").read_text(encoding="utf-8"))
    assert data["date"] == "2026-05-01 12:28 UTC" and data["seconds"] == 90.0 and data["note"] == "timed by hand"
    assert [r["id"] for r in data["statements"]] == ["000.def4"] and data["status"] == "run"
    page = (docs / "compatibility.md").read_text(encoding="utf-8")
    assert page == compat.render(compat.load_certificates(docs / "certificates"), load_statements())
    assert compat.main(["--docs", str(docs), "--check"]) == 0
    (docs / "compatibility.md").write_text(page + "edited\n", encoding="utf-8")
    assert compat.main(["--docs", str(docs), "--check"]) == 1
    assert "is not what docs/certificates renders" in capsys.readouterr().err
