"""The seed 000 / 002 statements against two outside libraries (docs/peer-adapters.md): JAX/NumPyro
(``examples/jax_adapter.py``) and BlackJAX (``examples/blackjax_adapter.py``).  Needs the ``peers`` extra; skipped
without it.  ``pytest --run-slow`` certifies each adapter on a few statements that call every method it offers (almost
all of their cost, about 20 s each, is XLA compiling per shape) and on the whole 000/002 selection, as do the
committed certificates of the compatibility page (``python -m refvi.verification.certificate.compatibility --run``)."""

import numpy as np
import pytest
from _peers import need  # tests/_peers.py: a skip without the library, a failure under REFVI_REQUIRE_PEERS=1

from refvi.verification.running import runner

SELECT = ["000.*", "002.*"]
#: statements that between them value-check every method both adapters offer (energy, entropy, stl and score in
#: 000.def4, grad_neg_entropy in 000.lemma17) and refuse bad input (000.claim-bad-input): the default run's selection
FEW = ["000.def4", "000.lemma17", "000.claim-bad-input"]
OFFERED = {"energy", "entropy", "stl", "score", "grad_neg_entropy"}
# measured (ci profile; JAX 0.10.2, NumPyro 0.22.0, BlackJAX 1.7.1): 23 and 11 implementation passes
MIN_PASSES = {"jax": 21, "blackjax": 10}


def _check(cert, minimum):
    bad = [(r["id"], r["verdict"], r.get("detail")) for r in cert["statements"] if r["verdict"] in ("fail", "error")]
    assert not bad, bad
    passes = runner.implementation_passes(cert)
    assert passes >= minimum, runner.summary(cert)
    assert runner.exit_code(cert) == 0
    return {r["id"]: r for r in cert["statements"]}


def _few(cert):
    """The default run's checks: nothing failed, every statement of FEW passed, and every offered method was
    value-checked."""
    records = _check(cert, len(FEW))
    assert {sid for sid, r in records.items() if r["verdict"] == "pass"} == set(FEW), runner.summary(cert)
    checked = {m for r in records.values() for m, v in (r.get("values") or {}).items() if v["checked"]}
    assert OFFERED <= checked, checked
    return records


def _jax():
    need("jax")
    need("numpyro")
    from refvi.verification.examples.jax_adapter import IMPL

    return IMPL


def _blackjax():
    need("blackjax")
    need("blackjax.vi._gaussian_vi", reason="the adapter drives BlackJAX >= 1.7's shared VI step")
    from refvi.verification.examples.blackjax_adapter import IMPL

    return IMPL


@pytest.mark.slow
def test_jax_numpyro_adapter_on_every_method():
    records = _few(runner.run(FEW, "ci", _jax()))
    assert records["000.def4"]["methods"] == sorted(OFFERED - {"grad_neg_entropy"})


@pytest.mark.slow
def test_blackjax_adapter_on_every_method():
    records = _few(runner.run(FEW, "ci", _blackjax()))
    # BlackJAX represents tril (full-rank) and diag (mean-field) C only: the other instances are declined
    assert any("not in declared ['tril', 'diag']" in reason for r in records.values() for reason in r["declined"])


@pytest.mark.slow
def test_jax_numpyro_adapter():
    records = _check(runner.run(SELECT, "ci", _jax()), MIN_PASSES["jax"])
    # the estimators NumPyro's Trace_ELBO and jax.grad provide were all exercised, on every structure
    called = set().union(*(r["methods"] for r in records.values()))
    assert OFFERED <= called
    assert records["000.def4"]["verdict"] == "pass"
    assert records["000.thm2"]["verdict"] == "pass"


@pytest.mark.slow
def test_blackjax_adapter():
    records = _check(runner.run(SELECT, "ci", _blackjax()), MIN_PASSES["blackjax"])
    # BlackJAX represents tril (full-rank) and diag (mean-field) C only: the other instances are skipped for
    # capability reasons while the statements that have tril/diag instances still pass on BlackJAX's gradients
    mixed = [sid for sid, r in records.items() if r["verdict"] == "pass" and
             any("not in declared ['tril', 'diag']" in reason for reason in r["declined"])]
    assert len(mixed) >= 9, mixed
    assert records["000.def4"]["verdict"] == "pass"
    assert set(records["000.def4"]["methods"]) == {"energy", "entropy", "score", "stl"}


def test_blackjax_layout_matches_its_sampler():
    """The adapter's z = mu + L u and (m, C) <-> (mu, chol_params) agree with BlackJAX's own ``_sample`` and
    ``_unflatten_cholesky`` (guards against a change of BlackJAX's parameter layout)."""
    need("blackjax.vi._gaussian_vi")
    import jax
    import jax.numpy as jnp
    from blackjax.vi import fullrank_vi, meanfield_vi

    from refvi.verification.examples.blackjax_adapter import _family_functions, to_blackjax

    rng = np.random.default_rng(7)
    d = 4
    C = np.tril(rng.standard_normal((d, d)))
    C[np.diag_indices(d)] = rng.uniform(0.2, 2.0, d)
    m = rng.standard_normal(d)
    key = jax.random.PRNGKey(11)
    eps = np.asarray(jax.random.normal(key, (5, d)))

    mu, chol = to_blackjax(m, C, "fullrank")
    np.testing.assert_allclose(np.asarray(fullrank_vi._unflatten_cholesky(jnp.asarray(chol), d)), C, rtol=1e-15)
    ours = np.asarray(_family_functions("fullrank")[0]((jnp.asarray(mu), jnp.asarray(chol)), eps))
    theirs = np.asarray(fullrank_vi._sample(key, jnp.asarray(mu), jnp.asarray(chol), 5))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-14)

    D = np.diag(np.diag(C))
    mu, rho = to_blackjax(m, D, "meanfield")
    ours = np.asarray(_family_functions("meanfield")[0]((jnp.asarray(mu), jnp.asarray(rho)), eps))
    theirs = np.asarray(meanfield_vi._sample(key, jnp.asarray(mu), jnp.asarray(rho), 5))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-14)
