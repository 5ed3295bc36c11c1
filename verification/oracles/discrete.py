"""Exact finite sums over discrete bases.  numpy only — never refvi.

A product of d two-point laws has 2^d atoms, so every expectation E_s g(u) is a finite weighted sum, exact up to
floating-point rounding (about 1e-15 relative per term).  Two-point law with parameter p (standardized):
P(u = sqrt((1-p)/p)) = p, P(u = -sqrt(p/(1-p))) = 1 - p; p = 1/2 is Rademacher.

The inner product of seed 002 Lemma 11 is <a, b>_s = sum_atoms w a(u)^T b(u); the functions
a_{m_i}(u) = e_i, a_{C_ij}(u) = e_i u_j are listed in the order (m_1..m_d, C_11, C_12, ..., C_dd) (row-major C).
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def two_point_atoms(d: int, p: float = 0.5, shift=None, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(atoms (2^d, d), probabilities (2^d,)) of the product of d two-point laws, optionally u -> scale u + shift.

    Enumerated with itertools (independently of any bit trick used elsewhere)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie in (0, 1), got {p}")
    hi, lo = math.sqrt((1.0 - p) / p), -math.sqrt(p / (1.0 - p))
    rows, probs = [], []
    for combo in itertools.product((0, 1), repeat=d):
        rows.append([hi if c else lo for c in combo])
        probs.append(math.prod(p if c else 1.0 - p for c in combo))
    U = scale * np.array(rows, dtype=np.float64)
    if shift is not None:
        U = U + np.asarray(shift, dtype=np.float64)
    return U, np.array(probs)


def rademacher_atoms(d: int) -> tuple[np.ndarray, np.ndarray]:
    return two_point_atoms(d, 0.5)


def replicate_rational(U: np.ndarray, w: np.ndarray, denom: int) -> np.ndarray:
    """Rows of U repeated w * denom times, so that a plain mean over rows is the exact w-weighted expectation.

    Requires every w * denom to be an integer (e.g. p = 1/4 and denom = 4^d)."""
    counts = np.rint(w * denom).astype(int)
    if not np.allclose(counts, w * denom, rtol=0, atol=1e-9) or counts.sum() != denom:
        raise ValueError("weights are not multiples of 1/denom")
    return np.repeat(U, counts, axis=0)


def moments(U: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, covariance) of the discrete law, by exact sums."""
    mu = w @ U
    D = U - mu
    return mu, (D * w[:, None]).T @ D


def basis_functions(U: np.ndarray) -> np.ndarray:
    """Values of a_i(u) = d t_w(u) / d w_i at each atom: array (n_atoms, d + d^2, d)."""
    n, d = U.shape
    A = np.zeros((n, d + d * d, d))
    for i in range(d):
        A[:, i, i] = 1.0
        for j in range(d):
            A[:, d + i * d + j, i] = U[:, j]
    return A


