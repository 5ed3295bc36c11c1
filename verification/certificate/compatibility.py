"""The compatibility table: which implementation computes which result of the five papers correctly.

Five implementations are certified in the ``ci`` profile (``COLUMNS``); each certificate is slimmed
(:func:`slim`) and committed under ``docs/certificates/<key>.json``, and ``docs/compatibility.md`` is rendered from
those files alone (:func:`.render`), so ``tests/verification/test_compatibility.py`` keeps the page current without
running anything::

    python -m refvi.verification.certificate.compatibility              # re-render docs/compatibility.md
    python -m refvi.verification.certificate.compatibility --check      # exit 1 when the page is not what they render
    python -m refvi.verification.certificate.compatibility --run --workers 2   # run the five certificates, render
    python -m refvi.verification.certificate.compatibility --run --only pymc   # rerun one column (others kept)
    python -m refvi.verification.certificate.compatibility --import jax cert.json 659 --note jax "ran beside a job"
                                                                  # slim a certificate you ran by hand (ci profile)

A cell is derived from one statement record (:func:`.cell`; the rules are the page's legend, ``LEGEND``).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from refvi.verification.certificate.compatibility_page import (  # noqa: F401  (re-exported)
    COLUMNS,
    FINDINGS,
    LEGEND,
    Column,
    cell,
    md,
    render,
)

#: every distribution whose version a certificate records (as installed where it ran)
LIBRARIES = ("numpy", "numba", "scipy", "jax", "jaxlib", "numpyro", "blackjax", "pymc", "pytensor")

ROOT = Path(__file__).resolve().parents[2]

DOCS = ROOT / "docs"

PROFILE = "ci"

#: the statement fields a slim certificate keeps (the full certificate has instances, calls, reproducers, ...)
KEPT = (
    "id",
    "verdict",
    "scope",
    "examples",
    "worst_slack",
    "instances_skipped",
    "declined",
    "declined_optional",
    "methods",
    "detail",
    "other_profile",
    "values",
    "trusted",
    "given",
    "checks",
)

DETAIL_CHARS = 600


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str]:
    """The installed version of each distribution, or ``"not installed"``."""
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> str:
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def slim(cert: dict, column: Column, seconds: float, workers: int, versions: dict[str, str], date: str) -> dict:
    """The committed form of a full certificate: per statement only the fields the table reads (:data:`KEPT`,
    ``detail`` cut to ``DETAIL_CHARS``), the per-paper block, and where, when and how long it ran."""
    if not isinstance(cert.get("statements"), list) or "papers" not in cert:
        raise ValueError(f"{column.key}: not a refvi certificate with per-paper verdicts (no statements / papers)")
    statements = []
    for rec in cert["statements"]:
        kept = {k: rec[k] for k in KEPT if k in rec}
        if isinstance(kept.get("detail"), str):
            kept["detail"] = kept["detail"][:DETAIL_CHARS]
        statements.append(kept)
    return {
        "column": column.key,
        "implementation": cert["implementation"],
        "impl": column.impl,
        "status": "run",
        "refvi_version": cert["refvi_version"],
        "profile": cert["profile"],
        "complete": cert.get("complete", True),
        "libraries": versions,
        "date": date,
        "machine": machine(),
        "workers": workers,
        "seconds": round(seconds, 1),
        "papers": cert["papers"],
        "statements": statements,
    }


def not_run(column: Column, reason: str, versions: dict[str, str], date: str) -> dict:
    """The committed record of a column whose certificate could not be produced (its adapter does not import)."""
    import refvi

    return {
        "column": column.key,
        "implementation": None,
        "impl": column.impl,
        "status": "not run",
        "reason": reason,
        "refvi_version": refvi.__version__,
        "profile": PROFILE,
        "libraries": versions,
        "date": date,
        "machine": machine(),
    }


def _import_error(module: str) -> str | None:
    """None when ``module`` imports in a fresh interpreter, else the last line of the error."""
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode == 0:
        return None
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def run_column(column: Column, workers: int) -> dict:
    """Run one implementation's certificate (a fresh ``python -m refvi.verification`` in the repository root, so
    adapters that change process-wide settings, like JAX's x64 mode, do not leak) and return its slim form."""
    versions = library_versions()
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    if column.impl is not None:
        why = _import_error(column.impl.partition(":")[0])
        if why is not None:
            return not_run(column, f"the adapter does not import: {why}", versions, date)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cert.json"
        cmd = [
            sys.executable,
            "-m",
            "refvi.verification",
            "--profile",
            PROFILE,
            "--workers",
            str(workers),
            "--no-progress",
            "--json",
            str(path),
        ] + (["--impl", column.impl] if column.impl else [])
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        seconds = time.perf_counter() - t0
        if not path.exists():
            tail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            return not_run(column, f"the run wrote no certificate: {tail}", versions, date)
        cert = json.loads(path.read_text(encoding="utf-8"))
    return slim(cert, column, seconds, workers, versions, date)


