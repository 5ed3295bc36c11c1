"""Monte Carlo boosting VI for high-dimensional targets (seed 001 §5 "Real data", Figure 3).

Quadrature is out of reach beyond d = 2, so here every expectation is a sample average with *fixed* base draws
(common random numbers): component i of the mixture owns draws z_ij = mu_i + sigma * u_ij, j = 1..S, and

    f(alpha) = sum_i alpha_i (1/S) sum_j [log q_alpha(z_ij) - log p(z_ij)]

is a deterministic, convex function of the weights (a sample-average approximation of KL(q||p) - log p(x)).
The three weight rules of Figure 3 are exact on it: ``"fixed"`` 2/(t+2), ``"line_search"`` (argmin over gamma),
``"corrective"`` (all weights re-optimized over the simplex; Alg 3 Variant 1).

As in the paper's experiment the atoms are untruncated mean-field Gaussians N(mu, diag sigma^2) (truncation is not
stated for Figure 3) with sigma fixed to the mean-field solution's scales ("we do not learn the
covariance"); the LMO argmin_mu E_{N(mu, sigma^2)}[log q^t - log p] is solved by sample-average L-BFGS with the
reparameterization gradient from several starts.  q^0 is the mean-field Gaussian (:func:`mean_field_gaussian`).
"""

from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
from scipy import optimize
from scipy.special import logsumexp

from refvi._checks import as_generator, as_samples, positive_scalar

RULES = ("fixed", "line_search", "corrective")


def _logp(target, Z):
    out = np.asarray(target.logp(Z), dtype=np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError("the target log-density is not finite at a Monte Carlo draw")
    return out


def mean_field_gaussian(target, n_samples: int = 64, seed=0, max_iter: int = 500, base_samples=None):
    """argmin_{m, sigma} -(1/S) sum_s log p(m + sigma * u_s) - sum log sigma (fixed draws u_s; L-BFGS).

    The draws are ``base_samples`` (S, d) if given, else S = ``n_samples`` standard normal rows from ``seed``.
    Returns (m, sigma).  Deterministic for a given seed."""
    d = target.dim
    if base_samples is None:
        U = as_generator(seed, "seed").standard_normal((int(n_samples), d))
    else:
        U = as_samples(base_samples, d, "base_samples")

    def obj(x):
        m, ls = x[:d], x[d:]
        s = np.exp(ls)
        Z = m + s * U
        val = -np.mean(_logp(target, Z)) - ls.sum()
        G = target.grad_logp(Z)
        gm = -G.mean(0)
        gls = -(G * U).mean(0) * s - 1.0
        return val, np.concatenate([gm, gls])

    x0 = np.concatenate(
        [np.asarray(target.mode, dtype=float) if target.mode is not None else np.zeros(d), np.full(d, -1.0)]
    )
    # log sigma is boxed to [-30, 10]: an unbounded line search can step to exp overflow (sigma = inf, log p = nan)
    res = optimize.minimize(
        obj,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(None, None)] * d + [(-30.0, 10.0)] * d,
        options={"maxiter": max_iter},
    )
    return res.x[:d], np.exp(res.x[d:])


class MCMixture:
    """A mixture of N(mu_i, diag sigma^2) with per-component fixed draws and cached log p at the draws."""

    def __init__(self, target, sigma, n_samples: int, rng):
        self.target = target
        self.sigma = np.asarray(sigma, dtype=float)
        self.S = int(n_samples)
        self.rng = rng
        self.means: list[np.ndarray] = []
        self.Z: list[np.ndarray] = []
        self.lp: list[np.ndarray] = []

    def add(self, mu) -> int:
        mu = np.asarray(mu, dtype=float)
        Z = mu + self.sigma * self.rng.standard_normal((self.S, mu.size))
        self.means.append(mu)
        self.Z.append(Z)
        self.lp.append(_logp(self.target, Z))
        return len(self.means) - 1

    def comp_logpdf(self, Z) -> np.ndarray:
        """(n_comp, n_points) log N(z; mu_k, sigma^2)."""
        M = np.array(self.means)
        t = (Z[None, :, :] - M[:, None, :]) / self.sigma
        return -0.5 * (t * t).sum(-1) - np.log(self.sigma).sum() - 0.5 * self.sigma.size * math.log(2 * math.pi)

    def tables(self):
        """(Lc, lp): Lc[k, (i, j)] = log N(z_ij; mu_k) over all draws, lp = log p at the draws."""
        Zall = np.concatenate(self.Z)
        return self.comp_logpdf(Zall), np.concatenate(self.lp)

    def objective(self, alpha, Lc=None, lp=None) -> float:
        """The SAA objective f(alpha) (see module docstring)."""
        if Lc is None:
            Lc, lp = self.tables()
        n = len(self.means)
        a = np.asarray(alpha, dtype=float)[:n]
        with np.errstate(divide="ignore"):
            lq = logsumexp(Lc + np.log(a)[:, None], axis=0)
        per = (lq - lp).reshape(n, self.S).mean(1)
        return float(a @ per)


