"""Seed 004 sub-adapter of the plain-NumPy example implementation, written from Wu & Gardner (ICML 2024) only; it
imports nothing of refvi.  Conventions (see ``refvi.verification.protocol.ngvi``): natural parameters (lam, Lam) =
(Sigma^-1 mu, -Sigma^-1 / 2), expectation parameters (xi, Xi) = (mu, Sigma + mu mu^T), gradients with respect to
omega = (xi, Xi) paired by v^T w + tr(M^T N)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import expit, gammaln

from ._validate import need


def _moment(lam, Lam):
    S = np.linalg.inv(-2.0 * np.asarray(Lam, float))
    S = 0.5 * (S + S.T)
    return S @ lam, S


def _natural(mu, S):
    P = np.linalg.inv(np.asarray(S, float))
    P = 0.5 * (P + P.T)
    return P @ mu, -0.5 * P


def _start(init, d):
    """The natural parameters a run starts from: N(0, I) for None, else ``init`` = (lam (d,), Lam (d, d))."""
    if init is None:
        return np.zeros(d), -0.5 * np.eye(d)
    lam, Lam = (np.asarray(x, float) for x in init)
    need(lam.shape == (d,) and Lam.shape == (d, d), f"init must be (lam ({d},), Lam ({d}, {d})) for d = {d}")
    return lam, Lam


def _expectation(lam, Lam):
    mu, S = _moment(lam, Lam)
    return mu, S + np.outer(mu, mu)


def _from_expectation(xi, Xi):
    return _natural(*_mean_cov(xi, Xi))


def _pairs(d):
    return [(i, j) for i in range(d) for j in range(i + 1, d)]


def _kl(mu1, S1, mu2, S2):
    d = len(mu1)
    P2 = np.linalg.inv(S2)
    r = np.asarray(mu2, float) - mu1
    return 0.5 * (np.trace(P2 @ S1) + r @ P2 @ r - d + np.linalg.slogdet(S2)[1] - np.linalg.slogdet(S1)[1])


def _rows(rows, n):
    """A mini-batch: a non-empty 1-D array of row indices in [0, n)."""
    rows = np.asarray(rows)
    need(
        rows.ndim == 1
        and rows.size > 0
        and np.issubdtype(rows.dtype, np.integer)
        and rows.min() >= 0
        and rows.max() < n,
        f"a batch must be a non-empty list of row indices in [0, {n}), got {rows.tolist()}",
    )
    return rows


def _in_domain(eta):
    """Remark 2: an update whose Lam is not negative definite leaves D; refuse it rather than return it."""
    if np.linalg.eigvalsh(0.5 * (eta[1] + eta[1].T))[-1] >= 0:
        raise ValueError("the update leaves the natural-parameter domain (Lam not negative definite)")
    return eta


_GH_T, _GH_W = np.polynomial.hermite_e.hermegauss(160)
_GH_W = _GH_W / math.sqrt(2 * math.pi)


def _blr_data(X, y, P, mp) -> None:
    """Example 1's data and prior: X (n, d), y (n,), P (d, d), mp (d,)."""
    X, y, P, mp = (np.asarray(a, float) for a in (X, y, P, mp))
    d = X.shape[1] if X.ndim == 2 else -1
    need(
        d >= 1 and y.shape == (X.shape[0],) and P.shape == (d, d) and mp.shape == (d,),
        f"Bayesian linear regression needs X (n, d), y (n,), P (d, d), mp (d,): got {X.shape}, {y.shape}, "
        f"{P.shape}, {mp.shape}",
    )


def _mean_cov(xi, Xi):
    """(mu, Sigma) = (xi, Xi - xi xi^T) of the expectation parameters xi (d,), Xi (d, d)."""
    xi, Xi = np.asarray(xi, float), np.asarray(Xi, float)
    need(xi.ndim == 1 and Xi.shape == (xi.size, xi.size), f"xi must be (d,) and Xi (d, d): got {xi.shape}, {Xi.shape}")
    return xi, Xi - np.outer(xi, xi)


