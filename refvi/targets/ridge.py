"""Gaussian expectations of the logistic functions along a ridge: for s ~ N(a, beta^2), E softplus(-s), E sigmoid(-s)
and E sigmoid'(s) (seed 002 §6's ridge reduction: E_q f(y x^T z) depends on q = N(m, C C^T) only through
a = y x^T m and beta = ||C^T x||).

Integrated in the variable s (not t) by 16-point Gauss-Legendre on panels whose breakpoints merge a dyadic grid around
s = 0 (where the integrands bend, on scale 1) with the grid a + k beta, k = -9..9 (the Gaussian weight), over
[a - 9 beta, a + 9 beta] (outside: mass < 3e-19); ``beta <= 1e-12 max(1, |a|)`` is a point mass.  sigmoid'(s) is
sigma(s) sigma(-s), each factor without cancellation, so all three keep their relative accuracy in the tails, where they
are as small as 1e-13.  Agreement with the quadrature oracle is tested at 1e-11 relative through the exact energy and
at 1e-9 relative for the three expectations in the tails (tests/refvi/test_optim_gd.py), and in 002.claim-exact-energy.
Used by :meth:`refvi.targets.regression.LogisticRegression.exact_energy` and the exact solver
:func:`refvi.optim.exact.solve`.
"""

from __future__ import annotations

import numpy as np

_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_DYADIC = np.concatenate([-(2.0 ** np.arange(-1, 10))[::-1], [0.0], 2.0 ** np.arange(-1, 10)])
_KGRID = np.arange(-9.0, 9.5, 1.0)


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def ridge_expectations(a, beta):
    """(E softplus(-s), E sigmoid(-s), E sigmoid'(s)) for s ~ N(a, beta^2), elementwise over arrays a, beta >= 0."""
    a = np.asarray(a, dtype=np.float64).ravel()
    beta = np.asarray(beta, dtype=np.float64).ravel()
    out = [np.empty_like(a) for _ in range(3)]
    point = beta <= 1e-12 * np.maximum(1.0, np.abs(a))
    if np.any(point):
        s = a[point]
        out[0][point], out[1][point] = np.logaddexp(0.0, -s), _sigmoid(-s)
        out[2][point] = _sigmoid(s) * _sigmoid(-s)
    q = ~point
    if np.any(q):
        aq, bq = a[q], beta[q]
        lo, hi = aq - 9.0 * bq, aq + 9.0 * bq
        br = np.concatenate(
            [np.broadcast_to(_DYADIC, (aq.size, _DYADIC.size)), aq[:, None] + bq[:, None] * _KGRID[None, :]], axis=1
        )
        br = np.sort(np.clip(br, lo[:, None], hi[:, None]), axis=1)
        left, right = br[:, :-1], br[:, 1:]
        half = 0.5 * (right - left)
        S = (0.5 * (right + left))[:, :, None] + half[:, :, None] * _GL_X[None, None, :]
        zt = (S - aq[:, None, None]) / bq[:, None, None]
        W = (
            half[:, :, None]
            * _GL_W[None, None, :]
            * np.exp(-0.5 * zt * zt)
            / (np.sqrt(2.0 * np.pi) * bq[:, None, None])
        )
        sig_m = _sigmoid(-S)
        out[0][q] = np.sum(np.logaddexp(0.0, -S) * W, axis=(1, 2))
        out[1][q] = np.sum(sig_m * W, axis=(1, 2))
        out[2][q] = np.sum(sig_m * _sigmoid(S) * W, axis=(1, 2))  # sigma(s) = 1 - sigma(-s) without cancelling
    return tuple(out)
