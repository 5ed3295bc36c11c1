"""The plain-data targets handed to implementations (verification.protocol.targets) define the same densities as
refvi's target classes: logp and its gradient agree at random points, and the closed-form log evidence matches
quadrature-free algebra (Gaussian integral) for the quadratic kinds."""

import numpy as np
import pytest

import refvi.targets as T
from refvi.verification.protocol import targets as P
from refvi.verification.protocol.refvi_core import as_refvi_target

rng = np.random.default_rng(3)
X = rng.standard_normal((7, 3))
ylin = rng.standard_normal(7)
ypm = np.where(rng.standard_normal(7) > 0, 1.0, -1.0)
A = rng.standard_normal((3, 3))
PREC = A @ A.T + np.eye(3)

SPECS = [
    P.gaussian(np.arange(3.0), PREC),
    P.linear(X, ylin, 0.7, 1.3),
    P.logistic(X, ypm, 2.0),
    P.hierarchical_logistic(X, ypm, [0, 1, 0, 1, 1, 0, 0], 2, 1.5 * np.eye(3), 0.5 * np.eye(3)),
    P.cosine(0.4, [1.0, -0.5, 0.2], 0.3, 1.1, [0.1, 0.2, 0.3]),
]
#: refvi's target of each spec's kind, built when a test asks (building one compiles the constants' kernels, which at
#: collection every pytest-xdist worker would do at once)
REFS = {
    "gaussian": lambda: T.Gaussian(np.arange(3.0), PREC),
    "linear": lambda: T.LinearRegression(X, ylin, 0.7, 1.3),
    "logistic": lambda: T.LogisticRegression(X, ypm, 2.0),
    "hierarchical_logistic": lambda: T.HierarchicalLogisticRegression(X, ypm, [0, 1, 0, 1, 1, 0, 0], 1.5 * np.eye(3),
                                                                      0.5 * np.eye(3), 2),
    "cosine": lambda: T.CosineQuadratic(0.4, [1.0, -0.5, 0.2], 0.3, 1.1, [0.1, 0.2, 0.3]),
}


@pytest.mark.parametrize("spec", SPECS, ids=[s.kind for s in SPECS])
def test_spec_density_matches_refvi_target(spec):
    ref = REFS[spec.kind]()
    assert spec.dim == ref.dim
    for _ in range(5):
        z = rng.standard_normal(spec.dim)
        assert np.isclose(spec.logp(z), float(ref.logp(z)), rtol=1e-12, atol=1e-12)
        assert np.allclose(spec.grad_logp(z), ref.grad_logp(z), rtol=1e-12, atol=1e-12)
    built = as_refvi_target(spec)
    assert built is as_refvi_target(spec)            # built once per spec
    assert np.isclose(built.smoothness, ref.smoothness, rtol=1e-12)


def test_spec_is_read_only_plain_data():
    spec = P.linear(X, ylin)
    with pytest.raises(ValueError):
        spec.X[0, 0] = 1.0
    with pytest.raises(TypeError):
        spec.params["X"] = None
    assert spec.model["kind"] == "linear" and spec.noise_scale == 1.0
    with pytest.raises(AttributeError, match="no attribute"):
        _ = spec.smoothness


def test_linear_log_evidence_is_the_gaussian_integral():
    spec = P.linear(X, ylin, 0.7, 1.3)
    # log p(x) = log p(z, x) - log p(z | x) at any z; the posterior is N(A^-1 b, A^-1)
    Aq = X.T @ X / 0.49 + np.eye(3) / 1.69
    mean = np.linalg.solve(Aq, X.T @ ylin / 0.49)
    post = P.gaussian(mean, Aq)
    z = rng.standard_normal(3)
    assert np.isclose(spec.log_evidence, spec.logp(z) - post.logp(z), rtol=1e-12)


@pytest.mark.parametrize("spec", SPECS, ids=[s.kind for s in SPECS])
def test_from_model_inverts_model(spec):
    again = P.from_model(spec.model)
    assert again.kind == spec.kind and again.dim == spec.dim
    z = rng.standard_normal(spec.dim)
    assert again.logp(z) == pytest.approx(spec.logp(z), rel=1e-14)
    for k, v in spec.params.items():
        np.testing.assert_array_equal(again.params[k], v)


def test_from_model_callable_and_bad_kind():
    spec = P.from_model({"kind": "callable", "logp": lambda z: -z @ z, "grad_logp": lambda z: -2 * z, "dim": 2,
                         "smoothness": 2.0, "strong_convexity": 2.0})
    assert spec.kind == "callable" and spec.params["smoothness"] == 2.0 and spec.logp(np.ones(2)) == -2.0
    with pytest.raises(ValueError, match="unknown target kind 'poisson'"):
        P.from_model({"kind": "poisson"})


