"""The test command of one mutant: cosmic-ray has mutated ``--file`` on disk in the worker's copy ``--root``; judge it.

1. Numba's cache: the entries of the mutated module and of every module that imports it (``--invalidate``) are
   deleted before the run (a kernel's cache is keyed on its own file's time stamp, so a kernel that inlines a
   mutated helper from another module would otherwise run from its stale cache) and again after it (so no later
   mutant loads code compiled from this one).  Each worker has its own cache folder (``NUMBA_CACHE_DIR``).
2. Stage 1, the certificate (``certstage.py``): the mutated module is imported (a failure is *incompetent*), then
   the statements ``--statements`` run in the given order and the first that fails or errors kills the mutant.
3. Stage 2, only for a survivor of stage 1: ``pytest -x`` on the unit tests ``--tests``.
4. One line ``MUTANT-RESULT {json}`` on stdout (``outcome``: killed-by-certificate, killed-by-tests, timeout,
   survived, incompetent or error; ``stage``, ``killer``, ``seconds``, ``stages``); exit 0 for a survivor, 1 for a
   killed, timed-out or incompetent mutant (cosmic-ray records it as killed), 2 for a tooling error.

``--limit`` bounds the whole run (seconds; a mutant can loop forever): a stage still running then is killed with its
process group and the mutant is a *timeout*.  ``--baseline`` runs the same stages on unmutated code, every statement
and every test (no ``-x``), and reports their times and any failure (the driver leaves failing ones out).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
MARK = "MUTANT-RESULT "


def _env(root: Path, tmp: str) -> dict:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(root),
        NUMBA_CACHE_DIR=str(root / ".numba-cache"),
        PYTHONDONTWRITEBYTECODE="1",  # hash-checked .pyc files of the unmutated tree are used, none is written
        HYPOTHESIS_STORAGE_DIRECTORY=os.path.join(tmp, "hypothesis"),  # no example database across mutants
        NUMBA_OPT="1",  # as tests/conftest.py: a mutant is judged on values; -O1 halves each cold compile
        NUMBA_NUM_THREADS="1",  # as tests/conftest.py; BLAS threads are left as the test run has them (a test
    )  # of project_wm against SLSQP fails with OPENBLAS_NUM_THREADS=1: the baseline would drop it)
    return env


#: the stage running now (its process group is killed when this process is told to stop or loses its driver)
_STAGE: subprocess.Popen | None = None


def _kill_stage() -> None:
    stage = _STAGE
    if stage is not None and stage.poll() is None:
        try:
            os.killpg(stage.pid, signal.SIGKILL)
        except OSError:
            pass


def _die_with_this_process() -> None:
    """In the stage's process, before it runs: Linux sends it SIGKILL when this process dies (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def follow_driver(driver: int, every: float = 0.5) -> None:
    """Stop with the driver: when the process that started this one is gone (an interrupted ``run.py``; its mutant
    then has no result and ``--resume`` runs it again) or this one gets SIGTERM, kill the running stage's process
    group and exit, so an interrupted run leaves no stage running on."""
    import threading

    def stop(*_args):
        _kill_stage()
        os._exit(3)

    def watch():
        while os.getppid() == driver:
            time.sleep(every)
        stop()

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=watch, daemon=True).start()


def run_limited(cmd: list[str], cwd: Path, env: dict, limit: float) -> tuple[int | None, str, float]:
    """(exit code or None when over ``limit``, the output's tail, seconds): the command in its own process group,
    killed whole at the limit (and when this process stops: :func:`follow_driver`)."""
    global _STAGE
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_die_with_this_process,
    )
    _STAGE = proc
    try:
        out, _ = proc.communicate(timeout=max(limit, 1.0))
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        out, _ = proc.communicate()
        code = None
    return code, out.decode("utf-8", "replace")[-3000:], time.perf_counter() - t0


def clean_cache(cache: Path, files: list[str]) -> int:
    """Delete the Numba cache entries (``<stem>.*.nbi`` / ``.nbc`` in ``<parent dir>_<hash>/``) of ``files``."""
    n = 0
    if not cache.is_dir():
        return 0
    for rel in files:
        p = Path(rel)
        for sub in cache.glob(f"{p.parent.name}_*"):
            for f in sub.glob(f"{p.stem}.*"):
                if f.suffix in (".nbi", ".nbc"):
                    f.unlink(missing_ok=True)
                    n += 1
    return n


def _junit(path: Path) -> tuple[dict[str, float], list[str]]:
    """Seconds per test file and the files with a failing test, from pytest's JUnit XML (xunit1: a ``file``)."""
    secs: dict[str, float] = {}
    failed: list[str] = []
    if not path.is_file():
        return secs, failed
    for case in ET.parse(path).getroot().iter("testcase"):
        f = case.get("file") or ""
        secs[f] = secs.get(f, 0.0) + float(case.get("time") or 0.0)
        if (case.find("failure") is not None or case.find("error") is not None) and f not in failed:
            failed.append(f)
    return secs, failed


