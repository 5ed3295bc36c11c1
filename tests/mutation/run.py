"""Mutation testing of refvi with cosmic-ray: how much of *someone else's* plausible bugs the checks kill (issue 38).

Two commands (CONTRIBUTING.md, "Mutation testing", says when to run which and how to triage a survivor)::

    # the habit: every mutant on the lines changed since a revision (committed or not), before a stop
    python tests/mutation/run.py mutate --since main [--workers 2]

    # a sweep: N mutants drawn (seeded) over refvi/, kernels/ and the verdict machinery of verification/
    python tests/mutation/run.py mutate --sample 600 --seed 1 --workers 2 [--scheduler tcp://HOST:8786]

    # the report: kill rates per group, package and operator, and the survivors with their triage
    python tests/mutation/run.py report .mutation/<session>/log.jsonl [--update-docs]

    # what a mutant of a file runs: the statements that can reach it and the unit tests that exercise it
    python tests/mutation/run.py map kernels/prox.py [--line 40]

How a mutant is made and judged
-------------------------------
cosmic-ray (``pip install -e .[mutation]``) enumerates the mutants of each file with its operators (those of
``config.toml``: arithmetic, comparison, unary sign and ``not``, number +-1, booleans, ``and``/``or``, break/continue,
zero-iteration loops, exception handlers), writes the drawn ones into a cosmic-ray session (``session.sqlite``:
``cr-report`` reads it), and applies each one *on disk* in a worker's own copy of the repository, so Numba compiles
the mutant.  Lines that cannot change a result are never mutated (decorators, annotations, ``raise`` statements and
message f-strings, ``__all__``, ``# pragma: no mutate``).  The test command of a mutant (``mutant.py``) runs

1. **the certificate first**: only the statements whose protocol methods can reach the mutated file (refvi's
   adapters ``verification/protocol/refvi_*.py`` and the import graph, :class:`mutlib.ProjectMap`), nearest and
   cheapest first, stopping at the first that fails or errors (as ``-x``);
2. **the named unit tests second**, only if the certificate missed it: the ``tests/`` files that import the module
   or a module that imports it, ``pytest -x``.

and records which of the two killed it, so both rates come out of one run: *certificate alone* and *certificate +
tests*.  The verdict machinery of ``verification/`` (everything but the statements, oracles, examples and errata,
which are the checks) is judged by its own tests alone.  Outcomes: ``killed-by-certificate``, ``killed-by-tests``,
``timeout`` (over the mutant's limit: ``factor`` x its baseline time + ``overhead``, ``config.toml``), ``survived``,
``incompetent`` (the mutated module does not import, or Numba cannot type the mutated kernel: not counted in the
rates).

Workers and speed
-----------------
``--workers N`` runs N mutants at a time, each in its own copy of the repository (``<out>/slots/wK``, the tracked
and untracked files of the working tree, with hash-checked ``.pyc`` files) with its own Numba cache folder
(``NUMBA_CACHE_DIR``), so workers never race on a file or a cache.  ``--scheduler ADDRESS`` sends the mutants to a
Dask cluster instead (one slot per worker thread; the workers must see ``<out>`` at the same path and use the same
Python).  Before the mutants, a baseline runs every selected statement and test file once on the unmutated copy:
what fails there is left out (and reported), and the measured times order the statements and set each mutant's
limit; its Numba cache is copied into every slot.

Output (``--out``, by default ``.mutation/<mode>-<date>/``, ignored by git): ``log.jsonl``, one JSON line per mutant
(``id`` = ``file:line:operator:k``, the stable key of ``triage.toml``; ``file``, ``line``, ``operator``, ``diff``,
``outcome``, ``stage``, ``killer``, ``seconds``, ...), ``session.sqlite`` (cosmic-ray's), ``plan.json`` and
``baseline.json``.  A session interrupted or re-run with ``--resume DIR`` runs only the mutants it has no result for;
a worker copy that differs from the working tree is rebuilt first (a run stopped while a mutant ran leaves that
mutant on disk: cosmic-ray restores the file only when the mutant's command returns).  Stopping the driver stops the
mutants' commands and their stages with it (``mutant.follow_driver``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import filecmp
import hashlib
import json
import os
import platform
import queue
import random
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mutlib  # noqa: E402

ROOT = mutlib.ROOT
HERE = mutlib.HERE
MARK = "MUTANT-RESULT "


# ---------------------------------------------------------------------------------------------------- candidates
def enumerate_mutants(files: list[str], cfg: dict, lines: dict[str, set[int]] | None = None) -> list[dict]:
    """Every mutant cosmic-ray can make in ``files`` with the configured operators, less the excluded lines (and,
    with ``lines``, only those on the given lines).  ``occurrence`` is cosmic-ray's index (per file and operator)."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.plugins import get_operator, operator_names

    ops = [(n, get_operator(n)()) for n in operator_names() if mutlib.operator_allowed(n, cfg)]
    out = []
    for rel in files:
        source = (ROOT / rel).read_text(encoding="utf-8")
        src_lines = source.splitlines()
        skip = mutlib.excluded_lines(source)
        tree = get_ast(source)
        nodes = list(ast_nodes(tree))
        found = []
        for name, op in ops:
            occ = 0
            for node in nodes:
                for start, end in op.mutation_positions(node):
                    found.append(
                        {
                            "file": rel,
                            "operator": name,
                            "occurrence": occ,
                            "line": start[0],
                            "col": start[1],
                            "end": list(end),
                        }
                    )
                    occ += 1
        for c, mid in zip(found, mutlib.mutant_ids(found), strict=True):
            c["id"] = mid
            c["line_text"] = src_lines[c["line"] - 1].strip() if c["line"] <= len(src_lines) else ""
            if c["line"] in skip or (lines is not None and c["line"] not in lines.get(rel, ())):
                continue
            if "BinaryOperator" in c["operator"] and _on_text(tree, (c["line"], c["col"])):
                continue
            out.append(c)
    return out