def test_from_model_fills_what_a_model_omits_with_the_constructors_defaults():
    """A model dict with only its required entries gives the spec the constructor gives with its defaults (noise and
    prior scales 1, phi 0, beta 1, no smoothness, strong convexity 0)."""
    logp, grad = (lambda z: -z @ z), (lambda z: -2 * z)
    b = np.array([0.5, -1.0])
    pairs = [
        ({"kind": "linear", "X": X, "y": ylin}, P.linear(X, ylin)),
        ({"kind": "logistic", "X": X, "y": ypm}, P.logistic(X, ypm)),
        ({"kind": "cosine", "alpha": 0.3, "b": b}, P.cosine(0.3, b)),
        ({"kind": "callable", "logp": logp, "grad_logp": grad, "dim": 2}, P.from_callables(logp, grad, 2)),
    ]
    for model, want in pairs:
        got = P.from_model(model)
        assert set(got.params) == set(want.params), model["kind"]
        for k, v in want.params.items():
            np.testing.assert_array_equal(got.params[k], v, err_msg=f"{model['kind']}: {k}")


@pytest.mark.parametrize("name", ["breast_cancer", "diabetes", "digits", "wine"])
def test_dataset_loader_matches_refvi_preprocessing(name):
    """verification.protocol.datasets reproduces refvi.targets.load_dataset bit for bit (so numbers do not change)."""
    from refvi.verification.protocol import datasets

    X, y, task = datasets.load(name)
    ds = T.load_dataset(name)
    np.testing.assert_array_equal(X, ds.X)
    np.testing.assert_array_equal(y, ds.y)
    assert task == ds.task
    spec, ref = datasets.spec_for(name), T.target_for(name)
    assert spec.kind == {"classification": "logistic", "regression": "linear"}[task] and spec.name == name
    z = rng.standard_normal(spec.dim) * 0.1
    assert np.isclose(spec.logp(z), float(ref.logp(z)), rtol=1e-12)
    with pytest.raises(ValueError, match="unknown data set"):
        datasets.load("iris")


def test_a_callable_record_pickles_with_its_batched_and_pymc_forms():
    """A reproducer pickles the record of a failing instance: every form of a callable target survives the round
    trip (the functions by reference), so a replay runs the same path (refvi: from_pymc when ``pymc_model`` is set)."""
    import pickle

    from refvi.verification.statements.convergence_000 import _user_models as um

    spec = P.from_callables(
        um.logp, um.grad_logp, um.D, smoothness=2.0, logp_batch=um.logp_batch, grad_batch=um.grad_batch,
        pymc_model=um.pymc_model, name="n",
    )
    back = pickle.loads(pickle.dumps(spec))
    assert (back.kind, back.dim, back.name, dict(back.params)) == ("callable", um.D, "n", dict(spec.params))
    assert (back.logp, back.grad_logp, back.logp_batch, back.grad_batch, back.pymc_model) == (
        um.logp, um.grad_logp, um.logp_batch, um.grad_batch, um.pymc_model
    )
    assert P.from_callables(um.logp, um.grad_logp, um.D).pymc_model is None


def test_refvi_builds_a_record_with_a_pymc_model_by_from_pymc():
    """The same density reaches refvi by its PyMC front end when the record carries one (values alone cannot tell the
    two paths apart: both are the user-model Gaussian), by its numba functions otherwise."""
    pytest.importorskip("pymc")
    from refvi.targets.pymc import PyMCTarget
    from refvi.verification.statements.convergence_000 import _user_models as um

    built = as_refvi_target(um.target_of("pymc"))
    assert isinstance(built, PyMCTarget) and built.param_names == ("a", "b[0]", "b[1]")
    assert not isinstance(as_refvi_target(um.target_of("per-point")), PyMCTarget)


def test_a_boosting_target_checks_its_mixture_and_shifts_either_kind():
    """BoostingTarget.mixture refuses weights, means and scales of mismatched shapes, weights that are negative or do
    not sum to one, and scales <= 0; shifted(c) adds c to log p of a mixture and of a Cauchy target alike."""
    from refvi.verification.protocol.boosting import BoostingTarget

    for w, mu, sc in (([0.5, 0.5], [0.0], [1.0, 1.0]), ([0.5, 0.5], [0.0, 1.0], [1.0]), ([[1.0]], [0.0], [1.0])):
        with pytest.raises(ValueError, match=r"mixture target needs weights \(J,\), means \(J, d\), scales \(J,\)"):
            BoostingTarget.mixture(w, mu, sc)
    for w, sc in (([1.2, -0.2], [1.0, 1.0]), ([0.5, 0.6], [1.0, 1.0]), ([0.5, 0.5], [1.0, 0.0])):
        with pytest.raises(ValueError, match="mixture weights must be >= 0 and sum to one, scales > 0"):
            BoostingTarget.mixture(w, [0.0, 1.0], sc)
    z = np.array([-0.7, 0.2, 3.0])
    mix = BoostingTarget.mixture([0.3, 0.7], [-1.0, 2.0], [0.5, 1.5])
    np.testing.assert_allclose(mix.shifted(1.25).logp(z), mix.logp(z) + 1.25, rtol=1e-14)
    assert mix.shifted(1.25).kind == "mixture" and mix.shifted(1.0).shifted(0.25).log_shift == 1.25
    cau = BoostingTarget.cauchy(0.5, 2.0)
    np.testing.assert_allclose(cau.shifted(-3.0).logp(z), cau.logp(z) - 3.0, rtol=1e-14)
    assert cau.shifted(-3.0).kind == "cauchy"
    np.testing.assert_allclose(cau.logp(z), -np.log(np.pi * 2.0 * (1 + ((z - 0.5) / 2.0) ** 2)), rtol=1e-14)
