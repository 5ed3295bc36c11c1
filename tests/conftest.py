"""Test configuration: Hypothesis profiles (ci = default, fast; deep = many examples) and single-threaded Numba."""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_header(config):
    return f"hypothesis profile: {settings._current_profile}; REFVI_PROFILE={os.environ.get('REFVI_PROFILE', 'ci')}"


#: files whose tests take tens of seconds each (``pytest --durations``), run first: with ``pytest -n 2`` a long test
#: collected last would leave the other core idle at the end of the run.  Those that compile none of refvi's kernels
#: (the NumPy, JAX and BlackJAX certificates, the docs build, mypy) come first, so that the worker they start on is
#: busy with them while the other compiles the kernels into Numba's disk cache; the subprocess tests after them then
#: load the kernels instead of compiling them again
SLOW_FIRST = (
    "tests/verification/test_conformance_seeds.py",
    "tests/verification/test_peer_adapters.py",
    "tests/test_docs_build.py",
    "tests/test_lint.py",
    "tests/verification/test_interrupt_resume.py",
    "tests/verification/test_impl_adapter.py",
    "tests/verification/test_parallel.py",
    "tests/verification/test_conformance.py",
)


def pytest_configure(config):
    # pytest-xdist's load scheduling first hands each worker a quarter of its share of the tests, by count: the
    # long tests collected first (SLOW_FIRST) then all went to the first worker, whose first batch alone took more
    # than half the run while the other ran out of work.  One test at a time, each worker takes the next when it
    # is ready, and the long ones are shared out
    if hasattr(config.option, "maxschedchunk") and config.option.maxschedchunk is None:
        config.option.maxschedchunk = 1


def pytest_collection_modifyitems(session, config, items):
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    key = {id(item): rank.get(item.nodeid.split("::")[0], len(SLOW_FIRST)) for item in items}
    items.sort(key=lambda item: key[id(item)])  # stable: the order within each file is kept
