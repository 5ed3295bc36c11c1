"""Chérief-Abdellatif, Alquier & Khan, *A generalization bound for online variational inference* (seed 003): SVA in
expectation parameters, App. 6.1 eq. (17).

For the mean-field Gaussian family with expectation parameters mu = (m, m^2 + sigma^2) and natural parameters
lambda = (m / sigma^2, -1 / (2 sigma^2)), the argmin of (6) with the losses linearized in mu,
sum_i mu^T grad_mu bar L_i(mu_i) + KL(q_mu || pi) / eta, is lambda_(t+1) = lambda_1 - eta sum_i grad_mu bar L_i(mu_i)
(grad_mu KL(q_mu || pi) = lambda - lambda_1): (16) with every weight 1, no forgetting.  The statement runs that
recursion on hinge streams with the oracle's gradients (chain rule: d/d mu_2 = g_sigma / (2 sigma),
d/d mu_1 = g_m - 2 m d/d mu_2) and checks every iterate against a numerical argmin of the objective in (m, sigma)
coordinates (L-BFGS-B; the closed form is never used on that side).  The paper gives no algorithm run in these
parameters (its theory covers (m, sigma)), so the statement checks the paper's derivation with oracles only.

Statements: 003.eq17.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from scipy import optimize

from refvi.verification.oracles import online_comparators as oc
from refvi.verification.statement import statement
from refvi.verification.statements.online_003._common import _floats, hinge_streams


def _grad_mu(X, y, m, sigma, t):
    """grad_mu bar L_t at (m, sigma) in expectation coordinates, from the oracle's (g_m, g_sigma)."""
    _, gm, gs = oc.hinge_value(X[t : t + 1], y[t : t + 1], m, sigma)
    gv = gs / (2.0 * sigma)
    return gm - 2.0 * gv * m, gv


def _argmin_6(G1, G2, eta, s):
    """Numerical argmin over (m, sigma > 0) of G1^T m + G2^T (m^2 + sigma^2) + KL(N(m, sigma^2) || N(0, s^2)) / eta."""
    d = G1.size

    def f(z):
        m, sg = z[:d], z[d:]
        val = G1 @ m + G2 @ (m * m + sg * sg) + oc.kl_to_prior(m, sg, s) / eta
        return val, np.concatenate([G1 + 2 * G2 * m + m / (s * s * eta), 2 * G2 * sg + (sg / s**2 - 1 / sg) / eta])

    r = optimize.minimize(
        f,
        np.concatenate([np.zeros(d), np.full(d, s)]),
        jac=True,
        method="L-BFGS-B",
        bounds=[(None, None)] * d + [(1e-9, None)] * d,
        options={"maxiter": 5000, "ftol": 1e-16, "gtol": 1e-12},
    )
    return r.x[:d], r.x[d:]


@statement("003.eq17")
def eq17(ctx):
    def check(inst):
        X, y, eta, s = inst
        T, d = X.shape
        lam1 = (np.zeros(d), np.full(d, -0.5 / s**2))
        G1, G2 = np.zeros(d), np.zeros(d)
        m, sigma = np.zeros(d), np.full(d, s)
        for t in range(T):
            g1, g2 = _grad_mu(X, y, m, sigma, t)
            G1, G2 = G1 + g1, G2 + g2
            l1, l2 = lam1[0] - eta * G1, lam1[1] - eta * G2  # (17)
            ctx.true(bool(np.all(l2 < 0)), label="(17) stays in the natural domain (convex loss: sum g_v >= 0)")
            v = -0.5 / l2
            m, sigma = l1 * v, np.sqrt(v)
            m_ref, s_ref = _argmin_6(G1, G2, eta, s)
            ctx.close(
                np.concatenate([m, sigma]),
                np.concatenate([m_ref, s_ref]),
                rtol=1e-6,
                atol=1e-7,
                label=f"(17) at t = {t + 1}: lambda_1 - eta sum grad_mu bar L_i = argmin of (6) in mu",
            )

    @st.composite
    def instances(draw):
        X, y, _ = draw(hinge_streams(max_d=3, max_T=12))
        return X, y, draw(_floats(0.05, 2.0)), draw(_floats(0.3, 2.0))

    ctx.forall(
        instances(),
        check,
        fixed=[(np.array([[1.0, -0.5], [0.3, 2.0], [-1.0, 1.0]]), np.array([1.0, -1.0, 1.0]), 0.7, 1.2)],
        max_examples=min(ctx.profile.max_examples, 20),
    )
