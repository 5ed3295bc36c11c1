"""The fused loop of any compiled energy kernel (refvi.kernels.fused.energy_loop) against the generic path.

The generic path (fastpath.generic_step: the public, validating estimators and prox, one Python round trip per step)
calls the same kernels in the same order on the same base samples, so the two must agree bit for bit: iterates,
averages and the index of a divergent step.  Targets: a CallableTarget around numba.njit functions, a posteriordb
model (batched Numba kernel), and both seen through an affine frame (the path refvi.fit takes by default).  The one
exception: Prox-SGD with the energy estimator and triangular C on the per-point CallableTarget in a lower-triangular
frame runs refvi.kernels.framed.framed_prox_loop, the same step's O(S d^2) arithmetic in another order, which
agrees to rounding (1e-12 relative; tests/kernels/test_framed_loop.py holds it to a NumPy replay)."""

import numba
import numpy as np
import pytest
from _fits import fit_expecting  # tests/_fits.py

from refvi.optim import fastpath
from refvi.optim.frame import find_frame
from refvi.targets import CallableTarget, posteriordb
from refvi.targets.affine import AffineTarget


@numba.njit
def _logp(z):
    return -0.5 * np.sum(z * z) - np.cos(z[0]) - 0.1 * z[1] ** 4


@numba.njit
def _grad(z):
    g = -z.copy()
    g[0] += np.sin(z[0])
    g[1] -= 0.4 * z[1] ** 3
    return g


@numba.njit
def _grad_nan_far(z):                     # finite near 0, NaN once |z_0| > 3: a run that wanders there diverges
    g = -z.copy()
    if abs(z[0]) > 3.0:
        g[0] = np.nan
    return g


def _targets():
    user = CallableTarget(_logp, _grad, 3, smoothness=5.0)
    pdb = posteriordb.load("kidiq-kidscore_interaction")
    z0 = np.asarray(pdb.reference["u_mean"])
    frame = find_frame(pdb)                                # the frame refvi.fit uses by default
    return [("user", user, 0.05, None), ("posteriordb", pdb, 1e-8, z0),
            ("user-framed", AffineTarget(user, 0.1 * np.ones(3), np.tril(np.ones((3, 3))) + np.eye(3)), 0.005, None),
            ("posteriordb-framed", frame.target(pdb), 0.1, None)]


CASES = [("prox", "energy", "tril"), ("prox", "energy", "diag"), ("proj", "entropy", "sym"),
         ("proj", "stl", "sym"), ("proj", "entropy", "full"), ("prox", "stl", "tril")]


def _run(target, method, estimator, structure, U, gamma, fast, M=25.0, m0=None):
    d = target.dim
    T = U.shape[0]
    m = np.zeros(d) if m0 is None else m0.copy()
    C = np.eye(d) * (1.0 if method == "prox" else 0.9)
    w = np.linspace(0.0, 1.0, T + 1)
    w /= w.sum()
    am, aC = w[0] * m, w[0] * C
    status = fastpath.run(method, target, estimator, structure, m, C, U, np.full(T, gamma), w, am, aC, M=M,
                          fast=fast)
    return status, m, C, am, aC


@pytest.mark.parametrize("method,estimator,structure", CASES)
@pytest.mark.parametrize("S", [1, 4])
def test_fused_loop_equals_generic_path_bit_for_bit(method, estimator, structure, S):
    for name, target, gamma, m0 in _targets():
        assert fastpath.has_fast_path(target, estimator) and fastpath.kernel_plan(target) is None, name
        U = np.random.default_rng([S, len(structure)]).standard_normal((40, S, target.dim))
        fused = _run(target, method, estimator, structure, U, gamma, True, m0=m0)
        generic = _run(target, method, estimator, structure, U, gamma, False, m0=m0)
        assert fused[0] == generic[0] == -1, (name, fused[0], generic[0])
        framed_loop = fastpath.framed_plan(target, method, estimator, structure) is not None
        assert framed_loop == (name == "user-framed" and (method, estimator, structure) == CASES[0]), name
        for a, b in zip(fused[1:], generic[1:]):
            if framed_loop:  # the same arithmetic in another order
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=name)
            else:
                assert np.array_equal(a, b), (name, np.max(np.abs(a - b)))


