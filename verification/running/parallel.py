"""Run statements in parallel (``--workers N``): on Dask distributed when it is installed (a ``LocalCluster`` of N
single-threaded worker processes, or an existing cluster with ``--scheduler ADDRESS``), else on N local processes.

The certificate does not depend on the number of workers: every statement's instances are derandomized by its id
(:meth:`~refvi.verification.statement.Context.rng`, Hypothesis ``derandomize=True``), each statement runs whole in
one worker, and records are merged in the order of :func:`~refvi.verification.running.runner.select`.  Only ``seconds``
differs between runs.  Tasks are submitted longest first (by the durations of a previous certificate when one is
given), which keeps the tail short.

A statement whose worker process dies (a segfault or abort inside the implementation, e.g. an out-of-bounds index in
a compiled kernel) gets an ``error`` record saying so (:func:`~refvi.verification.certificate.record.crash_record`)
and the run goes on.  Dask tries each task once (``allowed-failures = 0``), replaces the dead worker and re-runs
alone every statement that was on it; the process pool, once broken, runs the statements it had not finished one at
a time.  Either way the crash is pinned to its statement.

A statement that does not return within ``timeout`` seconds (an endless loop in the implementation) is stopped the
same way, by a watchdog in its worker (:func:`.timeouts.worker_watchdog`): it gets an ``error`` record "timed out"
naming where it was, is not re-run, and the run goes on.

An interrupt (SIGINT, SIGTERM: ``KeyboardInterrupt`` in the main process) or ``-x`` stops the run: queued statements
are cancelled, the worker processes are terminated (the process pool) or the cluster is closed (Dask), and the
exception propagates to the runner, which keeps the records that had finished.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence

from refvi.verification.running.timeouts import limit, timed_out, worker_watchdog

#: the level below which a local Dask cluster's own log lines are not printed: the records already say which
#: statement failed and which worker died, and when an interrupted run closes the cluster, a worker's heartbeat to
#: the closing scheduler can log a traceback that is only noise (it broke the one-line interrupt message in one of
#: 16 interrupted runs on 2026-11-26)
DASK_LOG_LEVEL = logging.CRITICAL


def _local_cluster(workers: int):
    """A local Dask cluster of ``workers`` single-threaded processes, no dashboard port, its logs at DASK_LOG_LEVEL."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=DASK_LOG_LEVEL
    )


def _run_one(
    sid: str,
    impl_spec: str | None,
    profile: str,
    search: dict | None = None,
    watch: tuple[str, float] | None = None,
    artifacts: str | None = None,
) -> dict:
    """Worker side: load the statements and the implementation by name, run one statement (under a watchdog)."""
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    from refvi.verification.protocol.loading import load_implementation
    from refvi.verification.running import runner

    st = runner.load_statements()[sid]
    impl = load_implementation(impl_spec)
    with worker_watchdog(sid, watch):
        rec = runner.run_statement(st, impl, profile, search, artifacts=artifacts, impl_spec=impl_spec)
    if search is not None:
        rec["search"] = search
    return rec


def run_parallel(
    ids: Sequence[str],
    impl_spec: str | None,
    profile: str,
    workers: int,
    scheduler: str | None = None,
    durations: dict[str, float] | None = None,
    progress: Callable[[dict], None] | None = None,
    timeout: float | None = None,
    artifacts: str | None = None,
) -> list[dict]:
    """Records for ``ids`` (in that order), computed on ``workers`` processes or the Dask cluster at ``scheduler``;
    a statement still running after ``timeout`` seconds (None: :data:`.timeouts.DEFAULT_TIMEOUT`, 0: none) is an
    error.  ``progress(record)`` is called as each statement finishes (an exception it raises, like an interrupt,
    stops the run: see the module docstring)."""
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    timeout = limit(profile, timeout)
    order = sorted(ids, key=lambda s: -(durations or {}).get(s, 0.0))
    watch_dir = tempfile.mkdtemp(prefix="refvi-watchdog-")
    watch = (watch_dir, timeout)
    try:
        try:
            import distributed  # noqa: F401
        except ImportError:
            if scheduler is not None:
                raise RuntimeError("--scheduler needs Dask distributed: pip install 'refvi[dask]'") from None
            results = _run_processes(order, impl_spec, profile, workers, progress, watch, artifacts)
        else:
            results = _run_dask(order, impl_spec, profile, workers, scheduler, progress, watch, artifacts)
    finally:
        shutil.rmtree(watch_dir, ignore_errors=True)
    return [results[s] for s in ids]


