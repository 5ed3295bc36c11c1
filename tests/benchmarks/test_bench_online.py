"""pytest-benchmark: each seed-003 online learner over a stream of 10^5 points in d = 20 (hinge loss), Numba kernel
against the plain-NumPy loop of the same computation (online_numpy.py: the example implementation's per-point
loops), same run.

The default test run (--benchmark-disable) runs each case once on a 2 * 10^3-point prefix to stay fast; with
``--benchmark-enable`` the full 10^5-point stream is timed:
    python -m pytest tests/benchmarks/test_bench_online.py --benchmark-enable
"""

import math

import numpy as np
import online_numpy as ref
import pytest

from refvi import online

D = 20


def _n(benchmark):
    return 100_000 if not benchmark.disabled else 2_000


def _stream(n):
    rng = np.random.default_rng([n, D])
    X = rng.normal(size=(n, D)) / math.sqrt(D)
    y = np.where(X @ np.linspace(-1, 1, D) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


CASES = {
    "sva": (lambda X, y: online.SVA(D, eta=1 / math.sqrt(X.shape[0]), mbox=20.0, sbox=1.0).run(X, y),
            lambda X, y: ref.sva(X, y, "hinge", 1 / math.sqrt(X.shape[0]), 1.0, 20.0, 1.0)),
    "svb": (lambda X, y: online.SVB(D, K=1.0, mbox=20.0, sbox=1.0).run(X, y),
            lambda X, y: ref.svb(X, y, "hinge", 1.0, 1.0, 20.0, 1.0)),
    "ngvi": (lambda X, y: online.NGVI(D, eta=1.0, beta=0.01, mbox=20.0, sbox=1.0).run(X, y),
             lambda X, y: ref.ngvi(X, y, "hinge", 1.0, 0.01, 1.0, 20.0, 1.0)),
    "oga": (lambda X, y: online.OGA(D, eta=1 / math.sqrt(X.shape[0]), mbox=20.0).run(X, y),
            lambda X, y: ref.oga(X, y, "hinge", 1 / math.sqrt(X.shape[0]), 20.0)),
    "ogael": (lambda X, y: online.OGAEL(D, eta=1 / math.sqrt(X.shape[0]), mbox=20.0, sbox=1.0).run(X, y),
              lambda X, y: ref.ogael(X, y, "hinge", 1 / math.sqrt(X.shape[0]), 1.0, False, 20.0, 1.0)),
}


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("method", sorted(CASES))
def test_online_stream(benchmark, method, impl):
    n = _n(benchmark)
    benchmark.group = f"online {method} n={n} d={D}"
    X, y = _stream(n)
    kern, numpy_loop = CASES[method]
    if impl == "kernel":
        kern(X[:10], y[:10])                       # compile outside the timing
        res = benchmark.pedantic(kern, args=(X, y), rounds=5, iterations=1) if not benchmark.disabled \
            else benchmark(kern, X, y)
        losses = res.losses
    else:
        losses = benchmark.pedantic(numpy_loop, args=(X, y), rounds=1, iterations=1)[0]   # seconds per run
    # both roads compute the same losses (1e-9 relative after 10^5 rounds of the same formulas)
    if impl == "kernel" and n <= 2_000:
        np.testing.assert_allclose(losses, numpy_loop(X, y)[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("loss", ("hinge", "absolute"))
def test_expected_losses_batch(benchmark, impl, loss):
    """Closed-form bar L and gradients for every row of a 10^5 x 20 stream at one (m, sigma)."""
    n = _n(benchmark)
    benchmark.group = f"expected_losses {loss} n={n} d={D}"
    X, y = _stream(n)
    m, s = np.linspace(-0.5, 0.5, D), np.full(D, 0.3)
    if impl == "kernel":
        online.expected_loss(loss, X[:5], y[:5], m, s)
        v = benchmark(online.expected_loss, loss, X, y, m, s)[0]
    else:
        v = benchmark(ref.expected_batch, loss, X, y, m, s)[0]
    np.testing.assert_allclose(v, ref.expected_batch(loss, X, y, m, s)[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
def test_nn_mc_expected(benchmark, impl):
    """Monte Carlo expected loss of the ReLU network (h = 10, p = 9, S = 10 samples), 200 rounds."""
    from refvi.kernels import online_nn as kn
    from refvi.verification.oracles import online_nn_oracle as orc

    rng = np.random.default_rng(0)
    h, p = 10, 9
    d = h * (p + 2) + 1
    m, s = rng.normal(size=d) * 0.3, np.full(d, 0.5)
    X, y, U = rng.normal(size=(200, p)), rng.normal(size=200), rng.standard_normal((200, 10, d))
    benchmark.group = "nn_mc_expected 200 rounds"
    gm, gs = np.empty(d), np.empty(d)

    def kern():
        return [kn.nn_mc_expected(m, s, X[t], y[t], h, U[t], gm, gs) for t in range(200)]

    def numpy_version():
        return [ref.nn_mc_numpy(m, s, X[t], y[t], h, U[t])[0] for t in range(200)]

    kern()
    out = benchmark(kern if impl == "kernel" else numpy_version)
    np.testing.assert_allclose(out, [orc.mc_expected(m, s, X[t], y[t], h, U[t])[0] for t in range(200)],
                               rtol=1e-12)
