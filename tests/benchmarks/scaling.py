"""Cost as the work grows: refvi's step against the arithmetic floor, and time to 0.1 sd against NumPyro, over d and N.

    python tests/benchmarks/scaling.py [--update-docs] [--dims 5 20 ...] [--cap 20] [--tiny] [--from-json PATH]

The posterior is a Bayesian linear regression, y = X beta + e, e ~ N(0, I), beta ~ N(0, 10^2 I), X with iid N(0, 1)
entries (``refvi.targets.LinearRegression``): its posterior N(mu, Sigma) is exact and is also the optimum of
Gaussian VI, so the error of a fit is known exactly.  Sizes: d in {5, 20, 50, 100, 200, 500} with N = max(2d, 500),
and N in {200, 1000, 5000} at d = 100.  Everything runs single-threaded (Numba, BLAS, XLA) in one process, and
every ratio is of two times measured in that run.  Every time is CPU time of the process (``time.process_time``):
the machines are shared, and another job's load would otherwise count against whichever contestant ran during it;
single-threaded on an idle machine it is the wall time.

Per step (microseconds; S = 1 sample):

* ``fused``: ``refvi.fit`` on the built-in ``LinearRegression``, default method (Prox-SGD, triangular C, energy
  estimator) in the Laplace frame, whose loop is the fused kernel of ``refvi.kernels.framed``; ``proj``: the same
  with ``method="proj-sgd"`` (symmetric C, one eigendecomposition a step).  The per-step time is the difference of
  two end-to-end calls with the frame given (found once, so no search), one trace point and no diagnostics, at
  T1 and T1 + n steps (n = 300 for Prox-SGD, more where 300 floor steps take less than 0.1 s; fewer for Proj-SGD
  at large d), best of 3 each, interleaved.
* ``user``: the same for a user's model, ``CallableTarget`` with ``numba.njit`` log p and gradient of one point (the
  fused loop of ``refvi.kernels.fused``).
* ``numpyro``: NumPyro ``AutoMultivariateNormal`` + ``Trace_ELBO`` + Adam on the same model (``beta ~ Normal``,
  ``y ~ Normal(X beta, 1)``), K = 100 steps of ``svi.update`` in one jitted ``lax.fori_loop`` (what ``svi.run``
  does without a progress bar), best of 3 chunks; its compilation is excluded and reported apart.
* ``floor``: the step's unavoidable arithmetic timed alone with NumPy / BLAS: draw z = C u + m (``dtrmv``), the
  gradient X^T (y - X z) - z / 10^2 (two ``dgemv``), the rank-one d x d update of C (``dger``); ``floor_proj`` adds
  one ``numpy.linalg.eigh`` of a symmetric d x d matrix (Proj-SGD's projection).  Best of 5 means over n calls.

Time to 0.1 sd: the wall time until max_i |m_i - mu_i| / sd_i <= 0.1 (sd_i = Sigma_ii^(1/2)); the marginal sds of the
fit relative to the exact ones are recorded at that moment.  Compilation is excluded for every contestant (a warm-up
call first) and reported apart.

* ``refvi.fit`` with defaults (the Laplace frame searched each call, diagnostics included), built-in and user model:
  the shortest run on the grid T = 10, 20, 50, 100, 200, 500, ... that reaches the accuracy, timed end to end.  On
  this posterior the Laplace frame *is* the exact posterior (mode and Hessian of a Gaussian), so this measures
  the frame search more than the optimizer;
* ``refvi.fit(frame=None)``: the plain Prox-SGD of seed 000 from N(0, I) in the original coordinates with its
  default steps (the optimizer alone, no preconditioning), on the same grid;
* NumPyro: Adam at each learning rate of ``--lrs`` (default 1e-3 and 3e-4: at d = 20 and 100, 1e-2, 3e-3 and 1e-3
  stalled above 0.1 sd, their last iterate jittering by about the learning rate while the posterior sd is about
  0.05, and 1e-4 took 3.5 times as long as 3e-4 at d = 20), the guide's loc read after every K = 100 steps (the
  reading's time excluded); the fastest learning rate is reported, the others are in the JSON.

Each contestant stops at ``--cap`` seconds of its own time; a contestant that has not reached the accuracy by then is
reported as "> cap" with its error at the cap.

Writes ``docs/figures/scaling.json`` and ``docs/figures/scaling.png`` and, with ``--update-docs``, rewrites the
block between ``<!-- scaling:start -->`` and ``<!-- scaling:end -->`` of docs/benchmarks.md.  ``--tiny`` (d = 5,
a few steps, short caps) only checks that the script runs; it writes nothing unless told where.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings
from pathlib import Path

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

#: every time here is CPU time of this process (the machines are shared: another session's load would otherwise count
#: against whoever ran during it); single-threaded, on an idle machine, it is the wall time
_clock = time.process_time

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PAGE = ROOT / "docs" / "benchmarks.md"
FIGURES = ROOT / "docs" / "figures"
START, END = "<!-- scaling:start -->", "<!-- scaling:end -->"

NOISE, PRIOR = 1.0, 10.0
DIMS = (5, 20, 50, 100, 200, 500)
SWEEP_D, SWEEP_N = 100, (200, 1000, 5000)
TOL = 0.1
GRID = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000)
LRS = (0.001, 0.0003)
CHUNK = 100


# ------------------------------------------------------------------------------------------------ the posterior
def problem(d: int, N: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([d, N])
    X = rng.standard_normal((N, d))
    y = X @ rng.standard_normal(d) + NOISE * rng.standard_normal(N)
    return X, y


def builtin_target(X, y):
    from refvi.targets import LinearRegression

    return LinearRegression(X, y, noise_scale=NOISE, prior_scale=PRIOR)


def user_target(X, y):
    """What a user writes: numba.njit log p and gradient of one point (constants dropped), in a CallableTarget."""
    import numba

    from refvi.targets import CallableTarget

    ip, iv = PRIOR**-2, NOISE**-2

    @numba.njit
    def logp(z):
        r = y - X @ z
        return -0.5 * iv * (r @ r) - 0.5 * ip * (z @ z)

    @numba.njit
    def grad_logp(z):
        return iv * (X.T @ (y - X @ z)) - ip * z

    return CallableTarget(logp, grad_logp, X.shape[1])


class Exact:
    def __init__(self, X, y):
        t = builtin_target(X, y)
        self.mu, self.Sigma = t.posterior_mean, t.posterior_cov
        self.sd = np.sqrt(np.diag(self.Sigma))

    def score(self, m, C) -> tuple[float, list[float]]:
        """(max |m - mu| / sd, [min, max] of the fit's marginal sd / exact sd)."""
        m, C = np.asarray(m, dtype=float), np.asarray(C, dtype=float)
        if not (np.all(np.isfinite(m)) and np.all(np.isfinite(C))):
            return math.inf, [math.nan, math.nan]
        r = np.sqrt(np.einsum("ij,ij->i", C, C)) / self.sd
        return float(np.max(np.abs(m - self.mu) / self.sd)), [float(r.min()), float(r.max())]


# ------------------------------------------------------------------------------------------------ timing helpers
def _best_mean(fn, n: int, repeats: int) -> float:
    """Minimum over ``repeats`` of the mean time of ``n`` calls, in microseconds."""
    best = math.inf
    for _ in range(repeats):
        t0 = _clock()
        for _ in range(n):
            fn()
        best = min(best, (_clock() - t0) / n)
    return best * 1e6


def _wall(fn) -> tuple[float, object]:
    t0 = _clock()
    out = fn()
    return _clock() - t0, out


# ------------------------------------------------------------------------------------------------ the floor
def floor(X, y, repeats: int = 5, tiny: bool = False) -> dict:
    """The step's unavoidable arithmetic with NumPy / BLAS: (prox step, eigh) in microseconds."""
    from scipy.linalg import blas

    N, d = X.shape
    rng = np.random.default_rng(1)
    C = np.asfortranarray(np.tril(rng.standard_normal((d, d))) / math.sqrt(d) + np.eye(d))
    m, u = rng.standard_normal(d), rng.standard_normal(d)
    Xf = np.ascontiguousarray(X)
    ip, iv = PRIOR**-2, NOISE**-2

    def step():
        z = blas.dtrmv(C, u, lower=1) + m  # the draw z = C u + m
        g = iv * (Xf.T @ (y - Xf @ z)) - ip * z  # -grad of -log p: two matrix-vector products
        blas.dger(-1e-12, g, u, a=C, overwrite_a=1)  # C - gamma g u^T: the d x d update, in place

    A = rng.standard_normal((d, d))
    A = A @ A.T / d + np.eye(d)
    step_us = _best_mean(step, 20 if tiny else 200, repeats)
    n_eigh = 3 if tiny else max(3, min(100, int(0.3e6 / max(step_us, 1.0))))
    eigh_us = _best_mean(lambda: np.linalg.eigh(A), n_eigh, 3)
    return {"prox_us": step_us, "eigh_us": eigh_us, "proj_us": step_us + eigh_us}


# ------------------------------------------------------------------------------------------------ refvi
def refvi_per_step(target, method: str, n: int, t1: int, repeats: int = 3) -> dict:
    """Per-step time of refvi.fit in a fixed frame: (wall(t1 + n) - wall(t1)) / n, best of ``repeats`` each."""
    import refvi

    kw = dict(method=method, progress=False, diagnose=0, seed=0)
    first, r0 = _wall(lambda: refvi.fit(target, steps=t1, **kw))  # compiles; finds the frame
    frame = r0.frame
    short, long = math.inf, math.inf
    for _ in range(repeats):
        short = min(short, _wall(lambda: refvi.fit(target, steps=t1, frame=frame, trace_every=t1, **kw))[0])
        long = min(long, _wall(lambda: refvi.fit(target, steps=t1 + n, frame=frame, trace_every=t1 + n, **kw))[0])
    return {"us": 1e6 * (long - short) / n, "n": n, "t1": t1, "first_call_s": first, "fast_path": bool(r0.fast_path)}


def refvi_time_to_accuracy(target, exact: Exact, cap: float, grid=GRID, **kw) -> dict:
    """The shortest run on ``grid`` whose result is within TOL sd, timed end to end (compile excluded)."""
    import refvi

    kw = dict(progress=False, seed=0, **kw)
    warm, _ = _wall(lambda: refvi.fit(target, steps=grid[0], **kw))  # compiles
    spent, last = 0.0, None
    for T in grid:
        wall, res = _wall(lambda: refvi.fit(target, steps=T, **kw))  # noqa: B023
        spent += wall
        err, sd = exact.score(res.m, res.C)
        last = {"steps": T, "wall_s": wall, "err": err, "sd_ratio": sd}
        if err <= TOL:
            return {"reached": True, "time_s": wall, **last, "first_call_s": warm, "tried_s": spent}
        if spent + 2.5 * wall > cap:  # the next run (about 2.5x as long) would pass the cap
            break
    return {"reached": False, "time_s": None, **last, "first_call_s": warm, "tried_s": spent}


# ------------------------------------------------------------------------------------------------ NumPyro
def have_numpyro() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("jax", "numpyro"))


