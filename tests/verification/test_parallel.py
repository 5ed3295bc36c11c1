"""--workers: the certificate is the same whatever the number of workers (only timings differ), on Dask distributed
and on the local-process fallback.  A crashing or hanging statement is tested on the process pool in the default run
and on Dask with ``pytest --run-slow`` (a Dask cluster costs ~15 s to start), as is the Dask certificate here: the
default run's Dask cluster is test_interrupt_resume.py's, whose run resumed on two Dask workers must give the serial
certificate."""

import json
import os
import subprocess
import sys

import pytest
from _env import env_with, pythonpath  # tests/_env.py

from refvi.verification.running import parallel, runner

#: one statement of each kind from four papers (symbolic, exact with the implementation, oracle-only, statistical),
#: each well under a second
IDS = ["000.lemma31", "002.lemma15", "002.lemma11", "004.lemma4", "003.claim-sva-corollary"]


def _strip(records):
    """Records without what depends on the process: wall time, and warnings (a module's import-time warning is
    raised in whichever statement imports it first in that process)."""
    return [{k: v for k, v in r.items() if k not in ("seconds", "warnings")} for r in records]


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The serial certificate as a user gets it: one process, no workers.  (Run in a subprocess: inside pytest,
    Hypothesis's own pytest integration can change which instances a derandomized run draws.)"""
    path = tmp_path_factory.mktemp("serial") / "cert.json"
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--json", str(path), "--select", *IDS],
                          capture_output=True, text=True, timeout=600, cwd=path.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return _strip(json.loads(path.read_text())["statements"])


def test_process_fallback_gives_the_serial_certificate(serial):
    order = runner.select(runner.load_statements().values(), IDS)
    out = parallel._run_processes([s.id for s in order], None, "ci", 2, None)
    assert _strip([out[s.id] for s in order]) == serial


@pytest.mark.slow  # by default, test_interrupt_resume.py resumes on two Dask workers to the serial certificate
def test_dask_workers_give_the_serial_certificate(serial, tmp_path):
    pytest.importorskip("distributed")
    path = tmp_path / "cert.json"
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--workers", "2", "--json", str(path),
                           "--select", *IDS], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _strip(json.loads(path.read_text())["statements"]) == serial


def test_statements_start_longest_first_unknown_durations_last_and_come_back_in_the_given_order(monkeypatch):
    """The pool is fed the longest recorded statements first (they bound the wall time), statements with no recorded
    duration (new ones) last; the records come back in the order the ids were given."""
    seen = []

    def pool(order, *args):
        seen.append(list(order))
        return {s: {"id": s} for s in order}

    monkeypatch.setattr(parallel, "_run_processes", pool)
    monkeypatch.setattr(parallel, "_run_dask", pool)
    ids = ["new", "short", "long"]
    out = parallel.run_parallel(ids, None, "ci", 2, durations={"short": 0.5, "long": 5.0})
    assert seen == [["long", "short", "new"]] and [r["id"] for r in out] == ids


def test_bad_worker_counts_and_objects_are_refused():
    with pytest.raises(ValueError, match="module:object"):
        runner.run(IDS[:1], "ci", impl=object(), workers=2)
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--workers", "0"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and "--workers must be >= 1" in proc.stderr


CRASHING = '''
import os
from refvi.verification.protocol.refvi_impl import RefviImplementation


class Crashing(RefviImplementation):
    """refvi, except that its Gaussian entropy kills the process (as an out-of-bounds write in a kernel would)."""
    name = "crashing"

    def gaussian_entropy(self, C, structure="tril"):
        os._exit(3)


IMPL = Crashing()
'''


@pytest.mark.parametrize("backend", ["processes", pytest.param("dask", marks=pytest.mark.slow)])
def test_a_crashing_statement_is_an_error_and_the_run_goes_on(backend, tmp_path, monkeypatch):
    """A worker that dies (segfault, abort) inside one statement: that statement gets an error record naming the
    crash, every other statement its normal record."""
    if backend == "dask":
        pytest.importorskip("distributed")
    (tmp_path / "crashing_impl.py").write_text(CRASHING)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", pythonpath(tmp_path))
    ids = ["000.lemma14", "000.lemma31", "004.lemma4"]          # 000.lemma14 calls gaussian_entropy
    run = parallel._run_processes if backend == "processes" else \
        (lambda order, spec, profile, workers, progress: parallel._run_dask(order, spec, profile, workers, None,
                                                                             progress))
    out = run(ids, "crashing_impl:IMPL", "ci", 1, None)
    assert out["000.lemma14"]["verdict"] == "error" and out["000.lemma14"]["detail"].startswith("crashed:")
    assert out["000.lemma31"]["verdict"] == "pass" and out["004.lemma4"]["verdict"] == "pass"


