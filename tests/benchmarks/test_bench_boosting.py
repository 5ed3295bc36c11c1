"""pytest-benchmark: seed-001 boosting kernels against plain NumPy versions of the SAME computations, same run.

* exact LMO over K = 10^4 atoms x Q = 400 nodes: ``kb.exact_lmo`` vs ``argmin(T @ v)`` (one BLAS matrix-vector
  product; target kernel/NumPy <= 1.2);
* one full Frank-Wolfe iteration with exact line search (mixture on nodes, gradient, LMO, gap, line search, update):
  ``refvi.boosting.frank_wolfe`` vs :func:`numpy_fw_iteration`;
* atom table and Gram matrix: kernel vs vectorized NumPy / SciPy.

Timing:
    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m pytest tests/benchmarks/test_bench_boosting.py --benchmark-enable
"""

import functools
import math

import numpy as np
import pytest
from scipy import special

from refvi.boosting import AtomSet, BoostingProblem, Box, GaussianMixtureTarget, frank_wolfe
from refvi.kernels import boosting as kb

MOG = GaussianMixtureTarget([0.4, 0.6], [-0.5, 0.6], [0.5, 0.5])


@functools.cache
def lmo_case(K=10_000, Q=400):
    atoms = AtomSet(Box(-1, 1), np.linspace(-1, 1, K), 0.3)
    prob = BoostingProblem(atoms, MOG, order=20, panels=Q // 20)
    a = np.zeros(K)
    a[[100, 5000, 9000]] = (0.2, 0.3, 0.5)
    v = prob.w * prob.grad_nodes(a)
    return prob.T, v, prob, a


def numpy_lmo(T, v):
    sc = T @ v
    return int(np.argmin(sc)), sc


def numpy_line_search(q, s, logp, w, tol=1e-14):
    """The same safeguarded Newton / bisection as the kernel, written with NumPy reductions."""
    def d(g):
        diff = s - q
        y = q + g * diff
        return np.sum(w * diff * (np.log(y) - logp + 1.0)), np.sum(w * diff * diff / y)
    if d(0.0)[0] >= 0:
        return 0.0
    if d(1.0)[0] <= 0:
        return 1.0
    a, b, g = 0.0, 1.0, 0.5
    for _ in range(100):
        f1, f2 = d(g)
        if f1 > 0:
            b = g
        else:
            a = g
        if b - a <= tol:
            break
        gn = g - f1 / f2 if f2 > 0 else -1.0
        if not a < gn < b:
            gn = 0.5 * (a + b)
        if abs(gn - g) <= tol * 0.5:
            g = gn
            break
        g = gn
    return g


def numpy_fw_iteration(T, w, logp, alpha):
    """One FW iteration of Algorithm 1 with exact line search, plain NumPy (f, gap, LMO, step, update)."""
    q = alpha @ T
    g = np.log(q) - logp
    f = float(np.sum(w * q * g))
    sc = T @ (w * g)
    k = int(np.argmin(sc))
    gap = float(q @ (w * g) - sc[k])
    gam = numpy_line_search(q, T[k], logp, w)
    out = (1.0 - gam) * alpha
    out[k] += gam
    return out, f, gap


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
def test_exact_lmo_10k_by_400(benchmark, impl):
    benchmark.group = "exact LMO K=1e4 Q=400"
    T, v, _, _ = lmo_case()
    fn = kb.exact_lmo if impl == "kernel" else numpy_lmo
    k, sc = benchmark(fn, T, v)
    kr, ref = numpy_lmo(T, v)
    assert k == kr
    np.testing.assert_allclose(sc, ref, rtol=1e-12, atol=1e-14 * np.abs(ref).max())   # summation order only


@pytest.mark.parametrize("impl", ("refvi", "numpy"))
def test_fw_iteration(benchmark, impl):
    benchmark.group = "one FW iteration (line search) K=1e4 Q=400"
    T, _, prob, a = lmo_case()
    if impl == "refvi":
        res = benchmark(frank_wolfe, prob, 1, step="line_search", init=a)
        out = res.weights
    else:
        out, _, _ = benchmark(numpy_fw_iteration, T, prob.w, prob.logp, a)
    ref, _, _ = numpy_fw_iteration(T, prob.w, prob.logp, a)
    np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-12)


def numpy_atom_table(means, scales, lo, hi, nodes):
    lz = np.log(special.ndtr((hi - means) / scales) - special.ndtr((lo - means) / scales)).sum(1)
    t = (nodes[None, :, :] - means[:, None, :]) / scales[:, None, :]
    return np.exp(-0.5 * (t * t).sum(-1) - np.log(scales).sum(1)[:, None]
                  - 0.5 * means.shape[1] * math.log(2 * math.pi) - lz[:, None])


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
def test_atom_table(benchmark, impl):
    benchmark.group = "atom table K=1e4 Q=400"
    _, _, prob, _ = lmo_case()
    A = prob.atoms
    args = (A.means, A.scales, A.box.lo, A.box.hi, prob.nodes)
    fn = kb.atom_table if impl == "kernel" else numpy_atom_table
    np.testing.assert_allclose(benchmark(fn, *args), numpy_atom_table(*args), rtol=1e-12)


def numpy_gram(means, scales, lo, hi):
    def logz(m, s):
        return np.log(special.ndtr((hi - m) / s) - special.ndtr((lo - m) / s))
    mi, mj = means[:, None, :], means[None, :, :]
    si, sj = scales[:, None, :], scales[None, :, :]
    v = si ** 2 + sj ** 2
    m = (mi * sj ** 2 + mj * si ** 2) / v
    s = si * sj / np.sqrt(v)
    lg = -0.5 * (mi - mj) ** 2 / v - 0.5 * np.log(2 * np.pi * v) + logz(m, s)
    lzk = logz(means, scales).sum(1)
    return np.exp(lg.sum(-1) - lzk[:, None] - lzk[None, :])


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
def test_gram(benchmark, impl):
    benchmark.group = "Gram matrix K=400 d=2"
    rng = np.random.default_rng(0)
    lo, hi = np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    means = lo + 2 * rng.random((400, 2))
    scales = rng.uniform(0.2, 1.0, (400, 2))
    fn = kb.gram_matrix if impl == "kernel" else numpy_gram
    np.testing.assert_allclose(benchmark(fn, means, scales, lo, hi), numpy_gram(means, scales, lo, hi), rtol=1e-11)
