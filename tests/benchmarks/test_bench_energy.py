"""pytest-benchmark: each energy kernel against a plain NumPy version of the SAME computation, in the same run.

Default test runs use ``--benchmark-disable`` (each case runs once, as a smoke test that also checks agreement).
Timing:  NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m pytest tests/benchmarks --benchmark-enable
Ratios:  python tests/benchmarks/report_ratios.py
"""

import bench_cases as bc
import numpy as np
import pytest

from refvi import estimators
from refvi.kernels import energy as ke
from refvi.kernels import estimators as kest
from refvi.targets import LogisticRegression


def _check(out, ref):
    # same computation, different summation order and a ~1 ulp exp: agreement to 1e-12 of the output scale
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("impl", ("kernel", "numpy", "floor"))
@pytest.mark.parametrize("N,d,S", bc.LOGISTIC_GRID, ids=lambda v: str(v))
def test_logistic_energy(benchmark, impl, N, d, S):
    benchmark.group = f"logistic energy N={N} d={d} S={S}"
    a = bc.logistic_case(N, d, S)
    if impl == "floor":
        parts = bc.floor_parts(*a)
        benchmark(lambda: [p() for p in parts])
        return
    fn = ke.logistic_energy if impl == "kernel" else bc.numpy_logistic_energy
    _check(benchmark(fn, *a), bc.numpy_logistic_energy(*a))


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("N,d,S", bc.LINEAR_GRID, ids=lambda v: str(v))
def test_linear_energy(benchmark, impl, N, d, S):
    bc.race(benchmark, impl, f"linear energy N={N} d={d} S={S}", ke.linear_energy, bc.numpy_linear_energy, bc.linear_case(N, d, S), _check)


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("N,d,G,S", bc.HIER_GRID, ids=lambda v: str(v))
def test_hierarchical_energy(benchmark, impl, N, d, G, S):
    bc.race(benchmark, impl, f"hierarchical energy N={N} d={d} G={G} S={S}", ke.hierarchical_energy, bc.numpy_hier_energy, bc.hier_case(N, d, G, S), _check)


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("d,S", bc.SMALL_D_GRID, ids=lambda v: str(v))
def test_gaussian_energy(benchmark, impl, d, S):
    bc.race(benchmark, impl, f"gaussian energy d={d} S={S}", ke.gaussian_energy, bc.numpy_gaussian_energy, bc.gaussian_case(d, S), _check)


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("d,S", bc.SMALL_D_GRID, ids=lambda v: str(v))
def test_cosine_energy(benchmark, impl, d, S):
    bc.race(benchmark, impl, f"cosine energy d={d} S={S}", ke.cosine_energy, bc.numpy_cosine_energy, bc.cosine_case(d, S), _check)


@pytest.mark.parametrize("impl", ("refvi", "kernel", "numpy"))
@pytest.mark.parametrize("N,d,S", bc.LOGISTIC_GRID, ids=lambda v: str(v))
def test_logistic_energy_public(benchmark, impl, N, d, S):
    """The public call refvi.estimators.energy (validation included) against the bare kernel (+ projection onto V)
    and NumPy: the ratio to the kernel is the cost of validation (issue goal <= 1.3x at every size)."""
    benchmark.group = f"logistic energy, public call, N={N} d={d} S={S}"
    m, C, U, X, y, ipv = bc.logistic_case(N, d, S)
    target = LogisticRegression(X, y, prior_scale=ipv ** -0.5)
    if impl == "refvi":
        out = benchmark(estimators.energy, target, m, C, U)
    elif impl == "kernel":
        out = benchmark(lambda: kest.finish_energy(*ke.logistic_energy(m, C, U, target.X, target.y, ipv), 1))
    else:
        out = benchmark(lambda: (lambda g: (g[0], np.tril(g[1])))(bc.numpy_logistic_energy(m, C, U, X, y, ipv)))
    ref = bc.numpy_logistic_energy(m, C, U, X, y, ipv)
    _check(out, (ref[0], np.tril(ref[1])))
