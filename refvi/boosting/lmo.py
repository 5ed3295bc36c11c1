"""Linear minimization oracles over the atom set (seed 001 Eq. 8, Eq. 9, Algorithm 2).

An LMO is a callable ``lmo(problem, alpha, scores, q_score) -> k`` returning the index of an atom; ``scores`` are the
exact <s_k, grad f(q)> and ``q_score`` = <q, grad f(q)> (the FW loop computes them anyway for the gap certificate).

* :class:`ExactLMO`: argmin_k scores_k (Eq. 8), exact on the quadrature problem.
* :class:`ApproxLMO`: a delta-approximate oracle (Eq. 9): among the atoms with <grad, s - q> <= delta * min_s
  <grad, s - q> it returns the *worst* one (adversarial, for testing Thm 4 / Cor 7), or a random one.
* :class:`StochasticLMO`: Algorithm 2, projected SGD on the atom mean with the score-function estimator (Eq. 10);
  grad_mu log s includes the truncation normalizer's gradient and the projection is onto the box
  followed by the nearest quantized mean of the finite atom set (§5 quantization).
"""

from __future__ import annotations

import math

import numpy as np

from refvi._checks import as_matrix, as_vector, positive_scalar


def check_delta(delta) -> float:
    d = positive_scalar(delta, "delta")
    if not 0.0 < d <= 1.0:
        raise ValueError(f"delta (the LMO accuracy of Eq. 9) must lie in (0, 1], got {d}")
    return d


class ExactLMO:
    """argmin_{s in A} <grad f(q), s> over the finite atom set."""

    delta = 1.0

    def __call__(self, problem, alpha, scores, q_score) -> int:
        return int(np.argmin(scores))


class ApproxLMO:
    """delta-approximate LMO (Eq. 9): returns s with <grad, s - q> <= delta * min_s <grad, s - q>."""

    def __init__(self, delta: float, mode: str = "adversarial", rng=None):
        self.delta = check_delta(delta)
        if mode not in ("adversarial", "random"):
            raise ValueError(f"mode must be 'adversarial' or 'random', got {mode!r}")
        self.mode = mode
        self.rng = np.random.default_rng(rng)

    def __call__(self, problem, alpha, scores, q_score) -> int:
        lin = scores - q_score  # <grad, s - q>, min is -gap <= 0
        best = float(lin.min())
        if not best < 0.0:  # gap 0 (q optimal; >= 0 only by rounding): every s is admissible
            return int(np.argmin(lin))  # and the exact minimizer is the only safe choice
        ok = np.nonzero(lin <= self.delta * best)[0]
        if self.mode == "adversarial":
            return int(ok[np.argmax(lin[ok])])
        return int(self.rng.choice(ok))


def truncation_log_normalizer_grad(mu, sigma, lo, hi) -> np.ndarray:
    """d/dmu log Z(mu, sigma) = (phi(a) - phi(b)) / (sigma (Phi(b) - Phi(a))), a = (lo - mu)/sigma,
    b = (hi - mu)/sigma (per coordinate)."""
    from scipy import special

    a = (lo - mu) / sigma
    b = (hi - mu) / sigma
    pa = np.exp(-0.5 * a * a - 0.5 * math.log(2 * math.pi))
    pb = np.exp(-0.5 * b * b - 0.5 * math.log(2 * math.pi))
    Z = special.ndtr(b) - special.ndtr(a)
    return (pa - pb) / (sigma * Z)


def score_function_gradient(atoms, k_mu, sigma, Z, values) -> np.ndarray:
    """Eq. (10): (1/S) sum_s values_s * grad_mu log s(z_s; mu, sigma), the truncation normalizer included.

    ``k_mu`` is the mean (d,), ``Z`` the (S, d) draws from TN(mu, sigma^2; A), ``values`` the (S,) values of
    grad f(q)(z_s) (possibly baseline-corrected).
    """
    k_mu = as_vector(k_mu, "mu", atoms.dim)
    Z = as_matrix(Z, "Z", (None, atoms.dim))
    return _score_gradient(atoms, k_mu, sigma, Z, as_vector(values, "values", Z.shape[0]))


def _score_gradient(atoms, k_mu, sigma, Z, values) -> np.ndarray:
    """:func:`score_function_gradient` on checked arrays (Algorithm 2's loop)."""
    score = (Z - k_mu) / sigma**2 - truncation_log_normalizer_grad(k_mu, sigma, atoms.box.lo, atoms.box.hi)
    return (values[:, None] * score).mean(0)


