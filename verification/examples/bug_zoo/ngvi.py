"""Planted bugs in the seed 004 (natural-gradient VI) sub-adapter of the example implementation."""

from __future__ import annotations

import numpy as np

from refvi.verification.examples.bug_zoo import corrupts, mutant


@mutant("ngvi-kl-logdet-sign", "004", "ngvi.kl", "KL with the log-determinant ratio inverted")
def _(orig, owner):
    def kl(mu1, S1, mu2, S2):
        return orig(mu1, S1, mu2, S2) - (np.linalg.slogdet(S2)[1] - np.linalg.slogdet(S1)[1])

    return kl


@mutant("ngvi-update-swapped", "004", "ngvi.natural_update", "gamma eta + (1 - gamma) eta_hat (weights swapped)")
def _(orig, owner):
    return lambda eta, eta_hat, gamma: orig(eta, eta_hat, 1.0 - gamma)


@mutant("ngvi-batch-scale-off-by-one", "004", "ngvi.blr_stochastic_grad", "mini-batch rescaled by n/(m+1)")
def _(orig, owner):
    def blr_stochastic_grad(X, y, sigma2, P, mp, xi, Xi, idx):
        m = len(np.atleast_1d(idx))
        return orig(X, y, sigma2 * (m + 1) / m, P, mp, xi, Xi, idx)

    return blr_stochastic_grad


@mutant(
    "ngvi-blr-evidence-zero-prior-mean",
    "004",
    "ngvi.blr_log_evidence",
    "log p(y) with the prior mean left out of the marginal mean (N(y; 0, X P X^T + sigma2 I))",
)
def _(orig, owner):
    def blr_log_evidence(X, y, sigma2, P, mp):
        return orig(X, y, sigma2, P, np.zeros_like(np.asarray(mp, dtype=float)))

    return blr_log_evidence


@corrupts(
    "ngvi-history-avg-is-last",
    "004",
    "ngvi.blr_history",
    "the recorded KL of the omega average is the last iterate's (the average never enters the diagnostics)",
)
def _(out, **_):
    its, kl_last, kl_avg, final = out
    return its, kl_last, np.array(kl_last, dtype=float), final


@mutant("ngvi-thm1-step-index", "004", "ngvi.blr_run", "Thm 1's default steps 2/(t+3) instead of 2/(t+2)")
def _(orig, owner):
    def blr_run(X, y, sigma2, P, mp, indices, init=None, steps=None):
        if steps is None:
            steps = 2.0 / (np.arange(len(indices)) + 3.0)
        return orig(X, y, sigma2, P, mp, indices, init, steps)

    return blr_run


@mutant("ngvi-price-full-hessian", "004", "ngvi.price", "the Xi-block returned as E[H], not E[H]/2")
def _(orig, owner):
    def price(grad_hess, xi, Xi, U):
        gx, GX = orig(grad_hess, xi, Xi, U)
        return gx, 2.0 * np.asarray(GX)

    return price


@corrupts(
    "ngvi-fisher-pair-statistic",
    "004",
    "ngvi.fisher_minimal",
    "the statistic of Lam_ij taken as z_i z_j instead of 2 z_i z_j",
)
def _(out, lam, **_):
    F, pairs = np.array(out, dtype=float), slice(2 * len(lam), None)  # rows / columns of the off-diagonal Lam_ij
    F[pairs, :] *= 0.5
    F[:, pairs] *= 0.5
    return F


@mutant("ngvi-md-ascent", "004", "ngvi.md_step", "mirror step along +gradient")
def _(orig, owner):
    return lambda omega, g, gamma: orig(omega, g, -gamma)


@mutant("ngvi-poisson-no-variance", "004", "ngvi.glm_neg_elbo", "Poisson E exp(x^T z) = exp(x^T mu), variance dropped")
def _(orig, owner):
    def glm_neg_elbo(kind, X, y, xi, Xi):
        if kind != "poisson":
            return orig(kind, X, y, xi, Xi)
        S = np.asarray(Xi) - np.outer(xi, xi)
        a, v = X @ xi, np.einsum("ni,ij,nj->n", X, S, X)
        return orig(kind, X, y, xi, Xi) - np.sum(np.exp(a + 0.5 * v)) + np.sum(np.exp(a))

    return glm_neg_elbo


@mutant("ngvi-conjugate-printed", "004", "ngvi.conjugate", "A* without the -d/2 constant (Eq. 18 as printed)")
def _(orig, owner):
    return lambda xi, Xi: orig(xi, Xi) + 0.5 * len(xi)


