"""refvi.kernels.boosting against independent oracles (verification/oracles/boosting.py: scipy / mpmath / numpy),
composition inside @njit, bad input at the public API, and bit-identical determinism."""

import math

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from refvi.kernels import boosting as kb
from refvi.verification.oracles import boosting as ob

LO, HI = np.array([-1.0]), np.array([1.0])


@given(st.floats(-1, 1), st.floats(0.05, 3.0), st.floats(-1, 1), st.floats(0.05, 3.0))
def test_gram_entry_matches_mpmath(mi, si, mj, sj):
    G = kb.gram_matrix(np.array([[mi], [mj]]), np.array([[si], [sj]]), LO, HI)
    ref = ob.tn_inner_mpmath(mi, si, mj, sj, -1.0, 1.0)
    # closed form (erfc, one log-exp) vs 30-digit quadrature: agreement to 1e-12 relative
    assert G[0, 1] == pytest.approx(ref, rel=1e-12, abs=1e-300)
    assert G[0, 1] == G[1, 0]


def test_gram_2d_matches_quadpack():
    rng = np.random.default_rng(0)
    lo, hi = np.array([-1.0, 0.0]), np.array([2.0, 1.5])
    means = lo + (hi - lo) * rng.random((4, 2))
    scales = rng.uniform(0.2, 1.5, (4, 2))
    G = kb.gram_matrix(means, scales, lo, hi)
    for i in range(4):
        for j in range(4):
            ref = ob.tn_inner_quad(means[i], scales[i], means[j], scales[j], lo, hi)
            assert G[i, j] == pytest.approx(ref, rel=1e-9)      # QUADPACK epsrel 1e-12 per factor


@given(st.floats(-3, 3), st.floats(0.05, 5.0))
def test_log_normalizer_matches_scipy(mu, sigma):
    lz = kb.tn_log_normalizer(np.array([mu]), np.array([sigma]), np.array([-3.0]), np.array([3.0]))
    ref = math.log(stats.norm.cdf(3, mu, sigma) - stats.norm.cdf(-3, mu, sigma))
    assert lz == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_log_ndtr_diff_tails():
    # far tails, where Phi(b) - Phi(a) would cancel: compare with scipy's log_ndtr-based difference in mpmath
    import mpmath as mp
    for a, b in ((8.0, 9.0), (-9.0, -8.0), (30.0, 31.0), (-0.5, 0.7)):
        with mp.workdps(60):
            ref = float(mp.log(mp.ncdf(-a) - mp.ncdf(-b)) if a > 0 else mp.log(mp.ncdf(b) - mp.ncdf(a)))
        assert kb.log_ndtr_diff(a, b) == pytest.approx(ref, rel=1e-12)


def test_atom_table_matches_truncnorm():
    rng = np.random.default_rng(1)
    lo, hi = np.array([-1.0, -2.0]), np.array([1.0, 0.5])
    means = lo + (hi - lo) * rng.random((5, 2))
    scales = rng.uniform(0.1, 2.0, (5, 2))
    nodes = lo + (hi - lo) * rng.random((30, 2))
    T = kb.atom_table(means, scales, lo, hi, nodes)
    for k in range(5):
        ref = np.exp(ob.tn_logpdf(nodes, means[k], scales[k], lo, hi))
        np.testing.assert_allclose(T[k], ref, rtol=1e-12)        # scipy truncnorm, double precision


def test_exact_lmo_is_argmin_of_matvec():
    rng = np.random.default_rng(2)
    T = rng.random((300, 97))
    v = rng.standard_normal(97)
    k, sc = kb.exact_lmo(T, v)
    ref = T @ v
    np.testing.assert_allclose(sc, ref, rtol=1e-12, atol=1e-12)   # reassociated sums: ~Q eps relative
    assert k == int(np.argmin(ref))


