"""tests/_compile_lock.py: a process that needs a cached kernel another process is compiling waits for it and loads
it from the disk cache instead of compiling it too."""

import importlib
import os
import subprocess
import sys
import textwrap
import time

import _compile_lock
import numba
import numpy as np

MODULE = textwrap.dedent("""
    import numba

    @numba.njit(cache=True)
    def twice(x):
        return 2.0 * x
""")

CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import _compile_lock
    _compile_lock.install(sys.argv[2])
    sys.path.insert(0, sys.argv[3])
    import lockprobe as mod
    print("ready", flush=True)
    print(mod.twice(1.5), sum(mod.twice._cache_hits.values()), sum(mod.twice._cache_misses.values()))
""")


def _load(folder, monkeypatch):
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "lockprobe", raising=False)
    return importlib.import_module("lockprobe")


def test_a_second_process_waits_and_loads_the_kernel_from_the_cache(tmp_path, monkeypatch):
    source = tmp_path / "lockprobe.py"
    source.write_text(MODULE)
    locks = tmp_path / "locks"
    folder = _compile_lock.install(str(locks))
    mod = _load(tmp_path, monkeypatch)  # its disk cache: tmp_path/__pycache__, as in the child
    key = _compile_lock._lock_key(mod.twice, (numba.float64,))
    assert key is not None and _compile_lock._lock_key(numba.njit(lambda x: x), (numba.float64,)) is None
    with _compile_lock._locked(folder, key):  # this process compiles while the child waits for the lock
        child = subprocess.Popen([sys.executable, "-c", CHILD, os.path.dirname(_compile_lock.__file__), folder,
                                  str(tmp_path)], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "ready\n"
        time.sleep(1.0)  # the child is calling twice(1.5) (unlocked, it would compile it now)
        assert mod.twice(np.float64(1.5)) == 3.0
        assert sum(mod.twice._cache_misses.values()) == 1
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0
    assert out.split() == ["3.0", "1", "0"]  # one cache hit, no compilation of its own