@mutant(
    "ngvi-omega-average-uniform",
    "004",
    "ngvi.omega_average",
    "Theorem 1's omega average with uniform weights 1/(T+1) instead of 2(t+1)/((T+1)(T+2))",
)
def _(orig, owner):
    def omega_average(omegas):
        n = len(omegas)
        return (sum(np.asarray(o[0], float) for o in omegas) / n, sum(np.asarray(o[1], float) for o in omegas) / n)

    return omega_average


@mutant("ngvi-lemma3-sigma-power", "004", "ngvi.blr_lemma3_bound", "V_2 divided by sigma^2 instead of sigma^4")
def _(orig, owner):
    return lambda X, y, sigma2, P, mp, batch_size: orig(X, y, sigma2, P, mp, batch_size) * sigma2


@mutant("ngvi-variance-no-step-division", "004", "ngvi.blr_variance", "Eq. (12) without its 1/gamma factor")
def _(orig, owner):
    def blr_variance(X, y, sigma2, P, mp, eta, gamma, batch_size):
        return gamma * orig(X, y, sigma2, P, mp, eta, gamma, batch_size)

    return blr_variance


@mutant(
    "ngvi-price-hessian-unsymmetrized-twice",
    "004",
    "ngvi.price",
    "Price's E[H] symmetrized as H + H^T (the 1/2 dropped): the Xi-block doubled",
)
def _(orig, owner):
    def price(grad_hess, xi, Xi, U):
        def doubled(Z):
            G, H = grad_hess(Z)
            H = np.asarray(H, dtype=float)
            return G, H + np.swapaxes(H, -1, -2)

        return orig(doubled, xi, Xi, U)

    return price


def _batch_not_rescaled(restart):
    """A GLM loop (glm_ngd, glm_sgd) that takes each step on the mini-batch's rows alone, as if they were the whole
    data set: m/n of the likelihood instead of the batch rescaled by n/m.  ``restart(out)`` turns one step's output
    (natural parameters) into the next step's ``init``."""

    def make(orig, owner):
        def run(kind, X, y, steps, U, estimator="price", batches=None, init=None):
            if batches is None:
                return orig(kind, X, y, steps, U, estimator, batches, init)
            X, y, U = np.asarray(X), np.asarray(y), np.asarray(U)
            for t, step in enumerate(steps):
                out = orig(
                    kind,
                    X[np.asarray(batches[t])],
                    y[np.asarray(batches[t])],
                    [step],
                    U[t : t + 1],
                    estimator,
                    None,
                    init,
                )
                init = restart(out)
            return out

        return run

    return make


def _mean_and_cholesky(eta):
    S = np.linalg.inv(-2.0 * np.asarray(eta[1]))
    return S @ eta[0], np.linalg.cholesky(0.5 * (S + S.T))


mutant(
    "ngvi-glm-ngd-batch-not-rescaled",
    "004",
    "ngvi.glm_ngd",
    "stochastic NGD on a GLM uses the mini-batch sum without the n/m rescaling",
)(_batch_not_rescaled(lambda eta: eta))


@mutant(
    "ngvi-sgd-baseline-noise-sd-for-variance",
    "004",
    "ngvi.blr_sgd",
    "the BLR baseline scales the likelihood gradient by n / (m sigma) instead of n / (m sigma^2)",
)
def _(orig, owner):
    def blr_sgd(X, y, sigma2, P, mp, indices, steps, init=None):
        return orig(X, y, np.sqrt(sigma2), P, mp, indices, steps, init)

    return blr_sgd


mutant(
    "ngvi-sgd-baseline-batch-not-rescaled",
    "004",
    "ngvi.glm_sgd",
    "the GLM baseline uses the mini-batch sum without the n/m rescaling",
)(_batch_not_rescaled(_mean_and_cholesky))


@corrupts(
    "ngvi-glm-loglik-poisson-no-factorial",
    "004",
    "ngvi.glm_loglik",
    "the Poisson log-likelihood without its -log y_n! term (a constant in z, but not the model's value)",
)
def _(out, kind, y, **_):
    from scipy.special import gammaln

    return np.asarray(out) + (float(np.sum(gammaln(np.asarray(y, float) + 1.0))) if kind == "poisson" else 0.0)


@mutant(
    "ngvi-price-batch-scale-n-over-n",
    "004",
    "ngvi.price_logistic",
    "the mini-batch Price estimator not rescaled by n/m (the batch sum taken as the full-data sum)",
)
def _(orig, owner):
    def price_logistic(X, y, xi, Xi, U, idx=None):
        if idx is None:
            return orig(X, y, xi, Xi, U)
        idx = np.asarray(idx)
        gx, G = orig(X, y, xi, Xi, U, idx)
        return idx.size / len(y) * gx, idx.size / len(y) * G

    return price_logistic


