"""What a run prints and writes at its end (:func:`report`): the summary line, the value coverage and per-paper
blocks, the comparison with a reference certificate, the JSON certificate and JUnit XML, where the reproducers are,
why a run stopped early, and the exit code; and the table's rows as statements finish (:func:`progress`)."""

from __future__ import annotations

import sys

from refvi.verification.running import runner


def report(args, cert: dict, out_path: str | None, reference: dict | None) -> int:
    """Print the end of a run, write what the command line asked for, and return the exit code."""
    from refvi.verification.certificate import coverage

    print("-" * len(runner.HEADER))
    print(runner.summary(cert))
    print("(pass* = oracle-only: checks the paper with independent oracles, not the implementation)")
    if cert.get("papers"):
        print(coverage.format_values(cert["papers"]))
        print(coverage.format_block(cert["papers"]))
    if reference is not None and cert.get("complete", True):
        from refvi.verification.certificate import compare

        cert["comparison"] = compare.compare(cert, reference)
        print(compare.format_comparison(cert["comparison"]))
    written = []
    try:
        if out_path:
            runner.write_json(cert, out_path)
            written.append(f"certificate written to {out_path}")
        if args.junit_xml:
            from refvi import _atomic
            from refvi.verification.certificate import junit

            _atomic.write_text(args.junit_xml, junit.to_xml(cert))
            written.append(f"JUnit XML written to {args.junit_xml}")
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for line in written:
        print(line)
    failed = [r for r in cert["statements"] if r.get("artifacts")]
    if failed:
        print(
            f"reproducers in {args.artifacts}: replay one with "
            f"python -m refvi.verification --replay {failed[0]['artifacts'][0]}"
            f"{' --impl ' + args.impl if args.impl else ''}"
        )
    stopped = cert.get("interrupted")
    if stopped in ("SIGINT", "SIGTERM"):
        done, total = len(cert["statements"]), len(cert["statements"]) + len(cert["not_run"])
        where = (
            f"; partial certificate in {out_path} (--resume {out_path} finishes it)"
            if out_path
            else " (no --json: nothing written)"
        )
        print(f"interrupted by {stopped} after {done} of {total} statements{where}", file=sys.stderr)
        return 130 if stopped == "SIGINT" else 143
    if stopped == "exitfirst":
        print(f"stopped at the first fail or error (-x): {len(cert['not_run'])} statement(s) not run", file=sys.stderr)
    if not cert["statements"]:
        print("no statement matched the selection", file=sys.stderr)
        return 2
    require = [] if args.strict else args.require
    code = runner.exit_code(cert, require)
    if code == 2:
        print("no selected statement exercised the implementation (all skipped or oracle-only)", file=sys.stderr)
    elif code == runner.EXIT_NOT_CERTIFIED:
        missing = coverage.not_certified(cert.get("papers", {}), list(require) or None)
        print(f"not certified: paper(s) {', '.join(missing)} (see the per-paper block)", file=sys.stderr)
    return code


def progress(total: int, bar: bool):
    """(show(record), close()): rows printed and flushed as statements finish, under a progress bar on a terminal."""
    use_bar = bar and sys.stdout.isatty() and total > 1
    pbar = None
    if use_bar:
        try:
            from tqdm import tqdm

            pbar = tqdm(total=total, unit="stmt", leave=False, dynamic_ncols=True)
        except ImportError:
            pbar = None

    def emit(line: str) -> None:
        if pbar is not None:
            pbar.write(line)
        else:
            print(line, flush=True)

    def show(rec: dict) -> None:
        emit(runner.format_row(rec))
        note = runner.row_note(rec)
        if note:
            emit(note)
        if pbar is not None:
            pbar.update(1)

    def close() -> None:
        nonlocal pbar
        if pbar is not None:
            pbar.close()
            pbar = None

    return show, close
