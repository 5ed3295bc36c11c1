"""The compatibility page, rendered from the slim certificates alone (:func:`render`): the five columns
(``COLUMNS``), one cell per statement and implementation (:func:`cell`), the legend, the known findings behind
failing cells (:data:`FINDINGS`) and the value-coverage tables.  :mod:`refvi.verification.certificate.compatibility`
runs the columns and writes the page."""

from __future__ import annotations

import re
from dataclasses import dataclass

from refvi.verification.certificate.coverage import PAPERS, paper_of


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


def render(certs: dict[str, dict], statements: dict) -> str:
    """``docs/compatibility.md`` from the slim certificates (by column key) and the statement registry
    (``runner.load_statements()``): a deterministic function of the two (no clock, no imports of adapters)."""
    from refvi.verification.running.runner import _sort_key

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
        "<!-- generated by `python -m refvi.verification.certificate.compatibility` from docs/certificates/*.json: "
        "do not edit by hand -->",
        "",
        "# Compatibility: which implementation computes which result correctly",
        "",
        "Every numbered result of the five papers is an executable statement (`docs/conformance.md`). This page "
        "puts the certificates of five implementations side by side: refvi itself, the plain-NumPy example written "
        "from the papers, JAX/NumPyro, BlackJAX and PyMC (the adapters are described in "
        "[peer-adapters.md](peer-adapters.md)). Each column is one `python -m refvi.verification --profile ci "
        "--workers 2` run, committed in slim form under `docs/certificates/`; "
        "`python -m refvi.verification.certificate.compatibility --run` reruns them and regenerates this page, and "
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
            else "  - **unexplained**: no finding recorded yet "
            "(`FINDINGS` in `verification/certificate/compatibility.py`)",
        ]
    if bad_rows:
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _value_table(seed: str, certs: dict[str, dict], ran: list[Column]) -> list[str]:
    """Per protocol method of the paper, per implementation: the calls whose returned values a statement compared
    with an oracle or a recomputation, of the calls made (``values`` of the per-paper block)."""
    from refvi.verification.certificate.coverage import MIN_CHECKED_CALLS

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