# ---- the runs' recorded diagnostics (Figures 1-2) -------------------------------------------------------------------
@mutant(
    "ngvi-glm-history-one-step-early",
    "004",
    "ngvi.glm_ngd_history",
    "the negative ELBO recorded after iteration t is that of the iterate before the step (t - 1)",
)
def _(orig, owner):
    def glm_ngd_history(kind, X, y, gammas, U, at, estimator="price", batches=None):
        T, d = len(gammas), np.shape(X)[1]
        _, vals, eta = orig(kind, X, y, gammas, U, list(range(1, T + 1)), estimator, batches)
        before = np.concatenate([[owner.glm_neg_elbo(kind, X, y, np.zeros(d), np.eye(d))], vals])
        its = np.array(sorted(at), dtype=np.int64)
        return its, before[its - 1], eta

    return glm_ngd_history


@mutant(
    "ngvi-blr-sgd-history-reversed-kl",
    "004",
    "ngvi.blr_sgd_history",
    "the SGD baseline's Figure 1 curve records KL(posterior || q_t) instead of KL(q_t || posterior)",
)
def _(orig, owner):
    def blr_sgd_history(X, y, sigma2, P, mp, indices, steps, at):
        from refvi.verification.examples.numpy_ngvi import _moment

        its, _, eta = orig(X, y, sigma2, P, mp, indices, steps, at)
        post = _moment(*owner._blr_posterior(X, y, sigma2, P, mp))
        vals = [owner.kl(*post, *_moment(*owner.blr_sgd(X, y, sigma2, P, mp, indices[:t], steps[:t]))) for t in its]
        return its, np.array(vals), eta

    return blr_sgd_history


@mutant(
    "ngvi-blr-run-step-floor",
    "004",
    "ngvi.blr_run",
    "stochastic NGD floors its step at 0.1, gamma_t = max(2/(t+2), 0.1) (a minimum learning rate; the same as "
    "Thm 1's for t <= 18, a constant step after: the average stops converging)",
)
def _(orig, owner):
    def blr_run(X, y, sigma2, P, mp, indices, init=None, steps=None):
        if steps is None:
            steps = np.maximum(2.0 / (np.arange(len(indices)) + 2.0), 0.1)
        return orig(X, y, sigma2, P, mp, indices, init, steps)

    return blr_run


# ---- trust holes closed by issue #37: each passed the certificate before the statements checked the values ------


@mutant(
    "ngvi-thm1-nudged-average",
    "004",
    "ngvi.blr_run",
    "after 12 steps blr_run moves the omega average halfway to the exact posterior (the last iterate is right)",
)
def _(orig, owner):
    def blr_run(X, y, sigma2, P, mp, indices, init=None, steps=None):
        lam, Lam, xb, Xb = orig(X, y, sigma2, P, mp, indices, init, steps)
        if len(indices) <= 12:
            return lam, Lam, xb, Xb
        X, y, P, mp = (np.asarray(a, dtype=float) for a in (X, y, P, mp))
        prec = np.linalg.inv(P) + X.T @ X / sigma2
        S = np.linalg.inv(prec)
        mu = S @ (np.linalg.solve(P, mp) + X.T @ y / sigma2)
        return lam, Lam, 0.5 * (xb + mu), 0.5 * (Xb + S + np.outer(mu, mu))

    return blr_run


@corrupts(
    "ngvi-natural-from-moment-x2",
    "004",
    "ngvi.natural_from_moment",
    "natural_from_moment returns twice the right Lam (-Sigma^-1 instead of -Sigma^-1 / 2)",
)
def _(out, **_):
    return out[0], 2.0 * np.asarray(out[1])


@corrupts(
    "ngvi-glm-grad-double",
    "004",
    "ngvi.glm_grad",
    "the GLM's exact omega-gradient returned twice over (its zero, the minimizer, is unchanged: exact NGD still "
    "converges there)",
)
def _(out, **_):
    return 2.0 * np.asarray(out[0]), 2.0 * np.asarray(out[1])


@mutant(
    "ngvi-glm-ngd-exact-one-short",
    "004",
    "ngvi.glm_ngd_exact",
    "exact NGD on a GLM runs T - 1 steps when asked for T (an off-by-one invisible once converged)",
)
def _(orig, owner):
    return lambda kind, X, y, T, gamma, init: orig(kind, X, y, max(int(T) - 1, 0), gamma, init)
