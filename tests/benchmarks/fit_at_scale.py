"""Do the defaults work at scale?  ``refvi.fit(target)`` on linear and logistic regression at d = 50 .. 500.

    python tests/benchmarks/fit_at_scale.py [--dims 50 100 200 500] [--update-docs] [--gold]

Targets (N = 2d, seed 0): X with iid N(0, 1) entries, beta ~ N(0, 4/d I) (so x^T beta ~ N(0, 4)); the linear
regression y = X beta + e, e ~ N(0, 1), and the logistic regression y = +-1 with P(y = 1) = sigmoid(x^T beta), both
with the prior N(0, I) (``refvi.targets.LinearRegression``, ``LogisticRegression``).

Reference: the exact Gaussian-VI optimum (m*, C*) of :func:`refvi.optim.exact.solve`: closed form for the linear
regression (its posterior), the deterministic fixed point on the quadrature energy for the logistic one (projected
gradient below 1e-10).  The logistic optima take minutes at d = 500, so their means and marginal sds are kept in
``fit_at_scale_gold.npz`` next to this script (with a checksum of the data they belong to; ``--gold`` recomputes
them).

Error: max_i |m_i - m*_i| / sd*_i, sd*_i = (C* C*^T)_ii^(1/2): how far the returned mean is from the optimum's, in
posterior sd of the optimum.  Goal: at most 0.1 at every d, without restarts.

Each row runs the default call ``refvi.fit(target)`` (frame search, loop and diagnostics, everything a user waits
for) and, for comparison, the former fixed budget ``refvi.fit(target, steps=10_000, samples=1)``.  Seconds are the
process's CPU time, single-threaded (the machines are shared: another job's load would otherwise count); on an idle
machine it is the wall time.  Restarts: the frame guard's halvings (notes saying "restarted").
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
import warnings
from pathlib import Path

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from scaling import machine  # noqa: E402

PAGE = ROOT / "docs" / "benchmarks.md"
GOLD = HERE / "fit_at_scale_gold.npz"
START, END = "<!-- fit-at-scale:start -->", "<!-- fit-at-scale:end -->"
DIMS = (50, 100, 200, 500)
TOL = 0.1
_clock = time.process_time


def data(d: int, seed: int = 0):
    """(X, y_linear, y_logistic): N = 2d rows (see the module docstring)."""
    rng = np.random.default_rng(seed)
    N = 2 * d
    X = rng.standard_normal((N, d))
    beta = rng.standard_normal(d) / np.sqrt(d) * 2.0
    y_log = np.where(rng.random(N) < 1 / (1 + np.exp(-X @ beta)), 1.0, -1.0)
    y_lin = X @ beta + np.random.default_rng(seed + 1).standard_normal(N)
    return X, y_lin, y_log


def targets(d: int):
    from refvi.targets import LinearRegression, LogisticRegression

    X, y_lin, y_log = data(d)
    return {"linear": LinearRegression(X, y_lin), "logistic": LogisticRegression(X, y_log)}


def _checksum(t) -> str:
    return hashlib.sha256(np.ascontiguousarray(t.X).tobytes() + np.ascontiguousarray(t.y).tobytes()).hexdigest()[:16]


def gold(kind: str, t, recompute: bool = False):
    """(m*, sd*) of the exact optimum; the logistic ones from the cache when its checksum matches."""
    from refvi.optim import exact

    key = f"{kind}_{t.dim}"
    if kind == "logistic" and not recompute and GOLD.exists():
        z = dict(np.load(GOLD))
        if key + "_m" in z and str(z[key + "_sum"]) == _checksum(t):
            return z[key + "_m"], z[key + "_sd"]
    m, C, _ = exact.solve(t)
    sd = np.sqrt(np.sum(C * C, axis=1))
    if kind == "logistic":
        z = dict(np.load(GOLD)) if GOLD.exists() else {}
        z.update({key + "_m": m, key + "_sd": sd, key + "_sum": np.array(_checksum(t))})
        np.savez_compressed(GOLD, **z)
    return m, sd


def one(t, m, sd, **options) -> dict:
    import refvi

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c0 = _clock()
        r = refvi.fit(t, **options)
        secs = _clock() - c0
    return {
        "seconds": secs,
        "steps": int(r.steps),
        "samples": int(r.samples),
        "restarts": sum("restarted" in n for n in r.notes),
        "err": float(np.max(np.abs(r.m - m) / sd)),
        "sd_err": float(np.max(np.abs(np.sqrt(np.sum(r.C * r.C, axis=1)) / sd - 1.0))),
        "warned": bool(caught),
    }


def run(dims=DIMS, recompute: bool = False, log=print) -> dict:
    import refvi

    with warnings.catch_warnings():  # compile outside the timings (Numba's cache): short runs, warnings expected
        warnings.simplefilter("ignore")
        for t in targets(5).values():
            refvi.fit(t, steps=20)
            refvi.fit(t, steps=20, samples=2)
    rows = []
    for d in dims:
        for kind, t in targets(d).items():
            m, sd = gold(kind, t, recompute)
            row = {"kind": kind, "d": d, "N": 2 * d}
            row["default"] = one(t, m, sd)
            row["fixed"] = one(t, m, sd, steps=10_000, samples=1)
            rows.append(row)
            log(line(row))
    return {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "load_average": os.getloadavg()[0],
        "refvi": refvi.__version__,
        "rows": rows,
    }


def line(row) -> str:
    a, b = row["default"], row["fixed"]
    return (
        f"{row['kind']:8s} d={row['d']:4d} N={row['N']:5d} | default: {a['steps']} x S={a['samples']} "
        f"{a['seconds']:6.1f} s restarts {a['restarts']} err {a['err']:.3f} sd | 10,000 x S=1: "
        f"{b['seconds']:6.1f} s restarts {b['restarts']} err {b['err']:.3f} sd"
    )


def markdown(rep: dict) -> str:
    head = (
        f"Measured {rep['date']} on {rep['machine']} (load average {rep['load_average']:.1f} at the start; "
        f"single-threaded, every time the process's CPU time; refvi {rep['refvi']}).  "
        f"`python tests/benchmarks/fit_at_scale.py --update-docs` regenerates this block.\n\n"
        "| target | d | N | default budget (steps x samples) | seconds | restarts | max error (sd) "
        "| 10,000 x 1: seconds | restarts | max error (sd) |\n|---|---|---|---|---|---|---|---|---|---|\n"
    )
    body = ""
    for r in rep["rows"]:
        a, b = r["default"], r["fixed"]
        body += (
            f"| {r['kind']} | {r['d']} | {r['N']:,} | {a['steps']:,} x {a['samples']} | {a['seconds']:.1f} | "
            f"{a['restarts']} | {a['err']:.3f} | {b['seconds']:.1f} | {b['restarts']} | {b['err']:.3f} |\n"
        )
    met = all(r["default"]["err"] <= TOL and r["default"]["restarts"] == 0 for r in rep["rows"])
    tail = (
        f"\nGoal, `refvi.fit(target)` within {TOL} posterior sd of the exact optimum without restarts at every size: "
        + ("met." if met else "**not met**.")
    )
    return head + body + tail


def update_page(block: str, path: Path = PAGE) -> None:
    text = path.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{path}: markers {START} / {END} not found")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{START}\n{block}\n{END}{tail}", encoding="utf-8")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dims", type=int, nargs="+", default=list(DIMS))
    p.add_argument("--update-docs", action="store_true")
    p.add_argument("--gold", action="store_true", help="recompute the cached logistic optima")
    args = p.parse_args(argv)
    rep = run(args.dims, args.gold)
    block = markdown(rep)
    print(block)
    if args.update_docs:
        update_page(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
