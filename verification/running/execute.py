"""Run one statement in this process and return its certificate record (:func:`run_statement`): a
:class:`~refvi.verification.statement.Context` against the implementation seen through a recorder, the statement's
erratum demonstrated, the evidence, value coverage, declines and failures (with their reproducers) gathered into the
record, BLAS single-threaded and warnings kept, under the statement's time limit."""

from __future__ import annotations

import time
import traceback

from refvi.verification.certificate.record import statement_record
from refvi.verification.running import timeouts
from refvi.verification.statement import (
    PROFILES,
    CheckFailed,
    Context,
    InstanceSkipped,
    MissingMethod,
    Statement,
)

ORACLE_ONLY_DETAIL = (
    "oracle-only: a true fact of the paper checked by independent oracles; it exercises nothing of "
    "an implementation, so it never counts as a pass for one (run it against refvi)"
)


def run_statement(
    st: Statement,
    impl,
    profile_name: str = "ci",
    search: dict | None = None,
    shrink: bool = True,
    timeout: float = 0.0,
    artifacts: str | None = None,
    impl_spec: str | None = None,
) -> dict:
    """Run one statement (and its erratum's demonstration) against ``impl`` and return its certificate record.

    BLAS runs single-threaded inside a statement (threadpoolctl), so the record's numbers (worst slack, tightness)
    are the same bit for bit in any process: serial, a local worker, or a Dask worker (which pins BLAS to one
    thread itself).  ``shrink=False`` reports a failure with the first failing instance Hypothesis found instead of
    a shrunk one (the verdict is the same; the self-test only needs the verdict).  ``timeout`` > 0 (seconds, main
    thread only): a statement still running then is stopped and recorded as an ``error`` "timed out"
    (:func:`.timeouts.serial_limit`).  ``artifacts``: a folder where a ``fail`` or ``error`` writes its reproducer
    files (:mod:`.reproducers`; ``impl_spec`` is the ``module:object`` named in the snippet).

    Warnings raised while the statement runs (an oracle's quadrature reporting round-off, a library's deprecation)
    are kept in the record (``warnings``: up to five distinct messages) instead of interleaving with the table.

    The record's fields are documented in ``docs/conformance.md`` (the certificate)."""
    import warnings

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with timeouts.serial_limit(timeout):
                record = _run_statement(st, impl, profile_name, search, shrink, artifacts, impl_spec)
        except timeouts.StatementTimeout as exc:
            record = timeouts.timeout_record(st.id, exc.seconds, timeouts.frames_of(exc))
    seen: list[str] = []
    for w in caught:
        text = f"{w.category.__name__}: {str(w.message).strip()}"[:300]
        if text not in seen:
            seen.append(text)
    record["warnings"] = seen[:5]
    return record


