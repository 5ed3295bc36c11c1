"""Run statements, print a table, write the JSON certificate (a stable contract, documented in README.md)."""

from __future__ import annotations

import fnmatch
import importlib
import json
import pkgutil
import time
import traceback
from typing import Iterable, Sequence

from refvi.verification import timeouts
from refvi.verification.statement import (PROFILES, REGISTRY, CheckFailed, Context, InstanceSkipped, MissingMethod,
                                         Statement)


def load_statements() -> dict[str, Statement]:
    """Import every module of :mod:`refvi.verification.statements` (each registers its statements)."""
    import refvi.verification.statements as pkg

    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg.__name__}."):
        importlib.import_module(info.name)
    return REGISTRY


def select(statements: Iterable[Statement], patterns: Sequence[str] | None) -> list[Statement]:
    """Keep statements whose id matches any pattern, by glob (``000.*``) or by prefix (``002.thm2``, ``000.lemma``).

    A prefix never splits a number: ``000.thm1`` selects ``000.thm1`` but not ``000.thm10``."""
    out = []
    for st in statements:
        if not patterns or any(_matches(st.id, p) for p in patterns):
            out.append(st)
    return sorted(out, key=lambda s: _sort_key(s.id))


ORACLE_ONLY_DETAIL = ("oracle-only: a true fact of the paper checked by independent oracles; it exercises nothing of "
                      "an implementation, so it never counts as a pass for one (run it against refvi)")


def run_statement(st: Statement, impl, profile_name: str = "ci", search: dict | None = None,
                  shrink: bool = True, timeout: float = 0.0) -> dict:
    """Run one statement (and its erratum's demonstration) against ``impl`` and return its certificate record.

    BLAS runs single-threaded inside a statement (threadpoolctl), so the record's numbers (worst slack, tightness)
    are the same bit for bit in any process: serial, a local worker, or a Dask worker (which pins BLAS to one
    thread itself).  ``shrink=False`` reports a failure with the first failing instance Hypothesis found instead of
    a shrunk one (the verdict is the same; the self-test only needs the verdict).  ``timeout`` > 0 (seconds, main
    thread only): a statement still running then is stopped and recorded as an ``error`` "timed out"
    (:func:`.timeouts.serial_limit`).

    Besides the original fields (README.md, certificate schema) the record carries ``scope`` ("implementation" or "oracle-only"),
    ``methods`` (the protocol methods the run called, by dotted name), ``instances_skipped`` (instances outside the
    implementation's declared capabilities) and, for skips, fails and errors, ``detail``."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        try:
            with timeouts.serial_limit(timeout):
                return _run_statement(st, impl, profile_name, search, shrink)
        except timeouts.StatementTimeout as exc:
            return timeouts.timeout_record(st.id, exc.seconds, timeouts.frames_of(exc))


def _run_statement(st: Statement, impl, profile_name: str, search: dict | None, shrink: bool = True) -> dict:
    from refvi.verification.errata import ERRATA
    from refvi.verification.protocol import is_refvi, recording

    profile = PROFILES[profile_name]
    calls: dict[str, int] = {}
    view = recording(impl, calls)
    ctx = Context(view, profile, st.id)
    ctx.search = search
    ctx.shrink = shrink
    refvi_itself = is_refvi(impl)
    record = statement_record(st, "pass")
    t0 = time.perf_counter()
    if profile_name not in st.profiles:
        record["verdict"] = "skip"
        record["detail"] = f"runs only in profiles {list(st.profiles)}"
        return record
    if st.oracle_only and not refvi_itself:
        record["verdict"] = "skip"
        record["detail"] = ORACLE_ONLY_DETAIL
        return record
    demo = None
    try:
        st.claim(ctx)
        if st.erratum is not None:
            if st.erratum not in ERRATA:
                raise KeyError(f"erratum {st.erratum} is not registered")
            demo = Context(view, profile, st.erratum)
            # a demonstration outside the implementation's declared capabilities is a skipped instance, not a
            # skipped statement (the statement's own instances stand)
            ran = demo.instance(lambda _: ERRATA[st.erratum].demonstrate(demo))
            if ran and not demo.evidence:
                raise CheckFailed(f"erratum {st.erratum}: the demonstration recorded no evidence against the printed form")
            ctx.examples += max(demo.examples, 1)
    except CheckFailed as exc:
        record["verdict"] = "fail"
        record["detail"] = _short(exc)
    except Exception as exc:  # an error is reported, never hidden
        missing = None if refvi_itself else _missing_method(exc)
        if missing is not None:
            record["verdict"] = "skip"
            record["detail"] = f"implementation lacks what this statement needs: {missing}"
        elif isinstance(exc, InstanceSkipped) and not refvi_itself:
            record["verdict"] = "skip"
            record["detail"] = f"outside the implementation's declared capabilities: {exc}"
        else:
            record["verdict"] = "error"
            record["detail"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-2000:]
    skipped = ctx.instances_skipped + (demo.instances_skipped if demo is not None else 0)
    record["examples"] = ctx.examples
    record["worst_slack"] = ctx.worst_slack
    record["methods"] = sorted(calls)
    record["instances_skipped"] = skipped
    record["tightness"] = ctx.tightness
    record["power"] = ctx.power
    record["rates"] = ctx.rates
    if not calls and not st.oracle_only:
        if st.uses is None and refvi_itself:
            record["scope"] = "oracle-only"        # undeclared and called nothing: it checked the paper only
        elif record["verdict"] == "pass" and not refvi_itself:
            record["verdict"] = "skip"
            if skipped:
                record["detail"] = (f"exercised nothing of the implementation: all {skipped} instance(s) outside "
                                    f"its declared capabilities ({'; '.join(ctx.skip_reasons)})")
            else:
                record["detail"] = "exercised nothing of the implementation: " + ORACLE_ONLY_DETAIL
    if skipped and record["verdict"] == "pass":
        record["detail"] = f"{skipped} instance(s) skipped outside the declared capabilities: " + \
            "; ".join(ctx.skip_reasons)
    record["seconds"] = round(time.perf_counter() - t0, 4)
    return record


def statement_record(st: Statement, verdict: str) -> dict:
    """A statement's certificate record before any evidence."""
    return {"id": st.id, "title": st.title, "source": st.source, "kind": st.kind, "printed": st.printed,
            "erratum": st.erratum, "verdict": verdict, "examples": 0, "worst_slack": None, "seconds": 0.0,
            "scope": "oracle-only" if st.oracle_only else "implementation", "methods": [], "instances_skipped": 0,
            "tightness": None, "power": None, "rates": []}


