"""The command line's own steps besides a run (``python -m refvi.verification``): ``--search`` (:func:`run_search`),
``--self-test`` (:func:`run_self_test`), the test that keeps the interrupt handler out of Numba's compiler
(:func:`in_compiler`) and usage errors (:func:`error`)."""

from __future__ import annotations

import sys


def error(msg: str) -> int:
    """Print a usage error and return the exit code 2."""
    print(f"error: {msg}", file=sys.stderr)
    return 2


def in_compiler(frame) -> bool:
    """Whether the interrupted Python code is Numba's compiler or llvmlite (where an exception raised by a signal
    handler lands in a ctypes callback of LLVM and can crash the process) or a garbage-collector callback (where it
    is printed and dropped): the handler then asks again in a moment."""
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.startswith(("numba.core", "numba.np", "numba.misc", "numba.typed", "llvmlite")):
            return True
        if name == "distributed.gc" or frame.f_code.co_name.endswith("gc_callback"):
            return True  # a garbage-collector callback: an exception raised there is printed and dropped
        frame = frame.f_back
    return False


def run_search(args) -> int:
    """``--search STATEMENT``: search for a counterexample, print the best instance, save the search as JSON."""
    from refvi.verification.running import search

    workers = args.workers or 1
    seeds = list(range(args.seeds or workers))
    try:
        out = search.search(args.search, args.budget, seeds, args.impl, args.profile, workers, args.scheduler)
    except (KeyError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    best = out["best"]
    if best is None:
        print(f"{args.search}: no bound recorded with ctx.bound(); nothing to search")
    else:
        print(
            f"{args.search}: best lhs/rhs = {best['ratio']:.6g} ({best['label']}), seed {best['seed']}, "
            f"budget {args.budget}\n  instance: {best['instance']}"
        )
    for c in out["counterexamples"]:
        print(f"  COUNTEREXAMPLE (seed {c['seed']}, {c['verdict']}): {c['detail'][:800]}")
    path = args.json or f"search-{args.search}.json"
    try:
        search.save(out, path)
    except OSError as exc:
        return error(str(exc))
    print(f"search written to {path} ({out['examples']} instances)")
    return 1 if out["counterexamples"] else 0


def run_self_test(args) -> int:
    """``--self-test [MUTANT ...]``: run the certificate against the planted bugs; exit 1 if one is missed."""
    import fnmatch

    from refvi.verification.examples.bug_zoo import load_zoo
    from refvi.verification.running import selftest

    zoo = load_zoo()
    chosen = [
        m
        for mid, m in sorted(zoo.items())
        if not args.self_test or any(fnmatch.fnmatchcase(mid, p) or mid.startswith(p) for p in args.self_test)
    ]
    if not chosen:
        print(f"no planted bug matches {args.self_test}; known: {', '.join(sorted(zoo))}", file=sys.stderr)
        return 2
    print(f"{'planted bug':<34} {'verdict':<7} {'caught/ran':<10} {'time':>7}  caught by")
    rows = selftest.self_test(
        chosen, args.profile, args.first_catch, progress=lambda r: print(selftest.format_row(r), flush=True)
    )
    missed = [r["id"] for r in rows if not r["caught_by"]]
    print(
        f"{len(rows) - len(missed)} of {len(rows)} planted bugs caught by the certificate alone"
        + (f"; missed: {', '.join(missed)}" if missed else "")
    )
    if args.json:
        from refvi import _atomic

        try:
            _atomic.write_json(args.json, {"profile": args.profile, "mutants": rows})
        except OSError as exc:
            return error(str(exc))
    return 1 if missed else 0
