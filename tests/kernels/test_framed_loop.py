"""refvi.kernels.framed.framed_prox_loop (Prox-SGD with the energy estimator in a lower-triangular frame, the path of
refvi.fit's default on the built-in targets) against a plain NumPy replay of seed 000 Def. 5 on the framed target:
x_s = C u_s + m, z_s = z0 + L x_s, gx_s = -L^T grad log p(z_s) (the target's NumPy gradient), m' = m - gamma mean gx,
C' = prox_{gamma h}(C - gamma tril(mean gx_s u_s^T)) (Lemma 31's closed form), averages with the given weights."""

import numpy as np
import pytest

from refvi.kernels import framed
from refvi.kernels.prox import entropy_prox
from refvi.optim import fastpath
from refvi.targets import Gaussian, LinearRegression, LogisticRegression
from refvi.targets.affine import AffineTarget


def _numpy_replay(target, z0, L, m, C, U, gammas, weights, negatives=None):
    """The framed Prox-SGD loop in NumPy; ``negatives`` (a list) collects how many prox inputs c were below 0."""
    m, C = m.copy(), C.copy()
    am, aC = weights[0] * m, weights[0] * C
    for t, (u, g) in enumerate(zip(U, gammas)):
        X = u @ C.T + m
        G = -target.grad_logp(X @ L.T + z0) @ L                     # rows -L^T grad log p(z_s)
        gm, gC = G.mean(axis=0), np.tril(G.T @ u / len(u))
        m, Y = m - g * gm, C - g * gC
        c = np.diag(Y).copy()
        root = np.sqrt(c * c + 4 * g)
        # Lemma 31: the printed root for c >= 0, the same root 2 gamma / (root - c) for c < 0 (no cancellation)
        Y[np.diag_indices_from(Y)] = np.where(c >= 0, 0.5 * (c + root), 2 * g / (root - np.minimum(c, 0.0)))
        if negatives is not None:
            negatives.append(int(np.sum(c < 0)))
        C = Y
        am, aC = am + weights[t + 1] * m, aC + weights[t + 1] * C
    return m, C, am, aC


def _case(kind, d, N, rng):
    X = rng.standard_normal((N, d))
    if kind == "linear":
        base = LinearRegression(X, X @ rng.standard_normal(d) + rng.standard_normal(N), noise_scale=0.7)
    elif kind == "logistic":
        base = LogisticRegression(X, np.sign(rng.standard_normal(N)), prior_scale=1.5)
    else:
        B = rng.standard_normal((d, d))
        base = Gaussian(rng.standard_normal(d), B @ B.T / d + np.eye(d))
    H = -base.hess_logp(np.zeros(d))
    L = np.linalg.cholesky(np.linalg.inv(H))                        # a Laplace-like frame: lower, positive diagonal
    return base, rng.standard_normal(d) * 0.1, L


@pytest.mark.parametrize("kind", ["linear", "logistic", "gaussian"])
@pytest.mark.parametrize("d,S", [(3, 1), (7, 4), (45, 1), (45, 3)])
def test_framed_loop_matches_the_numpy_replay(kind, d, S):
    rng = np.random.default_rng([d, S, len(kind)])
    base, z0, L = _case(kind, d, 2 * d + 5, rng)
    T = 30
    U = rng.standard_normal((T, S, d))
    gammas = np.linspace(0.02, 0.005, T) / (d + 3)
    w = np.zeros(T + 1)
    w[T // 2 + 1:] = 1.0
    w /= w.sum()
    m0 = rng.standard_normal(d) * 0.2
    C0 = np.tril(rng.standard_normal((d, d)) * 0.05, -1) + np.diag(rng.uniform(0.5, 1.5, d))
    m, C = m0.copy(), C0.copy()
    am, aC = w[0] * m, w[0] * C
    code, P2, P1, s1, s2 = base.kernels().sgd_loop
    status = framed.framed_prox_loop(code, m, C, U, gammas, w, am, aC, z0, L, P2, P1, s1, s2, 0)
    assert status == -1
    want = _numpy_replay(base, z0, L, m0, C0, U, gammas, w)
    for got, ref in zip((m, C, am, aC), want):
        # the same arithmetic in another order: a few ulp per operation, ~T d accumulated roundings
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(ref).max()))
    assert not np.triu(C, 1).any() and not np.triu(aC, 1).any()


def test_framed_loop_is_deterministic_and_fit_takes_it():
    rng = np.random.default_rng(5)
    base, z0, L = _case("logistic", 40, 90, rng)
    at = AffineTarget(base, z0, L)
    assert fastpath.framed_plan(at, "prox", "energy", "tril") is not None
    assert fastpath.framed_plan(at, "prox", "energy", "diag") is None          # other structures: the fused loop
    assert fastpath.framed_plan(AffineTarget(base, z0, L.T), "prox", "energy", "tril") is None   # an upper L
    U = rng.standard_normal((50, 1, 40))
    runs = []
    for _ in range(2):
        m, C = np.zeros(40), np.eye(40)
        w = np.full(51, 1 / 51)
        am, aC = w[0] * m, w[0] * C
        fastpath.run("prox", at, "energy", "tril", m, C, U, np.full(50, 1e-3), w, am, aC)
        runs.append((m, C, am, aC))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


