"""The gradient variance of Def. 6 for mini-batch Bayesian linear regression, computed exactly, and Lemma 3's bound
(Wu & Gardner, seed 004, Eq. 12, Lemma 3, App. C).

For BLR the stochastic and exact gradients differ by eta* - eta_hat (the likelihood gradient does not depend on
omega), so Eq. (12) at the state eta_t with step gamma is

    V_t = (1/gamma) E <eta* - eta_hat, omega_{t+1,*} - omega_{t+1}>,

with eta_{t+1,*} = (1 - gamma) eta_t + gamma eta*, eta_{t+1} = (1 - gamma) eta_t + gamma eta_hat.  By the identity
<eta_a - eta_b, grad A(eta_a) - grad A(eta_b)> = D_A(eta_a, eta_b) + D_A(eta_b, eta_a) it also equals

    (1/gamma^2) E [KL(q_{t+1}, q_{t+1,*}) + KL(q_{t+1,*}, q_{t+1})].

The expectation over the n^m with-replacement batches is exact: sum over count vectors with multinomial weights.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from refvi.ngvi import expfam
from refvi.ngvi.blr import BLRProblem
from refvi.ngvi.ngd import _count, check_step

MAX_BATCHES = 200_000  # the most multisets batch_distribution enumerates (about 20 s at the limit)


def batch_distribution(n: int, m: int):
    """All multisets of m indices from [0, n) as (index arrays, probabilities) under i.i.d. uniform draws; there are
    C(n+m-1, m) of them, refused above ``MAX_BATCHES``."""
    n, m = _count(n, "n"), _count(m, "m")
    if math.comb(n + m - 1, m) > MAX_BATCHES:
        raise ValueError(
            f"exact enumeration over C(n+m-1, m) = {math.comb(n + m - 1, m)} batches is too large "
            f"(at most {MAX_BATCHES})"
        )
    batches, probs = [], []
    for combo in itertools.combinations_with_replacement(range(n), m):
        counts = np.bincount(combo, minlength=n)
        w = math.factorial(m)
        for c in counts:
            w //= math.factorial(int(c))
        batches.append(np.asarray(combo, dtype=np.int64))
        probs.append(w / n**m)
    return batches, np.asarray(probs)


def _omega_difference_over_gamma(moments_a, eta_b, dlam, dLam):
    """(omega(eta_a) - omega(eta_b)) / gamma for eta_a - eta_b = gamma (dlam, dLam), without cancellation.

    With Sigma = (-2 Lam)^{-1}, mu = Sigma lam, Xi = Sigma + mu mu^T: Sigma_a - Sigma_b = 2 gamma Sigma_a dLam Sigma_b,
    mu_a - mu_b = gamma Sigma_a (dlam + 2 dLam mu_b), Xi_a - Xi_b = (Sigma_a - Sigma_b) + (mu_a - mu_b) mu_a^T +
    mu_b (mu_a - mu_b)^T.  Subtracting the two omegas instead loses eps / gamma relative (2e-6 at gamma = 1e-10)."""
    mu_a, S_a = moments_a
    mu_b, S_b = expfam.moment_from_natural(*eta_b)
    dS = 2.0 * S_a @ dLam @ S_b
    dmu = S_a @ (dlam + 2.0 * dLam @ mu_b)
    return dmu, dS + np.outer(dmu, mu_a) + np.outer(mu_b, dmu)


def variance_term(problem: BLRProblem, eta_t, gamma, batch_size: int) -> float:
    """Exact Eq. (12) at state eta_t, the omega difference taken without cancellation, so accurate for any gamma in
    (0, 1] (its symmetrized-KL form (KL(q_+ || q_*) + KL(q_* || q_+)) / gamma^2 loses eps / gamma^2 relative)."""
    g = check_step(gamma)
    if g == 0.0:
        raise ValueError("Eq. (12) divides by gamma: gamma must be > 0")
    lam, Lam, _ = expfam.check_natural(*eta_t)
    ls, Ls = problem.posterior_natural()
    star = ((1 - g) * lam + g * ls, (1 - g) * Lam + g * Ls)
    m_star = expfam.moment_from_natural(*star)
    total = 0.0
    for idx, p in zip(*batch_distribution(problem.n, batch_size), strict=True):
        lh, Lh = problem.noisy_posterior_natural(idx)
        nxt = ((1 - g) * lam + g * lh, (1 - g) * Lam + g * Lh)
        total += p * expfam.pair((ls - lh, Ls - Lh), _omega_difference_over_gamma(m_star, nxt, ls - lh, Ls - Lh))
    return float(total)


def data_constants(problem: BLRProblem):
    """(nu, b, s1, s2) of Lemma 3: nu = max(1, ||P||), b = max_i ||y_i x_i||, s1 / s2 the spreads of y_i x_i and
    x_i x_i^T around their means (Lemmas 7 and 8)."""
    X, y = problem.X, problem.y
    nu = max(1.0, float(np.linalg.eigvalsh(problem.prior_cov)[-1]))
    yx = y[:, None] * X
    b = float(np.max(np.linalg.norm(yx, axis=1)))
    s1 = float(np.mean(np.sum((yx - yx.mean(axis=0)) ** 2, axis=1)))
    XX = np.einsum("ni,nj->nij", X, X)
    s2 = float(np.mean(np.sum((XX - XX.mean(axis=0)) ** 2, axis=(1, 2))))
    return nu, b, s1, s2


def lemma3_bound(problem: BLRProblem, batch_size: int, *, corrected: bool = True) -> float:
    """V_2 of Lemma 3 (Eq. 16).  ``corrected`` replaces b by b / sigma2 (the 1/sigma^2 dropped in Lemma 9,
    erratum E004-3); the two agree when sigma2 = 1."""
    m = _count(batch_size, "batch_size")
    nu, b, s1, s2 = data_constants(problem)
    if corrected:
        b = b / problem.sigma2
    n = problem.n
    inner = nu * s1 + 0.5 * nu**2 * s2 + 2 * nu**2 * b * math.sqrt(s1 * s2) * n + nu**3 * b**2 * s2 * n**2
    return float(inner * n**2 / (problem.sigma2**2 * m))
