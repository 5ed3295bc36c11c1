"""refvi against the posteriordb gold standard and against NumPyro, on the ten bundled posteriors.

    python tests/benchmarks/posteriordb_benchmark.py [--steps 10000] [--out docs/figures]

For each posterior: ``refvi.fit(target, steps=10_000, seed=0)`` with every other argument at its default (the
Laplace frame, Prox-SGD, S = 1), timed end to end (frame search included); the error is the max over constrained
parameters of |mean - reference mean| / reference sd and the range of sd / reference sd, both of the approximation's
pushforward (:func:`refvi.targets.posteriordb.pushforward_moments`).  NumPyro (optional: skipped when it is not
installed) fits AutoMultivariateNormal with Adam (lr 0.01) to the *same* unconstrained density, written in JAX
below, for the same wall time as refvi (its JIT compilation excluded, which favours it), and for 10,000 steps.
Where a Gaussian cannot match the posterior (eight schools, the GP), a long refvi run (S = 16, 60,000 steps) gives
the KL-optimal moments a Gaussian reaches.  Writes ``posteriordb.json`` and ``posteriordb.png`` under ``--out`` and
prints the README table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import pathlib
import time
import warnings

import numpy as np

import refvi
from refvi import _atomic
from refvi.targets import posteriordb as P
from refvi.targets.posteriordb.models import LINEAR_REGRESSIONS

SHORT = {"sblrc-blr": "sblrc-blr", "kidiq-kidscore_momhs": "kidiq momhs", "kidiq-kidscore_interaction":
         "kidiq interaction", "mesquite-logmesquite": "mesquite", "earnings-logearn_interaction": "earnings",
         "nes1972-nes": "nes1972", "arK-arK": "arK", "diamonds-diamonds": "diamonds",
         "eight_schools-eight_schools_noncentered": "eight schools (nc)", "gp_pois_regr-gp_pois_regr": "GP Poisson"}


def score(t, m, C):
    mean, sd = P.pushforward_moments(t, m, C)
    ref = t.reference
    return float(np.max(np.abs(mean - ref["mean"]) / ref["sd"])), (sd / ref["sd"]).tolist()


def run_refvi(name, steps=10_000, samples=1, seed=0):
    t = P.load(name)
    t0 = time.perf_counter()
    r = refvi.fit(t, steps=steps, samples=samples, seed=seed)
    wall = time.perf_counter() - t0
    err, ratio = score(t, r.m, r.C)
    return {"err": err, "sd_ratio": ratio, "wall": wall, "notes": r.notes, "m": r.m.tolist(), "C": r.C.tolist()}


# ------------------------------------------------------------------------------------------------------ NumPyro
def jax_logp(name):
    """The same unconstrained log density as refvi's kernel, in JAX (constants included)."""
    import jax.numpy as jnp
    from jax.scipy import stats as js

    t = P.load(name)
    if name in LINEAR_REGRESSIONS:
        A, b, yy, N, bk, bl, bs, bdf, sk, ss, sdf = (np.asarray(a) for a in t._args)
        A, b = jnp.asarray(A), jnp.asarray(b)

        def prior(kind, x, loc, scale, df):
            df = jnp.where(df > 0, df, 1.0)                # no NaN in the unused branches (their gradients)
            return jnp.where(kind == 1, js.norm.logpdf(x, loc, scale),
                             jnp.where(kind == 2, js.t.logpdf(x, df, loc, scale),
                                       jnp.where(kind == 3, js.cauchy.logpdf(x, loc, scale), 0.0)))

        bk, bl, bs, bdf = (jnp.asarray(a) for a in (bk, bl, bs, bdf))

        def logp(z):
            beta, ls = z[:-1], z[-1]
            s = jnp.exp(ls)
            quad = yy - 2 * beta @ b + beta @ A @ beta
            ll = -N * ls - 0.5 * N * math.log(2 * math.pi) - 0.5 * quad / s**2
            lps = jnp.where(int(sk) == 0, 0.0, prior(int(sk), s, 0.0, float(ss), float(sdf)) + math.log(2.0))
            return ll + jnp.sum(prior(bk, beta, bl, bs, bdf)) + lps + ls
        return logp
    if name.startswith("eight"):
        y, sig = (jnp.asarray(a) for a in t._args)

        def logp(z):
            tt, mu, lt = z[:8], z[8], z[9]
            tau = jnp.exp(lt)
            return (js.norm.logpdf(tt).sum() + js.norm.logpdf(mu, 0, 5) + js.cauchy.logpdf(tau, 0, 5) + math.log(2)
                    + lt + js.norm.logpdf(y, mu + tau * tt, sig).sum())
        return logp
    x, k, lgk = t._args
    x, k = jnp.asarray(x), jnp.asarray(k)

    def logp(z):
        rho, alpha = jnp.exp(z[0]), jnp.exp(z[1])
        K = alpha**2 * jnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / rho**2) + 1e-10 * jnp.eye(x.size)
        f = jnp.linalg.cholesky(K) @ z[2:]
        return (js.gamma.logpdf(rho, 25, scale=0.25) + z[0] + js.norm.logpdf(alpha, 0, 2) + math.log(2) + z[1]
                + js.norm.logpdf(z[2:]).sum() + jnp.sum(k * f - jnp.exp(f)) - lgk)
    return logp


