"""Shared helpers, instances and constants of the ngvi statements.

Seed 004 (Wu & Gardner, "Understanding stochastic natural gradient variational inference", ICML 2024).

Statements: Def. 1 (Fisher = Hess A), Eq. (4) (gradient maps / Fenchel duality), App. A.1 (A* neither smooth nor
strongly convex), Lemma 4 (KL = D_A* = D_A), Lemma 1 (NGD = MD), Lemma 2 (conjugate ELBO = KL + const), Example 1
(unbiased mini-batch gradient), Def. 6 (variance = symmetrized KL / gamma^2), Theorem 1 (exact enumeration of all
mini-batch paths; corrected constant 4V/(T+2)), Lemma 3 and Lemmas 5-11 with Corollaries 1-2 (variance bound for
BLR), Remark 2 (validity), the autodiff and Price estimator claims of §3.2 / App. B, the logistic and Poisson
non-convexity witnesses of §5 / App. E, and Proposition 1.

Errata: E004-1 (Thm 1 constant V/(T+2) -> 4V/(T+2)), E004-2 (logistic Price factors 1/2, 1/4 and
threshold n >= 8/delta^2 -> n > 32/delta^2), E004-3 (Lemma 9 / Cor. 1-2 / Lemmas 10-11 / Lemma 3 drop 1/sigma^2),
E004-4 (the Price Xi-block is negative SEMI-definite, not definite).

The algorithms under test are reached only through ``ctx.impl.ngvi`` (protocol
:mod:`refvi.verification.protocol.ngvi`; refvi's own is :mod:`refvi.verification.protocol.refvi_ngvi`); oracles are
:mod:`refvi.verification.oracles.ngvi_expfam` and :mod:`~.ngvi_glm`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from refvi.verification.oracles import ngvi_expfam as OX
from refvi.verification.oracles import ngvi_glm as OG
from refvi.verification.statement import scalar

# ------------------------------------------------------------------------------------------------------------------
# instance helpers (pure NumPy)
# ------------------------------------------------------------------------------------------------------------------


def rand_spd(rng, d, lo=0.3, hi=3.0):
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    A = (Q * np.exp(rng.uniform(math.log(lo), math.log(hi), d))) @ Q.T
    return 0.5 * (A + A.T)


def rand_blr(rng, d, n, zero_mean=False, sigma2=None, big_prior=False):
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n) * 2
    s2 = scalar(rng.uniform(0.3, 2.0)) if sigma2 is None else sigma2
    P = rand_spd(rng, d, 0.3, 4.0 if big_prior else 2.0)
    mp = np.zeros(d) if zero_mean else rng.standard_normal(d)
    return X, y, s2, P, mp


def minibatch_blr(rng, max_batch=4):
    """A small Bayesian linear regression for exact batch enumeration (d <= 3, n <= 4, m < max_batch) and a
    Gaussian q = N(mu, S) given by its expectation parameters: ``(X, y, s2, P, mp), m, (xi, Xi), (mu, S)``."""
    d, n, m = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, max_batch))
    model = rand_blr(rng, d, n)
    mu, S = rng.standard_normal(d), rand_spd(rng, d)
    return model, m, (mu, S + np.outer(mu, mu)), (mu, S)


def flat(v, M):
    """The pair (v, M) of a Gaussian's parameters (natural, expectation or moment) as one vector (v, vec M), to be
    compared at once."""
    return np.concatenate([v, M.ravel()])


def natural_of(mu, S):
    return OX.natural_from_moments(mu, S)


def sym_dir(rng, d):
    A = rng.standard_normal((d, d))
    return 0.5 * (A + A.T)


def minimal_theta(lam, Lam):
    d = len(lam)
    return np.concatenate([lam, np.diag(Lam), [Lam[i, j] for i in range(d) for j in range(i + 1, d)]])


def from_theta(theta, d):
    lam = np.asarray(theta[:d], float)
    Lam = np.diag(theta[d : 2 * d]).astype(float)
    k = 2 * d
    for i in range(d):
        for j in range(i + 1, d):
            Lam[i, j] = Lam[j, i] = theta[k]
            k += 1
    return lam, Lam


def glm_neg_elbo(kind, X, y, mu, S):
    """The oracle's l(q) for q = N(mu, S) on the logistic / Poisson GLM with prior N(0, I): -sum_n E log p(y_n | x_n^T
    z) + KL(q || N(0, I)), the logistic terms by 1-D adaptive quadrature, the Poisson ones in closed form (log y_n!
    included)."""
    X, y, mu, S = (np.asarray(a, float) for a in (X, y, mu, S))
    if kind == "poisson":
        return OG.poisson_neg_elbo(mu, S + np.outer(mu, mu), X, y) + scalar(np.sum(gammaln(y + 1.0)))
    a, v = X @ mu, np.einsum("ni,ij,nj->n", X, S, X)
    # a point mass where x_n^T S x_n = 0 (x_n = 0): the quadrature's interval would be empty
    ell = sum(
        OG.logistic_point_expectations(scalar(an), scalar(vn), scalar(yn))[0]
        if vn > 1e-300
        else -OG.softplus(-scalar(yn * an))
        for an, vn, yn in zip(a, v, y, strict=True)
    )
    return -ell + OX.kl_gauss(mu, S, np.zeros(mu.size), np.eye(mu.size))


#: relative tolerance on a recorded negative ELBO of a GLM: the implementation's Gauss-Hermite rule for the logistic
#: terms against the oracle's adaptive quadrature (a wrong iterate or formula moves it by far more)
GLM_ELBO_RTOL = 1e-7


def recorded_iterations(rng, T):
    """A random non-empty set of iterations in 1..T, sorted (where a run records its diagnostics)."""
    return sorted(int(t) for t in rng.choice(np.arange(1, T + 1), size=int(rng.integers(1, T + 1)), replace=False))


def check_history(ctx, got, at, want, what, rtol=1e-9):
    """A run's recorded diagnostics ``got`` = (iterations, values, ...) against the oracle's values ``want`` at the
    iterations ``at`` (sorted)."""
    ctx.equal(np.asarray(got[0]), np.asarray(at), label=f"{what}: history recorded after iterations {list(at)}")
    vals = np.asarray(got[1], float)
    if vals.shape == (len(at),):
        ctx.close(vals, np.asarray(want, float), rtol=rtol, atol=rtol, label=f"{what}: the recorded values")
    else:
        ctx.true(False, label=f"{what}: one recorded value per iteration (got shape {vals.shape})")


def check_trajectory(ctx, traj, X, y, s2, P, mp, idx, steps, init=None, what="NGD"):
    """A reported stochastic NGD trajectory [eta_0, ..., eta_T] of BLR, by induction: eta_0 the start (N(0, I)
    unless ``init``), eta_(t+1) = (1 - gamma_t) eta_t + gamma_t eta_hat(batch t) from the reported eta_t, computed
    by the oracle in moment form (``OX.blr_natural_step``), every t."""
    lam0, Lam0 = (np.zeros(X.shape[1]), -0.5 * np.eye(X.shape[1])) if init is None else init
    ctx.equal(len(traj), len(steps) + 1, label=f"{what}: T + 1 states")
    ctx.close(traj[0][0], lam0, atol=1e-15, label=f"{what}: lam_0 = the start")
    ctx.close(traj[0][1], Lam0, atol=1e-15, label=f"{what}: Lam_0 = the start")
    for t, g in enumerate(steps):
        lam, Lam = traj[t]
        want = OX.blr_natural_step(lam, Lam, X, y, idx[t], s2, P, mp, g)
        scale = 1.0 + scalar(np.max(np.abs(want[1])))
        for k, name in enumerate(("lam", "Lam")):
            ctx.close(traj[t + 1][k], want[k], rtol=1e-9, atol=1e-10 * scale, label=f"{what}: {name}_(t+1) from eta_t")


def checked_omega(ctx, impl, lam, Lam, what="grad A"):
    """The implementation's expectation_from_natural (grad A, Eq. 4) at (lam, Lam), compared with the oracle's
    (mu, Sigma + mu mu^T): the value, checked, for a bound to use."""
    xi, Xi = impl.expectation_from_natural(lam, Lam)
    mu, S = OX.moments_from_natural(lam, Lam)
    scale = 1.0 + scalar(np.max(np.abs(S))) + scalar(np.max(np.abs(mu))) ** 2
    ctx.close(xi, mu, rtol=1e-9, atol=1e-11 * scale, label=f"{what}: xi = mu")
    ctx.close(Xi, S + np.outer(mu, mu), rtol=1e-9, atol=1e-11 * scale, label=f"{what}: Xi = Sigma + mu mu^T")
    return xi, Xi


def checked_blr_grad(ctx, impl, X, y, s2, P, mp, xi, Xi, idx=None):
    """The implementation's exact (``idx`` None) or mini-batch (Eq. 15) BLR gradient at omega = (xi, Xi), compared
    with the oracle's eta(omega) - eta_posterior (App. C.1) or eta(omega) - eta_hat(batch): the value, checked."""
    eta = OX.natural_from_moments(xi, Xi - np.outer(xi, xi))
    if idx is None:
        got = impl.blr_grad(X, y, s2, P, mp, xi, Xi)
        target = OX.natural_from_moments(*OX.blr_posterior(X, y, s2, P, mp))
    else:
        got = impl.blr_stochastic_grad(X, y, s2, P, mp, xi, Xi, idx)
        lam_p, Lam_p = OX.natural_from_moments(mp, P)
        Xb, yb, c = X[list(idx)], y[list(idx)], X.shape[0] / (len(idx) * s2)
        target = (c * Xb.T @ yb + lam_p, Lam_p - 0.5 * c * Xb.T @ Xb)
    scale = 1.0 + scalar(np.max(np.abs(eta[1]))) + scalar(np.max(np.abs(target[1])))
    for k, name in enumerate(("g_xi", "G_Xi")):
        ctx.close(got[k], eta[k] - target[k], rtol=1e-9, atol=1e-10 * scale, label=f"BLR gradient {name} = oracle's")
    return got
