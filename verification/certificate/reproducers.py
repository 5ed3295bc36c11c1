"""Reproducers: what produced a failing check, written so that a maintainer can replay it in seconds.

A failing check (or an exception inside the implementation) is kept by the statement's
:class:`~refvi.verification.statement.Context` with the instance site and index, the instance itself and the last
protocol calls of that instance (method, bound arguments, what came back or was raised; :mod:`.protocol.recorder`).
The certificate record of a ``fail`` or ``error`` carries a JSON summary of it (``reproducers``: call, arguments,
returned, expected, tolerance).  With ``--artifacts DIR`` each failing statement also gets

* ``DIR/<id>.npz``: the arrays of the calls (``call<k>.<argument>``, ``call<k>.returned``), the check's two sides
  (``check.lhs``, ``check.rhs``), a JSON ``meta`` entry, and the pickled instance and calls (for ``--replay``);
* ``DIR/<id>.py``: a runnable snippet that makes the failing protocol call again on the implementation and prints
  what it returns next to what the oracle expected.

``python -m refvi.verification --replay DIR/<id>.npz --impl MODULE:OBJECT`` runs that statement on that one instance
again (the other instances are not run; a failure outside any instance re-runs the statement) and prints the calls,
the check and the verdict: exit 1 if it still fails, 0 if it now passes.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import time
from typing import Any

import numpy as np

#: reproducers kept per statement record (a bad-input statement may fail many probes)
MAX_REPRODUCERS = 10


def summarize(value, limit: int = 12) -> Any:
    """A short JSON-friendly picture of a protocol value: small arrays in full, large ones by shape and range,
    records by their fields."""
    if isinstance(value, np.ndarray):
        if value.size <= limit and value.dtype.kind in "biuf":
            return {"array": value.tolist(), "shape": list(value.shape)}
        finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
        rng = [float(finite.min()), float(finite.max())] if finite.size and value.dtype.kind in "biuf" else None
        return {"shape": list(value.shape), "dtype": str(value.dtype), "range": rng}
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (tuple, list)):
        return [summarize(v, limit) for v in value[:limit]] + (["..."] if len(value) > limit else [])
    if isinstance(value, dict):
        return {str(k): summarize(v, limit) for k, v in list(value.items())[:limit]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: summarize(getattr(value, f.name), limit)
            for f in dataclasses.fields(value)
            if not callable(getattr(value, f.name))
        }
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def record_of(failure: dict) -> dict:
    """The certificate's JSON summary of one kept failure (see the module docstring)."""
    check = failure.get("check") or {}
    calls = failure.get("calls") or []
    out = {
        "site": failure.get("site"),
        "index": failure.get("index"),
        "instance": _short(failure.get("instance")),
        "calls": [
            {
                "method": c["method"],
                "arguments": summarize(c["arguments"]),
                **({"raised": c["raised"]} if "raised" in c else {"returned": summarize(c.get("returned"))}),
            }
            for c in telling_calls(calls)
        ],
    }
    if check:
        out["check"] = {
            "label": check.get("label"),
            "returned_side": _num(check.get("lhs")),
            "expected_side": _num(check.get("rhs")),
            "relation": check.get("relation"),
            "tolerance": check.get("detail"),
        }
    if failure.get("error"):
        out["error"] = failure["error"]
    return out


def telling_calls(calls: list, limit: int = 3) -> list:
    """The calls a reproducer shows: the last call of each protocol method the instance made, in the order made
    (at most ``limit``, the latest): an SVB run followed by the many ``expected_loss`` calls that checked it shows
    the ``run`` too, not three ``expected_loss`` calls."""
    last = {c["method"]: k for k, c in enumerate(calls)}
    return [calls[k] for k in sorted(last.values())[-limit:]]


def records(failures: list[dict]) -> list[dict]:
    return [record_of(f) for f in failures[:MAX_REPRODUCERS]]