def test_kl_line_search_matches_brent_on_quadpack():
    from refvi.boosting import AtomSet, BoostingProblem, Box, GaussianMixtureTarget
    atoms = AtomSet(Box(-1, 1), np.array([-0.6, 0.1, 0.7]), 0.4)
    tgt = GaussianMixtureTarget([0.5, 0.5], [-0.6, 0.7], [0.4, 0.4])
    prob = BoostingProblem(atoms, tgt)
    q = np.array([1.0, 0.0, 0.0])
    for k in (1, 2):
        g = kb.kl_line_search(prob.q_nodes(q), np.ascontiguousarray(prob.T[k]), prob.logp, prob.w)
        qpdf = lambda z: ob.mixture_pdf_1d(z, [1.0], [-0.6], [0.4], -1, 1)[0]          # noqa: E731
        spdf = lambda z, k=k: ob.mixture_pdf_1d(z, [1.0], [atoms.means[k, 0]], [0.4], -1, 1)[0]  # noqa: E731
        ref = ob.line_search_1d(qpdf, spdf, lambda z: float(tgt.logp(np.array([[z]]))[0]), -1, 1)
        assert g == pytest.approx(ref, abs=1e-6)                    # Brent xatol 1e-10 on a flat minimum: ~1e-6


def test_line_search_endpoints():
    w = np.full(4, 0.5)
    q = np.array([0.25, 0.25, 0.25, 0.25]) * 2
    logp = np.log(q)
    assert kb.kl_line_search(q, q * 1.0, logp, w) in (0.0, 1.0)   # s == q: phi is flat, no NaN
    s = np.array([1.0, 0.6, 0.3, 0.1])
    assert kb.kl_line_search(q, s, np.log(s), w) == pytest.approx(1.0, abs=1e-14)   # p == s: minimizer gamma = 1


@given(st.integers(0, 2**31), st.integers(2, 6))
def test_qp_simplex_matches_enumeration(seed, n):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n + 1))
    H = A @ A.T + 1e-3 * np.eye(n)
    b = rng.standard_normal(n)
    a0 = np.zeros(n)
    a0[rng.integers(n)] = 1.0
    a, its = kb.qp_simplex(H, b, a0)
    assert its < 100  # it stops once the KKT conditions hold (the cap is 1000)
    ref = ob.simplex_qp_enumerate(H, b)
    val = lambda x: 0.5 * x @ H @ x + b @ x                         # noqa: E731
    # exact KKT enumeration: objective agreement to 1e-10 (least-squares solves of conditioned KKT systems)
    assert val(a) <= val(ref) + 1e-10
    assert np.all(a >= 0) and a.sum() == pytest.approx(1.0, abs=1e-14)


def test_kernels_compose_inside_njit():
    @numba.njit
    def lmo_then_mixture(T, v):
        k, _ = kb.exact_lmo(T, v)
        a = np.zeros(T.shape[0])
        a[k] = 1.0
        q = kb.mixture_on_nodes(T, a)
        return k, kb.kl_on_nodes(q, np.zeros(T.shape[1]), np.ones(T.shape[1]))

    T = np.random.default_rng(3).random((10, 8)) + 0.1
    k, f = lmo_then_mixture(T, np.linspace(-1, 1, 8))
    assert k == int(np.argmin(T @ np.linspace(-1, 1, 8)))
    assert f == pytest.approx(float(np.sum(T[k] * np.log(T[k]))), rel=1e-12)


def test_determinism_bit_identical():
    from refvi.boosting import AtomSet, BoostingProblem, Box, GaussianMixtureTarget, StochasticLMO, frank_wolfe
    atoms = AtomSet.grid(Box(-1, 1), 0.05, 0.5)
    prob = BoostingProblem(atoms, GaussianMixtureTarget([0.4, 0.6], [-0.5, 0.6], [0.5, 0.5]))
    runs = [frank_wolfe(prob, 15, step="line_search", lmo=StochasticLMO(n_samples=16, n_steps=10, rng=7))
            for _ in range(2)]
    assert np.array_equal(runs[0].weights, runs[1].weights)
    assert np.array_equal(runs[0].f, runs[1].f)
    T1 = kb.atom_table(atoms.means, atoms.scales, atoms.box.lo, atoms.box.hi, prob.nodes)
    assert np.array_equal(T1, prob.T)
    G1 = kb.gram_matrix(atoms.means, atoms.scales, atoms.box.lo, atoms.box.hi)
    assert np.array_equal(G1, atoms.gram())
