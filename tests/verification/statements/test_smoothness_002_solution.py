"""Unit tests of the helpers of verification/statements/smoothness_002/ (_solution.py, solution.py, domain.py), and
mutation tests: statements must FAIL
for implementations that encode the paper's printed mistakes or common bugs (a check that cannot fail proves nothing).
"""

import math
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from refvi.targets import LogisticRegression  # noqa: E402
from refvi.verification.implementation import RefviImplementation  # noqa: E402
from refvi.verification.oracles import (  # noqa: E402
    charfun,
    matrices,  # noqa: E402
    vi_objective,
)
from refvi.verification.protocol import targets as specs  # noqa: E402
from refvi.verification.running.runner import load_statements, run_statement  # noqa: E402
from refvi.verification.statements.smoothness_002 import _solution, domain, solution  # noqa: E402

STATEMENTS = load_statements()


# ---- helpers ----------------------------------------------------------------------------------------------------
def test_random_orthogonal_and_singular_values():
    rng = np.random.default_rng(0)
    for d in (1, 2, 5):
        Q = matrices.random_orthogonal(rng, d)
        np.testing.assert_allclose(Q.T @ Q, np.eye(d), atol=1e-14)
        sv = np.sort(rng.uniform(0.1, 3.0, size=d))[::-1]
        C = matrices.with_singular_values(rng, sv)
        np.testing.assert_allclose(np.linalg.svd(C, compute_uv=False), sv, rtol=1e-13)


def test_neg_log_abs_det():
    assert _solution.neg_log_abs_det(np.diag([2.0, -3.0])) == pytest.approx(-math.log(6.0), rel=1e-15)
    assert _solution.neg_log_abs_det(np.zeros((2, 2))) == math.inf
    assert _solution.neg_log_abs_det(domain.ROT90) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_moment_points_reproduce_two_moments_and_quadratic_energy(d):
    rng = np.random.default_rng(d)
    mu = rng.normal(size=d)
    L = np.tril(rng.normal(size=(d, d))) + 2 * np.eye(d)
    U = _solution.moment_points(d, mu, L)
    assert U.shape == (2 * d, d)
    np.testing.assert_allclose(U.mean(axis=0), mu, atol=1e-14)
    np.testing.assert_allclose(U.T @ U / U.shape[0], np.outer(mu, mu) + L @ L.T, atol=1e-13)
    # mean over the points of the per-sample energy gradient of a quadratic target = O1 closed form (charfun oracle)
    A = _solution.random_spd(rng, d, 0.5, 2.0)
    zs, m, C = rng.normal(size=d), rng.normal(size=d), rng.normal(size=(d, d))
    R = U @ C.T + m - zs
    gm, gC = (R @ A).mean(axis=0), (A @ R.T @ U) / U.shape[0]
    _, gm_ref, gC_ref = charfun.quadratic(A, zs, mu, L @ L.T, m, C)
    np.testing.assert_allclose(gm, gm_ref, atol=1e-12)
    np.testing.assert_allclose(gC, gC_ref, atol=1e-12)


def test_random_spd_spectrum():
    rng = np.random.default_rng(3)
    A = _solution.random_spd(rng, 4, 0.4, 3.0)
    lam = np.linalg.eigvalsh(A)
    assert lam[0] == pytest.approx(0.4, rel=1e-12) and lam[-1] == pytest.approx(3.0, rel=1e-12)


def _logistic_instance(seed=0, N=20, d=3, s=1.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=N) > 0, 1.0, -1.0)
    return X, y, s


