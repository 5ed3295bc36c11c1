"""refvi's own seed 004 sub-adapter (``REFVI.ngvi``): :mod:`refvi.ngvi` behind the plain-array protocol of
:mod:`refvi.verification.protocol.ngvi`."""

from __future__ import annotations

import numpy as np

from refvi.ngvi import (
    blr_problem,
    estimators,
    expfam,
    logistic_model,
    ngd,
    ngd_exact,
    ngd_glm,
    omega_average,
    poisson_model,
    stochastic_ngd_blr,
)
from refvi.ngvi.sgd_baseline import sgd_blr, sgd_glm
from refvi.ngvi.variance import lemma3_bound, variance_term
from refvi.verification.protocol.ngvi import EXPFAM_METHODS


def _functions_of(module, *names):
    """``module``'s functions ``names`` as static methods of the adapter."""
    return tuple(staticmethod(getattr(module, n)) for n in names)


def _glm(kind, X, y):
    return (logistic_model if kind == "logistic" else poisson_model)(X, y)


class RefviNGVI:
    """refvi.ngvi behind the seed 004 protocol (raw arrays in and out)."""

    name = "refvi.ngvi"

    # exponential-family maps (refvi.ngvi.expfam, named in the order of EXPFAM_METHODS) and steps (refvi.ngvi.ngd),
    # as they are
    (
        natural_from_moment,
        expectation_from_natural,
        natural_from_expectation,
        log_partition,
        conjugate,
        kl,
        bregman_A,
        bregman_A_star,
        fisher_minimal,
    ) = _functions_of(expfam, *EXPFAM_METHODS)
    ngd_step, ngd_step_fim, md_step, natural_update = _functions_of(
        ngd, "ngd_step", "ngd_step_fim", "md_step", "natural_update"
    )
    omega_average = staticmethod(omega_average)

    # Bayesian linear regression
    def _blr(self, X, y, sigma2, P, mp):
        return blr_problem(X, y, sigma2, P, mp)

    def blr_neg_elbo(self, X, y, sigma2, P, mp, xi, Xi):
        return self._blr(X, y, sigma2, P, mp).neg_elbo(xi, Xi)

    def blr_log_evidence(self, X, y, sigma2, P, mp):
        return self._blr(X, y, sigma2, P, mp).log_evidence()

    def blr_grad(self, X, y, sigma2, P, mp, xi, Xi):
        return self._blr(X, y, sigma2, P, mp).grad_neg_elbo(xi, Xi)

    def blr_stochastic_grad(self, X, y, sigma2, P, mp, xi, Xi, idx):
        return self._blr(X, y, sigma2, P, mp).stochastic_grad(xi, Xi, idx)

    def blr_run(self, X, y, sigma2, P, mp, indices, init=None, steps=None):
        """Stochastic NGD on given batches; returns (lam, Lam, xi_bar, Xi_bar) with Theorem 1's average."""
        r = stochastic_ngd_blr(
            self._blr(X, y, sigma2, P, mp), len(indices), indices=np.asarray(indices), init=init, steps=steps
        )
        return r.lam, r.Lam, r.xi_bar, r.Xi_bar

    def blr_history(self, X, y, sigma2, P, mp, indices, at):
        r = stochastic_ngd_blr(self._blr(X, y, sigma2, P, mp), len(indices), indices=np.asarray(indices), history=at)
        h = r.history
        return h["iteration"], h["kl_last"], h["kl_avg"], (r.lam, r.Lam, r.xi_bar, r.Xi_bar)

    def blr_trajectory(self, X, y, sigma2, P, mp, indices, steps, init=None):
        """[eta_0, eta_1, ...] of stochastic NGD (python loop over :func:`natural_update`)."""
        p = self._blr(X, y, sigma2, P, mp)
        eta = (np.zeros(p.d), -0.5 * np.eye(p.d)) if init is None else init
        out = [eta]
        # one iterate per (batch, step) pair: the statements pass as many steps as batches
        for idx, g in zip(indices, steps, strict=False):
            eta = ngd.natural_update(eta, p.noisy_posterior_natural(np.asarray(idx)), g)
            out.append(eta)
        return out

    def blr_variance(self, X, y, sigma2, P, mp, eta, gamma, batch_size):
        return variance_term(self._blr(X, y, sigma2, P, mp), eta, gamma, batch_size)

    def blr_lemma3_bound(self, X, y, sigma2, P, mp, batch_size):
        return lemma3_bound(self._blr(X, y, sigma2, P, mp), batch_size)

    # estimators and GLMs
    price, autodiff = _functions_of(estimators, "price", "autodiff")

    def price_logistic(self, X, y, xi, Xi, U, idx=None):
        return estimators.price_logistic(logistic_model(X, y), xi, Xi, U, idx)

    def glm_loglik(self, kind, X, y, Z):
        return _glm(kind, X, y).loglik(Z)

    def glm_neg_elbo(self, kind, X, y, xi, Xi):
        return _glm(kind, X, y).neg_elbo(xi, Xi)

    def glm_grad(self, kind, X, y, xi, Xi):
        return _glm(kind, X, y).grad_neg_elbo(xi, Xi)

    def glm_ngd_exact(self, kind, X, y, T, gamma, init):
        return ngd_exact(_glm(kind, X, y), T, gamma, init)[-1]

    def glm_ngd(self, kind, X, y, gammas, U, estimator="price", batches=None, init=None):
        model = _glm(kind, X, y)
        gammas = np.asarray(gammas, dtype=np.float64)
        r = ngd_glm(model, gammas.size, gammas, base_samples=U, batches=batches, init=init, estimator=estimator)
        return r.lam, r.Lam

    def glm_ngd_history(self, kind, X, y, gammas, U, at, estimator="price", batches=None):
        gammas = np.asarray(gammas, dtype=np.float64)
        r = ngd_glm(
            _glm(kind, X, y), gammas.size, gammas, base_samples=U, batches=batches, estimator=estimator, history=at
        )
        return r.history["iteration"], r.history["neg_elbo"], (r.lam, r.Lam)

    # the SGD baseline (refvi.ngvi.sgd_baseline): one call each, its last iterate or its history
    def _blr_sgd(self, X, y, sigma2, P, mp, indices, steps, **options):
        indices = np.asarray(indices)
        problem = self._blr(X, y, sigma2, P, mp)
        n_steps, batch = indices.shape[0], indices.shape[1]
        return sgd_blr(problem, n_steps, batch, np.asarray(steps, float), indices=indices, **options)

    def _glm_sgd(self, kind, X, y, steps, U, estimator, batches, **options):
        steps = np.asarray(steps, dtype=np.float64)
        model = _glm(kind, X, y)
        return sgd_glm(model, steps.size, steps, base_samples=U, batches=batches, estimator=estimator, **options)

    def blr_sgd(self, X, y, sigma2, P, mp, indices, steps, init=None):
        r = self._blr_sgd(X, y, sigma2, P, mp, indices, steps, init=init)
        return r.lam, r.Lam

    def glm_sgd(self, kind, X, y, steps, U, estimator="price", batches=None, init=None):
        r = self._glm_sgd(kind, X, y, steps, U, estimator, batches, init=init)
        return r.lam, r.Lam

    def blr_sgd_history(self, X, y, sigma2, P, mp, indices, steps, at):
        r = self._blr_sgd(X, y, sigma2, P, mp, indices, steps, history=at)
        return r.history["iteration"], r.history["kl_last"], (r.lam, r.Lam)

    def glm_sgd_history(self, kind, X, y, steps, U, at, estimator="price", batches=None):
        r = self._glm_sgd(kind, X, y, steps, U, estimator, batches, history=at)
        return r.history["iteration"], r.history["neg_elbo"], (r.lam, r.Lam)
