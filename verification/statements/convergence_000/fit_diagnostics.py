"""refvi's fit diagnostics (not a paper result: Yao, Vehtari, Simpson & Gelman 2018; Vehtari et al. 2024's PSIS;
Huggins et al. 2020's chi2 bounds), as a fit reports them about its approximation q = N(m, C C^T), against ArviZ and
closed forms (:meth:`~refvi.verification.protocol.core.Implementation.fit_diagnostics`).

On a correlated, off-centre Gaussian target p (d = 3) and S = 1000 given draws u of N(0, I), so that z = m + C u
are the draws of q and log p(z) - log q(z) is computed here by SciPy:

* **q = p**: the log weights are constant, so k-hat is -inf and chi2 is 0 (refvi's stated convention); with S = 1000
  and 5000 draws (the threshold's two branches);
* **q a little wider and shifted** (light-tailed weights): k-hat equals ArviZ's ``psislw`` k-hat of the same log
  weights, it is below the threshold min(1 - 1/log10(S), 0.7), and chi2 = S sum_s w_s^2 - 1 from ArviZ's normalized
  smoothed weights (k-hat < 0.5), with the bounds it gives by Cauchy-Schwarz (Huggins et al. 2020): every mean within
  sqrt(chi2) sd of q's, every variance within a factor 1 +- sqrt(2 chi2) (+ chi2);
* **q much narrower than p** (heavy-tailed weights): the same k-hat, above the threshold (``pareto_ok`` False), no
  chi2;
* **the quarters of a run**: the largest move of a mean between the third and last quarter averages in the last
  quarter's sd, of an sd relative, and KL(q_3 || q_4) (cross-entropy minus entropy, SciPy) from the quarter averages
  given; a settled pair (moves 1e-3) is ``stationary``, a drifting one (a mean moved by 2 sd, an sd by 30 %) is not;
  without quarters the moves and the KL are nan;
* **a fit's own diagnostics** (``fit_as_user``, when it reports them): on the Gaussian (in its default frame and with
  none) and on a logistic regression, the moves and the KL are those of the quarter averages of the iterates the run
  recorded (T/2 < t <= 3T/4 and 3T/4 < t), and ``stationary`` is what ``fit_diagnostics`` says of those quarters.

The k-hat checks need ArviZ (the ``peers`` extra); without it the instances that need it are not run.

Statements: 000.claim-fit-diagnostics.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import multivariate_normal

from refvi.verification.oracles import psis as psis_oracle
from refvi.verification.oracles.ngvi_expfam import kl_gauss
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import InstanceSkipped, scalar, statement

D, S = 3, 1000
_A = np.array([[2.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 0.5]])
MEAN = np.array([3.0, -1.0, 0.5])
COV = np.linalg.inv(_A)
ROOT = np.linalg.cholesky(COV)


def _log_weights(m, C, U):
    """log p(z) - log q(z) at z = m + C u for the rows u of U, both densities by SciPy (normalized)."""
    Z = m + U @ C.T
    return multivariate_normal(MEAN, COV).logpdf(Z) - multivariate_normal(m, C @ C.T).logpdf(Z)


def _threshold(n):
    return min(1.0 - 1.0 / math.log10(n), 0.7)


@statement("000.claim-fit-diagnostics")
def claim_fit_diagnostics(ctx):
    impl = ctx.impl
    target = specs.gaussian(MEAN, _A, name="correlated Gaussian, d = 3")
    U = np.random.default_rng(2026).standard_normal((S, D))

    def exact(n):
        U = np.random.default_rng(2026).standard_normal((n, D))
        run = impl.fit_diagnostics(target, MEAN, ROOT, U, None)
        lw = _log_weights(MEAN, ROOT, U)
        ctx.true(scalar(np.ptp(lw)) <= 1e-9 * (1.0 + scalar(np.max(np.abs(lw)))), label="q = p: constant log weights")
        ctx.equal(run.pareto_k, -math.inf, label="q = p: k-hat = -inf (constant weights)")
        for name in ("chi2", "mean_bound", "var_bound"):
            ctx.equal(getattr(run, name), 0.0, label=f"q = p: {name} = 0")
        ctx.equal(run.pareto_ok, True, label="q = p: pareto_ok")
        ctx.close(run.k_threshold, _threshold(n), atol=1e-15, label=f"threshold min(1 - 1/log10 {n}, 0.7)")
        for name in ("mean_move", "sd_move", "quarter_kl"):
            ctx.equal(bool(np.isnan(getattr(run, name))), True, label=f"no quarters: {name} is nan")

    def weights(case):
        name, m, C = case
        run = impl.fit_diagnostics(target, m, C, U, None)
        slw, k = psis_oracle.psis(_log_weights(m, C, U))
        what = f"q {name}"
        ctx.close(run.pareto_k, k, atol=1e-8, label=f"{what}: k-hat == ArviZ psislw's")
        ctx.close(run.k_threshold, _threshold(S), atol=1e-15, label=f"{what}: the threshold for S = {S}")
        ctx.equal(run.pareto_ok, bool(k <= _threshold(S)), label=f"{what}: pareto_ok == (k-hat <= threshold)")
        if k < 0.5:
            chi2 = max(S * scalar(np.sum(np.exp(2.0 * slw))) - 1.0, 0.0)
            ctx.close(run.chi2, chi2, rtol=1e-8, atol=1e-12, label=f"{what}: chi2 = S sum w^2 - 1 (smoothed weights)")
            # Cauchy-Schwarz, |E_p phi - E_q phi| <= sqrt(chi2 Var_q phi): phi = z_i / sd_i (Var_q 1) bounds the
            # means, phi = ((z_i - m_i) / sd_i)^2 (Var_q 2, a chi-square with one degree of freedom) the variances
            ctx.close(run.mean_bound, math.sqrt(chi2), rtol=1e-8, atol=1e-12, label=f"{what}: mean bound sqrt(chi2)")
            ctx.close(
                run.var_bound, math.sqrt(2 * chi2), rtol=1e-8, atol=1e-12, label=f"{what}: var bound sqrt(2 chi2)"
            )
        else:
            for name in ("chi2", "mean_bound", "var_bound"):
                ctx.equal(getattr(run, name) is None, True, label=f"{what}: no {name} when k-hat >= 0.5")

    def quarters(case):
        name, (m3, C3), (m4, C4), settled = case
        run = impl.fit_diagnostics(target, MEAN, ROOT, U, ((m3, C3), (m4, C4)))
        sd3, sd4 = np.sqrt(np.diag(C3 @ C3.T)), np.sqrt(np.diag(C4 @ C4.T))
        what = f"{name} quarters"
        ctx.close(run.mean_move, scalar(np.max(np.abs(m4 - m3) / sd4)), rtol=1e-12, label=f"{what}: mean move")
        ctx.close(run.sd_move, scalar(np.max(np.abs(sd4 / sd3 - 1.0))), rtol=1e-12, label=f"{what}: sd move")
        kl = kl_gauss(m3, C3 @ C3.T, m4, C4 @ C4.T)
        ctx.close(run.quarter_kl, kl, rtol=1e-9, atol=1e-12, label=f"{what}: KL(q_3 || q_4)")
        ctx.equal(run.stationary, settled, label=f"{what}: stationary is {settled}")

    def driver(case):
        """A run of the driver as a user calls it (fit_as_user) that reports its own diagnostics: its moves and KL are
        those of its recorded iterates' quarters, and ``stationary`` is the implementation's rule on them."""
        name, spec, options = case
        run = impl.fit_as_user(spec, **options)
        rep = run.diagnostics
        if rep is None:
            # refvi's own adapter reports them (as it implements every method): None there is a lost field
            ctx.true(not ctx.strict_methods, label=f"{name}: refvi's fit_as_user reports the fit's diagnostics")
            raise InstanceSkipped("fit_as_user reports no diagnostics (an optional field)")
        steps = np.asarray(run.steps)
        T = scalar(steps[-1])
        late = 2 * steps > T
        q3, q4 = late & (4 * steps <= 3 * T), 4 * steps > 3 * T
        what = f"{name}, {options}"
        ctx.true(bool(np.any(q3)) and bool(np.any(q4)), label=f"{what}: records in the third and the last quarter")
        ms, Cs = np.asarray(run.ms), np.asarray(run.Cs)
        (m3, C3), (m4, C4) = ((ms[q].mean(axis=0), Cs[q].mean(axis=0)) for q in (q3, q4))
        sd3, sd4 = np.sqrt(np.diag(C3 @ C3.T)), np.sqrt(np.diag(C4 @ C4.T))
        tol = dict(rtol=1e-8, atol=1e-12)
        ctx.close(rep.mean_move, scalar(np.max(np.abs(m4 - m3) / sd4)), **tol, label=f"{what}: the fit's mean move")
        ctx.close(rep.sd_move, scalar(np.max(np.abs(sd4 / sd3 - 1.0))), **tol, label=f"{what}: the fit's sd move")
        kl = kl_gauss(m3, C3 @ C3.T, m4, C4 @ C4.T)
        ctx.close(rep.quarter_kl, kl, rtol=1e-6, atol=1e-10, label=f"{what}: the fit's KL(q_3 || q_4)")
        own = impl.fit_diagnostics(spec, run.m, run.C, U, ((m3, C3), (m4, C4)))
        ctx.equal(rep.stationary, own.stationary, label=f"{what}: stationary by the rule on those quarters")

    for n in (S, 5000):  # 1 - 1/log10 S is below 0.7 up to S = 2154, above it from there
        ctx.instance(exact, n)
    if psis_oracle.available():
        shift = 0.2 * ROOT @ np.ones(D)
        ctx.instance(weights, ("a little wider and shifted", MEAN + shift, 1.15 * ROOT))
        ctx.instance(weights, ("much narrower", MEAN, 0.4 * ROOT))
    B = np.tril(np.random.default_rng(7).standard_normal((D, D)), -1) * 0.1
    C3 = ROOT + B
    ctx.instance(quarters, ("settled", (MEAN + 1e-3 * np.diag(C3), C3), (MEAN, (1 + 1e-3) * C3), True))
    drift = np.diag([1.3, 1.0, 1.0])
    ctx.instance(quarters, ("drifting", (MEAN, C3), (MEAN + 2.0 * np.diag(C3), drift @ C3), False))
    rng = np.random.default_rng(11)
    X = rng.standard_normal((40, D))
    logistic = specs.logistic(X, np.where(X @ np.array([1.0, -0.5, 0.8]) > 0, 1.0, -1.0), name="logistic, d = 3")
    ctx.instance(driver, ("the Gaussian", target, {"steps": 600, "seed": 3}))
    ctx.instance(driver, ("a logistic regression", logistic, {"steps": 401, "seed": 5}))
    ctx.instance(driver, ("the Gaussian, no frame", target, {"steps": 300, "seed": 1, "frame": None}))
    # seed 002's deterministic methods keep their own records (the gradient-descent loop, not the SGD driver's)
    ctx.instance(driver, ("the Gaussian, gradient descent", target, {"steps": 60, "method": "gd-prox"}))
    ctx.instance(driver, ("a logistic regression, gradient descent", logistic, {"steps": 41, "method": "gd-projected"}))
