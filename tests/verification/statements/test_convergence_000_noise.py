"""Unit tests of verification/oracles/gradient_moments.py and the helpers of statements/convergence_000/_noise.py."""


import numpy as np
import pytest
from scipy import integrate

from refvi.verification.oracles import gradient_moments as gmo

STRUCTS = ("full", "tril", "sym", "diag")


def _scale(rng, d, structure):
    B = rng.standard_normal((d, d))
    if structure == "full":
        return B
    if structure == "sym":
        return B @ B.T + 0.3 * np.eye(d)
    if structure == "diag":
        return np.diag(np.abs(np.diag(B)) + 0.2)
    C = np.tril(B)
    C[np.diag_indices(d)] = np.abs(np.diag(C)) + 0.2
    return C


def _quadratic(rng, d):
    A = rng.standard_normal((d, d))
    return A @ A.T + 0.5 * np.eye(d), rng.standard_normal(d)


@pytest.mark.parametrize("structure", STRUCTS)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_isserlis_closed_form_matches_gauss_hermite(structure, d):
    rng = np.random.default_rng(d * 10 + STRUCTS.index(structure))
    H, mu = _quadratic(rng, d)
    m, C = rng.standard_normal(d), _scale(rng, d, structure)
    model = {"kind": "gaussian", "mean": mu, "precision": H}
    for entropy, closed in ((False, gmo.energy_second_moment_quadratic), (True, gmo.entropy_second_moment_quadratic)):
        exact = closed(H, mu, m, C, structure)
        # ||g(u)||^2 has degree 4 in u: Gauss-Hermite of order >= 3 is exact up to rounding
        q, est = gmo.second_moment_quadrature(model, m, C, structure, entropy=entropy, order=3, check_order=5)
        assert est <= 1e-12 * exact
        assert abs(q - exact) <= 1e-12 * exact


def test_closed_form_matches_monte_carlo():
    rng = np.random.default_rng(7)
    d, structure = 2, "tril"
    H, mu = _quadratic(rng, d)
    m, C = rng.standard_normal(d), _scale(rng, d, structure)
    U = rng.standard_normal((200_000, d))
    G, GC = gmo.energy_samples({"kind": "gaussian", "mean": mu, "precision": H}, m, C, U, structure)
    x = np.sum(G * G, axis=1) + np.sum(GC * GC, axis=(1, 2))
    exact = gmo.energy_second_moment_quadratic(H, mu, m, C, structure)
    # 6-sigma CLT band: false-alarm probability ~ 2e-9
    assert abs(x.mean() - exact) <= 6 * x.std() / np.sqrt(x.size)


def test_thm1_equality_for_isotropic_quadratic_full_V():
    rng = np.random.default_rng(3)
    for d in (1, 2, 5):
        M = 1.7
        mbar, m, C = rng.standard_normal(d), rng.standard_normal(d), rng.standard_normal((d, d))
        exact = gmo.energy_second_moment_quadratic(M * np.eye(d), mbar, m, C, "full")
        b1, b2 = gmo.thm1_bounds(M, m, mbar, C)
        assert abs(exact - b1) <= 1e-12 * b1 and b1 <= b2


def test_projection_reduces_moment():
    rng = np.random.default_rng(4)
    H, mu = _quadratic(rng, 3)
    m, C = rng.standard_normal(3), _scale(rng, 3, "tril")
    full = gmo.energy_second_moment_quadratic(H, mu, m, C, "full")
    for s in ("tril", "diag"):
        assert gmo.energy_second_moment_quadratic(H, mu, m, C, s) < full


def test_hermite_tensor_rule_moments_and_limits():
    U, w = gmo.hermite_tensor_rule(2, 5)
    assert U.shape == (25, 2) and abs(w.sum() - 1) < 1e-14
    assert abs(w @ U[:, 0] ** 4 - 3) < 1e-12 and abs(w @ (U[:, 0] ** 2 * U[:, 1] ** 2) - 1) < 1e-12
    assert abs(w @ U[:, 1] ** 3) < 1e-13
    with pytest.raises(ValueError, match="too large"):
        gmo.hermite_tensor_rule(6, 20)
    with pytest.raises(ValueError):
        gmo.hermite_tensor_rule(0, 3)


def test_degree3_rule_is_exact_to_degree_3():
    for d in (1, 3, 6):
        U = gmo.degree3_rule(d)
        assert np.allclose(U.mean(axis=0), 0) and np.allclose(U.T @ U / U.shape[0], np.eye(d))
        assert np.allclose(np.einsum("si,sj,sk->ijk", U, U, U) / U.shape[0], 0)


def _models(rng, d):
    X = rng.standard_normal((6, d))
    return [
        {"kind": "gaussian", "mean": rng.standard_normal(d), "precision": _quadratic(rng, d)[0]},
        {"kind": "linear", "X": X, "y": rng.standard_normal(6), "noise_scale": 0.7, "prior_scale": 1.3},
        {"kind": "logistic", "X": X, "y": np.sign(rng.standard_normal(6)), "prior_scale": 1.2},
        {"kind": "cosine", "alpha": 2.0, "b": rng.standard_normal(d), "phi": 0.4, "beta": 0.5,
         "z0": rng.standard_normal(d)},
    ]