_TEXT = ("string", "fstring", "strings")


def _on_text(tree, pos) -> bool:
    """Whether the binary operator at ``pos`` joins or formats text (``"a" + s``, ``"%d" % n``): every other operator
    there is a TypeError or changes only a message."""
    leaf = tree.get_leaf_for_position(pos)
    if leaf is None or leaf.type != "operator":
        return False
    sides = (leaf.get_previous_sibling(), leaf.get_next_sibling())
    return any(s is not None and s.type in _TEXT for s in sides)


def changed_lines(since: str, files: list[str]) -> dict[str, set[int]]:
    # the working tree against the merge base of REV and HEAD: what this branch changed, not what REV gained since
    diff = subprocess.run(
        ["git", "diff", "-U0", "--no-color", "--merge-base", since, "--", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return mutlib.parse_diff_lines(diff)


# ---------------------------------------------------------------------------------------------------- slots
def _tree_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return sorted({f for f in out.split("\0") if f and ((ROOT / f).exists() or (ROOT / f).is_symlink())})


def make_slot(slot: Path, files: list[str]) -> None:
    """A copy of the working tree (symbolic links kept, time stamps kept) with hash-checked ``.pyc`` files."""
    if slot.exists():
        shutil.rmtree(slot)
    slot.mkdir(parents=True)
    for f in files:
        src, dst = ROOT / f, slot / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        elif src.is_file():
            shutil.copy2(src, dst)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "compileall",
            "-q",
            "--invalidation-mode",
            "checked-hash",
            "refvi",
            "kernels",
            "verification",
            "tests",
        ],
        cwd=slot,
        check=False,
        capture_output=True,
    )
    (slot / ".numba-cache").mkdir(exist_ok=True)


def slot_differs(slot: Path, files: list[str]) -> list[str]:
    """The files of the working tree that ``slot`` holds with other contents, or lacks: a slot reused by
    ``--resume`` must hold the unmutated tree, and a run stopped while a mutant ran leaves that mutant on disk."""
    out = []
    for f in files:
        src, dst = ROOT / f, slot / f
        if src.is_symlink():
            if not dst.is_symlink() or os.readlink(dst) != os.readlink(src):
                out.append(f)
        elif src.is_file() and not (dst.is_file() and filecmp.cmp(src, dst, shallow=False)):
            out.append(f)
    return out


