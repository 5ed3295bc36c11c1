"""``--self-test``: run the certificate against every planted bug of the public zoo and report which statements
catch each (a bug no statement catches is a hole in the certificate).

For each mutant only the statements that call the mutated method run (a statement that never calls it cannot see
it); ``first_catch`` stops at the first statement that fails or errors, which is what the ci test needs.  A failing
draw is not shrunk (the verdict is the same; shrinking a failure can take a minute).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from refvi.verification.running import runner


def statements_for(mutant, statements) -> list:
    """The statements whose declared protocol methods include the mutated one: the mutant's ``try_first`` ones, then
    the rest in catalogue order with the exact ones before the statistical ones (which repeat whole runs: with
    ``first_catch`` the cheap checks go first).  The order changes the time to the first catch, never the verdict."""
    first = getattr(mutant, "try_first", ())
    return sorted(
        (st for st in statements if st.uses and mutant.method in st.uses),
        key=lambda st: (st.id not in first, st.kind == "statistical"),
    )


def self_test(
    mutants: Iterable, profile: str = "ci", first_catch: bool = False, progress: Callable[[dict], None] | None = None
) -> list[dict]:
    """One record per mutant: ``id``, ``method``, ``bug``, ``caught_by`` (statement ids with verdict fail/error),
    ``ran`` (statements run), ``seconds``."""
    statements = runner.select(runner.load_statements().values(), None)
    out = []
    for mt in mutants:
        t0 = time.perf_counter()
        impl = mt.build()
        caught, ran = [], []
        for st in statements_for(mt, statements):
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
