"""Step-size rules and averages against the formulas of seed 000 (written out here independently)."""

import math

import numpy as np
import pytest

from refvi.optim import averaging, schedules


def test_rules_match_formulas():
    T, M, mu, a = 50, 4.0, 0.5, 3.0
    t = np.arange(T)
    dec = (2 * t + 1) / (t + 1) ** 2
    exact = {  # closed forms: equality to rounding (1 ulp)
        "1/(M sqrt T)": np.full(T, 1 / (M * math.sqrt(T))),
        "1/sqrt T": np.full(T, 1 / math.sqrt(T)),
        "thm6": np.minimum(mu / (2 * a), dec / mu),
        "thm9": np.minimum(mu / (2 * a), 2 * dec / mu),
        "A log T / T": np.full(T, 2.0 * math.log(T) / T),
    }
    for rule, want in exact.items():
        got = schedules.step_sizes(rule, T, M=M, mu=mu, a=a, A=2.0)
        np.testing.assert_allclose(got, want, rtol=1e-15)
    L = a / mu
    ts = 4 * math.floor(L / mu)
    sw = np.where(t < ts, 1 / (2 * L), dec / mu)
    np.testing.assert_allclose(schedules.step_sizes("thm6-switch", T, mu=mu, a=a), sw, rtol=1e-15)
    ts9 = 4 * math.floor(L / (mu / 2))
    sw9 = np.where(t < ts9, 1 / (2 * L), dec / (mu / 2))
    np.testing.assert_allclose(schedules.step_sizes("thm9-switch", T, mu=mu, a=a), sw9, rtol=1e-15)
    assert schedules.step_sizes("thm27", 3, L=0.5, mu=1.0)[0] == 1.0      # t* = 0: the decaying rule from t = 0


def test_noise_constants():
    a, b = schedules.noise_constants("energy", 3, 2.0, dist_sq=0.5)
    assert (a, b) == (2 * 6 * 4.0, 2 * 6 * 4.0 * 0.5)
    a, b = schedules.noise_constants("entropy", 3, 2.0, dist_sq=0.5)
    assert (a, b) == (4 * 6 * 4.0, 4 * 6 * 4.0 * 0.5 + 2 * 3 * 2.0)          # E000-3: 2 d L


def test_averages():
    w = averaging.average_weights("tail", 10)
    assert np.allclose(w[6:], 0.2) and np.all(w[:6] == 0)
    th = 1 / (1 + 2 * 3.0 * 0.1**2)
    w = averaging.average_weights("theta7", 4, a=3.0, gamma=0.1)
    want = np.array([0] + [th ** (t + 1) for t in range(1, 5)])
    np.testing.assert_allclose(w, want / want.sum(), rtol=1e-14)
    th = 1 / (1 + 3.0 * 0.1**2)
    w = averaging.average_weights("theta10", 4, a=3.0, gamma=0.1)
    want = np.array([th ** (t + 1) for t in range(4)] + [0])
    np.testing.assert_allclose(w, want / want.sum(), rtol=1e-14)


def test_bad_input():
    with pytest.raises(ValueError, match=">= 1"):
        schedules.step_sizes("1/sqrt T", 0)
    with pytest.raises(TypeError):
        schedules.step_sizes("1/sqrt T", 2.5)
    with pytest.raises(ValueError, match="needs M"):
        schedules.step_sizes("1/(M sqrt T)", 10)
    with pytest.raises(ValueError, match="unknown step-size rule"):
        schedules.step_sizes("fast", 10)
    with pytest.raises(ValueError, match=r"000.thm7 needs the step in \(0, 1/M\]"):
        schedules.check_theorem("000.thm7", np.full(5, 0.6), M=2.0)
    with pytest.raises(ValueError, match="000.thm6 needs gamma"):
        schedules.check_theorem("000.thm6", np.full(5, 0.1), mu=1.0, a=10.0)
    with pytest.raises(ValueError, match="constant step"):
        schedules.check_theorem("000.thm9", np.array([0.1, 0.05]), mu=1.0, a=1.0)
    with pytest.raises(ValueError, match="A >= 1/mu"):
        schedules.check_theorem("000.cor30", np.full(100, 0.01), mu=1.0, a=1.0, A=0.5)
    schedules.check_theorem("000.thm10", np.full(5, 100.0))              # any gamma > 0
    with pytest.raises(ValueError, match="unknown average"):
        averaging.average_weights("mean", 5)


@pytest.mark.parametrize("T, f, k", [(100, 0.07, 7), (25, 0.28, 7), (5, 0.2, 1), (7, 0.5, 4), (10, 1.0, 10),
                                     (3, 0.01, 1), (1, 0.5, 1), (1000, 0.333, 333)])
def test_tail_length_counts_a_float_product_near_an_integer_as_that_integer(T, f, k):
    # 0.07 * 100 = 7.000000000000001 and 0.28 * 25 = 7.000000000000001 in floats; 0.2 > 1/5 as a double
    assert averaging.tail_length(f, T) == k
    w = averaging.average_weights("tail", T, tail_fraction=f)
    assert np.count_nonzero(w) == k and w[-1] > 0 and w[T - k + 1] > 0
