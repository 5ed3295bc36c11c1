"""The compatibility table: which implementation computes which result of the five papers correctly.

Five implementations are certified in the ``ci`` profile (``COLUMNS``); each certificate is slimmed
(:func:`slim`) and committed under ``docs/certificates/<key>.json``, and ``docs/compatibility.md`` is rendered from
those files alone (:func:`render`), so ``tests/verification/test_compatibility.py`` keeps the page current without
running anything::

    python -m refvi.verification.compatibility                 # re-render docs/compatibility.md from the certificates
    python -m refvi.verification.compatibility --check         # exit 1 when the page is not what they render
    python -m refvi.verification.compatibility --run --workers 2   # run the five certificates, then render
    python -m refvi.verification.compatibility --run --only pymc   # rerun one column (the others are kept)
    python -m refvi.verification.compatibility --import jax cert.json 659 --note jax "ran beside another job"
                                                                  # slim a certificate you ran by hand (ci profile)

A cell is derived from one statement record (:func:`cell`; the rules are the page's legend, ``LEGEND``).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from refvi.verification.coverage import PAPERS, paper_of


@dataclass(frozen=True)
class Column:
    """One implementation of the table: its certificate file ``key``.json, its heading, the ``--impl`` it runs
    (None: refvi itself) and the distributions whose versions its certificate states."""

    key: str
    label: str
    impl: str | None
    libraries: tuple[str, ...]


COLUMNS = (
    Column("refvi", "refvi", None, ("numpy", "numba", "scipy")),
    Column("numpy", "NumPy example", "refvi.verification.examples.numpy_adapter:IMPL", ("numpy", "scipy")),
    Column("jax", "JAX/NumPyro", "refvi.verification.examples.jax_adapter:IMPL", ("jax", "jaxlib", "numpyro")),
    Column("blackjax", "BlackJAX", "refvi.verification.examples.blackjax_adapter:IMPL", ("jax", "jaxlib", "blackjax")),
    Column("pymc", "PyMC", "refvi.verification.examples.pymc_adapter:IMPL", ("pymc", "pytensor")),
)

#: every distribution whose version a certificate records (as installed where it ran)
LIBRARIES = ("numpy", "numba", "scipy", "jax", "jaxlib", "numpyro", "blackjax", "pymc", "pytensor")

ROOT = Path(__file__).resolve().parent.parent
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

#: what each fail or error of an outside implementation means, by (column, statement id): which side is wrong
#: (the library, the adapter, the paper, refvi) and the smallest reproducer; a fail without one is shown as
#: unexplained (issue 30, item 3) and fails tests/verification/test_compatibility.py
FINDINGS: dict[tuple[str, str], str] = {
    ("pymc", "000.claim-target-models"): (
        "PyMC is wrong (PyMC 5.28.5, PyTensor 2.38.3): the gradient of a `Bernoulli(logit_p=x)` observation of 0 is "
        "NaN once the logit reaches 37, where the right value is -sigmoid(x) = -1 (the log density itself is right: "
        "PyTensor rewrites it to the stable form, but the gradient is taken of the unstable one and becomes 0/0 once "
        "sigmoid(x) rounds to 1). Smallest reproducer: `with pm.Model() as m: x = pm.Flat('x'); "
        "pm.Bernoulli('y', logit_p=x, observed=0)`, then `m.logp_dlogp_function()` at x = 37 returns a NaN "
        "gradient (x = 36 is right). Workaround: `pm.Potential('y', -pm.math.log1pexp(-(2*y - 1)*eta))`. Written up "
        "in docs/pymc-findings.md; a test pins the reproducer."
    ),
}
# (2026-11-26: the JAX/NumPyro and BlackJAX adapters returned NaN on 000.claim-bad-input's NaN base sample and
# singular C; JAX does not check values inside traced code. Their adapters now refuse such input themselves
# (examples/jax_adapter.refuse_bad_input), and both pass.)

_LEGEND_ROWS = (
    ("`✓`", "pass: every instance ran on the implementation and passed"),
    (
        "`✓ n`",
        "pass, with *n* instances declined (outside the declared capabilities, or needing a method the "
        "implementation lacks); the note gives the reasons. Declines marked *optional* (refvi's affine "
        "frames) never count against the paper's verdict",
    ),
    ("`✗` / `E`", "fail / error (the note gives the detail; every one is listed under *Fails and errors*)"),
    (
        "`⊘ n`",
        "declined: skipped because all *n* instances it reached were declined and at least one reason is "
        "a declared capability (a structure, a target kind); the note gives the reasons",
    ),
    (
        "`—`",
        "not implemented: skipped because every declined instance needed a protocol method the "
        "implementation does not have (the methods are listed under the paper's table)",
    ),
    ("`skip`", "skipped for another reason (the note says why)"),
    (
        "`o` / `o✓`",
        "oracle-only: a fact of the paper checked by independent oracles, which exercises no "
        "implementation and counts for none; it runs once, in refvi's certificate (`o✓`: it held)",
    ),
    ("`deep`", "runs only in the `deep` profile (not counted in `ci`)"),
    ("`?`", "the statement is not in this certificate: the certificate is stale, rerun `--run`"),
    ("not run", "the whole column: the certificate was not produced (the reason is in the implementations table)"),
)

LEGEND = (
    "| cell | meaning (from the statement's record in that implementation's certificate) |\n|---|---|\n"
    + "".join(f"| {c} | {m} |\n" for c, m in _LEGEND_ROWS)
    + """\

