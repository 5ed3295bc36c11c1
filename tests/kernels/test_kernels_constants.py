"""Model-constant kernels (seed 000 Thm 21, Cors 22, 23, 25 with errata fixed): agreement with the targets' NumPy
constants, determinism, composition inside @njit, and bad input through the target constructors."""

import numba
import numpy as np
import pytest

from refvi.kernels import constants as kc
from refvi.targets import HierarchicalLogisticRegression, LinearRegression, LogisticRegression


def _close(a, b):
    # eigvalsh of the same symmetric matrix (assembled in a different summation order): errors ~ d eps ||H||_2.
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("N,d", ((1, 1), (20, 3), (200, 15)))
def test_glm_constants_match_targets(N, d):
    rng = np.random.default_rng([N, d])
    X = rng.standard_normal((N, d))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    lin = LinearRegression(X, rng.standard_normal(N), noise_scale=0.6, prior_scale=2.0)
    mu, M = kc.glm_constants(X, 0.6 ** -2, 0.6 ** -2, 2.0 ** -2)
    _close(np.array([mu, M]), np.array([lin.strong_convexity, lin.smoothness]))
    log = LogisticRegression(X, y, prior_scale=1.5)
    mu, M = kc.glm_constants(X, 0.0, 0.25, 1.5 ** -2)
    _close(np.array([mu, M]), np.array([log.strong_convexity, log.smoothness]))


def test_hierarchical_constants_match_target():
    rng = np.random.default_rng(3)
    N, d, G = 40, 3, 4
    X = rng.standard_normal((N, d))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    groups = rng.integers(0, G, N)
    t = HierarchicalLogisticRegression(X, y, groups, prior_scale=1.3, group_scale=0.7, n_groups=G)
    P, mu, M = kc.hierarchical_constants(X, t.groups, G, np.eye(d) / 1.3 ** 2, np.eye(d) / 0.7 ** 2)
    _close(P, t.prior_precision)
    _close(np.array([mu, M]), np.array([t.strong_convexity, t.smoothness]))


def test_constants_are_deterministic():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((50, 6))
    a = kc.glm_constants(X, 0.0, 0.25, 1.0)
    b = kc.glm_constants(X.copy(), 0.0, 0.25, 1.0)
    assert a == b
    g = rng.integers(0, 3, 50)
    h1 = kc.hierarchical_constants(X, g, 3, np.eye(6), np.eye(6))
    h2 = kc.hierarchical_constants(X.copy(), g.copy(), 3, np.eye(6), np.eye(6))
    assert np.array_equal(h1[0], h2[0]) and h1[1:] == h2[1:]


@numba.njit
def _lipschitz_step(X, prior_precision):
    mu, M = kc.glm_constants(X, 0.0, 0.25, prior_precision)
    return 1.0 / M, mu / M


def test_constants_compose_inside_user_njit():
    X = np.random.default_rng(2).standard_normal((30, 4))
    step, ratio = _lipschitz_step(X, 1.0)
    t = LogisticRegression(X, np.ones(30))
    _close(np.array([step, ratio]), np.array([1 / t.smoothness, t.strong_convexity / t.smoothness]))


def test_bad_model_input_is_rejected():
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="noise_scale"):
        LinearRegression(X, np.ones(3), noise_scale=0.0)
    with pytest.raises(ValueError, match="prior_scale"):
        LogisticRegression(X, np.ones(3), prior_scale=-1.0)
    with pytest.raises(ValueError, match="non-finite"):
        LinearRegression(np.full((3, 2), np.inf), np.ones(3))
    with pytest.raises(ValueError, match="-1 and \\+1"):
        HierarchicalLogisticRegression(X, np.array([1.0, 2.0, 1.0]), np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="groups"):
        HierarchicalLogisticRegression(X, np.ones(3), np.array([0, -1, 0]))
