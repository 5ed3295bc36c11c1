"""Conformance adapter around JAX and NumPyro: the seed 000 / 002 gradient estimators computed by ``jax.grad``.

Run the statements against it with::

    python -m refvi.verification --impl refvi.verification.examples.jax_adapter:IMPL --select '000.*' '002.*'

What is whose code (nothing here re-derives a gradient in NumPy):

* the target is rebuilt as a **NumPyro model** from ``target.kind`` / ``target.params`` (``dist.MultivariateNormal``
  for a Gaussian target, ``dist.Normal`` / ``dist.Bernoulli(logits=...)`` likelihoods for the regressions, observed
  ``MultivariateNormal`` sites for the hierarchical prior, ``numpyro.factor`` for the cosine and ``callable`` kinds,
  the latter through ``jax.pure_callback`` with the spec's own gradient as its JVP), checked once per target against
  ``target.logp``;
* ``energy``: **NumPyro's** ``Trace_ELBO().loss`` with a guide that places z at ``C u + m`` (a ``Delta`` site, so
  log q contributes 0 and -ELBO is the energy -log p(C u + m)), differentiated by ``jax.grad`` with respect to the
  guide's ``numpyro.param`` sites ``m`` and ``C``, vmapped over the rows of ``U`` and averaged;
* ``entropy``: ``jax.grad`` of the same ``Trace_ELBO`` loss plus h(C) = -log|det C| (``jnp.linalg.slogdet``);
* ``stl``: ``jax.grad`` of -log p(z(w)) + log q_{stop_gradient(w)}(z(w)) (Roeder et al.'s sticking the landing; log p
  is NumPyro's ``log_density`` of the model);
* ``score``: ``jax.grad`` of log q_w(z) at the fixed point z = C u + m, times -log p(z) (the score-function estimator);
* ``grad_neg_entropy``: ``jax.grad`` of -log|det C|.

Gradients with respect to C come from ``jax.grad`` over the dense matrix and are then projected onto V (tril, sym,
diag or full) as the protocol requires (seed 000 Lemma 15).  Prox, projections, model constants and the optimizers
are not JAX/NumPyro features and are left out (skips naming the method).

Compiled code is shared per (kind, shapes): the target's data are *arguments* of the jitted functions, converted
once per target and cached on the spec (a ``weakref.WeakKeyDictionary``), so a fresh target of a known shape costs
no retrace (the rows of U are padded to a power of two for the same reason); only ``callable`` targets (a Python
callback) compile per target.
"""

from __future__ import annotations

import functools
import math
import weakref
from typing import Any

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from jax.scipy.stats import multivariate_normal as _mvn  # noqa: E402

from ._validate import refuse_bad_input  # noqa: E402
from .numpy_adapter import proj_V  # noqa: E402

LOG_2PI = math.log(2.0 * math.pi)

#: The statements call on many small shapes, so compiling dominates the run: skip XLA's backend (LLVM) optimisation
#: passes, which cuts compile time by about a quarter and changes nothing above the last bit or two of a result.
COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}


def jit(f):
    return jax.jit(f, compiler_options=COMPILER_OPTIONS)


def _proj(X, structure):
    return proj_V(np.asarray(X, dtype=np.float64), structure)


# ---- the target in JAX -------------------------------------------------------------------------------------------
def target_params(target) -> dict:
    """The spec's data as float64 / int JAX arrays (what the jitted functions take as their ``params``)."""
    out = {}
    for k, v in target.params.items():
        if v is None or k in ("n_groups", "smoothness", "strong_convexity"):
            continue
        a = np.asarray(v)
        out[k] = jnp.asarray(a, dtype=jnp.int64 if a.dtype.kind in "iu" else jnp.float64)
    return out


def static_key(target) -> tuple:
    """What the traced code depends on beyond array shapes."""
    if target.kind == "hierarchical_logistic":
        return (target.kind, int(target.params["n_groups"]))
    return (target.kind,)