@pytest.mark.parametrize(
    ("bad_gamma", "S"),
    [
        (np.inf, 1),  # step 17 cannot be finite
        # finite, but its rank-S update would reach 1e300 (max|C| + gamma max|gx| max|u| S, the loop's overflow guard)
        (1e302, 2),
    ],
    ids=["non-finite", "too-large-to-write"],
)
def test_framed_loop_stops_at_a_step_it_cannot_take_with_the_last_finite_state(bad_gamma, S):
    rng = np.random.default_rng(2)
    base, z0, L = _case("linear", 6, 20, rng)
    code, P2, P1, s1, s2 = base.kernels().sgd_loop
    T = 40
    U = rng.standard_normal((T, S, 6))
    gammas = np.full(T, 1e-3)
    gammas[17] = bad_gamma
    m, C = np.zeros(6), np.eye(6)
    w = np.full(T + 1, 1 / (T + 1))
    am, aC = w[0] * m, w[0] * C
    status = framed.framed_prox_loop(code, m, C, U, gammas, w, am, aC, z0, L, P2, P1, s1, s2, 0)
    assert status == 17
    want = _numpy_replay(base, z0, L, np.zeros(6), np.eye(6), U[:17], gammas[:17], w[:18])
    np.testing.assert_allclose(m, want[0], rtol=1e-12)
    np.testing.assert_allclose(C, want[1], rtol=1e-12)


def test_framed_loop_of_no_steps_is_a_finished_run_that_leaves_everything_as_it_was():
    rng = np.random.default_rng(3)
    base, z0, L = _case("linear", 3, 10, rng)
    code, P2, P1, s1, s2 = base.kernels().sgd_loop
    m, C, am, aC = np.ones(3), np.eye(3), np.zeros(3), np.zeros((3, 3))
    status = framed.framed_prox_loop(
        code, m, C, np.empty((0, 1, 3)), np.empty(0), np.ones(1), am, aC, z0, L, P2, P1, s1, s2, 0
    )
    assert status == -1  # no failing step
    assert np.array_equal(m, np.ones(3)) and np.array_equal(C, np.eye(3)) and not am.any() and not aC.any()


def test_framed_loop_takes_a_huge_step_whose_prox_is_finite():
    """gamma = 1e308 on N(0, 1e300 I)'s flat framed target from m = 1e300, u = 1e-12: every guard passes (m' = -1e308,
    the rank-one update 1e296) and the prox diagonal's root is 1e12, not the inf of 2 gamma / (r - c)."""
    base = Gaussian(np.zeros(2), np.eye(2) * 1e-300)
    code, P2, P1, s1, s2 = base.kernels().sgd_loop
    m, C = np.full(2, 1e300), np.eye(2)
    U, w = np.full((1, 1, 2), 1e-12), np.array([0.0, 1.0])
    am, aC = np.zeros(2), np.zeros((2, 2))
    z0, L = np.zeros(2), np.eye(2)
    status = framed.framed_prox_loop(code, m, C, U, np.array([1e308]), w, am, aC, z0, L, P2, P1, s1, s2, 0)
    assert status == -1 and np.all(np.isfinite(C)) and np.all(np.isfinite(m))
    want = entropy_prox(np.array([[1.0 - 1e308 * (1e-300 * (1e300 + 1e-12)) * 1e-12]]), 1e308)[0, 0]
    np.testing.assert_allclose(np.diag(C), want, rtol=1e-12)
    np.testing.assert_allclose(np.diag(C), 1e12, rtol=1e-6)


def test_framed_loop_prox_of_a_slightly_negative_diagonal_with_a_tiny_step():
    """gamma = 1e-10 on a gradient of 1e10 turns C_00 = 1 into c = -0.9: the root gamma / |c| (1.1e-10) is where the
    printed form (c + sqrt(c^2 + 4 gamma)) / 2 cancels 9 digits; the loop's value is the kernel prox's (mpmath-checked
    in test_crosscheck_prox.py) to rounding."""
    base = Gaussian(np.zeros(2), np.eye(2))
    code, P2, P1, s1, s2 = base.kernels().sgd_loop
    m, C = np.array([1e10, 0.0]), np.eye(2)
    U, w = np.array([[[1.9, 0.0]]]), np.array([0.0, 1.0])
    am, aC = np.zeros(2), np.zeros((2, 2))
    status = framed.framed_prox_loop(code, m, C, U, np.array([1e-10]), w, am, aC, np.zeros(2), np.eye(2), P2, P1, s1, s2, 0)
    assert status == -1
    c = 1.0 - 1e-10 * (1e10 + 1.9) * 1.9
    assert -1.0 < c < -0.8
    np.testing.assert_allclose(C[0, 0], entropy_prox(np.array([[c]]), 1e-10)[0, 0], rtol=1e-9)


