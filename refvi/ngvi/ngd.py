"""Natural-gradient descent for Gaussian VI (Wu & Gardner, seed 004, §2.2, §3, Theorem 1).

Three equal forms of one step (Lemma 1):

* :func:`ngd_step_fim` -- canonical NGD (Def. 2, Eq. 7) with the Fisher matrix in minimal coordinates;
* :func:`ngd_step`     -- Eq. (8): eta_{t+1} = eta_t - gamma grad_omega l(omega_t), no Fisher matrix;
* :func:`md_step`      -- mirror descent (Def. 4) through its first-order condition (10).

Stochastic NGD (§3.1): eta_{t+1} = (1 - gamma_t) eta_t + gamma_t eta_hat_t with eta_hat_t = grad-hat_omega E log p
+ eta_p (:func:`natural_update`, which refuses gamma outside [0, 1] and any step that would leave the domain D).
:func:`stochastic_ngd_blr` runs it on mini-batch Bayesian linear regression with Theorem 1's steps gamma_t = 2/(t+2)
and omega-space average; :func:`ngd_glm` runs it on logistic / Poisson regression with the Price estimator.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from refvi._checks import as_generator, as_matrix, as_vector
from refvi.kernels import ngvi as _k
from refvi.ngvi import expfam
from refvi.ngvi.blr import BLRProblem
from refvi.ngvi.glm import GLM


@dataclasses.dataclass
class NGVIResult:
    """Final natural parameters, Theorem 1's omega-average (None if not requested) and a history.

    ``history`` maps names to arrays: ``iteration`` (t after which the entry was taken), and per problem e.g.
    ``kl_last`` / ``kl_avg`` (KL to the exact posterior, BLR) or ``neg_elbo`` (GLM)."""

    lam: np.ndarray
    Lam: np.ndarray
    xi_bar: np.ndarray | None
    Xi_bar: np.ndarray | None
    history: dict

    def moments(self):
        return expfam.moment_from_natural(self.lam, self.Lam)

    def average_moments(self):
        if self.xi_bar is None:
            raise ValueError("this run did not keep the omega average (average=False)")
        return expfam.moment_from_expectation(self.xi_bar, self.Xi_bar)


# ---------------------------------------------------------------------------------------------------------------
# step sizes and single steps
# ---------------------------------------------------------------------------------------------------------------


def theorem1_steps(T: int) -> np.ndarray:
    """gamma_t = 2 / (t + 2) for t = 0, ..., T-1 (Theorem 1; gamma_0 = 1 discards the initialization)."""
    T = _count(T, "T")
    return 2.0 / (np.arange(T, dtype=np.float64) + 2.0)


def check_step(gamma, name: str = "gamma") -> float:
    """A step size in [0, 1], the validity range of §3.1 / Remark 2 (and Theorem 1's gamma_t <= 1)."""
    if isinstance(gamma, bool) or not isinstance(gamma, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(gamma).__name__}")
    g = float(gamma)
    if not (0.0 <= g <= 1.0):
        raise ValueError(f"{name} = {g} is outside [0, 1], where the NGD update is guaranteed valid (Remark 2)")
    return g


def _count(v, name, lo=1):
    if isinstance(v, bool) or not isinstance(v, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(v).__name__}")
    if v < lo:
        raise ValueError(f"{name} must be >= {lo}, got {v}")
    return int(v)


def natural_update(eta, eta_hat, gamma, *, require_unit_step: bool = True):
    """eta_{t+1} = (1 - gamma) eta + gamma eta_hat (§3.1), refused before it can leave D = {Lam negative definite}.

    With ``require_unit_step`` gamma must lie in [0, 1] (Remark 2 (a)).  Whatever gamma, the result is checked with
    a Cholesky factorization of -2 Lam_{t+1}; a ValueError is raised and nothing is returned if it is not in D.
    """
    lam, Lam, _ = expfam.check_natural(*eta)
    d = lam.shape[0]
    lh = as_vector(eta_hat[0], "eta_hat[0]", d)
    Lh = as_matrix(eta_hat[1], "eta_hat[1]", (d, d))
    g = check_step(gamma) if require_unit_step else float(gamma)
    new = ((1.0 - g) * lam + g * lh, (1.0 - g) * Lam + g * 0.5 * (Lh + Lh.T))
    try:
        expfam.check_natural(*new)
    except ValueError as exc:
        raise ValueError(
            f"the NGD update with gamma={g} would leave the natural-parameter domain "
            f"(Lam_(t+1) not negative definite); state left unchanged: {exc}"
        ) from None
    return new


def ngd_step(eta, grad_omega, gamma, *, require_unit_step: bool = False):
    """Eq. (8): eta - gamma grad_omega l(omega(eta)), refused if it leaves D."""
    lam, Lam, _ = expfam.check_natural(*eta)
    g = check_step(gamma) if require_unit_step else _nonneg(gamma)
    new = (
        lam - g * np.asarray(grad_omega[0], dtype=np.float64),
        Lam - g * 0.5 * (np.asarray(grad_omega[1]) + np.asarray(grad_omega[1]).T),
    )
    try:
        expfam.check_natural(*new)
    except ValueError as exc:
        raise ValueError(f"the NGD step with gamma={g} would leave the natural-parameter domain: {exc}") from None
    return new


def _nonneg(gamma):
    if isinstance(gamma, bool) or not isinstance(gamma, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"gamma must be a real number, got {type(gamma).__name__}")
    g = float(gamma)
    if not (np.isfinite(g) and g >= 0):
        raise ValueError(f"gamma must be finite and >= 0, got {g}")
    return g


def ngd_step_fim(eta, grad_theta, gamma):
    """Canonical NGD (Def. 2, Eq. 7) in minimal coordinates: theta - gamma F(theta)^{-1} grad_theta l.

    ``grad_theta`` is the gradient of l with respect to the minimal natural coordinates of
    :func:`refvi.ngvi.expfam.to_minimal` (length d + d(d+1)/2)."""
    lam, Lam, _ = expfam.check_natural(*eta)
    d = lam.shape[0]
    theta = expfam.to_minimal(lam, Lam)
    gt = as_vector(grad_theta, "grad_theta", theta.shape[0])
    F = expfam.fisher_minimal(lam, Lam)
    step = np.linalg.solve(F, gt)
    new = expfam.from_minimal(theta - _nonneg(gamma) * step, d)
    try:
        expfam.check_natural(*new)
    except ValueError as exc:
        raise ValueError(f"the NGD step would leave the natural-parameter domain: {exc}") from None
    return new


def md_step(omega, grad_omega, gamma):
    """Mirror descent (Def. 4) via (10): grad A*(omega_{t+1}) = grad A*(omega_t) - gamma grad l(omega_t)."""
    eta = expfam.natural_from_expectation(*omega)
    return expfam.expectation_from_natural(*ngd_step(eta, grad_omega, gamma))


def omega_average(omegas):
    """Theorem 1: omega_bar_{T+1} = 2/((T+1)(T+2)) sum_{t=0}^T (t+1) omega_{t+1} for omegas = [omega_1, ...]."""
    if len(omegas) == 0:
        raise ValueError("omega_average needs at least one iterate")
    T1 = len(omegas)
    w = 2.0 * np.arange(1, T1 + 1) / (T1 * (T1 + 1))
    xi = sum(wk * np.asarray(o[0], dtype=np.float64) for wk, o in zip(w, omegas, strict=True))
    Xi = sum(wk * np.asarray(o[1], dtype=np.float64) for wk, o in zip(w, omegas, strict=True))
    return xi, Xi


# ---------------------------------------------------------------------------------------------------------------
# stochastic NGD for Bayesian linear regression (Example 1, Theorem 1)
# ---------------------------------------------------------------------------------------------------------------


def draw_batches(rng, n: int, T: int, batch_size: int, replace: bool = True) -> np.ndarray:
    """T mini-batches of ``batch_size`` indices drawn uniformly from [0, n): i.i.d. with replacement (Example 1,
    the setting of Theorem 1 and Lemma 3), or without replacement within each batch (then batch_size <= n)."""
    m = _count(batch_size, "batch_size")
    gen = as_generator(rng)
    if replace:
        return np.asarray(gen.integers(0, n, size=(T, m)), dtype=np.int64)
    if m > n:
        raise ValueError(f"batch_size = {m} exceeds n = {n}: not allowed when sampling without replacement")
    return np.asarray(np.stack([gen.choice(n, size=m, replace=False) for _ in range(T)]), dtype=np.int64)


def given_batches(batches, T: int, n: int) -> np.ndarray:
    """Mini-batches supplied by the caller instead of drawn: a (T, batch_size) integer array of row indices in
    [0, n), batch_size >= 1; a ValueError names what is wrong."""
    b = np.asarray(batches)
    ok = b.ndim == 2 and b.shape[0] == T and b.shape[1] >= 1 and np.issubdtype(b.dtype, np.integer)
    if not ok or b.min() < 0 or b.max() >= n:
        raise ValueError(f"batches must be a (T, batch_size) = ({T}, m >= 1) array of row indices in [0, {n})")
    return b


def given_base_samples(U, T: int, d: int) -> np.ndarray:
    """Base samples supplied by the caller: a finite (T, n_samples, d) array (step t uses the rows of U[t])."""
    U = np.asarray(U, dtype=np.float64)
    if U.ndim != 3 or U.shape[::2] != (T, d) or U.shape[1] < 1 or not np.all(np.isfinite(U)):
        raise ValueError(
            f"base_samples must be a finite (T, n_samples, d) = ({T}, n >= 1, {d}) array, got shape {U.shape}"
        )
    return U


def _init(problem_d, init):
    if init is None:  # q_0 = N(0, I): lam_0 = 0, Lam_0 = -I/2 (Example 1)
        return np.zeros(problem_d), -0.5 * np.eye(problem_d)
    lam, Lam, _ = expfam.check_natural(*init)
    if lam.shape[0] != problem_d:
        raise ValueError(f"init has dimension {lam.shape[0]}, the problem has d = {problem_d}")
    return lam, Lam


def _history_points(T, history):
    if history is None:
        return []
    pts = sorted({int(t) for t in history if 1 <= int(t) <= T})
    return pts


def stochastic_ngd_blr(
    problem: BLRProblem,
    T: int,
    batch_size: int | None = None,
    *,
    rng=None,
    indices=None,
    steps=None,
    init=None,
    average: bool = True,
    history=None,
    replace: bool = True,
    progress: bool = False,
) -> NGVIResult:
    """Stochastic NGD (Eq. 8) with the mini-batch estimator (15) on Bayesian linear regression.

    * ``indices`` (T, m) pre-drawn batches, or ``batch_size`` m and ``rng`` (seed / Generator) to draw them
      (``replace=True``: i.i.d. with replacement as in Example 1, any m >= 1; ``replace=False``: 1 <= m <= n);
    * ``steps``: sequence of T step sizes in [0, 1] (default Theorem 1's 2/(t+2)); the omega average starts at
      omega(q_0), so it is a proper weighted average (weights summing to 1) for any steps and Theorem 1's
      2/((T+1)(T+2)) sum_t (t+1) omega_{t+1} when gamma_0 = 1;
    * ``init``: natural parameters of q_0 (default N(0, I));
    * ``history``: iterations t (1..T) after which the KL of the last iterate and of the omega average to the
      exact posterior are recorded.
    """
    if not isinstance(problem, BLRProblem):
        raise TypeError("problem must be a BLRProblem (see refvi.ngvi.blr_problem)")
    T = _count(T, "T")
    if indices is None:
        if batch_size is None:
            raise ValueError("give either batch_size (and rng) or pre-drawn indices")
        idx = draw_batches(rng, problem.n, T, batch_size, replace)
    else:
        idx = np.asarray(indices)
        if idx.ndim != 2 or idx.shape[0] != T or idx.shape[1] < 1:
            raise ValueError(f"indices must have shape (T, m) = ({T}, m >= 1), got {idx.shape}")
        if not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"indices must be integers, got dtype {idx.dtype}")
        if idx.min() < 0 or idx.max() >= problem.n:
            raise ValueError(f"indices must lie in [0, n) = [0, {problem.n})")
        idx = np.ascontiguousarray(idx, dtype=np.int64)
    m = idx.shape[1]
    gam = theorem1_steps(T) if steps is None else as_vector(steps, "steps", T)
    for t, g in enumerate(gam):
        check_step(float(g), f"steps[{t}]")
    lam, Lam = _init(problem.d, init)
    lam_p, Lam_p = problem.prior_natural
    c = problem.n / (m * problem.sigma2)
    # the omega average omega_bar_{t+1} = (1 - gamma_t) omega_bar_t + gamma_t omega_{t+1} starts at omega(q_0): a
    # convex combination of omega_0..omega_t for any steps in [0, 1]; with Theorem 1's steps (gamma_0 = 1) omega_0
    # gets weight 0 (exactly: 0 * omega_0 + omega_1) and it is 2/((T+1)(T+2)) sum_t (t+1) omega_{t+1}
    xb, Xb = expfam.expectation_from_natural(lam, Lam)
    xb, Xb = np.array(xb, dtype=np.float64), np.array(Xb, dtype=np.float64)
    pts = _history_points(T, history)
    bounds = sorted(set(pts + [T]))
    hist: dict[str, list[float]] = {"iteration": [], "kl_last": [], "kl_avg": []}
    post = problem.posterior() if pts else None
    from tqdm.auto import tqdm

    start = 0
    for stop in tqdm(bounds, disable=not progress, desc="stochastic NGD"):
        lam, Lam, xb, Xb = _k.ngd_blr_loop(
            lam,
            Lam,
            xb,
            Xb,
            problem.X,
            problem.y,
            idx[start:stop],
            np.ascontiguousarray(gam[start:stop]),
            c,
            lam_p,
            Lam_p,
            average,
        )
        expfam.check_natural(lam, Lam)  # the domain is kept (Remark 2); a violation would be a bug
        if stop in pts:
            assert post is not None  # computed whenever there are history points
            hist["iteration"].append(stop)
            hist["kl_last"].append(expfam.kl(*expfam.moment_from_natural(lam, Lam), *post))
            if average:
                hist["kl_avg"].append(expfam.kl(*expfam.moment_from_expectation(xb, Xb), *post))
        start = stop
    history_out = {k: np.asarray(v) for k, v in hist.items() if len(v) or k == "iteration"}
    return NGVIResult(lam, Lam, xb if average else None, Xb if average else None, history_out)


