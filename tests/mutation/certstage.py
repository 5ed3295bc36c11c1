"""Stage 1 of a mutant's test: import the mutated module, then run the named statements against refvi in the given
order, stopping at the first that fails or errors (``--all``: run every one, for a baseline).

Run by ``mutant.py`` in a worker's copy of the repository (``PYTHONPATH`` = that copy)::

    python tests/mutation/certstage.py --module refvi.kernels.prox --ids 000.lemma18,002.thm3 --timeout 60 --out R.json

Writes ``{"import_error": str | None, "statements": [{"id", "verdict", "seconds", "detail"}], "killer": id | None,
"numba_typing": bool, "timed_out": bool}`` to ``--out``.  Exit 0: every statement passed or skipped; 1: one failed
or errored; 3: the mutated module does not import.  Statements run through the runner's own ``run_statement`` (the
certificate's record and verdict), with ``shrink=False`` (the verdict, not a minimal instance, as ``--self-test``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback

#: a Numba typing or lowering error: the mutated kernel is not a program (reported as incompetent)
NUMBA_ERRORS = ("TypingError", "LoweringError", "UnsupportedError", "Failed in nopython mode pipeline")


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--module", required=True)
    p.add_argument("--ids", default="")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--timeouts", default="", help="per statement: id=seconds,... (overrides --timeout)")
    p.add_argument("--out", required=True)
    p.add_argument("--all", action="store_true")
    p.add_argument("--profile", default="ci")
    args = p.parse_args(argv)
    out: dict = {"import_error": None, "statements": [], "killer": None, "numba_typing": False, "timed_out": False}

    def write():
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(out, fh)

    try:
        importlib.import_module(args.module)
    except BaseException as exc:  # a mutant can raise anything at import (SystemExit included)
        out["import_error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-2000:]
        write()
        return 3
    ids = [s for s in args.ids.split(",") if s]
    per = dict(kv.split("=") for kv in args.timeouts.split(",") if kv)
    if ids:
        from refvi.verification.protocol.loading import load_implementation
        from refvi.verification.running import runner

        impl = load_implementation(None)
        statements = runner.load_statements()
        for sid in ids:
            st = statements.get(sid)
            if st is None:
                out["statements"].append({"id": sid, "verdict": "missing", "seconds": 0.0, "detail": ""})
                continue
            t0 = time.perf_counter()
            rec = runner.run_statement(st, impl, args.profile, shrink=False, timeout=float(per.get(sid, args.timeout)))
            detail = str(rec.get("detail") or "")
            row = {"id": sid, "verdict": rec["verdict"], "seconds": round(time.perf_counter() - t0, 3)}
            if rec["verdict"] in ("fail", "error"):
                row["detail"] = detail[:1500]
                if out["killer"] is None:
                    out["killer"] = sid
                    out["numba_typing"] = rec["verdict"] == "error" and any(e in detail for e in NUMBA_ERRORS)
                    out["timed_out"] = rec["verdict"] == "error" and "timed out" in detail
            out["statements"].append(row)
            write()
            if out["killer"] is not None and not args.all:
                break
    write()
    return 1 if out["killer"] is not None else 0


if __name__ == "__main__":
    sys.exit(main())
