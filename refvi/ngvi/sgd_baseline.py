"""The SGD baseline of Wu & Gardner (seed 004, §6, App. F): stochastic gradient descent on the negative ELBO in
(m, C), C lower triangular, followed by clamping diag(C) >= 1e-10 ("effectively a projection step").

Gradients (choices the paper leaves open, made explicit here):

* KL(q, p) is differentiated in closed form: grad_m = P^{-1}(m - mu_p), grad_C = tril(P^{-1} C) - diag(1/C_ii);
* BLR: the expected log-likelihood is closed form, only mini-batch noise remains (n/m rescaled);
* GLM: "reparam" uses grad_C E log p ~ tril(mean_s g_s u_s^T); "price" uses tril(mean_s H_s C) (App. F "(p)");
  both use grad_m E log p ~ mean_s g_s, with z_s = m + C u_s.
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_generator
from refvi.ngvi import expfam
from refvi.ngvi.blr import BLRProblem
from refvi.ngvi.glm import GLM
from refvi.ngvi.ngd import NGVIResult, _count, _history_points, _nonneg, draw_batches, given_base_samples, given_batches

CLAMP = 1e-10


def _kl_grads(m, C, Pinv, mu_p):
    return Pinv @ (m - mu_p), np.tril(Pinv @ C) - np.diag(1.0 / np.diag(C))


def _result(m, C, hist):
    Sigma = C @ C.T
    lam, Lam = expfam.natural_from_moment(m, 0.5 * (Sigma + Sigma.T))
    return NGVIResult(lam, Lam, None, None, {k: np.asarray(v) for k, v in hist.items()})


def _steps(steps, T):
    if callable(steps):
        gam = np.array([float(steps(t)) for t in range(T)])
    elif np.ndim(steps) == 0:
        gam = np.full(T, _nonneg(steps))
    else:
        gam = np.asarray(steps, dtype=np.float64)
        if gam.shape != (T,):
            raise ValueError(f"steps must be a scalar, a callable or an array of length T = {T}")
    if not np.all(np.isfinite(gam)) or np.any(gam < 0):
        raise ValueError("step sizes must be finite and >= 0")
    return gam


def sgd_blr(
    problem: BLRProblem,
    T: int,
    batch_size: int,
    steps,
    *,
    rng=None,
    init=None,
    history=None,
    progress: bool = False,
    indices=None,
) -> NGVIResult:
    """Projected SGD on mini-batch BLR (Fig. 1 baseline; the paper uses steps gamma_t = 1/(1e5 + t)).  ``indices``
    (T, batch_size) gives the batches instead of drawing them from ``rng``."""
    from tqdm.auto import tqdm

    T = _count(T, "T")
    gam = _steps(steps, T)
    idx = draw_batches(rng, problem.n, T, batch_size) if indices is None else given_batches(indices, T, problem.n)
    batch_size = idx.shape[1]
    d = problem.d
    m, C = (np.zeros(d), np.eye(d)) if init is None else (np.array(init[0], float), np.tril(np.array(init[1], float)))
    Pinv = np.linalg.inv(problem.prior_cov)
    c = problem.n / (batch_size * problem.sigma2)
    post = problem.posterior()
    pts = set(_history_points(T, history))
    hist: dict[str, list[float]] = {"iteration": [], "kl_last": []}
    for t in tqdm(range(T), disable=not progress, desc="SGD (BLR)"):
        Xb, yb = problem.X[idx[t]], problem.y[idx[t]]
        gm_kl, gC_kl = _kl_grads(m, C, Pinv, problem.prior_mean)
        gm = -c * Xb.T @ (yb - Xb @ m) + gm_kl
        gC = c * np.tril(Xb.T @ (Xb @ C)) + gC_kl
        m = m - gam[t] * gm
        C = C - gam[t] * gC
        C[np.diag_indices(d)] = np.maximum(np.diag(C), CLAMP)
        if t + 1 in pts:
            hist["iteration"].append(t + 1)
            hist["kl_last"].append(expfam.kl(m, C @ C.T, *post))
    return _result(m, C, hist)


def sgd_glm(
    model: GLM,
    T: int,
    step,
    *,
    n_samples: int = 10,
    estimator: str = "price",
    rng=None,
    batch_size=None,
    init=None,
    history=None,
    progress: bool = False,
    base_samples=None,
    batches=None,
) -> NGVIResult:
    """Projected SGD on a GLM with the reparameterization ("reparam") or Price ("price") estimator (Fig. 2).
    ``base_samples`` (T, n_samples, d) and ``batches`` (T, batch_size) replace the draws from ``rng``."""
    from tqdm.auto import tqdm

    T = _count(T, "T")
    S = _count(n_samples, "n_samples")
    if estimator not in ("price", "reparam"):
        raise ValueError(f"estimator must be 'price' or 'reparam', got {estimator!r}")
    gam = _steps(step, T)
    gen = as_generator(rng)
    d = model.d
    if base_samples is not None:
        base_samples = given_base_samples(base_samples, T, d)
        S = base_samples.shape[1]
    if batches is not None:
        batches = given_batches(batches, T, model.n)
        batch_size = batches.shape[1]
    m, C = (np.zeros(d), np.eye(d)) if init is None else (np.array(init[0], float), np.tril(np.array(init[1], float)))
    Pinv = np.linalg.inv(model.prior_cov)
    pts = set(_history_points(T, history))
    hist: dict[str, list[float]] = {"iteration": [], "neg_elbo": []}
    for t in tqdm(range(T), disable=not progress, desc=f"SGD ({estimator})"):
        U = gen.standard_normal((S, d)) if base_samples is None else base_samples[t]
        if batch_size is None:
            idx = None
        else:
            idx = gen.integers(0, model.n, size=batch_size) if batches is None else batches[t]
        scale = 1.0 if idx is None else model.n / batch_size
        G, Hm = model.loglik_grad_meanhess(m + U @ C.T, idx, scale)
        gm_kl, gC_kl = _kl_grads(m, C, Pinv, model.prior_mean)
        gm = -G.mean(axis=0) + gm_kl
        if estimator == "reparam":
            gC = -np.tril(G.T @ U) / S + gC_kl
        else:
            gC = -np.tril(Hm @ C) + gC_kl
        m = m - gam[t] * gm
        C = C - gam[t] * gC
        C[np.diag_indices(d)] = np.maximum(np.diag(C), CLAMP)
        if not (np.all(np.isfinite(m)) and np.all(np.isfinite(C))):
            raise FloatingPointError(f"SGD diverged at iteration {t + 1} (step {gam[t]:g} too large)")
        if t + 1 in pts:
            hist["iteration"].append(t + 1)
            S_ = C @ C.T
            hist["neg_elbo"].append(model.neg_elbo(m, 0.5 * (S_ + S_.T) + np.outer(m, m)))
    return _result(m, C, hist)