def run_numpyro(name, wall=None, steps=None, lr=0.01, seed=0):
    """AutoMultivariateNormal + Adam(lr) on the unconstrained density, for ``wall`` seconds or ``steps`` steps."""
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints
    from numpyro.infer import SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoMultivariateNormal

    jax.config.update("jax_enable_x64", True)
    t = P.load(name)
    logp = jax_logp(name)

    def model():
        z = numpyro.sample("z", dist.ImproperUniform(constraints.real_vector, (), (t.dim,)))
        numpyro.factor("logp", logp(z))

    guide = AutoMultivariateNormal(model)
    svi = SVI(model, guide, numpyro.optim.Adam(lr), Trace_ELBO())
    state = svi.init(jax.random.PRNGKey(seed))
    update = jax.jit(svi.update)
    state, _ = update(state)                        # compile (excluded from the time)
    jax.block_until_ready(state)
    n, t0 = 1, time.perf_counter()
    while (wall is not None and time.perf_counter() - t0 < wall) or (steps is not None and n < steps):
        for _ in range(50):
            state, loss = update(state)
        n += 50
        jax.block_until_ready(loss)
    elapsed = time.perf_counter() - t0
    params = svi.get_params(state)
    post = guide.get_posterior(params)
    m, C = np.asarray(post.loc, dtype=float), np.asarray(post.scale_tril, dtype=float)
    if not (np.all(np.isfinite(m)) and np.all(np.isfinite(C))):
        return {"err": float("nan"), "sd_ratio": [float("nan")] * t.dim, "wall": elapsed, "steps": n}
    err, ratio = score(t, m, C)
    return {"err": err, "sd_ratio": ratio, "wall": elapsed, "steps": n}


def have_numpyro() -> bool:
    """JAX and NumPyro are installed (found, not imported: a test's skipif calls this at collection)."""
    return all(importlib.util.find_spec(name) is not None for name in ("jax", "numpyro"))


# ------------------------------------------------------------------------------------------------------ report
def _rng(r):
    return f"{min(r):.2f} – {max(r):.2f}"