def judge(args) -> dict:
    root = Path(args.root).resolve()
    t_start = time.perf_counter()
    deadline = t_start + args.limit
    res: dict = {"outcome": None, "stage": None, "killer": None, "stages": {}}
    tmp = tempfile.mkdtemp(prefix="mutant-")
    env = _env(root, tmp)
    cache = root / ".numba-cache"
    dirty_file = root / ".mutation-dirty.json"
    invalidate = [f for f in args.invalidate.split(",") if f]
    dirty = json.loads(dirty_file.read_text()) if dirty_file.is_file() else []
    clean_cache(cache, sorted(set(dirty) | set(invalidate)))
    dirty_file.write_text(json.dumps(invalidate))
    try:
        # stage 1: the certificate
        cout = Path(tmp) / "cert.json"
        cmd = [
            sys.executable,
            str(HERE / "certstage.py"),
            "--module",
            args.module,
            "--ids",
            args.statements,
            "--timeout",
            str(args.stmt_timeout),
            "--timeouts",
            args.stmt_timeouts,
            "--out",
            str(cout),
        ]
        if args.baseline:
            cmd.append("--all")
        code, tail, secs = run_limited(cmd, root, env, deadline - time.perf_counter())
        cert = json.loads(cout.read_text()) if cout.is_file() else {}
        res["stages"]["certificate"] = {"exit": code, "seconds": round(secs, 2), "ran": len(cert.get("statements", []))}
        if args.baseline:
            res["stages"]["certificate"]["statements"] = cert.get("statements", [])
        if code is None:
            res.update(outcome="timeout", stage="certificate", killer=(cert.get("statements") or [{}])[-1].get("id"))
            return res
        if code == 3:
            res.update(outcome="incompetent", stage="import", detail=cert.get("import_error"))
            return res
        if code == 1 and not args.baseline:
            killer = cert["killer"]
            detail = next((s.get("detail", "") for s in cert["statements"] if s["id"] == killer), "")
            res.update(killer=killer, detail=detail[:600], stage="certificate")
            if cert.get("numba_typing"):
                res["outcome"] = "incompetent"
            elif cert.get("timed_out"):
                res["outcome"] = "timeout"
            else:
                res["outcome"] = "killed-by-certificate"
            return res
        if code not in (0, 1):  # a crash of the process (a segfault in a mutated kernel): the certificate sees it
            if args.baseline:
                res.update(outcome="error", stage="certificate", detail=tail[-600:])
                return res
            res.update(outcome="killed-by-certificate", stage="certificate", killer="crashed", detail=tail[-600:])
            return res
        # stage 2: the unit tests
        tests = [t for t in args.tests.split(",") if t]
        if not tests:
            res["outcome"] = "survived"
            return res
        junit = Path(tmp) / "junit.xml"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-header",
            "-o",
            "junit_family=xunit1",
            f"--junit-xml={junit}",
            *tests,
        ]
        if not args.baseline:
            cmd[3:3] = ["-x", "--given-order"]  # tests/conftest.py would run its SLOW_FIRST files first
        elif args.xdist > 1:
            cmd[3:3] = ["-n", str(args.xdist)]  # the baseline's tests on every worker's core (pytest-xdist)
        code, tail, secs = run_limited(cmd, root, env, deadline - time.perf_counter())
        file_secs, failed = _junit(junit)
        res["stages"]["tests"] = {"exit": code, "seconds": round(secs, 2), "failed": failed}
        if args.baseline:
            res["stages"]["tests"]["files"] = file_secs
            res["outcome"] = "baseline"
            return res
        if code is None:
            res.update(outcome="timeout", stage="tests")
        elif code in (0, 5):
            res["outcome"] = "survived"
        elif code in (1, 2, 3):
            res.update(outcome="killed-by-tests", stage="tests", killer=(failed or [f"pytest exit {code}"])[0])
            res["detail"] = tail[-600:]
        else:
            res.update(outcome="error", stage="tests", detail=tail[-600:])
        return res
    finally:
        clean_cache(cache, invalidate)
        dirty_file.unlink(missing_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        res["seconds"] = round(time.perf_counter() - t_start, 2)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", required=True, help="the worker's copy of the repository")
    p.add_argument("--file", required=True, help="the mutated file, relative to --root")
    p.add_argument("--module", required=True, help="its import name")
    p.add_argument("--statements", default="", help="statement ids, comma-separated, in the order to run them")
    p.add_argument("--stmt-timeout", type=float, default=60.0)
    p.add_argument("--stmt-timeouts", default="", help="id=seconds,... per statement")
    p.add_argument("--tests", default="", help="test files, comma-separated")
    p.add_argument("--invalidate", default="", help="files whose Numba cache entries are dropped, comma-separated")
    p.add_argument("--limit", type=float, default=1800.0, help="seconds for the whole mutant")
    p.add_argument("--baseline", action="store_true")
    p.add_argument("--xdist", type=int, default=1, help="with --baseline: pytest -n N")
    args = p.parse_args(argv)
    follow_driver(os.getppid())
    res = judge(args)
    print(MARK + json.dumps(res), flush=True)
    if res["outcome"] == "survived" or res["outcome"] == "baseline":
        return 0
    return 2 if res["outcome"] == "error" else 1


if __name__ == "__main__":
    sys.exit(main())
