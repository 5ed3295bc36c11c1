"""Command line: ``python -m refvi.verification [--select PATTERN ...] [--select-method NAME ...] [--profile ci|deep]
[--json PATH] [--impl MODULE:OBJECT] [--workers N] [--timeout SECONDS] [--strict | --require SEED ...] [-x]
[--artifacts DIR] [--junit-xml PATH] [--compare CERT.json|refvi] [--resume CERT.json] [--list]``, and
``--replay FILE``, ``--search STATEMENT``, ``--self-test``.  Exit codes: 0 nothing failed; 1 a fail or an error;
2 nothing exercised the implementation, or a usage error; 3 ``--strict`` / ``--require`` and a paper is not
certified; 130 / 143 interrupted by SIGINT / SIGTERM (the certificate of what finished is written, marked
incomplete: ``--resume`` completes it)."""

from __future__ import annotations

import argparse
import json
import signal
import sys

from refvi.verification.certificate.report import progress as _progress
from refvi.verification.certificate.report import report as _report
from refvi.verification.running import runner
from refvi.verification.running.commands import error as _error
from refvi.verification.running.commands import in_compiler as _in_compiler
from refvi.verification.running.commands import run_search as _search
from refvi.verification.running.commands import run_self_test as _self_test


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m refvi.verification", description="Run the papers' lemmas and theorems as executable statements."
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    p.add_argument("--select", nargs="+", metavar="PATTERN", help="statement ids by prefix or glob, e.g. '000.*'")
    p.add_argument(
        "--select-method",
        nargs="+",
        metavar="NAME",
        dest="select_method",
        help="only the statements that call one of these protocol methods (dotted names or globs: "
        "'energy', 'online.*'); combines with --select",
    )
    p.add_argument("--profile", choices=["ci", "deep"], default="ci", help="ci (fast, default) or deep")
    p.add_argument("--json", metavar="PATH", help="write the JSON certificate here")
    p.add_argument(
        "--impl", metavar="MODULE:OBJECT", default=None, help="implementation to verify (default: refvi itself)"
    )
    p.add_argument("--list", action="store_true", help="list the selected statements and exit")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 3 unless every selected paper is certified (see the per-paper block)",
    )
    p.add_argument(
        "--require",
        nargs="+",
        metavar="SEED",
        default=None,
        help="exit 3 unless these papers (000 001 002 003 004) are certified",
    )
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first fail or error")
    p.add_argument(
        "--artifacts",
        metavar="DIR",
        default=None,
        help="write a reproducer (.npz and a runnable .py) for each fail or error into DIR",
    )
    p.add_argument(
        "--replay",
        metavar="FILE",
        default=None,
        help="rerun the failing instance of a reproducer .npz against --impl and exit",
    )
    p.add_argument(
        "--compare",
        metavar="CERT",
        default=None,
        help="compare this run with a certificate (a JSON path) or with refvi's own on the same selection "
        "('refvi'): verdicts, declines, instances and worst slacks that differ",
    )
    p.add_argument(
        "--junit-xml",
        metavar="PATH",
        dest="junit_xml",
        default=None,
        help="also write the verdicts as JUnit XML (one test case per statement)",
    )
    p.add_argument(
        "--resume",
        metavar="CERT",
        default=None,
        help="complete a partial certificate (an interrupted run): run only the statements it lacks; "
        "written to --json, by default back to CERT",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        default=None,
        help="run statements on N worker processes (Dask distributed if installed, else local processes); "
        "the certificate is identical whatever N; a statement whose worker crashes (segfault) is "
        "reported as an error and the run goes on",
    )
    p.add_argument("--scheduler", metavar="ADDRESS", default=None, help="use an existing Dask cluster")
    p.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        default=None,
        help="per statement (default 900 in ci, 3600 in deep; 0: none): a statement still running is "
        "stopped and reported as an error (timed out, where it was) and the run goes on (serially, "
        "compiled code that never returns to Python cannot be stopped: use --workers 1)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        dest="no_progress",
        help="no progress bar on a terminal (rows are printed either way)",
    )
    p.add_argument(
        "--search",
        metavar="STATEMENT",
        default=None,
        help="search for a counterexample to a bound statement: maximise lhs/rhs over its instances",
    )
    p.add_argument("--budget", type=int, default=200, help="with --search: Hypothesis examples per seed (default 200)")
    p.add_argument("--seeds", type=int, default=None, help="with --search: independent seeds (default: workers)")
    p.add_argument(
        "--self-test",
        nargs="*",
        metavar="MUTANT",
        default=None,
        help="run the certificate against the planted bugs of the public zoo (all, or those named / "
        "matching a glob) and report which statements catch each; exit 1 if any is missed",
    )
    p.add_argument("--first-catch", action="store_true", help="with --self-test: stop at the first catching statement")
    return p


