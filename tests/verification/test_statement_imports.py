"""The layout of the statement packages: statements hand implementations plain data, so no statement module may import
refvi outside refvi.verification (every import is checked, including those inside functions); each module is small
(<= 500 lines) and defines no adapter (no class with protocol methods: adapters live in verification/protocol)."""

import ast
import pathlib

import pytest

import refvi.verification.statements as statements_pkg

STATEMENTS_DIR = pathlib.Path(statements_pkg.__file__).parent

def refvi_imports(path: pathlib.Path) -> list[str]:
    """Every module ``path`` imports from refvi outside refvi.verification, with its line number."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:                                   # relative: resolve against refvi.verification.statements
                base = ["refvi", "verification", "statements"][: 3 - (node.level - 1)]
                names = [".".join(base + ([node.module] if node.module else []))]
                if not node.module:
                    names = [f"{names[0]}.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
        else:
            continue
        for name in names:
            if (name == "refvi" or name.startswith("refvi.")) and not (
                    name == "refvi.verification" or name.startswith("refvi.verification.")):
                found.append(f"{path.name}:{node.lineno} imports {name}")
    return found


MODULES = sorted(STATEMENTS_DIR.rglob("*.py"))
IDS = [p.relative_to(STATEMENTS_DIR).as_posix() for p in MODULES]
MAX_LINES = 500


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_statement_module_imports_no_refvi_outside_verification(path):
    assert not refvi_imports(path), refvi_imports(path)


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_statement_module_is_small_and_defines_no_adapter(path):
    text = path.read_text()
    assert len(text.splitlines()) <= MAX_LINES, f"{path.name}: {len(text.splitlines())} lines; split it by topic"
    classes = [n.name for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)]
    words = ("adapter", "impl", "online", "boosting", "ngvi")
    protocol_like = [c for c in classes if any(w in c.lower() for w in words)]
    assert not protocol_like, f"{path.name} defines {protocol_like}: adapters belong in verification/protocol"


def test_every_paper_has_its_package():
    packages = sorted(p.parent.name for p in STATEMENTS_DIR.glob("*/__init__.py"))
    assert packages == ["boosting_001", "convergence_000", "ngvi_004", "online_003", "smoothness_002"], packages


def test_the_check_sees_imports_inside_functions(tmp_path):
    src = tmp_path / "probe.py"
    src.write_text("import numpy\nfrom refvi.verification import statement\n\n"
                   "def f():\n    from refvi.targets import Gaussian\n    import refvi.estimators as e\n"
                   "    from .. import oracles\n    from ... import targets\n")
    found = refvi_imports(src)
    assert found == ["probe.py:5 imports refvi.targets", "probe.py:6 imports refvi.estimators",
                     "probe.py:8 imports refvi.targets"], found


def float_calls(path: pathlib.Path) -> list[str]:
    """Calls to the builtin ``float(...)`` (it drops the marks of a reported value: refvi.verification.statement.provenance;
    the statements write ``scalar(...)``), with their line numbers."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [f"{path.name}:{n.lineno}" for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "float"]


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_statement_module_converts_with_scalar_not_float(path):
    assert not float_calls(path), f"float() drops what a value was reported by; use scalar(): {float_calls(path)}"