class NumPyro:
    """AutoMultivariateNormal + Trace_ELBO + Adam(lr) on the same model; K steps a jitted fori_loop."""

    def __init__(self, X, y, lr: float, seed: int = 0, chunk: int = CHUNK):
        import jax
        import jax.numpy as jnp
        import numpyro
        import numpyro.distributions as dist
        from numpyro.infer import SVI, Trace_ELBO
        from numpyro.infer.autoguide import AutoMultivariateNormal

        jax.config.update("jax_enable_x64", True)
        Xj, yj, d = jnp.asarray(X), jnp.asarray(y), X.shape[1]

        def model():
            beta = numpyro.sample("beta", dist.Normal(0.0, PRIOR).expand([d]).to_event(1))
            numpyro.sample("y", dist.Normal(Xj @ beta, NOISE), obs=yj)

        self.jax, self.chunk = jax, chunk
        self.svi = SVI(model, AutoMultivariateNormal(model), numpyro.optim.Adam(lr), Trace_ELBO())
        t0 = _clock()
        self.state = self.svi.init(jax.random.PRNGKey(seed))
        svi = self.svi

        def k_steps(state):
            return jax.lax.fori_loop(0, chunk, lambda i, s: svi.update(s)[0], state)

        self._k = jax.jit(k_steps).lower(self.state).compile()  # ahead of time: no step taken
        self.first_call_s = _clock() - t0  # init and compilation
        self.steps = 0

    def run_chunk(self) -> float:
        t0 = _clock()
        self.state = self._k(self.state)
        self.jax.block_until_ready(self.state)
        self.steps += self.chunk
        return _clock() - t0

    def mC(self):
        p = self.svi.get_params(self.state)
        return np.asarray(p["auto_loc"], dtype=float), np.asarray(p["auto_scale_tril"], dtype=float)


