"""The mutation driver's own logic (tests/mutation/): the file -> statements / tests map, the excluded lines, the
stable ids, the seeded sample, the diff parser, the Numba cache clean-up, the log, the rates and the generated
report.  Runs without cosmic-ray (the driver imports it only to mutate) in a few seconds."""

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mutant  # noqa: E402
import mutlib  # noqa: E402
import run  # noqa: E402

CFG = {
    "include": ["refvi", "kernels", "verification"],
    "exclude": ["verification/statements/*", "verification/oracles/*"],
    "machinery": ["verification/*"],
    "groups": {"features": ["refvi/fit.py"], "paper code": ["refvi/*", "kernels/*", "verification/protocol/refvi_*"]},
    "adapters": {
        "verification/protocol/refvi_core.py": {"class": "RefviCore"},
        "verification/protocol/refvi_sub.py": {"class": "RefviSub", "prefix": "sub."},
    },
    "operators": {"include": ["ReplaceBinaryOperator_.*", "NumberReplacer"], "exclude": ["BitOr", "_Pow_"]},
    "tests": {"exclude": ["tests/test_lint.py"], "extra": {"refvi/fit.py": ["tests/test_fit_extra.py"]}},
    "limits": {"factor": 3.0, "overhead": 180.0, "statement_min": 60.0},
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


@pytest.fixture
def project(tmp_path):
    """A miniature refvi: a kernel used by a library module, a helper only an unrelated module uses, refvi's adapter
    (two methods, a helper only one calls), a sub-adapter, a catalogue, the machinery, and unit tests."""
    _write(
        tmp_path,
        {
            "refvi/__init__.py": "from refvi.fit import fit\n",
            "refvi/fit.py": "from refvi.prox import prox\n\ndef fit(x):\n    return prox(x)\n",
            "refvi/prox.py": "from refvi.kernels.prox import kernel\n\ndef prox(x):\n    return kernel(x)\n",
            "refvi/other.py": "from refvi.kernels import helper\n\ndef other(x):\n    return helper.h(x)\n",
            "kernels/__init__.py": "",
            "kernels/prox.py": "def kernel(x):\n    return 2.0 * x\n",
            "kernels/helper.py": "def h(x):\n    return x + 1\n",
            "verification/__init__.py": "",
            "verification/running/runner.py": "def run():\n    return 0\n",
            "verification/protocol/__init__.py": "",
            "verification/protocol/refvi_core.py": """\
                def _shared(x):
                    from refvi.other import other
                    return other(x)


                class RefviCore:
                    def entropy_prox(self, x):
                        from refvi.prox import prox
                        return prox(x)

                    def fit(self, x):
                        import refvi
                        return refvi.fit(x) + _shared(x)

                    def energy(self, x):
                        return x
                """,
            "verification/protocol/refvi_sub.py": """\
                from refvi.other import other


                class RefviSub:
                    def run(self, x):
                        return other(x)
                """,
            "verification/statements/p/catalog.toml": """\
                [statement."000.a"]
                kind = "exact"
                uses = ["entropy_prox"]
                [statement."000.b"]
                kind = "statistical"
                uses = ["fit"]
                [statement."000.c"]
                kind = "exact"
                uses = ["energy"]
                [statement."000.d"]
                kind = "exact"
                uses = []
                [statement."001.e"]
                kind = "exact"
                uses = ["sub.run"]
                """,
            "tests/test_prox.py": "from refvi.prox import prox\n",
            "tests/test_fit.py": "from refvi import fit\n",
            "tests/test_runner.py": "from refvi.verification.running.runner import run\n",
            "tests/test_helper_named.py": "import numpy\n",
            "tests/test_lint.py": "from refvi.kernels.prox import kernel\n",
        },
    )
    return tmp_path


def test_module_names_and_kinds():
    assert mutlib.module_name("kernels/prox.py") == "refvi.kernels.prox"
    assert mutlib.module_name("refvi/boosting/__init__.py") == "refvi.boosting"
    assert mutlib.module_name("verification/protocol/refvi_core.py") == "refvi.verification.protocol.refvi_core"
    assert mutlib.kind_of("verification/certificate/coverage.py", CFG) == "machinery"
    assert mutlib.kind_of("verification/protocol/refvi_core.py", CFG) == "implementation"  # an adapter
    assert mutlib.kind_of("kernels/prox.py", CFG) == "implementation"
    assert mutlib.group_of("refvi/fit.py", CFG) == "features"
    assert mutlib.group_of("refvi/prox.py", CFG) == "paper code"
    assert mutlib.group_of("verification/running/runner.py", CFG) == "verdict machinery"


def test_map_statements_follow_adapter_methods_and_imports(project):
    pm = mutlib.ProjectMap(project, CFG)
    # the kernel: reached by entropy_prox (through refvi.prox) and fit (refvi -> fit -> prox); not by energy
    assert pm.statements_for("kernels/prox.py") == ["000.a", "000.b"]
    # the helper: only through the adapter's helper _shared (called by fit) and the sub-adapter
    assert pm.statements_for("kernels/helper.py") == ["000.b", "001.e"]
    # nearest first: entropy_prox imports refvi.prox itself, fit reaches it through refvi and refvi.fit
    assert pm.order(["000.b", "000.a"], "kernels/prox.py") == ["000.a", "000.b"]
    # the machinery and oracle-only statements: never
    assert pm.statements_for("verification/running/runner.py") == []
    assert "000.d" not in pm.statements_for("refvi/other.py")


def test_map_adapter_lines(project):
    pm = mutlib.ProjectMap(project, CFG)
    adapter = "verification/protocol/refvi_core.py"
    src = (project / adapter).read_text().splitlines()
    line = {text.strip(): i for i, text in enumerate(src, 1)}
    assert pm.statements_for(adapter, line["return prox(x)"]) == ["000.a"]
    assert pm.statements_for(adapter, line["return x"]) == ["000.c"]
    assert pm.statements_for(adapter, line["return other(x)"]) == ["000.b"]  # _shared: only fit calls it
    assert pm.statements_for(adapter, None) == ["000.a", "000.b", "000.c"]  # the file as a whole


def test_map_tests_and_cache_closure(project):
    pm = mutlib.ProjectMap(project, CFG)
    # direct importers, then tests of a module importing it; the excluded test_lint.py never
    assert pm.tests_for("refvi/prox.py") == ["tests/test_prox.py", "tests/test_fit.py"]
    assert pm.tests_for("kernels/prox.py") == ["tests/test_prox.py"]
    assert pm.tests_for("kernels/helper.py") == ["tests/test_helper_named.py"]  # by name
    assert pm.tests_for("refvi/fit.py")[0] == "tests/test_fit_extra.py"  # the configuration's extra first
    assert pm.tests_for("verification/running/runner.py") == ["tests/test_runner.py"]
    assert pm.importers_closure("kernels/prox.py") >= {
        "kernels/prox.py",
        "refvi/prox.py",
        "refvi/fit.py",
        "refvi/__init__.py",
    }
    assert "refvi/other.py" not in pm.importers_closure("kernels/prox.py")


def test_a_module_two_imports_below_what_the_tests_use_still_gets_their_tests(tmp_path):
    """A mixin imported by a mixin of the class the tests use (checks -> probes -> context, the tests importing the
    package): no test imports it or one of its importers, so the tests of the next importers up are its tests."""
    _write(
        tmp_path,
        {
            "verification/__init__.py": "",
            "verification/statement/__init__.py": "from refvi.verification.statement.context import Context\n",
            "verification/statement/checks.py": "class Checks:\n    pass\n",
            "verification/statement/probes.py": "from refvi.verification.statement.checks import Checks\n",
            "verification/statement/context.py": "from refvi.verification.statement.probes import Probes\n",
            "verification/statement/other.py": "X = 1\n",
            "tests/test_context.py": "from refvi.verification.statement import Context\n",
            "tests/test_unrelated.py": "import numpy\n",
        },
    )
    pm = mutlib.ProjectMap(tmp_path, CFG)
    assert pm.tests_for("verification/statement/context.py") == ["tests/test_context.py"]  # through the package
    assert pm.tests_for("verification/statement/checks.py") == ["tests/test_context.py"]  # two importers up
    assert pm.tests_for("verification/statement/other.py") == []  # imported by nothing: still nothing


def test_real_repository_map():
    """On refvi itself: every statement using entropy_prox can see a mutant of refvi/prox.py, and the map of an
    adapter line inside RefviCore.entropy_prox selects exactly the statements using it."""
    pm = mutlib.ProjectMap()
    users = {sid for sid, row in pm.statements.items() if "entropy_prox" in row["uses"]}
    assert users and users <= set(pm.statements_for("refvi/prox.py"))
    adapter = "verification/protocol/refvi_core.py"
    lo, hi, _ = pm.adapters[adapter]["methods"]["entropy_prox"]
    assert set(pm.statements_for(adapter, hi)) == users
    assert pm.statements_for("verification/certificate/coverage.py") == []
    assert pm.tests_for("verification/certificate/coverage.py")


def test_excluded_lines():
    src = textwrap.dedent(
        """\
        from __future__ import annotations
        __all__ = ["f"]

        @jit(cache=True, fastmath=True)
        def f(x: int = 1) -> float:
            if x < 0:
                raise ValueError(
                    f"x = {x + 1} < 0")
            y: float = x * 2  # pragma: no mutate
            return x + 1
        """
    )
    out = mutlib.excluded_lines(src)
    assert {2, 4, 5, 7, 8, 9} <= out
    assert 6 not in out and 10 not in out  # the condition and the arithmetic are mutated


def test_operator_filter():
    assert mutlib.operator_allowed("core/ReplaceBinaryOperator_Add_Sub", CFG)
    assert not mutlib.operator_allowed("core/ReplaceBinaryOperator_Add_BitOr", CFG)
    assert not mutlib.operator_allowed("core/ReplaceBinaryOperator_Pow_Add", CFG)
    assert not mutlib.operator_allowed("core/RemoveDecorator", CFG)
    assert mutlib.family_of("core/ReplaceComparisonOperator_Lt_LtE") == "comparison"
    assert mutlib.family_of("core/ReplaceTrueWithFalse") == "boolean"


def test_ids_and_sampling():
    sites = [
        {"file": "a.py", "line": 3, "col": 4, "operator": "core/NumberReplacer", "occurrence": 0},
        {"file": "a.py", "line": 3, "col": 4, "operator": "core/NumberReplacer", "occurrence": 1},
        {"file": "a.py", "line": 5, "col": 0, "operator": "core/NumberReplacer", "occurrence": 2},
        {"file": "a.py", "line": 3, "col": 8, "operator": "core/AddNot", "occurrence": 0},
    ]
    assert mutlib.mutant_ids(sites) == [
        "a.py:3:NumberReplacer:0",
        "a.py:3:NumberReplacer:1",
        "a.py:5:NumberReplacer:0",
        "a.py:3:AddNot:0",
    ]
    many = [
        {"file": f"f{i % 3}.py", "line": i, "col": c, "operator": op, "occurrence": i}
        for i in range(1, 200)
        for c in (0, 4)
        for op in ("core/A", "core/B", "core/C")
    ]
    s1 = mutlib.sample_sites(many, 40, seed=7)
    assert s1 == mutlib.sample_sites(many, 40, seed=7)  # seeded
    assert s1 != mutlib.sample_sites(many, 40, seed=8)
    assert len(s1) == 40 and len({(s["file"], s["line"], s["col"]) for s in s1}) == 40  # one mutant per site
    assert {s["file"] for s in s1} == {"f0.py", "f1.py", "f2.py"}
    assert s1 == sorted(s1, key=lambda s: (s["file"], s["line"], s["col"], s["operator"], s["occurrence"]))
    assert len(mutlib.sample_sites(many, None, 0)) == len(many)


def _sites(rows):
    """Mutant dicts as ``enumerate_mutants`` gives them: (line, col, operator, text) in occurrence order."""
    out = []
    occ: dict[str, int] = {}
    for line, col, op, text in rows:
        out.append(
            {
                "file": "a.py",
                "line": line,
                "col": col,
                "operator": op,
                "occurrence": occ.get(op, 0),
                "end": [line, col + 1],
                "line_text": text,
            }
        )
        occ[op] = occ.get(op, 0) + 1
    for s, mid in zip(out, mutlib.mutant_ids(out), strict=True):
        s["id"] = mid
    return out


def test_a_resumed_session_mutates_the_same_places_in_changed_code():
    """cosmic-ray applies a mutant by occurrence: after an edit above it, a resumed mutant must be re-pointed."""
    old = _sites(
        [
            (3, 4, "core/AddNot", "if a:"),
            (5, 4, "core/AddNot", "if b:"),
            (9, 0, "core/AddNot", "if c:"),
            (9, 0, "core/NumberReplacer", "x = 1"),
        ]
    )
    # now: a new `if` above line 5, line 9 ("if c:") deleted, the others in place
    new = _sites(
        [
            (3, 4, "core/AddNot", "if a:"),
            (4, 4, "core/AddNot", "if new:"),
            (6, 4, "core/AddNot", "if b:"),
            (9, 0, "core/NumberReplacer", "x = 1"),
            (12, 0, "core/AddNot", "if d:"),
        ]
    )
    done, todo = old[0], [dict(m) for m in old[1:]]
    taken = {m["id"] for m in old}
    notes = mutlib.rebase_sites(todo, new, taken, seed=0)
    b, gone, num = todo
    assert (b["id"], b["line"], b["occurrence"], b["rebased_from"]) == ("a.py:6:AddNot:0", 6, 2, "a.py:5:AddNot:0")
    assert "rebased_from" not in num and num["occurrence"] == 0  # unchanged: untouched
    # the deleted line's mutant: replaced by a current mutant of the same file, not one the session already has
    assert gone["rebased_from"] == "a.py:9:AddNot:0" and gone["id"] in {"a.py:4:AddNot:0", "a.py:12:AddNot:0"}
    assert gone["id"] != done["id"] and gone["line_text"] in ("if new:", "if d:")
    assert gone["operator"] == "core/AddNot" and gone["occurrence"] in (1, 3)  # its own, not the old one's
    assert len(notes) == 2 and "moved" in notes[0] and "gone" in notes[1]
    assert mutlib.rebase_sites([dict(m) for m in new], new, {m["id"] for m in new}, 0) == []  # nothing changed


def test_diff_lines():
    diff = textwrap.dedent(
        """\
        diff --git a/kernels/prox.py b/kernels/prox.py
        --- a/kernels/prox.py
        +++ b/kernels/prox.py
        @@ -10,0 +11,2 @@ def f():
        +    a = 1
        +    b = 2
        @@ -20 +22 @@ def g():
        -    x
        +    y
        @@ -30,3 +33,0 @@
        -    gone
        diff --git a/refvi/x.py b/refvi/x.py
        deleted file mode 100644
        --- a/refvi/x.py
        +++ /dev/null
        @@ -1,2 +0,0 @@
        """
    )
    assert mutlib.parse_diff_lines(diff) == {"kernels/prox.py": {11, 12, 22}}


def test_clean_cache(tmp_path):
    cache = tmp_path / "cache"
    (cache / "kernels_abc").mkdir(parents=True)
    (cache / "optim_def").mkdir()
    for name in (
        "prox.entropy_prox-10.py311.nbi",
        "prox.entropy_prox-10.py311.1.nbc",
        "proxy.f-1.py311.nbi",
        "energy.g-3.py311.nbi",
    ):
        (cache / "kernels_abc" / name).write_text("")
    (cache / "optim_def" / "prox.h-1.py311.nbi").write_text("")
    assert mutant.clean_cache(cache, ["kernels/prox.py"]) == 2
    assert sorted(p.name for p in (cache / "kernels_abc").iterdir()) == ["energy.g-3.py311.nbi", "proxy.f-1.py311.nbi"]
    assert (cache / "optim_def" / "prox.h-1.py311.nbi").exists()  # another folder's prox.py


def _rec(i, file, outcome, stage=None, op="core/NumberReplacer", kind="implementation", line_text="x = 1"):
    return {
        "id": f"{file}:{i}:{op.split('/')[1]}:0",
        "file": file,
        "line": i,
        "operator": op,
        "outcome": outcome,
        "stage": stage,
        "kind": kind,
        "seconds": 10.0 + i,
        "line_text": line_text,
        "diff": f"--- a/{file}\n+++ b/{file}\n@@ -1 +1 @@\n-x = 1\n+x = 2",
    }


def test_log_rates_triage_and_report(tmp_path):
    recs = [
        _rec(1, "kernels/prox.py", "killed-by-certificate", "certificate"),
        _rec(2, "kernels/prox.py", "killed-by-tests", "tests"),
        _rec(3, "kernels/prox.py", "survived"),
        _rec(4, "kernels/prox.py", "survived", line_text="y = 3"),
        _rec(5, "kernels/prox.py", "timeout", "certificate"),
        _rec(6, "kernels/prox.py", "incompetent", "import"),
        _rec(7, "verification/running/runner.py", "killed-by-tests", "tests", kind="machinery"),
        _rec(8, "kernels/prox.py", "survived", line_text="z = 4"),
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in [{**recs[0], "outcome": "survived"}, *recs]) + "\n")
    records = mutlib.read_log([log])
    assert len(records) == 8 and records[0]["outcome"] == "killed-by-certificate"  # the later record wins
    triage = {
        "kernels/prox.py:3:NumberReplacer:0": {"status": "equivalent", "reason": "a tie"},
        # the survivor of line 4 moved to line 40 since it was triaged: found by its text
        "kernels/prox.py:40:NumberReplacer:0": {"status": "killed", "by": "000.thm3", "line": "y = 3"},
    }
    assert mutlib.triage_for(recs[3], triage)["by"] == "000.thm3"
    assert mutlib.triage_for(recs[7], triage) is None
    rows = {r["name"]: r for r in mutlib.summarize(records, triage, lambda r: mutlib.package_of(r["file"]))}
    k = rows["kernels/"]
    # 7 drawn; 1 incompetent, 1 equivalent -> 5 valid: certificate 2 (a kill, a timeout), + tests 3
    assert (k["drawn"], k["incompetent"], k["equivalent"], k["valid"], k["cert"], k["both"]) == (7, 1, 1, 5, 2, 3)
    assert (k["survived"], k["later"]) == (2, 1)
    block = mutlib.render_block(records, triage, {"date": "D", "machine": "M", "commit": "C", "logs": ["L"]}, CFG)
    assert "| kernels/ | 7 | 1 | 1 | 2 / 5 (40 %) | 3 / 5 (60 %) | 2 |" in block
    assert "| verification/ (machinery) | 1 | 0 | 0 | — (tests only) | 1 / 1 (100 %) | 0 |" in block
    assert "equivalent: a tie" in block and "killed since by `000.thm3`" in block and "**untriaged**" in block
    doc = "# Title\n\ntext\n"
    once = mutlib.update_doc(doc, block)
    assert once.startswith(doc.rstrip("\n")) and once.count(mutlib.START) == 1 and block in once
    twice = mutlib.update_doc(once, "new block\n")
    assert twice.count(mutlib.START) == 1 and "new block" in twice and block not in twice


