"""The Gaussian family (seed 000 §2): proj_V, adjoint, entropy, grad h, sampling, log-density, input checks."""

import numpy as np
import pytest
from scipy import stats

from refvi.families import gaussian as G

STRUCTS = ("full", "tril", "sym", "diag")


def _in_V(C, structure):
    base = np.tril(C) + np.tril(C, -1).T if structure == "sym" else C
    return G.proj_V(np.diag(np.abs(np.diag(base)) + 1.0) + (base - np.diag(np.diag(base))), structure)


@pytest.mark.parametrize("structure", STRUCTS)
def test_proj_V_is_an_orthogonal_projection(structure):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(2, 4, 4))
    P = G.proj_V(X, structure)
    np.testing.assert_array_equal(G.proj_V(P, structure), P)                   # idempotent
    assert np.sum((X - P) * G.proj_V(Y, structure)) == pytest.approx(0.0, abs=1e-12)   # residual orthogonal to V


@pytest.mark.parametrize("structure", STRUCTS)
def test_neg_entropy_and_its_gradient(structure):
    rng = np.random.default_rng(1)
    C = _in_V(rng.normal(size=(3, 3)) * 0.3, structure)
    if structure == "sym":
        C = C @ C.T + np.eye(3)
    h = G.neg_entropy(C, structure)
    assert h == pytest.approx(-np.log(abs(np.linalg.det(C))), rel=1e-12)
    g = G.grad_neg_entropy(C, structure)
    eps = 1e-6
    basis = [G.proj_V(np.outer(np.eye(3)[i], np.eye(3)[j]), structure) for i in range(3) for j in range(3)]
    for B in basis:
        if not B.any():
            continue
        fd = (G.neg_entropy(C + eps * B, structure) - G.neg_entropy(C - eps * B, structure)) / (2 * eps)
        assert np.sum(g * B) == pytest.approx(fd, rel=1e-6, abs=1e-8)
    d = C.shape[0]
    assert G.entropy(C, structure) == pytest.approx(0.5 * d * (1 + np.log(2 * np.pi)) - h, rel=1e-13)


def test_neg_entropy_is_infinite_outside_the_domain():
    assert G.neg_entropy(np.diag([1.0, -1.0]), "tril") == np.inf
    assert G.neg_entropy(np.diag([1.0, -1.0]), "sym") == np.inf
    assert G.neg_entropy(np.zeros((2, 2)), "full") == np.inf


def test_log_density_matches_scipy_and_sampling_is_reproducible():
    rng = np.random.default_rng(2)
    m = rng.normal(size=3)
    C = np.tril(rng.normal(size=(3, 3)), -1) + np.diag(rng.uniform(0.5, 2.0, 3))
    Z = rng.normal(size=(4, 3))
    ref = stats.multivariate_normal(m, C @ C.T).logpdf(Z)
    np.testing.assert_allclose(G.log_density(Z, m, C, "tril"), ref, rtol=1e-12)
    np.testing.assert_array_equal(G.sample(m, C, 7, 5, "tril"), G.sample(m, C, 7, 5, "tril"))


def test_adjoint_identity():
    rng = np.random.default_rng(3)
    for structure in STRUCTS:
        u, z, n = rng.normal(size=(3, 4))
        B = G.proj_V(rng.normal(size=(4, 4)), structure)
        zm, zC = G.adjoint(z, u, structure)
        assert zm @ n + np.sum(zC * B) == pytest.approx(z @ (B @ u + n), rel=1e-12)


@pytest.mark.parametrize("structure,C,match", [
    ("tril", np.array([[1.0, 1.0], [0.0, 1.0]]), "lower triangular"),
    ("tril", np.array([[1.0, 0.0], [0.0, -1.0]]), "positive diagonal"),
    ("diag", np.array([[1.0, 0.0], [0.5, 1.0]]), "diagonal"),
    ("sym", np.array([[1.0, 0.5], [0.0, 1.0]]), "symmetric"),
    ("sym", np.array([[1.0, 2.0], [2.0, 1.0]]), "positive definite"),
    ("full", np.array([[1.0, 1.0], [1.0, 1.0]]), "invertible"),
    ("full", np.array([[1.0, np.nan], [1.0, 1.0]]), "non-finite"),
    ("banded", np.eye(2), "structure"),
])
def test_bad_scale_is_rejected(structure, C, match):
    with pytest.raises(ValueError, match=match):
        G.grad_neg_entropy(C, structure)