def numpyro_per_step(X, y, repeats: int = 3) -> dict:
    run = NumPyro(X, y, lr=0.01)
    best = min(run.run_chunk() for _ in range(repeats))
    return {"us": 1e6 * best / run.chunk, "n": run.chunk, "compile_s": run.first_call_s}


def numpyro_time_to_accuracy(X, y, exact: Exact, lr: float, cap: float) -> dict:
    run = NumPyro(X, y, lr=lr)
    spent, wall0 = 0.0, _clock()
    err, sd = exact.score(*run.mC())
    while err > TOL and spent < cap and _clock() - wall0 < 3 * cap:
        spent += run.run_chunk()
        err, sd = exact.score(*run.mC())
    reached = err <= TOL
    return {
        "lr": lr,
        "reached": reached,
        "time_s": spent if reached else None,
        "steps": run.steps,
        "err": err,
        "sd_ratio": sd,
        "tried_s": spent,
        "first_call_s": run.first_call_s,
    }


# ------------------------------------------------------------------------------------------------ one size
WHO = ("fused", "user", "proj", "plain", "numpyro")
TINY_WHO = ("fused", "plain")  # the compiled kernels come from Numba's cache: seconds, not a minute


def measure(d: int, N: int, cap: float, lrs=LRS, tiny: bool = False, who=WHO, log=print) -> dict:
    X, y = problem(d, N)
    exact = Exact(X, y)
    bt = builtin_target(X, y)
    ut = user_target(X, y) if "user" in who else None
    numpyro = "numpyro" in who and have_numpyro()
    row: dict = {"d": d, "N": N}
    fl = floor(X, y, tiny=tiny)
    row["floor"] = fl
    n_prox = 20 if tiny else max(300, int(1e5 / fl["prox_us"]))  # at least 0.1 s of floor: well above the setup's noise
    n_proj = 5 if tiny else int(min(300, max(20, 1.5e6 / fl["eigh_us"])))
    t1 = 5 if tiny else 50
    per = {"fused": refvi_per_step(bt, "prox-sgd", n_prox, t1)}
    if ut is not None:
        per["user"] = refvi_per_step(ut, "prox-sgd", n_prox, t1)
    if "proj" in who:
        per["proj"] = refvi_per_step(bt, "proj-sgd", n_proj, 5 if tiny else 10)
    if numpyro:
        per["numpyro"] = numpyro_per_step(X, y)
    row["per_step"] = per
    log(
        f"  d={d} N={N} per step (us): "
        + ", ".join(f"{k} {v['us']:.1f}" for k, v in per.items())
        + f"; floor {fl['prox_us']:.1f}, with eigh {fl['proj_us']:.1f}"
    )
    grid = GRID[:3] if tiny else GRID
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short run's failed diagnostics warn; the score below is what counts
        tta = {"fused": refvi_time_to_accuracy(bt, exact, cap, grid)}
        if ut is not None:
            tta["user"] = refvi_time_to_accuracy(ut, exact, cap, grid)
        if "plain" in who:
            tta["plain"] = refvi_time_to_accuracy(bt, exact, cap, grid, frame=None)
    if numpyro:
        runs = [numpyro_time_to_accuracy(X, y, exact, lr, cap) for lr in lrs]
        done = [r for r in runs if r["reached"]]
        best = min(done, key=lambda r: r["time_s"]) if done else min(runs, key=lambda r: r["err"])
        tta["numpyro"] = {**best, "all_lrs": runs}
    row["time_to_accuracy"] = tta
    log(f"  d={d} N={N} time to {TOL} sd (s): " + ", ".join(f"{k} {_t(v)}" for k, v in tta.items()))
    return row


