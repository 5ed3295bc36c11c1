# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Seed 001 — Boosting variational inference: an optimization perspective (Locatello et al.)
#
# Reproduction of §5 with `refvi.boosting`:
#
# * **Figures 1–2** — 1-D targets truncated to a box: a Cauchy distribution and a Gaussian mixture. Atoms are
#   truncated Gaussians with a fixed σ and quantized means (the paper uses stride 1e-4; we use 1e-3 at full size,
#   1e-2 with `REFVI_SMALL=1`). Algorithm 1 with exact line search on the KL against Algorithm 3 (Variant 1, fully
#   corrective; Variant 0, norm-corrective with the paper's L = 5 and with L = 50). L = 5 is far below the
#   smoothness constant 1/ε of these atom sets (ε = 8.6e-32 on [−3, 3] with σ = 0.5), so Variant 0 has no guarantee
#; on these boxes it jumps to the far-away atom the LMO returns and stays there (the QP solver is
#   checked against an exact KKT enumeration in the tests): the curve shows that failure, not a bug.
#   The y-axis is a *certified* upper bound on the suboptimality, f(q^t) − f*_low with f*_low = max over all runs of
#   f(q^t) − g_t (the FW-gap certificate; weak duality). Neither target's optimum over conv(A) is known in closed
#   form (its components are not atoms); a mixture whose components ARE atoms is run afterwards and
#   reaches f* = −log P(A) exactly.
# * **Figure 3** — Bayesian logistic regression. ChemReact is not available offline; we use scikit-learn's bundled
#   *breast cancer* set (569 × 30, standardized, intercept; 80/20 train/test split, seed 0). Boosting starts from the
#   mean-field Gaussian; atoms are N(μ, diag σ²_MF) with μ in the box m_MF ± σ_MF; the three weight rules
#   (line search, fixed 2/(t+2) counted from t = 1 so that the mean-field q^0 is not discarded, fully corrective)
#   are compared by the training log-likelihood
#   (1/N) Σ log E_q[sigmoid(y x·w)] and the test AUC, both by Monte Carlo over 4000 draws of q.
#
# `REFVI_SMALL=1` runs a reduced version (used by the test suite). Figures go to `$REFVI_FIGURE_DIR`.

# %%
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")          # BLAS threads: the matrix products here are small
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import time  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from nbsetup import FIG_DIR, SMALL, save  # noqa: E402  (first: it selects the Agg backend)

from refvi.boosting import (  # noqa: E402
    AtomSet,
    BoostingProblem,
    Box,
    CauchyTarget,
    GaussianMixtureTarget,
    corrective_frank_wolfe,
    frank_wolfe,
    mc,  # noqa: E402
)
from refvi.targets import LogisticRegression, load_dataset  # noqa: E402

print(f"small={SMALL}, figures -> {FIG_DIR}")

STRIDE = 1e-2 if SMALL else 1e-3
T_LS = 60 if SMALL else 300
T_FC = 15 if SMALL else 30


# %% [markdown]
# ## Figures 1 and 2: line search (Alg 1) vs corrective variants (Alg 3) on 1-D truncated targets

# %%
def run_1d(target, box, sigma, fstar_low=None):
    atoms = AtomSet.grid(box, STRIDE, sigma)
    prob = BoostingProblem(atoms, target)
    t0 = time.time()
    runs = {"Alg 1, line search": frank_wolfe(prob, T_LS, step="line_search"),
            "Alg 1, fixed 2/(t+2)": frank_wolfe(prob, T_LS, step="fixed"),
            "Alg 3 Var 0 (norm-corrective, paper's L = 5)": corrective_frank_wolfe(prob, T_FC, variant="norm", L=5.0),
            "Alg 3 Var 0 (norm-corrective, L = 50)": corrective_frank_wolfe(prob, T_FC, variant="norm", L=50.0),
            "Alg 3 Var 1 (fully corrective)": corrective_frank_wolfe(prob, T_FC, variant="full")}
    if fstar_low is None:                       # the FW-gap certificate brackets f*
        fstar_low = max(float(np.max(r.f - r.gap)) for r in runs.values())
    fbest = min(float(r.f.min()) for r in runs.values())
    print(f"  {len(atoms)} atoms, {time.time() - t0:.1f} s; f* in [{fstar_low:.10f}, {fbest:.10f}]")
    for name, r in runs.items():
        print(f"  {name:46s} f - f*_low = {r.f[-1] - fstar_low:.3e}  gap = {r.gap[-1]:.3e}  "
              f"active atoms = {r.active.size}")
    return prob, runs, fstar_low


def plot_1d(prob, runs, fstar_low, title, fname):
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for name, r in runs.items():
        ax[0].semilogy(np.arange(r.f.size), np.maximum(r.f - fstar_low, 1e-16), label=name)
    ax[0].set_xlabel("iteration t")
    ax[0].set_ylabel("f(q^t) - f*_low  (certified)")
    ax[0].set_title(title)
    ax[0].legend(fontsize=8)
    z = prob.nodes[:, 0]
    p = np.exp(prob.logp)
    ax[1].plot(z, p / np.sum(prob.w * p), "k", lw=2, label="target p_A")
    for name in ("Alg 1, line search", "Alg 3 Var 1 (fully corrective)"):
        ax[1].plot(z, prob.q_nodes(runs[name].weights), "--", label=name)
    ax[1].set_xlabel("z")
    ax[1].legend(fontsize=8)
    save(fig, fname, dpi=110)


