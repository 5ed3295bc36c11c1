"""``--self-test``: run the certificate against every planted bug of the public zoo and report which statements
catch each (a bug no statement catches is a hole in the certificate).

For each mutant only the statements that call the mutated method run (a statement that never calls it cannot see
it); ``first_catch`` stops at the first statement that fails or errors, which is what the ci test needs.  A failing
draw is not shrunk (the verdict is the same; shrinking a failure can take a minute).

The statement that caught each planted bug last time is tried first (``bug_zoo/first_catch.json``, written by
``python -m refvi.verification.running.selftest --record``): a speed hint only, like a mutant's ``try_first``; a
recorded statement that no longer catches its bug is followed by every other one, so the verdict never depends on it.
"""

from __future__ import annotations

import functools
import json
import pathlib
import sys
import time
from collections.abc import Callable, Iterable

from refvi.verification.running import runner

#: planted bug id -> the statement that caught it first (the self-test's own record of its last full run)
FIRST_CATCH_FILE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "bug_zoo" / "first_catch.json"


@functools.cache
def recorded_first_catches() -> dict[str, str]:
    """The recorded first catches (empty when the file is missing)."""
    try:
        return dict(json.loads(FIRST_CATCH_FILE.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return {}


def statements_for(mutant, statements, recorded: dict[str, str] | None = None) -> list:
    """The statements whose declared protocol methods include the mutated one: the one ``recorded`` as its first
    catch (default: :func:`recorded_first_catches`), the mutant's ``try_first`` ones, then the rest in catalogue order
    with the exact ones before the statistical ones (which repeat whole runs: with ``first_catch`` the cheap checks go
    first).  The order changes the time to the first catch, never the verdict."""
    first = getattr(mutant, "try_first", ())
    known = (recorded_first_catches() if recorded is None else recorded).get(mutant.id)
    return sorted(
        (st for st in statements if st.uses and mutant.method in st.uses),
        key=lambda st: (st.id != known, st.id not in first, st.kind == "statistical"),
    )


def self_test(
    mutants: Iterable,
    profile: str = "ci",
    first_catch: bool = False,
    progress: Callable[[dict], None] | None = None,
    recorded: dict[str, str] | None = None,
) -> list[dict]:
    """One record per mutant: ``id``, ``method``, ``bug``, ``caught_by`` (statement ids with verdict fail/error),
    ``ran`` (statements run), ``seconds``.  ``recorded``: the first catches to try first (default: the file's)."""
    statements = runner.select(runner.load_statements().values(), None)
    out = []
    for mt in mutants:
        t0 = time.perf_counter()
        impl = mt.build()
        caught, ran = [], []
        for st in statements_for(mt, statements, recorded):
            rec = runner.run_statement(st, impl, profile, shrink=False)  # the verdict, not a minimal instance
            ran.append(st.id)
            if rec["verdict"] in ("fail", "error"):
                caught.append(st.id)
                if first_catch:
                    break
        row = {
            "id": mt.id,
            "seed": mt.seed,
            "method": mt.method,
            "bug": mt.bug,
            "caught_by": caught,
            "ran": ran,
            "seconds": round(time.perf_counter() - t0, 2),
        }
        out.append(row)
        if progress is not None:
            progress(row)
    return out


def format_row(row: dict) -> str:
    verdict = "caught" if row["caught_by"] else "MISSED"
    by = ", ".join(row["caught_by"][:6]) + (" ..." if len(row["caught_by"]) > 6 else "")
    return f"{row['id']:<34} {verdict:<7} {len(row['caught_by']):>3}/{len(row['ran']):<3} {row['seconds']:>7.1f}s  {by}"


def record(rows: list[dict]) -> dict[str, str]:
    """The first catch of each caught bug of ``rows`` (a ``first_catch`` run), as :data:`FIRST_CATCH_FILE` holds it."""
    return {row["id"]: row["caught_by"][0] for row in sorted(rows, key=lambda r: r["id"]) if row["caught_by"]}


def main(argv: list[str] | None = None) -> int:
    """``--record``: run the whole zoo with ``first_catch`` in the ci profile, with no recorded order, and write each
    bug's first catch to :data:`FIRST_CATCH_FILE` (after planting bugs or changing statements)."""
    import argparse

    from refvi import _atomic
    from refvi.verification.examples.bug_zoo import load_zoo

    parser = argparse.ArgumentParser(prog="python -m refvi.verification.running.selftest", description=main.__doc__)
    parser.add_argument("--record", action="store_true", required=True)
    parser.parse_args(argv)
    rows = self_test(
        sorted(load_zoo().values(), key=lambda m: m.id),
        "ci",
        first_catch=True,
        progress=lambda r: print(format_row(r), flush=True),
        recorded={},  # the record is made from the default order, never from an older record
    )
    _atomic.write_text(FIRST_CATCH_FILE, json.dumps(record(rows), indent=1) + "\n")  # record() sorts by bug
    missed = [r["id"] for r in rows if not r["caught_by"]]
    print(
        f"wrote {FIRST_CATCH_FILE.name}: {len(rows) - len(missed)} first catches"
        + (f"; missed: {missed}" if missed else "")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