def test_parse_output_and_config():
    out = "noise\nMUTANT-RESULT " + json.dumps({"outcome": "survived"}) + "\n"
    assert run.parse_output(out) == {"outcome": "survived"}
    assert run.parse_output("timeout") is None
    cfg = mutlib.load_config()
    assert set(cfg["adapters"]) <= set(mutlib.ProjectMap.__dict__) or cfg["adapters"]
    for rel in cfg["adapters"]:
        assert (mutlib.ROOT / rel).is_file(), rel
    files = mutlib.mutable_files(mutlib.ROOT, cfg)
    assert "kernels/prox.py" in files and "verification/certificate/coverage.py" in files
    assert not any(f.startswith(("verification/statements/", "verification/oracles/", "refvi/kernels/")) for f in files)


def test_text_operators_and_test_order(project):
    """A binary operator joining or formatting text is not mutated (every replacement is a TypeError or a message);
    the unit tests of a file come fastest first within each group when a baseline's times are given."""
    cr_ast = pytest.importorskip("cosmic_ray.ast")
    src = 'msg = "x = %d" % n\ny = a % b\nz = "a" + s\n'
    tree = cr_ast.get_ast(src)
    assert run._on_text(tree, (1, 15)) and run._on_text(tree, (3, 8))
    assert not run._on_text(tree, (2, 6))
    pm = mutlib.ProjectMap(project, CFG)
    assert pm.tests_for("refvi/prox.py", {"tests/test_prox.py": 50.0}) == ["tests/test_prox.py", "tests/test_fit.py"]
    assert pm.tests_for("refvi/fit.py", {"tests/test_fit.py": 1.0})[0] == "tests/test_fit_extra.py"


