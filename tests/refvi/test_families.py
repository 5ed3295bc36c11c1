"""Standardized bases and location-scale families (seed 002 §3.1): moments, densities,
entropies and characteristic functions against scipy.stats / quadrature / Monte Carlo, bad input, determinism."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from refvi.families import (
    AffineBase,
    CenteredExponentialBase,
    GaussianBase,
    LaplaceBase,
    LocationScale,
    RademacherBase,
    StudentTBase,
    TwoPointBase,
    UniformBase,
    gaussian,
    get_base,
    shifted_gaussian,
    standardize,
    student_t_shape,
    to_base_params,
)

S3 = math.sqrt(3.0)
CONTINUOUS = [GaussianBase(), UniformBase(), LaplaceBase(), CenteredExponentialBase(), StudentTBase(5.0),
              StudentTBase(3.5, product=True)]
ALL = CONTINUOUS + [RademacherBase(), TwoPointBase(0.2)]
IDS = [repr(b) for b in ALL]

# scipy.stats laws of one standardized coordinate (independent descriptions)
SCIPY_1D = {
    "gaussian": stats.norm(),
    "uniform": stats.uniform(-S3, 2 * S3),
    "laplace": stats.laplace(scale=1 / math.sqrt(2)),
    "exponential": stats.expon(loc=-1.0),
}
Z_ALPHA = stats.norm.ppf(1 - 1e-6 / 2)   # per-coordinate two-sided z for false-alarm 1e-6


@pytest.mark.parametrize("base", ALL, ids=IDS)
def test_sample_moments_standardized(base):
    """Sample mean 0 and covariance I: CLT z-test with per-check false-alarm 1e-6 (Bonferroni over entries)."""
    d, n = 3, 40000
    U = base.sample(123, n, d)
    assert U.shape == (n, d) and U.dtype == np.float64
    se_mean = 1.0 / math.sqrt(n)
    assert np.all(np.abs(U.mean(axis=0)) <= Z_ALPHA * se_mean * 1.05)
    # second moments: E u_i u_j = delta_ij; the standard error uses the sample 4th moments
    P = U[:, :, None] * U[:, None, :]
    se = P.reshape(n, -1).std(axis=0, ddof=1) / math.sqrt(n)
    z = stats.norm.ppf(1 - 1e-6 / (2 * d * d))
    assert np.all(np.abs(P.mean(axis=0).ravel() - np.eye(d).ravel()) <= z * se + 1e-12)
    np.testing.assert_allclose(base.mean(d), 0.0)
    np.testing.assert_allclose(base.cov(d), np.eye(d))


@pytest.mark.parametrize("base", ALL, ids=IDS)
def test_charfun_vs_monte_carlo(base):
    """E exp(i k^T u) by Monte Carlo; |error| <= z * sqrt(1/n) (|exp(i.)| = 1), false alarm 1e-6 per component."""
    d, n = 2, 60000
    U = base.sample(7, n, d)
    K = np.array([[0.3, -0.7], [1.2, 0.4], [0.0, 0.0]])
    mc = np.exp(1j * U @ K.T).mean(axis=0)
    cf = base.charfun(K)
    z = stats.norm.ppf(1 - 1e-6 / 12)
    assert np.all(np.abs(mc.real - cf.real) <= z / math.sqrt(n))
    assert np.all(np.abs(mc.imag - cf.imag) <= z / math.sqrt(n))
    assert abs(cf[2] - 1.0) < 1e-15


@pytest.mark.parametrize("name", sorted(SCIPY_1D))
def test_product_bases_vs_scipy(name):
    base = get_base(name)
    law = SCIPY_1D[name]
    x = np.linspace(-3.0, 3.0, 41)
    inside = law.pdf(x) > 0
    np.testing.assert_allclose(base.log_density(x[inside, None]), law.logpdf(x[inside]), rtol=1e-13, atol=1e-13)
    if np.any(~inside):
        assert np.all(base.log_density(x[~inside, None]) == -np.inf)
    np.testing.assert_allclose(base.entropy(1), float(law.entropy()), rtol=1e-13)
    np.testing.assert_allclose(base.entropy(3), 3 * float(law.entropy()), rtol=1e-13)
    mean, var = law.stats(moments="mv")
    assert abs(float(mean)) < 1e-15 and abs(float(var) - 1.0) < 1e-14


@pytest.mark.parametrize("nu", [2.3, 3.0, 5.0, 30.0])
def test_student_t_vs_scipy(nu):
    s = math.sqrt((nu - 2.0) / nu)
    base = StudentTBase(nu)
    for d in (1, 2, 3):
        law = stats.multivariate_t(loc=np.zeros(d), shape=s * s * np.eye(d), df=nu)
        U = np.random.default_rng(0).standard_normal((5, d))
        np.testing.assert_allclose(base.log_density(U), law.logpdf(U), rtol=1e-12)
        np.testing.assert_allclose(base.entropy(d), law.entropy(), rtol=1e-11)
    prod = StudentTBase(nu, product=True)
    law1 = stats.t(nu, scale=s)
    np.testing.assert_allclose(prod.entropy(2), 2 * law1.entropy(), rtol=1e-12)
    np.testing.assert_allclose(prod.log_density(np.array([[0.3, -1.2]])),
                               law1.logpdf(0.3) + law1.logpdf(-1.2), rtol=1e-12)


@pytest.mark.parametrize("base", CONTINUOUS, ids=[repr(b) for b in CONTINUOUS])
def test_density_integrates_to_one(base):
    """d = 1 (and d = 2 for the elliptical t) by adaptive quadrature, accuracy ~1e-9."""
    pts = {"laplace": [0.0], "exponential": [-1.0]}.get(base.name)
    f = lambda x: math.exp(base.log_density(np.array([x])))   # noqa: E731
    lo = -1.0 if base.name == "exponential" else -np.inf
    val = integrate.quad(f, lo, 0.0 if pts else np.inf, limit=200)[0]
    if pts:
        val += integrate.quad(f, 0.0, np.inf, limit=200)[0]
    assert abs(val - 1.0) < 1e-8
    if isinstance(base, StudentTBase) and not base.product:
        g = lambda r: 2 * math.pi * r * math.exp(base.log_density(np.array([r, 0.0])))   # noqa: E731
        assert abs(integrate.quad(g, 0, np.inf, limit=200)[0] - 1.0) < 1e-8


def test_uniform_density_integrates_exactly():
    base = UniformBase()
    assert math.exp(base.log_density(np.array([0.0]))) * 2 * S3 == pytest.approx(1.0, rel=1e-15)


def test_discrete_bases():
    for base in (RademacherBase(), TwoPointBase(0.1)):
        with pytest.raises(ValueError, match="discrete"):
            base.entropy(2)
        with pytest.raises(ValueError, match="discrete"):
            base.log_density(np.zeros((1, 2)))
        U, w = base.atoms(3)
        assert U.shape == (8, 3) and abs(w.sum() - 1) < 1e-15
        np.testing.assert_allclose(w @ U, 0.0, atol=1e-15)
        np.testing.assert_allclose((U * w[:, None]).T @ U, np.eye(3), atol=1e-14)
        K = np.array([0.4, -1.1, 2.0])
        np.testing.assert_allclose(base.charfun(K), w @ np.exp(1j * U @ K), rtol=1e-14)


def test_affine_and_standardize():
    sg = shifted_gaussian([1.0, -2.0])
    assert not sg.standardized
    np.testing.assert_allclose(sg.mean(2), [1.0, -2.0])
    s = standardize(sg, 2)
    assert s.standardized
    ts = student_t_shape(4.0, 3)
    np.testing.assert_allclose(ts.cov(3), 2.0 * np.eye(3))
    assert standardize(ts, 3).standardized
    # a non-standard Exp(1) base with a correlating matrix
    A = np.array([[2.0, 0.0], [1.0, 0.5]])
    raw = AffineBase(CenteredExponentialBase(), np.array([1.0, 1.0]), A)
    s = standardize(raw, 2)
    assert s.standardized
    U = s.sample(3, 50000, 2)
    assert np.all(np.abs(U.mean(0)) < Z_ALPHA / math.sqrt(50000) * 1.05)
    # entropy of an affine image: H0 + log|det A|
    np.testing.assert_allclose(raw.entropy(2), 2.0 + math.log(1.0), rtol=1e-14)
    # the reparameterization map gives the same law: compare means and covariances
    fam_s = LocationScale(s)
    fam_0 = LocationScale(raw)
    m, C = np.array([0.3, -0.1]), np.array([[1.0, 0.2], [0.4, 0.7]])
    m0, C0 = to_base_params(m, C, raw)
    np.testing.assert_allclose(fam_0.mean(m0, C0), fam_s.mean(m, C), atol=1e-13)
    np.testing.assert_allclose(fam_0.cov(m0, C0), fam_s.cov(m, C), atol=1e-13)
    z = np.array([[0.5, 0.2], [1.0, 2.0]])
    np.testing.assert_allclose(fam_0.log_density(z, m0, C0), fam_s.log_density(z, m, C), rtol=1e-12)


def test_location_scale_gaussian_matches_gaussian_module():
    fam = LocationScale(GaussianBase(), "tril")
    m, C = np.array([0.1, -0.3]), np.array([[1.2, 0.0], [0.4, 0.6]])
    z = np.random.default_rng(1).standard_normal((4, 2))
    np.testing.assert_allclose(fam.log_density(z, m, C), gaussian.log_density(z, m, C, "tril"), rtol=1e-13)
    np.testing.assert_allclose(fam.entropy(C), gaussian.entropy(C, "tril"), rtol=1e-14)
    np.testing.assert_allclose(fam.grad_neg_entropy(C), gaussian.grad_neg_entropy(C, "tril"))
    np.testing.assert_allclose(fam.sample(m, C, 5, 3), gaussian.sample(m, C, 5, 3, "tril"))


@pytest.mark.parametrize("base", CONTINUOUS, ids=[repr(b) for b in CONTINUOUS])
def test_location_scale_density_and_entropy(base):
    fam = LocationScale(base, "full")
    m, C = np.array([0.5, -1.0]), np.array([[1.5, -0.3], [0.7, 0.4]])
    z = fam.sample(m, C, 11, 4000)
    # entropy = -E log q: Monte Carlo with a CLT bound, false alarm 1e-6
    lq = fam.log_density(z, m, C)
    se = lq.std(ddof=1) / math.sqrt(lq.size)
    assert abs(-lq.mean() - fam.entropy(C)) <= Z_ALPHA * se
    np.testing.assert_allclose(fam.entropy(C), base.entropy(2) + math.log(abs(np.linalg.det(C))), rtol=1e-13)
    np.testing.assert_allclose(fam.neg_entropy(C), -fam.entropy(C))
    np.testing.assert_allclose(fam.grad_neg_entropy(C), -np.linalg.inv(C).T, rtol=1e-13)
    np.testing.assert_allclose(fam.mean(m, C), m)
    np.testing.assert_allclose(fam.cov(m, C), C @ C.T, rtol=1e-13)


def test_transform_adjoint_proj():
    fam = LocationScale(LaplaceBase(), "sym")
    X = np.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(fam.proj_V(X), 0.5 * (X + X.T))
    m, C, U = np.ones(2), np.eye(2), np.array([[1.0, 2.0]])
    np.testing.assert_allclose(fam.transform(m, C, U), [[2.0, 3.0]])
    gz, gC = fam.adjoint(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    np.testing.assert_allclose(gC, [[0.0, 0.5], [0.5, 0.0]])


def test_bad_input():
    with pytest.raises(ValueError, match="nu > 2"):
        StudentTBase(2.0)
    with pytest.raises(ValueError, match="nu > 2"):
        get_base("student_t", nu=1.5)
    with pytest.raises(ValueError):
        TwoPointBase(1.0)
    with pytest.raises(ValueError, match="unknown base"):
        get_base("cauchy")
    fam = LocationScale(UniformBase(), "full")
    with pytest.raises(ValueError, match="invertible"):
        fam.log_density(np.zeros(2), np.zeros(2), np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(ValueError, match="invertible"):
        fam.entropy(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="shape"):
        fam.sample(np.zeros(3), np.eye(2), 0, 5)
    with pytest.raises(ValueError, match="shape"):
        fam.log_density(np.zeros((4, 3)), np.zeros(2), np.eye(2))
    with pytest.raises(ValueError, match="non-finite"):
        fam.sample(np.array([np.nan, 0.0]), np.eye(2), 0, 5)
    with pytest.raises(ValueError, match="lives in dimension"):
        LocationScale(shifted_gaussian([1.0, 2.0])).sample(np.zeros(3), np.eye(3), 0, 2)
    with pytest.raises(ValueError, match="invertible"):
        AffineBase(GaussianBase(), np.zeros(2), np.zeros((2, 2)))
    with pytest.raises(TypeError):
        LocationScale("gaussian")
    with pytest.raises(TypeError):
        GaussianBase().sample(None, 3, 2)
    with pytest.raises(ValueError, match="positive integer"):
        GaussianBase().sample(0, 3, 0)
    with pytest.raises(ValueError, match="structure"):
        LocationScale(GaussianBase(), "banded")


@pytest.mark.parametrize("base", ALL, ids=IDS)
def test_determinism(base):
    a = base.sample(42, 100, 3)
    b = base.sample(np.random.default_rng(42), 100, 3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, base.sample(43, 100, 3))


@pytest.mark.parametrize("nu", [2.2, 4.0, 30.0])
@pytest.mark.parametrize("product", [False, True])
def test_student_t_charfun_is_one_at_tiny_frequencies(nu, product):
    # K_{nu/2}(r) overflows for r < 1e-308^(2/nu); the characteristic function is 1 there, not inf
    K = np.array([[1e-300, 0.0], [5e-324, 1e-200], [1e-9, 0.0]])
    phi = StudentTBase(nu, product=product).charfun(K)
    assert np.all(np.isfinite(phi)) and np.allclose(phi, 1.0, rtol=0, atol=1e-13)   # log-space rounding ~ nu eps


@pytest.mark.parametrize("d", [True, 2.5, 0, -1])
def test_a_dimension_that_is_not_a_positive_integer_is_refused(d):
    from refvi.families.bases import student_t_shape

    with pytest.raises(ValueError, match="dimension d must be a positive integer"):
        student_t_shape(5.0, d)


def test_the_student_t_psi_is_one_at_zero():
    """Psi(0) = 1 exactly (r^v K_v(r) -> Gamma(v) 2^(v-1)), quietly: the Bessel branch is for r > 0, where K_v is
    finite (at 0 it divides by zero)."""
    import warnings

    from refvi.families.bases import StudentTBase

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = StudentTBase(5.0)._Psi(np.array([0.0, 0.5]))
    assert out[0] == 1.0 and 0.0 < out[1] < 1.0


def test_a_numerically_singular_scale_is_refused_by_name():
    """A scale whose smallest singular value is below d eps times its largest (positive on paper, singular in
    float64) is refused with both singular values; one just above that is used."""
    for structure in ("tril", "diag", "sym"):  # their domain checks see a positive diagonal / eigenvalue
        q = LocationScale(GaussianBase(), structure)
        with pytest.raises(ValueError, match=r"numerically singular \(singular values 1 \.\. 1e-17\)"):
            q.entropy(np.diag([1.0, 1e-17]))
        assert np.isfinite(q.entropy(np.diag([1.0, 1e-14])))
