"""Compare two certificates statement by statement and instance by instance (``--compare CERT.json`` or
``--compare refvi``).

Instances are deterministic (Hypothesis draws are derandomized by statement id, fixed instances are fixed), so two
certificates of the same selection and profile describe the same instances: an instance is named by its site and
index in the statement (``instances`` in a record: ``[site, index, outcome, worst slack]``).  The comparison lists
statements whose verdict, number of cases or number of declined instances differ, instances whose outcome differs
(ran / declined / fail / error), and the statements whose worst slack differs the most (relative to the larger
magnitude: two correct implementations differ only at rounding level).
"""

from __future__ import annotations

import math

#: slack differences below this (relative to the larger magnitude, or absolute below 1e-12) count as equal
SLACK_RTOL = 1e-6


def compare(cert: dict, other: dict) -> dict:
    """Differences of ``cert`` against ``other`` (the reference): see the module docstring."""
    mine = {r["id"]: r for r in cert.get("statements", [])}
    ref = {r["id"]: r for r in other.get("statements", [])}
    rows, instances, slacks = [], [], []
    for sid in sorted(set(mine) | set(ref)):
        a, b = mine.get(sid), ref.get(sid)
        if a is None or b is None:
            rows.append({"id": sid, "this": a["verdict"] if a else "absent", "other": b["verdict"] if b else "absent"})
            continue
        fields = {k: (a.get(k), b.get(k)) for k in ("verdict", "examples", "instances_skipped") if a.get(k) != b.get(k)}
        if fields:
            rows.append(
                {
                    "id": sid,
                    "this": a["verdict"],
                    "other": b["verdict"],
                    "differs": {k: list(v) for k, v in fields.items()},
                }
            )
        d = _slack_difference(a.get("worst_slack"), b.get("worst_slack"))
        if d is not None and d > SLACK_RTOL:
            slacks.append({"id": sid, "this": a.get("worst_slack"), "other": b.get("worst_slack"), "relative": d})
        ia = {(str(s), i): (o, w) for s, i, o, w in a.get("instances", [])}
        ib = {(str(s), i): (o, w) for s, i, o, w in b.get("instances", [])}
        for key in sorted(set(ia) | set(ib), key=lambda k: (k[0], k[1])):
            oa, ob = ia.get(key, ("absent", None))[0], ib.get(key, ("absent", None))[0]
            if oa != ob:
                instances.append({"id": sid, "site": key[0], "index": key[1], "this": oa, "other": ob})
    slacks.sort(key=lambda r: -r["relative"])
    return {
        "other": {
            "implementation": other.get("implementation"),
            "profile": other.get("profile"),
            "refvi_version": other.get("refvi_version"),
        },
        "statements": rows,
        "instances": instances,
        "slacks": slacks,
        "same_selection": sorted(mine) == sorted(ref),
        "same_profile": cert.get("profile") == other.get("profile"),
    }


def format_comparison(diff: dict, limit: int = 30) -> str:
    other = diff["other"]
    lines = [f"comparison with {other['implementation']} (profile {other['profile']}, refvi {other['refvi_version']}):"]
    if not diff["same_profile"]:
        lines.append("  note: the profiles differ, so the instances differ")
    if not diff["same_selection"]:
        lines.append("  note: the selections differ (statements absent from one side are listed)")
    lines.append(
        f"  {len(diff['statements'])} statement(s) differ in verdict, cases or declines; "
        f"{len(diff['instances'])} instance(s) differ in outcome; {len(diff['slacks'])} worst slack(s) "
        f"differ by more than {SLACK_RTOL:g} (relative)"
    )
    for r in diff["statements"][:limit]:
        extra = "".join(f"; {k}: {v[0]} vs {v[1]}" for k, v in r.get("differs", {}).items() if k != "verdict")
        lines.append(f"  {r['id']:<28} {r['this']:<6} vs {r['other']:<6}{extra}")
    for r in diff["instances"][:limit]:
        lines.append(f"  {r['id']:<28} instance site {r['site']} #{r['index']}: {r['this']} vs {r['other']}")
    for r in diff["slacks"][: min(limit, 10)]:
        lines.append(f"  {r['id']:<28} worst slack {_g(r['this'])} vs {_g(r['other'])} (relative {r['relative']:.2g})")
    return "\n".join(lines)


def _g(slack) -> str:
    """A worst slack as printed: ``none`` for a statement that recorded none (a skip, an oracle-only check)."""
    return "none" if slack is None else f"{slack:.6g}"


def _slack_difference(a, b) -> float | None:
    if a is None or b is None:
        return None if a is b else math.inf
    if a == b:
        return 0.0
    scale = max(abs(a), abs(b))
    if scale < 1e-12:
        return 0.0
    return abs(a - b) / scale
