"""Stochastic estimators of grad_omega E_q log p(y | z) for Gaussian q (Wu & Gardner, seed 004, §3.2).

Both take pre-drawn base samples U (S x d, rows u_s ~ N(0, I)); z_s = mu + L u_s with L = chol(Xi - xi xi^T).

* :func:`price` -- Bonnet/Price, Eq. (11): (mean_s [g_s - H_s mu], mean_s H_s / 2) with g = grad_z log p and
  H = Hess_z log p.  Its Xi-block is negative SEMI-definite for log-concave likelihoods (§3.2 says "negative
  definite"; it is singular e.g. for logistic regression with n < d), which keeps the NGD update valid.
* :func:`autodiff` -- Algorithm 1, differentiating log p(y | xi + chol(Xi - xi xi^T) u) through the Cholesky factor,
  written out explicitly (Murray 2016 backward pass): with Lbar = tril(g u^T), Phi(A) = lower triangle of A with its
  diagonal halved, M = L^{-T} Phi(L^T Lbar) L^{-1}: grad_Xi = (M + M^T)/2, grad_xi = g - 2 grad_Xi xi.
  Unbiased, but its Xi-block can have positive eigenvalues (App. B).
* :func:`price_logistic` -- the fused Numba Price estimator for logistic regression (data sub-sampling optional).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_samples, positive_scalar
from refvi.kernels import ngvi as _k
from refvi.ngvi import expfam


def _setup(xi, Xi, U):
    xi, Xi, L = expfam.check_expectation(xi, Xi)
    U = as_samples(U, xi.shape[0])
    return xi, Xi, L, U


def price(grad_hess, xi, Xi, U):
    """Eq. (11).  ``grad_hess(Z) -> (G (S, d), H)`` gives grad_z log p(y | z) per row and Hess_z log p per row
    (S, d, d) or already averaged over the rows (d, d)."""
    xi, Xi, L, U = _setup(xi, Xi, U)
    Z = xi + U @ L.T
    G, H = grad_hess(Z)
    G, H = np.asarray(G, dtype=np.float64), np.asarray(H, dtype=np.float64)
    S, d = Z.shape
    if G.shape != (S, d) or H.shape not in ((d, d), (S, d, d)):
        raise ValueError(
            f"grad_hess(Z) must return G of shape {(S, d)} (one gradient row per sample) and H of shape {(d, d)} or "
            f"{(S, d, d)}; got G {G.shape}, H {H.shape}"
        )
    Hm = H if H.ndim == 2 else np.mean(H, axis=0)
    Hm = 0.5 * (Hm + Hm.T)
    return np.mean(G, axis=0) - Hm @ xi, 0.5 * Hm


def _phi(A):
    B = np.tril(A)
    B[np.diag_indices_from(B)] *= 0.5
    return B


def autodiff(grad, xi, Xi, U):
    """Algorithm 1 (reparameterization through the Cholesky factor).  ``grad(Z) -> (S, d)`` gives grad_z log p."""
    xi, Xi, L, U = _setup(xi, Xi, U)
    Z = xi + U @ L.T
    G = np.atleast_2d(grad(Z))
    if G.shape != Z.shape:
        raise ValueError(f"grad(Z) must return one gradient row per sample, shape {Z.shape}; got shape {G.shape}")
    d = xi.shape[0]
    Linv = np.linalg.solve(L, np.eye(d))
    gx = np.zeros(d)
    GX = np.zeros((d, d))
    for g, u in zip(G, U, strict=True):
        Lbar = np.tril(np.outer(g, u))
        M = Linv.T @ _phi(L.T @ Lbar) @ Linv
        Sbar = 0.5 * (M + M.T)
        GX += Sbar
        gx += g - 2.0 * Sbar @ xi
    S = U.shape[0]
    return gx / S, GX / S


def price_logistic(model, xi, Xi, U, idx=None):
    """Price estimator for a logistic :class:`~refvi.ngvi.glm.GLM`; with ``idx`` the data are sub-sampled with
    replacement and rescaled by n / len(idx) (unbiased for the full-data gradient)."""
    if model.kind != "logistic":
        raise ValueError(f"price_logistic needs a logistic model, got kind={model.kind!r}")
    xi, Xi, L, U = _setup(xi, Xi, U)
    if xi.shape[0] != model.d:
        raise ValueError(f"xi has dimension {xi.shape[0]} but the model has d = {model.d}")
    if idx is None:
        ix, scale = np.zeros(0, dtype=np.int64), 1.0
    else:
        ix = np.asarray(idx)
        if ix.ndim != 1 or ix.size == 0 or not np.issubdtype(ix.dtype, np.integer):
            raise ValueError("idx must be a non-empty 1-D integer array of data indices")
        if ix.min() < 0 or ix.max() >= model.n:
            raise ValueError(f"idx entries must lie in [0, n) = [0, {model.n})")
        ix = ix.astype(np.int64)
        scale = positive_scalar(model.n / ix.size, "n / batch size")
    return _k.price_logistic(xi, np.ascontiguousarray(L), model.X, model.y, U, ix, scale)


def glm_grad_hess(model, idx=None, scale: float = 1.0):
    """The per-sample (grad, Hess) callable for :func:`price` / :func:`autodiff` from a GLM."""
    return lambda Z: model.loglik_grad_meanhess(Z, idx, scale)
