"""refvi.ngvi algorithms: exponential-family maps, NGD forms, stochastic NGD, estimators, SGD baselines, bad input."""

import itertools
import math

import numpy as np
import pytest

from refvi import ngvi
from refvi.ngvi import estimators, expfam, sgd_baseline, variance
from refvi.verification.oracles import ngvi_expfam as OX


def _spd(rng, d):
    A = rng.standard_normal((d, d))
    return A @ A.T + 0.5 * np.eye(d)


def _problem(seed, n=20, d=3, s2=0.5):
    rng = np.random.default_rng(seed)
    return ngvi.blr_problem(rng.standard_normal((n, d)), rng.standard_normal(n), s2, _spd(rng, d),
                            rng.standard_normal(d))


# ---- exponential family -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_maps_round_trip_and_kl_against_oracle(seed):
    rng = np.random.default_rng(seed)
    d = 1 + seed % 4
    mu, S = rng.standard_normal(d), _spd(rng, d)
    lam, Lam = expfam.natural_from_moment(mu, S)
    xi, Xi = expfam.expectation_from_natural(lam, Lam)
    np.testing.assert_allclose(xi, mu, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Xi, S + np.outer(mu, mu), rtol=1e-10, atol=1e-12)
    l2, L2 = expfam.natural_from_expectation(xi, Xi)
    np.testing.assert_allclose(l2, lam, rtol=1e-9, atol=1e-12)
    mu2, S2 = rng.standard_normal(d), _spd(rng, d)
    # scipy cross-entropy - entropy route, 1e-10 relative
    assert expfam.kl(mu, S, mu2, S2) == pytest.approx(OX.kl_gauss(mu, S, mu2, S2), rel=1e-10, abs=1e-12)


def test_fisher_singular_directions_absent_in_minimal_coordinates():
    rng = np.random.default_rng(0)
    F = expfam.fisher_minimal(*expfam.natural_from_moment(rng.standard_normal(3), _spd(rng, 3)))
    assert F.shape == (9, 9)
    assert np.linalg.eigvalsh(F)[0] > 0


@pytest.mark.parametrize("bad, match", [
    ((np.zeros(2), np.eye(2)), "negative definite"),
    ((np.zeros(2), -np.eye(3)), "lam has length 2 but Lam is 3 x 3"),
    ((np.zeros(2), np.array([[-1.0, 0.5], [0.0, -1.0]])), "symmetric"),
    ((np.array([np.nan, 0.0]), -np.eye(2)), "non-finite"),
])
def test_bad_natural_parameters(bad, match):
    with pytest.raises(ValueError, match=match):
        expfam.moment_from_natural(*bad)


def test_bad_moments_and_expectations():
    with pytest.raises(ValueError, match="positive definite"):
        expfam.natural_from_moment(np.zeros(2), np.diag([1.0, -1.0]))
    with pytest.raises(ValueError, match="Xi - xi xi"):
        expfam.natural_from_expectation(np.ones(2), np.eye(2))     # Xi - xi xi^T singular/indefinite
    with pytest.raises(TypeError):
        expfam.kl("a", np.eye(1), np.zeros(1), np.eye(1))
    with pytest.raises(ValueError, match="dimension"):
        expfam.kl(np.zeros(1), np.eye(1), np.zeros(2), np.eye(2))


# ---- NGD ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_one_exact_unit_step_lands_on_posterior(seed):
    p = _problem(seed)
    rng = np.random.default_rng(50 + seed)
    init = expfam.natural_from_moment(5 * rng.standard_normal(3), _spd(rng, 3) * 10 ** rng.uniform(-2, 2))
    eta1 = ngvi.ngd_exact(p, 1, 1.0, init=init)[-1]
    mu, S = expfam.moment_from_natural(*eta1)
    mu_o, S_o = OX.blr_posterior(p.X, p.y, p.sigma2, p.prior_cov, p.prior_mean)
    np.testing.assert_allclose(mu, mu_o, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S, S_o, rtol=1e-10, atol=1e-10)


