"""What a certificate run costs, measured: regenerates ``docs/certificate-costs.md``.

    python tests/benchmarks/certificate_costs.py                       # the NumPy example, ci, all five papers
    python tests/benchmarks/certificate_costs.py --select '000.*' --output /tmp/costs.md

Two measurements of the same certificate (``--impl``, default the plain-NumPy example adapter):

1. **end to end**: the command a maintainer runs, ``python -m refvi.verification --impl ... --workers N --json ...``,
   as a subprocess: its wall time, the CPU time of it and its workers (user + system, from ``getrusage`` of the
   reaped children), and the machine's 1-minute load average sampled every 2 s while it ran;
2. **per statement**: every statement run once more on a pool of N processes, each through a thin counting wrapper
   around the implementation: wall and CPU seconds per statement, the protocol calls it made by method (direct calls
   from the statement; an optimizer's own internal estimator calls are not protocol calls), and the optimizer steps
   those calls asked for (the length of ``gammas`` for ``prox_sgd`` / ``proj_sgd``, ``steps`` for ``fit``).

The page records the date, the machine (cores usable, CPU model) and the load, because the machine these run on is
shared: wall times scale with the load, CPU times much less.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: run as a script, this checkout's refvi is measured, whatever the installed one is (its spawned pool workers inherit
#: sys.path; its ``python -m`` runs start in ROOT); imported by a test, the refvi under test (pytest's)
CHECKOUT = __name__ == "__main__"
if CHECKOUT:
    sys.path.insert(0, str(ROOT))

EXAMPLE = "refvi.verification.examples.numpy_adapter:IMPL"
OUTPUT = ROOT / "docs" / "certificate-costs.md"
BUDGET = 180.0                             # seconds of wall on 2 cores for the example's ci certificate (a maintainer's CI step)
PAPERS = {"000": "Domke, Garrigos & Gower", "001": "Locatello et al.", "002": "Domke",
          "003": "Chérief-Abdellatif, Alquier & Khan", "004": "Wu & Gardner"}
#: per optimizer method: how to read the number of steps a call asks for from its arguments
STEPS = {"prox_sgd": lambda a, k: len(a[3] if len(a) > 3 else k["gammas"]),
         "proj_sgd": lambda a, k: len(a[3] if len(a) > 3 else k["gammas"]),
         "fit": lambda a, k: int(a[2] if len(a) > 2 else k.get("steps", 200))}


# ---- counting --------------------------------------------------------------------------------------------------
class Counting:
    """A thin wrapper that counts calls of the protocol methods (by dotted name) and passes everything else through;
    sub-adapters (``boosting``, ``online``, ``ngvi``) are wrapped too."""

    def __init__(self, obj, counts: dict, steps: dict, prefix: str = ""):
        from refvi.verification.protocol import SUBPROTOCOLS, protocol_methods

        self._obj, self._counts, self._steps, self._prefix = obj, counts, steps, prefix
        self._methods, self._subs = set(protocol_methods()), set(SUBPROTOCOLS) if not prefix else set()

    def __getattr__(self, attr):
        value = getattr(self._obj, attr)
        dotted = self._prefix + attr
        if attr in self._subs and value is not None:
            return Counting(value, self._counts, self._steps, dotted + ".")
        if dotted not in self._methods or not callable(value):
            return value

        def counted(*args, **kwargs):
            self._counts[dotted] = self._counts.get(dotted, 0) + 1
            if attr in STEPS:
                self._steps[dotted] = self._steps.get(dotted, 0) + STEPS[attr](args, kwargs)
            return value(*args, **kwargs)
        return counted


_WORKER: dict = {}


def _start_worker(impl_spec: str) -> None:
    from refvi.verification.protocol import load_implementation
    from refvi.verification.running import runner

    _WORKER["statements"] = runner.load_statements()
    _WORKER["impl"] = load_implementation(impl_spec)


def measure_statement(sid: str, profile: str) -> dict:
    """Run one statement through the counting wrapper: its record's verdict, wall and CPU seconds, calls, steps."""
    from refvi.verification.running import runner

    counts: dict[str, int] = {}
    steps: dict[str, int] = {}
    impl = Counting(_WORKER["impl"], counts, steps)
    t0, c0 = time.perf_counter(), time.process_time()
    record = runner.run_statement(_WORKER["statements"][sid], impl, profile)
    return {"id": sid, "verdict": record["verdict"], "wall": time.perf_counter() - t0,
            "cpu": time.process_time() - c0, "calls": dict(sorted(counts.items())), "steps": steps}


