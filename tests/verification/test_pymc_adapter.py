"""The seed 000 / 002 statements against PyMC's ADVI and FullRankADVI (``examples/pymc_adapter.py``,
docs/peer-adapters.md, docs/pymc-findings.md).  Needs the ``pymc`` extra (part of ``peers``): skipped without it,
a failure under REFVI_REQUIRE_PEERS=1.  A reduced selection (about a minute on 2 cores, almost all of it PyTensor
building and rewriting graphs); the full 000/002 run is the compatibility table's."""

from __future__ import annotations

import numpy as np
import pytest
from _peers import need  # tests/_peers.py

from refvi.verification.examples.numpy_adapter import IMPL as NUMPY
from refvi.verification.protocol import targets as T
from refvi.verification.running import runner


@pytest.fixture(scope="module")
def A():
    """The PyMC adapter module, imported by the first test that needs it (importing PyMC takes seconds: at module
    level every pytest-xdist worker paid it while collecting)."""
    need("pymc")
    from refvi.verification.examples import pymc_adapter

    return pymc_adapter

# fast statements that reach energy and grad_neg_entropy (entropy, stl, score: the cross-check below; all of
# them: the full run, docs/peer-adapters.md)
SELECT = ["000.thm2", "000.lemma17", "002.claim-h-not-convex-full"]


def test_pymc_adapter_certifies_the_reduced_selection(A):
    cert = runner.run(SELECT, "ci", A.IMPL)
    records = {r["id"]: r for r in cert["statements"]}
    bad = [(sid, r["verdict"], r.get("detail")) for sid, r in records.items() if r["verdict"] != "pass"]
    assert not bad, bad
    assert runner.exit_code(cert) == 0
    assert set().union(*(r["methods"] for r in records.values())) >= {"energy", "grad_neg_entropy"}
    # ADVI represents tril (FullRankADVI) and diag (ADVI) C only: the full / sym instances are declined
    assert all("not in declared ['tril', 'diag']" in records[sid]["detail"] for sid in SELECT)


def _instance(kind, rng):
    d = 3
    X = rng.standard_normal((7, d))
    if kind == "logistic":
        return T.logistic(X, np.sign(rng.standard_normal(7)), 1.5)
    if kind == "linear":
        return T.linear(X, rng.standard_normal(7), 0.7, 1.3)
    if kind == "hierarchical_logistic":
        return T.hierarchical_logistic(X[:, :2], np.sign(rng.standard_normal(7)), rng.integers(0, 2, 7), 2,
                                       2 * np.eye(2), 0.5 * np.eye(2))
    A_ = rng.standard_normal((d, d))
    if kind == "gaussian":
        return T.gaussian(rng.standard_normal(d), A_ @ A_.T + np.eye(d))
    return T.cosine(0.8, rng.standard_normal(d), 0.3, 1.1, rng.standard_normal(d))


@pytest.mark.slow  # PyTensor building 16 gradient graphs: about 25 s
@pytest.mark.parametrize("kind", ["logistic"])
def test_estimators_agree_with_the_numpy_example(A, kind):
    """PyMC's gradients, chain-ruled to (m, C), against the plain-NumPy example adapter (written from the papers) on
    every estimator and family, S = 1 (PyMC's single-sample graph) and S = 3 (its scan over samples)."""
    rng = np.random.default_rng(5)
    t = _instance(kind, rng)
    d = t.dim
    m = rng.standard_normal(d)
    C = 0.3 * np.tril(rng.standard_normal((d, d)))
    C[np.diag_indices(d)] = rng.uniform(0.3, 1.5, d)
    for S in (1, 3):
        U = rng.standard_normal((S, d))
        for est in ("energy", "entropy", "stl", "score"):
            for structure in ("tril", "diag"):
                Cs = C if structure == "tril" else np.diag(np.diag(C))
                gm, gC = getattr(A.IMPL, est)(t, m, Cs, U, structure)
                rm, rC = getattr(NUMPY, est)(t, m, Cs, U, structure)
                # both are float64 sums of O(10) terms of size <= |g|: rounding, 1e-12 relative
                np.testing.assert_allclose(gm, rm, rtol=1e-12, atol=1e-12 * (1 + np.abs(rm).max()))
                np.testing.assert_allclose(gC, rC, rtol=1e-12, atol=1e-12 * (1 + np.abs(rC).max()))


def test_layout_matches_pymc_full_rank_group(A):
    """(m, C) -> (mu, L_tril) gives back C through PyMC's own ``FullRankGroup.L`` (softplus diagonal)."""
    import pymc as pm
    import pytensor

    d = 3
    rng = np.random.default_rng(2)
    C = np.tril(rng.standard_normal((d, d)))
    C[np.diag_indices(d)] = [1e-3, 0.7, 30.0]
    with pm.Model():
        pm.Flat("z", shape=d)
        approx = pm.FullRank()
    group = approx.groups[0]
    _, packed = A.to_pymc(np.zeros(d), C, "fullrank")
    group.params_dict["L_tril"].set_value(packed)
    np.testing.assert_allclose(pytensor.function([], group.L)(), C, rtol=1e-12)


def test_supports_declines_what_pymc_cannot_represent(A):
    t = _instance("gaussian", np.random.default_rng(0))
    callable_target = T.from_callables(t.logp, t.grad_logp, t.dim, smoothness=1.0)
    assert "not a PyMC model" in A.IMPL.supports("energy", {"target": callable_target, "C": np.eye(3)})
    assert "lower-triangular" in A.IMPL.supports("energy", {"target": t, "C": np.ones((3, 3)), "structure": "tril"})
    assert "positive" in A.IMPL.supports("energy", {"target": t, "C": -np.eye(3), "structure": "tril"})
    assert A.IMPL.supports("energy", {"target": t, "C": np.eye(3), "structure": "diag"}) is True


def test_finding_bernoulli_logit_gradient_is_nan():
    """docs/pymc-findings.md, finding 1: PyMC's gradient of a Bernoulli(logit_p=x) observation 0 is NaN for x >= 37
    (sigmoid(x) rounds to 1); the exact value is -sigmoid(x) = -1.  If this starts failing, PyMC fixed it: update
    the findings page and the compatibility table."""
    pm = need("pymc")

    with pm.Model() as model:
        x = pm.Flat("x")
        pm.Bernoulli("y", logit_p=x, observed=0)
    fn = model.logp_dlogp_function(ravel_inputs=True)
    fn.set_extra_values({})
    logp, grad = fn(np.array([36.0]))
    assert float(logp) == -36.0 and abs(float(grad[0]) + 1.0) < 1e-15
    logp, grad = fn(np.array([40.0]))
    assert float(logp) == -40.0 and np.isnan(grad[0])
