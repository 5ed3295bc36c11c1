"""pytest-benchmark: the whole Prox-SGD loop of ``refvi.fit`` (Numba, refvi.kernels.optim.sgd_loop) against a plain
NumPy loop of the same algorithm (verification/oracles/sgd_reference.prox_sgd_logistic_s1), same run, same base
samples: breast-cancer logistic regression (569 x 31), S = 1, energy estimator, triangular C, gamma = 1/M.

Issue 3 targets: the Numba loop >= 3x faster per step than the NumPy loop, and <= 25 us per step.  Timing::

    NUMBA_NUM_THREADS=1 python -m pytest tests/benchmarks/test_bench_fit.py --benchmark-enable

(divide the reported times by STEPS for the per-step cost).  The default run (--benchmark-disable) runs each once.
"""

import numpy as np
import pytest

from refvi.kernels import optim as ko
from refvi.kernels.structure import structure_code
from refvi.targets import target_for
from refvi.verification.oracles import sgd_reference as ref

STEPS = 2000


@pytest.fixture(scope="module")
def case():
    t = target_for("breast_cancer")
    d = t.dim
    U = np.random.default_rng(0).standard_normal((STEPS, 1, d))
    return t, U, 1.0 / t.smoothness


def _kernel(t, U, gamma):
    d = t.dim
    m, C = np.zeros(d), np.eye(d)
    w = np.zeros(STEPS + 1)
    w[-1] = 1.0
    status = ko.sgd_loop(ko.PROX, ko.LOGISTIC, ko.ENERGY, structure_code("tril"), m, C, U, np.full(STEPS, gamma), w,
                         np.zeros(d), np.zeros((d, d)), 0.0, t.X, t.y, t.prior_scale ** -2, 0.0)
    assert status == -1
    return m, C


def _numpy(t, U, gamma):
    d = t.dim
    return ref.prox_sgd_logistic_s1(np.zeros(d), np.eye(d), U[:, 0, :], gamma, t.X, t.y, t.prior_scale ** -2)


@pytest.mark.parametrize("impl", ("numba_loop", "numpy_loop"))
def test_fit_loop_breast_cancer_s1(benchmark, case, impl):
    benchmark.group = f"Prox-SGD loop, breast cancer, S=1, {STEPS} steps"
    t, U, gamma = case
    fn = _kernel if impl == "numba_loop" else _numpy
    m, C = benchmark(fn, t, U, gamma)
    m_ref, C_ref = _numpy(t, U, gamma)
    # same algorithm: fastmath summation order only; 2000 contractive steps keep agreement at 1e-9 relative
    np.testing.assert_allclose(m, m_ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(C, C_ref, rtol=1e-9, atol=1e-9)


END_TO_END_STEPS = 10000


@pytest.mark.parametrize("impl", ("refvi", "numpy_loop"))
def test_fit_end_to_end_breast_cancer(benchmark, impl):
    """What a user waits for: refvi.fit(target, steps=10000) with defaults (setup, preflight, the objective trace,
    the result), against the plain NumPy loop of the same steps (no trace, no checks).  Issue goal: <= 12 us per
    step end to end (divide by END_TO_END_STEPS)."""
    import refvi

    t = target_for("breast_cancer")
    benchmark.group = f"refvi.fit end to end, breast cancer, defaults, {END_TO_END_STEPS} steps"
    if impl == "refvi":
        res = benchmark.pedantic(lambda: refvi.fit(t, steps=END_TO_END_STEPS, progress=False), rounds=3,
                                 warmup_rounds=1)
        # the default run is framed (its notes describe the frame and the start); none may say it restarted, climbed
        # or failed its diagnostics
        assert res.frame is not None and res.diagnostics.converged and np.all(np.isfinite(res.m))
        assert not any(w in n for n in res.notes for w in ("halved", "worse", "did not pass"))
    else:
        U = np.random.default_rng(0).standard_normal((END_TO_END_STEPS, t.dim))
        benchmark.pedantic(ref.prox_sgd_logistic_s1, args=(np.zeros(t.dim), np.eye(t.dim), U, 1.0 / t.smoothness,
                                                           t.X, t.y, t.prior_scale ** -2), rounds=1, warmup_rounds=0)
