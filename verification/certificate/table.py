"""The table the runner prints: one row per statement (:func:`format_row`, :data:`HEADER`), the line under a row
that says why (:func:`row_note`), the loosest bound (:func:`weakest_check`) and the one-line summary
(:func:`summary`)."""

from __future__ import annotations

from refvi.verification.certificate.record import implementation_passes


def format_row(rec: dict) -> str:
    """One line of the table; a skipped row shows no cases, slack or tightness (nothing of it ran)."""
    skip = rec["verdict"] == "skip"
    slack = "" if skip or rec["worst_slack"] is None else f"{rec['worst_slack']:.3g}"
    err = rec["erratum"] or ""
    verdict = rec["verdict"] + ("*" if rec.get("scope") == "oracle-only" and rec["verdict"] == "pass" else "")
    weakest = weakest_check(rec)
    tight = "" if skip or weakest is None else f"{weakest[1]:.2g}" + ("~" if weakest[2] else "")
    cases = "" if skip else str(rec["examples"])
    declined = str(rec.get("instances_skipped") or "") if not skip else ""
    return (
        f"{rec['id']:<28} {verdict:<6} {rec['kind']:<11} {err:<8} {cases:>6} {declined:>8} "
        f"{slack:>11} {tight:>6} {rec['seconds']:>8.2f}  {rec['title'][:60]}"
    )


def row_note(rec: dict) -> str | None:
    """The line under a row that says why: the failure, the skip reason, or the declined instances' reasons."""
    if rec["verdict"] in ("fail", "error"):
        return f"    -> {rec.get('detail', '')[:500]}"
    if rec["verdict"] == "skip" or rec.get("instances_skipped"):
        return f"    ~ {rec.get('detail') or 'no reason recorded'}"[:300]
    return None


def weakest_check(rec: dict) -> tuple[str, float, bool] | None:
    """(name, tightness, explained) of the statement's loosest bound: each bound's best lhs / rhs over the instances,
    the smallest of those (a bound whose catalogue row explains why it cannot come within 10x is marked explained);
    None when the statement has no bound with a ratio."""
    rated = [
        (n, c["tightness"], "loose" in c) for n, c in (rec.get("checks") or {}).items() if c["tightness"] is not None
    ]
    return min(rated, key=lambda x: x[1]) if rated else None


#: the table's columns (README.md and docs/conformance.md): ``cases`` = instances and probes checked; ``declined`` =
#: instances declined (outside the declared capabilities or needing a missing method); ``worst slack`` = the smallest
#: slack over the statement's evidence (inequality: rhs - lhs, >= 0 before tolerance; equality: -max|lhs - rhs|, so
#: <= 0 and 0 is exact; a pass may be negative within the stated tolerance); ``tight`` = the tightness of the
#: statement's loosest bound: each bound's largest lhs / rhs over the instances (1 = attained; 0.1 = 10x headroom),
#: the smallest over its bounds, ``~`` when the catalogue says why that bound cannot come closer
HEADER = (
    f"{'statement':<28} {'verdict':<6} {'kind':<11} {'erratum':<8} {'cases':>6} {'declined':>8} "
    f"{'worst slack':>11} {'tight':>6} {'seconds':>8}  title"
)


def summary(cert: dict) -> str:
    """The line under the table: verdicts counted, what exercised the implementation, declines, and whether the
    run is incomplete."""
    counts: dict[str, int] = {}
    for rec in cert["statements"]:
        counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
    parts = [f"{counts.get(k, 0)} {k}" for k in ("pass", "fail", "error", "skip")]
    oracle = sum(1 for r in cert["statements"] if r.get("scope") == "oracle-only")  # a pass* for refvi, else a skip
    own = implementation_passes(cert)
    declined = sum(int(r.get("instances_skipped") or 0) for r in cert["statements"])
    text = (
        f"{len(cert['statements'])} statements: "
        + ", ".join(parts)
        + f" ({own} exercised the implementation, {oracle} oracle-only; {declined} instance(s) declined)"
        f"  (profile {cert['profile']}, implementation {cert['implementation']})"
    )
    if not cert.get("complete", True):
        text += f"\nINCOMPLETE: {len(cert.get('not_run', []))} selected statement(s) not run"
    return text