def map_tasks(tasks: Sequence[tuple], workers: int, scheduler: str | None = None) -> list[dict]:
    """``_run_one(*task)`` for each task, on Dask (if installed) or local processes; results in task order."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
            futures = [pool.submit(_run_one, *t) for t in tasks]
            out = [f.result() for f in futures]
    else:
        from distributed import Client

        cluster = None if scheduler else _local_cluster(workers)
        client = Client(scheduler or cluster)
        try:
            out = client.gather([client.submit(_run_one, *t, pure=False) for t in tasks])
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    return out


def _worker_init() -> None:
    """Worker processes leave SIGINT to the main process (which stops them): a Ctrl-C at a terminal reaches the
    whole process group, and an idle worker would otherwise print a KeyboardInterrupt traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminate(pool) -> None:
    """Stop a process pool now: cancel what is queued, terminate the workers, wait for them to exit."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
            p.join(timeout=5)


def _run_processes(order, impl_spec, profile, workers, progress, watch=None, artifacts=None) -> dict[str, dict]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    from refvi.verification.running import runner

    def done(sid, rec):
        out[sid] = rec
        if progress is not None:
            progress(rec)

    out: dict[str, dict] = {}
    ctx = mp.get_context("spawn")
    wide = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init)
    pool: ProcessPoolExecutor | None = wide  # the pool to terminate on an interrupt
    try:
        futures = {wide.submit(_run_one, s, impl_spec, profile, None, watch, artifacts): s for s in order}
        try:
            for fut in as_completed(futures):
                done(futures[fut], fut.result())
        except BrokenProcessPool:
            pass  # a worker died: which statement killed it is found below
        wide.shutdown()
        # after a crash: the unfinished statements one at a time, so that a death names its statement
        pool = None
        for s in [s for s in order if s not in out]:
            if (rec := timed_out(s, watch)) is not None:
                done(s, rec)
                continue
            pool = pool or ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_worker_init)
            try:
                done(s, pool.submit(_run_one, s, impl_spec, profile, None, watch, artifacts).result())
            except BrokenProcessPool as exc:
                done(s, timed_out(s, watch) or runner.crash_record(s, f"its worker process died ({exc})"))
                pool.shutdown(wait=False)
                pool = None
    except BaseException:  # an interrupt or -x: no worker is left behind
        if pool is not None:
            _terminate(pool)
        raise
    if pool is not None:
        pool.shutdown()
    return out


def _run_dask(order, impl_spec, profile, workers, scheduler, progress, watch=None, artifacts=None) -> dict[str, dict]:
    import dask
    from distributed import Client, KilledWorker, as_completed

    from refvi.verification.running import runner

    cluster = None
    if scheduler is None:
        # a death is not retried on other workers (it would kill them too); the suspects are re-run alone below
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            cluster = _local_cluster(workers)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    out = {}
    futures: dict = {}
    try:
        futures = {
            client.submit(
                _run_one, s, impl_spec, profile, None, watch, artifacts, key=f"refvi-{profile}-{s}", pure=False
            ): s
            for s in order
        }
        suspects = []
        for fut in as_completed(list(futures)):
            try:
                rec = fut.result()
            except KilledWorker:  # it, or a statement queued on the same worker, crashed
                suspects.append(futures[fut])
                continue
            out[rec["id"]] = rec
            if progress is not None:
                progress(rec)
        for s in suspects:  # alone on the cluster: a death now is this statement's
            rec = timed_out(s, watch)
            if rec is None:
                try:
                    rec = client.submit(
                        _run_one,
                        s,
                        impl_spec,
                        profile,
                        None,
                        watch,
                        artifacts,
                        key=f"refvi-{profile}-{s}-alone",
                        pure=False,
                    ).result()
                except KilledWorker:
                    rec = timed_out(s, watch) or runner.crash_record(s, "the Dask worker running it died")
            out[s] = rec
            if progress is not None:
                progress(rec)
    except BaseException:  # an interrupt or -x: cancel what is queued before the cluster closes
        client.cancel(list(futures), force=True)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return out
