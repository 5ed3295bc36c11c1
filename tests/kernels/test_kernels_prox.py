"""Prox / projection kernels (seed 000 Lemmas 31, 32; seed 002 Thm 7): agreement with the plain-NumPy formulas,
determinism, composition inside @njit, and bad input through refvi.prox."""

import _numpy_reference as npref  # tests/_numpy_reference.py: the plain-NumPy references
import numba
import numpy as np
import pytest

from refvi import prox
from refvi.kernels import prox as kp


def _sym(rng, d, spread=2.0):
    A = rng.standard_normal((d, d))
    return 0.5 * (A + A.T) * spread


def _agree(got, ref):
    # eigh / svd based: backward-stable, errors ~ d * eps * ||C||_2; d <= 40 here, so 1e-12 relative to ||C|| holds.
    scale = max(1.0, float(np.max(np.abs(ref))))
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * scale)


@pytest.mark.parametrize("d", (1, 3, 12))
@pytest.mark.parametrize("gamma", (1e-8, 0.3, 50.0))
def test_entropy_prox_matches_numpy(d, gamma):
    rng = np.random.default_rng([d, int(gamma * 1e8) % 997])
    C = np.tril(rng.standard_normal((d, d)) * 3)       # any real diagonal, including negative entries
    got = prox.entropy_prox(C, gamma)
    ref = npref.numpy_entropy_prox(C, gamma)
    np.testing.assert_array_equal(np.tril(got, -1), np.tril(C, -1))   # off-diagonal untouched exactly
    _agree(got, ref)
    assert np.all(np.diag(got) > 0)


@pytest.mark.parametrize("d", (1, 4, 20, 40))
@pytest.mark.parametrize("M", (0.05, 1.0, 100.0))
def test_project_wm_matches_numpy(d, M):
    rng = np.random.default_rng([d, int(M * 100)])
    C = _sym(rng, d)
    got = prox.project_wm(C, M, "sym")
    _agree(got, npref.numpy_project_wm(C, M))
    assert np.array_equal(got, got.T)
    assert np.linalg.eigvalsh(got)[0] >= 1 / np.sqrt(M) * (1 - 1e-12)


def test_entropy_prox_has_no_cancellation_for_very_negative_diagonal():
    # root of b^2 - c b - gamma = 0 for c = -1e8, gamma = 1e-2 is gamma/|c| (1 - gamma/c^2 + ...) = 1e-10 to 1e-20
    b = prox.entropy_prox(np.array([[-1e8]]), 1e-2)[0, 0]
    assert b == pytest.approx(1e-10, rel=1e-15)
    big = prox.entropy_prox(np.array([[1e300, 0.0], [0.0, -1e300]]), 1.0)      # no overflow in c^2
    assert big[0, 0] == 1e300 and big[1, 1] == pytest.approx(1e-300, rel=1e-15)


def test_project_wm_is_identity_inside_wm():
    rng = np.random.default_rng(1)
    C = _sym(rng, 6) + 10 * np.eye(6)
    assert np.array_equal(prox.project_wm(C, 1.0, "sym"), C)


@pytest.mark.parametrize("d", (1, 5, 30))
def test_project_singular_matches_numpy(d):
    rng = np.random.default_rng(d)
    C = rng.standard_normal((d, d))
    got = prox.project_wm(C, 2.0, "full")
    _agree(got, npref.numpy_project_singular_values(C, 2.0))
    assert np.linalg.svd(got, compute_uv=False)[-1] >= 1 / np.sqrt(2.0) * (1 - 1e-12)


def test_same_input_is_bit_identical():
    rng = np.random.default_rng(7)
    C, T = _sym(rng, 15), np.tril(rng.standard_normal((15, 15)))
    F = rng.standard_normal((15, 15))
    for f, a in ((lambda x: prox.project_wm(x, 0.5), C), (lambda x: prox.entropy_prox(x, 0.2), T),
                 (lambda x: prox.project_singular_values(x, 0.5), F)):
        assert np.array_equal(f(a.copy()), f(a.copy()))


@numba.njit
def _prox_then_project(C, gamma, M):
    P = kp.entropy_prox(C, gamma)
    S = 0.5 * (P + P.T)
    return kp.project_wm_sym(S, M), kp.project_singular(P, M)


def test_prox_kernels_compose_inside_user_njit():
    rng = np.random.default_rng(9)
    T = np.tril(rng.standard_normal((5, 5)))
    W, F = _prox_then_project(T, 0.4, 3.0)
    P = prox.entropy_prox(T, 0.4)
    _agree(W, prox.project_wm(0.5 * (P + P.T), 3.0))
    _agree(F, prox.project_singular_values(P, 3.0))


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="gamma must be > 0"):
        prox.entropy_prox(np.eye(3), -1.0)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        prox.entropy_prox(np.eye(3), 0.0)
    with pytest.raises(ValueError, match="lower-triangular"):
        prox.entropy_prox(np.ones((3, 3)), 1.0)
    with pytest.raises(ValueError, match="square"):
        prox.entropy_prox(np.ones((3, 2)), 1.0)
    with pytest.raises(ValueError, match="non-finite"):
        prox.entropy_prox(np.diag([1.0, np.nan]), 1.0)
    with pytest.raises(TypeError):
        prox.entropy_prox(np.eye(2), "1")
    with pytest.raises(ValueError, match="M must be > 0"):
        prox.project_wm(np.eye(3), -2.0)
    with pytest.raises(ValueError, match="M must be finite"):
        prox.project_wm(np.eye(3), np.inf)
    with pytest.raises(ValueError, match="symmetric"):
        prox.project_wm(np.triu(np.ones((3, 3))), 1.0)
    with pytest.raises(ValueError, match="non-finite"):
        prox.project_wm(np.diag([1.0, np.inf]), 1.0)
    with pytest.raises(ValueError, match="supports structure"):
        prox.project_wm(np.eye(3), 1.0, "tril")
    with pytest.raises(ValueError, match="M must be > 0"):
        prox.project_singular_values(np.eye(3), 0.0)
    with pytest.raises(ValueError, match="square"):
        prox.project_singular_values(np.ones((2, 3)), 1.0)


def test_project_wm_keeps_the_floor_when_clipped_eigenvalues_dominate():
    # a clipped eigenvalue of -1e8 next to O(1) ones: the output must still have lambda_min = 1/sqrt(M) to rounding
    # of the *output's* scale (a rank-k update would leave an error of order eps * 1e8 ~ 1e-8)
    from refvi import prox
    rng = np.random.default_rng(0)
    for d in (2, 5, 20):
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        lam = np.concatenate([[-1e8], rng.uniform(-1.0, 0.5, d - 1)])
        C = (Q * lam) @ Q.T
        C = 0.5 * (C + C.T)
        out = prox.project_wm(C, 1.0)
        assert np.linalg.eigvalsh(out)[0] >= 1.0 - 1e-13      # floor 1, output entries O(1): ~10 ulp
