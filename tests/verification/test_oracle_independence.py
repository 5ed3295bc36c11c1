"""Oracles import only numpy / scipy / sympy / mpmath, ArviZ (an outside PSIS implementation) and each other — never
refvi or its kernels."""

import ast
import pathlib

import pytest

ORACLES = sorted((pathlib.Path(__file__).resolve().parents[2] / "verification" / "oracles").glob("*.py"))
ALLOWED = ("numpy", "scipy", "sympy", "mpmath", "math", "cmath", "itertools", "functools", "dataclasses",
           "typing", "__future__", "collections", "warnings", "fractions", "decimal", "operator",
           "importlib.util", "arviz", "refvi.verification.oracles")


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:          # relative import inside the oracles package
                yield "refvi.verification.oracles"
            else:
                yield node.module


@pytest.mark.parametrize("path", ORACLES, ids=[p.stem for p in ORACLES])
def test_oracle_imports_nothing_it_checks(path):
    bad = [m for m in _imports(path) if not any(m == a or m.startswith(a + ".") for a in ALLOWED)]
    assert not bad, f"{path.name} imports {bad}: an oracle must not share code with what it checks"
