"""pytest-benchmark: model constants, -log p (score estimator) and the entropy / STL / score tails, each against
plain NumPy in the same run."""

import bench_cases as bc
import numpy as np
import pytest

from refvi.kernels import constants as kc
from refvi.kernels import estimators as kest
from refvi.kernels import neglogp as kf
from refvi.kernels.structure import TRIL


def _check(a, b):
    # same math, different summation order / LAPACK driver: 1e-12 relative to the output scale
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, float(np.max(np.abs(b)))))


def _numpy_glm_constants(X, tmin, tmax, p):
    A = X.T @ X
    I = np.eye(X.shape[1])
    return np.linalg.eigvalsh(p * I + tmin * A)[0], np.linalg.eigvalsh(p * I + tmax * A)[-1]


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("N,d", ((1000, 10), (1000, 100)))
def test_glm_constants(benchmark, impl, N, d):
    benchmark.group = f"glm constants N={N} d={d}"
    X = bc.logistic_case(N, d, 1)[3]
    fn = kc.glm_constants if impl == "kernel" else _numpy_glm_constants
    _check(np.array(benchmark(fn, X, 0.0, 0.25, 1.0)), np.array(_numpy_glm_constants(X, 0.0, 0.25, 1.0)))


def _numpy_logistic_neglogp(Z, X, y, ipv, const):
    T = (Z @ X.T) * y
    return np.sum(np.logaddexp(0.0, -T), axis=1) + 0.5 * ipv * np.sum(Z * Z, axis=1) - const


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("N,d,S", ((1000, 100, 1), (1000, 100, 16)), ids=lambda v: str(v))
def test_logistic_neglogp(benchmark, impl, N, d, S):
    benchmark.group = f"logistic -log p N={N} d={d} S={S}"
    m, C, U, X, y, ipv = bc.logistic_case(N, d, S)
    Z = U @ C.T + m
    fn = kf.logistic_neglogp if impl == "kernel" else _numpy_logistic_neglogp
    _check(benchmark(fn, Z, X, y, ipv, -1.0), _numpy_logistic_neglogp(Z, X, y, ipv, -1.0))


def _numpy_stl_tail(gm, gC, C, U):
    V = np.linalg.solve(C.T, U.T).T
    return gm - V.mean(axis=0), np.tril(gC - (V.T @ U) / U.shape[0])


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("d,S", ((10, 16), (100, 16)), ids=lambda v: str(v))
def test_stl_tail(benchmark, impl, d, S):
    benchmark.group = f"stl tail d={d} S={S}"
    m, C, U, X, y, ipv = bc.logistic_case(50, d, S)
    gm, gC = np.ones(d), np.ones((d, d))
    fn = (lambda: kest.finish_stl(gm, gC, C, U, TRIL)) if impl == "kernel" else (lambda: _numpy_stl_tail(gm, gC, C, U))
    out, ref = benchmark(fn), _numpy_stl_tail(gm, gC, C, U)
    _check(out[0], ref[0])
    _check(out[1], ref[1])
