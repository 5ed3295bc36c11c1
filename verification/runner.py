"""Run statements, print a table, write the JSON certificate (a stable contract, documented in README.md)."""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
import time
import traceback
from collections.abc import Iterable, Sequence

from refvi.verification import timeouts
from refvi.verification.statement import (
    PROFILES,
    REGISTRY,
    CheckFailed,
    Context,
    InstanceSkipped,
    MissingMethod,
    Statement,
)


def load_statements() -> dict[str, Statement]:
    """Import every module of :mod:`refvi.verification.statements` (each registers its statements)."""
    import refvi.verification.oracles
    import refvi.verification.statements as pkg
    from refvi.verification import provenance

    provenance.pass_marks_through(refvi.verification.oracles)
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg.__name__}."):
        importlib.import_module(info.name)
    provenance.instrument(pkg)
    return REGISTRY


def select(statements: Iterable[Statement], patterns: Sequence[str] | None) -> list[Statement]:
    """Keep statements whose id matches any pattern, by glob (``000.*``) or by prefix (``002.thm2``, ``000.lemma``).

    A prefix never splits a number: ``000.thm1`` selects ``000.thm1`` but not ``000.thm10``."""
    out = []
    for st in statements:
        if not patterns or any(_matches(st.id, p) for p in patterns):
            out.append(st)
    return sorted(out, key=lambda s: _sort_key(s.id))


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
    from refvi.verification import provenance, reproducers
    from refvi.verification.errata import ERRATA
    from refvi.verification.protocol import is_refvi, recording
    from refvi.verification.protocol.capabilities import PROTOCOL_REFUSALS, Capabilities

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


def statement_record(st: Statement, verdict: str) -> dict:
    """A statement's certificate record before any evidence."""
    return {
        "id": st.id,
        "title": st.title,
        "source": st.source,
        "kind": st.kind,
        "printed": st.printed,
        "erratum": st.erratum,
        "verdict": verdict,
        "examples": 0,
        "worst_slack": None,
        "seconds": 0.0,
        "scope": "oracle-only" if st.oracle_only else "implementation",
        "methods": [],
        "calls": {},
        "instances_skipped": 0,
        "declined": {},
        "declined_optional": 0,
        "instances": [],
        "values": {},
        "trusted": [],
        "given": [],
        "tightness": None,
        "checks": {},
        "power": None,
        "rates": [],
        "warnings": [],
    }


