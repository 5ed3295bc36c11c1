"""Style and types: ``ruff check`` and ``ruff format --check`` are clean over the whole tree, and ``mypy`` over the
package (the rules and the mypy settings are in pyproject.toml).

ruff runs on the repository root with pyproject.toml's configuration, so tests/, notebooks/ and docs/ are linted with
the same rules as the library; what pyproject.toml exempts it exempts (tests/ and notebooks/ from the format check,
Markdown code blocks from formatting, a few rules per folder), and nothing else is left out but the paths in
``PENDING`` (being edited on other branches; the lead lints them after merging and empties the list). mypy always
checks the whole package (``packages = ["refvi"]``, so imports resolve as users see them) and this test fails on the
errors it reports inside ``MYPY_CLEAN`` and outside ``PENDING``. ruff and mypy are in the ``test`` extra; without them
the tests skip, except under ``REFVI_REQUIRE_PEERS=1`` (CI), where a missing tool is a failure. The same ruff commands
run before each commit when the hooks of ``.pre-commit-config.yaml`` are installed (CONTRIBUTING.md, "Before you
commit").

Measured on 2026-11-26 on the 2-core development machine: ruff check and ruff format --check 0.2 s each; mypy 13 s
of CPU cold (an empty ``.mypy_cache``; the peer libraries' annotations are not followed, see pyproject.toml) and
1.8 s warm (the default ``.mypy_cache`` in the checkout, which later runs reuse).
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: paths (relative to the repository root) whose mypy errors fail the test: the whole package (ruff covers the tree)
MYPY_CLEAN = ["refvi", "kernels", "verification"]

#: paths not held to ruff and mypy yet (being edited on other branches when ruff grew to the whole tree; the lead
#: lints them after merging and empties this list)
PENDING: list[str] = []

_REQUIRED = os.environ.get("REFVI_REQUIRE_PEERS") == "1"
# mypy names refvi.verification / refvi.kernels modules by their package path (the links refvi/verification, ...)
_LINKS = {"refvi/verification/": "verification/", "refvi/kernels/": "kernels/"}
_MYPY_ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+(?::\d+)?: error: ")


def _need(tool: str) -> None:
    if importlib.util.find_spec(tool) is None:
        if _REQUIRED:
            pytest.fail(f"{tool} is not installed (it is in the `test` extra; REFVI_REQUIRE_PEERS=1 requires it)")
        pytest.skip(f"{tool} is not installed (pip install -e '.[test]')")


def _run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _in_clean(path: str) -> bool:
    path = path.replace(os.sep, "/")
    for link, target in _LINKS.items():
        if path.startswith(link):
            path = target + path[len(link) :]
    return _under(path, MYPY_CLEAN) and not _under(path, PENDING)


def _under(path: str, roots: list[str]) -> bool:
    return any(path == c or path.startswith(c.rstrip("/") + "/") for c in roots)


def _exclude_pending() -> list[str]:
    """ruff options leaving PENDING out (added to pyproject.toml's excludes, which stay in force)."""
    return [arg for p in PENDING for arg in ("--extend-exclude", p)]


def test_clean_paths_exist():
    missing = [c for c in MYPY_CLEAN + PENDING if not (ROOT / c).exists()]
    assert not missing, f"tests/test_lint.py MYPY_CLEAN or PENDING lists paths that do not exist: {missing}"


def test_ruff_check():
    _need("ruff")
    proc = _run("ruff", "check", "--no-fix", *_exclude_pending(), ".", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format():
    _need("ruff")
    proc = _run("ruff", "format", "--check", *_exclude_pending(), ".", timeout=300)
    assert proc.returncode == 0, "run `ruff format` on these files:\n" + proc.stdout + proc.stderr


def test_mypy():
    _need("mypy")
    # the configuration ([tool.mypy] in pyproject.toml) names the package; the cache is the default .mypy_cache
    proc = _run("mypy", timeout=900)
    out = proc.stdout + proc.stderr
    # exit 0: no error, 1: errors reported; anything else (2: crash, bad configuration) fails whatever CLEAN holds
    assert proc.returncode in (0, 1), out
    assert re.search(r"^(Success: no issues found|Found \d+ errors?) ", out, re.M), out
    errors = [line for line in out.splitlines() if (m := _MYPY_ERROR.match(line)) and _in_clean(m["path"])]
    assert not errors, f"{len(errors)} mypy errors in MYPY_CLEAN paths:\n" + "\n".join(errors)


@pytest.mark.parametrize(
    "path, clean",
    [
        ("refvi/verification/running/runner.py", True),
        ("refvi/verification/protocol/core.py", True),
        ("refvi/ngvi/ngd.py", True),
        ("refvi/verification/statements/ngvi_004/ngd.py", True),
        ("refvi/optim/fit.py", True),
        ("refvi/kernels/boosting.py", True),
        ("refvi/verification/statements/online_003/assumptions.py", True),
        ("refvi/verification/certificate/compatibility.py", True),
        ("verification/examples/bug_zoo/core.py", True),
        ("tests/test_lint.py", False),
    ],
)
def test_clean_path_matching(path, clean):
    assert _in_clean(path) is clean
