"""Did the fit work?  The diagnostics every :class:`~refvi.optim.fit.FitResult` carries.

Three checks, each from the literature on validating variational approximations:

* **Pareto k of the importance weights** (Yao, Vehtari, Simpson & Gelman 2018, "Yes, but did it work?: Evaluating
  variational inference", ICML): draw z_1..z_S from the fitted q, form log w_s = log p(z_s) - log q(z_s), and fit a
  generalized Pareto distribution to the largest weights (Pareto-smoothed importance sampling, Vehtari, Simpson,
  Gelman, Yao & Gabry 2024, JMLR 25(72)).  Its shape k-hat says how heavy the tail of p/q is under q: below
  min(1 - 1/log10(S), 0.7) the importance-sampling estimate of anything under p from draws of q is reliable, so q
  covers p; above it q misses mass of p (an unconverged run, or a posterior the Gaussian family cannot represent).
  :func:`pareto_k` is the estimator of those papers (Zhang & Stephens 2009's GPD fit with the weakly informative
  prior of Vehtari et al.), written here in NumPy: importing ArviZ costs 4 to 6 s on the project's 2-core machine
  (measured 2026-11-27, ``python -X importtime -c "import arviz"``; its ``psislw`` is the only function needed),
  more than the whole first fit of a small model, so refvi computes the same number and the test suite holds it to
  ArviZ's ``psislw`` (``tests/refvi/test_diagnostics.py``: agreement to 1e-12 on heavy and light tails).
* **The tail averages stopped moving**: the iterates of the last half of the run, split in two quarters, averaged
  each (at the recorded trace points): the largest change of a coordinate's mean, in units of its sd over the last
  quarter, and of a coordinate's sd, relative.  A run still drifting at its end moves by much more than its noise.
  The two quarter averages also measure the run's own noise in the joint: ``quarter_kl`` = KL(q_3 || q_4) between
  the Gaussians of the two quarter averages (for a Gaussian pair,
  ``(1/2)(tr(S_4^-1 S_3) - d + |m_4 - m_3|^2_{S_4^-1} + log det S_4 / det S_3)``).
  SGD's error in the d(d+1)/2 entries of C makes the returned average's KL from the
  optimum grow like d^2 / (samples x steps), so a run whose marginals have settled can still be several nats from
  the optimum as a joint at d in the hundreds.  On Bayesian linear regressions fitted with the defaults (exact KL
  known) that KL was 1.5 times ``quarter_kl`` (d = 100: 0.35 and 0.23; d = 200: 1.40 and 0.94; d = 200 with
  samples=4: 0.35 and 0.23; measured 2026-11-28).  A failed Pareto k with a large ``quarter_kl`` is at least partly
  the run's noise (more samples or steps help), with a small one the posterior's shape (no Gaussian helps).
* **Posterior error bounds in the style of Huggins, Kasprzak, Campbell & Broderick 2020** ("Validated variational
  inference via practical posterior error bounds", AISTATS): for any phi, Cauchy-Schwarz gives
  ``|E_p phi - E_q phi| <= sqrt(chi2(p||q) Var_q phi)`` with chi2(p||q) = E_q[(p/q)^2] - 1 = exp(D_2(p||q)) - 1, so
  every coordinate's mean is within ``sqrt(chi2)`` fitted sd of the posterior mean, and its variance within a
  factor ``1 +- sqrt(2 chi2)`` (phi = (z_i - m_i)^2, Var_q phi = 2 sd^4).  chi2 is estimated from the Pareto-smoothed
  weights; the estimate needs a finite variance of the weights (k < 1/2), so the bounds are reported only when
  k-hat < 0.5, and are estimates, not certificates.

:func:`diagnose` runs all three on a result; ``refvi.fit`` calls it on every run (``diagnose=`` draws, 0 to skip)
and warns (:class:`~refvi.optim.fit.ConvergenceWarning`) with the numbers and what to do when a check fails.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from refvi._checks import as_samples

#: the default number of draws from q for the Pareto k (Yao et al. 2018 use thousands; the k-hat threshold
#: min(1 - 1/log10(S), 0.7) is 0.667 at S = 1000)
DRAWS = 1000
#: the largest move of a coordinate's mean between the last two quarters of the run, in the last quarter's sd, that
#: still counts as "stopped moving" (the noise of a converged run at the default budget is ~0.1 at d = 500: see the
#: module notes)
MEAN_MOVE = 0.25
#: the same for a coordinate's sd, relative
SD_MOVE = 0.1
#: the KL between the last two quarters' averages (nats) above which a failed Pareto k is put down (in part) to the
#: run's noise rather than the posterior's shape alone
QUARTER_KL = 0.1


@dataclasses.dataclass(frozen=True)
class FitDiagnostics:
    """Whether a fit worked (see the module docstring).  ``converged`` is ``pareto_ok and stationary``; ``messages``
    say what failed, with the numbers, and what to do."""

    pareto_k: float  # PSIS k-hat of log p - log q over ``draws`` draws of q (-inf: the weights are constant)
    k_threshold: float  # min(1 - 1/log10(draws), 0.7)
    draws: int
    mean_move: float  # max_i |mean over the last quarter - over the third| / the last quarter's sd_i (nan: no quarters)
    sd_move: float  # max_i |sd over the last quarter / over the third - 1|
    quarter_kl: float  # KL(q_3 || q_4) between the last two quarters' averages (nan: no quarters)
    chi2: float | None  # estimate of chi2(p || q) from the smoothed weights (None unless k-hat < 0.5)
    mean_bound: float | None  # sqrt(chi2): every |E_p z_i - m_i| <= mean_bound * sd_q,i (Huggins et al. 2020 style)
    var_bound: float | None  # sqrt(2 chi2): every Var_p z_i / sd_q,i^2 - 1 within +- var_bound (+ chi2 below)
    pareto_ok: bool
    stationary: bool
    messages: tuple[str, ...] = ()

    @property
    def converged(self) -> bool:
        return self.pareto_ok and self.stationary

    def summary(self) -> str:
        k = "constant weights (q = p)" if self.pareto_k == -math.inf else f"{self.pareto_k:.3g}"
        parts = [
            f"Pareto k = {k} (threshold {self.k_threshold:.3g}, {self.draws} draws)",
            f"tail averages moved by {self.mean_move:.3g} sd (mean), {self.sd_move:.3g} (sd, relative)",
        ]
        if math.isfinite(self.quarter_kl):
            parts.append(f"KL between the last two quarters {self.quarter_kl:.3g}")
        if self.mean_bound is not None:
            parts.append(f"posterior mean within {self.mean_bound:.3g} sd of the fitted mean (chi2 estimate)")
        return ("converged: " if self.converged else "NOT converged: ") + "; ".join(parts)


def k_threshold(draws: int) -> float:
    """min(1 - 1/log10(S), 0.7): the sample-size-dependent threshold of Vehtari et al. 2024 (Sec. 3.2.4)."""
    return min(1.0 - 1.0 / math.log10(draws), 0.7) if draws > 10 else 0.0


def _gpd_fit(x: np.ndarray) -> tuple[float, float]:
    """(shape k, scale sigma) of a generalized Pareto distribution fitted to the sorted exceedances x > 0 (ascending),
    by the empirical Bayes estimate of Zhang & Stephens (2009, Technometrics 51(3)): a grid of m = 30 + floor(sqrt(n))
    values of theta = -k / sigma around 1/x_max, each weighted by its profile likelihood
    n (log(theta / k(theta)) - k(theta) - 1) with k(theta) = mean log(1 - theta x) (sign as in Vehtari et al.), the
    posterior mean of theta, then k shrunk towards 1/2 by a prior worth 10 observations (Vehtari et al. 2024,
    Appendix C): k = (n k + 5) / (n + 10)."""
    n = x.size
    m = 30 + int(math.sqrt(n))
    j = np.arange(1, m + 1, dtype=np.float64)
    quartile = x[int(n / 4 + 0.5) - 1]
    theta = 1.0 / x[-1] + (1.0 - np.sqrt(m / (j - 0.5))) / (3.0 * quartile)
    k = np.log1p(-theta[:, None] * x).mean(axis=1)
    prof = n * (np.log(-theta / k) - k - 1.0)
    weights = 1.0 / np.exp(prof - prof[:, None]).sum(axis=1)
    keep = weights >= 10 * np.finfo(float).eps
    weights, theta = weights[keep], theta[keep]
    weights /= weights.sum()
    th = float(np.sum(theta * weights))
    k_hat = float(np.log1p(-th * x).mean())
    sigma = -k_hat / th
    return (n * k_hat + 10 * 0.5) / (n + 10), sigma


def psis(log_weights) -> tuple[np.ndarray, float]:
    """Pareto-smoothed importance sampling: (normalized smoothed log weights, k-hat) for the raw log weights of S
    draws (Vehtari et al. 2024, Algorithm 1, relative efficiency 1): the M = ceil(min(S/5, 3 sqrt(S))) largest weights
    are replaced by the expected order statistics of the generalized Pareto fit to their excess over the (M+1)-th
    largest (k-hat = inf when that tail has 4 or fewer points), then truncated at the largest raw weight."""
    lw = np.array(log_weights, dtype=np.float64).ravel()
    S = lw.size
    if S < 2 or not np.all(np.isfinite(lw)):
        raise ValueError(f"psis needs at least 2 finite log weights, got {S} (finite: {bool(np.all(np.isfinite(lw)))})")
    lw -= lw.max()
    order = np.argsort(lw)
    M = math.ceil(min(0.2 * S, 3.0 * math.sqrt(S)))
    cut = max(lw[order[-M - 1]], math.log(np.finfo(float).tiny))
    tail = np.flatnonzero(lw > cut)
    k = math.inf
    if tail.size > 4:
        t_order = tail[np.argsort(lw[tail])]
        exceed = np.exp(lw[t_order]) - math.exp(cut)
        k, sigma = _gpd_fit(exceed)
        if math.isfinite(k):
            p = (np.arange(tail.size) + 0.5) / tail.size
            if abs(k) < 1e-12:
                q = -sigma * np.log1p(-p)
            else:
                q = sigma * np.expm1(-k * np.log1p(-p)) / k
            lw[t_order] = np.log(q + math.exp(cut))
            lw[lw > 0] = 0.0
    top = lw.max()
    lw -= top + math.log(np.sum(np.exp(lw - top)))
    return lw, float(k)


def pareto_k(log_weights) -> float:
    """The PSIS k-hat of raw log importance weights (:func:`psis`)."""
    return psis(log_weights)[1]


def _log_weights(target, m, C, U):
    """log p(z) - log q(z) at the draws z = C u + m of q = N(m, C C^T), u the rows of U (constants of either
    dropped)."""
    from refvi.optim.fit import _neglogp

    Z = U @ C.T + m
    sign, logdet = np.linalg.slogdet(C)
    if sign == 0:
        raise ValueError("the fitted C is singular: q has no density")
    log_q = -0.5 * np.einsum("ij,ij->i", U, U) - logdet
    return -_neglogp(target, Z) - log_q


def _moves(quarters, d):
    """(max |mean_4 - mean_3| / sd, max |sd_4 / sd_3 - 1|) from the (m, C) averages of the last two quarters."""
    if quarters is None:
        return math.nan, math.nan
    (m3, C3), (m4, C4) = quarters
    sd3 = np.sqrt(np.einsum("ij,ij->i", C3, C3))
    sd4 = np.sqrt(np.einsum("ij,ij->i", C4, C4))
    with np.errstate(divide="ignore", invalid="ignore"):
        mm = float(np.max(np.abs(m4 - m3) / sd4))
        sm = float(np.max(np.abs(sd4 / sd3 - 1.0)))
    return mm, sm


def _quarter_kl(quarters) -> float:
    """KL(N(m_3, C_3 C_3^T) || N(m_4, C_4 C_4^T)) (see the module docstring); nan without quarters or for a singular
    quarter average."""
    if quarters is None:
        return math.nan
    (m3, C3), (m4, C4) = quarters
    S3, S4 = C3 @ C3.T, C4 @ C4.T
    try:
        L4 = np.linalg.cholesky(S4)
    except np.linalg.LinAlgError:
        return math.nan
    s3, ld3 = np.linalg.slogdet(S3)
    if s3 <= 0:
        return math.nan
    A = np.linalg.solve(L4, C3)  # L4^-1 C3: tr(S4^-1 S3) = |A|_F^2
    b = np.linalg.solve(L4, m4 - m3)
    ld4 = 2.0 * float(np.sum(np.log(np.diag(L4))))
    kl = 0.5 * (float(np.sum(A * A)) - m3.size + float(b @ b) + ld4 - float(ld3))
    return max(kl, 0.0)


def diagnose(target, m, C, *, quarters=None, draws: int = DRAWS, seed=0, base_samples=None) -> FitDiagnostics:
    """The diagnostics of the approximation N(m, C C^T) of ``target`` (see the module docstring); ``quarters`` are the
    (m, C) averages of the iterates over the last two quarters of the run, in the coordinates of (m, C).  The draws
    of q are C u + m for ``draws`` standard normal u drawn with ``seed``, or for the rows of ``base_samples``
    (S, d), S >= 20, when given (then ``draws`` and ``seed`` are not used)."""
    m = np.asarray(m, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    d = m.size
    if base_samples is not None:
        U = as_samples(base_samples, d, "base_samples")
        if U.shape[0] < 20:
            raise ValueError(f"diagnose needs base_samples with at least 20 rows (draws of q), got {U.shape[0]}")
    elif isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 20:
        raise ValueError(f"diagnose needs draws >= 20 (an integer), got {draws!r}")
    else:
        U = np.random.default_rng(seed).standard_normal((int(draws), d))
    draws = U.shape[0]
    with np.errstate(all="ignore"):
        lw = _log_weights(target, m, C, U)
    thr = k_threshold(int(draws))
    messages = []
    chi2 = mean_bound = var_bound = None
    if not np.all(np.isfinite(lw)):
        k = math.inf
        messages.append(
            f"log p is not finite at {int(np.sum(~np.isfinite(lw)))} of {draws} draws of the fitted q: q puts mass "
            f"where the target has none"
        )
    elif float(np.max(lw) - np.min(lw)) <= 1e-9 * max(1.0, float(np.max(np.abs(lw)))):
        k = -math.inf  # p / q constant on every draw: q is p (up to rounding)
        chi2, mean_bound, var_bound = 0.0, 0.0, 0.0
    else:
        slw, k = psis(lw)
        if k < 0.5:
            chi2 = max(float(draws * np.sum(np.exp(2.0 * slw)) - 1.0), 0.0)
            mean_bound, var_bound = math.sqrt(chi2), math.sqrt(2.0 * chi2)
    pareto_ok = k <= thr
    mean_move, sd_move = _moves(quarters, d)
    stationary = not (mean_move > MEAN_MOVE or sd_move > SD_MOVE)
    with np.errstate(all="ignore"):
        quarter_kl = _quarter_kl(quarters)
    if not pareto_ok and math.isfinite(k):
        head = (
            f"Pareto k = {k:.3g} > {thr:.3g} ({draws} draws of q; Yao et al. 2018): the fitted Gaussian is not close "
            f"to the posterior as a joint distribution (importance sampling from it is unreliable; moments of "
            f"combinations of many coordinates may be off even where each coordinate's are not)"
        )
        if not stationary:
            messages.append(head + "; the run had not settled (below): run more steps (steps=)")
        elif quarter_kl > QUARTER_KL:
            messages.append(
                head + f"; part of it is the run's own noise: the averages of its last two quarters differ by KL = "
                f"{quarter_kl:.3g}, which falls like 1 / (samples x steps): raise samples= (cheaper per unit of noise "
                f"than steps=) until that is below {QUARTER_KL}; if k stays high then, it is the posterior's shape"
            )
        else:
            messages.append(
                head + f"; the run had settled (its last two quarters differ by KL = {quarter_kl:.3g}), so this is "
                f"the posterior's shape: no Gaussian fits it better; check what you need with MCMC"
            )
    if not stationary:
        messages.append(
            f"the iterates were still moving at the end: between the last two quarters of the run a mean moved by "
            f"{mean_move:.3g} fitted sd (allowed {MEAN_MOVE}) and an sd by {100 * sd_move:.3g}% (allowed "
            f"{100 * SD_MOVE:.3g}%); run more steps (steps=)"
        )
    return FitDiagnostics(
        pareto_k=float(k),
        k_threshold=thr,
        draws=int(draws),
        mean_move=mean_move,
        sd_move=sd_move,
        quarter_kl=quarter_kl,
        chi2=chi2,
        mean_bound=mean_bound,
        var_bound=var_bound,
        pareto_ok=pareto_ok,
        stationary=stationary,
        messages=tuple(messages),
    )
