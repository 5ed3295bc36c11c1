"""The Numba optimisation level of the test run (``tests/conftest.py``): LLVM -O1 into a cache of the tests' own,
unless benchmarks are timed."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: where the test run keeps its Numba cache: code compiled at -O1 must never be loaded by a user's or a benchmark's
#: run (Numba's cache index does not record the optimisation level), so it is kept apart from ``__pycache__/``
TEST_NUMBA_CACHE = Path(__file__).resolve().parents[1] / ".numba-test-cache"
#: set when this module chose the level, so that the processes the run starts (pytest-xdist's workers among them)
#: know the choice was the run's, not the caller's
CHOSEN = "REFVI_TESTS_NUMBA_O1"


def numba_for_checking(config) -> bool:
    """Compile this run's kernels (and those of every process it starts) at LLVM -O1, unless benchmarks are timed.

    A check compares values, and the values do not depend on the optimisation level: without fast-math flags LLVM
    keeps every floating-point operation as written at any level; the one exception, ``jit_reduce``'s reassociated
    sums, rounds differently and is checked to tolerances either way.  -O1 compiles the suite's kernels in about half
    the time (``tests/kernels/test_optim_kernels.py``'s loops: 54 s of CPU at -O3, 31 s at -O1, cold cache, on
    2026-11-29) and runs them more slowly, which only timing claims would notice: those run with
    ``--benchmark-enable`` (``tests/benchmarks/track.py``), which keeps Numba's default -O3 and cache.  An explicit
    ``NUMBA_OPT`` or ``NUMBA_CACHE_DIR`` in the environment is kept.  Returns whether -O1 was chosen (here or by the
    run that started this process)."""
    if os.environ.get(CHOSEN) == "1":
        return True
    timing = config.getoption("benchmark_enable", False) or config.getoption("benchmark_only", False)
    # Numba already imported (pytest.main from a session that loaded it): too late for this process, which then
    # compiles at its level into the cache it has, and so do the processes it starts
    if timing or "NUMBA_OPT" in os.environ or "numba" in sys.modules:
        return False
    os.environ["NUMBA_OPT"] = "1"
    os.environ[CHOSEN] = "1"
    os.environ.setdefault("NUMBA_CACHE_DIR", str(TEST_NUMBA_CACHE))
    return True