def _dir_hashes(slot: Path) -> dict[str, str]:
    """sha1 of each source folder's absolute path (as Numba names its cache folders) -> the folder, relative."""
    out = {}
    for top in ("refvi", "kernels", "verification"):
        for dirpath, _dirs, _files in os.walk(slot / top, followlinks=True):
            p = Path(dirpath)
            out[hashlib.sha1(str(p).encode()).hexdigest()] = p.relative_to(slot).as_posix()
    return out


def copy_cache(src: Path, dst: Path) -> int:
    """Copy slot ``src``'s Numba cache into slot ``dst``, renaming each folder for ``dst``'s paths."""
    hashes = _dir_hashes(src)
    n = 0
    for sub in (src / ".numba-cache").iterdir() if (src / ".numba-cache").is_dir() else ():
        parent, _, h = sub.name.rpartition("_")
        rel = hashes.get(h)
        if rel is None:
            continue
        new = dst / ".numba-cache" / f"{parent}_{hashlib.sha1(str(dst / rel).encode()).hexdigest()}"
        shutil.copytree(sub, new, dirs_exist_ok=True)
        n += sum(1 for _ in new.iterdir())
    return n


# ---------------------------------------------------------------------------------------------------- one mutant
def _command(slot: Path, m: dict, limit: float, baseline: bool = False, xdist: int = 1) -> list[str]:
    cmd = [
        sys.executable,
        str(slot / "tests" / "mutation" / "mutant.py"),
        "--root",
        str(slot),
        "--file",
        m["file"],
        "--module",
        m["module"],
        "--statements",
        ",".join(m["statements"]),
        "--stmt-timeout",
        str(m["stmt_timeout"]),
        "--stmt-timeouts",
        ",".join(f"{k}={v:g}" for k, v in m["stmt_timeouts"].items()),
        "--tests",
        ",".join(m["tests"]),
        "--invalidate",
        ",".join(m["invalidate"]),
        "--limit",
        f"{limit:.0f}",
    ]
    return cmd + (["--baseline", "--xdist", str(xdist)] if baseline else [])


def parse_output(output: str | None) -> dict | None:
    for line in reversed((output or "").splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK) :])
    return None


