"""refvi's own seed 004 sub-adapter (``REFVI.ngvi``): :mod:`refvi.ngvi` behind the plain-array protocol of
:mod:`refvi.verification.protocol.ngvi`."""

from __future__ import annotations

import numpy as np


class RefviNGVI:
    """refvi.ngvi behind the seed 004 protocol (raw arrays in and out)."""

    name = "refvi.ngvi"

    # exponential-family maps
    def natural_from_moment(self, mu, S):
        from refvi.ngvi import expfam
        return expfam.natural_from_moment(mu, S)

    def expectation_from_natural(self, lam, Lam):
        from refvi.ngvi import expfam
        return expfam.expectation_from_natural(lam, Lam)

    def natural_from_expectation(self, xi, Xi):
        from refvi.ngvi import expfam
        return expfam.natural_from_expectation(xi, Xi)

    def log_partition(self, lam, Lam):
        from refvi.ngvi import expfam
        return expfam.log_partition(lam, Lam)

    def conjugate(self, xi, Xi):
        from refvi.ngvi import expfam
        return expfam.conjugate(xi, Xi)

    def kl(self, mu1, S1, mu2, S2):
        from refvi.ngvi import expfam
        return expfam.kl(mu1, S1, mu2, S2)

    def bregman_A(self, eta1, eta2):
        from refvi.ngvi import expfam
        return expfam.bregman_A(eta1, eta2)

    def bregman_A_star(self, w1, w2):
        from refvi.ngvi import expfam
        return expfam.bregman_A_star(w1, w2)

    def fisher_minimal(self, lam, Lam):
        from refvi.ngvi import expfam
        return expfam.fisher_minimal(lam, Lam)

    # steps
    def ngd_step(self, eta, g, gamma):
        from refvi.ngvi import ngd
        return ngd.ngd_step(eta, g, gamma)

    def ngd_step_fim(self, eta, g_theta, gamma):
        from refvi.ngvi import ngd
        return ngd.ngd_step_fim(eta, g_theta, gamma)

    def md_step(self, omega, g, gamma):
        from refvi.ngvi import ngd
        return ngd.md_step(omega, g, gamma)

    def natural_update(self, eta, eta_hat, gamma):
        from refvi.ngvi import ngd
        return ngd.natural_update(eta, eta_hat, gamma)

    # Bayesian linear regression
    def _blr(self, X, y, sigma2, P, mp):
        from refvi.ngvi import blr_problem
        return blr_problem(X, y, sigma2, P, mp)

    def blr_neg_elbo(self, X, y, sigma2, P, mp, xi, Xi):
        return self._blr(X, y, sigma2, P, mp).neg_elbo(xi, Xi)

    def blr_grad(self, X, y, sigma2, P, mp, xi, Xi):
        return self._blr(X, y, sigma2, P, mp).grad_neg_elbo(xi, Xi)

    def blr_stochastic_grad(self, X, y, sigma2, P, mp, xi, Xi, idx):
        return self._blr(X, y, sigma2, P, mp).stochastic_grad(xi, Xi, idx)

    def blr_run(self, X, y, sigma2, P, mp, indices, init=None, steps=None):
        """Stochastic NGD on given batches; returns (lam, Lam, xi_bar, Xi_bar) with Theorem 1's average."""
        from refvi.ngvi import stochastic_ngd_blr
        r = stochastic_ngd_blr(self._blr(X, y, sigma2, P, mp), len(indices), indices=np.asarray(indices),
                               init=init, steps=steps)
        return r.lam, r.Lam, r.xi_bar, r.Xi_bar

    def omega_average(self, omegas):
        from refvi.ngvi import omega_average
        return omega_average(omegas)

    def blr_trajectory(self, X, y, sigma2, P, mp, indices, steps, init=None):
        """[eta_0, eta_1, ...] of stochastic NGD (python loop over :func:`natural_update`)."""
        from refvi.ngvi import ngd
        p = self._blr(X, y, sigma2, P, mp)
        eta = (np.zeros(p.d), -0.5 * np.eye(p.d)) if init is None else init
        out = [eta]
        for idx, g in zip(indices, steps):
            eta = ngd.natural_update(eta, p.noisy_posterior_natural(np.asarray(idx)), g)
            out.append(eta)
        return out

    def blr_variance(self, X, y, sigma2, P, mp, eta, gamma, batch_size):
        from refvi.ngvi.variance import variance_term
        return variance_term(self._blr(X, y, sigma2, P, mp), eta, gamma, batch_size)

    def blr_lemma3_bound(self, X, y, sigma2, P, mp, batch_size):
        from refvi.ngvi.variance import lemma3_bound
        return lemma3_bound(self._blr(X, y, sigma2, P, mp), batch_size)

    # estimators and GLMs
    def price(self, grad_hess, xi, Xi, U):
        from refvi.ngvi import estimators
        return estimators.price(grad_hess, xi, Xi, U)

    def autodiff(self, grad, xi, Xi, U):
        from refvi.ngvi import estimators
        return estimators.autodiff(grad, xi, Xi, U)

    def price_logistic(self, X, y, xi, Xi, U):
        from refvi.ngvi import estimators, logistic_model
        return estimators.price_logistic(logistic_model(X, y), xi, Xi, U)

    def glm_neg_elbo(self, kind, X, y, xi, Xi):
        from refvi.ngvi import logistic_model, poisson_model
        return (logistic_model if kind == "logistic" else poisson_model)(X, y).neg_elbo(xi, Xi)

    def glm_grad(self, kind, X, y, xi, Xi):
        from refvi.ngvi import logistic_model, poisson_model
        return (logistic_model if kind == "logistic" else poisson_model)(X, y).grad_neg_elbo(xi, Xi)

    def glm_ngd_exact(self, kind, X, y, T, gamma, init):
        from refvi.ngvi import logistic_model, ngd_exact, poisson_model
        return ngd_exact((logistic_model if kind == "logistic" else poisson_model)(X, y), T, gamma, init)[-1]

    def glm_ngd(self, kind, X, y, gammas, U, estimator="price", batches=None, init=None):
        from refvi.ngvi import logistic_model, ngd_glm, poisson_model
        model = (logistic_model if kind == "logistic" else poisson_model)(X, y)
        gammas = np.asarray(gammas, dtype=np.float64)
        r = ngd_glm(model, gammas.size, gammas, base_samples=U, batches=batches, init=init, estimator=estimator)
        return r.lam, r.Lam

    def blr_sgd(self, X, y, sigma2, P, mp, indices, steps, init=None):
        from refvi.ngvi.sgd_baseline import sgd_blr
        indices = np.asarray(indices)
        r = sgd_blr(self._blr(X, y, sigma2, P, mp), indices.shape[0], indices.shape[1], np.asarray(steps, float),
                    indices=indices, init=init)
        return r.lam, r.Lam

    def glm_sgd(self, kind, X, y, steps, U, estimator="price", batches=None, init=None):
        from refvi.ngvi import logistic_model, poisson_model
        from refvi.ngvi.sgd_baseline import sgd_glm
        steps = np.asarray(steps, dtype=np.float64)
        r = sgd_glm((logistic_model if kind == "logistic" else poisson_model)(X, y), steps.size, steps,
                    base_samples=U, batches=batches, init=init, estimator=estimator)
        return r.lam, r.Lam
