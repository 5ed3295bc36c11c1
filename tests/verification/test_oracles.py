"""Self-tests of the independent oracles (verification/oracles): each one against a second road."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from scipy.special import expit, log_expit

from refvi.verification.oracles import quadrature as Q
from refvi.verification.oracles import symbolic as SY
from refvi.verification.oracles import vi_objective as VO

LOG_2PI = np.log(2 * np.pi)


def _softplus(x):
    return -log_expit(-x)          # scipy.special: an implementation independent of the oracle's


def _sigmoid(x):
    return expit(x)


def _rand_C(rng, d):
    C = np.tril(0.4 * rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(0.4, 1.0, d))
    return C


def _models(rng, d=3, N=7):
    X = rng.standard_normal((N, d))
    P = rng.standard_normal((d, d))
    return {
        "gaussian": {"kind": "gaussian", "mean": rng.standard_normal(d), "precision": P @ P.T + np.eye(d)},
        "linear": {"kind": "linear", "X": X, "y": rng.standard_normal(N), "noise_scale": 0.7, "prior_scale": 1.3},
        "logistic": {"kind": "logistic", "X": X, "y": np.where(rng.standard_normal(N) > 0, 1.0, -1.0),
                     "prior_scale": 1.3},
        "cosine": {"kind": "cosine", "alpha": 1.7, "b": rng.standard_normal(d), "phi": 0.4, "beta": 0.6,
                   "z0": rng.standard_normal(d)},
    }


def _neg_logp(model, z):
    """-log p(z) written directly from the model's definition (for brute-force quadrature)."""
    if model["kind"] == "cosine":
        D = z - model["z0"]
        return model["alpha"] * np.cos(model["b"] @ z + model["phi"]) + 0.5 * model["beta"] * D @ D
    if model["kind"] == "gaussian":
        D = z - model["mean"]
        P = model["precision"]
        return 0.5 * D @ P @ D - 0.5 * np.linalg.slogdet(P)[1] + 0.5 * len(z) * LOG_2PI
    s = model["prior_scale"]
    prior = 0.5 * z @ z / s**2 + 0.5 * len(z) * (LOG_2PI + 2 * np.log(s))
    if model["kind"] == "linear":
        sn = model["noise_scale"]
        r = model["y"] - model["X"] @ z
        return prior + 0.5 * r @ r / sn**2 + 0.5 * len(r) * (LOG_2PI + 2 * np.log(sn))
    return prior + np.sum(_softplus(-model["y"] * (model["X"] @ z)))


# ------------------------------------------------------------------------------------------------ vi_objective
@pytest.mark.parametrize("kind", ["gaussian", "linear", "logistic", "cosine"])
def test_free_energy_gradient_matches_central_differences(kind):
    rng = np.random.default_rng(1)
    model = _models(rng)[kind]
    d = 3
    m, C = rng.standard_normal(d), rng.standard_normal((d, d))        # full, unstructured C
    l, gm, gC = VO.free_energy(model, m, C)
    h = 1e-5
    fd_m = np.array([(VO.free_energy(model, m + h * e, C)[0] - VO.free_energy(model, m - h * e, C)[0]) / (2 * h)
                     for e in np.eye(d)])
    fd_C = np.zeros((d, d))
    for i in range(d):
        for j in range(d):
            E = np.zeros((d, d))
            E[i, j] = h
            fd_C[i, j] = (VO.free_energy(model, m, C + E)[0] - VO.free_energy(model, m, C - E)[0]) / (2 * h)
    # central differences: truncation h^2 |l'''| ~ 1e-10 plus rounding eps |l| / h ~ 1e-10 -> 1e-7 is safe
    np.testing.assert_allclose(gm, fd_m, rtol=1e-7, atol=1e-7 * (1 + abs(l)))
    np.testing.assert_allclose(gC, fd_C, rtol=1e-7, atol=1e-7 * (1 + abs(l)))