def run_mutant(m: dict, slot: Path) -> dict:
    """Apply mutant ``m`` in ``slot`` with cosmic-ray and run its test command; the parsed result."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_item import MutationSpec

    spec = MutationSpec(
        module_path=slot / m["file"],
        operator_name=m["operator"],
        occurrence=m["occurrence"],
        start_pos=(m["line"], m["col"]),
        end_pos=tuple(m["end"]),
    )
    cmd = shlex.join(_command(slot, m, m["limit"]))
    t0 = time.perf_counter()
    wr = mutate_and_test([spec], cmd, m["limit"] + 120.0)  # cosmic-ray's own limit: a backstop above ours
    res = parse_output(wr.output)
    if res is None:
        if (wr.output or "").strip() == "timeout":
            res = {"outcome": "timeout", "stage": "backstop"}
        else:
            res = {"outcome": "error", "stage": wr.worker_outcome.value, "detail": (wr.output or "")[-600:]}
        res["seconds"] = round(time.perf_counter() - t0, 2)
    res["diff"] = "\n".join(ln for ln in (wr.diff or "").splitlines() if not ln.startswith("--- mutation diff"))
    res["diff"] = res["diff"].replace(str(slot) + "/", "")
    res["_work_result"] = {
        "worker_outcome": wr.worker_outcome.value,
        "test_outcome": wr.test_outcome.value if wr.test_outcome is not None else None,
        "output": (wr.output or "")[-4000:],
        "diff": wr.diff,
    }
    return res


def _dask_task(m: dict, slots: list[str]) -> dict:
    """A mutant on a Dask worker: take a free slot (a lock file per slot), run it there."""
    import os as _os
    import time as _time

    while True:
        for s in slots:
            lock = Path(s) / ".slot-lock"
            try:
                fd = _os.open(lock, _os.O_CREAT | _os.O_EXCL | _os.O_WRONLY)
            except FileExistsError:
                continue
            try:
                _os.write(fd, str(_os.getpid()).encode())
                _os.close(fd)
                res = run_mutant(m, Path(s))
                res["worker"] = Path(s).name
                return res
            finally:
                lock.unlink(missing_ok=True)
        _time.sleep(1.0)


# ---------------------------------------------------------------------------------------------------- the session
def plan_mutants(chosen: list[dict], pmap: mutlib.ProjectMap, cfg: dict, base: dict | None, certificate_only: bool):
    limits = cfg["limits"]
    st_secs = {s["id"]: s["seconds"] for s in (base or {}).get("statements", [])}
    bad_st = set((base or {}).get("failing_statements", []))
    t_secs = (base or {}).get("test_files", {})
    bad_t = set((base or {}).get("failing_tests", []))
    for m in chosen:
        kind = mutlib.kind_of(m["file"], cfg)
        sts = [s for s in pmap.statements_for(m["file"], m["line"]) if s not in bad_st]
        m["statements"] = pmap.order(sts, m["file"], st_secs)
        m["tests"] = [] if certificate_only else [t for t in pmap.tests_for(m["file"], t_secs) if t not in bad_t]
        m["invalidate"] = sorted(pmap.importers_closure(m["file"]))
        m["module"] = mutlib.module_name(m["file"])
        m["kind"] = kind
        m["stmt_timeout"] = limits["statement_min"]
        m["stmt_timeouts"] = {
            s: max(limits["statement_min"], limits["factor"] * st_secs[s]) for s in m["statements"] if s in st_secs
        }
        expect = sum(st_secs.get(s, 10.0) for s in m["statements"]) + sum(t_secs.get(t, 30.0) for t in m["tests"])
        m["limit"] = limits["factor"] * expect + limits["overhead"]
    return chosen


def run_baseline(
    slot: Path, chosen: list[dict], pmap: mutlib.ProjectMap, certificate_only: bool, workers: int = 1
) -> dict:
    """Every statement and test file the chosen mutants can run, once, on the unmutated copy in ``slot``."""
    sts, tests = set(), set()
    for m in chosen:
        sts.update(pmap.statements_for(m["file"], m["line"]))
        if not certificate_only:
            tests.update(pmap.tests_for(m["file"]))
    m = {
        "file": "refvi/__init__.py",
        "module": "refvi",
        "statements": sorted(sts),
        "stmt_timeout": 1800,
        "stmt_timeouts": {},
        "tests": sorted(tests),
        "invalidate": [],
    }
    print(f"baseline: {len(sts)} statements and {len(tests)} test files on the unmutated copy ...", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(_command(slot, m, 6 * 3600, baseline=True, xdist=workers), capture_output=True, text=True)
    res = parse_output(proc.stdout) or {}
    cert = res.get("stages", {}).get("certificate", {})
    tst = res.get("stages", {}).get("tests", {})
    statements = cert.get("statements", [])
    failing = [s["id"] for s in statements if s["verdict"] in ("fail", "error", "missing")]
    files = {k: v for k, v in (tst.get("files") or {}).items()}
    out = {
        "seconds": round(time.perf_counter() - t0, 1),
        "statements": statements,
        "failing_statements": failing,
        "test_files": files,
        "failing_tests": tst.get("failed", []),
        "outcome": res.get("outcome"),
        "detail": res.get("detail"),
    }
    if res.get("outcome") not in ("baseline", "survived") or (tests and tst.get("exit") not in (0, 1, 5)):
        out["broken"] = True
        out["output"] = (proc.stdout + proc.stderr)[-3000:]
    print(
        f"baseline: {out['seconds']:.0f} s; failing (left out): {len(failing)} statements {failing[:8]}, "
        f"{len(out['failing_tests'])} test files {out['failing_tests'][:8]}",
        flush=True,
    )
    return out


def _head() -> str:
    """The working tree's commit, ``+changes`` when tracked files differ from it."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return commit.stdout.strip() + ("+changes" if dirty else "")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{len(os.sched_getaffinity(0))} usable cores, {cpu}, load average {load:.1f} at the start"