@pytest.mark.parametrize("method,estimator,structure", CASES[:3])
def test_divergence_is_reported_at_the_same_step_with_the_same_state(method, estimator, structure):
    target = CallableTarget(_logp, _grad, 3, smoothness=5.0)
    U = np.random.default_rng(1).standard_normal((60, 2, 3))
    if method == "prox":    # (Proj-SGD at such a step loses positive definiteness to rounding first: both raise)
        fused = _run(target, method, estimator, structure, U, 3.0, True)        # step 3 >> 1/M: blows up
        generic = _run(target, method, estimator, structure, U, 3.0, False)
        assert 0 <= fused[0] == generic[0] < 60
        for a, b in zip(fused[1:], generic[1:]):
            assert np.array_equal(a, b) and np.all(np.isfinite(a))              # the last finite state w^t
    # a user gradient that turns NaN where the iterates go: divergence at that step, not an exception
    nan_far = CallableTarget(_logp, _grad_nan_far, 3, smoothness=1.0)
    m0 = np.array([2.5, 0.0, 0.0])
    drift = np.zeros((60, 1, 3))
    drift[:, 0, 0] = 1.0                                                    # z_0 = m_0 + C_00 > 3 from step 0
    fused = _run(nan_far, method, estimator, structure, drift, 0.1, True, m0=m0)
    generic = _run(nan_far, method, estimator, structure, drift, 0.1, False, m0=m0)
    assert fused[0] == generic[0] == 0


def test_fit_takes_the_fused_loop_for_njit_callables_and_posteriordb():
    user = CallableTarget(_logp, _grad, 3, smoothness=5.0)
    a = fit_expecting(user, steps=300, seed=2)
    b = fit_expecting(user, steps=300, seed=2, fast=False)
    assert a.fast_path and not b.fast_path
    # fit's default Laplace frame: the framed loop, the generic path's arithmetic in another order
    np.testing.assert_allclose(a.m, b.m, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.C, b.C, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.trace_objective, b.trace_objective, rtol=1e-10)
    pdb = posteriordb.load("arK-arK")
    r = fit_expecting(pdb, steps=300, seed=0)
    assert r.fast_path and r.frame is not None
    plain = CallableTarget(lambda z: _logp.py_func(z), lambda z: _grad.py_func(z), 3, smoothness=5.0)
    assert not fit_expecting(plain, steps=10).fast_path                        # plain Python: the generic loop


def test_the_loop_refuses_arrays_its_step_callback_cannot_take():
    """The step is a C callback of fixed signature (C-contiguous float64 arrays, ``fused.STEP_SIGNATURE``): a
    non-contiguous or float32 iterate is a ValueError naming the arrays, before anything is written."""
    target = CallableTarget(_logp, _grad, 3, smoothness=5.0)
    U = np.random.default_rng(0).standard_normal((5, 1, 3))
    w = np.full(6, 1 / 6)
    m, am, aC = np.zeros(3), np.zeros(3), np.zeros((3, 3))
    C = np.asfortranarray(np.tril(np.ones((3, 3))))          # Fortran order: not C-contiguous
    C0 = C.copy()
    with pytest.raises(ValueError, match="C-contiguous float64"):
        fastpath.run("prox", target, "energy", "tril", m, C, U, np.full(5, 0.01), w, am, aC)
    assert np.array_equal(C, C0) and not m.any()
    m32 = np.zeros(3, dtype=np.float32)                                    # float32: not what the callback takes
    with pytest.raises(ValueError, match="C-contiguous float64"):
        fastpath.run("prox", target, "energy", "tril", m32, np.eye(3), U, np.full(5, 0.01), w, am, aC)
    assert not m32.any()


def test_fast_false_runs_the_generic_path_step_by_step(monkeypatch):
    """``fast=False`` is the reference the fused loop is compared with above: it must take the generic path (one
    validated ``generic_step`` per step), or those comparisons would hold a loop against itself."""
    calls = []
    step = fastpath.generic_step

    def counted(*args, **kwargs):
        calls.append(args[2])
        return step(*args, **kwargs)

    monkeypatch.setattr(fastpath, "generic_step", counted)
    user = CallableTarget(_logp, _grad, 3, smoothness=5.0)
    U = np.random.default_rng(4).standard_normal((7, 2, 3))
    for estimator in ("energy", "entropy", "stl"):
        calls.clear()
        status = _run(user, "prox", estimator, "tril", U, 0.05, False)[0]
        assert status == -1 and calls == [estimator] * 7
        calls.clear()
        assert _run(user, "prox", estimator, "tril", U, 0.05, True)[0] == -1 and calls == []
