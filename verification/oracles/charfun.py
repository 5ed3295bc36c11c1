"""Closed forms via characteristic functions.

numpy / scipy only — never refvi.  Bases are named by strings and described here from scratch.

**O3, cos + quadratic target.**  f(z) = alpha cos(b^T z + phi) + beta/2 ||z - z0||^2
(exactly ``M = beta + |alpha| ||b||^2``).
For a standardized base with characteristic function P(k) = E exp(i k^T u), k = C^T b, a = b^T m + phi:

    l = alpha Re[e^{ia} P(k)] + beta/2 (||m - z0||^2 + ||C||_F^2)
    grad_m l = -alpha Im[e^{ia} P(k)] b + beta (m - z0)
    grad_C l = alpha Re[e^{ia} b (grad_k P)^T] + beta C

Product bases: P = prod_j psi(k_j), (grad_k P)_j = psi'(k_j) prod_{l != j} psi(k_l).
Elliptical standardized t_nu: P = Psi(||k||), Psi(kappa) = K_{nu/2}(r) r^{nu/2} / (Gamma(nu/2) 2^{nu/2 - 1}),
r = sqrt(nu - 2) kappa; grad_k P = (Psi'(kappa) / kappa) k with Psi'(kappa)/kappa = -(nu-2) r^{nu/2-1} K_{nu/2-1}(r) /
(Gamma(nu/2) 2^{nu/2-1}) (from d/dr [r^v K_v(r)] = -r^v K_{v-1}(r)), which tends to -1 as kappa -> 0.

**O1, quadratic target, any base with mean mu and covariance Sigma** (the first two derivatives of P at 0):
f(z) = 1/2 (z - z*)^T A (z - z*):  l = 1/2 (C mu + m - z*)^T A (C mu + m - z*) + 1/2 tr(A C Sigma C^T),
grad_m l = A (C mu + m - z*), grad_C l = A (C mu + m - z*) mu^T + A C Sigma.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

PRODUCT_BASES = ("gaussian", "uniform", "laplace", "exponential", "rademacher", "student_t")
_S3 = math.sqrt(3.0)


# ---- scalar characteristic functions of standardized laws and their derivatives ---------------------------------
def _t_Psi(kappa, nu):
    """Psi(kappa) = E exp(i kappa e^T u) for the standardized t_nu (any dimension: depends on ||k|| only)."""
    kappa = np.asarray(kappa, dtype=np.float64)
    shape = kappa.shape
    r = math.sqrt(nu - 2.0) * np.atleast_1d(kappa)
    out = np.ones_like(r)
    pos = r > 0
    rp = r[pos]
    with np.errstate(over="ignore"):  # K_v overflows only where r^v K_v(r) is at its r -> 0 limit: Psi = 1
        val = np.exp(
            np.log(special.kve(nu / 2.0, rp))
            - rp
            + (nu / 2.0) * np.log(rp)
            - special.gammaln(nu / 2.0)
            - (nu / 2.0 - 1.0) * math.log(2.0)
        )
    out[pos] = np.where(np.isfinite(val), val, 1.0)
    return out.reshape(shape)


def _t_dPsi_over_kappa(kappa, nu):
    """Psi'(kappa) / kappa for the standardized t_nu (limit -1 at kappa = 0)."""
    kappa = np.asarray(kappa, dtype=np.float64)
    shape = kappa.shape
    r = math.sqrt(nu - 2.0) * np.atleast_1d(kappa)
    out = -np.ones_like(r)
    pos = r > 0
    rp = r[pos]
    v = nu / 2.0 - 1.0
    with np.errstate(over="ignore"):  # overflow only at the r -> 0 limit, -1
        val = -(nu - 2.0) * np.exp(
            np.log(special.kve(v, rp))
            - rp
            + v * np.log(rp)
            - special.gammaln(nu / 2.0)
            - (nu / 2.0 - 1.0) * math.log(2.0)
        )
    out[pos] = np.where(np.isfinite(val), val, -1.0)
    return out.reshape(shape)