def load_certificates(folder: Path) -> dict[str, dict]:
    """The committed slim certificates, by column key (a missing file is a column that was never run)."""
    out = {}
    for column in COLUMNS:
        path = folder / f"{column.key}.json"
        if path.exists():
            out[column.key] = json.loads(path.read_text(encoding="utf-8"))
    return out


def write_json(data: dict, path: Path) -> None:
    from refvi._atomic import write_text

    write_text(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m refvi.verification.certificate.compatibility",
        description="render docs/compatibility.md from docs/certificates/*.json "
        "(with --run: produce the certificates first)",
    )
    p.add_argument("--run", action="store_true", help="run the certificates (profile ci) and write their slim copies")
    p.add_argument(
        "--only",
        nargs="+",
        metavar="COLUMN",
        choices=[c.key for c in COLUMNS],
        help="with --run: only these columns (the others keep their committed certificates)",
    )
    p.add_argument("--workers", type=int, default=2, help="with --run: workers per certificate (default 2)")
    p.add_argument(
        "--import",
        nargs=3,
        action="append",
        default=[],
        dest="imports",
        metavar=("COLUMN", "CERT", "SECONDS"),
        help="slim a full certificate you ran yourself (profile ci, --workers as given) into COLUMN, "
        "with its measured wall time",
    )
    p.add_argument(
        "--note",
        nargs=2,
        action="append",
        default=[],
        metavar=("COLUMN", "TEXT"),
        help="with --run / --import: how that column's wall time was measured (shown beside it)",
    )
    p.add_argument("--docs", type=Path, default=DOCS, help="the docs folder (default: this checkout's docs/)")
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when the page differs from what the certificates render (writes nothing)",
    )
    args = p.parse_args(argv)
    if args.workers < 1:
        print(f"error: --workers must be >= 1, got {args.workers}", file=sys.stderr)
        return 2
    folder = args.docs / "certificates"
    if args.run:
        folder.mkdir(parents=True, exist_ok=True)
        for column in COLUMNS:
            if args.only and column.key not in args.only:
                continue
            print(f"{column.label}: running ...", flush=True)
            data = run_column(column, args.workers)
            notes = dict(args.note)
            if column.key in notes:
                data["note"] = notes[column.key]
            write_json(data, folder / f"{column.key}.json")
            print(
                f"{column.label}: {data['status']}"
                + (f" in {data['seconds']:.0f} s" if data["status"] == "run" else f" ({data['reason']})"),
                flush=True,
            )
    for key, path, seconds in args.imports:
        by_key = {c.key: c for c in COLUMNS}
        if key not in by_key:
            print(f"error: --import: no column {key!r} (one of {list(by_key)})", file=sys.stderr)
            return 2
        column = by_key[key]
        full = json.loads(Path(path).read_text(encoding="utf-8"))
        if full.get("profile") != PROFILE:
            print(f"error: --import {path}: profile {full.get('profile')!r}, the table is {PROFILE!r}", file=sys.stderr)
            return 2
        # the run's start, as --run records it: the file's time less the wall time
        stamp = datetime.datetime.fromtimestamp(Path(path).stat().st_mtime - float(seconds), datetime.UTC)
        folder.mkdir(parents=True, exist_ok=True)
        data = slim(
            full, by_key[key], float(seconds), args.workers, library_versions(), stamp.strftime("%Y-%m-%d %H:%M UTC")
        )
        if key in dict(args.note):
            data["note"] = dict(args.note)[key]
        write_json(data, folder / f"{key}.json")
    from refvi.verification.running.runner import load_statements

    page = render(load_certificates(folder), load_statements())
    target = args.docs / "compatibility.md"
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != page:
            print(
                f"{target} is not what docs/certificates renders: "
                "run python -m refvi.verification.certificate.compatibility",
                file=sys.stderr,
            )
            return 1
        return 0
    from refvi._atomic import write_text

    write_text(target, page)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