def crash_record(sid: str, why: str) -> dict:
    """The ``error`` record of a statement whose process died while running it (a parallel run survives it)."""
    st = load_statements()[sid]
    return {**statement_record(st, "error"),
            "detail": f"crashed: {why}; a segfault or abort inside the implementation (e.g. an out-of-bounds index in "
                      f"a compiled kernel).  Run it alone (--select {st.id}) with PYTHONFAULTHANDLER=1 for the "
                      f"traceback"}


def run(patterns: Sequence[str] | None = None, profile: str = "ci", impl=None, progress=None,
        workers: int | None = None, scheduler: str | None = None, durations: dict | None = None,
        timeout: float | None = None) -> dict:
    """Run the selected statements against ``impl`` (an object, a ``module:object`` string, or None for refvi) and
    return the certificate dictionary.  ``workers``/``scheduler``: run statements in parallel (:mod:`.parallel`;
    ``impl`` must then be None or a ``module:object`` string, so that each worker can load it); the certificate is
    the same whatever the number of workers.  ``timeout``: seconds per statement (None: the profile's default, 0:
    none); a statement over it is an ``error`` "timed out" and the run goes on (:mod:`.timeouts`)."""
    import refvi
    from refvi.verification.protocol.loading import load_implementation

    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    impl_obj = impl if (impl is not None and not isinstance(impl, str)) else load_implementation(impl)
    chosen = select(load_statements().values(), patterns)
    if workers is not None or scheduler is not None:
        if impl is not None and not isinstance(impl, str):
            raise ValueError("parallel runs load the implementation in each worker: pass it as 'module:object'")
        from refvi.verification.parallel import run_parallel

        records = run_parallel([st.id for st in chosen], impl, profile, workers or 1, scheduler, durations,
                               progress, timeout)
    else:
        seconds = timeouts.limit(profile, timeout)
        records = []
        for st in chosen:
            rec = run_statement(st, impl_obj, profile, timeout=seconds)
            records.append(rec)
            if progress is not None:
                progress(rec)
    return {"refvi_version": refvi.__version__, "profile": profile,
            "implementation": str(getattr(impl_obj, "name", type(impl_obj).__name__)), "statements": records}