def test_logistic_map_and_hessian_against_finite_differences():
    X, y, s = _logistic_instance()
    target = LogisticRegression(X, y, prior_scale=s)

    def neg_logp(z):
        return -float(target.logp(z))

    z = solution.logistic_map(X, y, s)
    eps = 1e-6
    grad = np.array([(neg_logp(z + eps * e) - neg_logp(z - eps * e)) / (2 * eps) for e in np.eye(3)])
    assert np.linalg.norm(grad) < 1e-7
    zr = np.random.default_rng(1).normal(size=3)
    H_fd = np.array([(-target.grad_logp(zr + eps * e) + target.grad_logp(zr - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(domain.logistic_hessian(X, y, s, zr), H_fd, atol=1e-7)


def test_minimize_free_energy_reaches_quadratic_optimum():
    rng = np.random.default_rng(5)
    d = 3
    A, zs = _solution.random_spd(rng, d, 0.5, 2.0), rng.normal(size=d)
    def energy(m_, C_):
        return charfun.quadratic(A, zs, np.zeros(d), np.eye(d), m_, C_)
    m, C, gnorm = _solution.minimize_free_energy(energy, d, np.zeros(d), np.eye(d))
    assert gnorm < 1e-8
    np.testing.assert_allclose(C @ C.T, np.linalg.inv(A), atol=1e-8)
    np.testing.assert_allclose(m, zs, atol=1e-8)


def test_prox_gradient_optimum_with_refvi():
    rng = np.random.default_rng(6)
    d = 3
    A, mu = _solution.random_spd(rng, d, 0.5, 2.0), rng.normal(size=d)
    target = specs.gaussian(mu, A)
    m, C, iters = solution.prox_gradient_optimum(RefviImplementation(), target, _solution.moment_points(d),
                                           float(np.linalg.eigvalsh(A)[-1]), d)
    assert iters < 5000
    np.testing.assert_allclose(C, np.linalg.cholesky(np.linalg.inv(A)), atol=1e-10)
    np.testing.assert_allclose(m, mu, atol=1e-10)


def test_logistic_1d_vi_agrees_with_oracle_solve():
    """Two independent roads to the E002-2 instance: the erratum's own 1-d solver and the vi_objective oracle."""
    m, c, z_map = domain._logistic_1d_vi(4.0)
    model = {"kind": "logistic", "X": np.array([[4.0]]), "y": np.array([1.0]), "prior_scale": 1.0}
    m2, C2, _ = vi_objective.solve(model, "tril")
    assert m == pytest.approx(float(m2[0]), abs=1e-6)
    assert c == pytest.approx(abs(float(C2[0, 0])), abs=1e-6)
    assert c * c + (m - z_map) ** 2 > 0.3   # > d / c_paper = 0.2


# ---- statements pass on a correct implementation; a numerically stable prox ------------------------------------
class StableProx(RefviImplementation):
    """refvi with a cancellation-free prox: 2 lam / (sqrt(y^2 + 4 lam) - y) for y < 0."""

    name = "stable-prox"

    def entropy_prox(self, C, gamma):
        C = np.array(C, dtype=float)
        c = np.diag(C).copy()
        r = np.sqrt(c * c + 4 * gamma)
        np.fill_diagonal(C, np.where(c >= 0, 0.5 * (c + r), 2 * gamma / (r - c)))
        return C


def _verdict(sid, impl):
    return run_statement(STATEMENTS[sid], impl, "ci")


def test_thm7_passes_with_a_stable_prox():
    rec = _verdict("002.thm7", StableProx())
    assert rec["verdict"] == "pass", rec.get("detail")


# ---- mutation tests: each statement catches a wrong implementation ----------------------------------------------
class PaperLogisticConstant(StableProx):
    """Uses the paper's printed c = 1 + sigma_min(X^T X)/4 for logistic regression (E002-2)."""

    name = "paper-logistic-c"

    def strong_convexity(self, target):
        if target.kind == "logistic":
            X = target.params["X"]
            return 1.0 / target.params["prior_scale"] ** 2 + 0.25 * float(np.linalg.eigvalsh(X.T @ X)[0])
        return super().strong_convexity(target)


class UntransposedEntropyGradient(StableProx):
    name = "grad-h-untransposed"

    def grad_neg_entropy(self, C, structure="tril"):
        g = super().grad_neg_entropy(C, structure)
        return g.T if structure == "full" else g


class SignFlippedEntropyGradient(StableProx):
    name = "grad-h-sign"

    def grad_neg_entropy(self, C, structure="tril"):
        return -np.asarray(super().grad_neg_entropy(C, structure))


class EigenvalueClip(StableProx):
    """Clips eigenvalues of the symmetric part instead of singular values (wrong for non-symmetric C)."""

    name = "eig-clip"

    def project_singular(self, C, M):
        S = 0.5 * (C + C.T)
        lam, Q = np.linalg.eigh(S)
        return (Q * np.maximum(lam, 1 / np.sqrt(M))) @ Q.T


class LinearProxRemark(StableProx):
    """Implements the paper's intuition Delta C_ii ~ lambda (E002-5)."""

    name = "prox-plus-lambda"

    def entropy_prox(self, C, gamma):
        C = np.array(C, dtype=float)
        C[np.diag_indices(C.shape[0])] += gamma
        return C


class OverstatedSmoothness(StableProx):
    name = "half-M"

    def smoothness(self, target):
        return 0.5 * super().smoothness(target)


@pytest.mark.parametrize("sid, impl", [
    ("002.claim-logistic-constants", PaperLogisticConstant()),
    ("002.lemma15", UntransposedEntropyGradient()),
    ("002.thm5", UntransposedEntropyGradient()),
    ("002.cor16", UntransposedEntropyGradient()),
    ("002.claim-h-not-convex-full", SignFlippedEntropyGradient()),
    ("002.lemma17", SignFlippedEntropyGradient()),
    ("002.thm7", EigenvalueClip()),
    ("002.claim-wm-not-convex", EigenvalueClip()),
    ("002.thm7", LinearProxRemark()),
    ("002.claim-logistic-constants", OverstatedSmoothness()),
], ids=lambda x: x if isinstance(x, str) else x.name)
def test_statement_catches_wrong_implementation(sid, impl):
    rec = _verdict(sid, impl)
    assert rec["verdict"] == "fail", (rec["verdict"], rec.get("detail"))


def test_errata_demonstrations_succeed():
    from refvi.verification.errata import ERRATA
    from refvi.verification.statement import PROFILES, Context

    for eid in ("E002-1", "E002-2", "E002-3", "E002-4", "E002-5", "E002-6", "E002-7"):
        ctx = Context(StableProx(), PROFILES["ci"], eid)
        ERRATA[eid].demonstrate(ctx)
        assert ctx.evidence, eid


@pytest.mark.parametrize("sid", ["002.thm3", "002.cor16"])
def test_bounds_do_not_trust_the_implementations_constants(sid):
    """A wrong smoothness() / strong_convexity() cannot loosen a bound: the solution bounds take c, M from the oracle
    (the constants are checked by 002.claim-logistic-constants and the seed 000 constant statements)."""
    for impl in (OverstatedSmoothness(), PaperLogisticConstant()):
        rec = _verdict(sid, impl)
        assert rec["verdict"] == "pass", (impl.name, rec.get("detail"))
        assert "smoothness" not in rec["methods"] and "strong_convexity" not in rec["methods"]
