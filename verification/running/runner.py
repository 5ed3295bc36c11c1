"""Run statements: load and select them, run each (:mod:`.running.execute`) serially or on worker processes
(:mod:`.running.parallel`) under a time limit (:mod:`.running.timeouts`), stop on an interrupt or at the first
failure, resume a partial certificate, and return the certificate (its records, :mod:`.certificate.record`; the
table, :mod:`.certificate.table`; per-paper verdicts, :mod:`.certificate.coverage`).  The certificate is a stable
contract, documented in README.md and ``docs/conformance.md``; the names of the record and the table are importable
from here too."""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from collections.abc import Iterable, Sequence

from refvi.verification.certificate.record import (  # noqa: F401  (re-exported: the runner's API)
    EXIT_NOT_CERTIFIED,
    check_writable,
    crash_record,
    exit_code,
    implementation_name,
    implementation_passes,
    object_spec,
    statement_record,
    write_json,
)
from refvi.verification.certificate.table import HEADER, format_row, row_note, summary, weakest_check  # noqa: F401
from refvi.verification.running import timeouts
from refvi.verification.running.execute import ORACLE_ONLY_DETAIL, run_statement  # noqa: F401
from refvi.verification.statement import PROFILES, REGISTRY, Statement


def load_statements() -> dict[str, Statement]:
    """Import every module of :mod:`refvi.verification.statements` (each registers its statements)."""
    import refvi.verification.oracles
    import refvi.verification.statements as pkg
    from refvi.verification.statement import provenance

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


def select_methods(statements: Iterable[Statement], methods: Sequence[str] | None) -> list[Statement]:
    """Keep the statements that call any of the protocol methods ``methods`` (dotted names or globs:
    ``energy``, ``online.*``), as declared by their ``uses``."""
    if not methods:
        return list(statements)
    return [st for st in statements if any(fnmatch.fnmatchcase(u, m) for u in (st.uses or ()) for m in methods)]


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
    from refvi.verification.certificate import coverage
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
            from refvi.verification.running.parallel import run_parallel

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


def _matches(sid: str, pattern: str) -> bool:
    if fnmatch.fnmatchcase(sid, pattern):
        return True
    return sid.startswith(pattern) and not (pattern[-1:].isdigit() and sid[len(pattern) : len(pattern) + 1].isdigit())


def _sort_key(sid: str):
    seed, _, rest = sid.partition(".")
    head = rest.rstrip("0123456789")
    tail = rest[len(head) :]
    return (seed, head, int(tail) if tail.isdigit() else 0, rest)
