"""Run statements in parallel (``--workers N``): on Dask distributed when it is installed (a ``LocalCluster`` of N
single-threaded worker processes, or an existing cluster with ``--scheduler ADDRESS``), else on N local processes.

The certificate does not depend on the number of workers: every statement's instances are derandomized by its id
(:meth:`Context.rng`, Hypothesis ``derandomize=True``), each statement runs whole in one worker, and records are
merged in the order of :func:`runner.select`.  Only ``seconds`` differs between runs.  Tasks are submitted longest
first (by the durations of a previous certificate when one is given), which keeps the tail short.
"""

from __future__ import annotations

import os
from typing import Callable, Sequence


def _run_one(sid: str, impl_spec: str | None, profile: str, search: dict | None = None) -> dict:
    """Worker side: load the statements and the implementation by name, run one statement."""
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    from refvi.verification import runner
    from refvi.verification.protocol.loading import load_implementation

    st = runner.load_statements()[sid]
    rec = runner.run_statement(st, load_implementation(impl_spec), profile, search)
    if search is not None:
        rec["search"] = search
    return rec


def run_parallel(ids: Sequence[str], impl_spec: str | None, profile: str, workers: int,
                 scheduler: str | None = None, durations: dict[str, float] | None = None,
                 progress: Callable[[dict], None] | None = None) -> list[dict]:
    """Records for ``ids`` (in that order), computed on ``workers`` processes or the Dask cluster at ``scheduler``."""
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    order = sorted(ids, key=lambda s: -(durations or {}).get(s, 0.0))
    try:
        import distributed  # noqa: F401
    except ImportError:
        if scheduler is not None:
            raise RuntimeError("--scheduler needs Dask distributed: pip install 'refvi[dask]'") from None
        results = _run_processes(order, impl_spec, profile, workers, progress)
    else:
        results = _run_dask(order, impl_spec, profile, workers, scheduler, progress)
    return [results[s] for s in ids]


def map_tasks(tasks: Sequence[tuple], workers: int, scheduler: str | None = None,
              progress: Callable[[dict], None] | None = None) -> list[dict]:
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
        from distributed import Client, LocalCluster

        cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                      dashboard_address=None, silence_logs=40)
        client = Client(scheduler or cluster)
        try:
            out = client.gather([client.submit(_run_one, *t, pure=False) for t in tasks])
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    for rec in out:
        if progress is not None:
            progress(rec)
    return out


def _run_processes(order, impl_spec, profile, workers, progress) -> dict[str, dict]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    out = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        futures = {pool.submit(_run_one, s, impl_spec, profile): s for s in order}
        for fut in as_completed(futures):
            out[futures[fut]] = rec = fut.result()
            if progress is not None:
                progress(rec)
    return out


def _run_dask(order, impl_spec, profile, workers, scheduler, progress) -> dict[str, dict]:
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=40)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    out = {}
    try:
        futures = [client.submit(_run_one, s, impl_spec, profile, key=f"refvi-{profile}-{s}", pure=False)
                   for s in order]
        for fut in as_completed(futures):
            rec = fut.result()
            out[rec["id"]] = rec
            if progress is not None:
                progress(rec)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return out
