"""verification/ stays arranged by the path of a certificate (ARCHITECTURE.md): a few modules at the top,
every package saying its job in its ``__init__`` docstring, and no module over 400 lines
(the statements and the examples aside)."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "verification"
#: the statements and the example implementations are sized by their papers, not by this rule
UNSIZED = ("statements", "examples")


def test_at_most_eight_modules_at_the_top():
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(top) <= 8, top


def test_every_package_says_its_job():
    for init in sorted(ROOT.rglob("__init__.py")):
        rel = init.relative_to(ROOT)
        if rel.parts[0] in UNSIZED and len(rel.parts) > 2:
            continue  # a paper's package, the bug zoo: described by their parent
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 8, f"verification/{rel} needs a docstring saying what the package is for"


def test_no_module_over_400_lines():
    long = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.split("/")[0] in UNSIZED:
            continue
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > 400:
            long.append(f"{rel}: {n} lines")
    assert not long, long