def test_full_data_batches_give_zero_variance_and_posterior():
    p = _problem(1, n=4)
    r = ngvi.stochastic_ngd_blr(p, 3, indices=np.tile(np.arange(4), (3, 1)))
    mu_o, S_o = OX.blr_posterior(p.X, p.y, p.sigma2, p.prior_cov, p.prior_mean)
    np.testing.assert_allclose(r.moments()[1], S_o, rtol=1e-10)
    np.testing.assert_allclose(r.average_moments()[0], mu_o, rtol=1e-10, atol=1e-12)


def test_gamma_outside_unit_interval_is_refused():
    p = _problem(0)
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        ngvi.stochastic_ngd_blr(p, 3, 2, rng=0, steps=[1.0, 1.5, 0.5])
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        ngvi.natural_update((np.zeros(3), -np.eye(3)), (np.zeros(3), -np.eye(3)), -0.1)
    with pytest.raises(TypeError):
        ngvi.check_step("0.5")
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        ngvi.ngd_glm(ngvi.logistic_model(np.eye(2), [1, -1]), 2, 1.2)


def test_update_leaving_domain_is_refused_and_state_unchanged():
    lam, Lam = np.zeros(2), -10.0 * np.eye(2)
    Lam_before = Lam.copy()
    with pytest.raises(ValueError, match="leave the natural-parameter domain"):
        ngvi.natural_update((lam, Lam), (np.zeros(2), -0.5 * np.eye(2)), 2.0, require_unit_step=False)
    with pytest.raises(ValueError, match="leave the natural-parameter domain"):
        ngvi.natural_update((lam, -0.5 * np.eye(2)), (np.zeros(2), np.diag([-1.0, 0.3])), 1.0)
    assert np.array_equal(Lam, Lam_before)
    with pytest.raises(ValueError, match="domain"):
        ngvi.ngd_step((lam, -0.5 * np.eye(2)), (np.zeros(2), -np.eye(2)), 1.0)


def test_batch_size_and_shape_errors():
    p = _problem(0, n=5)
    with pytest.raises(ValueError, match=">= 1"):
        ngvi.stochastic_ngd_blr(p, 3, 0, rng=0)
    with pytest.raises(ValueError, match="exceeds n"):
        ngvi.stochastic_ngd_blr(p, 3, 6, rng=0, replace=False)
    with pytest.raises(ValueError, match="pre-drawn indices"):
        ngvi.stochastic_ngd_blr(p, 3)
    with pytest.raises(ValueError, match="dimension"):
        ngvi.stochastic_ngd_blr(p, 3, 2, rng=0, init=(np.zeros(2), -np.eye(2)))
    with pytest.raises(ValueError, match="length 20"):
        ngvi.blr_problem(np.ones((20, 2)), np.ones(19))
    with pytest.raises(ValueError, match="mini-batch"):
        p.noisy_posterior_natural(np.array([], dtype=int))
    with pytest.raises(ValueError, match="sigma2"):
        ngvi.blr_problem(np.ones((3, 2)), np.ones(3), sigma2=0.0)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        ngvi.logistic_model(np.ones((3, 2)), [0, 1, 1])
    with pytest.raises(ValueError, match="non-negative integers"):
        ngvi.poisson_model(np.ones((2, 2)), [1.5, 2])


def test_three_forms_agree_and_md_average():
    p = _problem(2, d=2)
    rng = np.random.default_rng(3)
    eta = expfam.natural_from_moment(rng.standard_normal(2), _spd(rng, 2))
    w = expfam.expectation_from_natural(*eta)
    g = p.grad_neg_elbo(*w)
    a = ngvi.ngd_step(eta, g, 0.3)
    b = expfam.natural_from_expectation(*ngvi.md_step(w, g, 0.3))
    np.testing.assert_allclose(a[1], b[1], rtol=1e-9)
    th = expfam.to_minimal(*eta)
    gth = OX.blr_grad_theta(th, p.X, p.y, p.sigma2, p.prior_cov, p.prior_mean)
    c = ngvi.ngd_step_fim(eta, gth, 0.3)
    np.testing.assert_allclose(c[0], a[0], rtol=1e-8, atol=1e-10)
    xb, Xb = ngvi.omega_average([w, w])
    np.testing.assert_allclose(Xb, w[1])