def callback_logp(target):
    """log p of a ``callable`` target as a JAX function: ``jax.pure_callback`` on ``target.logp`` with
    ``target.grad_logp`` as its JVP (route 2 of docs/protocol-core.md)."""
    d = target.dim
    # the gradient's shape, checked here: inside the callback a wrong shape would surface as JAX's runtime error
    try:
        g0 = np.shape(target.grad_logp(np.zeros(d)))
    except Exception:  # a gradient undefined at 0: its values are the callback's business, its shape is checked there
        g0 = (d,)
    if g0 != (d,):
        raise ValueError(f"the target's grad_logp returns shape {g0} at a point of dimension {d}; expected ({d},)")

    def _f(z):
        return np.float64(target.logp(np.asarray(z, dtype=np.float64)))

    def _g(z):
        return np.asarray(target.grad_logp(np.asarray(z, dtype=np.float64)), dtype=np.float64).reshape(d)

    @jax.custom_jvp
    def logp(z):
        return jax.pure_callback(_f, jax.ShapeDtypeStruct((), jnp.float64), z, vmap_method="sequential")

    @logp.defjvp
    def _jvp(primals, tangents):
        (z,), (t,) = primals, tangents
        g = jax.pure_callback(_g, jax.ShapeDtypeStruct((d,), jnp.float64), z, vmap_method="sequential")
        return logp(z), g @ t

    return logp


def jax_logdensity(key, callback=None):
    """log p(z, x) in plain ``jax.numpy`` as ``f(params, z)``, for the kind in ``key`` (``static_key``); the
    densities of docs/protocol-core.md with every constant.  Used by the BlackJAX adapter as its
    ``logdensity_fn``."""
    kind = key[0]
    if kind == "gaussian":

        def f(p, z):
            r = z - p["mean"]
            P = p["precision"]
            return -0.5 * r @ P @ r + 0.5 * jnp.linalg.slogdet(P)[1] - 0.5 * z.shape[0] * LOG_2PI
    elif kind == "linear":

        def f(p, z):
            X, y, sn, s = p["X"], p["y"], p["noise_scale"], p["prior_scale"]
            r = y - X @ z
            N, d = X.shape
            return (
                -0.5 * r @ r / sn**2
                - N * jnp.log(sn)
                - 0.5 * N * LOG_2PI
                - 0.5 * z @ z / s**2
                - d * jnp.log(s)
                - 0.5 * d * LOG_2PI
            )
    elif kind == "logistic":

        def f(p, z):
            X, y, s = p["X"], p["y"], p["prior_scale"]
            d = X.shape[1]
            return (
                -jnp.sum(jnp.logaddexp(0.0, -y * (X @ z))) - 0.5 * z @ z / s**2 - 0.5 * d * jnp.log(2 * jnp.pi * s**2)
            )
    elif kind == "hierarchical_logistic":
        G = key[1]

        def f(p, z):
            X, y, grp, Sigma, Delta = p["X"], p["y"], p["groups"], p["Sigma"], p["Delta"]
            q = X.shape[1]
            theta, zg = z[:q], z[q:].reshape(G, q)
            return (
                _mvn.logpdf(theta, jnp.zeros(q), Sigma)
                + jnp.sum(_mvn.logpdf(zg, theta, Delta))
                - jnp.sum(jnp.logaddexp(0.0, -y * jnp.sum(X * zg[grp], axis=1)))
            )
    elif kind == "cosine":

        def f(p, z):
            r = z - p["z0"]
            return -(p["alpha"] * jnp.cos(p["b"] @ z + p["phi"]) + 0.5 * p["beta"] * r @ r)
    elif kind == "callable":

        def f(p, z):
            return callback(z)
    else:
        raise ValueError(f"unknown target kind {kind!r}")
    return f