def psi(base: str, k, nu: float | None = None) -> np.ndarray:
    """E exp(i k u) for one standardized coordinate (elementwise over k), complex."""
    k = np.asarray(k, dtype=np.float64)
    if base == "gaussian":
        return np.exp(-0.5 * k * k) + 0j
    if base == "uniform":
        x = _S3 * k
        small = np.abs(x) < 1e-4
        xs = np.where(small, 1.0, x)
        return np.where(small, 1.0 - x * x / 6.0 + x**4 / 120.0, np.sin(xs) / xs) + 0j
    if base == "laplace":
        return 1.0 / (1.0 + 0.5 * k * k) + 0j
    if base == "exponential":
        return np.exp(-1j * k) / (1.0 - 1j * k)
    if base == "rademacher":
        return np.cos(k) + 0j
    if base == "student_t":
        return _t_Psi(np.abs(k), _nu(nu)) + 0j
    raise ValueError(f"unknown base {base!r}; expected one of {PRODUCT_BASES}")


def dpsi(base: str, k, nu: float | None = None) -> np.ndarray:
    """d/dk psi(k) (elementwise), complex."""
    k = np.asarray(k, dtype=np.float64)
    if base == "gaussian":
        return -k * np.exp(-0.5 * k * k) + 0j
    if base == "uniform":
        x = _S3 * k
        small = np.abs(x) < 1e-3
        xs = np.where(small, 1.0, x)
        # d/dk sin(x)/x = sqrt3 (x cos x - sin x) / x^2; series sqrt3 (-x/3 + x^3/30 - x^5/840)
        big = _S3 * (xs * np.cos(xs) - np.sin(xs)) / (xs * xs)
        ser = _S3 * (-x / 3.0 + x**3 / 30.0 - x**5 / 840.0)
        return np.where(small, ser, big) + 0j
    if base == "laplace":
        return -k / (1.0 + 0.5 * k * k) ** 2 + 0j
    if base == "exponential":
        return -k * np.exp(-1j * k) / (1.0 - 1j * k) ** 2
    if base == "rademacher":
        return -np.sin(k) + 0j
    if base == "student_t":
        return k * _t_dPsi_over_kappa(np.abs(k), _nu(nu)) + 0j
    raise ValueError(f"unknown base {base!r}; expected one of {PRODUCT_BASES}")


def _nu(nu):
    if nu is None or not nu > 2:
        raise ValueError(f"the standardized Student-t needs nu > 2, got {nu!r}")
    return float(nu)


def charfun(base: str, k, *, nu: float | None = None, elliptical: bool = False) -> tuple[complex, np.ndarray]:
    """(P(k), grad_k P(k)) for the d-dimensional standardized base (product of iid coordinates, or elliptical t)."""
    k = np.asarray(k, dtype=np.float64).ravel()
    if elliptical:
        if base != "student_t":
            raise ValueError("only the Student-t is implemented as an elliptical (non-product) base")
        kappa = float(np.linalg.norm(k))
        return complex(_t_Psi(kappa, _nu(nu))), _t_dPsi_over_kappa(kappa, _nu(nu)) * k + 0j
    p = psi(base, k, nu)
    dp = dpsi(base, k, nu)
    d = k.shape[0]
    grad = np.empty(d, dtype=np.complex128)
    for j in range(d):  # product of the other factors, without dividing (psi may vanish)
        grad[j] = dp[j] * np.prod(np.delete(p, j))
    return complex(np.prod(p)), grad