def implementation_passes(cert: dict) -> int:
    """Passes that exercised the implementation (oracle-only checks excluded)."""
    return sum(1 for r in cert["statements"] if r["verdict"] == "pass" and r.get("scope") != "oracle-only")


def exit_code(cert: dict) -> int:
    """0: nothing failed and at least one statement passed on the implementation's own code; 1: a fail or an
    error; 2: nothing matched, or nothing of the implementation was exercised (all skipped or oracle-only)."""
    if any(r["verdict"] in ("fail", "error") for r in cert["statements"]):
        return 1
    return 0 if implementation_passes(cert) > 0 else 2


def format_row(rec: dict) -> str:
    slack = "" if rec["worst_slack"] is None else f"{rec['worst_slack']:.3g}"
    err = rec["erratum"] or ""
    verdict = rec["verdict"] + ("*" if rec.get("scope") == "oracle-only" and rec["verdict"] == "pass" else "")
    t = rec.get("tightness")
    tight = "" if not t else f"{t['ratio']:.2g}"
    return (f"{rec['id']:<28} {verdict:<6} {rec['kind']:<11} {err:<8} {rec['examples']:>6} "
            f"{slack:>11} {tight:>6} {rec['seconds']:>8.2f}  {rec['title'][:60]}")


#: ``tight`` = the statement's largest lhs / rhs over its bound checks (1 = attained; 0.1 = 10x headroom)
HEADER = (f"{'statement':<28} {'verdict':<6} {'kind':<11} {'erratum':<8} {'cases':>6} {'worst slack':>11} "
          f"{'tight':>6} {'seconds':>8}  title")


def summary(cert: dict) -> str:
    counts: dict[str, int] = {}
    for rec in cert["statements"]:
        counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
    parts = [f"{counts.get(k, 0)} {k}" for k in ("pass", "fail", "error", "skip")]
    oracle = sum(1 for r in cert["statements"] if r["verdict"] == "pass" and r.get("scope") == "oracle-only")
    own = implementation_passes(cert)
    return (f"{len(cert['statements'])} statements: " + ", ".join(parts) +
            f" ({own} exercised the implementation, {oracle} oracle-only)"
            f"  (profile {cert['profile']}, implementation {cert['implementation']})")


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
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(cert, fh, indent=2)
        fh.write("\n")


def _matches(sid: str, pattern: str) -> bool:
    if fnmatch.fnmatchcase(sid, pattern):
        return True
    return sid.startswith(pattern) and not (pattern[-1:].isdigit() and sid[len(pattern):len(pattern) + 1].isdigit())


def _missing_method(exc: BaseException) -> str | None:
    """What an outside implementation lacks, if ``exc`` says exactly that; None for any other failure.

    Only the recorder's :class:`MissingMethod` (a protocol method or sub-adapter absent from the object the
    statement called) is a skip: an AttributeError or NotImplementedError raised inside a method is a bug and is
    reported as ``error``."""
    if isinstance(exc, MissingMethod):
        return str(exc)
    return None


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    notes = getattr(exc, "__notes__", None)
    if notes:
        text += " | " + " ".join(n.strip() for n in notes)
    return text[-2000:]


def _sort_key(sid: str):
    seed, _, rest = sid.partition(".")
    head = rest.rstrip("0123456789")
    tail = rest[len(head):]
    return (seed, head, int(tail) if tail.isdigit() else 0, rest)
