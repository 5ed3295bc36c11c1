"""The compiled public path of refvi.estimators.energy (kernels/checked.py): one dispatch that validates and computes.
It must give the kernel's exact result, apply every check of the Python validation, and leave the error messages to
the Python path (a failed compiled check re-runs it)."""

import _numpy_reference as npref  # tests/_numpy_reference.py: the plain-NumPy references
import numpy as np
import pytest

from refvi import estimators as E
from refvi._checks import NonFiniteError
from refvi.targets import (
    CosineQuadratic,
    Gaussian,
    HierarchicalLogisticRegression,
    LinearRegression,
    LogisticRegression,
)

#: the targets of ``_targets()`` by class name, for parametrizing: building them compiles the constants' kernels, which
#: at collection every pytest-xdist worker would do at once
TARGET_NAMES = ["Gaussian", "LinearRegression", "LogisticRegression", "HierarchicalLogisticRegression",
                "CosineQuadratic"]


def _targets(d=3):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((17, d))
    y = np.where(rng.random(17) < 0.5, -1.0, 1.0)
    A = rng.standard_normal((d, d))
    return [Gaussian(rng.standard_normal(d), A @ A.T + np.eye(d)),
            LinearRegression(X, rng.standard_normal(17), noise_scale=0.7, prior_scale=1.3),
            LogisticRegression(X, y, prior_scale=0.8),
            HierarchicalLogisticRegression(X[:, :1], y, rng.integers(0, 2, 17), n_groups=2),
            CosineQuadratic(0.5, rng.standard_normal(d), 0.3, 1.2, rng.standard_normal(d))]


def _point(d, structure, rng):
    m = rng.standard_normal(d)
    C = np.tril(0.2 * rng.standard_normal((d, d))) + np.eye(d)
    if structure == "diag":
        C = np.diag(np.diag(C))
    return m, C, rng.standard_normal((5, d))


@pytest.mark.parametrize("structure", ["tril", "diag"])
@pytest.mark.parametrize("name", TARGET_NAMES)
def test_fast_path_equals_the_generic_numpy_path(name, structure, monkeypatch):
    target = _targets()[TARGET_NAMES.index(name)]
    assert type(target).__name__ == name
    m, C, U = _point(target.dim, structure, np.random.default_rng(1))
    assert E._checked_energy_plan(target) is not None

    def validating_path(*args):
        raise AssertionError("plain float64 arrays took the validating path, not the compiled one")

    with monkeypatch.context() as mp:
        mp.setattr(E, "_validate", validating_path)              # the compiled path is the one taken
        gm, gC = E.energy(target, m, C, U, structure)
    rm, rC = npref.numpy_estimate("energy", target, m, C, U, structure)
    np.testing.assert_allclose(gm, rm, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(gC, rC, rtol=1e-11, atol=1e-12)


def _bad_cases(d):
    rng = np.random.default_rng(2)
    m, C, U = _point(d, "tril", rng)
    nan_m = m.copy()
    nan_m[1] = np.nan
    nan_low, nan_up, upper, zero_diag, neg_diag = (C.copy() for _ in range(5))
    nan_low[2, 0] = np.nan
    nan_up[0, 2] = np.inf
    upper[0, 1] = 1e-300
    zero_diag[1, 1] = 0.0
    neg_diag[2, 2] = -1.0
    nan_U = U.copy()
    nan_U[3, 1] = np.nan
    return {"m non-finite": (nan_m, C, U), "C non-finite in V": (m, nan_low, U), "C inf outside V": (m, nan_up, U),
            "C outside V": (m, upper, U), "C zero diagonal": (m, zero_diag, U), "C negative diagonal": (m, neg_diag, U),
            "U non-finite": (m, C, nan_U), "m wrong length": (m[:-1], C, U), "C wrong shape": (m, C[:, :-1], U),
            "U wrong width": (m, C, U[:, :-1]), "U no rows": (m, C, U[:0])}


@pytest.mark.parametrize("case", sorted(_bad_cases(3)))
@pytest.mark.parametrize("structure", ["tril", "diag"])
def test_every_check_fails_with_the_python_paths_message(case, structure):
    target = _targets()[2]
    m, C, U = _bad_cases(3)[case]
    if structure == "diag" and C.shape == (3, 3):
        C = np.diag(np.diag(C)) + (C - np.diag(np.diag(C))) * (case in ("C inf outside V", "C outside V"))
    with pytest.raises((ValueError, TypeError)) as slow:
        E._validate(target, m, C, U, structure)
    with pytest.raises(type(slow.value)) as fast:
        E.energy(target, m, C, U, structure)
    assert str(fast.value) == str(slow.value)


def test_diag_structure_rejects_a_lower_entry():
    target = _targets()[2]
    m, C, U = _point(3, "tril", np.random.default_rng(3))
    with pytest.raises(ValueError, match="diagonal for structure='diag'"):
        E.energy(target, m, C, U, "diag")


def test_a_non_finite_gradient_is_reported():
    g = Gaussian(np.zeros(2), 10.0 * np.eye(2))
    with pytest.raises(NonFiniteError):
        E.energy(g, np.array([1e308, 0.0]), np.eye(2), np.zeros((1, 2)))
    # g = (1e200, 1e-200) at u = (1e200, 1e-200): only the diagonal entry g_0 u_0 of g_C overflows (g_m is finite)
    g = Gaussian(np.zeros(2), np.eye(2))
    with pytest.raises(NonFiniteError):
        E.energy(g, np.zeros(2), np.eye(2), np.array([[1e200, 1e-200]]))


def test_other_inputs_take_the_python_path_with_the_same_result():
    target = _targets()[2]
    m, C, U = _point(3, "tril", np.random.default_rng(4))
    want = E.energy(target, m, C, U)
    for args in ((list(m), C, U), (m, np.asfortranarray(C), U), (m, C, U[0]), (m.astype(np.float32), C, U)):
        got = E.energy(target, *args)
        np.testing.assert_allclose(got[0], E.energy(target, *[np.asarray(a, dtype=float) for a in args])[0])
    np.testing.assert_array_equal(E.energy(target, m, np.asfortranarray(C), U)[1], want[1])
    # every array in another dtype: converted (float32, exact in float64) or refused with the Python path's message
    f32 = [a.astype(np.float32) for a in (m, C, U)]
    got = E.energy(target, *f32)
    want32 = E.energy(target, *[a.astype(np.float64) for a in f32])
    np.testing.assert_array_equal(got[0], want32[0])
    np.testing.assert_array_equal(got[1], want32[1])
    with pytest.raises(TypeError, match="m must be real"):
        E.energy(target, *[a.astype(np.complex128) for a in (m, C, U)])