def crash_record(sid: str, why: str) -> dict:
    """The ``error`` record of a statement whose process died while running it (a parallel run survives it)."""
    st = load_statements()[sid]
    return {
        **statement_record(st, "error"),
        "detail": f"crashed: {why}; a segfault or abort inside the implementation (e.g. an out-of-bounds index in "
        f"a compiled kernel).  Run it alone (--select {st.id}) with PYTHONFAULTHANDLER=1 for the "
        f"traceback",
    }


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM during a run (raised by the command line's signal handlers): the run stops, and the
    certificate of what finished is written, marked incomplete."""

    def __init__(self, signum: int):
        import signal

        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)
        self.signal_name = signal.Signals(signum).name


class _StopEarly(Exception):
    """``-x``: the first fail or error stops the run."""


def select_methods(statements: Iterable[Statement], methods: Sequence[str] | None) -> list[Statement]:
    """Keep the statements that call any of the protocol methods ``methods`` (dotted names or globs:
    ``energy``, ``online.*``), as declared by their ``uses``."""
    if not methods:
        return list(statements)
    return [st for st in statements if any(fnmatch.fnmatchcase(u, m) for u in (st.uses or ()) for m in methods)]


def run(
    patterns: Sequence[str] | None = None,
    profile: str = "ci",
    impl=None,
    progress=None,
    workers: int | None = None,
    scheduler: str | None = None,
    durations: dict | None = None,
    timeout: float | None = None,
    methods: Sequence[str] | None = None,
    exitfirst: bool = False,
    artifacts: str | None = None,
    resume: dict | None = None,
    impl_spec: str | None = None,
) -> dict:
    """Run the selected statements against ``impl`` (an object, a ``module:object`` string, or None for refvi) and
    return the certificate dictionary.

    ``workers``/``scheduler``: run statements in parallel (:mod:`.parallel`; ``impl`` must then be None or a
    ``module:object`` string, so that each worker can load it); the certificate is the same whatever the number of
    workers.  ``timeout``: seconds per statement (None: the profile's default, 0: none); a statement over it is an
    ``error`` "timed out" and the run goes on (:mod:`.timeouts`).  ``methods``: only the statements that call one of
    these protocol methods.  ``exitfirst``: stop at the first fail or error.  ``artifacts``: a folder for the
    reproducers of failures (:mod:`.reproducers`; ``impl_spec``: the ``module:object`` they name for an implementation
    passed as an object, so that ``--replay`` reruns it there).  ``resume``: a partial certificate of the same
    implementation, profile and refvi version; only the statements it lacks are run and its records are kept
    (:func:`check_resumable`).

    The run stops early on ``exitfirst`` or on :class:`Interrupted` / ``KeyboardInterrupt``; the certificate then
    has ``"complete": false`` and lists the statements not run in ``not_run`` (and ``interrupted`` names the
    signal, or ``"exitfirst"``)."""
    import refvi
    from refvi.verification import coverage
    from refvi.verification.protocol.loading import load_implementation

    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    # the ``module:object`` a reproducer names (--replay reruns it there): the spec given, or the object's own
    spec = impl if isinstance(impl, str) else impl_spec
    impl_obj = impl if (impl is not None and not isinstance(impl, str)) else load_implementation(impl)
    registry = load_statements()
    if resume is not None:
        patterns, methods = resumed_selection(resume, patterns, methods)
    chosen = select_methods(select(registry.values(), patterns), methods)
    name = implementation_name(impl_obj)
    done: dict[str, dict] = {}
    if resume is not None:
        check_resumable(resume, name, profile, refvi.__version__)
        wanted = {st.id for st in chosen}
        done.update({r["id"]: r for r in resume.get("statements", []) if r["id"] in wanted})
    todo = [st for st in chosen if st.id not in done]
    stopped: str | None = None

    def finished(rec: dict) -> None:
        done[rec["id"]] = rec
        if progress is not None:
            progress(rec)
        if exitfirst and rec["verdict"] in ("fail", "error"):
            raise _StopEarly(rec["id"])

    try:
        if not todo:
            pass
        elif workers is not None or scheduler is not None:
            from refvi.verification.parallel import run_parallel

            run_parallel(
                [st.id for st in todo],
                impl if impl is None or isinstance(impl, str) else spec or object_spec(impl_obj),
                profile,
                workers or 1,
                scheduler,
                durations,
                finished,
                timeout,
                artifacts=artifacts,
            )
        else:
            seconds = timeouts.limit(profile, timeout)
            for st in todo:
                finished(run_statement(st, impl_obj, profile, timeout=seconds, artifacts=artifacts, impl_spec=spec))
    except _StopEarly:
        stopped = "exitfirst"
    except KeyboardInterrupt as exc:
        stopped = getattr(exc, "signal_name", "SIGINT")
    records = [done[st.id] for st in chosen if st.id in done]
    not_run = [st.id for st in chosen if st.id not in done]
    cert = {
        "refvi_version": refvi.__version__,
        "profile": profile,
        "implementation": name,
        "complete": not not_run,
        "not_run": not_run,
        "selection": {"patterns": list(patterns or []), "methods": list(methods or [])},
        "statements": records,
        "papers": coverage.papers(records, registry, profile, impl_obj, not_run),
    }
    if stopped is not None:
        cert["interrupted"] = stopped
    return cert


def object_spec(obj) -> str:
    """The ``module:object`` under which each worker of a parallel run loads an implementation given as an object:
    a top-level name of an importable module that holds this very object (``ValueError`` naming what to pass
    otherwise, e.g. for an object built in a script or a notebook)."""
    import sys

    for module_name in (getattr(obj, "__module__", None), type(obj).__module__):
        module = sys.modules.get(module_name or "")
        if module is None or module_name == "__main__":
            continue
        for attr, value in vars(module).items():
            if value is obj:
                return f"{module_name}:{attr}"
    raise ValueError(
        f"parallel runs load the implementation in each worker process by name, and {type(obj).__name__!r} object "
        f"is not a top-level name of an importable module: pass impl='module:object' (or impl_spec=...), or "
        f"run with workers=None"
    )


def implementation_name(impl_obj) -> str:
    return str(getattr(impl_obj, "name", type(impl_obj).__name__))


def check_resumable(partial: dict, name: str, profile: str, version: str) -> None:
    """Refuse (ValueError, one line) a certificate written for another implementation, profile or refvi version."""
    for key, want in (("implementation", name), ("profile", profile), ("refvi_version", version)):
        if partial.get(key) != want:
            raise ValueError(f"--resume: the certificate is for {key} {partial.get(key)!r}, this run is {want!r}")
    if not isinstance(partial.get("statements"), list):
        raise ValueError("--resume: not a refvi certificate (no statements list)")


def resumed_selection(partial: dict, patterns, methods) -> tuple[list[str] | None, list[str] | None]:
    """The selection a resumed run completes: the partial certificate's own (``selection``), so that the result is
    the uninterrupted run's; a different ``patterns`` / ``methods`` is refused (ValueError, one line)."""
    recorded = partial.get("selection")
    if not isinstance(recorded, dict):  # a certificate without it: the selection given
        return patterns, methods
    mine = (list(recorded.get("patterns") or []), list(recorded.get("methods") or []))
    given = (list(patterns or []), list(methods or []))
    if (patterns is not None or methods is not None) and given != mine:
        raise ValueError(
            f"--resume: the certificate was run with --select {' '.join(mine[0]) or '(all)'}"
            f"{' --select-method ' + ' '.join(mine[1]) if mine[1] else ''}; resume it without another selection"
        )
    return mine[0] or None, mine[1] or None


def implementation_passes(cert: dict) -> int:
    """Passes that exercised the implementation (oracle-only checks excluded)."""
    return sum(1 for r in cert["statements"] if r["verdict"] == "pass" and r.get("scope") != "oracle-only")


#: exit code when ``--strict`` / ``--require`` names a paper that is not certified (nothing failed)
EXIT_NOT_CERTIFIED = 3


def exit_code(cert: dict, require: Sequence[str] | None = None) -> int:
    """0: nothing failed and at least one statement passed on the implementation's own code; 1: a fail or an
    error; 2: nothing matched, or nothing of the implementation was exercised (all skipped or oracle-only);
    3 (:data:`EXIT_NOT_CERTIFIED`): ``require`` lists papers (``[]``: every paper of the run, ``--strict``) and one
    of them is not certified."""
    from refvi.verification import coverage

    if any(r["verdict"] in ("fail", "error") for r in cert["statements"]):
        return 1
    if implementation_passes(cert) == 0:
        return 2
    if require is not None and coverage.not_certified(cert.get("papers", {}), list(require) or None):
        return EXIT_NOT_CERTIFIED
    return 0


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


def check_writable(path: str) -> None:
    """Refuse an unwritable certificate path before a run starts (raises OSError naming the path)."""
    import os

    folder = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise IsADirectoryError(f"--json {path}: is a directory")
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"--json {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise PermissionError(f"--json {path}: not writable")


def write_json(cert: dict, path: str) -> None:
    """Write the certificate atomically (a reader never sees half of it; a failed write leaves the old file)."""
    from refvi import _atomic

    _atomic.write_json(path, cert)


def _matches(sid: str, pattern: str) -> bool:
    if fnmatch.fnmatchcase(sid, pattern):
        return True
    return sid.startswith(pattern) and not (pattern[-1:].isdigit() and sid[len(pattern) : len(pattern) + 1].isdigit())


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    notes = getattr(exc, "__notes__", None)
    if notes:
        text += " | " + " ".join(n.strip() for n in notes)
    return text[-2000:]


def _sort_key(sid: str):
    seed, _, rest = sid.partition(".")
    head = rest.rstrip("0123456789")
    tail = rest[len(head) :]
    return (seed, head, int(tail) if tail.isdigit() else 0, rest)