def _t(r: dict) -> str:
    return f"{r['time_s']:.3g}" if r["reached"] else f"> {r['tried_s']:.3g} (err {r['err']:.3g})"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}"


def run(dims=DIMS, sweep=True, cap: float = 10.0, lrs=LRS, tiny: bool = False, who=WHO, log=print) -> dict:
    import numpy

    import refvi

    versions = {"refvi": refvi.__version__, "numpy": numpy.__version__}
    if "numpyro" in who and have_numpyro():  # importing JAX costs seconds: only when it runs
        import jax
        import numpyro

        versions.update(jax=jax.__version__, numpyro=numpyro.__version__)
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "load_average": os.getloadavg()[0],
        "versions": versions,
        "cap_s": cap,
        "tol_sd": TOL,
        "lrs": list(lrs),
        "tiny": tiny,
        "who": list(who),
        "rows": [],
    }
    sizes = [(d, max(2 * d, 500)) for d in dims]
    if sweep:
        sizes += [(SWEEP_D, n) for n in SWEEP_N]
    t0 = _clock()
    for d, N in sizes:
        report["rows"].append(measure(d, N, cap, lrs=lrs, tiny=tiny, who=who, log=log))
    report["seconds"] = _clock() - t0
    return report


# ------------------------------------------------------------------------------------------------ output
def _tt(r: dict | None) -> str:
    if r is None:
        return "—"
    if r["reached"]:
        return f"{r['time_s']:.3g} s"
    return f"> {r['tried_s']:.3g} s ({r['err']:.2g} sd)"