HANGING = '''
import time

from refvi.verification.protocol.refvi_impl import RefviImplementation


class Hanging(RefviImplementation):
    """refvi, except that its Gaussian entropy never returns (an endless loop; it sleeps in the loop so that the
    seconds it waits do not take a core from the rest of the test suite)."""
    name = "hanging"

    def gaussian_entropy(self, C, structure="tril"):
        while True:
            time.sleep(0.05)


IMPL = Hanging()
'''


@pytest.mark.parametrize("backend", ["processes", pytest.param("dask", marks=pytest.mark.slow)])
def test_a_hanging_statement_times_out_and_the_run_goes_on(backend, tmp_path, monkeypatch):
    """A statement still running after the timeout: an error record saying where it hung, not re-run; every other
    statement its normal record."""
    if backend == "dask":
        pytest.importorskip("distributed")
    (tmp_path / "hanging_impl.py").write_text(HANGING)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", pythonpath(tmp_path))
    watch = (str(tmp_path / "watch"), 8.0)
    ids = ["000.lemma14", "000.lemma31", "004.lemma4"]          # 000.lemma14 calls gaussian_entropy
    if backend == "processes":
        out = parallel._run_processes(ids, "hanging_impl:IMPL", "ci", 2, None, watch)
    else:
        out = parallel._run_dask(ids, "hanging_impl:IMPL", "ci", 2, None, None, watch)
    rec = out["000.lemma14"]
    assert rec["verdict"] == "error" and rec["detail"].startswith("timed out: no result after 8 s"), rec
    assert "hanging_impl.py" in rec["detail"] and "in gaussian_entropy" in rec["detail"]
    assert out["000.lemma31"]["verdict"] == "pass" and out["004.lemma4"]["verdict"] == "pass"


def test_a_serial_run_stops_a_hanging_statement_and_goes_on(tmp_path):
    """Serially (the README's command): the statement is interrupted at the limit, recorded as timed out where it
    was, and the next statement runs."""
    (tmp_path / "hanging_impl.py").write_text(HANGING)
    path = tmp_path / "cert.json"
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--impl", "hanging_impl:IMPL", "--timeout", "8",
                           "--json", str(path), "--select", "000.lemma14", "000.lemma31"], capture_output=True,
                          text=True, timeout=300, env=env_with(tmp_path), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    recs = {r["id"]: r for r in json.loads(path.read_text())["statements"]}
    detail = recs["000.lemma14"]["detail"]
    assert recs["000.lemma14"]["verdict"] == "error" and detail.startswith("timed out: no result after 8 s"), detail
    assert detail.split("it was at: ")[1].startswith('File "') and "hanging_impl.py" in detail.split(" <- ")[0]
    assert recs["000.lemma31"]["verdict"] == "pass"


def test_bad_timeouts_are_refused():
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--timeout", "-1", "--select", "000.lemma31"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "--timeout must be >= 0" in proc.stderr


def _pool_with_a_sleeping_worker(prepare):
    """A one-process pool whose worker ran ``prepare`` (a picklable (function, *args)) and now sleeps in a task:
    (pool, worker, what prepare returned)."""
    import multiprocessing as mp
    import time
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
    prepared = pool.submit(*prepare).result(timeout=120)  # the worker is up
    pool.submit(time.sleep, 120)
    time.sleep(0.5)  # and sleeping in the task
    (worker,) = pool._processes.values()
    assert worker.is_alive()
    return pool, worker, prepared


def _gone(worker, within: float) -> bool:
    """Whether ``worker`` has exited within ``within`` seconds: the pool's own manager thread reaps its workers too,
    and while it holds the exit status ``is_alive`` can still say True for a moment."""
    import time

    deadline = time.perf_counter() + within
    while worker.is_alive() and time.perf_counter() < deadline:
        time.sleep(0.05)
    return not worker.is_alive()


