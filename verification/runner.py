"""Run statements, print a table, write the JSON certificate (the stable contract of DESIGN.md)."""

from __future__ import annotations

import fnmatch
import importlib
import json
import pkgutil
import time
import traceback
from typing import Iterable, Sequence

from refvi.verification.statement import PROFILES, REGISTRY, CheckFailed, Context, MissingMethod, Statement


def load_statements() -> dict[str, Statement]:
    """Import every module of :mod:`refvi.verification.statements` (each registers its statements)."""
    import refvi.verification.statements as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{info.name}")
    return REGISTRY


def select(statements: Iterable[Statement], patterns: Sequence[str] | None) -> list[Statement]:
    """Keep statements whose id matches any pattern, by glob (``000.*``) or by prefix (``002.thm2``, ``000.lemma``).

    A prefix never splits a number: ``000.thm1`` selects ``000.thm1`` but not ``000.thm10``."""
    out = []
    for st in statements:
        if not patterns or any(_matches(st.id, p) for p in patterns):
            out.append(st)
    return sorted(out, key=lambda s: _sort_key(s.id))


def run_statement(st: Statement, impl, profile_name: str = "ci") -> dict:
    """Run one statement (and its erratum's demonstration) and return its certificate record."""
    from refvi.verification.errata import ERRATA

    profile = PROFILES[profile_name]
    ctx = Context(impl, profile, st.id)
    record = {"id": st.id, "title": st.title, "source": st.source, "kind": st.kind, "printed": st.printed,
              "erratum": st.erratum, "verdict": "pass", "examples": 0, "worst_slack": None, "seconds": 0.0}
    t0 = time.perf_counter()
    if profile_name not in st.profiles:
        record["verdict"] = "skip"
        record["detail"] = f"runs only in profiles {list(st.profiles)}"
        return record
    try:
        st.claim(ctx)
        if st.erratum is not None:
            if st.erratum not in ERRATA:
                raise KeyError(f"erratum {st.erratum} is not registered")
            demo = Context(impl, profile, st.erratum)
            ERRATA[st.erratum].demonstrate(demo)
            if not demo.evidence:
                raise CheckFailed(f"erratum {st.erratum}: the demonstration recorded no evidence against the printed form")
            ctx.examples += max(demo.examples, 1)
    except CheckFailed as exc:
        record["verdict"] = "fail"
        record["detail"] = _short(exc)
    except Exception as exc:  # an error is reported, never hidden
        missing = _missing_method(exc, impl)
        if missing is not None:
            record["verdict"] = "skip"
            record["detail"] = f"implementation lacks what this statement needs: {missing}"
        else:
            record["verdict"] = "error"
            record["detail"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-2000:]
    record["examples"] = ctx.examples
    record["worst_slack"] = ctx.worst_slack
    record["seconds"] = round(time.perf_counter() - t0, 4)
    return record


def run(patterns: Sequence[str] | None = None, profile: str = "ci", impl=None, progress=None) -> dict:
    """Run the selected statements and return the certificate dictionary."""
    import refvi
    from refvi.verification.implementation import load_implementation

    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    impl_obj = impl if (impl is not None and not isinstance(impl, str)) else load_implementation(impl)
    chosen = select(load_statements().values(), patterns)
    records = []
    for st in chosen:
        rec = run_statement(st, impl_obj, profile)
        records.append(rec)
        if progress is not None:
            progress(rec)
    return {"refvi_version": refvi.__version__, "profile": profile,
            "implementation": str(getattr(impl_obj, "name", type(impl_obj).__name__)), "statements": records}


def format_row(rec: dict) -> str:
    slack = "" if rec["worst_slack"] is None else f"{rec['worst_slack']:.3g}"
    err = rec["erratum"] or ""
    return (f"{rec['id']:<28} {rec['verdict']:<6} {rec['kind']:<11} {err:<8} {rec['examples']:>6} "
            f"{slack:>11} {rec['seconds']:>8.2f}  {rec['title'][:60]}")


HEADER = (f"{'statement':<28} {'verdict':<6} {'kind':<11} {'erratum':<8} {'cases':>6} {'worst slack':>11} "
          f"{'seconds':>8}  title")


def summary(cert: dict) -> str:
    counts: dict[str, int] = {}
    for rec in cert["statements"]:
        counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
    parts = [f"{counts.get(k, 0)} {k}" for k in ("pass", "fail", "error", "skip")]
    return f"{len(cert['statements'])} statements: " + ", ".join(parts) + \
        f"  (profile {cert['profile']}, implementation {cert['implementation']})"


def write_json(cert: dict, path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(cert, fh, indent=2)
        fh.write("\n")


def _matches(sid: str, pattern: str) -> bool:
    if fnmatch.fnmatchcase(sid, pattern):
        return True
    return sid.startswith(pattern) and not (pattern[-1:].isdigit() and sid[len(pattern):len(pattern) + 1].isdigit())


def _missing_method(exc: BaseException, impl) -> str | None:
    """What an outside implementation lacks, if ``exc`` says exactly that; None for any other failure.

    Only a missing attribute *of the implementation object itself* (or an explicit :class:`MissingMethod`) is a
    skip: an AttributeError or NotImplementedError raised inside a method is a bug and is reported as ``error``.
    refvi's own implementation never skips."""
    if getattr(impl, "name", None) == "refvi":
        return None
    if isinstance(exc, MissingMethod):
        return str(exc)
    if isinstance(exc, AttributeError) and getattr(exc, "obj", None) is impl:
        return f"method {exc.name!r}"
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