def sync_session(session: Path, chosen: list[dict]) -> set[str]:
    """cosmic-ray's session (``cr-report`` reads it): a work item for each drawn mutant not yet in it (all of a new
    session's, a resumed session's rebased ones); the ids it has a result for."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem

    with use_db(str(session), WorkDB.Mode.create) as db:
        known = {item.job_id for item in db.work_items}
        db.add_work_items(
            WorkItem.single(
                m["id"],
                MutationSpec(
                    module_path=m["file"],
                    operator_name=m["operator"],
                    occurrence=m["occurrence"],
                    start_pos=(m["line"], m["col"]),
                    end_pos=tuple(m["end"]),
                ),
            )
            for m in chosen
            if m["id"] not in known
        )
        return {job for job, _ in db.results}


def logged_ids(out: Path) -> set[str]:
    """The mutants a session's log has a result for: the ones a resumed session does not run again (the log is what
    the report reads; cosmic-ray's session holds a copy of each result, overwritten when a mutant runs again)."""
    path = out / "log.jsonl"
    if not path.is_file():
        return set()
    return {json.loads(ln)["id"] for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()}


def rebase_on_resume(out: Path, chosen: list[dict], cfg: dict, seed: int) -> None:
    """Before a resumed session runs its remaining mutants: if the code changed since the draw, point each at the
    same place in the current code (``mutlib.rebase_sites``) and say which moved or were replaced."""
    done = logged_ids(out)
    todo = [m for m in chosen if m["id"] not in done]
    files = sorted({m["file"] for m in todo if (ROOT / m["file"]).is_file()})
    notes = mutlib.rebase_sites(todo, enumerate_mutants(files, cfg), {m["id"] for m in chosen}, seed)
    if notes:
        print(f"the code changed since the draw; {len(notes)} mutant(s) rebased:\n  " + "\n  ".join(notes))
        plan = json.loads((out / "plan.json").read_text())
        plan["mutants"] = chosen
        plan["meta"].setdefault("rebased", []).extend(notes)
        (out / "plan.json").write_text(json.dumps(plan, indent=1))


def record_run(meta: dict, done: int) -> dict:
    """Append this run of a session (the first, or a ``--resume`` after ``done`` results) to ``meta['runs']``: each
    part of the log ran against the code and checks of its own time, and the report gives the parts' rates apart, so
    checks written after a part ran are measured on mutants they never saw.  A session from before runs were
    recorded gets its draw as the first run."""
    run_at = {"commit": _head(), "date": _now(), "before": done}
    first = [{"commit": meta.get("commit"), "date": meta.get("date"), "before": 0}] if done else []
    meta["runs"] = [*meta.get("runs", first), run_at]
    return run_at


