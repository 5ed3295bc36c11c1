"""The test run compiles at LLVM -O1 into a cache of its own, and a timed (benchmark) run keeps Numba's -O3 and cache:
``tests/_numba_level.py``, called by ``tests/conftest.py``."""

import os
import subprocess
import sys
import types

import _numba_level
import pytest


def test_this_run_and_the_processes_it_starts_compile_at_O1_into_the_test_cache(request):
    if not request.config.numba_for_checking:
        pytest.skip("NUMBA_OPT was given, or benchmarks are timed: the level is the caller's")
    import numba.core.config

    assert int(numba.core.config.OPT) == 1
    assert numba.core.config.CACHE_DIR == os.environ["NUMBA_CACHE_DIR"]
    code = "import numba.core.config as c; print(int(c.OPT), c.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", os.environ["NUMBA_CACHE_DIR"]]


def _config(**options):
    return types.SimpleNamespace(getoption=lambda name, default=None: options.get(name, default))


@pytest.mark.parametrize("timing", ["benchmark_enable", "benchmark_only"])
def test_a_timed_run_keeps_numbas_default_level_and_cache(monkeypatch, timing):
    monkeypatch.delenv(_numba_level.CHOSEN, raising=False)
    monkeypatch.delenv("NUMBA_OPT", raising=False)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert _numba_level.numba_for_checking(_config(**{timing: True})) is False
    assert "NUMBA_OPT" not in os.environ and "NUMBA_CACHE_DIR" not in os.environ


def test_the_level_is_chosen_only_before_numba_loads_and_never_over_the_callers(monkeypatch):
    monkeypatch.delenv(_numba_level.CHOSEN, raising=False)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("NUMBA_OPT", "3")
    assert _numba_level.numba_for_checking(_config()) is False and os.environ["NUMBA_OPT"] == "3"
    monkeypatch.delenv("NUMBA_OPT")
    assert "numba" in sys.modules  # this process has loaded it: choosing now would mislabel its cache
    assert _numba_level.numba_for_checking(_config()) is False and "NUMBA_OPT" not in os.environ
    monkeypatch.delitem(sys.modules, "numba")
    assert _numba_level.numba_for_checking(_config()) is True
    assert os.environ["NUMBA_OPT"] == "1" and os.environ["NUMBA_CACHE_DIR"] == str(_numba_level.TEST_NUMBA_CACHE)
    monkeypatch.setenv("NUMBA_OPT", "1")    # a process this run starts (an xdist worker) sees the run's choice as such
    assert _numba_level.numba_for_checking(_config(benchmark_enable=True)) is True