# ---------------------------------------------------------------------------------------------------------------
# stochastic NGD for non-conjugate GLMs (§3.2, §6.2)
# ---------------------------------------------------------------------------------------------------------------


def ngd_glm(
    model: GLM,
    T: int,
    gamma,
    *,
    n_samples: int = 10,
    rng=None,
    batch_size: int | None = None,
    init=None,
    estimator: str = "price",
    history=None,
    progress: bool = False,
    base_samples=None,
    batches=None,
) -> NGVIResult:
    """Stochastic NGD on a logistic / Poisson :class:`~refvi.ngvi.glm.GLM` with a constant step (or a sequence of
    T steps) in [0, 1], ``n_samples`` Monte Carlo draws per step and optional data sub-sampling (n/m rescaled).

    ``estimator``: "price" (Eq. 11, keeps the update valid for log-concave likelihoods) or "autodiff" (Algorithm 1;
    a step that would leave D raises ValueError, App. B).  ``history``: iterations at which the exact negative ELBO
    of the last iterate is recorded (Gauss-Hermite for logistic, closed form for Poisson).  ``base_samples``
    (T, n_samples, d) and ``batches`` (T, batch_size) of row indices replace the draws from ``rng`` (step t uses
    z = xi + L u for the rows u of base_samples[t] and the rows batches[t] of the data)."""
    from refvi.ngvi import estimators as est

    if not isinstance(model, GLM):
        raise TypeError("model must be a GLM (see refvi.ngvi.logistic_model / poisson_model)")
    T = _count(T, "T")
    S = _count(n_samples, "n_samples")
    if estimator not in ("price", "autodiff"):
        raise ValueError(f"estimator must be 'price' or 'autodiff', got {estimator!r}")
    gam = np.full(T, check_step(gamma)) if np.ndim(gamma) == 0 else as_vector(gamma, "gamma", T)
    for t, g in enumerate(gam):
        check_step(float(g), f"gamma[{t}]")
    if base_samples is not None:
        base_samples = given_base_samples(base_samples, T, model.d)
        S = base_samples.shape[1]
    if batches is not None:
        batches = given_batches(batches, T, model.n)
        batch_size = batches.shape[1]
    if batch_size is not None:
        _count(batch_size, "batch_size")
    gen = as_generator(rng)
    lam, Lam = _init(model.d, init)
    lam_p, Lam_p = model.prior_natural
    pts = set(_history_points(T, history))
    hist: dict[str, list[float]] = {"iteration": [], "neg_elbo": []}
    from tqdm.auto import tqdm

    for t in tqdm(range(T), disable=not progress, desc=f"NGD ({estimator})"):
        xi, Xi = expfam.expectation_from_natural(lam, Lam)
        U = gen.standard_normal((S, model.d)) if base_samples is None else base_samples[t]
        if batch_size is None:
            idx = None
        else:
            idx = gen.integers(0, model.n, size=batch_size) if batches is None else batches[t]
        if estimator == "price" and model.kind == "logistic":
            gx, GX = est.price_logistic(model, xi, Xi, U, idx)
        else:
            scale = 1.0 if batch_size is None else model.n / batch_size  # idx is None exactly when batch_size is
            if estimator == "price":
                gx, GX = est.price(est.glm_grad_hess(model, idx, scale), xi, Xi, U)
            else:
                gx, GX = est.autodiff(lambda Z: model.loglik_grad(Z, idx, scale), xi, Xi, U)
        lam, Lam = natural_update((lam, Lam), (gx + lam_p, GX + Lam_p), gam[t])
        if t + 1 in pts:
            hist["iteration"].append(t + 1)
            hist["neg_elbo"].append(model.neg_elbo(*expfam.expectation_from_natural(lam, Lam)))
    return NGVIResult(lam, Lam, None, None, {k: np.asarray(v) for k, v in hist.items()})


def ngd_exact(model, T: int, gamma, init=None):
    """Deterministic NGD (Eq. 8) with exact omega-gradients ``model.grad_neg_elbo`` (BLR or GLM); returns the
    list of natural iterates [eta_0, ..., eta_T]."""
    T = _count(T, "T", lo=0)
    g = _nonneg(gamma)
    eta = _init(model.d, init)
    out = [eta]
    for _ in range(T):
        eta = ngd_step(eta, model.grad_neg_elbo(*expfam.expectation_from_natural(*eta)), g)
        out.append(eta)
    return out
