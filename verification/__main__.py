"""Command line: ``python -m refvi.verification [--select PATTERN ...] [--profile ci|deep] [--json PATH]
[--impl MODULE:OBJECT] [--list]``.  Exits 0 when no statement fails or errors."""

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
    args = p.parse_args(argv)

    from refvi.verification.protocol.loading import ImplementationSpecError, load_implementation

    if args.json:
        try:
            runner.check_writable(args.json)
        except OSError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
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

    cert = runner.run(args.select, args.profile, impl, progress=show)
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


if __name__ == "__main__":
    sys.exit(main())