def test_theorem1_average_recursion_equals_weighted_sum():
    p = _problem(4, n=8, d=2)
    idx = np.random.default_rng(0).integers(0, 8, (5, 2))
    r = ngvi.stochastic_ngd_blr(p, 5, indices=idx)
    omegas, eta = [], (np.zeros(2), -0.5 * np.eye(2))
    for t in range(5):
        eta = ngvi.natural_update(eta, p.noisy_posterior_natural(idx[t]), 2 / (t + 2))
        omegas.append(expfam.expectation_from_natural(*eta))
    xb, Xb = ngvi.omega_average(omegas)
    np.testing.assert_allclose(r.Xi_bar, Xb, rtol=1e-12)


def test_omega_average_is_a_proper_weighted_average_for_any_steps():
    """The omega average starts at omega(q_0): for steps gamma_0 != 1 its weights (on omega_0, ..., omega_T) still sum
    to 1 (one step gamma = 0.5 gives (omega_0 + omega_1)/2, not omega_1 / 2), and with Theorem 1's steps it is
    bit-identical to the old zero-started recursion."""
    p = _problem(5, n=10, d=2)
    idx = np.random.default_rng(1).integers(0, 10, (4, 3))
    init = (np.array([0.3, -0.2]), -0.5 * np.array([[2.0, 0.3], [0.3, 1.5]]))
    steps = np.array([0.5, 0.3, 0.9, 0.2])
    r = ngvi.stochastic_ngd_blr(p, 4, indices=idx, steps=steps, init=init)
    # independent: the iterates and the explicit weights w_0 = prod(1 - g), w_{t+1} = g_t prod_{s>t}(1 - g_s)
    eta, omegas = init, [expfam.expectation_from_natural(*init)]
    for t in range(4):
        eta = ngvi.natural_update(eta, p.noisy_posterior_natural(idx[t]), steps[t])
        omegas.append(expfam.expectation_from_natural(*eta))
    w = np.array([np.prod(1 - steps)] + [steps[t] * np.prod(1 - steps[t + 1:]) for t in range(4)])
    assert w.sum() == pytest.approx(1.0, rel=1e-15)
    xb = sum(wk * o[0] for wk, o in zip(w, omegas))
    Xb = sum(wk * o[1] for wk, o in zip(w, omegas))
    # same arithmetic in a different order: a few ulp per step, 4 steps, entries O(1): 1e-13
    np.testing.assert_allclose(r.xi_bar, xb, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(r.Xi_bar, Xb, rtol=1e-13, atol=1e-14)
    # one step gamma_0 = 0.5 from N(0, I): the average's mean is half the iterate's, and its second moment is
    # (I + Xi_1)/2, so the average is a valid distribution (Xi - xi xi^T positive definite)
    r1 = ngvi.stochastic_ngd_blr(p, 1, indices=idx[:1], steps=[0.5])
    x1, X1 = expfam.expectation_from_natural(r1.lam, r1.Lam)
    np.testing.assert_allclose(r1.xi_bar, 0.5 * x1, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(r1.Xi_bar, 0.5 * (np.eye(2) + X1), rtol=1e-14, atol=1e-15)
    assert np.all(np.linalg.eigvalsh(r1.Xi_bar - np.outer(r1.xi_bar, r1.xi_bar)) > 0)
    # gamma_0 = 1 (Theorem 1's steps): omega_0 gets weight exactly 0, so the average is the old one bit for bit
    r2 = ngvi.stochastic_ngd_blr(p, 4, indices=idx, init=init)
    omegas2, eta = [], init
    for t in range(4):
        eta = ngvi.natural_update(eta, p.noisy_posterior_natural(idx[t]), 2 / (t + 2))
        omegas2.append(expfam.expectation_from_natural(*eta))
    xb2, Xb2 = ngvi.omega_average(omegas2)
    np.testing.assert_allclose(r2.Xi_bar, Xb2, rtol=1e-12)
    from refvi.kernels import ngvi as kn
    lam0, Lam0 = init
    c = p.n / (3 * p.sigma2)
    *_, xz, Xz = kn.ngd_blr_loop(lam0, Lam0, np.zeros(2), np.zeros((2, 2)), p.X, p.y, idx, 2 / (np.arange(4) + 2.0),
                                c, *p.prior_natural, True)
    assert np.array_equal(r2.xi_bar, xz) and np.array_equal(r2.Xi_bar, Xz)


# ---- estimators, variance, GLMs, baselines ------------------------------------------------------------------------

def test_price_generic_equals_kernel_and_autodiff_unbiased_in_mean():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 3))
    y = np.where(rng.random(10) < 0.5, -1.0, 1.0)
    model = ngvi.logistic_model(X, y)
    w = expfam.expectation_from_moment(rng.standard_normal(3), _spd(rng, 3) * 0.3)
    U = rng.standard_normal((4000, 3))
    a = estimators.price(estimators.glm_grad_hess(model), *w, U[:5])
    b = estimators.price_logistic(model, *w, U[:5])
    np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-14)
    ex = model.grad_expected_loglik(*w)                      # Gauss-Hermite exact expectation
    ad = estimators.autodiff(lambda Z: model.loglik_grad(Z), *w, U)
    pr = estimators.price_logistic(model, *w, U)
    # 4000 draws: Monte Carlo standard error ~ 0.02 on these O(1) entries; 0.1 is > 5 se
    np.testing.assert_allclose(ad[1], ex[1], atol=0.1)
    np.testing.assert_allclose(pr[1], ex[1], atol=0.05)


