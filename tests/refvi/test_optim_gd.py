"""Seed 002 gradient descent (exact gradients) and refvi's exact energy against the quadrature oracle."""

import numpy as np
import pytest

from refvi.optim import exact
from refvi.optim.gradient_descent import gradient_descent
from refvi.targets import Gaussian, LinearRegression, LogisticRegression
from refvi.verification.oracles import vi_objective as vo


@pytest.mark.parametrize("scale", [1e-4, 0.3, 3.0, 30.0])
def test_exact_energy_matches_oracle(scale):
    rng = np.random.default_rng(int(scale * 1000))
    X = rng.standard_normal((25, 3))
    y = np.where(rng.random(25) < 0.5, -1.0, 1.0)
    t = LogisticRegression(X, y, prior_scale=1.4)
    model = {"kind": "logistic", "X": X, "y": y, "prior_scale": 1.4}
    m = rng.standard_normal(3)
    C = scale * (np.tril(rng.standard_normal((3, 3))) + 2 * np.eye(3))
    l, gm, gC = exact.energy(t, m, C)
    l2, gm2, gC2 = vo.free_energy(model, m, C)
    # two different quadratures (Gauss-Legendre panels in s vs Gauss-Hermite / graded panels in t): 1e-11 relative
    assert abs(l - l2) <= 1e-11 * abs(l2)
    np.testing.assert_allclose(gm, gm2, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gC, gC2, rtol=1e-10, atol=1e-10)
    Xl, yl = X, rng.standard_normal(25)
    lt = LinearRegression(Xl, yl, noise_scale=0.7, prior_scale=1.2)
    lm = {"kind": "linear", "X": Xl, "y": yl, "noise_scale": 0.7, "prior_scale": 1.2}
    assert abs(exact.objective(lt, m, C) - vo.objective(lm, m, C)) <= 1e-10 * abs(vo.objective(lm, m, C))


def test_prox_one_step_and_heron():
    a = 2.5
    t = Gaussian(np.array([1.0, -2.0]), a * np.eye(2))
    r = gradient_descent(t, method="prox", steps=1, step=1 / a, m0=np.zeros(2), C0=np.tril(np.ones((2, 2))))
    np.testing.assert_allclose(r.C, np.eye(2) / np.sqrt(a), atol=1e-15)
    np.testing.assert_allclose(r.m, [1.0, -2.0], atol=1e-15)
    t1 = Gaussian(np.zeros(1), a * np.eye(1))
    r = gradient_descent(t1, method="projected", steps=4, step=1 / (2 * a), C0=np.array([[3.0]]))
    c = 3.0
    for k in range(1, 5):
        c = 0.5 * (c + 1 / (a * c))
        assert abs(r.Cs[k][0, 0] - c) <= 1e-15 * c


def test_gd_bad_input():
    t = Gaussian(np.zeros(2), np.diag([1.0, 4.0]))
    # Thm 6's largest steps themselves are inside the range: 1/M (prox), 1/(2M) (projected), M = 4
    assert gradient_descent(t, method="prox", step=0.25, steps=2, theorem=True).step == 0.25
    assert gradient_descent(t, method="projected", step=0.125, steps=2, theorem=True).step == 0.125
    with pytest.raises(ValueError, match=r"lambda in \(0, 1/M\]"):
        gradient_descent(t, method="prox", step=0.5, theorem=True)
    with pytest.raises(ValueError, match=r"1/\(2M\)"):
        gradient_descent(t, method="projected", step=0.2, theorem=True)
    with pytest.raises(ValueError, match="no convergence theorem"):
        gradient_descent(t, method="naive", theorem=True)
    with pytest.raises(ValueError, match=">= 1"):
        gradient_descent(t, steps=0)
    with pytest.raises(ValueError, match="invertible"):
        gradient_descent(t, method="naive", C0=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="diverged at step"):
        gradient_descent(t, method="naive", step=3.0, steps=400)


@pytest.mark.parametrize("a", [-30.0, -12.0, 0.5, 12.0, 30.0])
def test_ridge_expectations_keep_their_relative_accuracy_in_the_tails(a):
    """E softplus(-s), E sigmoid(-s) and E sigmoid'(s) for s ~ N(a, beta^2) against the adaptive quadrature oracle,
    relative, where they are as small as 1e-13: sigmoid'(s) written as sigma(-s)(1 - sigma(-s)) lost every digit
    there (1e-4 relative at a = -30), which the gradients' absolute tolerances never saw."""
    from scipy.special import expit as sig

    from refvi.targets.ridge import ridge_expectations
    from refvi.verification.oracles import quadrature as Q

    for beta in (0.01, 0.3, 1.0):
        got = ridge_expectations(np.array([a]), np.array([beta]))
        want = [Q.ridge_expectation_adaptive(f, a, beta)
                for f in (lambda s: np.logaddexp(0.0, -s), lambda s: sig(-s), lambda s: sig(s) * sig(-s))]
        for k in range(3):
            assert abs(got[k][0] - want[k]) <= 1e-9 * want[k], (k, beta, got[k][0], want[k])


@pytest.mark.parametrize("method", ["gd-naive", "gd-projected"])
def test_a_diverging_gradient_descent_says_so_with_its_step_and_last_finite_state(method):
    """Far too large a step makes the iterates overflow: naive and projected GD both say they diverged, at the step
    whose update overflows (77 here) and from which state (projected GD used to stop on its projection's refusal of a
    non-finite C instead)."""
    import refvi

    t = Gaussian(np.zeros(2), np.eye(2) * 1e3)
    with pytest.raises(ValueError, match=r"gradient descent diverged at step 77: .* last finite state"):
        refvi.fit(t, method=method, steps=200, step_size=10.0, diagnose=0)
    # a step so large that the first update overflows although the gradient itself is finite
    with pytest.raises(ValueError, match=r"gradient descent diverged at step 0: .* last finite state"):
        refvi.fit(t, method=method, steps=5, step_size=1e306, diagnose=0)
