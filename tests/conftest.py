"""Test configuration: Hypothesis profiles (ci = default, fast; deep = many examples), single-threaded Numba, and
Numba's optimisation level (LLVM -O1 in a cache of the tests' own, unless benchmarks are timed)."""

import os
import sys
from pathlib import Path

from refvi.verification.pytest_plugin import leave_out_of_assertion_rewriting

# the plugins' libraries (Hypothesis, pytest-benchmark, xdist, ...) out of pytest's assertion rewriting, before this
# file imports Hypothesis: their asserts are not this suite's, and each pytest process re-parsed them
leave_out_of_assertion_rewriting()
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("deep", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_header(config):
    numba = f"NUMBA_OPT={os.environ.get('NUMBA_OPT', '3 (default)')}, cache {os.environ.get('NUMBA_CACHE_DIR', '__pycache__/')}"
    return (
        f"hypothesis profile: {settings._current_profile}; REFVI_PROFILE={os.environ.get('REFVI_PROFILE', 'ci')}; "
        f"{numba}"
    )


#: files whose tests take tens of seconds each (``pytest --durations``), run first: with ``pytest -n 2`` a long test
#: collected last would leave the other core idle at the end of the run.  (pytest-xdist's load scheduling hands each
#: worker its tests in batches of consecutive ones, which keeps the tests of one subsystem, and so the Numba kernels
#: they compile, on one worker; sending tests one at a time, ``--maxschedchunk 1``, took the suite from 7 min 52 s to
#: 8 min 55 s and 2 more minutes of CPU on 2026-11-26: both workers compiled the same kernels.)
SLOW_FIRST = (
    "tests/verification/test_interrupt_resume.py",
    "tests/test_docs_build.py",
    "tests/verification/test_impl_adapter.py",
    "tests/verification/test_parallel.py",
    "tests/verification/test_conformance.py",
    "tests/test_docs_code.py",
    "tests/test_notebooks.py",
)


#: where the test run keeps its Numba cache: code compiled at -O1 must never be loaded by a user's or a benchmark's
#: run (Numba's cache index does not record the optimisation level), so it is kept apart from ``__pycache__/``
TEST_NUMBA_CACHE = Path(__file__).resolve().parents[1] / ".numba-test-cache"


def numba_for_checking(config) -> bool:
    """Compile this run's kernels (and those of every process it starts) at LLVM -O1, unless benchmarks are timed.

    A check compares values, and the values do not depend on the optimisation level: without fast-math flags LLVM
    keeps every floating-point operation as written at any level; the one exception, ``jit_reduce``'s reassociated
    sums, rounds differently and is checked to tolerances either way.  -O1 compiles the suite's kernels in about half
    the time (``tests/kernels/test_optim_kernels.py``'s loops: 54 s of CPU at -O3, 31 s at -O1, cold cache, on
    2026-11-29) and runs them more slowly, which only timing claims would notice: those run with
    ``--benchmark-enable`` (``tests/benchmarks/track.py``), which keeps Numba's default -O3 and cache.  An explicit
    ``NUMBA_OPT`` or ``NUMBA_CACHE_DIR`` in the environment is kept.  Returns whether -O1 was chosen."""
    timing = config.getoption("benchmark_enable", False) or config.getoption("benchmark_only", False)
    # Numba already imported (pytest.main from a session that loaded it): too late for this process, which then
    # compiles at its level into the cache it has, and so do the processes it starts
    if timing or "NUMBA_OPT" in os.environ or "numba" in sys.modules:
        return False
    os.environ["NUMBA_OPT"] = "1"
    os.environ.setdefault("NUMBA_CACHE_DIR", str(TEST_NUMBA_CACHE))
    return True


def pytest_configure(config):
    config.numba_for_checking = numba_for_checking(config)
    # a fit that fails its diagnostics (or ends worse than it started) warns; in the tests that is an error unless the
    # test expects it (pytest.warns) or the fit is made to converge.  (Here rather than in pyproject.toml: pytest
    # resolves the ini file's warning classes before any plugin loads, which imported refvi's fit, Numba and SciPy
    # into every pytest process before refvi's plugin could keep them out of assertion rewriting.)
    config.addinivalue_line("filterwarnings", "error::refvi.optim.fit.ConvergenceWarning")


def pytest_addoption(parser):
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (minutes each: the documented command lines run for real)",
    )
    parser.addoption(
        "--given-order",
        action="store_true",
        default=False,
        help="run the files in the order given (no SLOW_FIRST): tests/mutation's pytest -x, nearest first",
    )


def pytest_collection_modifyitems(session, config, items):
    if not config.getoption("--run-slow"):
        skip = pytest.mark.skip(reason="slow: run with --run-slow")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)
    if config.getoption("--given-order"):
        return
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    key = {id(item): rank.get(item.nodeid.split("::")[0], len(SLOW_FIRST)) for item in items}
    items.sort(key=lambda item: key[id(item)])  # stable: the order within each file is kept
