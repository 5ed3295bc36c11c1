"""Counterexample search for bound statements (``--search STATEMENT --budget N``).

A bound statement records its paper inequalities with :meth:`.Context.bound`; in search mode its Hypothesis
strategies run undeterministically seeded (one seed per task), with the *target* phase on, maximising the
normalised violation ``lhs / rhs`` of every bound (> 1 is a violation).  Tasks run on the workers in parallel; the
best instance found is printed and saved with its seed and budget, which reproduce it exactly (same statement, seed,
budget: same instances).  A check that fails during the search is a counterexample: it is reported with Hypothesis's
shrunk instance, to be confirmed and recorded as an erratum.
"""

from __future__ import annotations

from collections.abc import Sequence


def search(
    statement_id: str,
    budget: int,
    seeds: Sequence[int],
    impl_spec: str | None = None,
    profile: str = "ci",
    workers: int = 1,
    scheduler: str | None = None,
) -> dict:
    """Run the search over ``seeds`` (one task each) and return the summary: the best ratio, its instance and seed,
    and any failing (counterexample) record."""
    from refvi.verification.running import runner
    from refvi.verification.running.parallel import _run_one, map_tasks

    if statement_id not in runner.load_statements():
        raise KeyError(f"no statement {statement_id!r}")
    if budget < 1:
        raise ValueError(f"--budget must be >= 1, got {budget}")
    tasks = [(statement_id, impl_spec, profile, {"seed": int(s), "budget": int(budget)}) for s in seeds]
    if workers > 1 or scheduler:
        records = map_tasks(tasks, workers, scheduler)
    else:
        records = [_run_one(*t) for t in tasks]
    best = None
    for rec in records:
        t = rec.get("tightness")
        if t is not None and (best is None or t["ratio"] > best["ratio"]):
            best = {**t, "seed": rec["search"]["seed"]}
    failures = [
        {"seed": r["search"]["seed"], "verdict": r["verdict"], "detail": r.get("detail", "")}
        for r in records
        if r["verdict"] in ("fail", "error")
    ]
    return {
        "statement": statement_id,
        "budget": budget,
        "seeds": list(seeds),
        "profile": profile,
        "implementation": impl_spec or "refvi",
        "best": best,
        "counterexamples": failures,
        "examples": sum(r["examples"] for r in records),
    }


def save(result: dict, path: str) -> None:
    """Write the search result atomically (a reader never sees half of it)."""
    from refvi import _atomic

    _atomic.write_json(path, result)