print("Figure 1: truncated Cauchy(0, 1) on [-3, 3], sigma = 0.5")
cauchy = CauchyTarget(0.0, 1.0)
box1 = Box(-3.0, 3.0)
prob1, runs1, low1 = run_1d(cauchy, box1, 0.5)
print(f"  -log P(A) = {-cauchy.log_prob_box(box1):.6f} <= f* (strict: p_A is not a finite mixture of atoms, P8)")
plot_1d(prob1, runs1, low1, "truncated Cauchy", "seed001_fig1_cauchy.png")

print("Figure 2: Gaussian mixture 0.3 N(-1.2, 0.4^2) + 0.5 N(0.3, 0.5^2) + 0.2 N(1.5, 0.4^2) on [-2, 2]")
mog = GaussianMixtureTarget([0.3, 0.5, 0.2], [-1.2, 0.3, 1.5], [0.4, 0.5, 0.4])
box2 = Box(-2.0, 2.0)
# components are not all atoms (sigma differs), so f* > -log P(A): use the certificate bracket
prob2, runs2, low2 = run_1d(mog, box2, 0.4)
print(f"  -log P(A) = {-mog.log_prob_box(box2):.6f}")
plot_1d(prob2, runs2, low2, "truncated Gaussian mixture", "seed001_fig2_mog.png")

# %% [markdown]
# The same mixture with every component an atom (σ = 0.4 for all three): then f* = −log P(A) exactly and the fully
# corrective variant reaches it to the quadrature floor.

# %%
mog_in = GaussianMixtureTarget([0.3, 0.5, 0.2], [-1.2, 0.3, 1.5], [0.4, 0.4, 0.4])
atoms_in = AtomSet.grid(box2, 0.1, 0.4)
prob_in = BoostingProblem(atoms_in, mog_in)
res_in = corrective_frank_wolfe(prob_in, 20, variant="full")
fstar_in = -mog_in.log_prob_box(box2)
w_opt = mog_in.optimal_weights(atoms_in)
print(f"f(q^T) - f* = {res_in.f[-1] - fstar_in:.2e}, max |alpha - alpha*| = {np.abs(res_in.weights - w_opt).max():.2e}")


# %% [markdown]
# ## Figure 3: Bayesian logistic regression, three weight rules

# %%
ds = load_dataset("breast_cancer")
perm = np.random.default_rng(0).permutation(ds.y.size)
n_tr = int(0.8 * ds.y.size)
tr, te = perm[:n_tr], perm[n_tr:]
target = LogisticRegression(ds.X[tr], ds.y[tr], prior_scale=1.0)
t0 = time.time()
init = mc.mean_field_gaussian(target, n_samples=32 if SMALL else 64, seed=0)
print(f"mean-field solution in {time.time() - t0:.1f} s (d = {target.dim})")

T_B = 3 if SMALL else 20
kw = dict(n_samples=32 if SMALL else 64, n_starts=1 if SMALL else 3, lmo_samples=32 if SMALL else 64,
          lmo_maxiter=30 if SMALL else 100, seed=1, init=init)
N_DRAWS = 1000 if SMALL else 4000


def metrics(res, t):
    from sklearn.metrics import roc_auc_score
    D = res.sample(N_DRAWS, 7, t=t)
    return mc.log_likelihood(ds.X[tr], ds.y[tr], D), roc_auc_score(ds.y[te] > 0, mc.predictive_prob(ds.X[te], D))


rules = {"line search [4]": "line_search", "fixed 2/(t+2) (Alg 1 Var 0)": "fixed", "corrective (Alg 3)": "corrective"}
curves = {}
for name, rule in rules.items():
    t0 = time.time()
    res = mc.boost_mc(target, T_B, rule=rule, **kw)
    curves[name] = np.array([metrics(res, t) for t in range(T_B + 1)])
    print(f"{name:30s} {time.time() - t0:6.1f} s  train LL {curves[name][0, 0]:.5f} -> {curves[name][-1, 0]:.5f}  "
          f"test AUC {curves[name][0, 1]:.4f} -> {curves[name][-1, 1]:.4f}  SAA f {res.f[0]:.3f} -> {res.f[-1]:.3f}")

fig, ax = plt.subplots(1, 2, figsize=(11, 4))
for name, c in curves.items():
    ax[0].plot(np.arange(c.shape[0]), c[:, 0], "o-", ms=3, label=name)
    ax[1].plot(np.arange(c.shape[0]), c[:, 1], "o-", ms=3, label=name)
ax[0].set_xlabel("boosting iteration (components added)")
ax[0].set_ylabel("training log-likelihood per point")
ax[1].set_xlabel("boosting iteration (components added)")
ax[1].set_ylabel("test AUC")
ax[0].set_title("breast cancer (in place of ChemReact); t = 0 is mean field")
ax[0].legend(fontsize=8)
save(fig, "seed001_fig3_logistic.png", dpi=110)
print("done")
