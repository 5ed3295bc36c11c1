"""outsidevi: an outside library's adapter for papers 003 (online VI) and 004 (natural-gradient VI), written only from
refvi's documentation (docs/conformance.md, docs/protocol-online.md, docs/protocol-ngvi.md and the protocol
docstrings): plain NumPy and SciPy, importing nothing of refvi.  It implements part of each protocol, so its papers
come out *partial*; tests/verification/test_walkthrough_online_ngvi.py certifies it through the command line."""

import math

import numpy as np
from scipy.stats import norm


def _need(ok, why):
    if not ok:
        raise ValueError(why)


class Online:
    """``impl.online``: the expected losses of Assumptions 1-2 and the KL divergences (protocol-online.md)."""

    def expected_loss(self, loss, X, y, m, sigma, H=1.0):
        X, m, sigma = np.atleast_2d(np.asarray(X, float)), np.asarray(m, float), np.asarray(sigma, float)
        _need(np.all(sigma >= 0), "sigma must be >= 0")
        if loss == "quadratic":                         # H/2 ||theta - x||^2, y unused
            diff = m - X
            values = 0.5 * H * (np.sum(diff**2, 1) + np.sum(sigma**2))
            return values, H * diff, np.broadcast_to(H * sigma, X.shape).copy()
        y = np.asarray(y, float)
        mean = X @ m                                    # <theta, x> ~ N(mean, s^2)
        s = np.sqrt((X**2) @ (sigma**2))
        ds = np.where(s[:, None] > 0, X**2 * sigma / np.where(s > 0, s, 1.0)[:, None], 0.0)   # d s / d sigma_j
        if loss == "squared":                           # (y - <theta, x>)^2
            r = y - mean
            return r**2 + s**2, -2 * r[:, None] * X, 2 * X**2 * sigma
        if loss == "hinge":                             # max(0, 1 - y <theta, x>): E (a - s Z)^+ with a = 1 - y mean
            a = 1.0 - y * mean
            pos = s > 0
            z = np.where(pos, a / np.where(pos, s, 1.0), 0.0)
            cdf = np.where(pos, norm.cdf(z), (a > 0).astype(float))
            pdf = np.where(pos, norm.pdf(z), 0.0)
            values = np.where(pos, a * cdf + s * pdf, np.maximum(a, 0.0))
            return values, -(y * cdf)[:, None] * X, pdf[:, None] * ds
        if loss == "absolute":                          # |y - <theta, x>|: E |r + s Z|
            r = y - mean
            pos = s > 0
            z = np.where(pos, r / np.where(pos, s, 1.0), 0.0)
            sign = np.where(pos, 2 * norm.cdf(z) - 1, np.sign(r))
            pdf = np.where(pos, norm.pdf(z), 0.0)
            values = np.where(pos, r * sign + 2 * s * pdf, np.abs(r))
            return values, -sign[:, None] * X, 2 * pdf[:, None] * ds
        raise ValueError(f"unknown loss {loss!r}")

    def kl_prior(self, m, sigma, s):
        m, sigma = np.asarray(m, float), np.asarray(sigma, float)
        _need(s > 0 and np.all(sigma > 0), "scales must be positive")
        return float(np.sum(np.log(s / sigma) + (sigma**2 + m**2) / (2 * s**2) - 0.5))

    def kl_gaussian(self, m, C, mbar, Cbar):
        S, Sbar = np.asarray(C) @ np.asarray(C).T, np.asarray(Cbar) @ np.asarray(Cbar).T
        d = len(m)
        Sinv = np.linalg.inv(Sbar)
        diff = np.asarray(mbar, float) - np.asarray(m, float)
        logdet = np.linalg.slogdet(Sbar)[1] - np.linalg.slogdet(S)[1]
        return float(0.5 * (np.trace(Sinv @ S) + diff @ Sinv @ diff - d + logdet))


class NGVI:
    """``impl.ngvi``: the exponential-family maps of the Gaussian (protocol-ngvi.md, Parameterisations)."""

    @staticmethod
    def _sym(A):
        A = np.asarray(A, float)
        return 0.5 * (A + A.T)

    def natural_from_moment(self, mu, S):
        P = np.linalg.inv(self._sym(S))
        return P @ np.asarray(mu, float), -0.5 * P

    def expectation_from_natural(self, lam, Lam):
        Lam = self._sym(Lam)
        _need(np.all(np.linalg.eigvalsh(Lam) < 0), "Lam must be negative definite")
        S = np.linalg.inv(-2 * Lam)
        mu = S @ np.asarray(lam, float)
        return mu, S + np.outer(mu, mu)

    def natural_from_expectation(self, xi, Xi):
        xi = np.asarray(xi, float)
        S = self._sym(Xi) - np.outer(xi, xi)
        _need(np.all(np.linalg.eigvalsh(S) > 0), "Xi - xi xi^T must be positive definite")
        return self.natural_from_moment(xi, S)

    def log_partition(self, lam, Lam):
        Lam, lam = self._sym(Lam), np.asarray(lam, float)
        return float(-0.25 * lam @ np.linalg.solve(Lam, lam) - 0.5 * np.linalg.slogdet(-2 * Lam)[1])

    def conjugate(self, xi, Xi):
        xi = np.asarray(xi, float)
        S = self._sym(Xi) - np.outer(xi, xi)
        sign, logdet = np.linalg.slogdet(S)
        _need(sign > 0, "Xi - xi xi^T must be positive definite")
        return float(-0.5 * logdet - 0.5 * len(xi))

    def kl(self, mu1, S1, mu2, S2):
        d = len(mu1)
        P2 = np.linalg.inv(self._sym(S2))
        diff = np.asarray(mu2, float) - np.asarray(mu1, float)
        logdet = np.linalg.slogdet(self._sym(S2))[1] - np.linalg.slogdet(self._sym(S1))[1]
        return float(0.5 * (np.trace(P2 @ self._sym(S1)) + diff @ P2 @ diff - d + logdet))

    def bregman_A(self, eta1, eta2):
        (l1, L1), (l2, L2) = eta1, eta2
        xi2, Xi2 = self.expectation_from_natural(l2, L2)
        inner = float(np.dot(xi2, np.asarray(l1) - l2) + np.sum(Xi2 * (np.asarray(L1) - L2)))
        return self.log_partition(l1, L1) - self.log_partition(l2, L2) - inner

    def bregman_A_star(self, w1, w2):
        (x1, X1), (x2, X2) = w1, w2
        l2, L2 = self.natural_from_expectation(x2, X2)
        inner = float(np.dot(l2, np.asarray(x1) - x2) + np.sum(L2 * (np.asarray(X1) - X2)))
        return self.conjugate(x1, X1) - self.conjugate(x2, X2) - inner


class OutsideVI:
    name = "outsidevi"
    online = Online()
    ngvi = NGVI()


IMPL = OutsideVI()
assert math.isfinite(IMPL.online.kl_prior(np.zeros(1), np.ones(1), 1.0))