# ---- O3: the cos + quadratic target ---------------------------------------------------------------------------
def cos_quadratic(
    base: str, alpha: float, b, phi: float, beta: float, z0, m, C, *, nu: float | None = None, elliptical: bool = False
) -> tuple[float, np.ndarray, np.ndarray]:
    """(l, grad_m l, grad_C l) of f = alpha cos(b^T z + phi) + beta/2 ||z - z0||^2 under LocScale(m, C, s),
    s standardized.  Exact up to floating point (about 1e-15 relative)."""
    b, z0, m = (np.asarray(x, dtype=np.float64).ravel() for x in (b, z0, m))
    C = np.asarray(C, dtype=np.float64)
    k = C.T @ b
    a = float(b @ m) + phi
    P, gP = charfun(base, k, nu=nu, elliptical=elliptical)
    e = complex(math.cos(a), math.sin(a))
    l = alpha * (e * P).real + 0.5 * beta * (float((m - z0) @ (m - z0)) + float(np.sum(C * C)))
    gm = -alpha * (e * P).imag * b + beta * (m - z0)
    gC = alpha * np.outer(b, (e * gP).real) + beta * C
    return float(l), gm, gC


def cos_quadratic_constants(alpha: float, b, beta: float) -> tuple[float, float]:
    """(M, c) of f: M = beta + |alpha| ||b||^2 exactly; c = beta - |alpha| ||b||^2 (negative: f non-convex)."""
    bb = float(np.dot(np.ravel(b), np.ravel(b)))
    return beta + abs(alpha) * bb, beta - abs(alpha) * bb


# ---- O1: quadratic target, any base (first two moments) ---------------------------------------------------------
def quadratic(A, zstar, mu, Sigma, m, C) -> tuple[float, np.ndarray, np.ndarray]:
    """(l, grad_m l, grad_C l) for f = 1/2 (z - z*)^T A (z - z*) and a base with mean mu, covariance Sigma (O1)."""
    A, Sigma, C = (np.asarray(x, dtype=np.float64) for x in (A, Sigma, C))
    zstar, mu, m = (np.asarray(x, dtype=np.float64).ravel() for x in (zstar, mu, m))
    r = C @ mu + m - zstar
    l = 0.5 * float(r @ A @ r) + 0.5 * float(np.trace(A @ C @ Sigma @ C.T))
    return l, A @ r, np.outer(A @ r, mu) + A @ C @ Sigma


def second_moment_matrix(mu, Sigma) -> np.ndarray:
    """S_2 = E[(1, u)(1, u)^T] = [[1, mu^T], [mu, Sigma + mu mu^T]]."""
    mu = np.asarray(mu, dtype=np.float64).ravel()
    Sigma = np.asarray(Sigma, dtype=np.float64)
    d = mu.shape[0]
    S2 = np.empty((d + 1, d + 1))
    S2[0, 0] = 1.0
    S2[0, 1:] = S2[1:, 0] = mu
    S2[1:, 1:] = Sigma + np.outer(mu, mu)
    return S2


def shifted_gaussian_constants(a: float, mu0) -> tuple[float, float]:
    """Exact smoothness / strong-convexity constants of l for f = a/2 ||z - z*||^2, base N(mu0, I) (Example 8):
    a (2 + |mu0|^2 +- |mu0| sqrt(|mu0|^2 + 4)) / 2."""
    t = float(np.linalg.norm(mu0))
    root = t * math.sqrt(t * t + 4.0)
    return a * (2.0 + t * t + root) / 2.0, a * (2.0 + t * t - root) / 2.0


# ---- standardized multivariate t: entropy --------------------------------------------------------------------
def student_t_entropy(nu: float, d: int, standardized: bool = True) -> float:
    """Entropy of the multivariate t_nu with shape I (plus (d/2) log((nu-2)/nu) for the standardized version)."""
    nu = _nu(nu)
    a, b = (nu + d) / 2.0, nu / 2.0
    h = (
        -special.gammaln(a)
        + special.gammaln(b)
        + d / 2.0 * math.log(nu * math.pi)
        + a * (special.digamma(a) - special.digamma(b))
    )
    return float(h + (d / 2.0 * math.log((nu - 2.0) / nu) if standardized else 0.0))
