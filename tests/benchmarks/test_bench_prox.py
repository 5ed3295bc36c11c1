"""pytest-benchmark: prox / projection kernels against plain NumPy (and scipy.linalg.eigh as the floor of the
projection onto W_M), same run.  See test_bench_energy.py for how to run with timing."""

import bench_cases as bc
import numpy as np
import pytest

from refvi.kernels import prox as kp


def _check(a, b):
    # eigh / svd backward error ~ d eps ||C||: 1e-12 relative to the scale for d <= 100
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("impl", ("kernel", "numpy", "scipy_eigh"))
@pytest.mark.parametrize("d", bc.PROX_D)
def test_project_wm(benchmark, impl, d):
    benchmark.group = f"project_wm d={d}"
    C, M = bc.sym_case(d)
    if impl == "scipy_eigh":
        benchmark(bc.scipy_eigh, C, M)
        return
    fn = kp.project_wm_sym if impl == "kernel" else bc.numpy_project_wm
    _check(benchmark(fn, C, M), bc.numpy_project_wm(C, M))


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("d", bc.PROX_D)
def test_project_singular(benchmark, impl, d):
    bc.race(benchmark, impl, f"project_singular d={d}", kp.project_singular, bc.numpy_project_singular,
            bc.sym_case(d), _check)


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("d", bc.PROX_D)
def test_entropy_prox(benchmark, impl, d):
    bc.race(benchmark, impl, f"entropy_prox d={d}", kp.entropy_prox, bc.numpy_entropy_prox,
            (np.tril(bc.sym_case(d, 1)[0]), 0.3), _check)