def _fw_line_search(mix, alpha, k):
    Lc, lp = mix.tables()
    s = np.zeros_like(alpha)
    s[k] = 1.0
    res = optimize.minimize_scalar(
        lambda g: mix.objective((1 - g) * alpha + g * s, Lc, lp),
        bounds=(0.0, 1.0),
        method="bounded",
        options={"xatol": 1e-6},
    )
    cands = [(mix.objective(alpha, Lc, lp), 0.0), (mix.objective(s, Lc, lp), 1.0), (float(res.fun), float(res.x))]
    return min(cands)[1]


def _corrective(mix, alpha):
    Lc, lp = mix.tables()
    n = alpha.size
    x0 = np.maximum(alpha, 1e-12)
    x0 /= x0.sum()
    res = optimize.minimize(
        lambda a: mix.objective(np.maximum(a, 0), Lc, lp),
        x0,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1.0}],
        options={"maxiter": 200, "ftol": 1e-10},
    )
    a = np.maximum(res.x, 0.0)
    a /= a.sum()
    return a if mix.objective(a, Lc, lp) <= mix.objective(alpha, Lc, lp) else alpha


def _lmo(mix, alpha, n_starts: int, rng, S_lmo: int, lo, hi, maxiter: int = 100):
    """argmin over mu in the box [lo, hi] of (1/S) sum_s [log q(mu + sigma u_s) - log p(mu + sigma u_s)]
    from several starts (L-BFGS-B), and the standard-normal draws u it minimised on."""
    d = mix.sigma.size
    U = rng.standard_normal((S_lmo, d))
    M = np.array(mix.means)
    la = np.log(np.maximum(alpha, 1e-300))
    s2 = mix.sigma**2

    def obj(mu):
        Z = mu + mix.sigma * U
        Lc = mix.comp_logpdf(Z) + la[:, None]
        lq = logsumexp(Lc, axis=0)
        r = np.exp(Lc - lq)  # responsibilities (n_comp, S)
        grad_lq = -(Z - (r.T @ M)) / s2  # grad_z log q(z)
        lp = _logp(mix.target, Z)
        gp = mix.target.grad_logp(Z)
        return float(np.mean(lq - lp)), (grad_lq - gp).mean(0)

    starts = [rng.uniform(lo, hi) for _ in range(n_starts)]
    bounds = list(zip(lo, hi, strict=True))
    runs = [
        optimize.minimize(obj, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": maxiter})
        for x0 in starts
    ]
    return min(runs, key=lambda res: res.fun).x, U  # the first of the best, as a strict '<' scan would keep


@dataclasses.dataclass
class MCBoostingResult:
    means: np.ndarray
    sigma: np.ndarray
    weights: np.ndarray
    f: np.ndarray  # SAA objective after each iteration (t = 0: the mean-field Gaussian)
    rule: str
    weights_history: list  # weights after iteration t (length t + 1)
    draws: np.ndarray | None = None  # (K, S, d): the fixed draws z_kj = mu_k + sigma u_kj of each component
    lmo_draws: np.ndarray | None = None  # (T, S', d): the standard-normal u_s step t's LMO minimised its average on

    def sample(self, n: int, rng, t: int | None = None) -> np.ndarray:
        """Ancestral draws from the final mixture, or from the iterate q^t."""
        rng = as_generator(rng)
        w = self.weights if t is None else self.weights_history[t]
        c = rng.choice(w.size, size=int(n), p=w / w.sum())
        return self.means[c] + self.sigma * rng.standard_normal((int(n), self.sigma.size))


def boost_mc(
    target,
    n_iter: int,
    *,
    rule: str = "corrective",
    init=None,
    n_samples: int = 64,
    n_starts: int = 3,
    lmo_samples: int = 64,
    sigma_scale: float = 1.0,
    mean_box: float = 1.0,
    lmo_maxiter: int = 100,
    seed=0,
    progress: bool = False,
) -> MCBoostingResult:
    """Boosting VI by Frank-Wolfe with Monte Carlo expectations, starting from the mean-field Gaussian ``init``
    (= (m, sigma); computed by :func:`mean_field_gaussian` if None).  ``rule`` is the weight update.

    Atom means are constrained to the box m0 +- mean_box * sigma0 (the "box constraint for the mean" of proj_A,
    §4.1).  Without it the linear LMO is unbounded below for untruncated Gaussian atoms whose tails are lighter than
    the posterior's: log q/p -> -inf far away (the smoothness failure of Lemma 1 that motivates truncation)."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if int(n_iter) != n_iter or n_iter < 0:
        raise ValueError(f"n_iter must be a non-negative integer, got {n_iter!r}")
    if isinstance(n_starts, bool) or not isinstance(n_starts, (int, np.integer)) or n_starts < 1:
        raise ValueError(f"n_starts (L-BFGS-B starts of the LMO) must be a positive integer, got {n_starts!r}")
    sigma_scale = positive_scalar(sigma_scale, "sigma_scale")
    mean_box = positive_scalar(mean_box, "mean_box")
    m0, s0 = mean_field_gaussian(target, seed=seed) if init is None else init
    lo, hi = m0 - mean_box * s0, m0 + mean_box * s0
    rng = as_generator(seed, "seed")
    mix = MCMixture(target, np.asarray(s0) * sigma_scale, n_samples, rng)
    mix.add(m0)
    alpha = np.array([1.0])
    fs = [mix.objective(alpha)]
    hist = [alpha.copy()]
    lmo_draws: list[np.ndarray] = []
    from tqdm.auto import tqdm

    for t in tqdm(
        range(int(n_iter)), desc=f"boost[{rule}]", disable=not (progress and sys.stderr.isatty()), leave=False
    ):
        mu, U = _lmo(mix, alpha, n_starts, rng, lmo_samples, lo, hi, lmo_maxiter)
        lmo_draws.append(U)
        k = mix.add(mu)
        alpha = np.append(alpha, 0.0)
        if rule == "fixed":
            g = 2.0 / (t + 3.0)  # q^0 is the mean-field solution, kept: gamma_0 = 2/3 < 1 (t counted from 1)
        elif rule == "line_search":
            g = _fw_line_search(mix, alpha, k)
        if rule == "corrective":
            start = alpha.copy()
            start[k] = 1.0 / (t + 2.0)
            start[:k] *= 1.0 - start[k]
            cand = _corrective(mix, start)
            if mix.objective(cand) <= mix.objective(alpha):  # never worse than q^t (alpha_k = 0)
                alpha = cand
        else:
            alpha = (1.0 - g) * alpha
            alpha[k] += g
        fs.append(mix.objective(alpha))
        hist.append(alpha.copy())
    U = np.array(lmo_draws) if lmo_draws else np.empty((0, int(lmo_samples), mix.sigma.size))
    return MCBoostingResult(np.array(mix.means), mix.sigma.copy(), alpha, np.array(fs), rule, hist, np.array(mix.Z), U)


def predictive_prob(X, draws) -> np.ndarray:
    """p(y = +1 | x) = E_q[sigmoid(x^T w)] by Monte Carlo over ``draws`` (rows)."""
    T = np.asarray(X) @ np.asarray(draws).T
    return np.mean(0.5 * (1.0 + np.tanh(0.5 * T)), axis=1)


def log_likelihood(X, y, draws) -> float:
    """Mean over data points of log p(y_n | x_n) = log E_q[sigmoid(y_n x_n^T w)] (labels in {-1, +1})."""
    T = (np.asarray(X) @ np.asarray(draws).T) * np.asarray(y)[:, None]
    ll = logsumexp(-np.logaddexp(0.0, -T), axis=1) - math.log(T.shape[1])
    return float(ll.mean())