def test_given_order_keeps_the_nearest_tests_first():
    """A mutant's ``pytest -x`` runs its files in the order given (tests/conftest.py would move its SLOW_FIRST files,
    minutes each, ahead of a 0.1 s file that kills the mutant); mutant.py asks for it."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    files = ["tests/test_docs_pages.py", "tests/test_docs_code.py"]  # the second is a SLOW_FIRST file
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", "--given-order", *files]
    first = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=True).stdout.splitlines()[0]
    assert first.startswith("tests/test_docs_pages.py::")
    assert '"-x", "--given-order"' in Path(mutant.__file__).read_text()


def test_a_slot_left_mutated_or_incomplete_is_found(tmp_path):
    """``--resume`` reuses a worker's copy only if it holds the working tree: a run stopped while a mutant ran leaves
    that mutant on disk (cosmic-ray restores the file after the test command returns)."""
    import os
    import shutil

    files = ["kernels/prox.py", "kernels/optim.py", "refvi/kernels"]  # two files and a link
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        src = run.ROOT / f
        if src.is_symlink():
            os.symlink(os.readlink(src), tmp_path / f)
        else:
            shutil.copy2(src, tmp_path / f)
    assert run.slot_differs(tmp_path, files) == []
    text = (tmp_path / "kernels/optim.py").read_text()
    (tmp_path / "kernels/optim.py").write_text(text.replace("gamma * gm[i]", "gamma / gm[i]", 1))
    assert run.slot_differs(tmp_path, files) == ["kernels/optim.py"]
    (tmp_path / "refvi/kernels").unlink()
    (tmp_path / "kernels/prox.py").unlink()
    assert run.slot_differs(tmp_path, files) == files


STAGE = """
import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(120)
"""

MUTANT = """
import os, sys
sys.path.insert(0, sys.argv[1])
import mutant
mutant.follow_driver(os.getppid(), every=0.1)
mutant.run_limited([sys.executable, "-c", sys.argv[2], sys.argv[3]], os.getcwd(), dict(os.environ), 120.0)
"""

DRIVER = """
import subprocess, sys, time
print(subprocess.Popen([sys.executable, "-c", *sys.argv[1:]]).pid, flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("how", ["driver-killed", "sigterm", "sigkill"])
def test_a_stopped_run_leaves_no_stage_running(tmp_path, how):
    """When the driver is killed, or the mutant's command gets SIGTERM or SIGKILL (cosmic-ray's backstop kills its
    process group), the stage it was running is killed with it: an interrupted sweep leaves no certificate or pytest
    process behind."""
    import os
    import signal
    import subprocess
    import time

    pidfile = tmp_path / "stage.pid"
    here = str(Path(mutant.__file__).parent)
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, MUTANT, here, STAGE, str(pidfile)], stdout=subprocess.PIPE, text=True
    )
    command = int(driver.stdout.readline())  # the mutant's command (mutant.py), started by the driver
    deadline = time.monotonic() + 60
    while not (pidfile.is_file() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    stage = int(pidfile.read_text())

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    if how == "driver-killed":
        driver.kill()
    else:
        os.kill(command, signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive(stage) and time.monotonic() < deadline:
        time.sleep(0.05)
    driver.kill()
    driver.wait()
    assert not alive(stage), "the stage outlived the run that started it"


def test_each_run_of_a_session_is_reported_apart(monkeypatch):
    """A resumed session runs its remaining mutants against the code of its time: the meta records each run and the
    report gives each part's rates (here the first part's certificate kills 1 of 2, the resumed part's 2 of 2)."""
    monkeypatch.setattr(run, "_head", lambda: "new1234")
    fresh: dict = {"commit": "abc1234", "date": "D0"}
    assert run.record_run(fresh, 0)["before"] == 0 and [r["commit"] for r in fresh["runs"]] == ["new1234"]
    old: dict = {"commit": "abc1234", "date": "D0"}  # a session from before runs were recorded, resumed twice
    run.record_run(old, 2)
    run.record_run(old, 3)
    assert [(r["commit"], r["before"]) for r in old["runs"]] == [("abc1234", 0), ("new1234", 2), ("new1234", 3)]
    recs = [
        _rec(1, "kernels/prox.py", "killed-by-certificate", "certificate"),
        _rec(2, "kernels/prox.py", "killed-by-tests", "tests"),
        _rec(3, "kernels/prox.py", "killed-by-certificate", "certificate"),
        _rec(4, "kernels/prox.py", "killed-by-certificate", "certificate"),
    ]
    meta = {
        "logs": ["L"],
        "runs": [{"commit": "abc1234", "date": "D0", "before": 0}, {"commit": "new1234", "date": "D1", "before": 2}],
    }
    block = mutlib.render_block(recs, {}, meta, CFG)
    assert "| 1 | `abc1234`, D0 | 2 | 1 / 2 (50 %) | — | 2 / 2 (100 %) | — |" in block
    assert "| 2 | `new1234`, D1 | 2 | 2 / 2 (100 %) | — | 2 / 2 (100 %) | — |" in block
    assert "By run" not in mutlib.render_block(recs, {}, {**meta, "runs": meta["runs"][:1]}, CFG)


def test_a_resumed_session_records_its_rebased_mutants(tmp_path):
    """cosmic-ray's session gets a work item for each rebased id (a result for an id it lacks is refused); the log
    says which mutants are done."""
    pytest.importorskip("cosmic_ray")
    from cosmic_ray.work_db import WorkDB, use_db

    site = {"file": "a.py", "operator": "core/AddNot", "occurrence": 0, "line": 3, "col": 4, "end": [3, 5]}
    first = [
        {**site, "id": "a.py:3:AddNot:0"},
        {**site, "id": "a.py:7:AddNot:0", "line": 7, "end": [7, 5], "occurrence": 1},
    ]
    session = tmp_path / "session.sqlite"
    assert run.sync_session(session, first) == set()
    rebased = [first[0], {**first[1], "id": "a.py:9:AddNot:0", "line": 9, "end": [9, 5]}]
    assert run.sync_session(session, rebased) == set()
    with use_db(str(session), WorkDB.Mode.open) as db:
        assert {w.job_id for w in db.work_items} == {"a.py:3:AddNot:0", "a.py:7:AddNot:0", "a.py:9:AddNot:0"}
    (tmp_path / "log.jsonl").write_text(json.dumps({"id": "a.py:9:AddNot:0", "outcome": "survived"}) + "\n")
    assert run.logged_ids(tmp_path) == {"a.py:9:AddNot:0"}


def test_update_docs_archives_the_log_it_reports(tmp_path, monkeypatch):
    """The rates a page cites stay readable from a fresh checkout: ``report --update-docs`` copies the session's log
    and its plan's meta into tests/mutation/logs/, cites that copy, and a report of the copy reads the same meta."""
    session = tmp_path / "sweep-x"
    session.mkdir()
    (session / "log.jsonl").write_text(json.dumps(_rec(1, "kernels/prox.py", "killed-by-certificate", "certificate")))
    meta = {"date": "2026-01-01 00:00 UTC", "commit": "abc1234", "machine": "M", "sample": 9, "candidates": 99}
    drawn = {"id": "kernels/prox.py:1:NumberReplacer:0", "file": "kernels/prox.py", "statements": ["001.thm1"]}
    (session / "plan.json").write_text(json.dumps({"meta": meta, "mutants": [drawn]}))
    archive, doc = tmp_path / "logs", tmp_path / "page.md"
    doc.write_text("# Page\n")
    monkeypatch.setattr(run, "ARCHIVE", archive)
    monkeypatch.setattr(run, "ROOT", tmp_path)
    assert run.main(["report", str(session / "log.jsonl"), "--update-docs", "--doc", str(doc)]) == 0
    kept = archive / "sweep-x.jsonl"
    assert kept.read_text() == (session / "log.jsonl").read_text()
    assert json.loads(kept.with_suffix(".plan.json").read_text())["meta"] == meta
    page = doc.read_text()
    assert "(logs/sweep-x.jsonl)" in page and "abc1234" in page and "2026-01-01" in page
    # the session folder gone (it is ignored by git): the archived copy reports the same
    shutil.rmtree(session)
    assert run.session_meta(kept) == meta
    assert run.archive_log(kept) == kept.resolve()
    # and resumed from it: the plan keeps the draw, not what each mutant ran (worked out again on resume)
    assert run.restore_session(session) and not run.restore_session(session)
    assert json.loads((session / "plan.json").read_text())["mutants"] == [{k: drawn[k] for k in ("id", "file")}]
    assert (session / "log.jsonl").read_text() == kept.read_text()


def test_no_test_starts_a_process_that_drops_the_workers_pythonpath():
    """A mutant's tests run with PYTHONPATH = the worker's copy (mutant.py); a test that gives a child process a
    PYTHONPATH of its own folders only makes the child import the unmutated checkout, and the mutant survive that test
    whatever it does. Every PYTHONPATH a test sets keeps the current one after its own (tests/_env.py)."""
    import re

    tests = Path(__file__).resolve().parents[1]
    setting = re.compile(r"""["']PYTHONPATH["']\s*[:,]\s*(.*)""")
    bad = []
    for path in sorted(tests.rglob("*.py")):
        for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = setting.search(line)
            if m and "pythonpath(" not in m.group(1) and 'environ.get("PYTHONPATH"' not in m.group(1):
                bad.append(f"{path.relative_to(tests)}:{k}: {line.strip()}")
    assert not bad, "PYTHONPATH replaced, not extended (use tests/_env.py):\n" + "\n".join(bad)


def test_a_mixin_below_the_class_the_tests_use_gets_their_tests_beside_its_configured_extras():
    """verification/statement/checks.py is imported only by probes.py, itself a mixin of the Context the tests import:
    the tests of the nearest importers further up must run for its mutants, also when the configuration names extra
    tests for every verification/ module (the golden run): the extras come first, not instead (until this was fixed
    its mutants ran the golden test alone)."""
    pm = mutlib.ProjectMap()
    tests = pm.tests_for("verification/statement/checks.py")
    assert tests[0] == "tests/verification/test_golden_output.py"
    assert "tests/verification/test_verdict_machinery.py" in tests and "tests/verification/test_certification.py" in tests