def _run_statement(
    st: Statement,
    impl,
    profile_name: str,
    search: dict | None,
    shrink: bool = True,
    artifacts: str | None = None,
    impl_spec: str | None = None,
) -> dict:
    from refvi.verification.certificate import reproducers
    from refvi.verification.errata import ERRATA
    from refvi.verification.protocol import is_refvi, recording
    from refvi.verification.protocol.capabilities import PROTOCOL_REFUSALS, Capabilities
    from refvi.verification.statement import provenance

    profile = PROFILES[profile_name]
    calls: dict[str, int] = {}
    log: list = []
    ledger = provenance.Ledger()
    view = recording(impl, calls, log, ledger)
    refvi_itself = is_refvi(impl)

    def context(sid: str) -> Context:
        c = Context(view, profile, sid)
        c.search, c.shrink, c.strict_methods, c.call_log = search, shrink, refvi_itself, log
        c.ledger = ledger
        c.refusals = PROTOCOL_REFUSALS + Capabilities.of(impl).refusals
        return c

    ctx = context(st.id)
    record = statement_record(st, "pass")
    t0 = time.perf_counter()
    if profile_name not in st.profiles:
        record["verdict"] = "skip"
        record["detail"] = f"runs only in profiles {list(st.profiles)}"
        record["other_profile"] = True
        return record
    if st.oracle_only and not refvi_itself:
        record["verdict"] = "skip"
        record["detail"] = ORACLE_ONLY_DETAIL
        return record
    demo = None
    stopped = None  # a declined call outside any instance: the rest of the claim did not run
    try:
        try:
            st.claim(ctx)
        except (InstanceSkipped, MissingMethod) as exc:
            if isinstance(exc, MissingMethod) and refvi_itself:
                raise
            ctx.decline(exc)
            stopped = exc
        ctx.raise_deferred()
        if st.erratum is not None and stopped is None:
            erratum = st.erratum
            if erratum not in ERRATA:
                raise KeyError(f"erratum {erratum} is not registered")
            demo = context(erratum)
            # a demonstration outside the implementation's declared capabilities is a declined instance, not a
            # skipped statement (the statement's own instances stand)
            ran = demo.instance(lambda _: ERRATA[erratum].demonstrate(demo))
            if ran and not demo.evidence:
                raise CheckFailed(
                    f"erratum {st.erratum}: the demonstration recorded no evidence against the printed form"
                )
            ctx.examples += max(demo.examples, 1) if ran else 0
            demo.raise_deferred()
    except CheckFailed as exc:
        record["verdict"] = "fail"
        record["detail"] = _short(exc)
    except Exception as exc:  # an error is reported, never hidden
        record["verdict"] = "error"
        record["detail"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-2000:]
        if not (ctx.failures and ctx.failures[0].get("error")):
            ctx.note_failure(None, error=exc)
    failures = ctx.failures + (demo.failures if demo is not None else [])
    counts = dict(ctx.decline_counts)
    for reason, n in demo.decline_counts.items() if demo is not None else ():
        counts[reason] = counts.get(reason, 0) + n
    skipped = ctx.instances_skipped + (demo.instances_skipped if demo is not None else 0)
    record["declined_optional"] = ctx.optional_declines + (demo.optional_declines if demo is not None else 0)
    record["examples"] = ctx.examples
    record["worst_slack"] = ctx.worst_slack
    record["methods"] = sorted(calls)
    record["calls"] = dict(sorted(calls.items()))
    record["instances_skipped"] = skipped
    record["declined"] = counts
    record["instances"] = ctx.instance_log + [
        [f"erratum:{s}", i, o, w] for s, i, o, w in (demo.instance_log if demo is not None else [])
    ]
    values = ledger.summary()
    record["values"] = values["methods"]
    record["trusted"] = values["trusted"]
    record["given"] = [list(g) for g in values["given"]]
    record["unseen"] = values["unseen"]
    record["tightness"] = ctx.tightness
    checks = dict(ctx.checks)
    checks.update({f"{st.erratum}: {name}": c for name, c in (demo.checks if demo is not None else {}).items()})
    loose = dict(st.loose)
    record["checks"] = {
        name: {"tightness": c["ratio"], "label": c["label"], "instance": c["instance"], "count": c["count"]}
        | ({"loose": loose[name]} if name in loose else {})
        for name, c in sorted(checks.items())
    }
    record["power"] = ctx.power
    record["rates"] = ctx.rates
    verdict = record["verdict"]
    if verdict == "pass" and not refvi_itself and (stopped is not None or skipped) and ctx.examples == 0:
        record["verdict"] = "skip"
        record["detail"] = "every instance declined: " + _reasons(counts)
    elif not calls and not st.oracle_only:
        if st.uses is None and refvi_itself:
            record["scope"] = "oracle-only"  # undeclared and called nothing: it checked the paper only
        elif verdict == "pass" and not refvi_itself:
            record["verdict"] = "skip"
            record["detail"] = "exercised nothing of the implementation: " + (
                f"all {skipped} instance(s) declined ({_reasons(counts)})" if skipped else ORACLE_ONLY_DETAIL
            )
    if record["verdict"] == "pass" and skipped:
        record["detail"] = f"{skipped} instance(s) declined: {_reasons(counts)}"
        if stopped is not None:
            record["detail"] += " (a call outside any instance was declined: the rest of the statement did not run)"
            record["stopped"] = True
    if record["verdict"] in ("fail", "error") and failures:
        record["reproducers"] = reproducers.records(failures)
        if artifacts:
            record["artifacts"] = reproducers.write_artifacts(
                artifacts, st.id, profile_name, impl_spec, failures, record["verdict"], record.get("detail", "")
            )
    record["seconds"] = round(time.perf_counter() - t0, 4)
    return record


def _reasons(counts: dict[str, int], limit: int = 4) -> str:
    """``3 x frame=... not in declared [None]; 1 x lacks method 'fit'`` (the most frequent first)."""
    items = sorted(counts.items(), key=lambda kv: -kv[1])
    text = "; ".join(f"{n} x {r}" for r, n in items[:limit])
    if len(items) > limit:
        text += f"; and {len(items) - limit} other reason(s)"
    return text or "no reason given"


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    notes = getattr(exc, "__notes__", None)
    if notes:
        text += " | " + " ".join(n.strip() for n in notes)
    return text[-2000:]
