"""SVB on Thm 3's ball parameter sets (003.thm3): refvi's adapter and the NumPy example agree, both refuse a box and a
ball together or a prior outside the sigma ball, and the ball comparator is bracketed by its bounds."""

import numpy as np
import pytest

from refvi.verification.examples.numpy_online import NumpyOnline
from refvi.verification.oracles import online_comparators as oc
from refvi.verification.oracles.online_comparators import best_hinge_ball
from refvi.verification.protocol.refvi_online import RefviOnline

KW = dict(schedule="convex", K=2.0, s=0.3, mball=0.5, sball=0.6)


def _stream(seed=0, T=40, d=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, (T, d)), np.where(rng.random(T) < 0.5, -1.0, 1.0)


def test_refvi_and_numpy_agree_on_the_balls():
    X, y = _stream()
    a, b = RefviOnline().run("svb", X, y, **KW), NumpyOnline().run("svb", X, y, **KW)
    np.testing.assert_allclose(a.M, b.M, atol=1e-12)
    np.testing.assert_allclose(a.S, b.S, atol=1e-12)
    np.testing.assert_allclose(a.losses, b.losses, atol=1e-12)
    assert np.max(np.linalg.norm(a.M, axis=1)) == pytest.approx(0.5)       # the ball binds on this stream
    np.testing.assert_array_equal(RefviOnline().run_adversarial("svb", X, **KW),
                                  NumpyOnline().run_adversarial("svb", X, **KW))


@pytest.mark.parametrize("impl", [RefviOnline(), NumpyOnline()], ids=["refvi", "numpy"])
@pytest.mark.parametrize("bad, message", [
    (dict(KW, mbox=1.0), "not both"), (dict(KW, sball=0.1), "initial sigma"), (dict(KW, mball=0.0), "mball > 0"),
    # one ball without the other: refused by name, not run as SVB on boxes or failing on an unknown keyword
    ({k: v for k, v in KW.items() if k != "sball"}, "sball > 0"),
    ({k: v for k, v in KW.items() if k != "mball"}, "mball > 0")])
def test_bad_ball_input_is_refused(impl, bad, message):
    X, y = _stream()
    with pytest.raises(ValueError, match=message):
        impl.run("svb", X, y, **bad)


@pytest.mark.parametrize("impl", [RefviOnline(), NumpyOnline()], ids=["refvi", "numpy"])
def test_balls_are_for_svb_only(impl):
    X, y = _stream()
    with pytest.raises(ValueError, match="SVB only"):
        impl.run("ogael", X, y, eta=0.1, mball=1.0, sball=1.0)


def test_ball_comparator_is_bracketed():
    for seed in range(20):
        X, y = _stream(seed, T=1 + seed * 3, d=1 + seed % 3)
        R = 0.3 + 0.2 * seed
        lower, primal = best_hinge_ball(X, y, R)
        assert lower <= primal + 1e-12 and primal - lower <= 1e-6 * (1 + primal)
        # the ball lies in the box [-R, R]^d and contains the box [-R/sqrt d, R/sqrt d]^d
        assert oc.best_hinge_point(X, y, R)[1] <= lower + 1e-9
        assert primal <= oc.best_hinge_point(X, y, R / np.sqrt(X.shape[1]))[1] + 1e-9
