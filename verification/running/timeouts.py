"""Per-statement time limits (``--timeout SECONDS``): an implementation that never returns gets a verdict.

* In a worker process (``--workers N``), :func:`worker_watchdog` arms ``faulthandler.dump_traceback_later``, a C
  thread that fires even while a compiled kernel holds the GIL: it writes every thread's traceback to
  ``<directory>/<statement id>.timeout`` and ends the process.  The parent reads the file (:func:`timed_out`) and
  records the statement as an ``error`` "timed out" with the innermost frames of the thread that ran it
  (:func:`timeout_record`); it is not re-run.
* In a serial run, :func:`serial_limit` raises :class:`StatementTimeout` in the main thread (``SIGALRM``), which the
  runner turns into the same record and the run goes on.  A compiled loop that never returns to the interpreter cannot
  be interrupted in-process: a minute later every thread's traceback goes to stderr (where it hangs), and the run keeps
  waiting; ``--workers 1`` stops it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import pathlib
import signal
import sys
import threading
import traceback

#: the default per-statement limit by profile (seconds; ``--timeout 0`` for none).  The slowest ``ci`` statement
#: takes about 90 s on the NumPy example, refvi's about 5 s after Numba's compilation.
DEFAULT_TIMEOUT = {"ci": 900.0, "deep": 3600.0}


class StatementTimeout(BaseException):
    """Raised in the main thread of a serial run when a statement exceeds its limit (a BaseException, so that no
    ``except Exception`` of a statement or an implementation swallows it)."""

    def __init__(self, seconds: float):
        super().__init__(f"no result after {seconds:g} s")
        self.seconds = seconds


def limit(profile: str, timeout: float | None) -> float:
    """The limit in seconds: ``timeout``, or the profile's default when None; 0 means none."""
    value = DEFAULT_TIMEOUT.get(profile, 3600.0) if timeout is None else float(timeout)
    if not value >= 0:
        raise ValueError(f"--timeout must be >= 0 seconds, got {timeout}")
    return value


def timeout_record(sid: str, seconds: float, frames: list[str]) -> dict:
    """The ``error`` record of statement ``sid`` stopped after ``seconds``; ``frames``: innermost first."""
    from refvi.verification.running.runner import load_statements, statement_record

    return {
        **statement_record(load_statements()[sid], "error"),
        "seconds": float(seconds),
        "detail": f"timed out: no result after {seconds:g} s (an endless loop or a hang in the implementation?); "
        f"it was at: {' <- '.join(frames[:3]) or 'unknown'}.  Raise the limit with --timeout if the "
        f"implementation is only slow",
    }


@contextlib.contextmanager
def worker_watchdog(sid: str, watch: tuple[str, float] | None):
    """Within the block, a statement running longer than ``watch = (directory, seconds)`` has every thread's
    traceback written to ``directory/<sid>.timeout`` and its process ended; nothing when ``watch`` is None or 0 s."""
    if not watch or not watch[1]:
        yield
        return
    path = pathlib.Path(watch[0]) / f"{sid}.timeout"
    path.parent.mkdir(parents=True, exist_ok=True)  # a worker on another machine (--scheduler)
    with open(path, "w", encoding="utf-8") as fh:
        faulthandler.dump_traceback_later(float(watch[1]), repeat=False, file=fh, exit=True)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
    if path.stat().st_size == 0:
        path.unlink()


def timed_out(sid: str, watch: tuple[str, float] | None) -> dict | None:
    """The ``error`` record of ``sid`` if its worker watchdog fired, else None."""
    if not watch or not watch[1]:
        return None
    path = pathlib.Path(watch[0]) / f"{sid}.timeout"
    if not path.exists():
        return None
    dump = path.read_text(encoding="utf-8", errors="replace")
    if not dump.startswith("Timeout"):
        return None
    # faulthandler lists every thread, innermost frame first: quote the thread that was running the statement
    blocks = [b for b in dump.split("\n\n") if "run_statement" in b] or [dump]
    frames = [ln.strip() for ln in blocks[0].splitlines() if ln.strip().startswith("File ")]
    return timeout_record(sid, float(watch[1]), frames)


def frames_of(exc: BaseException) -> list[str]:
    """The innermost frames of ``exc``'s traceback, innermost first, as faulthandler words them."""
    frames = reversed(traceback.extract_tb(exc.__traceback__))
    return [f'File "{f.filename}", line {f.lineno} in {f.name}' for f in frames if f.filename != __file__]


@contextlib.contextmanager
def serial_limit(seconds: float):
    """Within the block (main thread of a serial run): :class:`StatementTimeout` after ``seconds`` (0: never); a
    minute later, if the interpreter never got control back, every thread's traceback to stderr, once."""
    usable = seconds and hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def _raise(signum, frame):
        raise StatementTimeout(seconds)

    try:
        sys.stderr.fileno()
        report = True
    except (AttributeError, OSError, ValueError):  # stderr captured (pytest) or replaced: no report
        report = False
    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    if report:
        faulthandler.dump_traceback_later(float(seconds) + 60.0, repeat=False, file=sys.stderr, exit=False)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)
        if report:
            faulthandler.cancel_dump_traceback_later()