class StochasticLMO:
    """Algorithm 2: projected SGD on the mean of a truncated Gaussian atom (sigma fixed, as in the experiments).

    All atoms must share one scale (sigma is not optimized; a set with unequal scales raises ValueError).
    Each of ``n_steps`` iterations draws ``n_samples`` points from the current atom, evaluates
    grad f(q)(z) = log q(z) - log p(z) pointwise, forms the score-function gradient with a leave-one-out baseline
    (which keeps it unbiased) and steps mu <- proj_A(mu - lr * g).  The returned atom is the quantized mean's atom
    of the problem's finite set.  Deterministic for a given ``rng`` seed.
    """

    def __init__(self, n_samples: int = 64, n_steps: int = 50, lr: float = 0.05, rng=0):
        if int(n_samples) != n_samples or n_samples < 2:
            raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
        if int(n_steps) != n_steps or n_steps < 0:
            raise ValueError(f"n_steps must be a non-negative integer, got {n_steps!r}")
        self.n_samples, self.n_steps = int(n_samples), int(n_steps)
        self.lr = positive_scalar(lr, "lr")
        self.rng = np.random.default_rng(rng)
        self.delta = None

    def grad_f_at(self, problem, alpha, Z) -> np.ndarray:
        """log q(z) - log p(z) at arbitrary points (mixture density in closed form, target through ``logp``)."""
        act = np.nonzero(alpha > 0)[0]
        L = problem.atoms.logpdf(Z)[act]
        m = L.max(0)
        logq = m + np.log(alpha[act] @ np.exp(L - m))
        return logq - problem.logp_at(Z)

    def __call__(self, problem, alpha, scores=None, q_score=None) -> int:
        atoms = problem.atoms
        box = atoms.box
        sigma = atoms.scales[0]
        if not np.all(atoms.scales == sigma):
            n_sc = np.unique(atoms.scales, axis=0).shape[0]
            raise ValueError(
                f"StochasticLMO (Algorithm 2) moves the mean at one fixed sigma shared by every atom, but "
                f"this atom set has {n_sc} different scales (sigma ranges over "
                f"[{atoms.scales.min():.4g}, {atoms.scales.max():.4g}]); use ExactLMO / ApproxLMO, or "
                f"an atom set with a common scale"
            )
        rng = self.rng
        # initialization: the best of 8 random means by a cheap Monte Carlo estimate (Alg 2 line 1)
        cands = rng.uniform(box.lo, box.hi, size=(8, box.dim))
        est = []
        for mu in cands:
            k = _nearest(atoms, mu)
            Z = atoms.sample(k, self.n_samples, rng)
            est.append(self.grad_f_at(problem, alpha, Z).mean())
        mu = cands[int(np.argmin(est))].copy()
        for _ in range(self.n_steps):
            Z = atoms.sample(_nearest(atoms, mu), self.n_samples, rng)
            mu = self._step(problem, alpha, mu, Z)
        return _nearest(atoms, mu)

    def step(self, problem, alpha, mu, Z) -> np.ndarray:
        """One iteration of Algorithm 2's loop at the mean ``mu`` (d,), given the draws ``Z`` (S, d) of the atom k
        whose mean is nearest ``mu``: v_s = log q(z_s) - log p(z_s) less the mean of the other S - 1 values (the
        leave-one-out baseline keeps Eq. (10) unbiased), g = Eq. (10) at mu_k, and mu' = clip(mu - lr g) to the box."""
        problem.weights(alpha)  # K weights in the simplex (checked; used as given)
        d = problem.atoms.dim
        alpha = np.asarray(alpha, dtype=np.float64)
        return self._step(problem, alpha, as_vector(mu, "mu", d), as_matrix(Z, "Z", (None, d)))

    def _step(self, problem, alpha, mu, Z) -> np.ndarray:
        """:meth:`step` on checked arrays (Algorithm 2's loop: its own draws, its own mean)."""
        atoms = problem.atoms
        k = _nearest(atoms, mu)
        v = self.grad_f_at(problem, alpha, Z)
        v = v - (v.sum() - v) / (v.shape[0] - 1)
        g = _score_gradient(atoms, atoms.means[k], atoms.scales[k], Z, v)
        return np.clip(mu - self.lr * g, atoms.box.lo, atoms.box.hi)


def _nearest(atoms, mu) -> int:
    return int(np.argmin(((atoms.means - mu) ** 2).sum(1)))