def numpyro_model(key, callback=None):
    """The target as a NumPyro model ``model(params, u)`` with one latent site "z" of shape (d,) (``u``, the
    guide's argument, is unused except for its shape)."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    kind = key[0]

    def flat(d):
        return dist.ImproperUniform(constraints.real_vector, (), (d,))

    def prior(s, d):
        return dist.Normal(jnp.zeros(d), s).to_event(1)

    if kind == "gaussian":

        def model(p, *_):
            numpyro.sample("z", dist.MultivariateNormal(p["mean"], precision_matrix=p["precision"]))
    elif kind == "linear":

        def model(p, *_):
            X = p["X"]
            z = numpyro.sample("z", prior(p["prior_scale"], X.shape[1]))
            numpyro.sample("y", dist.Normal(X @ z, p["noise_scale"]).to_event(1), obs=p["y"])
    elif kind == "logistic":

        def model(p, *_):
            X = p["X"]
            z = numpyro.sample("z", prior(p["prior_scale"], X.shape[1]))
            numpyro.sample("y", dist.Bernoulli(logits=X @ z).to_event(1), obs=(p["y"] + 1) / 2)
    elif kind == "hierarchical_logistic":
        G = key[1]

        def model(p, *_):
            X = p["X"]
            q = X.shape[1]
            z = numpyro.sample("z", flat((G + 1) * q))
            theta, zg = z[:q], z[q:].reshape(G, q)
            numpyro.sample("theta", dist.MultivariateNormal(jnp.zeros(q), p["Sigma"]), obs=theta)
            numpyro.sample("z_g", dist.MultivariateNormal(theta, p["Delta"]).expand([G]).to_event(1), obs=zg)
            numpyro.sample(
                "y", dist.Bernoulli(logits=jnp.sum(X * zg[p["groups"]], axis=1)).to_event(1), obs=(p["y"] + 1) / 2
            )
    elif kind == "cosine":

        def model(p, *_):
            z = numpyro.sample("z", flat(p["b"].shape[0]))
            r = z - p["z0"]
            numpyro.factor("cosine", -(p["alpha"] * jnp.cos(p["b"] @ z + p["phi"]) + 0.5 * p["beta"] * r @ r))
    elif kind == "callable":
        # the other variants ignore the base sample u: mypy wants one signature, numpyro passes (p, u) to each
        def model(p, u):  # type: ignore[misc]  # u: the guide's base sample, here only for its shape
            z = numpyro.sample("z", flat(u.shape[0]))
            numpyro.factor("logp", callback(z))
    else:
        raise ValueError(f"unknown target kind {kind!r}")
    return model


def check_logp(target, logp, params, label):
    """Compare a rebuilt log density with ``target.logp`` at a few points (raises on a mismatch)."""
    rng = np.random.default_rng(0)
    for z in (np.zeros(target.dim), 0.5 * rng.standard_normal(target.dim)):
        ref = float(target.logp(z))
        got = float(logp(params, jnp.asarray(z)))
        if not abs(got - ref) <= 1e-9 * (1.0 + abs(ref)):
            raise ValueError(f"{label}: rebuilt log p of {target!r} is {got!r} at z = {z}, target.logp says {ref!r}")


def padded_rows(U):
    """U (S, d) padded to the next power of two rows (copies of its first row, weight 0), with weights 1/S on the
    real rows, so that one compiled function serves every S in (2^(k-1), 2^k] (the statements use many S)."""
    U = np.atleast_2d(np.asarray(U, dtype=np.float64))
    S, d = U.shape
    P = 1 << (S - 1).bit_length()
    Up, w = np.empty((P, d)), np.zeros(P)
    Up[:S], Up[S:], w[:S] = U, U[0], 1.0 / S
    return Up, w


# ---- the estimators, per kind ------------------------------------------------------------------------------------
def _neg_entropy(C):
    """h(C) = -log|det C|."""
    return -jnp.linalg.slogdet(C)[1]


def _log_q(m, C, z):
    """log N(z; m, C C^T) for any invertible C."""
    r = jnp.linalg.solve(C, z - m)
    return -0.5 * r @ r + _neg_entropy(C) - 0.5 * z.shape[0] * LOG_2PI


def _build(key, callback=None):
    """Jitted estimators ``f(params, m, C, U, weights) -> (gm, gC_full)`` (the weighted sum over the rows of U,
    see :func:`padded_rows`) for one target kind."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import Trace_ELBO
    from numpyro.infer.util import log_density

    model = numpyro_model(key, callback)
    elbo = Trace_ELBO()
    rng_key = jax.random.PRNGKey(0)  # nothing is sampled: the guide's only site is a Delta at C u + m

    def guide(p, u):
        m = numpyro.param("m", jnp.zeros_like(u))
        C = numpyro.param("C", jnp.eye(u.shape[0]))
        numpyro.sample("z", dist.Delta(C @ u + m, event_dim=1))

    def energy_loss(w, p, u):  # -ELBO = -log p(C u + m) + log q, log q = 0 for the Delta guide
        return elbo.loss(rng_key, w, model, guide, p, u)

    def logp(p, z):
        return log_density(model, (p, z), {}, {"z": z})[0]

    def mean_grad(per_sample):
        def f(p, m, C, U, weights):  # weighted sum over the (padded) rows: the mean over the real ones
            g = jax.vmap(jax.grad(per_sample), in_axes=(None, None, 0))({"m": m, "C": C}, p, U)
            return weights @ g["m"], jnp.tensordot(weights, g["C"], axes=1)

        return jit(f)

    def entropy_loss(w, p, u):
        return energy_loss(w, p, u) + _neg_entropy(w["C"])

    def stl_loss(w, p, u):
        z = w["C"] @ u + w["m"]
        frozen = jax.lax.stop_gradient(w)
        return -logp(p, z) + _log_q(frozen["m"], frozen["C"], z)

    def score_sample(w, p, u):
        z = jax.lax.stop_gradient(w["C"] @ u + w["m"])
        return jax.lax.stop_gradient(-logp(p, z)) * _log_q(w["m"], w["C"], z)

    return {
        "energy": mean_grad(energy_loss),
        "entropy": mean_grad(entropy_loss),
        "stl": mean_grad(stl_loss),
        "score": mean_grad(score_sample),
        "logp": jit(logp),
    }


