"""Test configuration: Hypothesis profiles (ci = default, fast; deep = many examples), single-threaded Numba, and
Numba's optimisation level (LLVM -O1 in a cache of the tests' own, unless benchmarks are timed)."""

import os

from _numba_level import numba_for_checking

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