class NumpyNGVI:
    """Exponential-family maps (§2.1, App. A), NGD = mirror descent (§2.2, Lemma 1), stochastic NGVI for Bayesian
    linear regression (Example 1, Thm 1) and GLMs (§3.2, App. B), Price and autodiff estimators."""

    name = "numpy-adapter.ngvi"

    # ---- maps, potentials, divergences -------------------------------------------------------------------------
    def natural_from_moment(self, mu, S):
        return _natural(np.asarray(mu, float), S)

    def expectation_from_natural(self, lam, Lam):
        return _expectation(np.asarray(lam, float), Lam)

    def natural_from_expectation(self, xi, Xi):
        return _from_expectation(np.asarray(xi, float), Xi)

    def log_partition(self, lam, Lam):  # A = -1/4 lam^T Lam^-1 lam - 1/2 logdet(-2 Lam)
        return float(-0.25 * lam @ np.linalg.solve(Lam, lam) - 0.5 * np.linalg.slogdet(-2.0 * np.asarray(Lam))[1])

    def conjugate(self, xi, Xi):  # A* = -1/2 logdet(Xi - xi xi^T) - d/2
        xi, S = _mean_cov(xi, Xi)
        return float(-0.5 * np.linalg.slogdet(S)[1] - 0.5 * len(xi))

    def kl(self, mu1, S1, mu2, S2):
        for mu, S in ((mu1, S1), (mu2, S2)):
            mu, S = np.asarray(mu, float), np.asarray(S, float)
            need(mu.ndim == 1 and S.shape == (mu.size, mu.size), "each mean must be (d,) and its covariance (d, d)")
            need(
                np.allclose(S, S.T, rtol=0, atol=1e-10 * max(1.0, float(np.abs(S).max()))),
                "a covariance must be symmetric",
            )
        need(np.shape(mu1) == np.shape(mu2), "the two Gaussians must have the same dimension")
        return float(_kl(np.asarray(mu1, float), np.asarray(S1, float), np.asarray(mu2, float), np.asarray(S2, float)))

    def bregman_A(self, eta1, eta2):
        w2 = _expectation(*eta2)
        inner = w2[0] @ (eta1[0] - eta2[0]) + np.sum(w2[1] * (np.asarray(eta1[1]) - eta2[1]))
        return float(self.log_partition(*eta1) - self.log_partition(*eta2) - inner)

    def bregman_A_star(self, w1, w2):
        e2 = _from_expectation(*w2)
        inner = e2[0] @ (w1[0] - w2[0]) + np.sum(e2[1] * (np.asarray(w1[1]) - w2[1]))
        return float(self.conjugate(*w1) - self.conjugate(*w2) - inner)

    def fisher_minimal(self, lam, Lam):
        """Cov of the minimal statistic (z_i, z_i^2, 2 z_i z_j for i < j) under q (Def. 1), by Isserlis, each block as
        one array expression: the quadratic statistics are c_a z_I[a] z_J[a] (c_a = 1 on the diagonal, 2 off it)."""
        mu, S = _moment(np.asarray(lam, float), Lam)
        d = len(mu)
        I, J = np.array([(i, i) for i in range(d)] + _pairs(d)).T
        c = np.where(I == J, 1.0, 2.0)
        F = np.zeros((d + len(I),) * 2)
        F[:d, :d] = S
        F[:d, d:] = c * (mu[I] * S[:, J] + mu[J] * S[:, I])  # Cov(z_r, z_i z_j) = mu_i S_rj + mu_j S_ri
        F[d:, :d] = F[:d, d:].T
        # Cov(z_i z_j, z_k z_l) for every pair of quadratic statistics: rows (i, j), columns (k, l)
        i, j, k, l = I[:, None], J[:, None], I[None, :], J[None, :]
        Sik, Sil, Sjk, Sjl = S[i, k], S[i, l], S[j, k], S[j, l]
        mi, mj, mk, ml = mu[i], mu[j], mu[k], mu[l]
        cov = Sik * Sjl + Sil * Sjk + mi * mk * Sjl + mi * ml * Sjk + mj * mk * Sil + mj * ml * Sik
        F[d:, d:] = (c[:, None] * c[None, :]) * cov
        return F

    # ---- steps (Eqs. 7, 8, 10) ------------------------------------------------------------------------------------
    def ngd_step(self, eta, g, gamma):  # eta - gamma grad_omega l, refused outside D
        need(np.isfinite(gamma) and gamma >= 0, f"gamma must be >= 0, got {gamma}")
        return _in_domain(
            (eta[0] - gamma * np.asarray(g[0]), eta[1] - gamma * 0.5 * (np.asarray(g[1]) + np.asarray(g[1]).T))
        )

    def ngd_step_fim(self, eta, g_theta, gamma):  # theta - gamma F^-1 grad_theta l, minimal coordinates
        lam, Lam = eta
        d = len(lam)
        theta = np.concatenate([lam, np.diag(Lam), [Lam[i, j] for i, j in _pairs(d)]])
        new = theta - gamma * np.linalg.solve(self.fisher_minimal(lam, Lam), g_theta)
        L2 = np.diag(new[d : 2 * d])
        for k, (i, j) in enumerate(_pairs(d)):
            L2[i, j] = L2[j, i] = new[2 * d + k]
        return new[:d], L2

    def md_step(self, omega, g, gamma):  # grad A*(omega+) = grad A*(omega) - gamma g
        return _expectation(*self.ngd_step(_from_expectation(*omega), g, gamma))

    def natural_update(self, eta, eta_hat, gamma):  # (1 - gamma) eta + gamma eta_hat
        Lh = 0.5 * (np.asarray(eta_hat[1]) + np.asarray(eta_hat[1]).T)
        return _in_domain(((1 - gamma) * eta[0] + gamma * np.asarray(eta_hat[0]), (1 - gamma) * eta[1] + gamma * Lh))

    # ---- Bayesian linear regression (Example 1) -------------------------------------------------------------------
    def _blr_posterior(self, X, y, s2, P, mp):
        _blr_data(X, y, P, mp)
        lp, Lp = _natural(mp, P)
        return X.T @ y / s2 + lp, Lp - 0.5 * X.T @ X / s2

    def _blr_noisy(self, X, y, s2, P, mp, idx):  # on data its caller checked (a run or an enumeration calls it often)
        idx = _rows(idx, X.shape[0])
        lp, Lp = _natural(mp, P)
        c = X.shape[0] / (idx.size * s2)
        return c * X[idx].T @ y[idx] + lp, Lp - 0.5 * c * X[idx].T @ X[idx]

    def blr_neg_elbo(self, X, y, sigma2, P, mp, xi, Xi):
        _blr_data(X, y, P, mp)
        xi, S = _mean_cov(xi, Xi)
        n = X.shape[0]
        nll = 0.5 * n * math.log(2 * math.pi * sigma2) + (y @ y - 2 * y @ X @ xi + np.sum((X.T @ X) * Xi)) / (
            2 * sigma2
        )
        return float(nll + _kl(xi, S, mp, P))

    def blr_log_evidence(self, X, y, sigma2, P, mp):
        """log N(y; X mp, X P X^T + sigma2 I) through the Cholesky factor of the marginal covariance."""
        Lk = np.linalg.cholesky(X @ P @ X.T + sigma2 * np.eye(X.shape[0]))
        r = np.linalg.solve(Lk, y - X @ mp)
        return float(-0.5 * r @ r - np.log(np.diag(Lk)).sum() - 0.5 * X.shape[0] * math.log(2 * math.pi))

    def blr_grad(self, X, y, sigma2, P, mp, xi, Xi):  # eta(omega) - eta* (App. C.1)
        lam, Lam = _from_expectation(xi, Xi)
        ls, Ls = self._blr_posterior(X, y, sigma2, P, mp)
        return lam - ls, Lam - Ls

    def blr_stochastic_grad(self, X, y, sigma2, P, mp, xi, Xi, idx):  # Eq. (15)
        _blr_data(X, y, P, mp)
        lam, Lam = _from_expectation(xi, Xi)
        lh, Lh = self._blr_noisy(X, y, sigma2, P, mp, idx)
        return lam - lh, Lam - Lh

    def blr_run(self, X, y, sigma2, P, mp, indices, init=None, steps=None):
        """Stochastic NGD with gamma_t = 2/(t+2) (Thm 1) and the omega average started at omega(q_0)."""
        *_, (eta, xb, Xb) = self._blr_states(X, y, sigma2, P, mp, indices, init, steps)
        return eta[0], eta[1], xb, Xb

    def _blr_states(self, X, y, sigma2, P, mp, indices, init=None, steps=None):
        """(eta_t, xi_bar_t, Xi_bar_t) for t = 0..T: the iterates of :meth:`blr_run` and its omega average."""
        _blr_data(X, y, P, mp)
        d, T = X.shape[1], len(indices)
        eta = _start(init, d)
        gam = 2.0 / (np.arange(T) + 2.0) if steps is None else np.asarray(steps, float)
        xb, Xb = _expectation(*eta)
        yield eta, xb, Xb
        for idx, g in zip(indices, gam, strict=True):
            eta = self.natural_update(eta, self._blr_noisy(X, y, sigma2, P, mp, idx), g)
            xi, Xi = _expectation(*eta)
            xb, Xb = (1 - g) * xb + g * xi, (1 - g) * Xb + g * Xi
            yield eta, xb, Xb

    def blr_history(self, X, y, sigma2, P, mp, indices, at):
        """:meth:`blr_run` from N(0, I); the KLs to the posterior (from its natural parameters) after the steps in
        ``at``."""
        post = _moment(*self._blr_posterior(X, y, sigma2, P, mp))
        states = list(self._blr_states(X, y, sigma2, P, mp, indices))
        its = [t for t in range(1, len(states)) if t in set(at)]
        last = [_kl(*_moment(*states[t][0]), *post) for t in its]
        avg = [_kl(states[t][1], states[t][2] - np.outer(states[t][1], states[t][1]), *post) for t in its]
        eta, xb, Xb = states[-1]
        return np.array(its), np.array(last), np.array(avg), (eta[0], eta[1], xb, Xb)

    def omega_average(self, omegas):
        """Thm 1: weights 2 (t + 1) / ((T + 1)(T + 2)) on omega_{t+1}, t = 0..T."""
        T1 = len(omegas)
        w = 2.0 * np.arange(1, T1 + 1) / (T1 * (T1 + 1))
        return (
            sum(wk * np.asarray(o[0], float) for wk, o in zip(w, omegas, strict=True)),
            sum(wk * np.asarray(o[1], float) for wk, o in zip(w, omegas, strict=True)),
        )

    def blr_trajectory(self, X, y, sigma2, P, mp, indices, steps, init=None):
        return [eta for eta, _, _ in self._blr_states(X, y, sigma2, P, mp, indices, init, steps)]

    def blr_variance(self, X, y, sigma2, P, mp, eta, gamma, batch_size):
        """Eq. (12) averaged over all n^m ordered batches (each of probability n^-m).  The omega difference is
        taken in closed form, (omega_a - omega_b) / gamma = (dmu, dS + dmu mu_a^T + mu_b dmu^T) with
        dS = 2 S_a dLam S_b and dmu = S_a (dlam + 2 dLam mu_b), so tiny steps lose nothing to cancellation."""
        X, y = np.asarray(X, float), np.asarray(y, float)
        n = X.shape[0]
        ls, Ls = self._blr_posterior(X, y, sigma2, P, mp)
        lam, Lam = eta
        S_a = np.linalg.inv(-2 * ((1 - gamma) * Lam + gamma * Ls))
        mu_a = S_a @ ((1 - gamma) * lam + gamma * ls)
        total = 0.0
        for idx in itertools.product(range(n), repeat=batch_size):
            lh, Lh = self._blr_noisy(X, y, sigma2, P, mp, list(idx))
            S_b = np.linalg.inv(-2 * ((1 - gamma) * Lam + gamma * Lh))
            mu_b = S_b @ ((1 - gamma) * lam + gamma * lh)
            dl, dL = ls - lh, Ls - Lh
            dmu = S_a @ (dl + 2 * dL @ mu_b)
            dXi = 2 * S_a @ dL @ S_b + np.outer(dmu, mu_a) + np.outer(mu_b, dmu)
            total += dl @ dmu + np.sum(dL * dXi)
        return float(total / n**batch_size)

    def blr_lemma3_bound(self, X, y, sigma2, P, mp, batch_size):
        X, y = np.asarray(X, float), np.asarray(y, float)
        n = X.shape[0]
        nu = max(1.0, float(np.linalg.eigvalsh(P).max()))
        Z = y[:, None] * X
        b = float(np.linalg.norm(Z, axis=1).max()) / sigma2  # the corrected b of Lemma 9 (E004-3)
        s1 = float(np.mean(np.sum((Z - Z.mean(0)) ** 2, axis=1)))
        O = X[:, :, None] * X[:, None, :]
        s2 = float(np.mean(np.sum((O - O.mean(0)) ** 2, axis=(1, 2))))
        inner = nu * s1 + nu**2 * s2 / 2 + 2 * nu**2 * b * math.sqrt(s1 * s2) * n + nu**3 * b**2 * s2 * n**2
        return inner * n**2 / (sigma2**2 * batch_size)

    # ---- estimators (Eq. 11, Algorithm 1) -------------------------------------------------------------------------
    def _samples(self, xi, Xi, U):
        L = np.linalg.cholesky(np.asarray(Xi) - np.outer(xi, xi))
        return L, xi + np.atleast_2d(U) @ L.T

    def price(self, grad_hess, xi, Xi, U):  # Bonnet and Price: (E g - E[H] mu, E[H] / 2)
        _, Z = self._samples(xi, Xi, U)
        G, H = grad_hess(Z)
        G, H = np.asarray(G, float), np.asarray(H, float)
        S, d = Z.shape
        if G.shape != (S, d) or H.shape not in ((d, d), (S, d, d)):
            raise ValueError(f"grad_hess: G must be {(S, d)} and H {(d, d)} or {(S, d, d)}, got {G.shape}, {H.shape}")
        Hm = H if H.ndim == 2 else H.mean(axis=0)
        Hm = 0.5 * (Hm + Hm.T)
        return np.mean(G, axis=0) - Hm @ xi, 0.5 * Hm

    def autodiff(self, grad, xi, Xi, U):
        """Reparameterisation z = xi + L u with L = chol(Xi - xi xi^T), back-propagated to (xi, Xi) (Algorithm 1)."""
        L, Z = self._samples(xi, Xi, U)
        U = np.atleast_2d(U)
        Linv = np.linalg.inv(L)
        gx, GX = np.zeros(len(xi)), np.zeros((len(xi),) * 2)
        for g, u in zip(np.atleast_2d(grad(Z)), U, strict=True):
            B = np.tril(L.T @ np.tril(np.outer(g, u)))  # dL of Sigma = L L^T through the Cholesky map
            B[np.diag_indices_from(B)] *= 0.5
            M = Linv.T @ B @ Linv
            Sbar = 0.5 * (M + M.T)  # d/dSigma; Sigma = Xi - xi xi^T
            GX += Sbar
            gx += g - 2.0 * Sbar @ xi
        return gx / len(U), GX / len(U)

    def price_logistic(self, X, y, xi, Xi, U, idx=None):
        if idx is not None:  # Eq. (15): n/m times the sum over the batch
            idx = _rows(idx, len(y))
            gx, G = self.price_logistic(X[idx], y[idx], xi, Xi, U)
            return len(y) / idx.size * gx, len(y) / idx.size * G

        def grad_hess(Z):
            A = Z @ X.T
            s = expit(A) * expit(-A)
            return (y * expit(-y * A)) @ X, -(X.T * s.mean(axis=0)) @ X

        return self.price(grad_hess, xi, Xi, U)

    # ---- GLMs (§3.2, §5): exact expectations by Gauss-Hermite (logistic) or closed form (Poisson) -----------------
    def _glm_parts(self, kind, X, y, mu, S):
        d = np.shape(mu)[0]
        need(
            np.shape(S) == (d, d) and np.ndim(X) == 2 and np.shape(X)[1] == d and np.shape(y) == (np.shape(X)[0],),
            f"the GLM needs X (n, d), y (n,), xi (d,) and Xi (d, d): got X {np.shape(X)}, y {np.shape(y)}, "
            f"xi {np.shape(mu)}, Xi {np.shape(S)}",
        )
        a, v = X @ mu, np.maximum(np.einsum("ni,ij,nj->n", X, S, X), 0.0)
        if kind == "poisson":
            e = np.exp(a + 0.5 * v)
            return y * a - e - gammaln(y + 1.0), y - e, -e
        u = a[:, None] + np.sqrt(v)[:, None] * _GH_T[None, :]
        yy = y[:, None]
        f = -np.logaddexp(0.0, -yy * u) @ _GH_W
        f1 = (yy * expit(-yy * u)) @ _GH_W
        f2 = -(expit(u) * expit(-u)) @ _GH_W
        return f, f1, f2

    def glm_loglik(self, kind, X, y, Z):
        if kind == "poisson":
            need(
                np.all(np.asarray(y) >= 0) and np.all(np.asarray(y) == np.round(y)),
                "Poisson counts must be non-negative integers",
            )
        eta = np.atleast_2d(Z) @ np.asarray(X, float).T
        if kind == "logistic":
            return np.sum(-np.log1p(np.exp(-np.abs(y * eta))) + np.minimum(y * eta, 0.0), axis=1)
        return np.sum(y * eta - np.exp(eta), axis=1) - np.sum([math.lgamma(v + 1.0) for v in y])

    def glm_neg_elbo(self, kind, X, y, xi, Xi):
        mu, S = _mean_cov(xi, Xi)
        f, _, _ = self._glm_parts(kind, X, y, mu, S)
        d = len(xi)
        return float(-np.sum(f) + _kl(mu, S, np.zeros(d), np.eye(d)))

    def glm_grad(self, kind, X, y, xi, Xi):
        mu, S = _mean_cov(xi, Xi)
        _, f1, f2 = self._glm_parts(kind, X, y, mu, S)
        H = (X * f2[:, None]).T @ X
        H = 0.5 * (H + H.T)
        lam, Lam = _from_expectation(xi, Xi)
        d = len(xi)
        return -(X.T @ f1 - H @ mu) + lam, -0.5 * H + Lam + 0.5 * np.eye(d)

    def glm_ngd(self, kind, X, y, gammas, U, estimator="price", batches=None, init=None):
        """Stochastic NGD with the Price or the reparameterisation estimator on the rows of U[t] (batch rescaled)."""
        X, y = np.asarray(X, float), np.asarray(y, float)
        n, d = X.shape
        need(y.shape == (n,), f"y must have one entry per row of X ({n}), got shape {y.shape}")
        eta = _start(init, d)
        need(
            np.ndim(U) == 3 and np.shape(U)[0] == len(gammas) and np.shape(U)[1] >= 1 and np.shape(U)[2] == d,
            "U must be (T, S >= 1, d)",
        )
        for t, g in enumerate(gammas):
            rows = np.arange(n) if batches is None else _rows(batches[t], n)
            Xb, yb, c = X[rows], y[rows], n / len(rows)

            def grad_hess(Z, Xb=Xb, yb=yb, c=c):
                A = Z @ Xb.T
                d1, d2 = (
                    (yb * expit(-yb * A), -expit(A) * expit(-A)) if kind == "logistic" else (yb - np.exp(A), -np.exp(A))
                )
                return c * d1 @ Xb, c * np.einsum("sn,ni,nj->sij", d2, Xb, Xb)

            xi, Xi = _expectation(*eta)
            if estimator == "price":
                gx, GX = self.price(grad_hess, xi, Xi, U[t])
            else:
                gx, GX = self.autodiff(lambda Z: grad_hess(Z)[0], xi, Xi, U[t])
            eta = self.natural_update(eta, (gx, GX - 0.5 * np.eye(d)), g)
        return eta

    @staticmethod
    def _sgd_step(m, C, step, gm, gC, Pinv, mp):
        """One step of the App. F baseline with the closed-form KL gradients; diag(C) clamped at 1e-10."""
        gm = gm + Pinv @ (m - mp)
        gC = gC + np.tril(Pinv @ C) - np.diag(1.0 / np.diag(C))
        m, C = m - step * gm, C - step * gC
        np.fill_diagonal(C, np.maximum(np.diag(C), 1e-10))
        return m, C

    def blr_sgd(self, X, y, sigma2, P, mp, indices, steps, init=None):
        X, y, mp = np.asarray(X, float), np.asarray(y, float), np.asarray(mp, float)
        n, d = X.shape
        m, C = (np.zeros(d), np.eye(d)) if init is None else (np.array(init[0], float), np.tril(init[1]))
        Pinv = np.linalg.inv(P)
        need(np.all(np.asarray(steps) >= 0), "step sizes must be >= 0")
        for rows, step in zip(np.asarray(indices), steps, strict=True):
            rows = _rows(rows, n)
            c, Xb, yb = n / (len(rows) * sigma2), X[rows], y[rows]
            m, C = self._sgd_step(m, C, step, -c * Xb.T @ (yb - Xb @ m), c * np.tril(Xb.T @ Xb @ C), Pinv, mp)
        return _natural(m, C @ C.T)

    def glm_sgd(self, kind, X, y, steps, U, estimator="price", batches=None, init=None):
        X, y = np.asarray(X, float), np.asarray(y, float)
        n, d = X.shape
        m, C = (np.zeros(d), np.eye(d)) if init is None else (np.array(init[0], float), np.tril(init[1]))
        need(np.all(np.asarray(steps) >= 0), "step sizes must be >= 0")
        for t, step in enumerate(steps):
            rows = np.arange(n) if batches is None else _rows(batches[t], n)
            Xb, yb, c, u = X[rows], y[rows], n / len(rows), np.atleast_2d(U[t])
            A = (m + u @ C.T) @ Xb.T
            d1, d2 = (
                (yb * expit(-yb * A), -expit(A) * expit(-A)) if kind == "logistic" else (yb - np.exp(A), -np.exp(A))
            )
            G = c * d1 @ Xb
            gC = -np.tril(G.T @ u) / len(u) if estimator == "reparam" else -np.tril(c * (Xb.T * d2.mean(0)) @ Xb @ C)
            m, C = self._sgd_step(m, C, step, -G.mean(axis=0), gC, np.eye(d), np.zeros(d))
        return _natural(m, C @ C.T)

    # histories (Figures 1-2): the run's prefixes, each evaluated exactly
    def glm_ngd_history(self, kind, X, y, gammas, U, at, estimator="price", batches=None):
        return self._glm_history(self.glm_ngd, kind, X, y, gammas, U, at, estimator, batches)

    def blr_sgd_history(self, X, y, sigma2, P, mp, indices, steps, at):
        post = _moment(*self._blr_posterior(X, y, sigma2, P, mp))
        its = _recorded(at, len(steps))
        vals = [_kl(*_moment(*self.blr_sgd(X, y, sigma2, P, mp, indices[:t], steps[:t])), *post) for t in its]
        return its, np.array(vals), self.blr_sgd(X, y, sigma2, P, mp, indices, steps)

    def glm_sgd_history(self, kind, X, y, steps, U, at, estimator="price", batches=None):
        return self._glm_history(self.glm_sgd, kind, X, y, steps, U, at, estimator, batches)

    def _glm_history(self, run, kind, X, y, steps, U, at, estimator, batches):
        """l(q_t) of ``run`` (glm_ngd or glm_sgd) after the iterations in ``at``, from its prefixes; and eta_T."""

        def prefix(t):
            return run(kind, X, y, steps[:t], U[:t], estimator, None if batches is None else batches[:t])

        its = _recorded(at, len(steps))
        vals = [self.glm_neg_elbo(kind, X, y, *_expectation(*prefix(t))) for t in its]
        return its, np.array(vals), prefix(len(steps))

    def glm_ngd_exact(self, kind, X, y, T, gamma, init):
        eta = _start(init, np.shape(X)[1])
        for _ in range(T):
            eta = self.ngd_step(eta, self.glm_grad(kind, X, y, *_expectation(*eta)), gamma)
        return eta


def _recorded(at, T):
    """The recorded iterations: ``at`` sorted, each in 1..T."""
    its = np.array(sorted({int(t) for t in at}), dtype=np.int64)
    need(its.size == 0 or (its[0] >= 1 and its[-1] <= T), f"recorded iterations must lie in 1..{T}")
    return its