def test_stopping_the_pool_terminates_a_busy_worker_at_once():
    """_terminate (an interrupt, -x) stops a worker in the middle of a statement right away: terminated, not left to
    the ten-second join before it is killed."""
    import time

    pool, worker, pid = _pool_with_a_sleeping_worker((os.getpid,))
    assert worker.pid == pid
    t0 = time.perf_counter()
    parallel._terminate(pool)
    assert _gone(worker, within=2.0) and time.perf_counter() - t0 < 5.0


def test_stopping_the_pool_kills_a_worker_that_ignores_terminate():
    """A worker that ignores SIGTERM (a statement's native code that masks it) is killed after the ten-second join:
    _terminate never returns with a worker alive."""
    import signal

    pool, worker, _ = _pool_with_a_sleeping_worker((signal.signal, signal.SIGTERM, signal.SIG_IGN))
    parallel._terminate(pool)
    assert _gone(worker, within=5.0)  # killed, not left to its 120-second task


class _FakeFuture:
    def __init__(self, value):
        self.value = value


class _FakeClient:
    """A stand-in for distributed.Client that records where it was pointed and runs each task at once."""

    made: list = []

    def __init__(self, address):
        self.address, self.closed = address, False
        _FakeClient.made.append(self)

    def submit(self, fn, *args, pure=True):
        return _FakeFuture(fn(*args))

    def gather(self, futures):
        return [f.value for f in futures]

    def close(self):
        self.closed = True


class _FakeCluster:
    def __init__(self, workers):
        self.workers, self.closed = workers, False

    def close(self):
        self.closed = True


def test_map_tasks_on_dask_uses_the_given_scheduler_or_a_local_cluster_of_the_given_size(monkeypatch):
    """The search's map_tasks: with a scheduler address the client connects there and no local cluster starts;
    without one a local cluster of exactly ``workers`` processes starts, and client and cluster are closed after."""
    pytest.importorskip("distributed")
    import distributed

    clusters = []
    monkeypatch.setattr(distributed, "Client", _FakeClient)
    monkeypatch.setattr(parallel, "_local_cluster", lambda w: clusters.append(_FakeCluster(w)) or clusters[-1])
    monkeypatch.setattr(parallel, "_run_one", lambda *task: sum(task))
    _FakeClient.made = []
    assert parallel.map_tasks([(1, 2), (3, 4)], 2, scheduler="tcp://scheduler:8786") == [3, 7]
    assert clusters == [] and [c.address for c in _FakeClient.made] == ["tcp://scheduler:8786"]
    assert _FakeClient.made[0].closed
    assert parallel.map_tasks([(5,)], 3) == [5]
    assert [c.workers for c in clusters] == [3] and _FakeClient.made[1].address is clusters[0]
    assert _FakeClient.made[1].closed and clusters[0].closed


def test_the_local_dask_cluster_is_one_single_threaded_process_per_worker(monkeypatch):
    """Statements share no interpreter on Dask either (an adapter may change process-wide settings): the local
    cluster is ``workers`` processes of one thread each, with no fixed dashboard port."""
    pytest.importorskip("distributed")
    import distributed

    seen = {}
    monkeypatch.setattr(distributed, "LocalCluster", lambda **kw: seen.update(kw) or "cluster")
    assert parallel._local_cluster(3) == "cluster"
    assert seen["n_workers"] == 3 and seen["threads_per_worker"] == 1 and seen["processes"] is True
    assert seen["dashboard_address"] == ":0"


def test_the_dask_run_retries_no_statement_whose_worker_died(monkeypatch):
    """A statement that kills its worker is not retried on another (it would kill that one too): the local cluster
    starts with the scheduler's allowed-failures at 0; the suspects are re-run alone afterwards."""
    pytest.importorskip("distributed")
    import dask

    seen = []

    class Stop(Exception):
        pass

    def fake_cluster(workers):
        seen.append(dask.config.get("distributed.scheduler.allowed-failures"))
        raise Stop

    monkeypatch.setattr(parallel, "_local_cluster", fake_cluster)
    with pytest.raises(Stop):
        parallel._run_dask(["000.lemma31"], None, "ci", 1, None, None)
    assert seen == [0]
