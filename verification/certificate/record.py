"""The certificate record: a statement's record before any evidence (:func:`statement_record`), the record of a
statement whose process crashed (:func:`crash_record`), the names under which an implementation is recorded and
reloaded (:func:`implementation_name`, :func:`object_spec`), the run's exit code (:func:`exit_code`) and writing the
JSON file (:func:`check_writable`, :func:`write_json`).  The certificate's fields are documented in
``docs/conformance.md``; :func:`refvi.verification.running.runner.run` assembles it."""

from __future__ import annotations

from collections.abc import Sequence

from refvi.verification.statement import Statement


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
    from refvi.verification.running.runner import load_statements

    st = load_statements()[sid]
    return {
        **statement_record(st, "error"),
        "detail": f"crashed: {why}; a segfault or abort inside the implementation (e.g. an out-of-bounds index in "
        f"a compiled kernel).  Run it alone (--select {st.id}) with PYTHONFAULTHANDLER=1 for the "
        f"traceback",
    }


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
    """The name a certificate records for an implementation: its ``name``, else its class name."""
    return str(getattr(impl_obj, "name", type(impl_obj).__name__))


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
    from refvi.verification.certificate import coverage

    if any(r["verdict"] in ("fail", "error") for r in cert["statements"]):
        return 1
    if implementation_passes(cert) == 0:
        return 2
    if require is not None and coverage.not_certified(cert.get("papers", {}), list(require) or None):
        return EXIT_NOT_CERTIFIED
    return 0


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
