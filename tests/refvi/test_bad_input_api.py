"""Bad input to public entry points: a clear error naming the problem (never a NumPy/attribute traceback, never a
silently ignored argument), and targets that do not alias the caller's arrays."""

import numpy as np
import pytest

from refvi import estimators
from refvi.boosting import Box
from refvi.boosting.frank_wolfe import fixed_step_weights
from refvi.ngvi import expfam
from refvi.online import SVB, kl_gaussian, kl_meanfield
from refvi.optim.averaging import average_weights
from refvi.optim.fit import fit
from refvi.targets import CallableTarget, Gaussian, HierarchicalLogisticRegression, LinearRegression, LogisticRegression

LP = lambda z: -0.5 * float(z @ z)          # noqa: E731
G = lambda z: -z                             # noqa: E731


class _NoLogp:
    dim, logp, grad_logp = 2, None, staticmethod(G)


class _NoGrad:
    dim, logp, grad_logp = 2, staticmethod(LP), None


@pytest.mark.parametrize("make,exc,match", [
    (lambda: CallableTarget(LP, G, 2, smoothness=1.0, strong_convexity=2.0), ValueError, "cannot exceed smoothness"),
    (lambda: CallableTarget(LP, G, 2, mode=[0.0]), ValueError, "mode must have length 2"),
    (lambda: CallableTarget(LP, G, float("nan")), ValueError, "dim must be a positive integer"),
    (lambda: CallableTarget(LP, G, 2.5), ValueError, "dim must be a positive integer"),
    (lambda: fit("abc"), TypeError, "target must be a refvi target"),
    (lambda: fit(None), TypeError, "target must be a refvi target"),
    (lambda: estimators.energy(None, np.zeros(2), np.eye(2), np.zeros((1, 2))), TypeError, "refvi target"),
    (lambda: fit(CallableTarget(LP, G, 2, smoothness=1.0), steps=10, seed=-1), ValueError, "seed must be"),
    (lambda: Box(lo="a", hi=1.0), TypeError, "lo must hold real numbers"),
    (lambda: fit(CallableTarget(lambda z: z, G, 2, smoothness=1.0), steps=10), ValueError,
     "logp must return one real number"),
    (lambda: fit(CallableTarget(lambda z: "x", G, 2, smoothness=1.0), steps=10), ValueError,
     "logp must return one real number"),
    (lambda: SVB(2, "hinge", schedule="convex", K=1.0, eta=0.3), ValueError, "does not use eta"),
    (lambda: SVB(2, "hinge", K=2, eta=-1), ValueError, "does not use eta"),
    (lambda: SVB(2, "hinge", K=2).run(np.ones((3, 3)), np.ones(3)), ValueError, r"X must have shape \(T, 2\)"),
    (lambda: fixed_step_weights(np.array([0.0, 1.5])), TypeError, "chosen must be a 1-D array of atom indices"),
    (lambda: fixed_step_weights(np.zeros((2, 2), dtype=int)), TypeError, "chosen must be a 1-D array of atom"),
    (lambda: SVB(2, "hinge", schedule="constant", eta=0.1, K=2.0), ValueError, "does not use K"),
    # a hierarchical model's prior covariance must be positive definite: an indefinite one (eigenvalues 3, -1) is
    # refused, though its largest eigenvalue is positive
    (lambda: HierarchicalLogisticRegression(np.ones((2, 2)), [1.0, -1.0], [0, 1],
                                            prior_scale=np.array([[1.0, 2.0], [2.0, 1.0]])),
     ValueError, "prior_scale must be a symmetric positive-definite matrix"),
    # the schedule and its constants are keyword-only: a third positional argument is refused, not taken as one
    (lambda: SVB(2, "hinge", "constant"), TypeError, "positional argument"),
    (lambda: expfam.natural_from_moment(np.zeros(3), np.eye(2)), ValueError, "mu has length 3 but Sigma is 2 x 2"),
    (lambda: expfam.moment_from_natural(np.zeros(3), -np.eye(2)), ValueError, "lam has length 3 but Lam is 2 x 2"),
    # diagnose: 0 or at least 20 draws (19 is one too few, 1 the fewest); the theta averages need both a and gamma
    (lambda: fit(CallableTarget(LP, G, 2, smoothness=1.0), steps=10, diagnose=19), ValueError,
     "diagnose must be 0 .* or a number of draws >= 20, got 19"),
    (lambda: fit(CallableTarget(LP, G, 2, smoothness=1.0), steps=10, diagnose=1), ValueError,
     "diagnose must be 0 .* or a number of draws >= 20, got 1$"),
    (lambda: average_weights("theta7", 10, a=1.0, gamma=None), ValueError, "needs the noise constant a and the"),
    (lambda: average_weights("theta10", 10, a=None, gamma=0.1), ValueError, "needs the noise constant a and the"),
    # an unknown average is refused by name, whatever it sorts next to ("uniform" and "unknown" are both 'un...')
    (lambda: average_weights("unknown", 10), ValueError, "unknown"),
    (lambda: average_weights("alpha", 10), ValueError, "alpha"),
    # a mean-field KL with a scale not above zero on either side (the KL is infinite or undefined there)
    (lambda: kl_meanfield([0.0], [1.0], [0.0], [0.0]), ValueError, "sigma and sbar must be > 0"),
    (lambda: kl_meanfield([0.0], [1.0], [0.0], [-1.0]), ValueError, "sigma and sbar must be > 0"),
    (lambda: kl_meanfield([0.0], [-1.0], [0.0], [1.0]), ValueError, "sigma and sbar must be > 0"),
    # a design with no rows or no columns (each alone) is named, not taken for the prior alone
    (lambda: LinearRegression(np.empty((0, 3)), np.empty(0)), ValueError, "at least one row and one column"),
    (lambda: LinearRegression(np.empty((3, 0)), np.zeros(3)), ValueError, "at least one row and one column"),
    # an object with a dim and a gradient but no callable logp (or the other way round) is not a target
    (lambda: fit(_NoLogp()), TypeError, "target must be a refvi target"),
    (lambda: fit(_NoGrad()), TypeError, "target must be a refvi target"),
    # the full-covariance KL of seed 003 needs both covariances positive definite: a singular C is refused
    (lambda: kl_gaussian(np.zeros(2), np.diag([1.0, 0.0]), np.zeros(2), np.eye(2)), ValueError, "must be invertible"),
    (lambda: kl_gaussian(np.zeros(2), np.eye(2), np.zeros(2), np.diag([1.0, 0.0])), ValueError, "must be invertible"),
])
def test_bad_input_is_a_clear_error(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


@pytest.mark.parametrize("rng", ["abc", -1, 1.5, [1, "a"]])
def test_bad_rng_is_named(rng):
    from refvi._checks import as_generator
    with pytest.raises((TypeError, ValueError), match="rng must be"):
        as_generator(rng)


def test_targets_copy_the_callers_arrays():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    lin = LinearRegression(X, y, noise_scale=0.5)
    before = (lin.logp(np.ones(3)), lin.smoothness, lin.precision.copy())
    X[:] = 0.0
    y[:] = 0.0
    assert lin.logp(np.ones(3)) == before[0] and lin.smoothness == before[1]
    assert np.array_equal(lin.precision, before[2])
    labels = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    Xl = rng.standard_normal((20, 3))
    log = LogisticRegression(Xl, labels)
    v = log.logp(np.ones(3))
    Xl[:] = 0.0
    labels[:] = 1.0
    assert log.logp(np.ones(3)) == v
    mean, prec = np.zeros(2), np.eye(2)
    g = Gaussian(mean, prec)
    mean[:] = 5.0
    prec[:] = 3 * np.eye(2)
    assert np.array_equal(g.mean, np.zeros(2)) and np.array_equal(g.precision, np.eye(2))


def test_rounding_asymmetry_is_symmetrized_up_to_16_d_ulp_and_more_is_refused():
    """refvi._checks.symmetric: |A - A^T| up to 16 d eps max|A| is rounding (removed by symmetrizing), beyond it a
    wrong structure; and project_wm names a C that is not square before looking at its symmetry."""
    from refvi._checks import symmetric
    from refvi.prox import project_wm

    d, eps = 3, np.finfo(np.float64).eps
    A = np.diag([2.0, 1.0, 1.0])
    for off, ok in ((40 * eps, True), (47 * eps, True), (49 * eps, False)):  # the bound: 16 * 3 * eps * max|A| = 96 eps
        B = A.copy()
        B[0, 1] += 2 * off  # |B - B^T| = 2 off
        if ok:
            out = symmetric(B, "B")
            assert np.array_equal(out, out.T) and out[0, 1] == off
        else:
            with pytest.raises(ValueError, match="B must be symmetric"):
                symmetric(B, "B")
    with pytest.raises(ValueError, match="must be square"):
        project_wm(np.ones((d, d - 1)), 1.0, "sym")


def test_the_neg_entropy_of_a_c_outside_w_is_inf_never_nan():
    """h(C) = -log det C is +inf outside W (seed 000 Eq. 2): a symmetric C with a negative eigenvalue above -1 too."""
    from refvi.families.gaussian import neg_entropy

    for lam0 in (-0.5, -2.0, 0.0):
        assert neg_entropy(np.diag([lam0, 1.0]), "sym") == np.inf
    assert neg_entropy(np.diag([-0.5, 1.0]), "tril") == np.inf
    assert neg_entropy(np.diag([0.5, 2.0]), "sym") == pytest.approx(-np.log(1.0))
