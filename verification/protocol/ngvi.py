"""Seed 004 (Wu & Gardner, *Understanding stochastic natural-gradient VI*): the ``ngvi`` sub-adapter protocol.

Everything is plain arrays.  Conventions for a Gaussian q = N(mu, Sigma) in R^d:

* moment parameters (mu, Sigma): mu (d,), Sigma (d, d) symmetric positive definite;
* natural parameters eta = (lam, Lam) = (Sigma^{-1} mu, -Sigma^{-1}/2): lam (d,), Lam (d, d) symmetric *negative*
  definite (the domain D); an ``eta`` argument or result is a pair ``(lam, Lam)``;
* expectation parameters omega = (xi, Xi) = (E z, E z z^T) = (mu, Sigma + mu mu^T);
* a gradient with respect to omega is a pair (g_xi (d,), G_Xi (d, d)), paired with a direction by
  g^T v + tr(G^T V) (the Frobenius pairing; G need not be symmetrised by the caller);
* minimal coordinates theta = (lam, diag Lam, Lam_ij for i < j), whose sufficient statistic is
  (z, z_i^2, 2 z_i z_j): ``fisher_minimal`` returns the d + d(d+1)/2 square Fisher matrix in these coordinates;
* A(eta) = -1/4 lam^T Lam^{-1} lam - 1/2 log det(-2 Lam) (the (2 pi)^{-d/2} sits in the base measure) and its
  conjugate A*(omega) = -1/2 log det(Xi - xi xi^T) - d/2;
* Bayesian linear regression (Example 1): data X (n, d), y (n,), noise variance sigma2, prior N(mp, P);
  mini-batches are integer index arrays drawn *with replacement*, and the mini-batch natural-parameter estimate
  is eta_hat = (n/(m sigma2)) (X_b^T y_b, -X_b^T X_b / 2) + eta_prior;
* GLMs (§3.2, §5): ``kind`` "logistic" (y in {-1, +1}) or "poisson" (counts, log link), prior N(0, I); the
  negative ELBO l(omega) = -E_q log p(y | z) + KL(q || prior) must be exact (quadrature or closed form, not Monte
  Carlo: the statements compare to ~1e-8).

An update that would leave D (Lam not negative definite) must raise ``ValueError`` rather than return (Remark 2).
Call pattern: the exact-enumeration statements (Thm 1, Example 1, Def. 6) call ``blr_run``/``blr_stochastic_grad``
once per mini-batch path (up to a few thousand calls, d <= 3, n <= 4); the GLM statements call ``glm_neg_elbo`` a
few hundred times.  refvi's own adapter is :mod:`.refvi_ngvi`; a plain-NumPy one is
``refvi/verification/examples/numpy_ngvi.py``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class NGVIProtocol(Protocol):
    # ---- exponential-family maps (§2.1, App. A) -------------------------------------------------------------------
    def natural_from_moment(self, mu, S):
        """(mu, Sigma) -> (lam, Lam)."""

    def expectation_from_natural(self, lam, Lam):
        """grad A(eta) = omega (Eq. 4): (lam, Lam) -> (xi, Xi)."""

    def natural_from_expectation(self, xi, Xi):
        """grad A*(omega) = eta (Eq. 4): (xi, Xi) -> (lam, Lam)."""

    def log_partition(self, lam, Lam):
        """A(eta) (float)."""

    def conjugate(self, xi, Xi):
        """A*(omega) = -1/2 log det(Xi - xi xi^T) - d/2 (float; the paper's Eq. 18 omits -d/2)."""

    def kl(self, mu1, S1, mu2, S2):
        """KL(N(mu1, S1) || N(mu2, S2)) (float)."""

    def bregman_A(self, eta1, eta2):
        """D_A(eta1, eta2) = A(eta1) - A(eta2) - <grad A(eta2), eta1 - eta2> (Def. 3)."""

    def bregman_A_star(self, w1, w2):
        """D_A*(omega1, omega2) (Def. 3); equals KL(q1 || q2) by Lemma 4."""

    def fisher_minimal(self, lam, Lam):
        """F(eta) = Hess A in minimal coordinates (Def. 1), (d + d(d+1)/2) square."""

    # ---- steps (Def. 2, Eqs. 7, 8, 10) ----------------------------------------------------------------------------
    def ngd_step(self, eta, g, gamma):
        """Eq. (8): eta - gamma grad_omega l, with g = (g_xi, G_Xi); the matrix part is symmetrised."""

    def ngd_step_fim(self, eta, g_theta, gamma):
        """Eq. (7): theta - gamma F(theta)^{-1} grad_theta l in minimal coordinates; returns (lam, Lam)."""

    def md_step(self, omega, g, gamma):
        """Mirror descent with A* (Def. 4, via Eq. 10): returns omega_{t+1} = (xi, Xi)."""

    def natural_update(self, eta, eta_hat, gamma):
        """(1 - gamma) eta + gamma eta_hat (§3.1, the conjugate-model form of NGD)."""

    # ---- Bayesian linear regression (Example 1, Thm 1) ------------------------------------------------------------
    def blr_neg_elbo(self, X, y, sigma2, P, mp, xi, Xi):
        """l(omega) = -sum_i E_q log N(y_i; x_i^T z, sigma2) + KL(q || N(mp, P)) (Eq. 1), exact."""

    def blr_log_evidence(self, X, y, sigma2, P, mp):
        """log p(y) = log N(y; X mp, X P X^T + sigma2 I), the constant of Lemma 2's l(omega) = KL(q, q*) - log p(y)."""

    def blr_grad(self, X, y, sigma2, P, mp, xi, Xi):
        """Exact grad_omega l = eta(omega) - eta_posterior (App. C.1)."""

    def blr_stochastic_grad(self, X, y, sigma2, P, mp, xi, Xi, idx):
        """Eq. (15): eta(omega) - eta_hat(batch ``idx``).
        Convention: mini-batches are integer row indices (repeats allowed), the batch rescaled by n/m.
        """

    def blr_run(self, X, y, sigma2, P, mp, indices, init=None, steps=None):
        """Stochastic NGD on the batches ``indices`` (T, m) with steps (default Thm 1's 2/(t+2)), from ``init``
        (default N(0, I)); returns (lam_T, Lam_T, xi_bar, Xi_bar), the omega average started at omega(q_0) and
        updated as omega_bar <- (1 - gamma_t) omega_bar + gamma_t omega_{t+1}.
        Convention: init is the natural parameters (lam, Lam).
        Convention: mini-batches are integer row indices (repeats allowed), the batch rescaled by n/m.
        """

    def blr_history(self, X, y, sigma2, P, mp, indices, at):
        """:meth:`blr_run` with Thm 1's steps from N(0, I), recording after each iteration t in ``at`` (distinct, in
        1..T) the KL to the exact posterior of the last iterate q_t and of the omega average (the diagnostics of
        Figure 1); returns (iterations (k,), kl_last (k,), kl_avg (k,), (lam_T, Lam_T, xi_bar, Xi_bar))."""

    def blr_trajectory(self, X, y, sigma2, P, mp, indices, steps, init=None):
        """The natural iterates [eta_0, eta_1, ..., eta_T] of stochastic NGD (list of (lam, Lam) pairs).
        Convention: init is the natural parameters (lam, Lam).
        """

    def blr_variance(self, X, y, sigma2, P, mp, eta, gamma, batch_size):
        """Eq. (12) exactly at the state eta = (lam, Lam) with step gamma > 0 and i.i.d. uniform batches of
        ``batch_size`` indices: (1/gamma) E <eta* - eta_hat, omega_{t+1,*} - omega_{t+1}>, the expectation over every
        batch (App. C)."""

    def blr_lemma3_bound(self, X, y, sigma2, P, mp, batch_size):
        """Lemma 3's V_2 (Eq. 16) with b -> b / sigma^2 (erratum E004-3): (nu s1 + nu^2 s2 / 2 + 2 nu^2 b
        sqrt(s1 s2) n + nu^3 b^2 s2 n^2) n^2 / (sigma^4 m), nu = max(1, ||P||), b = max_i ||y_i x_i|| / sigma^2,
        s1, s2 the mean squared spreads of y_i x_i and x_i x_i^T around their means, m = ``batch_size``."""

    def omega_average(self, omegas):
        """Theorem 1's average 2/((T+1)(T+2)) sum_{t=0}^T (t+1) omega_{t+1} of the expectation parameters
        ``omegas`` = [(xi_1, Xi_1), ..., (xi_{T+1}, Xi_{T+1})]; returns (xi_bar, Xi_bar)."""

    # ---- estimators (§3.2, Eq. 11, Algorithm 1) -------------------------------------------------------------------
    def price(self, grad_hess, xi, Xi, U):
        """Bonnet/Price estimate of grad_omega E_q log p from samples z = xi + L u (L = chol(Xi - xi xi^T), u the
        rows of U): ``grad_hess(Z) -> (G (S, d), H)`` gives grad_z log p per row and Hess_z log p per row
        (S, d, d) or averaged (d, d); returns (mean G - H mu, H / 2)."""

    def autodiff(self, grad, xi, Xi, U):
        """The reparameterisation gradient through the Cholesky factor (Algorithm 1); ``grad(Z) -> (S, d)``."""

    def price_logistic(self, X, y, xi, Xi, U, idx=None):
        """:meth:`price` for the logistic likelihood sum_n log sigmoid(y_n x_n^T z); with ``idx`` (1-D row indices,
        repeats allowed) the mini-batch version of Eq. (15): (n / len(idx)) times the sum over the rows idx."""

    # ---- GLMs (§3.2, §5, App. E) ----------------------------------------------------------------------------------
    def glm_loglik(self, kind, X, y, Z):
        """log p(y | z) = sum_n log p(y_n | x_n^T z) at the rows of Z (S, d), shape (S,): logistic (y in {-1, +1})
        -sum softplus(-y_n x_n^T z); Poisson sum y_n x_n^T z - exp(x_n^T z) - log y_n!."""

    def glm_neg_elbo(self, kind, X, y, xi, Xi):
        """Exact l(omega) for the logistic / Poisson GLM with prior N(0, I)."""

    def glm_grad(self, kind, X, y, xi, Xi):
        """Exact grad_omega l = -grad_omega E log p + eta(omega) - eta_prior."""

    def glm_ngd_exact(self, kind, X, y, T, gamma, init):
        """T deterministic NGD steps (Eq. 8) with the exact gradient from ``init`` (lam, Lam); returns eta_T.
        Convention: init is the natural parameters (lam, Lam).
        """

    def glm_ngd(self, kind, X, y, gammas, U, estimator="price", batches=None, init=None):
        """Stochastic NGD (§3.1) on the logistic / Poisson GLM with prior N(0, I): step t estimates grad_omega E log p
        with ``estimator`` ("price": Eq. 11; "autodiff": Algorithm 1) from z = xi_t + L_t u, L_t = chol(Xi_t - xi_t
        xi_t^T), over the rows u of U[t] (U (T, S, d)), on the data rows batches[t] rescaled by n/m (all rows if
        None), then eta_{t+1} = (1 - gamma_t) eta_t + gamma_t (grad-hat + eta_prior).  From ``init`` (lam, Lam)
        (None: N(0, I)); returns eta_T = (lam, Lam).
        Convention: init is the natural parameters (lam, Lam).
        Convention: estimator is "price" (Eq. 11) or "autodiff" (Algorithm 1).
        Convention: mini-batches are integer row indices (repeats allowed), the batch rescaled by n/m.
        """

    def glm_ngd_history(self, kind, X, y, gammas, U, at, estimator="price", batches=None):
        """:meth:`glm_ngd` from N(0, I), recording after each iteration t in ``at`` (distinct, in 1..T) the exact
        negative ELBO l(omega_t) of the iterate (log y_n! included for Poisson; Figure 2's diagnostic); returns
        (iterations (k,), neg_elbo (k,), eta_T).
        Convention: estimator is "price" (Eq. 11) or "autodiff" (Algorithm 1).
        """

    # ---- the SGD baseline of §6 / App. F --------------------------------------------------------------------------
    def blr_sgd(self, X, y, sigma2, P, mp, indices, steps, init=None):
        """Projected SGD on the negative ELBO of BLR in (m, C), C lower triangular: with c = n / (m sigma^2),
        grad_m = -c X_b^T (y_b - X_b m) + P^{-1}(m - mp), grad_C = c tril(X_b^T X_b C) + tril(P^{-1} C) -
        diag(1/C_ii) on the batch rows indices[t]; m, C <- (m, C) - steps[t] grad, then diag(C) >= 1e-10.  From
        ``init`` (m, C) (None: (0, I)); returns the natural parameters (lam, Lam) of N(m_T, C_T C_T^T).
        Convention: init is the moment parameters (m, C), C lower triangular.
        Convention: mini-batches are integer row indices (repeats allowed), the batch rescaled by n/m.
        """

    def glm_sgd(self, kind, X, y, steps, U, estimator="price", batches=None, init=None):
        """The same on the logistic / Poisson GLM with prior N(0, I): grad_m = -mean_s g_s + m, grad_C = -tril(mean_s
        g_s u_s^T) ("reparam") or -tril(mean_s H_s C) ("price") + tril(C) - diag(1/C_ii), g_s, H_s the gradient and
        Hessian of log p at z_s = m + C u_s for the rows u_s of U[t], on batches[t] rescaled by n/m (all rows if
        None).  Returns (lam, Lam) as :meth:`blr_sgd`.
        Convention: init is the moment parameters (m, C), C lower triangular.
        Convention: estimator is "price" or "reparam".
        Convention: mini-batches are integer row indices (repeats allowed), the batch rescaled by n/m.
        """

    def blr_sgd_history(self, X, y, sigma2, P, mp, indices, steps, at):
        """:meth:`blr_sgd` from (0, I), recording after each iteration t in ``at`` (distinct, in 1..T) the KL from
        q_t = N(m_t, C_t C_t^T) to the exact posterior (Figure 1's SGD curve); returns (iterations (k,), kl (k,),
        eta_T)."""

    def glm_sgd_history(self, kind, X, y, steps, U, at, estimator="price", batches=None):
        """:meth:`glm_sgd` from (0, I), recording after each iteration t in ``at`` the exact negative ELBO of q_t (as
        :meth:`glm_ngd_history`, Figure 2's SGD curves); returns (iterations (k,), neg_elbo (k,), eta_T).
        Convention: estimator is "price" or "reparam".
        """


#: the exponential-family maps of the protocol (one function each of refvi.ngvi.expfam in refvi's adapter)
EXPFAM_METHODS = (
    "natural_from_moment",
    "expectation_from_natural",
    "natural_from_expectation",
    "log_partition",
    "conjugate",
    "kl",
    "bregman_A",
    "bregman_A_star",
    "fisher_minimal",
)

METHODS = (
    *EXPFAM_METHODS,
    "ngd_step",
    "ngd_step_fim",
    "md_step",
    "natural_update",
    "blr_neg_elbo",
    "blr_log_evidence",
    "blr_grad",
    "blr_stochastic_grad",
    "blr_run",
    "blr_history",
    "blr_trajectory",
    "blr_variance",
    "blr_lemma3_bound",
    "omega_average",
    "price",
    "autodiff",
    "price_logistic",
    "glm_loglik",
    "glm_neg_elbo",
    "glm_grad",
    "glm_ngd_exact",
    "glm_ngd",
    "glm_ngd_history",
    "blr_sgd",
    "blr_sgd_history",
    "glm_sgd",
    "glm_sgd_history",
)