def test_grad_phi_matches_finite_differences_of_phi():
    rng = np.random.default_rng(5)
    for model in _models(rng, 3):
        z = rng.standard_normal(3)
        g = gmo.grad_phi(model, z[None, :])[0]
        h = 1e-6
        fd = np.array([(gmo.phi_value(model, z + h * e) - gmo.phi_value(model, z - h * e)) / (2 * h)
                       for e in np.eye(3)])
        assert np.allclose(g, fd, rtol=1e-6, atol=1e-7), model["kind"]   # central differences: O(h^2) + 1e-10/h


def test_stationary_point_has_zero_gradient():
    rng = np.random.default_rng(6)
    for model in _models(rng, 2):
        z = gmo.stationary_point(model)
        assert np.linalg.norm(gmo.grad_phi(model, z[None, :])[0]) <= 1e-9, model["kind"]


def test_logistic_quadrature_matches_adaptive_quad_in_1d():
    model = {"kind": "logistic", "X": np.array([[0.8], [-1.3], [0.4]]), "y": np.array([1.0, 1.0, -1.0]),
             "prior_scale": 1.5}
    m, C = np.array([0.4]), np.array([[1.7]])
    for entropy in (False, True):
        q, est = gmo.second_moment_quadrature(model, m, C, "tril", entropy=entropy, order=80, check_order=120)

        def integrand(t):
            G, GC = gmo.energy_samples(model, m, C, np.array([[t]]), "tril", entropy)
            return (G[0, 0] ** 2 + GC[0, 0, 0] ** 2) * np.exp(-t * t / 2) / np.sqrt(2 * np.pi)

        ref = integrate.quad(integrand, -np.inf, np.inf, epsabs=0, epsrel=1e-13, limit=200)[0]
        # the two-order estimate bounds the error of the returned (larger-order) value, and is small here
        assert abs(q - ref) <= est + 1e-13 * ref and est <= 1e-9 * q


def test_mean_quadrature_matches_vi_objective_gradient():
    from refvi.verification.oracles import vi_objective as vio

    rng = np.random.default_rng(8)
    model = _models(rng, 2)[2]
    m, C = rng.standard_normal(2) * 0.5, _scale(rng, 2, "tril")
    # ||C^T x_n|| reaches 6.4 here: the sigmoid poles at distance pi/6.4 make Gauss-Hermite slow, hence order 300
    gm, gC = gmo.mean_quadrature(model, m, C, "tril", order=300)
    _, vm, vC = vio.free_energy(model, m, C)
    assert np.allclose(gm, vm, atol=1e-8) and np.allclose(gC, np.tril(vC), atol=1e-8)


def test_proj_rejects_unknown_structure():
    with pytest.raises(ValueError, match="structure"):
        gmo.proj(np.eye(2), "upper")


# ---- helpers of the statement module --------------------------------------------------------------------------------
def test_scale_with_singular_values():
    from refvi.verification.statements.convergence_000 import _noise as s0

    rng = np.random.default_rng(9)
    sv = np.array([0.1, 1.0, 3.0])
    for structure in STRUCTS:
        C = s0.scale_with_singular_values(rng, sv, structure)
        assert np.allclose(np.sort(np.linalg.svd(C, compute_uv=False)), sv, rtol=1e-12)
        assert np.array_equal(gmo.proj(C, structure), C) if structure != "sym" else np.array_equal(C, C.T)


class _Broken:
    """refvi with one estimator deliberately wrong: the checks must notice."""

    def __init__(self, what):
        from refvi.verification.implementation import REFVI
        self._base, self._what, self.name = REFVI, what, f"broken-{what}"

    def __getattr__(self, attr):
        return getattr(self._base, attr)

    def energy(self, target, m, C, U, structure="tril"):
        gm, gC = self._base.energy(target, m, C, U, structure)
        return (gm, gC * (1 + 1e-6)) if self._what == "energy" else (gm, gC)

    def entropy(self, target, m, C, U, structure="sym"):
        gm, gC = self._base.entropy(target, m, C, U, structure)
        if self._what == "entropy":      # the classic bug: grad h = -C^{-T} left unprojected onto V
            gC = gC + gmo.proj(np.linalg.inv(C).T, structure) - np.linalg.inv(C).T
        return gm, gC

    def stl(self, target, m, C, U, structure="tril"):
        gm, gC = self._base.stl(target, m, C, U, structure)
        return (gm, gC + 1e-6 * np.tril(np.ones_like(gC))) if self._what == "stl" else (gm, gC)


@pytest.mark.parametrize("sid,what", [("000.def4", "energy"), ("000.thm1", "energy"),
                                      ("000.claim-stl-zero-variance", "stl"), ("000.def4", "entropy")])
def test_statements_catch_a_broken_estimator(sid, what):
    from refvi.verification.running.runner import load_statements, run_statement

    rec = run_statement(load_statements()[sid], _Broken(what), "ci")
    assert rec["verdict"] == "fail", rec


def test_erratum_e000_3_is_registered_and_demonstrated():
    from refvi.verification.errata import ERRATA
    from refvi.verification.implementation import REFVI
    from refvi.verification.statement import PROFILES, Context
    from refvi.verification.statements.convergence_000 import noise_bounds  # noqa: F401  (registers E000-3)

    e = ERRATA["E000-3"]
    ctx = Context(REFVI, PROFILES["ci"], "E000-3")
    e.demonstrate(ctx)
    assert ctx.examples > 0 and all(ev.passed for ev in ctx.evidence)