def write_artifacts(
    folder: str, sid: str, profile: str, impl_spec: str | None, failures: list[dict], verdict: str, detail: str
) -> list[str]:
    """Write ``<sid>.npz`` and ``<sid>.py`` for a failing statement into ``folder``; returns the paths written."""
    from refvi import _atomic as atomic
    from refvi.verification.protocol.loading import import_root

    os.makedirs(folder, exist_ok=True)
    first = failures[0] if failures else {"site": None, "index": None, "instance": None, "calls": [], "check": None}
    arrays: dict[str, np.ndarray] = {}
    for k, call in enumerate(first.get("calls") or []):
        for name, value in call["arguments"].items():
            if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
                arrays[f"call{k}.{name}"] = value
        ret = call.get("returned")
        if isinstance(ret, np.ndarray) and ret.dtype.kind in "biufc":
            arrays[f"call{k}.returned"] = ret
        elif isinstance(ret, tuple):
            for j, r in enumerate(ret):
                if isinstance(r, np.ndarray) and r.dtype.kind in "biufc":
                    arrays[f"call{k}.returned{j}"] = r
    check = first.get("check") or {}
    for side in ("lhs", "rhs"):
        value = check.get(f"{side}_array", check.get(side))
        if value is not None:
            arrays[f"check.{side}"] = np.asarray(value, dtype=np.float64)
    instance_blob, replayable = _pickle(first.get("instance"))
    calls_blob, _ = _pickle([{k: v for k, v in c.items()} for c in first.get("calls") or []])
    meta = {
        "statement": sid,
        "profile": profile,
        "implementation": impl_spec,
        "implementation_path": import_root(impl_spec),
        "verdict": verdict,
        "detail": detail[:2000],
        "site": first.get("site"),
        "index": first.get("index"),
        "replayable": replayable and first.get("site") is not None,
        "reproducer": record_of(first),
        "written": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    buf = io.BytesIO()
    # the array names carry a "call<k>." / "check." prefix, so none collides with savez's allow_pickle keyword
    members: dict[str, Any] = {"meta": np.array(json.dumps(meta, default=str)), "instance": instance_blob}
    members.update(calls=calls_blob, **arrays)
    np.savez(buf, **members)
    base = os.path.join(folder, _file_stem(sid))
    atomic.write_bytes(base + ".npz", buf.getvalue())
    atomic.write_text(base + ".py", _snippet(sid, os.path.basename(base) + ".npz", impl_spec, first, meta))
    return [base + ".npz", base + ".py"]


def load(path: str) -> dict:
    """An artifact written by :func:`write_artifacts`: its ``meta`` dict plus ``instance`` and ``calls`` (unpickled;
    None when they could not be pickled) and ``arrays``."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        instance = _unpickle(z["instance"])
        calls = _unpickle(z["calls"]) or []
        arrays = {k: z[k] for k in z.files if k not in ("meta", "instance", "calls")}
    return {**meta, "instance": instance, "calls": calls, "arrays": arrays}


def call_method(impl, dotted: str):
    """The bound protocol method ``dotted`` (``energy``, ``online.run``) of an implementation object."""
    obj = impl
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def replay(path: str, impl_spec: str | None, out=print, err=None) -> int:
    """Run the failing instance of an artifact again against ``impl_spec`` (None: the artifact's implementation, or
    refvi); print the calls, the check and the verdict with ``out``.  Returns 1 if it still fails, 0 if it passes, 2
    if the artifact cannot be used (said with ``err``: by default ``out``; the command line's goes to stderr)."""
    err = out if err is None else err
    from refvi.verification.protocol import is_refvi, recording
    from refvi.verification.protocol.capabilities import PROTOCOL_REFUSALS, Capabilities
    from refvi.verification.protocol.loading import load_implementation
    from refvi.verification.running import runner
    from refvi.verification.statement import PROFILES, CheckFailed, Context, ReplayDone

    try:
        art = load(path)
    except (OSError, ValueError, KeyError) as exc:
        err(f"error: {path}: not a refvi reproducer ({exc})")
        return 2
    spec = impl_spec if impl_spec is not None else art.get("implementation")
    impl = load_implementation(spec, search=(art.get("implementation_path") or "",))
    statements = runner.load_statements()
    sid = art["statement"]
    if sid not in statements:
        err(f"error: {path}: statement {sid} is not known to this refvi")
        return 2
    st = statements[sid]
    out(f"replaying {sid} ({st.title}) against {spec or 'refvi'}, profile {art['profile']}")
    if not art.get("replayable"):
        out(
            "  the failure was outside any single instance (or its instance could not be pickled): running the "
            "whole statement"
        )
        rec = runner.run_statement(st, impl, art["profile"])
        out(f"  verdict: {rec['verdict']}" + (f": {rec.get('detail', '')[:800]}" if rec["verdict"] != "pass" else ""))
        return 0 if rec["verdict"] == "pass" else 1
    calls: dict[str, int] = {}
    log: list = []
    ctx = Context(recording(impl, calls, log), PROFILES[art["profile"]], sid)
    ctx.strict_methods = is_refvi(impl)
    ctx.call_log = log
    ctx.refusals = PROTOCOL_REFUSALS + Capabilities.of(impl).refusals
    ctx.replay = {"site": art["site"], "index": art["index"], "instance": art["instance"]}
    t0 = time.perf_counter()
    verdict, detail = "pass", ""
    try:
        st.claim(ctx)
        verdict, detail = "error", "the replayed instance's site was never reached (the statement changed?)"
    except ReplayDone:
        try:
            ctx.raise_deferred()
        except CheckFailed as exc:
            verdict, detail = "fail", str(exc)
    except CheckFailed as exc:
        verdict, detail = "fail", str(exc)
    except Exception as exc:  # an error inside the implementation, as in a run
        verdict, detail = "error", f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - t0
    out(f"  instance (site {art['site']}, #{art['index']}): {_short(art['instance'])}")
    recorded = {c["method"]: c for c in art["calls"]}
    for c in log[-3:]:
        out(f"  call: {c['method']}({_args_text(c['arguments'])})")
        if "raised" in c:
            out(f"    raised: {c['raised']}")
        else:
            out(f"    returned: {_short(summarize(c.get('returned')), 400)}")
        old = recorded.get(c["method"])
        if old is not None and not _same_arguments(old["arguments"], c["arguments"]):
            out(
                "    (its arguments differ from the recorded call's: the statement draws state shared between "
                "instances; the recorded arguments are in the .npz)"
            )
    if ctx.failures and ctx.failures[0].get("check"):
        chk = ctx.failures[0]["check"]
        out(f"  check: {chk['label']}: {chk['lhs']!r} {chk['relation']} {chk['rhs']!r} ({chk['detail']})")
    out(f"  verdict: {verdict}{': ' + detail[:800] if detail and verdict != 'fail' else ''} ({seconds:.2f} s)")
    return 0 if verdict == "pass" else 1


def _args_text(arguments: dict) -> str:
    return ", ".join(f"{k}={_short(summarize(v), 80)}" for k, v in arguments.items())


def _same_arguments(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (
                isinstance(x, np.ndarray)
                and isinstance(y, np.ndarray)
                and x.shape == y.shape
                and np.array_equal(x, y, equal_nan=True)
            ):
                return False
    return True


def _pickle(obj) -> tuple[np.ndarray, bool]:
    if obj is None:
        return np.zeros(0, dtype=np.uint8), False
    for dumps in _picklers():
        try:
            return np.frombuffer(dumps(obj), dtype=np.uint8), True
        except Exception:  # not picklable by this pickler
            continue
    return np.zeros(0, dtype=np.uint8), False


def _picklers():
    yield lambda o: pickle.dumps(o, protocol=4)
    try:
        import cloudpickle
    except ImportError:
        return
    yield cloudpickle.dumps


def _unpickle(blob: np.ndarray):
    if blob.size == 0:
        return None
    return pickle.loads(blob.tobytes())


def _num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _short(value, limit: int = 300) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + "..."


def _file_stem(sid: str) -> str:
    return sid.replace("/", "_")


def _snippet(sid: str, npz_name: str, impl_spec: str | None, failure: dict, meta: dict) -> str:
    calls = failure.get("calls") or []
    lines = [
        f'"""Reproducer of a failing refvi statement: {sid} ({meta["verdict"]}).',
        "",
        "Replay the failing instance against the oracle (about a second, plus imports):",
        f"    python -m refvi.verification --replay {npz_name} --impl {impl_spec or 'refvi'}",
        "",
        "Or run this file: it makes the failing protocol call again and prints what comes back next to what was",
        'recorded and what the oracle expected."""',
        "",
        "import os",
        "",
        "from refvi.verification.certificate import reproducers",
        "from refvi.verification.protocol.loading import load_implementation",
        "",
        f"art = reproducers.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), {npz_name!r}))",
        "# the implementation, imported from where the run found it (so this file runs from any directory)",
        f"impl = load_implementation({impl_spec!r}, search=(art.get('implementation_path') or '',))",
    ]
    shown = {id(c) for c in telling_calls(calls)}
    for k, call in enumerate(calls):
        if id(call) not in shown:
            continue
        lines += [
            "",
            f"call = art['calls'][{k}]          # {call['method']}",
            "method = reproducers.call_method(impl, call['method'])",
            "try:",
            "    got = method(**call['arguments'])",
            "except Exception as exc:  # the implementation refused or crashed",
            "    got = f'raised {type(exc).__name__}: {exc}'",
            "print('call     :', call['method'], {k: getattr(v, 'shape', v) for k, v in call['arguments'].items()})",
            "print('returned :', got)",
            "print('recorded :', call.get('returned', call.get('raised')))",
        ]
    lines += [
        "print('check    :', art['reproducer'].get('check'))",
        "print('expected :', art['arrays'].get('check.rhs'))",
        "",
    ]
    return "\n".join(lines)
