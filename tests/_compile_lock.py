"""One compilation of each disk-cached kernel across the test processes.

With ``pytest -n 2`` on a cold cache both workers often need the same kernel at the same moment (the suite's first
tests use the same optimiser kernels), and Numba then compiles it in both: the second compilation is thrown away
when the first is written to the cache.  :func:`install` makes a process take a file lock per (cached function,
signature) around Numba's ``Dispatcher.compile``; a process that finds the lock held waits, and Numba's own first
step inside the lock is to load the signature from the disk cache, which the other process has just written.

Only functions with a disk cache (``cache=True``) are locked; a function compiled while the same process holds its
lock (recursion) is not locked again.  Numba compiles a function's callees from inside its compilation, and the
callees of a kernel never call back into it, so two processes cannot wait on each other; within a process Numba's
compiler lock is taken first, so its threads cannot either.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile

_HELD: set[str] = set()


def _lock_key(dispatcher, sig) -> str | None:
    cache_file = getattr(dispatcher._cache, "_cache_file", None)  # a NullCache (no disk cache) has none
    index = getattr(cache_file, "_index_path", None)
    if index is None:
        return None
    return hashlib.sha1(f"{index}|{sig}".encode()).hexdigest()


@contextlib.contextmanager
def _locked(folder: str, key: str | None):
    if key is None or key in _HELD:
        yield
        return
    with open(os.path.join(folder, key + ".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)
            fcntl.flock(fh, fcntl.LOCK_UN)


def install(folder: str | None = None) -> str:
    """Lock every later compilation of a disk-cached Numba function in this process (idempotent); returns the
    folder of the lock files (shared by the processes that should not compile the same kernel twice)."""
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.dispatcher import Dispatcher

    folder = folder or os.path.join(tempfile.gettempdir(), f"refvi-numba-compile-locks-{os.getuid()}")
    os.makedirs(folder, exist_ok=True)
    original = Dispatcher.compile
    if getattr(original, "_refvi_locked", False):
        return folder

    def compile(self, sig):
        # Numba's in-process compiler lock first (re-entrant; the original takes it too): two threads of one process
        # never hold a file lock each while waiting for the other's
        with global_compiler_lock, _locked(folder, _lock_key(self, sig)):
            return original(self, sig)

    compile._refvi_locked = True  # type: ignore[attr-defined]
    Dispatcher.compile = compile
    return folder