def test_variance_forms_and_lemma3_bound():
    p = ngvi.blr_problem(np.array([[1.0], [1.0]]), np.array([10.0, -10.0]))
    eta = (np.zeros(1), -0.5 * np.eye(1))
    assert variance.variance_term(p, eta, 1.0, 1) == pytest.approx(400 / 3, rel=1e-12)
    # precision tau_{t+1} = (1 - gamma) tau_t + 3 gamma; (12) = 400 / tau_{t+1} (mean-only noise 20 gamma in lam)
    assert variance.variance_term(p, eta, 0.5, 1) == pytest.approx(400 / 2, rel=1e-12)
    assert variance.variance_term(p, (np.zeros(1), -1.5 * np.eye(1)), 0.3, 1) == pytest.approx(400 / 3, rel=1e-12)
    assert variance.lemma3_bound(p, 1) >= 400 / 3
    with pytest.raises(ValueError, match="gamma must be > 0"):
        variance.variance_term(p, eta, 0.0, 1)


@pytest.mark.parametrize("n,m", [(4, 2), (3, 3), (10, 1), (1, 5)])
def test_the_exact_enumeration_refuses_only_above_its_limit(monkeypatch, n, m):
    """batch_distribution enumerates C(n+m-1, m) multisets (counted here by brute force over ordered draws) and
    refuses only when that count is above the limit: at the limit it runs, one below it refuses."""
    count = len({tuple(sorted(draw)) for draw in itertools.product(range(n), repeat=m)})
    monkeypatch.setattr(variance, "MAX_BATCHES", count)
    batches, probs = variance.batch_distribution(n, m)
    assert len(batches) == count and probs.sum() == pytest.approx(1.0, rel=1e-14)
    monkeypatch.setattr(variance, "MAX_BATCHES", count - 1)
    with pytest.raises(ValueError, match=f"= {count} batches is too large \\(at most {count - 1}\\)"):
        variance.batch_distribution(n, m)


def test_the_exact_enumeration_refuses_just_above_its_documented_limit_at_once():
    """200,000 multisets at most (about 20 s of enumeration): n = 632, m = 2 has C(633, 2) = 200,028 and is refused
    before any is built."""
    assert math.comb(633, 2) == 200_028
    with pytest.raises(ValueError, match=r"= 200028 batches is too large \(at most 200000\)"):
        variance.batch_distribution(632, 2)