def inner(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    """<a, b>_s = E a(u)^T b(u) for vector fields given by their values at the atoms (n_atoms, k)."""
    return float(np.sum(w * np.sum(a * b, axis=1)))


def gram(U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Gram matrix G_ij = <a_i, a_j>_s of the d + d^2 functions a_i (Lemma 13), by explicit double sums."""
    A = basis_functions(U)
    k = A.shape[1]
    G = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            G[i, j] = inner(A[:, i, :], A[:, j, :], w)
    return G


# ---- exact energies and gradients for named targets (finite sums of the hand-derived grad f) ------------------
def cos_quadratic(U, w, alpha, b, phi, beta, z0, m, C) -> tuple[float, np.ndarray, np.ndarray]:
    """(l, grad_m l, grad_C l) for f = alpha cos(b^T z + phi) + beta/2 ||z - z0||^2 by exact sums over atoms:
    grad f(z) = -alpha sin(b^T z + phi) b + beta (z - z0), grad_m l = E grad f, grad_C l = E grad f u^T."""
    b, z0, m = (np.asarray(x, dtype=np.float64).ravel() for x in (b, z0, m))
    Z = U @ np.asarray(C, dtype=np.float64).T + m
    t = Z @ b + phi
    D = Z - z0
    l = float(w @ (alpha * np.cos(t) + 0.5 * beta * np.sum(D * D, axis=1)))
    G = (-alpha * np.sin(t))[:, None] * b[None, :] + beta * D
    return l, w @ G, (G * w[:, None]).T @ U


def softplus_ridge(U, w, A, c, m, C) -> tuple[float, np.ndarray, np.ndarray]:
    """f(z) = sum_r c_r softplus(a_r^T z) (rows a_r of A, c_r >= 0): convex, M <= max eig(A^T diag(c) A) / 4."""
    A = np.asarray(A, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    Z = U @ np.asarray(C, dtype=np.float64).T + np.asarray(m, dtype=np.float64)
    T = Z @ A.T
    vals = np.logaddexp(0.0, T) @ c
    sig = 0.5 * (1.0 + np.tanh(0.5 * T))
    G = (sig * c) @ A
    return float(w @ vals), w @ G, (G * w[:, None]).T @ U


def log_sum_exp(U, w, m, C) -> tuple[float, np.ndarray, np.ndarray]:
    """f(z) = log sum_i exp(z_i): convex, Hessian diag(p) - p p^T, so 1/2-smooth."""
    Z = U @ np.asarray(C, dtype=np.float64).T + np.asarray(m, dtype=np.float64)
    mx = Z.max(axis=1, keepdims=True)
    E = np.exp(Z - mx)
    s = E.sum(axis=1, keepdims=True)
    vals = (mx + np.log(s)).ravel()
    G = E / s
    return float(w @ vals), w @ G, (G * w[:, None]).T @ U


def quadratic(U, w, A, zstar, m, C) -> tuple[float, np.ndarray, np.ndarray]:
    """f(z) = 1/2 (z - z*)^T A (z - z*) by exact sums."""
    A = np.asarray(A, dtype=np.float64)
    Z = U @ np.asarray(C, dtype=np.float64).T + np.asarray(m, dtype=np.float64)
    D = Z - np.asarray(zstar, dtype=np.float64)
    G = D @ A
    return float(w @ (0.5 * np.sum(G * D, axis=1))), w @ G, (G * w[:, None]).T @ U


def mean_sq_distance(U, w, m1, C1, m2, C2) -> float:
    """E_s ||t_w(u) - t_v(u)||^2 by exact sums (Lemma 14's left side)."""
    D = U @ (np.asarray(C1) - np.asarray(C2)).T + (np.asarray(m1) - np.asarray(m2))
    return float(w @ np.sum(D * D, axis=1))


# ---- quadrature rules: discrete measures reproducing continuous standardized bases to ~1e-14 ------------------
def _gl_panels(T: float, panels: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes / weights on [0, T] with equal panels."""
    x, v = np.polynomial.legendre.leggauss(n)
    edges = np.linspace(0.0, T, panels + 1)
    h = np.diff(edges)
    nodes = (edges[:-1, None] + 0.5 * h[:, None] * (x[None, :] + 1.0)).ravel()
    weights = (0.5 * h[:, None] * v[None, :]).ravel()
    return nodes, weights


def quadrature_rule_1d(base: str) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of a 1-D rule for a standardized continuous base (symmetric weights made exactly equal):

    gaussian: 60-node Gauss-Hermite (probabilists'); uniform: 24-node Gauss-Legendre on [-sqrt3, sqrt3];
    laplace / exponential: composite Gauss-Legendre (36 unit panels x 12 nodes) on the exponential tail
    (truncation e^{-36} ~ 2e-16).  Exact for polynomials of the rule's degree; for cos-type integrands with frequencies
    |k| <= 6 the error is below 1e-13 (tests/verification/test_oracles_002.py checks this against the characteristic
    functions)."""
    if base == "gaussian":
        x, w = np.polynomial.hermite_e.hermegauss(60)
        w = w / math.sqrt(2.0 * math.pi)
    elif base == "uniform":
        x, w = np.polynomial.legendre.leggauss(24)
        x, w = math.sqrt(3.0) * x, 0.5 * w
    elif base == "laplace":  # density exp(-sqrt2 |u|) / sqrt2; u = +- t / sqrt2
        t, v = _gl_panels(36.0, 36, 12)
        half = v * np.exp(-t) / 2.0
        x = np.concatenate([-t[::-1], t]) / math.sqrt(2.0)
        w = np.concatenate([half[::-1], half])
    elif base == "exponential":  # density exp(-(u + 1)) on u > -1; u = t - 1
        t, v = _gl_panels(36.0, 36, 12)
        x, w = t - 1.0, v * np.exp(-t)
        return x, w
    else:
        raise ValueError(f"no quadrature rule for base {base!r}")
    w = 0.5 * (w + w[::-1])  # the rules are symmetric: make mirrored weights bit-identical
    return x, w


def tensor_rule(x: np.ndarray, w: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """d-fold tensor product of a 1-D rule.  Product weights multiply the sorted factors, so nodes whose weight
    factors form the same multiset get bit-identical weights (callers may batch them)."""
    idx = np.array(list(itertools.product(range(x.shape[0]), repeat=d)))
    U = x[idx]
    W = np.sort(w[idx], axis=1)
    return U, np.prod(W, axis=1)