def cmd_mutate(args) -> int:
    cfg = mutlib.load_config()
    if args.resume:
        out = Path(args.resume).resolve()
        if restore_session(out):
            print(f"{out} restored from {_shown(ARCHIVE)}/{out.name}.* (the archived log and plan)")
        plan = json.loads((out / "plan.json").read_text())
        chosen, meta = plan["mutants"], plan["meta"]
        rebase_on_resume(out, chosen, cfg, meta.get("seed") or 0)
    else:
        files = mutlib.mutable_files(ROOT, cfg, args.paths)
        lines = changed_lines(args.since, files) if args.since else None
        if lines is not None:
            files = [f for f in files if f in lines]
        cands = enumerate_mutants(files, cfg, lines)
        chosen = mutlib.sample_sites(cands, args.sample, args.seed)
        mode = "diff" if args.since else "sample"
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S")
        out = Path(args.out or ROOT / ".mutation" / f"{mode}-{stamp}").resolve()
        meta = {
            "mode": mode,
            "since": args.since,
            "sample": args.sample,
            "seed": args.seed,
            "paths": args.paths,
            "candidates": len(cands),
            "files": len(files),
            "command": "python " + " ".join(sys.argv),
            "commit": _head(),
            "date": _now(),
            "machine": _machine(),
            "workers": args.scheduler or args.workers,
            "certificate_only": args.certificate_only,
        }
        print(f"{len(chosen)} mutants drawn from {len(cands)} candidates in {len(files)} files -> {out}")
    if not chosen:
        print("nothing to mutate (no mutable line changed)" if args.since else "no mutant drawn")
        return 0
    pmap = mutlib.ProjectMap(ROOT, cfg)
    if args.dry_run:
        plan_mutants(chosen, pmap, cfg, None, args.certificate_only)
        for m in chosen:
            print(
                f"{m['id']:<70} {len(m['statements']):>3} statements {len(m['tests']):>2} test files  "
                f"{m['line_text'][:60]}"
            )
        return 0
    out.mkdir(parents=True, exist_ok=True)

    # slots: one copy of the tree per worker
    n_slots = args.workers
    client = None
    if args.scheduler:
        from distributed import Client

        client = Client(args.scheduler)
        n_slots = sum(client.nthreads().values())
    files = _tree_files()
    slots = [out / "slots" / f"w{k}" for k in range(n_slots)]
    fresh = [s for s in slots if not (s / "tests" / "mutation" / "mutant.py").is_file()]
    stale = {s: slot_differs(s, files) for s in slots if s not in fresh}
    stale = {s: diff for s, diff in stale.items() if diff}
    for s in fresh + list(stale):
        make_slot(s, files)  # a stale slot anew, with an empty Numba cache: what it compiled may be a mutant's
    rebuilt = "".join(
        f"; {s.name} rebuilt, it differed from the working tree in {', '.join(d[:3])}{' ...' if len(d) > 3 else ''}"
        " (a mutant left by a stopped run, or the code changed)"
        for s, d in stale.items()
    )
    print(f"{n_slots} worker slot(s) under {out / 'slots'} ({len(fresh)} new{rebuilt})", flush=True)

    base_path = out / "baseline.json"
    if args.baseline_from and not base_path.is_file():
        shutil.copy(args.baseline_from, base_path)
    base = json.loads(base_path.read_text()) if base_path.is_file() else None
    if base is None and not args.no_baseline:
        base = run_baseline(slots[0], chosen, pmap, args.certificate_only, n_slots)
        base_path.write_text(json.dumps(base, indent=1))
        if base.get("broken"):
            print("the baseline did not run cleanly:\n" + base.get("output", ""), file=sys.stderr)
            return 2
        for s in slots[1:]:
            copy_cache(slots[0], s)
    plan_mutants(chosen, pmap, cfg, base, args.certificate_only)
    (out / "plan.json").write_text(json.dumps({"meta": meta, "mutants": chosen}, indent=1))

    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkResult

    session = out / "session.sqlite"
    sync_session(session, chosen)
    done = logged_ids(out)  # the log decides: a mutant whose line is deleted from it runs again
    todo = [m for m in chosen if m["id"] not in done]
    if args.budget:
        # a seeded random order: the mutants run before the budget runs out are a uniform part of the draw
        random.Random(meta.get("seed") or 0).shuffle(todo)
        meta["budget_minutes"] = args.budget
    run_at = record_run(meta, len(done))
    (out / "plan.json").write_text(json.dumps({"meta": meta, "mutants": chosen}, indent=1))
    print(f"{len(todo)} mutant(s) to run ({len(done)} already done)", flush=True)
    (out / "config.toml").write_text((HERE / "config.toml").read_text())

    from cosmic_ray.plugins import get_operator

    for m in todo:  # load the operator plugins here, not concurrently in the worker threads
        get_operator(m["operator"])
    log_path = out / "log.jsonl"
    lock = threading.Lock()
    counts: dict[str, int] = {}
    t_run = time.perf_counter()

    def record(m: dict, res: dict) -> None:
        wr = res.pop("_work_result", None)
        rec = {
            "id": m["id"],
            "file": m["file"],
            "line": m["line"],
            "col": m["col"],
            "operator": m["operator"],
            "occurrence": m["occurrence"],
            "family": mutlib.family_of(m["operator"]),
            "kind": m["kind"],
            "group": mutlib.group_of(m["file"], cfg),
            "line_text": m["line_text"],
            "statements_selected": len(m["statements"]),
            "tests_selected": len(m["tests"]),
            "limit": round(m["limit"]),
            **res,
            "session": out.name,
            "seed": meta.get("seed"),
            "commit": run_at["commit"],
            "time": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        with lock:
            with open(log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")
            if wr is not None:
                with use_db(str(session), WorkDB.Mode.open) as db:
                    db.set_result(m["id"], WorkResult(**wr))
            counts[rec["outcome"]] = counts.get(rec["outcome"], 0) + 1
            n = sum(counts.values())
            print(
                f"[{n}/{len(todo)} {time.perf_counter() - t_run:6.0f}s] {rec['outcome']:<22} {rec['seconds']:6.0f}s "
                f"{m['id']}  {rec.get('killer') or ''}",
                flush=True,
            )

    if client is not None:
        from distributed import as_completed

        futures = {client.submit(_dask_task, m, [str(s) for s in slots], pure=False): m for m in todo}
        for fut in as_completed(futures):
            if args.budget and time.perf_counter() - t_run > 60.0 * args.budget:
                client.cancel([f for f in futures if not f.done()])
                break
            m = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # a worker lost: the mutant is an error, the run goes on
                res = {"outcome": "error", "stage": "dask", "detail": repr(exc)[:600], "seconds": 0.0}
            record(m, res)
    else:
        free: queue.Queue = queue.Queue()
        for s in slots:
            free.put(s)
        from concurrent.futures import ThreadPoolExecutor

        def task(m):
            if args.budget and time.perf_counter() - t_run > 60.0 * args.budget:
                return  # over the budget: not started (--resume runs it later)
            slot = free.get()
            try:
                res = run_mutant(m, slot)
                res["worker"] = slot.name
            except Exception as exc:
                res = {"outcome": "error", "stage": "driver", "detail": repr(exc)[:600], "seconds": 0.0}
            finally:
                free.put(slot)
            record(m, res)

        with ThreadPoolExecutor(max_workers=n_slots) as pool:
            list(pool.map(task, todo))
    records = mutlib.read_log([log_path])
    print()
    print(mutlib.render_block(records, mutlib.load_triage(), {**meta, "logs": [str(log_path)]}, cfg))
    print(f"log: {log_path}\nreport: python tests/mutation/run.py report {log_path}")
    if not args.keep_slots:
        shutil.rmtree(out / "slots", ignore_errors=True)
    return 0


ARCHIVE = HERE / "logs"


def _shown(p: Path) -> str:
    p = p.resolve()
    return str(p.relative_to(ROOT)) if ROOT in p.parents else str(p)


_DERIVED = ("statements", "tests", "invalidate", "module", "kind", "stmt_timeout", "stmt_timeouts", "limit")


def session_meta(log: Path) -> dict:
    """What a session's ``plan.json`` says about it (command, commit, date, machine), beside a live log
    (``<session>/log.jsonl``) or an archived one (``logs/<session>.jsonl`` + ``logs/<session>.plan.json``)."""
    for cand in (log.parent / "plan.json", log.with_suffix(".plan.json")):
        if cand.is_file():
            return json.loads(cand.read_text())["meta"]
    return {}


def archive_log(log: Path) -> Path:
    """Copy a session's log and plan into ``tests/mutation/logs/`` (tracked by git), so the rates a page cites can be
    re-read, and the session resumed (``--resume``), from a fresh checkout; an archived log is returned as is.  The
    plan keeps what was drawn (what each mutant runs is worked out again on resume)."""
    log = log.resolve()
    if log.parent == ARCHIVE.resolve():
        return log
    name = log.parent.name if log.name == "log.jsonl" else log.stem
    ARCHIVE.mkdir(exist_ok=True)
    dest = ARCHIVE / f"{name}.jsonl"
    shutil.copyfile(log, dest)
    plan_path = log.parent / "plan.json"
    if plan_path.is_file():
        plan = json.loads(plan_path.read_text())
        plan["mutants"] = [{k: v for k, v in m.items() if k not in _DERIVED} for m in plan["mutants"]]
        dest.with_suffix(".plan.json").write_text(json.dumps(plan, separators=(",", ":")) + "\n")
    return dest


def restore_session(out: Path) -> bool:
    """``--resume DIR`` with no DIR here (a fresh checkout): rebuild it from the archived log and plan of that name."""
    plan, log = ARCHIVE / f"{out.name}.plan.json", ARCHIVE / f"{out.name}.jsonl"
    if (out / "plan.json").is_file() or not plan.is_file():
        return False
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plan, out / "plan.json")
    if log.is_file():
        shutil.copyfile(log, out / "log.jsonl")
    return True


def cmd_report(args) -> int:
    cfg = mutlib.load_config()
    logs = [Path(p) for p in args.logs]
    records = mutlib.read_log(logs)
    pm = session_meta(logs[0])
    if args.update_docs:  # the measured data goes into git with the page generated from it
        logs = [archive_log(p) for p in logs]
    meta: dict = {"logs": [_shown(p) for p in logs]}
    meta.update(
        {
            k: pm.get(k)
            for k in (
                "date",
                "machine",
                "commit",
                "workers",
                "command",
                "sample",
                "candidates",
                "budget_minutes",
                "runs",
            )
        }
    )
    import importlib.metadata as md

    try:
        meta["cosmic_ray"] = md.version("cosmic-ray")
    except md.PackageNotFoundError:
        meta["cosmic_ray"] = "?"
    block = mutlib.render_block(records, mutlib.load_triage(args.triage), meta, cfg)
    print(block)
    if args.update_docs:
        doc = Path(args.doc)
        doc.write_text(mutlib.update_doc(doc.read_text(encoding="utf-8"), block), encoding="utf-8")
        print(f"written into {doc}")
    return 0


def cmd_map(args) -> int:
    cfg = mutlib.load_config()
    pmap = mutlib.ProjectMap(ROOT, cfg)
    for f in args.files:
        kind = mutlib.kind_of(f, cfg)
        sts = pmap.order(pmap.statements_for(f, args.line), f)
        print(f"{f} ({kind}, group '{mutlib.group_of(f, cfg)}')")
        print(f"  statements ({len(sts)}, in run order): {' '.join(sts)}")
        print(f"  unit tests ({len(pmap.tests_for(f))}): {' '.join(pmap.tests_for(f))}")
        print(f"  Numba cache dropped for: {' '.join(sorted(pmap.importers_closure(f)))}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python tests/mutation/run.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mutate", help="draw mutants and run them")
    how = m.add_mutually_exclusive_group()
    how.add_argument("--since", metavar="REV", help="every mutant on the lines changed since REV (working tree)")
    how.add_argument("--resume", metavar="DIR", help="finish a session: run the mutants it has no result for")
    m.add_argument("--sample", type=int, metavar="N", help="draw N mutants (with --since: at most N of them)")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--paths", nargs="+", metavar="PATH", help="files or folders to draw from (default: config)")
    m.add_argument("--workers", type=int, default=1)
    m.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler: run the mutants on its workers")
    m.add_argument("--out", metavar="DIR")
    m.add_argument("--no-baseline", action="store_true", help="skip the baseline (times default to estimates)")
    m.add_argument("--baseline-from", metavar="FILE", help="reuse a session's baseline.json (same code, same files)")
    m.add_argument("--certificate-only", action="store_true", help="no unit tests (the certificate-alone rate)")
    m.add_argument("--keep-slots", action="store_true", help="keep the worker copies (and their Numba caches)")
    m.add_argument(
        "--budget",
        type=float,
        metavar="MINUTES",
        help="run the drawn mutants in a seeded random order and start none after MINUTES (the rest: --resume)",
    )
    m.add_argument("--dry-run", action="store_true", help="list the drawn mutants and what each would run")
    r = sub.add_parser("report", help="kill rates and survivors from logs")
    r.add_argument("logs", nargs="+")
    r.add_argument("--triage", default=str(mutlib.TRIAGE))
    r.add_argument("--update-docs", action="store_true")
    r.add_argument("--doc", default=str(ROOT / "docs" / "verification-power.md"))
    mp = sub.add_parser("map", help="what a mutant of a file runs")
    mp.add_argument("files", nargs="+")
    mp.add_argument("--line", type=int, default=None)
    args = p.parse_args(argv)
    if args.cmd == "mutate":
        if not (args.since or args.sample or args.resume):
            p.error("mutate needs --since REV, --sample N or --resume DIR")
        return cmd_mutate(args)
    return cmd_report(args) if args.cmd == "report" else cmd_map(args)


if __name__ == "__main__":
    sys.exit(main())