def _verdict(me: dict | None, other: dict) -> str:
    if me is None:
        return "not measured"
    if me["reached"] and (not other["reached"] or me["time_s"] < other["time_s"]):
        return "ahead"
    if not me["reached"] and not other["reached"]:
        return "neither reached"
    return "behind"


def goals(report: dict) -> dict:
    """The two goals, checked on the report: fused step <= 3x floor at d >= 100; ahead of NumPyro at every size."""
    step = [
        (r["d"], r["N"], r["per_step"]["fused"]["us"] / r["floor"]["prox_us"]) for r in report["rows"] if r["d"] >= 100
    ]
    ahead = {"fused": [], "plain": []}
    for r in report["rows"]:
        other = r["time_to_accuracy"].get("numpyro")
        if other is not None:
            for who in ahead:
                ahead[who].append((r["d"], r["N"], _verdict(r["time_to_accuracy"].get(who), other)))
    return {
        "step_ratio": step,
        "step_goal_met": bool(step) and all(x <= 3.0 for *_, x in step),
        "ahead": ahead,
        "ahead_goal_met": {w: bool(v) and all(x == "ahead" for *_, x in v) for w, v in ahead.items()},
    }


def _us(p: dict | None, floor_us: float) -> str:
    return "—" if p is None else f"{p['us']:.1f} ({p['us'] / floor_us:.2f})"


