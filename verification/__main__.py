"""Command line: ``python -m refvi.verification [--select PATTERN ...] [--profile ci|deep] [--json PATH]
[--impl MODULE:OBJECT] [--workers N] [--timeout SECONDS] [--list]``.  Exits 0 when no statement fails or errors."""

from __future__ import annotations

import argparse
import sys

from refvi.verification import runner


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m refvi.verification",
                                description="Run the papers' lemmas and theorems as executable statements.")
    p.add_argument("--select", nargs="+", metavar="PATTERN", help="statement ids by prefix or glob, e.g. '000.*'")
    p.add_argument("--profile", choices=["ci", "deep"], default="ci", help="ci (fast, default) or deep")
    p.add_argument("--json", metavar="PATH", help="write the JSON certificate here")
    p.add_argument("--impl", metavar="MODULE:OBJECT", default=None,
                   help="implementation to verify (default: refvi itself)")
    p.add_argument("--list", action="store_true", help="list the selected statements and exit")
    p.add_argument("--workers", type=int, metavar="N", default=None,
                   help="run statements on N worker processes (Dask distributed if installed, else local processes); "
                        "the certificate is identical whatever N; a statement whose worker crashes (segfault) is "
                        "reported as an error and the run goes on")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None, help="use an existing Dask cluster")
    p.add_argument("--timeout", type=float, metavar="SECONDS", default=None,
                   help="per statement (default 900 in ci, 3600 in deep; 0: none): a statement still running is "
                        "stopped and reported as an error (timed out, where it was) and the run goes on (serially, "
                        "compiled code that never returns to Python cannot be stopped: use --workers 1)")
    p.add_argument("--search", metavar="STATEMENT", default=None,
                   help="search for a counterexample to a bound statement: maximise lhs/rhs over its instances")
    p.add_argument("--budget", type=int, default=200, help="with --search: Hypothesis examples per seed (default 200)")
    p.add_argument("--seeds", type=int, default=None, help="with --search: independent seeds (default: workers)")
    p.add_argument("--self-test", nargs="*", metavar="MUTANT", default=None,
                   help="run the certificate against the planted bugs of the public zoo (all, or those named / "
                        "matching a glob) and report which statements catch each; exit 1 if any is missed")
    p.add_argument("--first-catch", action="store_true", help="with --self-test: stop at the first catching statement")
    args = p.parse_args(argv)

    from refvi.verification.protocol.loading import ImplementationSpecError, load_implementation

    if args.json:
        try:
            runner.check_writable(args.json)
        except OSError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.self_test is not None:
        return _self_test(args)
    if args.search is not None:
        return _search(args)
    if args.list:
        for st in runner.select(runner.load_statements().values(), args.select):
            flag = f" [{st.erratum}]" if st.erratum else ""
            uses = "oracle-only" if st.oracle_only else ", ".join(st.uses or ())
            print(f"{st.id:<28} {st.kind:<11} {st.title}{flag}\n{'':<28} uses: {uses}")
        return 0

    try:
        impl = load_implementation(args.impl)
    except ImplementationSpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    print(runner.HEADER)
    print("-" * len(runner.HEADER))

    def show(rec):
        print(runner.format_row(rec), flush=True)
        if rec["verdict"] in ("fail", "error"):
            print(f"    -> {rec.get('detail', '')[:500]}", flush=True)

    if args.workers is not None and args.workers < 1:
        print(f"error: --workers must be >= 1, got {args.workers}", file=sys.stderr)
        return 2
    if args.timeout is not None and not args.timeout >= 0:
        print(f"error: --timeout must be >= 0 seconds, got {args.timeout}", file=sys.stderr)
        return 2
    parallel = args.workers is not None or args.scheduler is not None
    if not parallel:        # a crash in the implementation kills a serial run: at least say in which statement
        import faulthandler
        faulthandler.enable()
    cert = runner.run(args.select, args.profile, args.impl if parallel else impl, progress=show,
                      workers=args.workers, scheduler=args.scheduler, timeout=args.timeout)
    print("-" * len(runner.HEADER))
    print(runner.summary(cert))
    print("(pass* = oracle-only: checks the paper with independent oracles, not the implementation)")
    if args.json:
        runner.write_json(cert, args.json)
        print(f"certificate written to {args.json}")
    if not cert["statements"]:
        print("no statement matched the selection", file=sys.stderr)
        return 2
    code = runner.exit_code(cert)
    if code == 2:
        print("no selected statement exercised the implementation (all skipped or oracle-only)", file=sys.stderr)
    return code


def _search(args) -> int:
    from refvi.verification import search

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
        print(f"{args.search}: best lhs/rhs = {best['ratio']:.6g} ({best['label']}), seed {best['seed']}, "
              f"budget {args.budget}\n  instance: {best['instance']}")
    for c in out["counterexamples"]:
        print(f"  COUNTEREXAMPLE (seed {c['seed']}, {c['verdict']}): {c['detail'][:800]}")
    path = args.json or f"search-{args.search}.json"
    search.save(out, path)
    print(f"search written to {path} ({out['examples']} instances)")
    return 1 if out["counterexamples"] else 0


def _self_test(args) -> int:
    import fnmatch
    import json

    from refvi.verification import selftest
    from refvi.verification.examples.bug_zoo import load_zoo

    zoo = load_zoo()
    chosen = [m for mid, m in sorted(zoo.items())
              if not args.self_test or any(fnmatch.fnmatchcase(mid, p) or mid.startswith(p) for p in args.self_test)]
    if not chosen:
        print(f"no planted bug matches {args.self_test}; known: {', '.join(sorted(zoo))}", file=sys.stderr)
        return 2
    print(f"{'planted bug':<34} {'verdict':<7} {'caught/ran':<10} {'time':>7}  caught by")
    rows = selftest.self_test(chosen, args.profile, args.first_catch,
                              progress=lambda r: print(selftest.format_row(r), flush=True))
    missed = [r["id"] for r in rows if not r["caught_by"]]
    print(f"{len(rows) - len(missed)} of {len(rows)} planted bugs caught by the certificate alone"
          + (f"; missed: {', '.join(missed)}" if missed else ""))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"profile": args.profile, "mutants": rows}, fh, indent=2)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
