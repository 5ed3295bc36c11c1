"""Per-paper coverage and verdict of a certificate: what "certified against paper 000" means.

For each paper (seed) with at least one selected statement the certificate carries a record (``papers`` in the
JSON, the last block of the table):

``verdict``
    ``certified``: every *implementation-facing* statement of the paper that runs in this profile was selected, ran,
    passed, and declined no instance (declines of an optional feature alone, refvi's affine frames, do not count),
    and every protocol method of the paper the implementation offers was *value-checked* (its returned values
    compared with an oracle or a recomputation, :mod:`refvi.verification.statement.provenance`) on at least
    :data:`MIN_CHECKED_CALLS` calls;
    ``failed``: at least one of the paper's statements failed or errored;
    ``partial``: neither (the record's ``missing`` says what is missing: statements skipped with their reasons,
    statements with declined instances, statements not selected or not run, protocol methods absent).
``statements``
    counts of the paper's statements by verdict (``pass``, ``fail``, ``error``, ``skip``) among those that ran,
    ``total`` (implementation-facing statements of the paper in this profile), ``selected``, ``not_run`` (selected
    but not run: an interrupted or ``-x`` run), ``other_profile`` (statements that run only in another profile,
    e.g. 003.thm6 in ``deep``: listed, never counted against the verdict) and ``oracle_only`` (checks of the paper
    alone, which never count for or against an implementation).
``instances``
    ``ran`` (instances and probes checked), ``declined`` (outside the declared capabilities, or needing a method
    the implementation lacks) and ``declined_optional`` (of those, declined for an optional feature only: refvi's
    affine frames, preconditioning rather than a paper result; they never count against the verdict and are listed
    under ``optional``), summed over the paper's statements.
``methods``
    the protocol methods the paper's statements use, split into ``implemented`` and ``missing`` on the object under
    test (by name; a sub-adapter's methods are dotted: ``online.run``), and ``values``: per method called, its
    ``calls``, the calls whose returned values were ``checked``, ``used`` only (reached evidence unchecked) or were
    bad-input ``probes``, and the ``statements`` that checked it.  A method offered and called but checked on fewer
    than :data:`MIN_CHECKED_CALLS` calls is listed in ``missing`` ("not value-checked").
"""

from __future__ import annotations

from collections.abc import Iterable

from refvi.verification.protocol.capabilities import OPTIONAL_METHODS

PAPERS = {
    "000": "Domke, Garrigos & Gower: provable convergence guarantees for black-box VI",
    "001": "Locatello et al.: boosting VI, an optimization perspective",
    "002": "Domke: provable smoothness guarantees for black-box VI",
    "003": "Cherief-Abdellatif, Alquier & Khan: a generalization bound for online VI",
    "004": "Wu & Gardner: understanding stochastic natural-gradient VI",
}

VERDICTS = ("certified", "partial", "failed")

#: value-checked calls a method needs for its paper to be certified: more than one instance, so a wrong constant
#: or a wrong branch shows on at least one of them
MIN_CHECKED_CALLS = 3


def paper_of(sid: str) -> str:
    return sid.partition(".")[0]


def has_method(impl, dotted: str) -> bool:
    """Whether ``impl`` offers the protocol method ``dotted`` (``energy``, ``online.run``)."""
    obj = impl
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # a property that raises, a missing attribute: not offered
            return False
        if obj is None:
            return False
    return callable(obj)


def papers(records: Iterable[dict], statements: dict, profile: str, impl, not_run: Iterable[str] = ()) -> dict:
    """The ``papers`` block of a certificate from its statement records (see the module docstring)."""
    records = list(records)
    by_id = {r["id"]: r for r in records}
    pending = set(not_run)
    seeds = sorted({paper_of(r["id"]) for r in records} | {paper_of(s) for s in pending})
    out = {}
    for seed in seeds:
        mine = [st for sid, st in statements.items() if paper_of(sid) == seed]
        facing = [st for st in mine if not st.oracle_only and profile in st.profiles]
        other = sorted(st.id for st in mine if profile not in st.profiles)
        oracle = sorted(st.id for st in mine if st.oracle_only)
        counts = {"pass": 0, "fail": 0, "error": 0, "skip": 0}
        ran = declined = optional_declined = 0
        missing: list[str] = []
        optional: list[str] = []
        not_selected = []
        for st in sorted(facing, key=lambda s: s.id):
            rec = by_id.get(st.id)
            if rec is None:
                if st.id not in pending:  # a pending one is listed below as not run
                    not_selected.append(st.id)
                continue
            counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
            if rec.get("scope") == "oracle-only":
                continue
            ran += int(rec.get("examples", 0))
            n_declined = int(rec.get("instances_skipped", 0))
            n_optional = int(rec.get("declined_optional", 0))
            declined += n_declined
            optional_declined += n_optional
            only_optional = n_declined > 0 and n_optional == n_declined
            if rec["verdict"] == "skip":
                (optional if only_optional else missing).append(f"{st.id} skipped: {rec.get('detail', '')[:200]}")
            elif rec["verdict"] == "pass" and n_declined:
                (optional if only_optional else missing).append(f"{st.id}: {rec.get('detail', '')[:200]}")
        unrun = sorted(s for s in pending if paper_of(s) == seed)
        if unrun:
            missing.append(f"not run (interrupted or stopped early): {', '.join(unrun)}")
        if not_selected:
            missing.append(
                f"not selected: {len(not_selected)} of {len(facing)} statements "
                f"({', '.join(not_selected[:6])}{', ...' if len(not_selected) > 6 else ''})"
            )
        uses = sorted({m for st in facing for m in (st.uses or ())})
        absent = [m for m in uses if not has_method(impl, m)]
        required_absent = [m for m in absent if m.rpartition(".")[2] not in OPTIONAL_METHODS]
        if required_absent:
            missing.append(f"methods not implemented: {', '.join(required_absent)}")
        values = method_values(by_id[st.id] for st in facing if st.id in by_id)
        unchecked = [
            f"{m} ({v['checked']} of {v['calls']} calls; {v['used']} used unchecked)"
            for m, v in values.items()
            if m not in absent and v["checked"] < MIN_CHECKED_CALLS
        ]
        if unchecked:
            missing.append(
                f"not value-checked on {MIN_CHECKED_CALLS} calls (returned values never compared with an oracle "
                f"often enough): {', '.join(unchecked)}"
            )
        if counts["fail"] or counts["error"]:
            verdict = "failed"
        elif not missing:
            verdict = "certified"
        else:
            verdict = "partial"
        out[seed] = {
            "title": PAPERS.get(seed, seed),
            "verdict": verdict,
            "statements": {
                **counts,
                "total": len(facing),
                "selected": len(facing) - len(not_selected),
                "not_run": len(unrun),
                "other_profile": other,
                "oracle_only": len(oracle),
            },
            "instances": {"ran": ran, "declined": declined, "declined_optional": optional_declined},
            "methods": {"implemented": [m for m in uses if m not in absent], "missing": absent, "values": values},
            "missing": missing,
            "optional": optional,
        }
    return out