def _cell(r: dict | None) -> str:
    if r is None:
        return "—"
    if not r["reached"]:
        return f"> {r['tried_s']:.3g} s ({r['err']:.2g} sd)"
    return f"{r['time_s']:.3g} s ({r['sd_ratio'][0]:.2f} – {r['sd_ratio'][1]:.2f})"


def markdown(report: dict) -> str:
    v = report["versions"]
    out = [
        f"Measured {report['date']} on {report['machine']} (load average {report['load_average']:.1f} at the "
        f"start; single-threaded Numba, BLAS and XLA, every time the process's CPU time; refvi {v['refvi']}, NumPy {v['numpy']}"
        + (f", JAX {v['jax']}, NumPyro {v['numpyro']}" if "numpyro" in v else "")
        + f"; {report['seconds'] / 60:.1f} minutes of CPU in all). `python tests/benchmarks/scaling.py --update-docs` "
        "regenerates this block, `docs/figures/scaling.json` and the figure.",
        "",
        "![per-step time and time to 0.1 sd against d and N](figures/scaling.png)",
        "",
        "Per step, S = 1, µs, and in brackets the ratio to the floor: the draw C u + m, the gradient "
        "X^T (y - X z) - z / 10^2 and the rank-one update of C with NumPy / BLAS (`dtrmv`, two `dgemv`, `dger`), "
        "and for Proj-SGD the same with one `numpy.linalg.eigh`. At small d the floor is mostly NumPy's cost per "
        "call, which a compiled loop does not pay.",
        "",
        "| d | N | floor | refvi fused loop | user njit model | NumPyro ADVI | floor + `eigh` | refvi Proj-SGD |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        f, p = r["floor"], r["per_step"]
        out.append(
            f"| {r['d']} | {r['N']:,} | {f['prox_us']:.1f} | {_us(p['fused'], f['prox_us'])} | "
            f"{_us(p.get('user'), f['prox_us'])} | {_us(p.get('numpyro'), f['prox_us'])} | "
            f"{f['proj_us']:.1f} | {_us(p.get('proj'), f['proj_us'])} |"
        )
    out += [
        "",
        "First call, s of CPU, left out of the per-step times and the times to accuracy: refvi's first `fit` on "
        "each target (frame search included; the first size's also loads the compiled kernels from Numba's cache; "
        "a user's model compiles its own two functions) and NumPyro's `svi.init` with the compilation of its jitted "
        "steps:",
        "",
        "| d | N | refvi fused loop | user njit model | NumPyro ADVI |",
        "|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        p = r["per_step"]
        first = [
            p[k].get("first_call_s", p[k].get("compile_s")) if k in p else None for k in ("fused", "user", "numpyro")
        ]
        out.append(f"| {r['d']} | {r['N']:,} | " + " | ".join("—" if x is None else f"{x:.2f}" for x in first) + " |")
    out += [
        "",
        f"Time to {report['tol_sd']} sd (max over coordinates of \\|mean error\\| / posterior sd), "
        f"compilation excluded, at most {report['cap_s']:g} s each; in brackets the fit's marginal sd / exact sd "
        "at that moment, or its error when the cap came first:",
        "",
        "| d | N | refvi.fit defaults | user njit model, defaults | refvi.fit, frame=None | NumPyro ADVI, best lr "
        "| its lr | NumPyro / refvi defaults |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        t = r["time_to_accuracy"]
        npy, me = t.get("numpyro"), t["fused"]
        ratio = "—"
        if npy and me["reached"]:
            ratio = (
                f"{npy['time_s'] / me['time_s']:.3g}" if npy["reached"] else f"> {npy['tried_s'] / me['time_s']:.3g}"
            )
        out.append(
            f"| {r['d']} | {r['N']:,} | {_cell(me)} | {_cell(t.get('user'))} | {_cell(t.get('plain'))} | "
            f"{_cell(npy)} | {npy['lr'] if npy else '—'} | {ratio} |"
        )
    out += [
        "",
        "On this posterior the Laplace frame that `refvi.fit` finds by default (mode and Hessian of log p) is "
        "the exact posterior, so the defaults' time is mostly the frame search and the diagnostics, whole calls "
        "timed end to end; `frame=None` is the optimizer alone, from N(0, I) with its default steps. NumPyro's "
        "time counts only its SVI steps (reading the guide excluded).",
    ]
    for who, label in (("numpyro", "NumPyro's"), ("fused", "refvi's (defaults)")):
        hit = [r["time_to_accuracy"][who] for r in report["rows"] if who in r["time_to_accuracy"]]
        hit = [t for t in hit if t["reached"]]
        if hit:
            off = sum(1 for t in hit if max(abs(t["sd_ratio"][0] - 1), abs(t["sd_ratio"][1] - 1)) > 0.1)
            out[-1] += (
                f" When {label} mean reached {report['tol_sd']} sd, its marginal sds were more than 10 % "
                f"off at {off} of the {len(hit)} sizes where it got there."
            )
    g = goals(report)
    ratios = ", ".join(f"{x:.2f} at d = {d}, N = {n:,}" for d, n, x in g["step_ratio"])
    out += [
        "",
        "Goal, a fused-loop step within 3x of the floor at d ≥ 100: "
        + ("met" if g["step_goal_met"] else "**not met**")
        + (f" (fused loop / floor: {ratios})." if ratios else " (no size with d ≥ 100 in this run)."),
    ]
    for who, label in (("fused", "refvi.fit with its defaults"), ("plain", "refvi.fit(frame=None)")):
        rows = g["ahead"][who]
        if not rows:
            continue
        bad = [f"d = {d}, N = {n:,} ({x})" for d, n, x in rows if x != "ahead"]
        out.append(
            f"Goal, ahead of NumPyro in time to {report['tol_sd']} sd at every size, {label}: "
            + ("met." if g["ahead_goal_met"][who] else f"**not met** at {'; '.join(bad)}.")
        )
    return "\n".join(out)


def _ticks(ax, values) -> None:
    from matplotlib.ticker import NullFormatter

    ax.set_xticks(sorted(set(values)))
    ax.set_xticklabels([f"{v:,}" for v in sorted(set(values))])
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot(report: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("scaling: matplotlib is not installed; no figure", file=sys.stderr)
        return False
    rows = [r for r in report["rows"] if r["N"] == max(2 * r["d"], 500)]
    sweep = sorted((r for r in report["rows"] if r["d"] == SWEEP_D), key=lambda r: r["N"])
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.6))
    per = [
        ("floor", "floor", "prox_us", "k--"),
        ("refvi fused loop", "per_step", "fused", "C0o-"),
        ("user njit model", "per_step", "user", "C1s-"),
        ("NumPyro ADVI", "per_step", "numpyro", "C3D-"),
        ("floor + eigh", "floor", "proj_us", "k:"),
        ("refvi Proj-SGD", "per_step", "proj", "C2^-"),
    ]

    def value(r, group, key):
        v = r[group].get(key)
        return v["us"] if isinstance(v, dict) else v

    for panel, rs, x, xlabel in ((ax[0], rows, "d", "d (N = max(2d, 500))"), (ax[2], sweep, "N", f"N (d = {SWEEP_D})")):
        for label, group, key, style in per:
            if rs and all(value(r, group, key) is not None for r in rs):
                panel.loglog([r[x] for r in rs], [value(r, group, key) for r in rs], style, label=label)
        panel.set(xlabel=xlabel, ylabel="µs per step", title=f"per step, S = 1, against {x}")
        if rs:
            _ticks(panel, [r[x] for r in rs])
            panel.legend(fontsize=8)
    for label, key, style in (
        ("refvi.fit defaults", "fused", "C0o-"),
        ("user njit model", "user", "C1s-"),
        ("refvi.fit, frame=None", "plain", "C4v-"),
        ("NumPyro ADVI, best lr", "numpyro", "C3D-"),
    ):
        if not rows or not all(key in r["time_to_accuracy"] for r in rows):
            continue
        tt = [r["time_to_accuracy"][key] for r in rows]
        ax[1].loglog(
            [r["d"] for r in rows], [t["time_s"] if t["reached"] else t["tried_s"] for t in tt], style, label=label
        )
        missed = [(r["d"], t["tried_s"]) for r, t in zip(rows, tt, strict=True) if not t["reached"]]
        if missed:
            ax[1].loglog(*zip(*missed, strict=True), "x", color=style[:2], markersize=11)
    ax[1].set(
        xlabel="d (N = max(2d, 500))", ylabel="seconds", title=f"time to {report['tol_sd']} sd (x: cap reached first)"
    )
    if rows:
        _ticks(ax[1], [r["d"] for r in rows])
    ax[1].legend(fontsize=8)
    fig.suptitle(
        f"Bayesian linear regression, S = 1, single-threaded; {report['date']}, {report['machine']}", fontsize=10
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def update_page(block: str, path: Path = PAGE) -> bool:
    """Rewrite the block between the markers; True if it changed."""
    from refvi import _atomic

    text = path.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{path}: markers {START} / {END} not found")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{START}\n{block}\n{END}{tail}"
    if new != text:
        _atomic.write_text(path, new)
    return new != text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dims", type=int, nargs="+", default=list(DIMS))
    ap.add_argument("--no-sweep", action="store_true", help=f"skip the N sweep at d = {SWEEP_D}")
    ap.add_argument("--cap", type=float, default=10.0, help="seconds each contestant may spend reaching the accuracy")
    ap.add_argument("--lrs", type=float, nargs="+", default=list(LRS), help="NumPyro's Adam learning rates")
    ap.add_argument("--who", nargs="+", choices=WHO, help=f"contestants (default: all; with --tiny: {TINY_WHO})")
    ap.add_argument("--tiny", action="store_true", help="d = 5, a few steps, short caps: checks that the script runs")
    ap.add_argument("--json", type=Path, help="where to write the report (default with --update-docs: docs/figures)")
    ap.add_argument("--plot", type=Path, help="where to draw the figure (default with --update-docs: docs/figures)")
    ap.add_argument("--from-json", type=Path, help="render a saved report instead of measuring")
    ap.add_argument("--update-docs", action="store_true", help="write the JSON, the figure and the page's block")
    ap.add_argument("--page", type=Path, default=PAGE, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.update_docs and a.tiny and not (a.json and a.plot and a.page != PAGE):
        raise SystemExit("--tiny writes only where it is told: give --json, --plot and --page with --update-docs")
    if a.from_json:
        report = json.loads(a.from_json.read_text())
    elif a.tiny:
        report = run(dims=(5,), sweep=False, cap=1.0, lrs=a.lrs[:1], tiny=True, who=a.who or TINY_WHO)
    else:
        report = run(dims=a.dims, sweep=not a.no_sweep, cap=a.cap, lrs=a.lrs, who=a.who or WHO)
    if a.update_docs:
        a.json = a.json or FIGURES / "scaling.json"
        a.plot = a.plot or FIGURES / "scaling.png"
    if a.json and not a.from_json:
        from refvi import _atomic

        _atomic.write_text(a.json, json.dumps(report, indent=1) + "\n")
    if a.plot:
        plot(report, a.plot)
    block = markdown(report)
    print(block)
    if a.update_docs:
        update_page(block, a.page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