def test_ngd_glm_and_sgd_baselines_reduce_the_objective():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.standard_normal((60, 2)), np.ones(60)])
    y = np.where(X @ np.array([1.0, -1.0, 0.2]) + 0.3 * rng.standard_normal(60) > 0, 1.0, -1.0)
    model = ngvi.logistic_model(X, y)
    l0 = model.neg_elbo(np.zeros(3), np.eye(3))
    r = ngvi.ngd_glm(model, 40, 0.2, n_samples=10, rng=0, history=[40])
    s = sgd_baseline.sgd_glm(model, 40, 0.01, rng=0, history=[40])
    q = sgd_baseline.sgd_glm(model, 40, 0.01, rng=0, estimator="reparam", history=[40])
    assert r.history["neg_elbo"][-1] < l0 - 5 and s.history["neg_elbo"][-1] < l0 and q.history["neg_elbo"][-1] < l0
    p = _problem(0, n=50)
    b = sgd_baseline.sgd_blr(p, 200, 10, 1e-3, rng=0, history=[1, 200])
    assert b.history["kl_last"][-1] < b.history["kl_last"][0]
    pm = ngvi.poisson_model(X[:, :2] * 0.3, rng.poisson(1.0, 60))
    rp = ngvi.ngd_glm(pm, 10, 0.5, rng=0)
    assert np.linalg.eigvalsh(rp.Lam)[-1] < 0


def test_ngd_glm_given_draws_equal_its_own_draws_and_bad_draws_are_refused():
    rng = np.random.default_rng(3)
    model = ngvi.logistic_model(rng.standard_normal((9, 2)), np.where(rng.random(9) < 0.5, -1.0, 1.0))
    gen = np.random.default_rng(7)                 # the draws ngd_glm makes from rng=7, in its order
    U, idx = [], []
    for _ in range(4):
        U.append(gen.standard_normal((3, 2)))
        idx.append(gen.integers(0, 9, size=5))
    a = ngvi.ngd_glm(model, 4, 0.3, n_samples=3, batch_size=5, rng=7)
    b = ngvi.ngd_glm(model, 4, 0.3, base_samples=np.array(U), batches=np.array(idx))
    assert np.allclose(a.lam, b.lam, rtol=1e-13, atol=1e-13) and np.allclose(a.Lam, b.Lam, rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="base_samples"):
        ngvi.ngd_glm(model, 4, 0.3, base_samples=np.zeros((3, 3, 2)))
    with pytest.raises(ValueError, match="base_samples"):
        ngvi.ngd_glm(model, 1, 0.3, base_samples=np.full((1, 2, 2), np.nan))
    with pytest.raises(ValueError, match="batches"):
        ngvi.ngd_glm(model, 1, 0.3, batches=np.array([[0, 9]]))
    with pytest.raises(ValueError, match="batches"):
        ngvi.ngd_glm(model, 1, 0.3, batches=np.array([[0.0, 1.0]]))
    s_own = sgd_baseline.sgd_glm(model, 4, 0.01, n_samples=3, batch_size=5, rng=7)
    s_given = sgd_baseline.sgd_glm(model, 4, 0.01, base_samples=np.array(U), batches=np.array(idx))
    assert np.allclose(s_own.Lam, s_given.Lam, rtol=1e-13, atol=1e-13)
    p = _problem(0, n=9)
    b_own = sgd_baseline.sgd_blr(p, 4, 5, 1e-3, rng=7)
    b_given = sgd_baseline.sgd_blr(p, 4, 5, 1e-3, indices=ngvi.draw_batches(7, 9, 4, 5))
    assert np.array_equal(b_own.Lam, b_given.Lam)
    with pytest.raises(ValueError, match="batches"):
        sgd_baseline.sgd_blr(p, 2, 5, 1e-3, indices=np.zeros((3, 5), dtype=int))