def table(rows) -> str:
    out = ["| posterior | d | refvi: max \\|mean err\\| / sd | refvi: sd ratio | refvi: wall | NumPyro, same wall: "
           "err / sd ratio (steps) | NumPyro, 10⁴ steps: err / sd ratio (wall) |",
           "|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        r, n, n10 = row["refvi"], row.get("numpyro_same_wall"), row.get("numpyro_10k")
        ns = f"{n['err']:.2f} / {_rng(n['sd_ratio'])} ({n['steps']:,})" if n else "not installed"
        n1 = f"{n10['err']:.2f} / {_rng(n10['sd_ratio'])} ({n10['wall']:.1f} s)" if n10 else "not installed"
        out.append(f"| `{name}` | {row['dim']} | **{r['err']:.3f}** | {_rng(r['sd_ratio'])} | {r['wall']:.1f} s | "
                   f"{ns} | {n1} |")
    return "\n".join(out)


def figure(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(rows)
    x = np.arange(len(names))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.6))
    series = [("refvi (defaults)", "refvi", "C0"), ("NumPyro, same wall time", "numpyro_same_wall", "C1"),
              ("NumPyro, 10⁴ steps", "numpyro_10k", "C2")]
    for k, (label, key, col) in enumerate(series):
        vals = [rows[n][key]["err"] if rows[n].get(key) else np.nan for n in names]
        a1.bar(x + (k - 1) * 0.27, vals, 0.27, label=label, color=col)
        lo = [min(rows[n][key]["sd_ratio"]) if rows[n].get(key) else np.nan for n in names]
        hi = [max(rows[n][key]["sd_ratio"]) if rows[n].get(key) else np.nan for n in names]
        a2.vlines(x + (k - 1) * 0.27, lo, hi, color=col, lw=5, label=label)
    a1.axhline(0.1, color="k", ls="--", lw=1, label="goal 0.1 sd")
    a1.set_yscale("log")
    a1.set_ylabel("max over parameters |mean − ref. mean| / ref. sd")
    a2.axhline(1.0, color="k", ls="--", lw=1)
    a2.set_yscale("log")
    a2.set_ylabel("sd / reference sd (range over parameters)")
    for a in (a1, a2):
        a.set_xticks(x)
        a.set_xticklabels([SHORT[n] for n in names], rotation=35, ha="right", fontsize=8)
    a1.legend(fontsize=8)
    a1.set_title("Mean error against the posteriordb reference\n(constrained scale; refvi wall time = NumPyro's)",
                 fontsize=10)
    a2.set_title("Spread against the reference\n(a Gaussian cannot match eight schools, the GP)", fontsize=10)
    fig.tight_layout()
    _atomic.save_figure(fig, path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--out", default="docs/figures")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--replot", action="store_true", help="redraw the figure from --out/posteriordb.json")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.replot:
        rows = json.loads((out / "posteriordb.json").read_text())
        figure(rows, out / "posteriordb.png")
        print(table(rows))
        return rows
    rows = {}
    for name in args.only or P.POSTERIORS:
        P.load(name).logp_and_grad(np.zeros((1, P.load(name).dim)))        # compile the kernel first
        row = {"dim": P.load(name).dim, "refvi": run_refvi(name, args.steps)}
        if name not in LINEAR_REGRESSIONS:
            row["refvi_long"] = run_refvi(name, 60_000, samples=16, seed=1)
        if have_numpyro():
            row["numpyro_same_wall"] = run_numpyro(name, wall=row["refvi"]["wall"])
            row["numpyro_10k"] = run_numpyro(name, steps=10_000)
        rows[name] = row
        r = row["refvi"]
        print(f"{name:42s} refvi err {r['err']:.3f} sd {_rng(r['sd_ratio'])} {r['wall']:.2f}s"
              + (f" | numpyro {row['numpyro_same_wall']['err']:.2f}" if "numpyro_same_wall" in row else ""),
              flush=True)
    slim = {n: {k: ({kk: vv for kk, vv in v.items() if kk not in ("m", "C")} if isinstance(v, dict) else v)
                for k, v in row.items()} for n, row in rows.items()}
    _atomic.write_text(out / "posteriordb.json", json.dumps(slim, indent=1) + "\n")
    figure(rows, out / "posteriordb.png")
    print(table(rows))
    for n, row in rows.items():
        if "refvi_long" in row:
            print(f"{n}: long run (S=16, 60k steps) err {row['refvi_long']['err']:.3f}, "
                  f"sd ratio {_rng(row['refvi_long']['sd_ratio'])}")
    return rows


if __name__ == "__main__":
    main()
