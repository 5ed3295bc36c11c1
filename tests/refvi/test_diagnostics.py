"""refvi.optim.diagnostics: the Pareto k of PSIS held to ArviZ's psislw, the tail-average moves and the chi2-style
posterior error bounds on Gaussian targets where the answer is known in closed form."""

import math

import numpy as np
import pytest
from _peers import need  # tests/_peers.py

from refvi.optim import diagnostics as D
from refvi.targets import Gaussian


@pytest.mark.parametrize(
    "name, draw",
    [
        ("heavy", lambda r: 2.0 * r.standard_t(2, 1000)),       # k-hat > 1
        ("light", lambda r: 0.3 * r.standard_normal(1000)),     # k-hat < 0
        ("lognormal", lambda r: 1.5 * r.standard_normal(4000)),  # 0 < k-hat < 0.5
        ("small", lambda r: r.standard_normal(50)),
    ],
)
def test_psis_matches_arviz(name, draw):
    az = need("arviz")
    lw = draw(np.random.default_rng(0))
    a_lw, a_k = az.psislw(lw.copy(), reff=1.0)
    b_lw, b_k = D.psis(lw)
    # the same algorithm (Vehtari et al. 2024, Alg. 1; Zhang & Stephens' fit) in the same floating-point order up to
    # summation: agreement to rounding
    assert b_k == pytest.approx(float(a_k), abs=1e-12)
    np.testing.assert_allclose(b_lw, np.asarray(a_lw), atol=1e-12)


def test_psis_bad_input():
    with pytest.raises(ValueError, match="at least 2 finite"):
        D.psis([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="draws >= 20"):
        D.diagnose(Gaussian(np.zeros(2), np.eye(2)), np.zeros(2), np.eye(2), draws=5)


def test_the_exact_q_passes_with_zero_bounds():
    P = np.array([[2.0, 0.5], [0.5, 1.0]])
    t = Gaussian(np.array([1.0, -2.0]), P)
    C = np.linalg.cholesky(np.linalg.inv(P))
    d = D.diagnose(t, t.mean, C)
    assert d.converged and d.pareto_k == -math.inf and d.mean_bound == 0.0
    assert d.summary().startswith("converged")


def test_a_shifted_q_fails_with_numbers_and_a_bound_that_covers_the_error():
    t = Gaussian(np.zeros(3), np.eye(3))
    far = D.diagnose(t, np.full(3, 3.0), 0.5 * np.eye(3))      # 6 q-sd off, too narrow: p/q has a heavy tail
    assert not far.converged and not far.pareto_ok and far.pareto_k > far.k_threshold
    assert any("Pareto k" in m and "MCMC" in m for m in far.messages)
    near = D.diagnose(t, np.full(3, 0.1), np.eye(3))            # 0.1 sd off, right width: chi2 = e^0.03 - 1
    assert near.pareto_ok and near.chi2 is not None
    # the error of every mean, in fitted sd, is 0.1; sqrt(chi2) = 0.17 exactly; the estimate from 1000 draws
    # (Monte Carlo: relative sd of the estimate ~ sqrt(Var w^2 / S) / chi2, a few 10%) must cover the error
    assert near.mean_bound >= 0.1 and near.mean_bound < 0.5


def test_moves_flag_a_drifting_run():
    t = Gaussian(np.zeros(2), np.eye(2))
    I = np.eye(2)
    still = D.diagnose(t, np.zeros(2), I, quarters=((np.zeros(2), I), (np.full(2, 0.01), I)))
    assert still.stationary and still.mean_move == pytest.approx(0.01)
    assert still.quarter_kl == pytest.approx(0.5 * 2 * 0.01**2)     # KL of N(0, I) from N(0.01 1, I)
    moving = D.diagnose(t, np.zeros(2), I, quarters=((np.zeros(2), I), (np.array([0.0, 0.5]), 1.3 * I)))
    assert not moving.stationary and not moving.converged
    assert moving.mean_move == pytest.approx(0.5 / 1.3) and moving.sd_move == pytest.approx(0.3)
    assert any("still moving" in m and "steps=" in m for m in moving.messages)
    assert math.isnan(D.diagnose(t, np.zeros(2), I).mean_move)  # no quarters: not judged
    # KL(N(0, S3) || N(0, S4)) in closed form for diagonal S: (1/2) sum(s3/s4 - 1 - log(s3/s4))
    C3, C4 = np.diag([1.0, 2.0]), np.diag([1.5, 1.0])
    r = (np.diag(C3) / np.diag(C4)) ** 2
    kl = 0.5 * np.sum(r - 1 - np.log(r))
    assert D._quarter_kl(((np.zeros(2), C3), (np.zeros(2), C4))) == pytest.approx(kl, rel=1e-12)


def test_a_pareto_failure_says_whether_it_is_the_runs_noise():
    d = 100
    t = Gaussian(np.zeros(d), np.eye(d))
    rng = np.random.default_rng(1)
    I = np.eye(d)
    # two quarter averages with independent noise in the strictly lower triangle (the sds barely move): their average
    # is KL ~ d^2 sigma^2 / 8 = 2 from p
    E3, E4 = (np.tril(0.04 * rng.standard_normal((d, d)), -1) for _ in range(2))
    noisy = D.diagnose(t, np.zeros(d), I + (E3 + E4) / 2, quarters=((np.zeros(d), I + E3), (np.zeros(d), I + E4)))
    assert not noisy.pareto_ok and noisy.stationary and noisy.quarter_kl > D.QUARTER_KL
    assert any("samples=" in m for m in noisy.messages)
    shape = D.diagnose(t, np.zeros(d), 0.7 * I, quarters=((np.zeros(d), 0.7 * I), (np.zeros(d), 0.7 * I)))
    assert not shape.pareto_ok and shape.quarter_kl == 0.0
    assert any("posterior's shape" in m for m in shape.messages)


def test_given_base_samples_are_the_draws_of_q():
    """base_samples=U is the same as the seeded draws when U is what the seed draws; fewer than 20 rows, or rows of
    the wrong width, are refused by name."""
    P = np.array([[2.0, 0.5], [0.5, 1.0]])
    t = Gaussian(np.array([1.0, -2.0]), P)
    C = 0.6 * np.linalg.cholesky(np.linalg.inv(P))
    U = np.random.default_rng(5).standard_normal((300, 2))
    given = D.diagnose(t, t.mean + 0.3, C, base_samples=U, draws=7, seed=99)  # draws and seed unused
    drawn = D.diagnose(t, t.mean + 0.3, C, draws=300, seed=5)
    assert given.pareto_k == drawn.pareto_k and given.draws == 300 and np.isfinite(given.pareto_k)
    assert D.diagnose(t, t.mean + 0.3, C, base_samples=U[:100]).pareto_k != given.pareto_k
    with pytest.raises(ValueError, match="at least 20 rows"):
        D.diagnose(t, t.mean, C, base_samples=U[:19])
    # 20 draws, given or drawn, is enough; 19 is not; a draw count must be an integer
    assert D.diagnose(t, t.mean + 0.3, C, base_samples=U[:20]).draws == 20
    assert D.diagnose(t, t.mean + 0.3, C, draws=20).draws == 20
    for bad in (19, 20.0, True):
        with pytest.raises(ValueError, match="draws >= 20"):
            D.diagnose(t, t.mean, C, draws=bad)
    with pytest.raises(ValueError, match="base_samples"):
        D.diagnose(t, t.mean, C, base_samples=U[:, :1])