def method_values(records: Iterable[dict]) -> dict[str, dict]:
    """Per protocol method, summed over statement records: ``calls``, ``checked``, ``used``, ``probes`` and the
    ``statements`` that value-checked it (the certificate's per-method table)."""
    out: dict[str, dict] = {}
    for rec in records:
        for method, v in (rec.get("values") or {}).items():
            row = out.setdefault(method, {"calls": 0, "checked": 0, "used": 0, "probes": 0, "statements": []})
            for key in ("calls", "checked", "used", "probes"):
                row[key] += int(v.get(key, 0))
            if v.get("checked"):
                row["statements"].append(rec["id"])
    return dict(sorted(out.items()))


def format_values(papers_block: dict) -> str:
    """The per-method table of a certificate: calls, value-checked, used unchecked, probes, by paper."""
    lines = [
        "value coverage (calls whose returned values a statement compared with an oracle or a recomputation):",
        f"  {'method':<36} {'calls':>7} {'checked':>8} {'used':>6} {'probes':>7}  checked by",
    ]
    for p in papers_block.values():
        for method, v in p["methods"].get("values", {}).items():
            flag = "" if v["checked"] >= MIN_CHECKED_CALLS else "  <- not value-checked"
            by = ", ".join(v["statements"][:4]) + (", ..." if len(v["statements"]) > 4 else "")
            lines.append(
                f"  {method:<36} {v['calls']:>7} {v['checked']:>8} {v['used']:>6} {v['probes']:>7}  {by}{flag}"
            )
    return "\n".join(lines)


def format_block(papers_block: dict) -> str:
    """The per-paper block that ends the table."""
    lines = [
        "per paper (certified: every implementation-facing statement ran, passed, and declined no instance "
        "outside the optional affine frames):"
    ]
    for seed, p in papers_block.items():
        s = p["statements"]
        lines.append(
            f"  {seed} {p['verdict'].upper():<9} {s['pass']} pass, {s['fail']} fail, {s['error']} error, "
            f"{s['skip']} skip of {s['total']} statements; {p['instances']['ran']} instances ran, "
            f"{p['instances']['declined']} declined; methods {len(p['methods']['implemented'])} implemented,"
            f" {len(p['methods']['missing'])} missing, {_n_checked(p)} value-checked  ({p['title']})"
        )
        if s["other_profile"]:
            lines.append(f"      runs only in another profile (not counted): {', '.join(s['other_profile'])}")
        for m in p["missing"][:12]:
            lines.append(f"      - {m}")
        if len(p["missing"]) > 12:
            lines.append(f"      - ... and {len(p['missing']) - 12} more (see the JSON certificate)")
        if p.get("optional"):
            lines.append(
                f"      optional features declined (not counted: refvi's affine frames): "
                f"{len(p['optional'])} statement(s), {p['instances']['declined_optional']} instance(s)"
            )
    return "\n".join(lines)


def _n_checked(paper: dict) -> int:
    return sum(1 for v in paper["methods"].get("values", {}).values() if v["checked"] >= MIN_CHECKED_CALLS)


def not_certified(papers_block: dict, required: Iterable[str] | None = None) -> list[str]:
    """The papers (of ``required``, or of every paper in the block) whose verdict is not ``certified``; a required
    paper with no statement in the run counts as not certified."""
    seeds = list(papers_block) if required is None else list(required)
    return [s for s in seeds if papers_block.get(s, {}).get("verdict") != "certified"]
