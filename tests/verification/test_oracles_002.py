"""The seed-002 oracles (charfun.py, discrete.py) against independent roads: adaptive quadrature in d = 1, Monte Carlo
with CLT bounds, finite differences, scipy.stats.  These tests use numpy / scipy only (no refvi algorithms)."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from refvi.verification.oracles import charfun as cf
from refvi.verification.oracles import discrete as ds

S3 = math.sqrt(3.0)
LAWS = {   # one standardized coordinate, described by scipy.stats
    "gaussian": stats.norm(),
    "uniform": stats.uniform(-S3, 2 * S3),
    "laplace": stats.laplace(scale=1 / math.sqrt(2)),
    "exponential": stats.expon(loc=-1.0),
    "student_t": stats.t(5.0, scale=math.sqrt(3.0 / 5.0)),
}
KW = {"student_t": {"nu": 5.0}}


def _expect(law, g):
    """E g(u) by adaptive quadrature over the support (accuracy ~1e-10 for these smooth integrands)."""
    lo, hi = law.support()
    f = lambda u: g(u) * law.pdf(u)   # noqa: E731
    brk = [x for x in (-1.0, 0.0) if lo < x < hi]
    pts = [lo] + brk + [hi]
    return sum(integrate.quad(f, a, b, limit=400, epsabs=1e-13, epsrel=1e-12)[0] for a, b in zip(pts, pts[1:]))


def _t_fourier(law, k):
    """psi and psi' (both real) of a symmetric law with heavy tails, k != 0, by QUADPACK's Fourier integrator (QAWF)."""
    sgn = math.copysign(1.0, k)
    re = 2 * integrate.quad(law.pdf, 0, np.inf, weight="cos", wvar=abs(k))[0]
    dim = -2 * sgn * integrate.quad(lambda u: u * law.pdf(u), 0, np.inf, weight="sin", wvar=abs(k))[0]
    return complex(re, 0.0), complex(dim, 0.0)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_psi_and_derivative_vs_quadrature(name):
    law = LAWS[name]
    for k in (-2.5, -0.4, 0.0, 1e-5, 0.7, 3.0):
        if name == "student_t" and abs(k) >= 0.1:   # heavy tails + oscillation: QAWF (low k: plain quad is fine)
            p, dp = _t_fourier(law, k)
            assert abs(cf.psi(name, k, nu=5.0) - p) < 1e-9
            assert abs(cf.dpsi(name, k, nu=5.0) - dp) < 1e-9
            continue
        re = _expect(law, lambda u: math.cos(k * u))
        im = _expect(law, lambda u: math.sin(k * u))
        p = cf.psi(name, k, **KW.get(name, {}))
        assert abs(p - complex(re, im)) < 1e-9
        dre = _expect(law, lambda u: -u * math.sin(k * u))
        dim = _expect(law, lambda u: u * math.cos(k * u))
        dp = cf.dpsi(name, k, **KW.get(name, {}))
        assert abs(dp - complex(dre, dim)) < 1e-9


def test_rademacher_psi():
    U, w = ds.rademacher_atoms(1)
    for k in (0.0, 0.3, 2.0):
        assert abs(cf.psi("rademacher", k) - w @ np.exp(1j * k * U[:, 0])) < 1e-15
        assert abs(cf.dpsi("rademacher", k) - w @ (1j * U[:, 0] * np.exp(1j * k * U[:, 0]))) < 1e-15


def _sample(name, rng, n, d, elliptical=False):
    if name == "gaussian":
        return rng.standard_normal((n, d))
    if name == "uniform":
        return rng.uniform(-S3, S3, (n, d))
    if name == "laplace":
        return rng.laplace(0.0, 1 / math.sqrt(2), (n, d))
    if name == "exponential":
        return rng.standard_exponential((n, d)) - 1.0
    if name == "rademacher":
        return rng.choice([-1.0, 1.0], (n, d))
    if name == "student_t":
        W = rng.chisquare(5.0, (n, 1) if elliptical else (n, d))
        return rng.standard_normal((n, d)) * np.sqrt(3.0 / W)
    raise ValueError(name)


CASES = [(b, {}) for b in ("gaussian", "uniform", "laplace", "exponential", "rademacher")] + \
        [("student_t", {"nu": 5.0}), ("student_t", {"nu": 5.0, "elliptical": True})]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{b}{kw.get('elliptical', '')}" for b, kw in CASES])
def test_cos_quadratic_vs_monte_carlo(name, kw):
    """l and its gradient by Monte Carlo over z = C u + m; CLT z-test, joint false-alarm <= 1e-6 (Bonferroni)."""
    rng = np.random.default_rng(5)
    d = 3
    alpha, b, phi, beta = -1.4, np.array([0.6, -0.8, 0.3]), 0.7, 0.5
    z0, m = rng.normal(size=d), rng.normal(size=d)
    C = rng.normal(size=(d, d))
    U = _sample(name, np.random.default_rng(11), 100000, d, kw.get("elliptical", False))
    Z = U @ C.T + m
    t = Z @ b + phi
    f = alpha * np.cos(t) + 0.5 * beta * np.sum((Z - z0) ** 2, axis=1)
    G = (-alpha * np.sin(t))[:, None] * b + beta * (Z - z0)
    draws = np.column_stack([f, G, (G[:, :, None] * U[:, None, :]).reshape(len(U), -1)])
    l, gm, gC = cf.cos_quadratic(name, alpha, b, phi, beta, z0, m, C, **kw)
    want = np.concatenate([[l], gm, gC.ravel()])
    se = draws.std(axis=0, ddof=1) / math.sqrt(len(U))
    z = stats.norm.ppf(1 - 1e-6 / (2 * want.size))
    assert np.all(np.abs(draws.mean(axis=0) - want) <= z * se)


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{b}{kw.get('elliptical', '')}" for b, kw in CASES])
def test_cos_quadratic_gradient_vs_finite_differences(name, kw):
    rng = np.random.default_rng(2)
    d = 3
    alpha, b, phi, beta = 2.1, rng.normal(size=d), -0.3, 0.4
    z0, m, C = rng.normal(size=d), rng.normal(size=d), rng.normal(size=(d, d))
    l, gm, gC = cf.cos_quadratic(name, alpha, b, phi, beta, z0, m, C, **kw)
    h = 1e-5
    f = lambda m_, C_: cf.cos_quadratic(name, alpha, b, phi, beta, z0, m_, C_, **kw)[0]   # noqa: E731
    fdm = [(f(m + h * e, C) - f(m - h * e, C)) / (2 * h) for e in np.eye(d)]
    fdC = [(f(m, C + h * E.reshape(d, d)) - f(m, C - h * E.reshape(d, d))) / (2 * h) for E in np.eye(d * d)]
    # central differences: truncation O(h^2 |f'''|) ~ 1e-9, rounding ~ eps |f| / h ~ 1e-10
    np.testing.assert_allclose(fdm, gm, atol=1e-8)
    np.testing.assert_allclose(np.reshape(fdC, (d, d)), gC, atol=1e-8)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_cos_quadratic_d1_vs_quadrature(name):
    alpha, b, phi, beta, z0, m, C = 0.9, np.array([1.3]), 0.2, 0.3, np.array([0.4]), np.array([-0.2]), np.array([[0.8]])
    law = LAWS[name]
    l_q = _expect(law, lambda u: alpha * math.cos(b[0] * (C[0, 0] * u + m[0]) + phi)
                  + 0.5 * beta * (C[0, 0] * u + m[0] - z0[0]) ** 2)
    assert abs(cf.cos_quadratic(name, alpha, b, phi, beta, z0, m, C, **KW.get(name, {}))[0] - l_q) < 1e-9


def test_elliptical_t_d1_equals_product_t():
    for k in (0.0, 0.5, 3.0):
        P1, g1 = cf.charfun("student_t", [k], nu=4.0, elliptical=True)
        P2, g2 = cf.charfun("student_t", [k], nu=4.0)
        assert abs(P1 - P2) < 1e-15 and abs(g1[0] - g2[0]) < 1e-15
    # nu = 3: K_{3/2} is elementary, Psi(kappa) = (1 + kappa) exp(-kappa)  (r = kappa when nu - 2 = 1)
    for kap in (0.1, 1.0, 4.0):
        assert abs(cf.charfun("student_t", [kap], nu=3.0, elliptical=True)[0] - (1 + kap) * math.exp(-kap)) < 1e-14


@pytest.mark.parametrize("nu", [2.5, 4.0, 9.0])
def test_student_t_entropy_vs_scipy(nu):
    for d in (1, 3):
        law = stats.multivariate_t(loc=np.zeros(d), shape=np.eye(d), df=nu)
        assert abs(cf.student_t_entropy(nu, d, standardized=False) - law.entropy()) < 1e-10
        lawS = stats.multivariate_t(loc=np.zeros(d), shape=(nu - 2) / nu * np.eye(d), df=nu)
        assert abs(cf.student_t_entropy(nu, d) - lawS.entropy()) < 1e-10


def test_quadratic_oracle_vs_exact_sums():
    rng = np.random.default_rng(3)
    for d in (1, 2, 4):
        U, w = ds.two_point_atoms(d, 0.3, shift=rng.normal(size=d), scale=1.7)
        mu, Sig = ds.moments(U, w)
        B = rng.normal(size=(d, d))
        A = B @ B.T + 0.1 * np.eye(d)
        zs, m, C = rng.normal(size=d), rng.normal(size=d), rng.normal(size=(d, d))
        got = cf.quadratic(A, zs, mu, Sig, m, C)
        ref = ds.quadratic(U, w, A, zs, m, C)
        assert abs(got[0] - ref[0]) < 1e-12 * max(1, abs(ref[0]))
        np.testing.assert_allclose(got[1], ref[1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[2], ref[2], rtol=1e-12, atol=1e-12)


def test_shifted_gaussian_constants():
    for mu0 in ([1.0, 0.0], [0.3, -2.0, 0.5], [0.0]):
        S2 = cf.second_moment_matrix(mu0, np.eye(len(mu0)))
        lam = np.linalg.eigvalsh(S2)
        L, c = cf.shifted_gaussian_constants(2.0, mu0)
        assert abs(L - 2 * lam[-1]) < 1e-12 and abs(c - 2 * lam[0]) < 1e-12
    assert abs(cf.shifted_gaussian_constants(1.0, [1.0])[0] - 2.618033988749895) < 1e-12


def test_cos_quadratic_constants_exact():
    """M is attained: the Hessian beta I - alpha cos(t) b b^T has eigenvalue beta + |alpha| ||b||^2 where cos t = -sign
    alpha, and its spectrum never leaves [beta - |alpha| ||b||^2, beta + |alpha| ||b||^2]."""
    alpha, b, beta = -1.5, np.array([0.4, 1.1]), 0.3
    M, c = cf.cos_quadratic_constants(alpha, b, beta)
    spec = [np.linalg.eigvalsh(beta * np.eye(2) - alpha * math.cos(t) * np.outer(b, b)) for t in
            np.linspace(0, 2 * math.pi, 101)]
    assert abs(max(np.abs(s).max() for s in spec) - M) < 1e-12
    assert abs(min(s.min() for s in spec) - c) < 1e-12


def test_discrete_atoms_and_gram():
    for p in (0.5, 0.25, 0.1):
        for d in (1, 2, 3):
            U, w = ds.two_point_atoms(d, p)
            assert U.shape == (2 ** d, d) and abs(w.sum() - 1) < 1e-15
            mu, Sig = ds.moments(U, w)
            np.testing.assert_allclose(mu, 0, atol=1e-15)
            np.testing.assert_allclose(Sig, np.eye(d), atol=1e-14)
            np.testing.assert_allclose(ds.gram(U, w), np.eye(d + d * d), atol=1e-14)
    U, w = ds.two_point_atoms(2, 0.25)
    R = ds.replicate_rational(U, w, 16)
    assert R.shape == (16, 2)
    np.testing.assert_allclose(R.mean(axis=0), w @ U, atol=1e-15)
    with pytest.raises(ValueError):
        ds.replicate_rational(U, w, 10)
    with pytest.raises(ValueError):
        ds.two_point_atoms(2, 1.0)


@pytest.mark.parametrize("name", ["gaussian", "uniform", "laplace", "exponential"])
def test_quadrature_rules(name):
    """The documented accuracy: psi and psi' reproduced to < 1e-13 for |k| <= 6; tensor weights group exactly."""
    x, w = ds.quadrature_rule_1d(name)
    ks = np.linspace(-6, 6, 49)
    P = np.exp(1j * np.outer(ks, x)) @ w
    dP = (1j * x * np.exp(1j * np.outer(ks, x))) @ w
    assert np.abs(P - cf.psi(name, ks)).max() < 1e-13
    assert np.abs(dP - cf.dpsi(name, ks)).max() < 1e-13
    U, W = ds.tensor_rule(x[:5], w[:5], 2)
    assert U.shape == (25, 2)
    i, j = 1, 3
    assert W[i * 5 + j] == W[j * 5 + i]          # bit-identical for swapped factors