@pytest.mark.parametrize("a,v", [(0.3, 1e-6), (0.0, 0.01), (-1.0, 1.0), (2.0, 50.0), (0.0, 500.0), (5.0, 1e4)])
def test_logistic_expectations_against_adaptive_quad(a, v):
    from refvi.verification.oracles import ngvi_glm as OG
    model = ngvi.logistic_model(np.array([[1.0]]), np.array([-1.0]))
    f, f1, f2 = model.expected_loglik_parts(np.array([a]), np.array([[v]]))
    fo, f1o, f2o = OG.logistic_point_expectations(a, v, -1.0)
    # adaptive quad to 1e-13; piecewise Gauss-Legendre (40 nodes per piece) to ~1e-12
    assert f[0] == pytest.approx(fo, rel=1e-10, abs=1e-12)
    assert f1[0] == pytest.approx(f1o, rel=1e-10, abs=1e-12)
    assert f2[0] == pytest.approx(f2o, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("gamma, exact", [(9.9995277432519e-11, 0.03125000000273424586751514724912764584389758696667),
                                          (1.0, 0.15)])
def test_variance_term_is_accurate_for_tiny_steps(gamma, exact):
    # d = 1, X = (1, 0, 0), y = 0, prior N(0, 1), batches of 2: Eq. (12) reduces to a scalar sum, evaluated exactly in
    # 50-digit arithmetic for gamma = 1e-10 (subtracting the two omegas in floats loses eps / gamma: 2e-6 relative)
    p = ngvi.blr_problem(np.array([[1.0], [0.0], [0.0]]), np.zeros(3), 1.0, np.eye(1), np.zeros(1))
    assert variance.variance_term(p, (np.zeros(1), -2.0 * np.eye(1)), gamma, 2) == pytest.approx(exact, rel=1e-14)


def test_autodiff_refuses_a_gradient_of_the_wrong_shape():
    # Algorithm 1 pairs gradient row s with base sample u_s: a grad returning fewer rows is refused, never truncated
    model = ngvi.logistic_model(np.array([[1.0, 0.5], [-0.3, 2.0]]), np.array([1.0, -1.0]))
    xi, Xi, U = np.zeros(2), np.eye(2), np.random.default_rng(0).standard_normal((3, 2))
    with pytest.raises(ValueError, match="one gradient row per sample"):
        estimators.autodiff(lambda Z: model.loglik_grad(Z)[:2], xi, Xi, U)
    gx, GX = estimators.autodiff(model.loglik_grad, xi, Xi, U)
    assert gx.shape == (2,) and GX.shape == (2, 2)


@pytest.mark.parametrize("kind", ["logistic", "poisson"])
def test_a_data_point_in_the_null_space_of_sigma_has_variance_zero_not_minus_rounding(kind):
    """u = x^T z has variance x^T Sigma x >= 0; for x orthogonal to a rank-one Sigma it rounds to -1.4e-17 here,
    which the expectations must read as 0 (a point mass), not take the square root of."""
    u = np.array([1.3040000451301372, 0.9470809631292422, -0.7037352358069926])
    x = np.array([-0.3084965926269474, 0.07172960504690407, -0.4751017289789783])
    assert np.einsum("i,ij,j->", x, np.outer(u, u), x) < 0  # the rounding this test is about
    make = ngvi.logistic_model if kind == "logistic" else ngvi.poisson_model
    model = make(x[None, :], np.array([1.0]))
    f, f1, f2 = model.expected_loglik_parts(np.zeros(3), np.outer(u, u))
    assert np.all(np.isfinite(f)) and np.all(np.isfinite(f1)) and np.all(np.isfinite(f2))
    point = make(x[None, :], np.array([1.0])).loglik(np.zeros((1, 3)))  # variance 0: f is log p at the mean
    assert f[0] == pytest.approx(point[0], rel=1e-12)


def test_the_ngd_progress_bar_is_shown_only_when_asked(capsys):
    p = _problem(1, n=4)
    for progress in (False, True):
        ngvi.stochastic_ngd_blr(p, 3, indices=np.tile(np.arange(4), (3, 1)), progress=progress)
        assert ("stochastic NGD" in capsys.readouterr().err) == progress