_grad_neg_entropy = jit(jax.grad(_neg_entropy))


@functools.cache
def _kind_fns(key):
    return _build(key)


class EstimatorsByName:
    """The four gradient estimators of the core protocol with its default structures, each one
    ``self._call(name, target, m, C, U, structure)`` after the protocol's input checks (``_validate.refuse_bad_input``;
    shared by the JAX/NumPyro and the BlackJAX adapters)."""

    def energy(self, target, m, C, U, structure="tril"):
        refuse_bad_input(m, C, U)
        return self._call("energy", target, m, C, U, structure)

    def entropy(self, target, m, C, U, structure="sym"):
        refuse_bad_input(m, C, U, invertible=True)
        return self._call("entropy", target, m, C, U, structure)

    def stl(self, target, m, C, U, structure="tril"):
        refuse_bad_input(m, C, U, invertible=True)
        return self._call("stl", target, m, C, U, structure)

    def score(self, target, m, C, U, structure="tril"):
        refuse_bad_input(m, C, U, invertible=True)
        return self._call("score", target, m, C, U, structure)

    def _call(self, name, target, m, C, U, structure):
        raise NotImplementedError  # each adapter evaluates estimator ``name`` its own way


class JaxNumpyroImplementation(EstimatorsByName):
    """Seed 000 / 002 estimators from ``jax.grad`` and NumPyro's ``Trace_ELBO`` (see the module docstring)."""

    name = "jax-numpyro"
    capabilities = {"structure": ("full", "tril", "sym", "diag")}

    def __init__(self):
        self._cache: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def _entry(self, target):
        entry = self._cache.get(target)
        if entry is None:
            key = static_key(target)
            params = target_params(target)
            fns = _build(key, callback_logp(target)) if key[0] == "callable" else _kind_fns(key)
            check_logp(target, fns["logp"], params, "NumPyro model")
            entry = self._cache[target] = (params, fns)
        return entry

    def _call(self, which, target, m, C, U, structure):
        params, fns = self._entry(target)
        gm, gC = fns[which](params, np.asarray(m, dtype=np.float64), np.asarray(C, dtype=np.float64), *padded_rows(U))
        return np.asarray(gm), _proj(gC, structure)

    def grad_neg_entropy(self, C, structure="tril"):
        refuse_bad_input(None, C, invertible=True)
        return _proj(_grad_neg_entropy(np.asarray(C, dtype=np.float64)), structure)


IMPL = JaxNumpyroImplementation()