The verdict row is the certificate's per-paper verdict (`docs/conformance.md`, *Certified: the per-paper verdict*):
**certified** (every implementation-facing statement of the paper ran, passed and declined no instance except
optional ones), *partial* (nothing failed, something did not run), **failed** (a fail or an error); with the passes
out of the paper's implementation-facing statements in this profile.
"""
)


# ---------------------------------------------------------------------------------------------- slim certificates


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


# ------------------------------------------------------------------------------------------------------ the cells

_LACKS = re.compile(r"^(optional: )?lacks (method|sub-adapter) ")


def cell(rec: dict | None, column_key: str) -> tuple[str, str | None]:
    """The cell of one statement record and the text of its note (None: no note); see ``LEGEND``."""
    if rec is None:
        return "?", None
    verdict = rec["verdict"]
    n = int(rec.get("instances_skipped") or 0)
    reasons = sorted(rec.get("declined") or {}, key=lambda r: -(rec["declined"][r]))
    if rec.get("other_profile"):
        return "deep", None
    if rec.get("scope") == "oracle-only":
        if verdict == "skip":
            return ("o", None) if column_key != "refvi" else ("o", _detail(rec))
        return {"pass": "o✓", "fail": "o✗", "error": "oE"}[verdict], (None if verdict == "pass" else _detail(rec))
    if verdict == "fail":
        return "✗", _detail(rec)
    if verdict == "error":
        return "E", _detail(rec)
    if verdict == "pass":
        return ("✓", None) if n == 0 else (f"✓ {n}", _reasons(rec, reasons))
    if reasons and all(_LACKS.match(r) for r in reasons):
        return "—", None
    if reasons:
        return f"⊘ {n}", _reasons(rec, reasons)
    return "skip", _detail(rec)


def _reasons(rec: dict, reasons: list[str]) -> str:
    counts = rec["declined"]
    return (
        "declined: "
        + "; ".join(f"{counts[r]} × {r[:200]}" for r in reasons[:4])
        + (f"; and {len(reasons) - 4} other reason(s)" if len(reasons) > 4 else "")
    )


def _detail(rec: dict) -> str:
    text = " ".join((rec.get("detail") or "no detail recorded").split())
    return text if len(text) <= 400 else text[:399] + "…"


_SPECIAL = re.compile(r"([\\`*_{}\[\]<>$|#~])")


def md(text: str) -> str:
    """Plain text safe inside a MyST table cell (no emphasis, math, links or cell breaks)."""
    return _SPECIAL.sub(r"\\\1", text.replace("\n", " "))


def _anchor(title: str) -> str:
    """The anchor MyST gives the heading ``<seed>: <title>`` after the seed (``myst_heading_anchors``)."""
    return re.sub(r"[^\w\- ]", "", title.lower()).strip().replace(" ", "-")


def _short_title(title: str, limit: int = 72) -> str:
    return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"


# -------------------------------------------------------------------------------------------------------- the page


def render(certs: dict[str, dict], statements: dict) -> str:
    """``docs/compatibility.md`` from the slim certificates (by column key) and the statement registry
    (``runner.load_statements()``): a deterministic function of the two (no clock, no imports of adapters)."""
    from refvi.verification.runner import _sort_key

    notes: dict[str, int] = {}

    def note(text: str | None) -> str:
        if text is None:
            return ""
        if text not in notes:
            notes[text] = len(notes) + 1
        return f" [{notes[text]}]"

    records = {key: {r["id"]: r for r in cert.get("statements", [])} for key, cert in certs.items()}
    ran = [c for c in COLUMNS if certs.get(c.key, {}).get("status") == "run"]
    out = [
        "<!-- generated by `python -m refvi.verification.compatibility` from docs/certificates/*.json: "
        "do not edit by hand -->",
        "",
        "# Compatibility: which implementation computes which result correctly",
        "",
        "Every numbered result of the five papers is an executable statement (`docs/conformance.md`). This page "
        "puts the certificates of five implementations side by side: refvi itself, the plain-NumPy example written "
        "from the papers, JAX/NumPyro, BlackJAX and PyMC (the adapters are described in "
        "[peer-adapters.md](peer-adapters.md)). Each column is one `python -m refvi.verification --profile ci "
        "--workers 2` run, committed in slim form under `docs/certificates/`; "
        "`python -m refvi.verification.compatibility --run` reruns them and regenerates this page, and "
        "`tests/verification/test_compatibility.py` fails when the page is not what the committed certificates "
        "render.",
        "",
        "## The implementations",
        "",
        "| column | implementation | libraries | refvi | date | wall time | pass | fail / error | papers certified |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for column in COLUMNS:
        cert = certs.get(column.key)
        if cert is None:
            out.append(f"| {column.label} | not run: no certificate in docs/certificates | | | | | | | |")
            continue
        libs = ", ".join(f"{lib} {cert['libraries'].get(lib, '?')}" for lib in column.libraries)
        if cert.get("status") != "run":
            out.append(
                f"| {column.label} | not run: {md(cert.get('reason', ''))} | {libs} | {cert['refvi_version']} "
                f"| {cert['date']} | | | | |"
            )
            continue
        recs = cert["statements"]
        passes = sum(r["verdict"] == "pass" and r.get("scope") != "oracle-only" for r in recs)
        bad = sum(r["verdict"] in ("fail", "error") for r in recs)
        certified = [s for s, p in cert["papers"].items() if p["verdict"] == "certified"]
        impl = f"`{cert['impl']}`" if cert.get("impl") else "refvi (default)"
        wall = f"{cert['seconds']:.0f} s" + (f" ({md(cert['note'])})" if cert.get("note") else "")
        out.append(
            f"| {column.label} | {impl} | {libs} | {cert['refvi_version']} | {cert['date']} "
            f"| {wall} | {passes} | {bad} | {', '.join(certified) or 'none'} |"
        )
    machines = sorted({certs[c.key]["machine"] for c in ran})
    out += [
        "",
        f"Profile `ci`; machine: {'; '.join(machines) or 'none'}. Wall time is the whole certificate run "
        "(`--workers 2`, all statements, Numba and XLA compilation included) on a machine shared with other jobs, "
        "so it varies by tens of percent from run to run. *pass* counts the statements that exercised the "
        "implementation and passed (oracle-only checks excluded).",
        "",
        "## Legend",
        "",
        LEGEND,
    ]

    def verdict(column: Column, seed: str) -> str:
        cert = certs.get(column.key)
        paper = (cert or {}).get("papers", {}).get(seed) if (cert or {}).get("status") == "run" else None
        if paper is None:
            return "not run"
        v, s = paper["verdict"], paper["statements"]
        return (f"**{v}**" if v in ("certified", "failed") else f"*{v}*") + f" {s['pass']}/{s['total']}"

    seeds = sorted({paper_of(sid) for sid in statements})
    out += [
        "## Verdicts at a glance",
        "",
        "| paper | " + " | ".join(c.label for c in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    out += [
        f"| [{seed}](#{seed}-{_anchor(PAPERS.get(seed, seed))}) | "
        + " | ".join(verdict(c, seed) for c in COLUMNS)
        + " |"
        for seed in seeds
    ]
    out.append("")

    header = "| statement | result | " + " | ".join(c.label for c in COLUMNS) + " |"
    rule = "|---|---|" + "---|" * len(COLUMNS)
    by_paper: dict[str, list] = {}
    for sid in sorted(statements, key=_sort_key):
        by_paper.setdefault(paper_of(sid), []).append(statements[sid])
    for seed, group in by_paper.items():
        out += [f"## {seed}: {md(PAPERS.get(seed, seed))}", "", header, rule]
        first_note = len(notes) + 1
        for st in group:
            cells = []
            for column in COLUMNS:
                cert = certs.get(column.key)
                if cert is None or cert.get("status") != "run":
                    cells.append("not run")
                    continue
                symbol, text = cell(records[column.key].get(st.id), column.key)
                cells.append(symbol + note(text))
            flag = f" ({st.erratum})" if st.erratum else ""
            out.append(f"| `{st.id}` | {md(_short_title(st.title))}{flag} | " + " | ".join(cells) + " |")
        out.append(
            "| **verdict** | per-paper verdict, passes / statements | "
            + " | ".join(verdict(c, seed) for c in COLUMNS)
            + " |"
        )
        out.append("")
        missing = []
        for column in ran:
            absent = certs[column.key]["papers"].get(seed, {}).get("methods", {}).get("missing", [])
            if absent:
                missing.append(f"{column.label}: {', '.join(f'`{m}`' for m in absent)}")
        if missing:
            out += ["Protocol methods not implemented: " + "; ".join(missing) + ".", ""]
        out += _value_table(seed, certs, ran)
        mine = [(k, t) for t, k in notes.items() if k >= first_note]
        if mine:
            out += ["Notes:", ""] + [f"{k}. {md(t)}" for k, t in sorted(mine)] + [""]

    out += ["## Fails and errors", ""]
    bad_rows = [(c, r) for c in ran for r in certs[c.key]["statements"] if r["verdict"] in ("fail", "error")]
    if not bad_rows:
        out += [
            "No implementation fails or errors on any statement in these certificates: where a statement ran on "
            "an outside library, the library computed what the paper says, within the statement's stated "
            "tolerance.",
            "",
        ]
    for column, rec in bad_rows:
        finding = FINDINGS.get((column.key, rec["id"]))
        out += [
            f"* **{column.label}**, `{rec['id']}` ({rec['verdict']}): {md(_detail(rec))}",
            f"  - {finding}"
            if finding
            else "  - **unexplained**: no finding recorded yet (`FINDINGS` in `verification/compatibility.py`)",
        ]
    if bad_rows:
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _value_table(seed: str, certs: dict[str, dict], ran: list[Column]) -> list[str]:
    """Per protocol method of the paper, per implementation: the calls whose returned values a statement compared
    with an oracle or a recomputation, of the calls made (``values`` of the per-paper block)."""
    from refvi.verification.coverage import MIN_CHECKED_CALLS

    values = {c.key: certs[c.key]["papers"].get(seed, {}).get("methods", {}).get("values") for c in ran}
    methods = sorted({m for v in values.values() if v for m in v})
    if not methods:
        return []

    def cell(column: Column, method: str) -> str:
        v = values[column.key]
        if v is None:
            return "—"
        if method in certs[column.key]["papers"].get(seed, {}).get("methods", {}).get("missing", []):
            return "missing"
        row = v.get(method)
        if row is None:
            return "not called"
        text = f"{row['checked']} / {row['calls']}"
        return text if row["checked"] >= MIN_CHECKED_CALLS else f"**{text}** (not value-checked)"

    out = [
        f"Value coverage: per protocol method, the calls whose returned values a statement compared with an oracle "
        f"or a recomputation, of the calls made (a paper is certified only if every method offered has at least "
        f"{MIN_CHECKED_CALLS}).",
        "",
        "| method | " + " | ".join(c.label for c in ran) + " |",
        "|---|" + "---|" * len(ran),
    ]
    out += [f"| `{m}` | " + " | ".join(cell(c, m) for c in ran) + " |" for m in methods]
    return out + [""]


# ------------------------------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m refvi.verification.compatibility",
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
    from refvi.verification.runner import load_statements

    page = render(load_certificates(folder), load_statements())
    target = args.docs / "compatibility.md"
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != page:
            print(
                f"{target} is not what docs/certificates renders: run python -m refvi.verification.compatibility",
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