@pytest.mark.parametrize("kind", ["gaussian", "linear", "logistic", "cosine"])
def test_free_energy_matches_tensor_gauss_hermite_in_d2(kind):
    rng = np.random.default_rng(2)
    d = 2
    model = _models(rng, d=d, N=5)[kind]
    m, C = rng.standard_normal(d), 0.5 * rng.standard_normal((d, d))
    l = VO.free_energy(model, m, C)[0]
    # quadratic: a 2-node-per-axis rule is exact (degree 2 <= 3); logistic: 60 nodes per axis with ||C^T x|| <~ 2
    order = {"logistic": 60, "cosine": 40}.get(kind, 2)    # cosine: entire integrand, 40 nodes ~ exact
    ref = Q.gaussian_expectation(lambda z, u: _neg_logp(model, z), m, C, order=order)
    assert abs(l - ref) <= 1e-11 * (1 + abs(ref))   # both exact up to rounding (~1e-14 per term)


def test_logistic_ridge_moments_two_roads_agree():
    """vi_objective's Gauss-Hermite (beta <= 2) / split quad (beta > 2) vs quadrature's s-domain adaptive quad."""
    a = np.array([-50.0, -6.0, -1.0, 0.0, 0.3, 2.0, 8.0, 50.0])
    for beta in (0.0, 0.05, 0.7, 1.9, 2.01, 2.1, 4.0, 15.0, 300.0, 1e4):
        b = np.full_like(a, beta)
        sp_, sg, ds = VO.ridge_moments(a, b)
        ref_sp = Q.ridge_expectation_adaptive(lambda s: _softplus(-s), a, b)
        ref_sg = Q.ridge_expectation_adaptive(lambda s: _sigmoid(-s), a, b)
        ref_ds = Q.ridge_expectation_adaptive(lambda s: _sigmoid(s) * _sigmoid(-s), a, b)
        # both roads claim ~1e-13 relative (measured worst 1e-15 over this grid); allow 1e-10
        np.testing.assert_allclose(sp_, ref_sp, rtol=1e-10, atol=1e-300)
        np.testing.assert_allclose(sg, ref_sg, rtol=1e-10, atol=1e-300)
        np.testing.assert_allclose(ds, ref_ds, rtol=1e-10, atol=1e-300)


def test_linear_and_gaussian_closed_forms_against_definition():
    rng = np.random.default_rng(3)
    for d in (1, 2, 3):
        models = _models(rng, d=d, N=4)
        m, C = rng.standard_normal(d), rng.standard_normal((d, d))
        for kind in ("gaussian", "linear"):
            model = models[kind]
            l = VO.free_energy(model, m, C)[0]
            ref = Q.gaussian_expectation(lambda z, u: _neg_logp(model, z), m, C, order=3)   # exact, degree 2
            assert abs(l - ref) <= 1e-12 * (1 + abs(ref))


def test_objective_is_l_minus_logdet():
    rng = np.random.default_rng(4)
    model = _models(rng)["logistic"]
    m, C = rng.standard_normal(3), _rand_C(rng, 3)
    assert VO.objective(model, m, C) == pytest.approx(VO.free_energy(model, m, C)[0] - np.log(np.prod(np.diag(C))),
                                                      rel=1e-15, abs=1e-13)
    assert VO.objective(model, m, np.zeros((3, 3))) == np.inf


