"""refvi.prox (Numba kernels) against independent oracles (seed 000 Lemmas 31, 32; seed 002 Thm 7).

entropy_prox: scipy.optimize.minimize_scalar / minimize on the defining problem, the SymPy root (evaluated in mpmath),
the optimality condition B_ii - C_ii - gamma / B_ii = 0, unchanged off-diagonals.
project_wm (symmetric): membership in W_M, idempotence, the distance formula, the variational inequality of a convex
projection, and a brute-force SLSQP solve in d = 2.  project_singular_values: Mirsky's inequality
||X - C||_F >= ||sigma(X) - sigma(C)||_2 makes the clip a global nearest point of {sigma_min >= 1/sqrt(M)}; checked
against random feasible X and a multi-start SLSQP in d = 2.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from refvi.prox import entropy_prox, project_singular_values, project_wm
from refvi.verification.oracles import symbolic as SY

_ROOT = sp.lambdify((SY.C_SYM, SY.GAMMA_SYM), SY.prox_scalar_solution(), modules="mpmath")


def _root_mp(c, gamma, dps=60):
    with mp.workdps(dps):
        return float(_ROOT(mp.mpf(c), mp.mpf(gamma)))


def _tril(rng, d, scale=1.0):
    return np.tril(scale * rng.standard_normal((d, d)))


# ------------------------------------------------------------------------------------------------- entropy prox
@settings(max_examples=40, deadline=None, derandomize=True)
@given(c=st.floats(-5, 5), gamma=st.floats(1e-3, 10))
def test_entropy_prox_scalar_vs_minimize_scalar_and_sympy(c, gamma):
    b = entropy_prox(np.array([[c]]), gamma)[0, 0]
    obj = lambda x: -np.log(x) + (x - c) ** 2 / (2 * gamma)  # noqa: E731
    res = optimize.minimize_scalar(obj, bounds=(1e-12, abs(c) + 2 * np.sqrt(gamma) + 1), method="bounded",
                                   options={"xatol": 1e-12})
    # bounded Brent: x accurate to ~sqrt(eps) relative near a smooth minimum -> 1e-6
    assert b == pytest.approx(res.x, rel=1e-6, abs=1e-9)
    assert obj(b) <= obj(res.x) + 1e-14 * (1 + abs(obj(b)))     # the kernel's point is at least as good
    # 60-digit SymPy root: in this range (|c| <= 5, gamma >= 1e-3) the cancellation loss is <= ~1e4 eps
    assert b == pytest.approx(_root_mp(c, gamma), rel=1e-11)


def test_entropy_prox_matrix_optimality_condition_and_off_diagonals():
    rng = np.random.default_rng(30)
    for d in (1, 2, 4, 6):
        for gamma in (1e-3, 0.1, 2.0):
            C = _tril(rng, d, 3.0)              # diagonal of both signs, |c| up to ~10 >> sqrt(gamma)
            B = entropy_prox(C, gamma)
            np.testing.assert_array_equal(np.tril(B, -1), np.tril(C, -1))      # off-diagonals unchanged, bit-exact
            np.testing.assert_array_equal(np.triu(B, 1), 0.0)
            b, c = np.diag(B), np.diag(C)
            assert np.all(b > 0)
            # stationarity of -log b + (b - c)^2 / (2 gamma): b - c - gamma / b = 0; rounding ~ eps (|b| + |c|)
            resid = np.abs(b - c - gamma / b) / (np.abs(b) + np.abs(c) + gamma / b)
            assert np.all(resid <= 1e-14), resid


def test_entropy_prox_matches_brute_force_matrix_problem():
    """argmin_{B lower-triangular} -sum log B_ii + ||B - C||_F^2 / (2 gamma) by scipy.optimize.minimize, d = 2."""
    rng = np.random.default_rng(31)
    for _ in range(5):
        C, gamma = _tril(rng, 2), rng.uniform(0.05, 2.0)
        idx = np.tril_indices(2)

        def obj(p):
            B = np.zeros((2, 2))
            B[idx] = p
            if np.any(np.diag(B) <= 0):
                return np.inf
            return -np.sum(np.log(np.diag(B))) + np.sum((B - C) ** 2) / (2 * gamma)

        x0 = np.where(idx[0] == idx[1], 1.0, 0.0)
        res = optimize.minimize(obj, x0, method="Nelder-Mead",
                                options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 20000})
        B = entropy_prox(C, gamma)
        np.testing.assert_allclose(B[idx], res.x, rtol=1e-6, atol=1e-7)       # Nelder-Mead x accuracy ~1e-8
        assert obj(B[idx]) <= res.fun + 1e-13


def test_entropy_prox_accurate_across_magnitudes_moderate():
    """|c| up to 1e3 and gamma down to 1e-4: relative error vs the 60-digit root stays below 1e-9."""
    for c in (-1e3, -10.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 10.0, 1e3):
        for gamma in (1e-4, 1e-2, 1.0, 1e2):
            b = entropy_prox(np.array([[c]]), gamma)[0, 0]
            assert b == pytest.approx(_root_mp(c, gamma), rel=1e-9), (c, gamma)


def test_entropy_prox_accurate_across_magnitudes_wide():
    """SciPy _mptestutils style sweep: c over +-[1e-8, 1e8] (and +-1e200), gamma over [1e-8, 1e4], 1e-13 relative.

    The printed form (c + sqrt(c^2 + 4 gamma)) / 2 cancels for c << -sqrt(gamma): at c = -1e8, gamma = 1e-2 it
    returns 0.0 (outside W; the root is 1e-10) and overflows c^2 for |c| > 1e154.  This sweep caught both.
    """
    for c in np.concatenate([-np.logspace(-8, 8, 9), [0.0, -1e200, 1e200], np.logspace(-8, 8, 9)]):
        for gamma in np.logspace(-8, 4, 7):
            b = entropy_prox(np.array([[c]]), gamma)[0, 0]
            assert b > 0 and b == pytest.approx(_root_mp(c, gamma), rel=1e-13), (c, gamma)
            # stationarity residual of a correctly rounded b is ~eps (|b| + |c| + gamma / b)
            assert abs(b - c - gamma / b) <= 1e-14 * (abs(b) + abs(c) + gamma / b), (c, gamma)


def test_entropy_prox_at_the_ends_of_float64():
    """Where 2 gamma, c + r or r - c overflow the root is still finite and normal: gamma = 1e308, c = -1e296 has root
    1e12 (the loop's 2 gamma / (r - c) gave inf), c = -1.7e308 with gamma = 1e300 has 5.9e-9 (it gave 0, outside W),
    c = 1.7e308 has 1.7e308 (it gave inf)."""
    for c, gamma in ((-1e296, 1e308), (-1.7e308, 1e300), (1.7e308, 1e308), (-1e200, 1e300), (1e-300, 1e308)):
        b = entropy_prox(np.array([[c]]), gamma)[0, 0]
        assert b > 0 and b == pytest.approx(_root_mp(c, gamma, dps=800), rel=1e-13), (c, gamma)


# --------------------------------------------------------------------------------------- projection onto W_M
def _rand_sym(rng, d, scale=1.0):
    A = scale * rng.standard_normal((d, d))
    return 0.5 * (A + A.T)


def _rand_in_wm(rng, d, r):
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = r + rng.exponential(1.0, d) * rng.choice([0.0, 1.0], d)     # some eigenvalues exactly on the boundary
    S = (Q * lam) @ Q.T
    return 0.5 * (S + S.T)


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_project_wm_membership_idempotence_distance_and_variational_inequality(d):
    rng = np.random.default_rng(32 + d)
    for M in (0.5, 4.0, 100.0):
        r = 1 / np.sqrt(M)
        for _ in range(6):
            C = _rand_sym(rng, d)
            P = project_wm(C, M, "sym")
            np.testing.assert_allclose(P, P.T, atol=1e-15)
            lamP = np.linalg.eigvalsh(0.5 * (P + P.T))
            assert lamP[0] >= r - 1e-13                                   # in W_M up to eigh rounding
            P2 = project_wm(0.5 * (P + P.T), M, "sym")
            np.testing.assert_allclose(P2, P, atol=1e-13)                 # idempotent
            lamC = np.linalg.eigvalsh(C)
            dist2 = np.sum(np.maximum(r - lamC, 0.0) ** 2)                # ||C - P||^2 = sum (r - lam_i)_+^2
            assert np.sum((C - P) ** 2) == pytest.approx(dist2, rel=1e-10, abs=1e-26)
            for _ in range(5):                                            # <C - P, D - P> <= 0 for all D in W_M
                D = _rand_in_wm(rng, d, r)
                scale = np.linalg.norm(C - P) * np.linalg.norm(D - P)
                assert np.sum((C - P) * (D - P)) <= 1e-12 * (1 + scale)
                assert np.linalg.norm(C - D) >= np.linalg.norm(C - P) - 1e-13


def test_project_wm_brute_force_d2():
    """SLSQP over symmetric 2 x 2 S with lambda_min(S) >= r written in closed form."""
    rng = np.random.default_rng(40)

    def lam_min(p):
        a, b, c = p
        return 0.5 * (a + c) - np.sqrt(0.25 * (a - c) ** 2 + b * b)

    for M in (0.7, 3.0):
        r = 1 / np.sqrt(M)
        for _ in range(6):
            C = _rand_sym(rng, 2, 1.5)
            target = np.array([C[0, 0], C[0, 1], C[1, 1]])
            def obj(p, t=target):
                return (p[0] - t[0]) ** 2 + 2 * (p[1] - t[1]) ** 2 + (p[2] - t[2]) ** 2
            res = optimize.minimize(obj, np.array([r + 1, 0.0, r + 1]), method="SLSQP",
                                    constraints=[{"type": "ineq", "fun": lambda p: lam_min(p) - r}],
                                    options={"ftol": 1e-15, "maxiter": 500})
            P = project_wm(C, M, "sym")
            # SLSQP solves to ~1e-7 in x; the kernel's objective must not exceed SLSQP's (it is the exact minimizer)
            np.testing.assert_allclose([P[0, 0], P[0, 1], P[1, 1]], res.x, atol=2e-6)
            assert obj([P[0, 0], P[0, 1], P[1, 1]]) <= res.fun + 1e-10


def _sigma_min_2x2(X):
    n2 = np.sum(X * X)
    det = X[0, 0] * X[1, 1] - X[0, 1] * X[1, 0]
    return np.sqrt(max(0.5 * (n2 - np.sqrt(max(n2 * n2 - 4 * det * det, 0.0))), 0.0))


def test_project_singular_values_nearest_point_and_brute_force_d2():
    rng = np.random.default_rng(41)
    for M in (0.5, 2.0, 10.0):
        r = 1 / np.sqrt(M)
        for _ in range(5):
            C = rng.standard_normal((2, 2))
            P = project_singular_values(C, M)
            s = np.linalg.svd(P, compute_uv=False)
            assert s[-1] >= r - 1e-13
            sC = np.linalg.svd(C, compute_uv=False)
            dist = np.sqrt(np.sum((np.maximum(sC, r) - sC) ** 2))        # Mirsky lower bound, attained by the clip
            assert np.linalg.norm(C - P) == pytest.approx(dist, rel=1e-10, abs=1e-14)
            best = np.inf
            for _ in range(8):                                            # multi-start over both det-sign components
                x0 = C + 0.5 * rng.standard_normal((2, 2))                  # infeasible starts are fine for SLSQP
                res = optimize.minimize(lambda p: np.sum((p.reshape(2, 2) - C) ** 2), x0.ravel(), method="SLSQP",
                                        constraints=[{"type": "ineq",
                                                      "fun": lambda p: _sigma_min_2x2(p.reshape(2, 2)) - r}],
                                        options={"ftol": 1e-14, "maxiter": 500})
                if res.success and _sigma_min_2x2(res.x.reshape(2, 2)) >= r - 1e-9:
                    best = min(best, res.fun)
            # no feasible point found by brute force is closer than the clip (SLSQP feasibility tolerance ~1e-9)
            assert best >= dist**2 - 1e-7
            assert best <= dist**2 + 1e-5                                   # and the brute force finds it
            for _ in range(20):                                             # random feasible X are never closer
                U, _, Vt = np.linalg.svd(rng.standard_normal((2, 2)))
                X = (U * (r + rng.exponential(1.0, 2))) @ Vt
                assert np.linalg.norm(X - C) >= dist - 1e-12


def test_project_wm_full_structure_is_singular_clip():
    rng = np.random.default_rng(42)
    C = rng.standard_normal((3, 3))
    np.testing.assert_allclose(project_wm(C, 2.0, "full"), project_singular_values(C, 2.0), atol=1e-14)
