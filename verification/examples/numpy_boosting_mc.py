"""Monte Carlo boosting VI of the plain-NumPy example implementation (Locatello et al., seed 001 §5 and Figure 3),
written from the paper only; it imports nothing of refvi.  Conventions in
:meth:`refvi.verification.protocol.boosting.BoostingAdapter.mc_boost`.

The objective is kept as one table: ``logN[k, i]`` = log N(z_i; mu_k, diag sigma^2) over the pooled draws z_i of all
components and ``logp[i]`` = log p(z_i), so f(alpha) = sum_k alpha_k mean_{i in k} (logsumexp_l(log alpha_l +
logN[l, i]) - logp[i]).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from scipy import optimize
from scipy.special import logsumexp

from .numpy_targets import model_of


def _logp(target, Z):  # this example's own model of the target (numpy_targets.py)
    return model_of(target).logp(Z)


def _grad_logp(target, Z):
    return model_of(target).grad(Z)


def mean_field(target, U):
    """argmin over (m, log sigma) of -mean_s log p(m + sigma u_s) - sum log sigma, by L-BFGS-B from (0, 0) with
    log sigma in [-25, 8] (an unbounded line search can overflow exp)."""
    U = np.atleast_2d(np.asarray(U, float))
    d = U.shape[1]

    def neg(x):
        m, s = x[:d], np.exp(x[d:])
        Z = m + s * U
        G = _grad_logp(target, Z)
        return -np.mean(_logp(target, Z)) - np.sum(x[d:]), np.concatenate([-G.mean(0), -(G * U).mean(0) * s - 1.0])

    x = optimize.minimize(
        neg,
        np.zeros(2 * d),
        jac=True,
        method="L-BFGS-B",
        bounds=[(None, None)] * d + [(-25, 8)] * d,
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 2000},
    ).x
    return x[:d], np.exp(x[d:])


def _log_normal(Z, means, sigma):
    """(K, n): log N(z_n; means_k, diag sigma^2)."""
    t = (Z[None, :, :] - np.asarray(means)[:, None, :]) / sigma
    return -0.5 * np.sum(t * t, -1) - np.sum(np.log(sigma)) - 0.5 * sigma.size * math.log(2 * math.pi)


def _objective(alpha, logN, logp, S):
    a = np.asarray(alpha, float)
    with np.errstate(divide="ignore"):
        lq = logsumexp(logN + np.log(a)[:, None], axis=0)
    return float(a @ np.mean((lq - logp).reshape(a.size, S), axis=1))


def boost(target, n_iter, rule, init, n_samples, mean_box, seed):
    """Frank-Wolfe on the sample-average objective (see the module docstring)."""
    rng = np.random.default_rng(seed)
    m0, sigma = (np.asarray(a, float) for a in init)
    lo, hi = m0 - mean_box * sigma, m0 + mean_box * sigma
    means, draws = [m0], [m0 + sigma * rng.standard_normal((n_samples, m0.size))]
    logp = _logp(target, draws[0])
    alpha = np.ones(1)
    history, fs = [alpha], [_objective(alpha, _log_normal(draws[0], means, sigma), logp, n_samples)]
    lmo_draws = []
    for t in range(n_iter):
        mu, U = _lmo(target, means, alpha, sigma, lo, hi, rng)
        means.append(mu)
        lmo_draws.append(U)
        draws.append(means[-1] + sigma * rng.standard_normal((n_samples, m0.size)))
        logp = np.concatenate([logp, _logp(target, draws[-1])])
        logN = _log_normal(np.concatenate(draws), means, sigma)
        f = lambda a: _objective(a, logN, logp, n_samples)  # noqa: E731
        prev, vertex = np.append(alpha, 0.0), np.eye(t + 2)[-1]
        if rule == "fixed":
            alpha = prev + 2.0 / (t + 3.0) * (vertex - prev)
        elif rule == "line_search":
            g = optimize.minimize_scalar(
                lambda g: f(prev + g * (vertex - prev)), bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-8}
            ).x
            alpha = min((prev, vertex, prev + g * (vertex - prev)), key=f)
        else:
            alpha = _simplex_argmin(f, prev, t)
        history.append(alpha)
        fs.append(f(alpha))
    means_out = np.array(means)
    return SimpleNamespace(
        means=means_out,
        sigma=sigma,
        draws=np.array(draws),
        lmo_draws=np.array(lmo_draws).reshape(n_iter, -1, m0.size),
        weights=alpha,
        weights_history=history,
        f=np.array(fs),
        sample=sampler(means_out, sigma, history),
    )


def sampler(means, sigma, history):
    """``sample(n, seed, t=None)``: ancestral draws from q^T (or q^t), a component k ~ alpha, then N(mu_k, sigma^2)."""

    def sample(n, seed, t=None):
        g = np.random.default_rng(seed)
        a = history[-1 if t is None else t]
        k = g.choice(a.size, size=int(n), p=a / a.sum())
        return means[k] + sigma * g.standard_normal((int(n), sigma.size))

    return sample


def _simplex_argmin(f, prev, t):
    """Fully corrective weights: f over the simplex by SLSQP from the fixed-step point, kept only if not worse."""
    start = prev + 2.0 / (t + 3.0) * (np.eye(prev.size)[-1] - prev)
    res = optimize.minimize(
        lambda a: f(np.maximum(a, 0.0)),
        start,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * prev.size,
        constraints=[{"type": "eq", "fun": lambda a: np.sum(a) - 1.0}],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    a = np.maximum(res.x, 0.0)
    a = a / a.sum()
    return a if f(a) <= f(prev) else prev


def _lmo(target, means, alpha, sigma, lo, hi, rng, n_draws=64, n_starts=3):
    """argmin over mu in [lo, hi] of mean_s [log q(mu + sigma u_s) - log p(mu + sigma u_s)] (L-BFGS-B, several starts,
    the gradient through the reparameterisation), and the draws u it averaged over."""
    U = rng.standard_normal((n_draws, sigma.size))
    M, la = np.asarray(means), np.log(np.maximum(alpha, 1e-300))

    def obj(mu):
        Z = mu + sigma * U
        L = _log_normal(Z, M, sigma) + la[:, None]
        lq = logsumexp(L, axis=0)
        resp = np.exp(L - lq)
        grad_lq = -(Z - resp.T @ M) / sigma**2
        return float(np.mean(lq - _logp(target, Z))), np.mean(grad_lq - _grad_logp(target, Z), axis=0)

    runs = [
        optimize.minimize(obj, rng.uniform(lo, hi), jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi, strict=True)))
        for _ in range(n_starts)
    ]
    return min(runs, key=lambda r: r.fun).x, U