@pytest.mark.parametrize("structure", ["tril", "full", "sym", "diag"])
def test_solve_linear_is_exact_posterior(structure):
    rng = np.random.default_rng(5)
    model = _models(rng)["linear"]
    X, y, sn, s = model["X"], model["y"], model["noise_scale"], model["prior_scale"]
    prec = X.T @ X / sn**2 + np.eye(3) / s**2
    mean = np.linalg.solve(prec, X.T @ y / sn**2)
    m, C, f = VO.solve(model, structure)
    np.testing.assert_allclose(m, mean, rtol=1e-12, atol=1e-12)
    gm, gC = VO.grad_objective(model, m, C)
    np.testing.assert_allclose(gm, 0, atol=1e-11)
    if structure == "diag":
        np.testing.assert_allclose(np.diag(gC), 0, atol=1e-11)      # stationary within V only
        assert np.count_nonzero(C - np.diag(np.diag(C))) == 0
    else:
        np.testing.assert_allclose(C @ C.T, np.linalg.inv(prec), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(gC, 0, atol=1e-11)
        # f* = -log p(x) + (d/2)(1 + log 2 pi) with the evidence in closed form
        K = sn**2 * np.eye(len(y)) + s**2 * X @ X.T
        log_ev = -0.5 * y @ np.linalg.solve(K, y) - 0.5 * np.linalg.slogdet(K)[1] - 0.5 * len(y) * LOG_2PI
        assert f == pytest.approx(-log_ev + 1.5 * (1 + LOG_2PI), rel=1e-12)
    if structure == "sym":
        np.testing.assert_array_equal(C, C.T)
    if structure == "tril":
        assert np.all(np.triu(C, 1) == 0) and np.all(np.diag(C) > 0)


def test_solve_logistic_satisfies_gaussian_vi_stationarity():
    """At the optimum over all Gaussians: E_q grad log p = 0 and (C C^T)^{-1} = E_q[-Hess log p] (d = 2)."""
    rng = np.random.default_rng(6)
    model = _models(rng, d=2, N=6)["logistic"]
    X, y, s = model["X"], model["y"], model["prior_scale"]
    for structure in ("tril", "sym"):
        m, C, f = VO.solve(model, structure)

        def grad_and_hess(z, u):
            t = X @ z
            g = -z / s**2 + X.T @ (y * _sigmoid(-y * t))
            H = np.eye(2) / s**2 + (X.T * (_sigmoid(t) * _sigmoid(-t))) @ X
            return np.concatenate([g, H.ravel()])

        # tensor GH with 150 nodes per axis: sigmoid' has poles at +-i pi, ||C^T x_n|| <~ 2.2 here, so the rule's
        # error is ~1e-13 (measured: 3e-11 at 100 nodes, 1e-8 at 60); the oracle's own gradient norm is <= 1e-9
        out = Q.gaussian_expectation(grad_and_hess, m, C, order=150)
        np.testing.assert_allclose(out[:2], 0, atol=1e-9)
        np.testing.assert_allclose(np.linalg.inv(C @ C.T), out[2:].reshape(2, 2), rtol=1e-10)
        # and it is a minimum: random feasible perturbations do not decrease f
        for _ in range(5):
            dm, dC = 1e-3 * rng.standard_normal(2), 1e-3 * np.tril(rng.standard_normal((2, 2)))
            if structure == "sym":
                dC = dC + dC.T
            assert VO.objective(model, m + dm, C + dC) >= f - 1e-12


def test_solve_gaussian_recovers_target():
    rng = np.random.default_rng(7)
    model = _models(rng)["gaussian"]
    m, C, f = VO.solve(model, "sym")
    np.testing.assert_allclose(m, model["mean"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.linalg.inv(C @ C.T), model["precision"], rtol=1e-10)
    assert f == pytest.approx(1.5 * (1 + LOG_2PI), rel=1e-12)    # KL = 0, seed 000 Lemma 14 constant


def test_bad_input_raises():
    rng = np.random.default_rng(8)
    model = _models(rng)["logistic"]
    with pytest.raises(ValueError):
        VO.free_energy(model, np.zeros(2), np.eye(3))
    with pytest.raises(ValueError):
        VO.free_energy(dict(model, y=np.full(7, 0.5)), np.zeros(3), np.eye(3))
    with pytest.raises(ValueError):
        VO.free_energy({"kind": "poisson"}, np.zeros(3), np.eye(3))
    with pytest.raises(ValueError):
        VO.free_energy(model, np.array([np.nan, 0, 0]), np.eye(3))


# -------------------------------------------------------------------------------------------------- quadrature
def test_hermite_rule_moments():
    t, w = Q.hermite_rule(10)
    assert w.sum() == pytest.approx(1.0, abs=1e-15)
    for k in range(20):                       # exact up to degree 19; E t^k = (k-1)!! for even k
        exact = 0.0 if k % 2 else float(sp.factorial2(k - 1)) if k else 1.0
        # rounding: eps times the sum of |terms| (t_max^19 ~ 1e13 for n = 10)
        assert t**k @ w == pytest.approx(exact, rel=1e-12, abs=1e-14 * (np.abs(t) ** k @ w))


def test_ridge_expectation_known_integrals():
    a, b = np.array([0.3, -1.0, 2.0]), np.array([0.5, 1.5, 0.0])
    # E exp(a + b t) = exp(a + b^2 / 2);  E cos(a + b t) = cos(a) exp(-b^2 / 2)
    np.testing.assert_allclose(Q.ridge_expectation(np.exp, a, b), np.exp(a + b**2 / 2), rtol=1e-13)
    np.testing.assert_allclose(Q.ridge_expectation_adaptive(np.exp, a, b), np.exp(a + b**2 / 2), rtol=1e-12)
    np.testing.assert_allclose(Q.ridge_expectation(np.cos, a, b), np.cos(a) * np.exp(-b**2 / 2), rtol=1e-13)
    np.testing.assert_allclose(Q.ridge_expectation_adaptive(np.cos, a, b), np.cos(a) * np.exp(-b**2 / 2),
                               rtol=1e-12)
    # E max(a + b t, 0) = a Phi(a/b) + b phi(a/b)   (a kink: adaptive road only, cut at 0)
    from scipy.stats import norm
    a, b = np.array([0.3, -1.0]), np.array([0.5, 1.5])
    np.testing.assert_allclose(Q.ridge_expectation_adaptive(lambda s: np.maximum(s, 0.0), a, b),
                               a * norm.cdf(a / b) + b * norm.pdf(a / b), rtol=1e-12)


def test_gaussian_expectation_moments():
    rng = np.random.default_rng(9)
    for d in (1, 2, 3):
        m, C = rng.standard_normal(d), rng.standard_normal((d, d))
        Sig = C @ C.T
        mean = Q.gaussian_expectation(lambda z, u: z, m, C, order=2)
        second = Q.gaussian_expectation(lambda z, u: np.outer(z - m, z - m), m, C, order=2)
        np.testing.assert_allclose(mean, m, atol=1e-14)
        np.testing.assert_allclose(second, Sig, atol=1e-13)
        # E ||u||^4 = d (d + 2)
        assert Q.gaussian_expectation(lambda z, u: (u @ u) ** 2, m, C, order=3) == pytest.approx(d * (d + 2),
                                                                                                rel=1e-13)
    with pytest.raises(ValueError):
        Q.gaussian_expectation(lambda z, u: 0.0, np.zeros(4), np.eye(4))


def test_degree3_cubature_exact_to_degree_3_and_not_4():
    for d in (1, 2, 3, 5):
        U, w = Q.degree3_cubature(d)
        assert np.all(w == w[0]) and w.sum() == pytest.approx(1.0)
        np.testing.assert_allclose(U.mean(axis=0), 0, atol=1e-15)
        np.testing.assert_allclose(U.T @ U / len(U), np.eye(d), atol=1e-14)
        third = np.einsum("si,sj,sk->ijk", U, U, U) / len(U)
        np.testing.assert_allclose(third, 0, atol=1e-14)
        if d >= 2:   # degree 4 is not reproduced: E u1^2 u2^2 = 1 but the rule gives 0
            assert np.mean(U[:, 0] ** 2 * U[:, 1] ** 2) == 0.0


def test_tensor_rule_matches_gaussian_expectation():
    U, W = Q.tensor_rule(2, 5)
    assert W.sum() == pytest.approx(1.0)
    f = lambda u: np.cos(u[0]) * u[1] ** 2 + u[0] ** 3  # noqa: E731
    via_rule = sum(wk * f(u) for u, wk in zip(U, W))
    assert via_rule == pytest.approx(Q.gaussian_expectation(lambda z, u: f(u), np.zeros(2), np.eye(2), 5),
                                     rel=1e-14)


# ---------------------------------------------------------------------------------------------------- symbolic
def test_prox_scalar_solution_is_stationary_and_positive():
    x = SY.prox_scalar_solution()
    c, g = SY.C_SYM, SY.GAMMA_SYM
    stationarity = -1 / x + (x - c) / g
    assert sp.simplify(stationarity) == 0
    for cv in (-3.0, 0.0, 0.5, 10.0):
        for gv in (1e-3, 1.0, 7.0):
            assert float(x.subs({c: cv, g: gv})) > 0


def test_isserlis_identities():
    for d in (1, 2, 3):
        assert SY.isserlis_quadratic_norm(d)
    assert SY.isserlis_fourth_moment(2)


def test_quadratic_free_energy_symbolic_matches_numeric_oracle():
    d = 2
    l_expr, syms = SY.quadratic_free_energy_symbolic(d)
    rng = np.random.default_rng(10)
    mu, m, C = rng.standard_normal(d), rng.standard_normal(d), rng.standard_normal((d, d))
    P = rng.standard_normal((d, d))
    H = P @ P.T + np.eye(d)
    subs = SY.substitution(syms, mu=mu, m=m, C=C, H=H)
    val = float(l_expr.subs(subs))
    # -log p = 1/2 (z-mu)^T H (z-mu) is the Gaussian model minus its normalizing constant
    ref = VO.free_energy({"kind": "gaussian", "mean": mu, "precision": H}, m, C)[0] \
        - (-0.5 * np.linalg.slogdet(H)[1] + 0.5 * d * LOG_2PI)
    assert val == pytest.approx(ref, rel=1e-12)


def test_symbolic_logdet_gradient():
    assert SY.logdet_gradient_identity(2)
    assert SY.logdet_gradient_identity(3)


def test_symbolic_stein_and_score_identities():
    assert SY.stein_identity(5)
    assert SY.score_mean_zero(1)
    assert SY.score_mean_zero(2)
    u, v = sp.symbols("u v", real=True)
    assert SY.gaussian_polynomial_expectation(u**4, [u]) == 3                       # moments themselves
    assert SY.gaussian_polynomial_expectation(u**2 * v**2 + u**3 * v, [u, v]) == 1


def test_solve_logistic_diag_is_mean_field_stationary_and_worse_than_full():
    rng = np.random.default_rng(11)
    model = _models(rng, d=3, N=8)["logistic"]
    m, C, f = VO.solve(model, "diag")
    assert np.count_nonzero(C - np.diag(np.diag(C))) == 0 and np.all(np.diag(C) > 0)
    gm, gC = VO.grad_objective(model, m, C)
    np.testing.assert_allclose(gm, 0, atol=1e-9)
    np.testing.assert_allclose(np.diag(gC), 0, atol=1e-9)        # stationary within V = diagonal matrices
    assert f >= VO.solve(model, "tril")[2] - 1e-12                 # a smaller family cannot do better


def _hier_model():
    X = np.array([[0.7], [-1.2], [0.4], [1.5], [-0.3]])
    return {"kind": "hierarchical", "X": X, "y": np.array([1.0, -1.0, -1.0, 1.0, 1.0]),
            "groups": np.array([0, 1, 1, 0, 1]), "prior_scale": 1.4, "group_scale": 0.6}


def _hier_neg_logp(model, z):
    """-log p(theta, z_0, z_1) written from the generative model (d = 1, G = 2)."""
    s, g = model["prior_scale"], model["group_scale"]
    th, zg = z[0], z[1:]
    out = th**2 / (2 * s**2) + 0.5 * (LOG_2PI + 2 * np.log(s))
    out += np.sum((zg - th) ** 2) / (2 * g**2) + len(zg) * 0.5 * (LOG_2PI + 2 * np.log(g))
    t = model["y"] * model["X"][:, 0] * zg[model["groups"]]
    return out + np.sum(_softplus(-t))


def test_hierarchical_free_energy_against_definition_and_fd():
    model = _hier_model()
    rng = np.random.default_rng(12)
    m, C = 0.5 * rng.standard_normal(3), 0.3 * rng.standard_normal((3, 3))
    l, gm, gC = VO.free_energy(model, m, C)
    # tensor GH with 30 nodes per axis, ||C^T x~_n|| <~ 1: error ~1e-14
    ref = Q.gaussian_expectation(lambda z, u: _hier_neg_logp(model, z), m, C, order=30)
    assert abs(l - ref) <= 1e-11 * (1 + abs(ref))
    assert VO.free_energy(model, m, np.zeros((3, 3)))[0] == pytest.approx(_hier_neg_logp(model, m), rel=1e-14)
    h = 1e-5
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        fd = (VO.free_energy(model, m + e, C)[0] - VO.free_energy(model, m - e, C)[0]) / (2 * h)
        assert gm[i] == pytest.approx(fd, rel=1e-7, abs=1e-8)
        for j in range(3):
            E = np.zeros((3, 3))
            E[i, j] = h
            fd = (VO.free_energy(model, m, C + E)[0] - VO.free_energy(model, m, C - E)[0]) / (2 * h)
            assert gC[i, j] == pytest.approx(fd, rel=1e-7, abs=1e-8)
    m_s, C_s, f_s = VO.solve(model, "tril")
    g1, g2 = VO.grad_objective(model, m_s, C_s)
    assert np.linalg.norm(g1) <= 1e-9 and np.linalg.norm(np.tril(g2)) <= 1e-9


def test_ngvi_variance12_is_accurate_for_tiny_steps():
    # Eq. (12) at gamma -> 0 subtracts two O(gamma)-close omegas; the oracle switches to high precision below 1e-3.
    # Exact values (50-digit sums, d = 1, X = (1, 0, 0), y = 0, prior N(0, 1), eta = (0, -2), batches of 2):
    from refvi.verification.oracles import ngvi_expfam as OX
    args = (np.array([[1.0], [0.0], [0.0]]), np.zeros(3), 1.0, np.eye(1), np.zeros(1), 2)
    for gamma, exact in ((9.9995277432519e-11, 0.03125000000273424586751514724912764584389758696667),
                         (1.1125369292536007e-308, 0.03125), (1.0, 0.15)):
        assert OX.variance12(np.zeros(1), -2.0 * np.eye(1), gamma, *args) == pytest.approx(exact, rel=1e-14)


def test_online_ewa_paths_agree_with_adaptive_quadrature():
    """Seed 003's EWA path oracle (composite / tensor Gauss-Legendre, every round at once) against scipy's adaptive
    quad (1-D, every round, kinks of |theta - y| as break points, a tilted prior) and dblquad (2-D, last round)."""
    import math

    from refvi.verification.oracles import online_comparators as oc
    from refvi.verification.oracles import online_paths as OP

    quad = lambda th, y: (th - y) ** 2 / 4.0  # noqa: E731
    absl = lambda th, y: np.abs(th - y) / 2.0  # noqa: E731
    tilt = lambda th: -0.5 * ((np.asarray(th) - 0.4) / 0.5) ** 2 - math.log(0.5 * math.sqrt(2 * math.pi)) - math.log(  # noqa: E731
        0.5 * (math.erf(0.6 / (0.5 * math.sqrt(2))) - math.erf(-1.4 / (0.5 * math.sqrt(2)))))
    rng = np.random.default_rng(0)
    for trial in range(6):
        T, eta = int(rng.integers(1, 31)), float(rng.uniform(0.05, 5.0))
        data, loss, prior = rng.uniform(-1, 1, T), (quad, absl)[trial % 2], (None, tilt)[(trial // 2) % 2]
        breaks = data if loss is absl else ()
        ln, means, nodes, w = OP.ewa_path_1d(loss, data, eta, -1.0, 1.0, prior, breaks)
        for h in (0, T // 2, T):
            lp = None if prior is None else (lambda t: float(prior(t)))
            lse = oc.ewa_log_partition(lambda t: float(sum(loss(np.array([t]), yy)[0] for yy in data[:h])), eta,
                                       -1.0, 1.0, log_prior=lp, breaks=list(data[:h]))
            assert abs(ln[h] - lse) <= 1e-12
        assert w.sum() == pytest.approx(1.0, abs=1e-14) and means.shape == (T,)
    xs = [(np.array([0.5, -0.5]), 1.0), (np.array([0.5, 0.5]), -1.0), (np.array([-0.5, 0.3]), 0.7)]
    lin = lambda th, D: (D[1] - np.asarray(th) @ D[0]) ** 2 / 4.0  # noqa: E731
    ln, means = OP.ewa_path_2d(lin, xs, 2.0, [-1.0, -1.0], [1.0, 1.0])
    lse, mean = oc.ewa_box_moments(lambda a, b: sum(lin((a, b), D) for D in xs[:-1]), 2.0, [-1.0, -1.0], [1.0, 1.0])
    assert abs(ln[-2] - lse) <= 1e-11 and np.max(np.abs(means[-1] - mean)) <= 1e-11


def test_online_rules_batch_replay_is_the_one_step_rule():
    """Seed 003's from-scratch SVA replay (all runs at once) equals the one-step rule applied round by round, and the
    FTRL sums recovered from a state are the ones it was computed from."""
    from refvi.verification.oracles import online_comparators as oc
    from refvi.verification.oracles import online_rules as OR

    rng = np.random.default_rng(1)
    data = [oc.toy_sample(rng, 20) for _ in range(3)]
    hyper = dict(eta=0.3, s=1.2, mbox=0.4, sbox=1.5)
    M, S, L = OR.run_sva_batch(np.array([X for X, _ in data]), np.array([y for _, y in data]), **hyper)
    for r, (X, y) in enumerate(data):
        m, sg, sums = np.zeros(2), np.full(2, 1.2), None
        for t in range(20):
            rec = OR.sums_from_state("sva", hyper, m, sg)
            if rec is not None and sums is not None:
                np.testing.assert_allclose(rec[0], sums[0], rtol=1e-9, atol=1e-12)
                np.testing.assert_allclose(rec[1], sums[1], rtol=1e-7, atol=1e-12)
            m, sg, sums, lt = OR.step("sva", hyper, X[t], y[t], m, sg, sums, t)
            assert lt == pytest.approx(L[r, t], abs=1e-14)
            np.testing.assert_allclose(np.concatenate([m, sg]), np.concatenate([M[r, t + 1], S[r, t + 1]]), atol=1e-13)


def test_point_of_gradient_inverts_the_gradient_far_from_the_mode():
    """The sample point a framed logistic step implies: -grad log p(z) = b, found from a start far away (a full
    Newton step there overshoots: the damping must hold), for all three kinds; refuses to loop forever."""
    from refvi.verification.oracles import sgd_reference as ref

    rng = np.random.default_rng(0)  # undamped Newton fails on this data from this start (and on 36 of 40 such)
    X = rng.standard_normal((11, 3)) * 4.0
    y = np.where(rng.standard_normal(11) > 0, 1.0, -1.0)
    P = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 0.5]])
    cases = [("logistic", (X, y, 0.25)), ("linear", (X, y, 2.0, 0.25)), ("gaussian", (np.ones(3), P))]
    for kind, params in cases:
        want = rng.standard_normal(3) * 3.0
        b = ref.neg_grad_logp(kind, want, params)
        z = ref.point_of_gradient(kind, params, b, want + np.array([40.0, -25.0, 30.0]))
        np.testing.assert_allclose(z, want, rtol=0, atol=1e-10)
    with pytest.raises(ArithmeticError, match="did not converge"):
        ref.point_of_gradient("logistic", (X, y, 0.25), np.full(3, 1e3), np.zeros(3), max_iter=3)


@pytest.mark.parametrize("loss", ["hinge", "squared", "absolute", "quadratic"])
def test_online_rules_oga_subgradient_is_the_losses_derivative(loss):
    """OGA's step direction in the replay oracle is the derivative of the point loss by central differences, at
    points away from the kinks (hinge's 1 - y a = 0, the absolute loss's r = 0)."""
    from refvi.verification.oracles import online_rules as OR

    rng = np.random.default_rng(7)
    for _ in range(20):
        x, theta, y, H = rng.standard_normal(3), rng.standard_normal(3), float(rng.standard_normal()), 1.7
        if loss == "hinge":
            y = 1.0 if y > 0 else -1.0
        h = 1e-6
        fd = [(OR.point_loss(loss, x, y, theta + h * e, H) - OR.point_loss(loss, x, y, theta - h * e, H)) / (2 * h)
              for e in np.eye(3)]
        np.testing.assert_allclose(OR._point_subgradient(loss, x, y, theta, H), fd, rtol=1e-6, atol=1e-8)