def _version() -> str:
    import refvi

    return f"refvi {refvi.__version__}"


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    reconfigure = getattr(sys.stdout, "reconfigure", None)  # a TextIOWrapper's; a replaced stdout may lack it
    try:
        if reconfigure is not None:
            reconfigure(line_buffering=True)  # one flushed line per statement, on a pipe too
    except ValueError:
        pass

    from refvi.verification.protocol.loading import ImplementationSpecError, load_implementation

    if args.replay is not None:
        from refvi.verification.certificate import reproducers

        try:
            return reproducers.replay(args.replay, args.impl, err=lambda line: print(line, file=sys.stderr))
        except ImplementationSpecError as exc:
            return _error(str(exc))
    out_path = args.json or args.resume
    for path, flag in ((out_path, "--json"), (args.junit_xml, "--junit-xml")):
        if path:
            try:
                runner.check_writable(path)
            except OSError as exc:
                return _error(str(exc).replace("--json", flag))
    if args.require:
        papers = sorted({sid.split(".")[0] for sid in runner.load_statements()})
        unknown = [seed for seed in args.require if seed not in papers]
        if unknown:
            return _error(f"--require: no paper {', '.join(unknown)}; the papers are {' '.join(papers)}")
    if args.self_test is not None:
        return _self_test(args)
    if args.search is not None:
        return _search(args)
    if args.list:
        chosen = runner.select_methods(
            runner.select(runner.load_statements().values(), args.select), args.select_method
        )
        from refvi.verification.protocol import conventions

        for st in chosen:
            flag = f" [{st.erratum}]" if st.erratum else ""
            uses = "oracle-only" if st.oracle_only else ", ".join(st.uses or ())
            print(f"{st.id:<28} {st.kind:<11} {st.title}{flag}\n{'':<28} uses: {uses}")
            for c in conventions.of_statement(st):
                print(f"{'':<28} convention ({c.name}; docs/{c.page}): {c.phrase}")
        return 0

    if args.workers is not None and args.workers < 1:
        return _error(f"--workers must be >= 1, got {args.workers}")
    if args.timeout is not None and not args.timeout >= 0:
        return _error(f"--timeout must be >= 0 seconds, got {args.timeout}")
    try:
        impl = load_implementation(args.impl)
    except ImplementationSpecError as exc:
        return _error(str(exc))
    resume = None
    if args.resume is not None:
        try:
            with open(args.resume, encoding="utf-8") as fh:
                resume = json.load(fh)
            import refvi

            runner.check_resumable(resume, runner.implementation_name(impl), args.profile, refvi.__version__)
            args.select, args.select_method = runner.resumed_selection(resume, args.select, args.select_method)
        except (OSError, ValueError) as exc:
            return _error(f"--resume {args.resume}: {exc}")
    reference = None
    if args.compare is not None and args.compare != "refvi":
        try:
            with open(args.compare, encoding="utf-8") as fh:
                reference = json.load(fh)
        except (OSError, ValueError) as exc:
            return _error(f"--compare {args.compare}: {exc}")

    parallel = args.workers is not None or args.scheduler is not None
    if not parallel:  # a crash in the implementation kills a serial run: at least say in which statement
        import faulthandler

        faulthandler.enable()
    chosen = runner.select_methods(runner.select(runner.load_statements().values(), args.select), args.select_method)
    todo = len(chosen) - (len({r["id"] for r in resume["statements"]} & {st.id for st in chosen}) if resume else 0)
    print(
        f"running {todo} statement(s) against {runner.implementation_name(impl)} (profile {args.profile}"
        f"{f', {args.workers} workers' if args.workers else ''}{', resuming ' + args.resume if resume else ''})"
    )
    print(runner.HEADER)
    print("-" * len(runner.HEADER))
    show, close_bar = _progress(todo, not args.no_progress)

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    stopping: dict[str, int | None] = {"signal": None}

    def on_signal(signum, frame):
        if stopping["signal"] is not None:
            return  # already stopping: a second Ctrl-C does not interrupt the clean-up
        if _in_compiler(frame):  # never raise inside Numba / LLVM compilation (a ctypes callback: it
            import os  # crashes the process); ask again in a moment
            import threading

            threading.Timer(0.2, os.kill, (os.getpid(), signum)).start()
            return
        stopping["signal"] = signum
        raise runner.Interrupted(signum)

    for sig in previous:
        signal.signal(sig, on_signal)
    try:
        cert = runner.run(
            args.select,
            args.profile,
            args.impl if parallel else impl,
            progress=show,
            workers=args.workers,
            scheduler=args.scheduler,
            timeout=args.timeout,
            methods=args.select_method,
            exitfirst=args.exitfirst,
            artifacts=args.artifacts,
            resume=resume,
            impl_spec=args.impl,
        )
        close_bar()
        if args.compare == "refvi" and cert.get("complete", True):
            print("running refvi's own certificate on the same selection for --compare ...")
            try:
                reference = runner.run(
                    args.select,
                    args.profile,
                    None,
                    workers=args.workers,
                    scheduler=args.scheduler,
                    timeout=args.timeout,
                    methods=args.select_method,
                )
            except KeyboardInterrupt:
                reference = None
            if reference is None or not reference.get("complete", True):
                print("--compare refvi: interrupted, no comparison", file=sys.stderr)
                reference = None
    finally:
        close_bar()
        stopping["signal"] = -1  # from here on a signal does not interrupt writing the certificate
    try:
        return _report(args, cert, out_path, reference)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