def test_framed_loop_prox_where_the_step_turns_the_diagonal_negative():
    """Steps of 0.6 from a start 3 sd away with S = 2 make C - gamma g_C's diagonal negative at some steps, where the
    prox takes its other branch, gamma / ((r - c) / 2): the loop against the NumPy replay."""
    rng = np.random.default_rng(9)
    base, z0, L = _case("gaussian", 3, 0, rng)
    T, S = 12, 2
    U = rng.standard_normal((T, S, 3))
    gammas = np.full(T, 0.6)
    w = np.full(T + 1, 1.0 / (T + 1))
    m, C = np.full(3, 3.0), np.eye(3)
    am, aC = w[0] * m, w[0] * C
    code, P2, P1, s1, s2 = base.kernels().sgd_loop
    assert framed.framed_prox_loop(code, m, C, U, gammas, w, am, aC, z0, L, P2, P1, s1, s2, 0) == -1
    negatives: list[int] = []
    want = _numpy_replay(base, z0, L, np.full(3, 3.0), np.eye(3), U, gammas, w, negatives)
    negative = sum(negatives)
    assert negative >= 3  # the instance does what it is for
    for got, ref in zip((m, C, am, aC), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(ref).max()))


def _user_target(base):
    """The base target's gradient written by a user: numba.njit, one point, in a CallableTarget (log p too)."""
    import numba

    from refvi.targets import CallableTarget

    P = -base.hess_logp(np.zeros(base.dim))
    b = base.grad_logp(np.zeros(base.dim))  # a Gaussian's gradient is affine: b - P z

    @numba.njit
    def logp(z):
        return b @ z - 0.5 * z @ (P @ z)

    @numba.njit
    def grad_logp(z):
        return b - P @ z

    return CallableTarget(logp, grad_logp, base.dim)


@pytest.mark.parametrize("d,S", [(7, 4), (45, 1)])
def test_a_users_numba_gradient_runs_the_framed_loop_and_matches_the_numpy_replay(d, S):
    rng = np.random.default_rng([d, S, 99])
    base, z0, L = _case("gaussian", d, 0, rng)
    user = _user_target(base)
    at = AffineTarget(user, z0, L)
    plan = fastpath.framed_plan(at, "prox", "energy", "tril")
    assert plan is not None and plan[2] == framed.USER and plan[-1] != 0
    T = 30
    U = rng.standard_normal((T, S, d))
    gammas = np.linspace(0.02, 0.005, T) / (d + 3)
    w = np.zeros(T + 1)
    w[T // 2 + 1:] = 1.0
    w /= w.sum()
    m0 = rng.standard_normal(d) * 0.2
    C0 = np.tril(rng.standard_normal((d, d)) * 0.05, -1) + np.diag(rng.uniform(0.5, 1.5, d))
    m, C = m0.copy(), C0.copy()
    am, aC = w[0] * m, w[0] * C
    assert fastpath.run("prox", at, "energy", "tril", m, C, U, gammas, w, am, aC) == -1
    want = _numpy_replay(base, z0, L, m0, C0, U, gammas, w)
    for got, ref in zip((m, C, am, aC), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(ref).max()))


def test_a_users_gradient_of_the_wrong_length_is_an_error_in_the_framed_loop():
    import numba

    from refvi.targets import CallableTarget

    @numba.njit
    def logp(z):
        return -0.5 * z @ z

    @numba.njit
    def grad_logp(z):
        return -z[:-1]

    at = AffineTarget(CallableTarget(logp, grad_logp, 3), np.zeros(3), np.eye(3))
    m, C, U = np.zeros(3), np.eye(3), np.ones((2, 1, 3))
    with pytest.raises(ValueError, match="shape"):
        fastpath.run("prox", at, "energy", "tril", m, C, U, np.full(2, 1e-3), np.zeros(3), np.zeros(3), np.zeros((3, 3)))


def test_the_overflow_guard_reads_the_largest_entry_of_C_after_each_step():
    """max|C| is recomputed row by row during a step; the next step's guard adds it to gamma max|gx| max|u| S.  With
    C_00 = 9.9e299 and a flat Gaussian (precision 1e-12), step 1's update (about 1e299) is small but the sum crosses
    1e300: the loop must stop there with the state of step 1, which a max|C| read as 0 would not."""
    d = 3
    base = Gaussian(np.zeros(d), 1e-12 * np.eye(d))  # (mean, precision)
    code, P2, P1, s1, s2 = base.kernels().sgd_loop
    U = np.ones((2, 1, d))
    gammas = np.array([1e-300, 1e11])
    m, C = np.zeros(d), np.diag([9.9e299, 1.0, 1.0])
    w = np.zeros(3)
    am, aC = np.zeros(d), np.zeros((d, d))
    status = framed.framed_prox_loop(code, m, C, U, gammas, w, am, aC, np.zeros(d), np.eye(d), P2, P1, s1, s2, 0)
    assert status == 1
    assert np.isclose(C[0, 0], 9.9e299, rtol=1e-12) and np.all(np.isfinite(C)) and np.all(np.isfinite(m))