def per_statement(impl_spec: str, profile: str, workers: int, select=None) -> list[dict]:
    """Every selected statement measured on a pool of ``workers`` processes (one statement at a time each)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from refvi.verification.running import runner

    ids = [st.id for st in runner.select(runner.load_statements().values(), select)]
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_start_worker,
                             initargs=(impl_spec,)) as pool:
        return list(pool.map(measure_statement, ids, [profile] * len(ids)))


# ---- end to end ------------------------------------------------------------------------------------------------
def end_to_end(impl_spec: str, profile: str, workers: int | None, select=None) -> dict:
    """The CLI run as a maintainer types it (``workers`` None: serial): wall, CPU of it and its workers, load while
    it ran, its verdicts."""
    loads, done = [], threading.Event()

    def sample():
        while not done.wait(2.0):
            loads.append(os.getloadavg()[0])

    with tempfile.TemporaryDirectory() as tmp:
        cert = Path(tmp) / "certificate.json"
        cmd = [sys.executable, "-m", "refvi.verification", "--impl", impl_spec, "--profile", profile,
               "--json", str(cert)] + (["--workers", str(workers)] if workers else []) + \
            (["--select", *select] if select else [])
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_before = os.getloadavg()[0]
        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT if CHECKOUT else tmp, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        done.set()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        records = json.loads(cert.read_text())["statements"] if cert.exists() else []
    verdicts: dict[str, int] = {}
    for r in records:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    shown = ["python"] + [("CERT.json" if a == str(cert) else a) for a in cmd[1:]]
    return {"command": " ".join(shown),
            "exit": proc.returncode, "wall": wall, "cpu": cpu, "load_before": load_before,
            "load_mean": sum(loads) / len(loads) if loads else load_before, "load_max": max(loads, default=load_before),
            "verdicts": verdicts, "seconds": {r["id"]: r["seconds"] for r in records}}


def machine() -> dict:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    import numpy
    return {"cores": usable, "cpu": model, "python": platform.python_version(), "numpy": numpy.__version__,
            "system": f"{platform.system()} {platform.release()}"}


# ---- the page --------------------------------------------------------------------------------------------------
def _calls_text(calls: dict, steps: dict) -> str:
    parts = [f"{m} {n:,}" + (f" ({steps[m]:,} steps)" if m in steps else "") for m, n in
             sorted(calls.items(), key=lambda kv: -kv[1])]
    return ", ".join(parts) if parts else "none"


def render(info: dict, e2e: dict | None, rows: list[dict], impl_spec: str, profile: str, workers: int) -> str:
    m = info["machine"]
    out = ["# What a certificate run costs", "",
           "Generated by `python tests/benchmarks/certificate_costs.py` (do not edit by hand: rerun it).", "",
           f"* implementation: `{impl_spec}`; profile `{profile}`; {workers} worker processes",
           f"* date: {info['date']}; commit `{info['commit']}`",
           f"* machine: {m['cores']} usable cores, {m['cpu']}; {m['system']}; Python {m['python']}, "
           f"NumPy {m['numpy']}", ""]
    if e2e is not None:
        v = ", ".join(f"{n} {k}" for k, n in sorted(e2e["verdicts"].items()))
        out += ["## End to end", "",
                f"`{e2e['command']}`", "",
                "| wall | CPU (user + system, all processes) | load average (1 min) while it ran | exit | verdicts |",
                "|---|---|---|---|---|",
                f"| {e2e['wall']:.0f} s | {e2e['cpu']:.0f} s | {e2e['load_mean']:.1f} mean, {e2e['load_max']:.1f} max "
                f"({e2e['load_before']:.1f} before) on {m['cores']} cores | {e2e['exit']} | {v} |", "",
                f"CPU / wall = {e2e['cpu'] / e2e['wall']:.2f} of the {workers} workers' {workers}.0 possible: a "
                "load above the core count means other jobs shared the cores, and the wall time grows with it.", ""]
        if rows:
            slowest = max(rows, key=lambda r: r["cpu"])
            idle = max(e2e["cpu"] / workers, slowest["cpu"])
            verdict = "met" if e2e["wall"] <= BUDGET else "not met"
            out += [f"**Budget** (the `ci` certificate of an outside library within {BUDGET / 60:.0f} minutes of wall on 2 cores): "
                    f"{verdict} in this run ({e2e['wall']:.0f} s of wall at a mean load of {e2e['load_mean']:.1f}). "
                    f"On {workers} otherwise idle cores the run needs at least max(CPU / {workers}, the slowest "
                    f"statement's CPU) = max({e2e['cpu'] / workers:.0f} s, {slowest['cpu']:.0f} s for "
                    f"{slowest['id']}) = {idle:.0f} s.", ""]
    out += ["## Per paper", "",
            "Sums over the statements of each paper, each run alone on one process through a counting wrapper.", "",
            "| paper | statements | wall (sum) | CPU (sum) | protocol calls | optimizer steps | hottest statement |",
            "|---|---|---|---|---|---|---|"]
    for seed, who in PAPERS.items():
        mine = [r for r in rows if r["id"].startswith(seed + ".")]
        if not mine:
            continue
        hot = max(mine, key=lambda r: r["cpu"])
        out.append(f"| {seed} {who} | {len(mine)} | {sum(r['wall'] for r in mine):.1f} s | "
                   f"{sum(r['cpu'] for r in mine):.1f} s | {sum(sum(r['calls'].values()) for r in mine):,} | "
                   f"{sum(sum(r['steps'].values()) for r in mine):,} | {hot['id']} ({hot['cpu']:.1f} s CPU) |")
    tot_wall, tot_cpu = sum(r["wall"] for r in rows), sum(r["cpu"] for r in rows)
    out += [f"| all | {len(rows)} | {tot_wall:.1f} s | {tot_cpu:.1f} s | "
            f"{sum(sum(r['calls'].values()) for r in rows):,} | {sum(sum(r['steps'].values()) for r in rows):,} | |",
            "", f"The per-statement pass took {info['pass_wall']:.0f} s of wall on {workers} processes.", "",
            "## Per statement", "", "Slowest first (CPU seconds).  Calls are the direct protocol calls of the "
            "statement, by method; steps are the optimizer steps those calls asked for.", "",
            "| statement | verdict | wall | CPU | calls |", "|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: -r["cpu"]):
        out.append(f"| {r['id']} | {r['verdict']} | {r['wall']:.2f} s | {r['cpu']:.2f} s | "
                   f"{_calls_text(r['calls'], r['steps'])} |")
    return "\n".join(out) + "\n"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--impl", default=EXAMPLE, help=f"MODULE:OBJECT (default {EXAMPLE})")
    p.add_argument("--profile", default="ci", choices=("ci", "deep"))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--select", nargs="+", metavar="PATTERN", help="statement ids (default: all five papers)")
    p.add_argument("--output", default=str(OUTPUT), help=f"the markdown page (default {OUTPUT.relative_to(ROOT)})")
    p.add_argument("--json", help="also write the raw measurements here")
    p.add_argument("--no-end-to-end", action="store_true", help="skip the CLI run (per-statement pass only)")
    args = p.parse_args(argv)

    info = {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(), "commit": _commit()}
    e2e = None if args.no_end_to_end else end_to_end(args.impl, args.profile, args.workers, args.select)
    if e2e is not None:
        print(f"end to end: {e2e['wall']:.1f} s wall, {e2e['cpu']:.1f} s CPU, load {e2e['load_mean']:.1f}, "
              f"exit {e2e['exit']}, {e2e['verdicts']}", flush=True)
    t0 = time.perf_counter()
    rows = per_statement(args.impl, args.profile, args.workers, args.select)
    info["pass_wall"] = time.perf_counter() - t0
    print(f"per statement: {len(rows)} statements, {sum(r['cpu'] for r in rows):.1f} s CPU, "
          f"{info['pass_wall']:.1f} s wall", flush=True)
    Path(args.output).write_text(render(info, e2e, rows, args.impl, args.profile, args.workers))
    if args.json:
        Path(args.json).write_text(json.dumps({"info": info, "end_to_end": e2e, "statements": rows}, indent=1))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
